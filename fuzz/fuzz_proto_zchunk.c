/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the ZDATA decoder (src/proto/zchunk.c): the first
 * four bytes are the announced raw_len, the rest is the frame, as a peer
 * sends them. Whatever the input, the decoder either refuses it or fills
 * exactly raw_len bytes (ASan sees any write past them: the output buffer
 * is allocated to raw_len exactly); what decodes, re-encodes and decodes to
 * the same bytes. zstd itself is the system's library, not instrumented:
 * the coverage is of ferry's checks around it. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "proto/zchunk.h"

/* compiled in, for coverage (see fuzz_proto_msg.c) */
#include "proto/zchunk.c"

static struct ZSTD_CCtx_s *cc;
static struct ZSTD_DCtx_s *dc;
static uint8_t z[ZDATA_MAX_ZLEN];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dc && (!(dc = zchunk_dctx_new()) || !(cc = zchunk_cctx_new(ZCHUNK_LEVEL_DEFAULT))))
		abort();
	if (size < 5)
		return 0;
	uint32_t raw = (uint32_t)data[0] << 24 | (uint32_t)data[1] << 16 |
		       (uint32_t)data[2] << 8 | data[3];
	size_t zlen = size - 4;
	/* what msg_decode lets through */
	if (!raw || raw > ZDATA_MAX_RAW || zlen > ZDATA_MAX_ZLEN)
		return 0;
	uint8_t *out = malloc(raw), *back = malloc(raw);
	if (!out || !back)
		abort();
	if (zchunk_decompress(dc, out, raw, data + 4, (uint32_t)zlen) == 0) {
		size_t zl = zchunk_compress(cc, z, out, raw);
		if (zl) {
			if (zchunk_decompress(dc, back, raw, z, (uint32_t)zl) != 0 ||
			    memcmp(out, back, raw))
				abort();
		}
	}
	free(out);
	free(back);
	return 0;
}
