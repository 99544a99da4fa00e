/* SPDX-License-Identifier: MIT */
/* ZDATA: the message's limits, the chunk encoder (it gives up on data that
 * does not shrink by 3 %) and the strict decoder: exactly one frame of
 * exactly raw_len bytes, or a protocol error (bombs, truncation, trailing
 * frames, skippable frames, frames that lie about their size or window). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zstd.h>

#include "proto/msg.h"
#include "proto/zchunk.h"
#include "util/err.h"

static uint8_t text[ZDATA_MAX_RAW], rnd[ZDATA_MAX_RAW], out[ZDATA_MAX_RAW];
static uint8_t z[ZDATA_MAX_ZLEN * 2 + 64];

static int setup(void **state)
{
	static const char line[] = "ferry moves files to small boxes, compressed when it pays. ";
	uint64_t x = 88172645463325252ull;

	(void)state;
	for (size_t i = 0; i < sizeof text; i++)
		text[i] = (uint8_t)line[i % (sizeof line - 1)] ^ (uint8_t)(i % 7 == 0);
	for (size_t i = 0; i < sizeof rnd; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		rnd[i] = (uint8_t)(x >> 32);
	}
	return 0;
}

static void test_msg_limits(void **state)
{
	(void)state;
	uint8_t b[MSG_MAX_ENCODED];
	struct msg m = { .type = MSG_ZDATA }, back;
	const struct { uint32_t raw, zl; int ok; } cases[] = {
		{ 1, 1, 1 }, { ZDATA_MAX_RAW, ZDATA_MAX_ZLEN, 1 }, { 0, 10, 0 },
		{ ZDATA_MAX_RAW + 1, 10, 0 }, { 10, 0, 0 }, { 10, ZDATA_MAX_ZLEN + 1, 0 },
	};

	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		m.u.zdata = (struct m_zdata){ cases[i].raw, cases[i].zl };
		int n = msg_encode(&m, b, sizeof b);
		assert_int_equal(n, 9);
		assert_int_equal(msg_decode(b, (size_t)n, &back), cases[i].ok ? 0 : -EBADMSG);
		if (cases[i].ok) {
			assert_int_equal(back.u.zdata.raw_len, cases[i].raw);
			assert_int_equal(back.u.zdata.zlen, cases[i].zl);
		}
	}
	/* ACCEPT: auto without compress, or unknown bits, are refused */
	struct msg a = { .type = MSG_ACCEPT };
	a.u.accept.flags = ACC_COMPRESS | ACC_COMPRESS_AUTO;
	int n = msg_encode(&a, b, sizeof b);
	assert_int_equal(msg_decode(b, (size_t)n, &back), 0);
	a.u.accept.flags = ACC_COMPRESS_AUTO;
	n = msg_encode(&a, b, sizeof b);
	assert_int_equal(msg_decode(b, (size_t)n, &back), -EBADMSG);
	a.u.accept.flags = 0x80;
	n = msg_encode(&a, b, sizeof b);
	assert_int_equal(msg_decode(b, (size_t)n, &back), -EBADMSG);
}

static void test_roundtrip(void **state)
{
	(void)state;
	for (int level = 1; level <= 19; level += 9) {
		struct ZSTD_CCtx_s *cc = zchunk_cctx_new(level);
		struct ZSTD_DCtx_s *dc = zchunk_dctx_new();
		assert_non_null(cc);
		assert_non_null(dc);
		for (size_t n = 1; n <= ZDATA_MAX_RAW; n = n * 3 + 1000) {
			size_t zl = zchunk_compress(cc, z, text, n);
			if (n < 200) {   /* a frame's header is not worth it on tiny chunks */
				assert_true(zl == 0 || zl <= n - n * 3 / 100);
				continue;
			}
			assert_true(zl > 0 && zl < n / 2);
			memset(out, 0xee, sizeof out);
			assert_int_equal(zchunk_decompress(dc, out, (uint32_t)n, z, (uint32_t)zl), 0);
			assert_memory_equal(out, text, n);
		}
		size_t zl = zchunk_compress(cc, z, text, ZDATA_MAX_RAW);
		assert_int_equal(zchunk_decompress(dc, out, ZDATA_MAX_RAW, z, (uint32_t)zl), 0);
		/* the sizes a box pays, within reason (docs/DESIGN.md has the figures) */
		assert_true(zchunk_cctx_size(cc) < (level < 10 ? 700u << 10 : 8u << 20));
		assert_true(zchunk_dctx_size(dc) < 200u << 10);
		zchunk_cctx_free(cc);
		zchunk_dctx_free(dc);
	}
}

static void test_incompressible(void **state)
{
	(void)state;
	struct ZSTD_CCtx_s *cc = zchunk_cctx_new(ZCHUNK_LEVEL_DEFAULT);

	assert_int_equal(zchunk_compress(cc, z, rnd, sizeof rnd), 0);
	/* 2 % of compressible data in random is not 3 % */
	uint8_t *mix = malloc(ZDATA_MAX_RAW);
	memcpy(mix, rnd, ZDATA_MAX_RAW);
	memset(mix, 0, ZDATA_MAX_RAW / 50);
	assert_int_equal(zchunk_compress(cc, z, mix, ZDATA_MAX_RAW), 0);
	memset(mix, 0, ZDATA_MAX_RAW / 10);   /* 10 % zeros: worth it */
	assert_true(zchunk_compress(cc, z, mix, ZDATA_MAX_RAW) > 0);
	assert_int_equal(zchunk_compress(cc, z, mix, 0), 0);
	assert_int_equal(zchunk_compress(cc, z, mix, ZDATA_MAX_RAW + 1), 0);
	free(mix);
	zchunk_cctx_free(cc);
}

/* A frame made by zstd with parameters the sender would never use. */
static size_t raw_frame(uint8_t *dst, size_t cap, const void *src, size_t n, int csize)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, csize);
	size_t zl;
	if (csize)
		zl = ZSTD_compress2(cc, dst, cap, src, n);
	else {   /* streamed: no content size in the header, no single segment */
		ZSTD_inBuffer in = { src, n, 0 };
		ZSTD_outBuffer o = { dst, cap, 0 };
		ZSTD_compressStream2(cc, &o, &in, ZSTD_e_end);
		zl = o.pos;
	}
	ZSTD_freeCCtx(cc);
	assert_false(ZSTD_isError(zl));
	return zl;
}

static void test_strict_decoder(void **state)
{
	(void)state;
	struct ZSTD_CCtx_s *cc = zchunk_cctx_new(ZCHUNK_LEVEL_DEFAULT);
	struct ZSTD_DCtx_s *dc = zchunk_dctx_new();
	size_t zl = zchunk_compress(cc, z, text, 10000);

	assert_true(zl > 0);
	/* raw_len that does not match the frame, either way */
	assert_int_equal(zchunk_decompress(dc, out, 9999, z, (uint32_t)zl), -EBADMSG);
	assert_int_equal(zchunk_decompress(dc, out, 10001, z, (uint32_t)zl), -EBADMSG);
	/* truncated, or a second frame behind the first */
	assert_int_equal(zchunk_decompress(dc, out, 10000, z, (uint32_t)zl - 1), -EBADMSG);
	memcpy(z + zl, z, zl);
	assert_int_equal(zchunk_decompress(dc, out, 10000, z, (uint32_t)(2 * zl)), -EBADMSG);
	/* garbage after the header, and garbage */
	uint8_t bad[64];
	memcpy(bad, z, sizeof bad);
	memset(bad + 8, 0x5a, sizeof bad - 8);
	assert_int_equal(zchunk_decompress(dc, out, 10000, bad, sizeof bad), -EBADMSG);
	memset(bad, 'A', sizeof bad);
	assert_int_equal(zchunk_decompress(dc, out, 10, bad, sizeof bad), -EBADMSG);
	/* a bomb: 100 KiB of zeros in a few bytes, no content size, announced as 10 */
	static uint8_t zeros[100 << 10];
	size_t bl = raw_frame(z, sizeof z, zeros, sizeof zeros, 0);
	assert_true(bl < 100);
	assert_int_equal(zchunk_decompress(dc, out, 10, z, (uint32_t)bl), -EBADMSG);
	assert_int_equal(zchunk_decompress(dc, out, sizeof zeros, z, (uint32_t)bl), -EBADMSG);
	/* with its content size, but announced smaller */
	bl = raw_frame(z, sizeof z, zeros, sizeof zeros, 1);
	assert_int_equal(zchunk_decompress(dc, out, 100, z, (uint32_t)bl), -EBADMSG);
	assert_int_equal(zchunk_decompress(dc, out, sizeof zeros, z, (uint32_t)bl), 0);
	/* the window: a hand-made frame of one raw block of 1000 bytes, with its
	 * content size, not single-segment, window 2^17 (accepted) or 2^20 */
	for (int wlog = 17; wlog <= 20; wlog += 3) {
		uint8_t *f = z;
		const uint32_t n = 1000;
		*f++ = 0x28, *f++ = 0xb5, *f++ = 0x2f, *f++ = 0xfd;
		*f++ = 0x40;                           /* FCS 2 bytes, multi-segment */
		*f++ = (uint8_t)((wlog - 10) << 3);    /* Window_Descriptor */
		*f++ = (uint8_t)((n - 256) & 0xff), *f++ = (uint8_t)((n - 256) >> 8);
		uint32_t bh = n << 3 | 1;              /* last block, raw, n bytes */
		*f++ = (uint8_t)bh, *f++ = (uint8_t)(bh >> 8), *f++ = (uint8_t)(bh >> 16);
		memcpy(f, text, n);
		f += n;
		assert_int_equal(zchunk_decompress(dc, out, n, z, (uint32_t)(f - z)),
				 wlog == 17 ? 0 : -EBADMSG);
	}
	/* a skippable frame */
	uint8_t skip[16] = { 0x50, 0x2a, 0x4d, 0x18, 8, 0, 0, 0 };
	assert_int_equal(zchunk_decompress(dc, out, 8, skip, sizeof skip), -EBADMSG);
	/* after all that, the context still decodes a good frame */
	zl = zchunk_compress(cc, z, text, 50000);
	assert_int_equal(zchunk_decompress(dc, out, 50000, z, (uint32_t)zl), 0);
	assert_memory_equal(out, text, 50000);
	zchunk_cctx_free(cc);
	zchunk_dctx_free(dc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_msg_limits),
		cmocka_unit_test(test_roundtrip),
		cmocka_unit_test(test_incompressible),
		cmocka_unit_test(test_strict_decoder),
	};
	return cmocka_run_group_tests(tests, setup, NULL);
}
