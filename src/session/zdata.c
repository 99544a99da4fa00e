/* SPDX-License-Identifier: MIT */
#include "session/zdata.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "proto/zchunk.h"
#include "session/progress.h"
#include "util/err.h"
#include "util/log.h"

int zdata_setup(struct conn *c, uint32_t acc_flags, int sending, int level)
{
	c->z = NULL;
	if (!(acc_flags & ACC_COMPRESS))
		return 0;
	struct zdata *z = calloc(1, sizeof *z);
	if (!z)
		return err_set(-ENOMEM, "out of memory");
	z->send = sending;
	z->level = level ? level : ZCHUNK_LEVEL_DEFAULT;
	zpolicy_init(&z->pol, acc_flags & ACC_COMPRESS_AUTO ? ZP_AUTO : ZP_YES);
	c->z = z;
	return 0;
}

void zdata_free(struct conn *c)
{
	struct zdata *z = c->z;

	if (!z)
		return;
	if (z->cc || z->dc)
		log_debug("zstd: compressor %zu bytes, decompressor %zu bytes, buffers %u bytes",
			  z->cc ? zchunk_cctx_size(z->cc) : 0, z->dc ? zchunk_dctx_size(z->dc) : 0,
			  z->raw ? ZDATA_MAX_RAW + ZDATA_MAX_ZLEN : 0);
	if (z->pol.mode == ZP_AUTO && z->send)
		log_debug("zstd auto: %u changes of mind, compressor %.1f MB/s, link %.1f MB/s",
			  z->pol.flips, zpolicy_speed(&z->pol) / 1e6, z->pol.link / 1e6);
	zchunk_cctx_free(z->cc);
	zchunk_dctx_free(z->dc);
	free(z->raw);
	free(z);
	c->z = NULL;
}

int zdata_sending(const struct conn *c)
{
	return c->z && c->z->send;
}

void zdata_file(struct conn *c)
{
	if (c->z)
		zpolicy_file(&c->z->pol);
}

/* The two chunk buffers, made once (a box that only receives plain DATA
 * never pays for them). */
static int buffers(struct zdata *z)
{
	if (z->raw)
		return 0;
	if (!(z->raw = malloc(ZDATA_MAX_RAW + ZDATA_MAX_ZLEN)))
		return err_set(-ENOMEM, "out of memory for compression buffers");
	z->zbuf = z->raw + ZDATA_MAX_RAW;
	return 0;
}

static double cpu_secs(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* What auto needs to know of the link after every chunk or raw run. */
static void sample_link(struct conn *c)
{
	struct chan_stats cs;

	if (c->z->pol.mode != ZP_AUTO)
		return;
	chan_get_stats(c->ch, &cs);
	int was = c->z->pol.on;
	zpolicy_link(&c->z->pol, now_monotonic(), cs.bytes_out,
		     (double)cs.wait_out_ns / 1e9 + c->rl.slept);
	if (was != c->z->pol.on)
		log_debug("zstd auto: %s (link %.1f MB/s, compressor %.1f MB/s)",
			  c->z->pol.on ? "compressing" : "sending raw", c->z->pol.link / 1e6,
			  zpolicy_speed(&c->z->pol) / 1e6);
}

static int send_plain(struct conn *c, const uint8_t *p, size_t n)
{
	int rc = conn_send_len(c, MSG_DATA, n);

	if (rc == 0)
		rc = chan_data_send(c->ch, p, n);
	ratelimit_take(&c->rl, n);
	return rc;
}

/* One chunk (n <= ZDATA_MAX_RAW): tried, then ZDATA or DATA. */
static int send_chunk(struct conn *c, const uint8_t *p, size_t n, struct xfer_stats *st)
{
	struct zdata *z = c->z;
	struct msg m = { .type = MSG_ZDATA };
	int rc;

	if (!z->cc && !(z->cc = zchunk_cctx_new(z->level)))
		return -ENOMEM;
	if ((rc = buffers(z)) < 0)
		return rc;
	double t0 = cpu_secs();
	size_t zl = zchunk_compress(z->cc, z->zbuf, p, n);
	zpolicy_tried(&z->pol, n, zl, cpu_secs() - t0);
	if (!zl)
		return send_plain(c, p, n);
	m.u.zdata = (struct m_zdata){ .raw_len = (uint32_t)n, .zlen = (uint32_t)zl };
	if ((rc = conn_send(c, &m)) == 0)
		rc = chan_data_send(c->ch, z->zbuf, zl);
	ratelimit_take(&c->rl, zl);   /* --bwlimit counts what the link carries */
	st->bytes_zraw += n;
	st->bytes_zwire += zl;
	return rc;
}

int zdata_send_buf(struct conn *c, const uint8_t *p, size_t n, struct xfer_stats *st)
{
	int rc = 0;

	if (!zdata_sending(c))
		return send_plain(c, p, n);
	while (rc == 0 && n) {
		uint32_t k = zpolicy_next(&c->z->pol);
		size_t piece = n < ZDATA_MAX_RAW ? n : ZDATA_MAX_RAW;
		if (k) {
			piece = n < (size_t)k * ZDATA_MAX_RAW ? n : (size_t)k * ZDATA_MAX_RAW;
			rc = send_plain(c, p, piece);
			zpolicy_skipped(&c->z->pol, k);
		} else {
			rc = send_chunk(c, p, piece, st);
		}
		p += piece;
		n -= piece;
		sample_link(c);
	}
	return rc;
}

/* Exactly n bytes of fd at off into buf; what could not be read is zeros,
 * and *status says why (the receiver discards the file). */
static void read_chunk(int fd, off_t off, uint8_t *buf, size_t n, uint8_t *status)
{
	size_t got = 0;

	while (got < n && *status == FILE_OK) {
		ssize_t k = pread(fd, buf + got, n - got, off + (off_t)got);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			*status = k < 0 ? FILE_READ_ERROR : FILE_CHANGED;
			break;
		}
		got += (size_t)k;
	}
	memset(buf + got, 0, n - got);
}

/* Chunks that go raw without a try: one DATA, read straight into the
 * channel's records (no copy), as filedata's plain loop. */
static int send_raw_run(struct conn *c, int fd, off_t off, uint64_t len, XXH3_state_t *h,
			uint8_t *status, struct progress *pg)
{
	int rc = conn_send_len(c, MSG_DATA, len);

	while (rc == 0 && len) {
		size_t cap;
		uint8_t *buf = chan_data_buf(c->ch, &cap);
		if (!buf)
			return err_set(-EPIPE, "connection lost while sending file data");
		size_t want = len < cap ? (size_t)len : cap;
		read_chunk(fd, off, buf, want, status);
		if (h)
			XXH3_128bits_update(h, buf, want);
		rc = chan_data_commit(c->ch, want);
		ratelimit_take(&c->rl, want);
		if (pg)
			progress_bytes(pg, want);
		off += (off_t)want;
		len -= want;
	}
	return rc;
}

int zdata_send_extent(struct conn *c, int fd, off_t off, uint64_t len, XXH3_state_t *h,
		      uint8_t *status, struct progress *pg, struct xfer_stats *st)
{
	struct zdata *z = c->z;
	int rc = buffers(z);

	while (rc == 0 && len) {
		uint32_t k = zpolicy_next(&z->pol);
		uint64_t piece = len < ZDATA_MAX_RAW ? len : ZDATA_MAX_RAW;
		if (k) {
			piece = len < (uint64_t)k * ZDATA_MAX_RAW ? len : (uint64_t)k * ZDATA_MAX_RAW;
			rc = send_raw_run(c, fd, off, piece, h, status, pg);
			zpolicy_skipped(&z->pol, k);
		} else {
			read_chunk(fd, off, z->raw, (size_t)piece, status);
			if (h)
				XXH3_128bits_update(h, z->raw, (size_t)piece);
			rc = send_chunk(c, z->raw, (size_t)piece, st);
			if (pg)
				progress_bytes(pg, piece);
		}
		off += (off_t)piece;
		len -= piece;
		sample_link(c);
	}
	return rc;
}

int zdata_recv(struct conn *c, const struct m_zdata *m, uint64_t room, const uint8_t **out,
	       struct xfer_stats *st)
{
	struct zdata *z = c->z;
	int rc;

	if (!z)
		return err_set(-EBADMSG, "protocol: ZDATA, but compression was not negotiated");
	if (m->raw_len > room)
		return err_set(-EBADMSG, "protocol: ZDATA of %u bytes, only %llu left in the file",
			       m->raw_len, (unsigned long long)room);
	if ((rc = buffers(z)) < 0)
		return rc;
	if (!z->dc && !(z->dc = zchunk_dctx_new()))
		return -ENOMEM;
	for (uint32_t got = 0; got < m->zlen;) {
		const uint8_t *p;
		size_t n = 0;
		if ((rc = chan_data_recv(c->ch, m->zlen - got, &p, &n)) < 0)
			return rc;
		memcpy(z->zbuf + got, p, n);
		got += (uint32_t)n;
	}
	ratelimit_take(&c->rl, m->zlen);
	if ((rc = zchunk_decompress(z->dc, z->raw, m->raw_len, z->zbuf, m->zlen)) < 0)
		return rc;
	st->bytes_zraw += m->raw_len;
	st->bytes_zwire += m->zlen;
	*out = z->raw;
	return 0;
}

int zdata_recv_file(struct conn *c, const struct m_zdata *m, uint64_t room, struct afile *f,
		    XXH3_state_t *h, int *ok, char *why, size_t whylen, struct progress *pg,
		    struct xfer_stats *st)
{
	const uint8_t *p;
	int rc = zdata_recv(c, m, room, &p, st);

	if (rc < 0)
		return rc;
	if (h)
		XXH3_128bits_update(h, p, m->raw_len);
	if (f && *ok && afile_write(f, p, m->raw_len) < 0) {
		*ok = 0;
		snprintf(why, whylen, "%s", err_msg());
	}
	st->bytes_data += m->raw_len;
	if (pg)
		progress_bytes(pg, m->raw_len);
	return 0;
}
