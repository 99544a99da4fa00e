/* SPDX-License-Identifier: MIT */
#include "cli/verify_out.h"

#include <stdio.h>
#include <unistd.h>

#include "cli/cli.h"

void verify_print_bad(void *ctx, const char *where, const char *path)
{
	(void)ctx;
	printf("DAMAGED: %s: %s\n", where, path);
	fflush(stdout);
}

/* The progress line, as a transfer's: on a terminal, rewritten in place. */
void verify_print_progress(void *ctx, const struct verify_report *r, double secs)
{
	(void)ctx;
	if (!isatty(2))
		return;
	fprintf(stderr, "\rverify: %llu files, %.1f MB, %.1f MB/s, %llu damaged   ",
		(unsigned long long)r->files, (double)r->bytes / 1e6,
		secs > 0 ? (double)r->bytes / 1e6 / secs : 0.0, (unsigned long long)r->bad);
}

/* The end of a pass: 0, or EXIT_PARTIAL when something was damaged. */
int verify_print_summary(const struct verify_report *r)
{
	if (isatty(2))
		fputc('\n', stderr);
	if (r->skipped_run) {
		printf("verify: the last full pass is recent enough (--if-older): nothing read; "
		       "it found %llu damaged\n", (unsigned long long)r->bad);
		return r->bad ? EXIT_PARTIAL : 0;
	}
	printf("verify: %llu files, %llu bytes read; %llu damaged; %llu without a recorded "
	       "hash%s\n", (unsigned long long)r->files, (unsigned long long)r->bytes,
	       (unsigned long long)r->bad, (unsigned long long)r->unhashed,
	       r->skipped ? " (a resumed pass: the files before where it stopped were not read)" : "");
	return r->bad ? EXIT_PARTIAL : 0;
}
