/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the filter rules (src/util/filter.c), which a peer
 * sends in its request: the wire decoder, and the rule parser on the same
 * bytes as a rule file, a merge file and a dir-merge file. Whatever decodes
 * must re-encode to a form that decodes to the same encoding; a failed
 * addition must leave the list as it was; matching must terminate. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/filter.h"

/* The code under test in this translation unit, so libFuzzer sees its
 * coverage (as fuzz_proto_msg.c does); these definitions win over the
 * archive's. */
#include "util/filter.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const uint8_t *in;
static size_t in_len;

/* Every merge and dir-merge file is the input itself: a merge file that
 * merges itself must stop at FILTER_MAX_MERGE_DEPTH. */
static int read_input(void *ctx, const char *dir, const char *name, char **out, size_t *len)
{
	(void)ctx;
	(void)dir;
	(void)name;
	if (!(*out = malloc(in_len ? in_len : 1)))
		return -ENOMEM;
	memcpy(*out, in, in_len);
	*len = in_len;
	return 0;
}

static void exercise(struct filter_list *fl)
{
	static const char *const paths[] = { "a", "a/b", "foo.o", "x/y/z", ".ferry-filter",
					     "node_modules", "a b/[x]", "**", "a\\b" };
	char mine[64];
	size_t n = in_len < sizeof mine - 1 ? in_len : sizeof mine - 1;

	/* one path from the input too (NUL ends it; never empty) */
	memcpy(mine, in, n);
	mine[n] = '\0';
	if (!mine[0] || mine[0] == '/')
		strcpy(mine, "m");
	for (int side = FILTER_SENDER; side <= FILTER_RECEIVER; side++) {
		for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++)
			for (int d = 0; d < 2; d++)
				if (filter_match(fl, side, paths[i], d) < -1)
					abort();
		filter_match(fl, side, mine, 0);
	}
	/* the dir-merge files (the input again) of two levels */
	if (filter_enter_dir(fl, "") == 0) {
		filter_match(fl, FILTER_SENDER, "a", 1);
		if (filter_enter_dir(fl, "a") == 0) {
			filter_match(fl, FILTER_RECEIVER, "a/b", 0);
			filter_leave_dir(fl);
		}
		filter_leave_dir(fl);
	}
}

static void round_trip(struct filter_list *fl)
{
	struct filter_opts o = { .read = read_input };
	struct filter_list *back;
	uint8_t *e1, *e2;
	size_t l1, l2;

	if (filter_encode(fl, &e1, &l1) != 0)
		return;
	if (l1 > FILTER_MAX_WIRE || filter_decode(e1, l1, &o, &back) != 0)
		abort();   /* our own encoding must decode */
	if (filter_encode(back, &e2, &l2) != 0)
		abort();
	if (l1 != l2 || memcmp(e1, e2, l1) != 0 || filter_count(back) != filter_count(fl))
		abort();   /* encode(decode(encode(x))) == encode(x) */
	free(e1);
	free(e2);
	filter_free(back);
}

static void check_wire(void)
{
	struct filter_opts o = { .read = read_input };
	struct filter_list *fl = NULL;

	if (filter_decode(in, in_len, &o, &fl) != 0) {
		if (fl)
			abort();   /* an error leaves nothing */
		return;
	}
	round_trip(fl);
	exercise(fl);
	filter_free(fl);
}

static void check_rules(enum filter_syntax syn, int delete_excluded)
{
	struct filter_opts o = { .delete_excluded = delete_excluded, .read = read_input };
	struct filter_list *fl;

	if (filter_new(&fl, &o) != 0)
		return;
	if (filter_add(fl, FILTER_RULE, "- before") != 0)
		abort();
	if (filter_add_file(fl, syn, (const char *)in, in_len, "fuzz") != 0 && filter_count(fl) != 1)
		abort();   /* all or nothing */
	filter_add_F(fl);
	round_trip(fl);
	exercise(fl);
	filter_free(fl);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	in = data;
	in_len = size;
	check_wire();
	check_rules(FILTER_RULE, 0);
	check_rules(FILTER_EXCLUDE, 1);
	check_rules(FILTER_INCLUDE, 0);
	return 0;
}
