/* SPDX-License-Identifier: MIT */
/* One chunk of file data as one zstd frame (ZDATA, docs/PROTOCOL.md 4.5):
 * the encoder with the box's limits (window 2^ZDATA_WINDOW_LOG, at most
 * ZDATA_MAX_RAW bytes in) and the strict decoder, the only code that reads
 * a peer's compressed bytes. No I/O here: the session moves the bytes. */
#ifndef FERRY_PROTO_ZCHUNK_H
#define FERRY_PROTO_ZCHUNK_H

#include <stddef.h>
#include <stdint.h>

#include "proto/msg.h"

#define ZCHUNK_LEVEL_DEFAULT 3     /* what a client compresses with */
#define ZCHUNK_LEVEL_BOX 1         /* what the daemon compresses with: 20 % faster,
				    * 540 KiB instead of 630, 6 % bigger on text */
#define ZCHUNK_LEVEL_MAX 19
#define ZCHUNK_TABLE_LOG 14        /* match tables' size cap from level 3 */

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

/* A compressor at `level` (1 .. ZCHUNK_LEVEL_MAX) with the window capped;
 * NULL with err_msg() set when out of memory. */
struct ZSTD_CCtx_s *zchunk_cctx_new(int level);
struct ZSTD_DCtx_s *zchunk_dctx_new(void);
void zchunk_cctx_free(struct ZSTD_CCtx_s *cc);
void zchunk_dctx_free(struct ZSTD_DCtx_s *dc);
/* Bytes the context holds now (zstd allocates its tables at first use). */
size_t zchunk_cctx_size(const struct ZSTD_CCtx_s *cc);
size_t zchunk_dctx_size(const struct ZSTD_DCtx_s *dc);

/* Compresses n (1 .. ZDATA_MAX_RAW) bytes into one frame with its content
 * size, no checksum (the records' AEAD or the whole-file hash covers the
 * data). Returns its length (<= ZDATA_MAX_ZLEN; dst must hold that), or 0
 * when it failed or is not worth it: not at least ZCHUNK_MIN_SAVING percent
 * smaller than the input (the caller then sends the chunk raw). */
#define ZCHUNK_MIN_SAVING 3
size_t zchunk_compress(struct ZSTD_CCtx_s *cc, uint8_t *dst, const uint8_t *src, size_t n);

/* Decodes the zlen bytes at src, which must be exactly one zstd frame that
 * declares raw_len bytes of content, needs a window of at most
 * 2^ZDATA_WINDOW_LOG and decompresses to exactly raw_len bytes into dst
 * (which holds raw_len): 0, or -EBADMSG "protocol: ..." for anything else
 * (a bomb, a truncated or trailing frame, a skippable frame, corrupt data).
 * raw_len and zlen must already be within the ZDATA limits. */
int zchunk_decompress(struct ZSTD_DCtx_s *dc, uint8_t *dst, uint32_t raw_len,
		      const uint8_t *src, uint32_t zlen);

#endif
