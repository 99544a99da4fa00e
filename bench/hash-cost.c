/* SPDX-License-Identifier: MIT */
/* What the whole-file hash costs per GiB on this machine: xxh3-128 fed in
 * 65519-byte pieces, as filedata.c feeds it. Best of 5 runs over 1 GiB.
 *   cc -O2 bench/hash-cost.c -o /tmp/hash-cost -lxxhash && /tmp/hash-cost */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <xxhash.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(void)
{
	size_t n = (size_t)64 << 20;
	unsigned char *b = malloc(n);
	double best = 1e9;

	if (!b)
		return 1;
	for (size_t i = 0; i < n; i++)
		b[i] = (unsigned char)(i * 131 + 7);
	for (int r = 0; r < 5; r++) {
		XXH3_state_t *h = XXH3_createState();
		XXH3_128bits_reset(h);
		double t = now();
		for (int k = 0; k < 16; k++)
			for (size_t o = 0; o < n; o += 65519)
				XXH3_128bits_update(h, b + o, o + 65519 < n ? 65519 : n - o);
		XXH128_hash_t d = XXH3_128bits_digest(h);
		t = now() - t;
		if (t < best)
			best = t;
		XXH3_freeState(h);
		if (d.low64 == 1)
			puts("");
	}
	printf("xxh3-128, 65519-byte updates: %.3f CPU-s per GiB (%.1f GB/s)\n", best,
	       1.073741824 / best);
	free(b);
	return 0;
}
