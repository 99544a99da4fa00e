/* SPDX-License-Identifier: MIT */
/* The cache-cliff detection on made-up series of 0.5 s samples, and the
 * sampler that produces them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "bench/series.h"

static void fill(double *v, size_t from, size_t to, double rate, double wobble)
{
	for (size_t i = from; i < to; i++)
		v[i] = rate * (1 + ((double)(i % 3) - 1) * wobble);   /* +-wobble around rate */
}

static void test_step_is_a_cliff(void **state)
{
	double v[40], before, after;

	(void)state;
	fill(v, 0, 12, 400, 0.05);   /* an SLC cache: 400 MB/s for 6 s */
	fill(v, 12, 40, 40, 0.1);    /* then the TLC flash itself */
	assert_int_equal(bench_find_cliff(v, 40, &before, &after), 12);
	assert_true(before > 380 && before < 420);
	assert_true(after > 36 && after < 44);
}

static void test_flat_and_noisy_is_not(void **state)
{
	double v[30], before, after;

	(void)state;
	fill(v, 0, 30, 100, 0.2);
	assert_int_equal(bench_find_cliff(v, 30, &before, &after), -1);
	assert_true(before > 80 && before < 120);
	assert_true(before == after);
	/* A drop of a quarter is noise or wear levelling, not a cache running out. */
	fill(v, 15, 30, 75, 0.0);
	assert_int_equal(bench_find_cliff(v, 30, &before, &after), -1);
}

static void test_stalls_do_not_fake_one(void **state)
{
	double v[30], before, after;

	(void)state;
	fill(v, 0, 30, 200, 0.02);
	v[5] = v[17] = v[23] = 5;     /* journal commits */
	assert_int_equal(bench_find_cliff(v, 30, &before, &after), -1);
	/* ...and do not hide a real one. */
	fill(v, 20, 30, 20, 0.02);
	v[25] = 2;
	assert_int_equal(bench_find_cliff(v, 30, &before, &after), 20);
}

static void test_speeding_up_and_short_series(void **state)
{
	double v[20], before, after;

	(void)state;
	fill(v, 0, 4, 10, 0);         /* a slow start (spin-up), then full speed */
	fill(v, 4, 20, 100, 0);
	assert_int_equal(bench_find_cliff(v, 20, &before, &after), -1);
	/* Fewer than two samples a side cannot show a cliff. */
	double three[3] = { 500, 500, 10 };
	assert_int_equal(bench_find_cliff(three, 3, &before, &after), -1);
	assert_int_equal(bench_find_cliff(three, 0, &before, &after), -1);
	assert_true(before == 0);
	/* A burst of exactly two samples is the shortest one. */
	double four[4] = { 500, 500, 10, 10 };
	assert_int_equal(bench_find_cliff(four, 4, &before, &after), 2);
}

static void test_median(void **state)
{
	double a[] = { 5, 1, 4, 2, 3 }, b[] = { 4, 1, 3, 2 };

	(void)state;
	assert_true(bench_median(a, 5) == 3);
	assert_true(bench_median(b, 4) == 2.5);
	assert_true(bench_median(b, 0) == 0);
}

/* The sampler: intervals of BENCH_SAMPLE_S, the last part-interval kept only
 * when at least half as long; the cliff's bytes are the bytes before it. */
static void test_series_store(void **state)
{
	struct bench_series s;
	struct bench_stage st;
	uint64_t bytes = 0;
	double t = 100;

	(void)state;
	bench_series_start(&s, t);
	for (int i = 0; i < 20; i++) {
		bytes += i < 8 ? 100000000 : 10000000;   /* 200 MB/s, then 20 MB/s */
		t += 0.25;
		assert_int_equal(bench_series_tick(&s, t, bytes, bytes), 0);
		t += 0.25;
		assert_int_equal(bench_series_tick(&s, t, bytes, bytes), 1);
	}
	bench_series_finish(&s, t + 0.1, bytes + 1, bytes + 1);   /* too short: dropped */
	assert_int_equal(s.n, 20);
	memset(&st, 0, sizeof st);
	st.unit = BENCH_MBPS;
	st.rate = (double)bytes / 10;
	bench_series_store(&s, &st);
	assert_int_equal(st.nsamples, 20);
	assert_true(st.samples[0] > 199e6 && st.samples[0] < 201e6);
	assert_int_equal(st.cliff.found, 1);
	assert_int_equal(st.cliff.bytes, 800000000ull);
	assert_true(st.cliff.at_s > 3.99 && st.cliff.at_s < 4.01);
	assert_true(st.cliff.burst > 199e6 && st.cliff.sustained < 21e6);
}

static void test_series_without_cliff(void **state)
{
	struct bench_series s;
	struct bench_stage st;

	(void)state;
	bench_series_start(&s, 0);
	bench_series_finish(&s, 0.3, 10, 10);     /* one part-interval, long enough */
	assert_int_equal(s.n, 1);
	memset(&st, 0, sizeof st);
	st.rate = 33;
	bench_series_store(&s, &st);
	assert_int_equal(st.cliff.found, 0);
	assert_true(st.cliff.burst == 33 && st.cliff.sustained == 33);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_is_a_cliff),
		cmocka_unit_test(test_flat_and_noisy_is_not),
		cmocka_unit_test(test_stalls_do_not_fake_one),
		cmocka_unit_test(test_speeding_up_and_short_series),
		cmocka_unit_test(test_median),
		cmocka_unit_test(test_series_store),
		cmocka_unit_test(test_series_without_cliff),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
