/* SPDX-License-Identifier: MIT */
#include "proto/zchunk.h"

#include <errno.h>

#include <zstd.h>

#include "util/err.h"

_Static_assert(ZDATA_MAX_ZLEN == ZSTD_COMPRESSBOUND(ZDATA_MAX_RAW),
	       "ZDATA_MAX_ZLEN is zstd's bound for a whole chunk");

struct ZSTD_CCtx_s *zchunk_cctx_new(int level)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();

	if (!cc) {
		err_set(-ENOMEM, "out of memory for a zstd compressor");
		return NULL;
	}
	/* The window caps what a decoder needs; the content size lets the
	 * receiver check the frame against raw_len before decoding; no frame
	 * checksum, the channel or the whole-file hash already covers the data. */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, ZDATA_WINDOW_LOG)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 0))) {
		ZSTD_freeCCtx(cc);
		err_set(-EINVAL, "zstd: compression level %d not accepted", level);
		return NULL;
	}
	/* From level 3 zstd sizes its match tables for the window; 2^14 entries
	 * keep the compressor at about 630 KiB instead of 890 KiB (level 3) for
	 * a ratio 0.1 % worse on text (bench/zstd-cost.c, docs/DESIGN.md). */
	if (level >= 3) {
		ZSTD_CCtx_setParameter(cc, ZSTD_c_hashLog, ZCHUNK_TABLE_LOG);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_chainLog, ZCHUNK_TABLE_LOG);
	}
	return cc;
}

struct ZSTD_DCtx_s *zchunk_dctx_new(void)
{
	ZSTD_DCtx *dc = ZSTD_createDCtx();

	if (!dc) {
		err_set(-ENOMEM, "out of memory for a zstd decompressor");
		return NULL;
	}
	ZSTD_DCtx_setParameter(dc, ZSTD_d_windowLogMax, ZDATA_WINDOW_LOG);
	return dc;
}

void zchunk_cctx_free(struct ZSTD_CCtx_s *cc)
{
	ZSTD_freeCCtx(cc);
}

void zchunk_dctx_free(struct ZSTD_DCtx_s *dc)
{
	ZSTD_freeDCtx(dc);
}

size_t zchunk_cctx_size(const struct ZSTD_CCtx_s *cc)
{
	return ZSTD_sizeof_CCtx(cc);
}

size_t zchunk_dctx_size(const struct ZSTD_DCtx_s *dc)
{
	return ZSTD_sizeof_DCtx(dc);
}

size_t zchunk_compress(struct ZSTD_CCtx_s *cc, uint8_t *dst, const uint8_t *src, size_t n)
{
	/* the frame must save ZCHUNK_MIN_SAVING %: give zstd no more room than
	 * that, and it stops as soon as the output would not fit */
	size_t cap = n - n * ZCHUNK_MIN_SAVING / 100;

	if (!n || n > ZDATA_MAX_RAW)
		return 0;
	size_t z = ZSTD_compress2(cc, dst, cap, src, n);
	return ZSTD_isError(z) || z == 0 || z > cap ? 0 : z;
}

/* The window a frame asks for, from its header (RFC 8878, 3.1.1.1): a
 * single-segment frame's window is its content; otherwise the Window
 * Descriptor after the Frame Header Descriptor says. Read by hand: zstd's
 * own header parser is in its unstable API. 0 if the header is cut short. */
static uint64_t frame_window(const uint8_t *src, uint32_t zlen, uint64_t content)
{
	if (zlen < 6)
		return 0;
	if (src[4] & 0x20)   /* Single_Segment_flag */
		return content;
	uint64_t base = 1ull << (10 + (src[5] >> 3));
	return base + base / 8 * (src[5] & 7);
}

/* What the frame header says, checked before a byte is decoded. */
static int check_header(const uint8_t *src, uint32_t zlen, uint32_t raw_len)
{
	unsigned long long content = ZSTD_getFrameContentSize(src, zlen);

	/* a skippable frame declares no content: 0, never a raw_len */
	if (content == ZSTD_CONTENTSIZE_ERROR)
		return err_set(-EBADMSG, "protocol: ZDATA is not a zstd frame");
	if (content == ZSTD_CONTENTSIZE_UNKNOWN)
		return err_set(-EBADMSG, "protocol: ZDATA of %u bytes whose frame declares no size",
			       raw_len);
	if (content != raw_len)
		return err_set(-EBADMSG, "protocol: ZDATA of %u bytes whose frame declares %llu",
			       raw_len, content);
	uint64_t win = frame_window(src, zlen, content);
	if (!win || win > (1ull << ZDATA_WINDOW_LOG))
		return err_set(-EBADMSG, "protocol: ZDATA frame needs a window of %llu bytes",
			       (unsigned long long)win);
	/* exactly one frame: nothing concatenated after it, nothing cut off */
	size_t fsz = ZSTD_findFrameCompressedSize(src, zlen);
	if (ZSTD_isError(fsz) || fsz != zlen)
		return err_set(-EBADMSG, "protocol: ZDATA of %u bytes is not exactly one frame", zlen);
	return 0;
}

int zchunk_decompress(struct ZSTD_DCtx_s *dc, uint8_t *dst, uint32_t raw_len,
		      const uint8_t *src, uint32_t zlen)
{
	int rc = check_header(src, zlen, raw_len);

	if (rc < 0)
		return rc;
	/* dst holds exactly raw_len: a frame that inflates past it fails here,
	 * whatever its header claimed (a decompression bomb) */
	size_t n = ZSTD_decompressDCtx(dc, dst, raw_len, src, zlen);
	if (ZSTD_isError(n))
		return err_set(-EBADMSG, "protocol: ZDATA does not decompress (%s)",
			       ZSTD_getErrorName(n));
	if (n != raw_len)
		return err_set(-EBADMSG, "protocol: ZDATA decompressed to %zu bytes, not %u", n,
			       raw_len);
	return 0;
}
