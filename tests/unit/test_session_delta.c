/* SPDX-License-Identifier: MIT */
/* The delta's pieces both ends must agree on: the rolling sum rolls to what
 * a fresh sum of the window gives (unsigned bytes: 0x80-0xff included), the
 * block size rule, and a sender's checks on the signature it receives. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session/delta.h"

/* The definition, byte by byte: what both ends must compute. */
static uint32_t naive_sum(const uint8_t *p, uint32_t len)
{
	uint32_t a = 0, b = 0;
	for (uint32_t i = 0; i < len; i++) {
		a += p[i];
		b += (len - i) * (uint32_t)p[i];
	}
	return (a & 0xffffu) | (b << 16);
}

static void test_roll_matches_fresh_sum(void **state)
{
	enum { N = 20000, L = 2048 };
	uint8_t *p = malloc(N);
	struct roll r, fresh;

	(void)state;
	srand(7);
	for (int i = 0; i < N; i++)
		p[i] = (uint8_t)(i % 3 ? rand() : 0xff - i % 7);   /* high bytes on purpose */
	roll_init(&r, p, L);
	for (int off = 0; off + L < N; off++) {
		roll_init(&fresh, p + off, L);
		assert_int_equal(roll_sum(&r), roll_sum(&fresh));
		if (off % 97 == 0 || off < 8)
			assert_int_equal(roll_sum(&fresh), naive_sum(p + off, L));
		if (off < 16) {   /* lengths that are not a multiple of four */
			struct roll q;
			roll_init(&q, p + off, L - (uint32_t)off);
			assert_int_equal(roll_sum(&q), naive_sum(p + off, L - (uint32_t)off));
		}
		roll_rotate(&r, p[off], p[off + L]);
	}
	free(p);
}

/* Every length up to a few chunks, and long runs of 0xff (the largest sums:
 * each lane's running totals wrap mod 2^32 the way the definition does). */
static void test_roll_init_lengths(void **state)
{
	enum { N = DELTA_MAX_BLOCK + 100 };
	uint8_t *p = malloc(N);
	struct roll r;

	(void)state;
	srand(11);
	for (int i = 0; i < N; i++)
		p[i] = (uint8_t)rand();
	for (uint32_t len = 0; len < 300; len++)
		for (uint32_t off = 0; off < 3; off++) {
			roll_init(&r, p + off, len);
			assert_int_equal(roll_sum(&r), naive_sum(p + off, len));
		}
	memset(p, 0xff, N);
	for (uint32_t len = DELTA_MAX_BLOCK - 17; len < N; len += 7) {
		roll_init(&r, p, len);
		assert_int_equal(roll_sum(&r), naive_sum(p, len));
	}
	free(p);
}

static void test_block_size(void **state)
{
	(void)state;
	assert_int_equal(delta_block_size(0), DELTA_MIN_BLOCK);
	assert_int_equal(delta_block_size(1 << 20), DELTA_MIN_BLOCK);   /* sqrt = 1024 */
	assert_int_equal(delta_block_size(1ull << 30), 32768);
	assert_int_equal(delta_block_size(1ull << 40), DELTA_MAX_BLOCK);
	for (uint64_t s = 1; s < (1ull << 42); s = s * 3 + 1) {
		uint32_t b = delta_block_size(s);
		assert_true(b >= DELTA_MIN_BLOCK && b <= DELTA_MAX_BLOCK && b % 64 == 0);
	}
}

static void test_sig_checks(void **state)
{
	uint8_t ent[3 * SIG_ENTRY_LEN] = { 0 };
	struct m_want_delta w = { .index = 5, .block = 4096, .size = 3 * 4096 + 100 };
	struct m_sig m = { .index = 5, .first = 0, .count = 2, .entries = ent };
	struct delta_sig s;

	(void)state;
	assert_int_equal(delta_sig_init(&s, &w), 0);
	assert_int_equal(s.n, 3);                      /* whole blocks only */
	assert_int_equal(delta_sig_add(&s, &m), 0);
	m.first = 1;                                   /* not the next part */
	assert_int_equal(delta_sig_add(&s, &m), -EBADMSG);
	m.first = 2;
	m.count = 2;                                   /* past the announced blocks */
	assert_int_equal(delta_sig_add(&s, &m), -EBADMSG);
	m.count = 1;
	m.index = 6;                                   /* another entry's */
	assert_int_equal(delta_sig_add(&s, &m), -EBADMSG);
	m.index = 5;
	assert_int_equal(delta_sig_add(&s, &m), 0);
	assert_int_equal(s.have, s.n);
	delta_sig_free(&s);
	w.size = (uint64_t)DELTA_MAX_BLOCKS * 4096 + 4096;   /* a signature too big to hold */
	assert_int_equal(delta_sig_init(&s, &w), -EBADMSG);
}

/* Two levels: the coarse entries first, in order; then only fine entries of
 * the groups asked, each once, in order; ready when all came. */
static void test_two_level_sig(void **state)
{
	uint8_t ent[SIG_MAX_BLOCKS * SIG_ENTRY_LEN] = { 0 };
	/* 40 blocks: groups 0 and 1 whole, group 2 the last 8 blocks */
	struct m_want_delta w = { .index = 2, .block = 4096, .size = 40 * 4096 + 5, .group = 16 };
	struct m_sig m = { .index = 2, .first = 0, .count = 2, .entries = ent };
	struct delta_sig s;

	(void)state;
	assert_int_equal(delta_group(8192, 5120), 16);
	assert_int_equal(delta_group(131072, 1u << 23), 8);   /* groups of at most 1 MiB */
	assert_int_equal(delta_group(4096, 4095), 0);         /* too few blocks: one level */
	assert_int_equal(delta_sig_init(&s, &w), 0);
	assert_int_equal(s.ng, 2);
	m.count = 3;                                          /* more coarse entries than groups */
	assert_int_equal(delta_sig_add(&s, &m), -EBADMSG);
	m.count = 2;
	assert_int_equal(delta_sig_add(&s, &m), 0);
	assert_true(delta_sig_coarse_done(&s));
	assert_false(delta_sig_ready(&s));
	/* what ask_fine does after pass one found group 1 */
	s.asked[0] = 1u << 0 | 1u << 2;
	s.fine_left = 16 + 8;
	s.refining = 1;
	m.first = 16;                                         /* group 1: not asked */
	m.count = 1;
	assert_int_equal(delta_sig_add(&s, &m), -EBADMSG);
	m.first = 0;
	m.count = 16;
	assert_int_equal(delta_sig_add(&s, &m), 0);
	m.count = 1;                                          /* again */
	assert_int_equal(delta_sig_add(&s, &m), -EBADMSG);
	m.first = 32;
	m.count = 9;                                          /* past the last block */
	assert_int_equal(delta_sig_add(&s, &m), -EBADMSG);
	m.count = 8;
	assert_int_equal(delta_sig_add(&s, &m), 0);
	assert_true(delta_sig_ready(&s));
	delta_sig_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roll_matches_fresh_sum),
		cmocka_unit_test(test_roll_init_lengths),
		cmocka_unit_test(test_block_size),
		cmocka_unit_test(test_sig_checks),
		cmocka_unit_test(test_two_level_sig),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
