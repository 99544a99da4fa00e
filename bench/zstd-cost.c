/* SPDX-License-Identifier: MIT */
/* What -z costs on this machine: the ZDATA compressor (src/proto/zchunk.c's
 * parameters: one frame per 128 KiB chunk, window 2^17, no checksum,
 * match tables 2^14 from level 3) at
 * levels 1 and 3 over FILE, and over random data (what a try of an
 * incompressible chunk costs); CPU MB/s (best of 3), ratio, decompression
 * MB/s, and the contexts' sizes after use (what a box holds per session).
 *   cc -O2 bench/zstd-cost.c -o /tmp/zstd-cost -lzstd && /tmp/zstd-cost FILE */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <zstd.h>

#define CHUNK (128u << 10)

static double cpu(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void run(const char *what, const unsigned char *in, size_t n, int level)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_DCtx *dc = ZSTD_createDCtx();
	unsigned char *z = malloc(ZSTD_compressBound(CHUNK)), *out = malloc(CHUNK);
	double best_c = 1e9, best_d = 1e9;
	size_t zt = 0;

	ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 17);
	ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 0);
	if (level >= 3) {   /* ZCHUNK_TABLE_LOG */
		ZSTD_CCtx_setParameter(cc, ZSTD_c_hashLog, 14);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_chainLog, 14);
	}
	for (int r = 0; r < 3; r++) {
		double t = cpu(), td = 0;
		zt = 0;
		for (size_t off = 0; off < n; off += CHUNK) {
			size_t k = n - off < CHUNK ? n - off : CHUNK;
			size_t zl = ZSTD_compress2(cc, z, ZSTD_compressBound(CHUNK), in + off, k);
			zt += zl;
			double t1 = cpu();
			ZSTD_decompressDCtx(dc, out, k, z, zl);
			td += cpu() - t1;
		}
		double tc = cpu() - t - td;
		best_c = tc < best_c ? tc : best_c;
		best_d = td < best_d ? td : best_d;
	}
	printf("%-7s level %d: compress %7.1f MB/s, ratio %5.2f, decompress %7.1f MB/s, "
	       "CCtx %zu bytes, DCtx %zu bytes\n", what, level, (double)n / 1e6 / best_c,
	       (double)n / (double)zt, (double)n / 1e6 / best_d, ZSTD_sizeof_CCtx(cc),
	       ZSTD_sizeof_DCtx(dc));
	ZSTD_freeCCtx(cc);
	ZSTD_freeDCtx(dc);
	free(z);
	free(out);
}

int main(int argc, char **argv)
{
	size_t cap = (size_t)64 << 20, n = 0, k;
	unsigned char *b = malloc(cap), *rnd = malloc(cap);
	FILE *f = argc > 1 ? fopen(argv[1], "rb") : NULL;

	if (!b || !rnd || !f) {
		fprintf(stderr, "usage: zstd-cost FILE (text, up to 64 MiB)\n");
		return 1;
	}
	while (n < cap && (k = fread(b + n, 1, cap - n, f)) > 0)
		n += k;
	fclose(f);
	unsigned long long x = 88172645463325252ull;
	for (size_t i = 0; i < cap; i++) {   /* xorshift: incompressible */
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		rnd[i] = (unsigned char)(x >> 32);
	}
	for (int level = 1; level <= 3; level += 2) {
		run("text", b, n, level);
		run("random", rnd, cap, level);
	}
	return 0;
}
