/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the config parser (the admin's file, but a parser
 * that crashes on a typo is a daemon that does not start), parse_rate,
 * the size spellings of --max-size and --min-size, and the times of
 * --stop-after and --stop-at. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/config.h"
#include "util/sizearg.h"
#include "util/stoptime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ferry_config c;
	uint64_t rate;
	int prot;
	char *s;

	if (config_parse((const char *)data, size, "fuzz", &c) == 0) {
		/* Invariants of a successful parse. */
		if (c.n_modules > CONFIG_MAX_MODULES || !c.global.listen || !c.global.log)
			abort();
		for (size_t i = 0; i < c.n_modules; i++) {
			if (!c.modules[i].name || !c.modules[i].path ||
			    config_module(&c, c.modules[i].name) != &c.modules[i])
				abort();
			if (c.modules[i].protection < 0 || c.modules[i].protection > 2)
				abort();
		}
		config_free(&c);
	} else if (c.modules || c.global.listen || c.n_modules) {
		abort();   /* an error must leave nothing allocated */
	}

	/* The same bytes as a single value (up to the first NUL). */
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	if (parse_rate(s, &rate) == 0 && rate == 0 && strspn(s, "0.") == 0)
		abort();   /* only an all-zero number means "unlimited" */
	parse_protection(s, &prot);
	uint64_t sz;
	if (size_arg_parse(s, &sz) == 0 && sz > INT64_MAX)
		abort();   /* a size fits an off_t */
	double secs;
	if (stop_after_parse(s, &secs) == 0 && !(secs > 0 && secs <= 366.0 * 86400))
		abort();
	time_t now = 1796461830, when;   /* a fixed now: the same input, the same answer */
	if (stop_at_parse(s, now, &when) == 0 && when <= now)
		abort();   /* a stop is always ahead */
	free(s);
	return 0;
}
