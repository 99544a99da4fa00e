/* SPDX-License-Identifier: MIT */
/* When the sender compresses: the per-file back-off on incompressible data
 * and auto's rule (compress only while the link is slower than half the
 * compressor), with made-up clocks. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "session/zpolicy.h"

#define CHUNK (128u << 10)

/* Sends `chunks` chunks as the sender would; every try compresses to
 * ratio r (0: incompressible). Returns the chunks tried. */
static uint32_t feed(struct zpolicy *p, uint32_t chunks, double r)
{
	uint32_t tried = 0;

	while (chunks) {
		uint32_t k = zpolicy_next(p);
		if (k) {
			k = k < chunks ? k : chunks;
			zpolicy_skipped(p, k);
			chunks -= k;
			continue;
		}
		zpolicy_tried(p, CHUNK, r > 0 ? (uint64_t)(CHUNK * r) : 0, 0.0004);
		tried++;
		chunks--;
	}
	return tried;
}

static void test_backoff(void **state)
{
	(void)state;
	struct zpolicy p;

	zpolicy_init(&p, ZP_YES);
	assert_int_equal(zpolicy_next(&p), 0);            /* yes: the first chunk is tried */
	assert_int_equal(feed(&p, 100, 0.3), 100);        /* text: every chunk */
	/* random: 2048 chunks (256 MiB) cost about a dozen tries */
	zpolicy_file(&p);
	uint32_t tried = feed(&p, 2048, 0);
	assert_true(tried >= 8 && tried <= 16);
	/* the back-off is capped: still a try every ZP_BACKOFF_MAX + 1 chunks */
	tried = feed(&p, 10 * (ZP_BACKOFF_MAX + 1), 0);
	assert_true(tried >= 9 && tried <= 11);
	/* a new file starts over */
	zpolicy_file(&p);
	assert_int_equal(zpolicy_next(&p), 0);
	/* compressible data after random: tried again soon, then every chunk */
	zpolicy_file(&p);
	feed(&p, 8, 0);
	tried = feed(&p, 64, 0.3);
	assert_true(tried >= 64 - 16);
	assert_int_equal(p.backoff, 1);
}

/* Windows of the link: `secs` each, the link carrying `rate` bytes/s and the
 * sender blocked `blocked` of each second. */
static void windows(struct zpolicy *p, double *t, uint64_t *wire, double *bl, int n,
		    double rate, double blocked)
{
	for (int i = 0; i < n; i++) {
		*t += ZP_WINDOW_SECS;
		*wire += (uint64_t)(rate * ZP_WINDOW_SECS);
		*bl += blocked * ZP_WINDOW_SECS;
		zpolicy_link(p, *t, *wire, *bl);
	}
}

static void test_auto(void **state)
{
	(void)state;
	struct zpolicy p;
	double t = 100, bl = 0;
	uint64_t wire = 0;

	zpolicy_init(&p, ZP_AUTO);
	assert_int_equal(zpolicy_next(&p), 0);            /* a try at once, to know C */
	zpolicy_tried(&p, CHUNK, CHUNK / 4, CHUNK / 300e6);   /* C = 300 MB/s */
	assert_true(zpolicy_next(&p) > 0);                /* raw meanwhile */
	assert_int_equal(feed(&p, ZP_PROBE_EVERY + 1, 0.25), 1);   /* one probe per ZP_PROBE_EVERY */
	zpolicy_link(&p, t, wire, bl);                    /* the first sample opens a window */
	/* loopback: 1 GB/s and blocked half the time: raw */
	windows(&p, &t, &wire, &bl, 4, 1e9, 0.5);
	assert_false(p.on);
	/* never blocked: the link is not the limit, raw */
	windows(&p, &t, &wire, &bl, 4, 2e8, 0);
	assert_false(p.on);
	/* a slow link (5 MB/s) that blocks the sender: compress */
	windows(&p, &t, &wire, &bl, 1, 5e6, 0.9);
	assert_true(p.on);
	assert_int_equal(zpolicy_next(&p), 0);
	assert_int_equal(feed(&p, 50, 0.25), 50);
	/* 180 MB/s is more than half the compressor's ~320: raw */
	windows(&p, &t, &wire, &bl, 1, 1.8e8, 0.5);
	assert_false(p.on);
	windows(&p, &t, &wire, &bl, 1, 1.4e7, 0.5);
	assert_true(p.on);
	/* compressing and no longer blocked: the compressor is the bottleneck;
	 * after ZP_IDLE_WINDOWS windows raw again, to measure the link */
	windows(&p, &t, &wire, &bl, ZP_IDLE_WINDOWS - 1, 1e8, 0);
	assert_true(p.on);
	windows(&p, &t, &wire, &bl, 1, 1e8, 0);
	assert_false(p.on);
	/* a window shorter than ZP_WINDOW_SECS decides nothing */
	t += ZP_WINDOW_SECS / 4;
	bl += ZP_WINDOW_SECS / 4;
	wire += 1000;
	zpolicy_link(&p, t, wire, bl);
	assert_false(p.on);
	assert_true(p.flips >= 4);
	/* yes ignores the link */
	zpolicy_init(&p, ZP_YES);
	t = 0;
	zpolicy_link(&p, t, 0, 0);
	windows(&p, &t, &wire, &bl, 4, 1e9, 0);
	assert_int_equal(zpolicy_next(&p), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_backoff),
		cmocka_unit_test(test_auto),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
