/* SPDX-License-Identifier: MIT */
#include "session/filedata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "fs/snapstore.h"
#include "session/progress.h"
#include "session/xmeta.h"
#include "session/zdata.h"
#include "util/err.h"

/* Zeros for a file that shrank while sent (rare): small, since a const array
 * is stored in the binary, and every KiB counts on a router's flash. */
static const uint8_t zpad[4096];

/* Below this a file is sent as one extent: SEEK_DATA/SEEK_HOLE calls cost
 * more than they save on small files. */
#define SPARSE_MIN (1u << 20)

/* A hole enters the stream hash as a marker, not as its zeros: a 5 GiB
 * sparse image costs nothing to hash on a router. The marker is safe because
 * HOLE and DATA lengths travel in authenticated control messages; the hash
 * has to vouch only for the raw data bytes (docs/PROTOCOL.md). */
static void hash_hole(XXH3_state_t *h, uint64_t n)
{
	uint8_t mark[9] = { 'H' };
	if (!h)
		return;
	for (int i = 0; i < 8; i++)
		mark[1 + i] = (uint8_t)(n >> (56 - 8 * i));
	XXH3_128bits_update(h, mark, sizeof mark);
}

void filedata_hash_out(XXH3_state_t *h, uint8_t out[MSG_HASH_LEN])
{
	XXH128_canonical_t canon;
	XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(h));
	memcpy(out, canon.digest, MSG_HASH_LEN);
}

int filedata_hash_fd(int fd, uint8_t out[MSG_HASH_LEN], struct conn *c)
{
	static uint8_t buf[1 << 16];
	XXH3_state_t *h = XXH3_createState();
	ssize_t n;
#ifdef FERRY_TEST_HOOKS
	/* test builds (test_rsync_habits): a slow disk, N ms per 64 KiB */
	const char *slow = getenv("FERRY_TEST_SLOW_HASH");
	long slow_ms = slow ? atol(slow) : 0;
#endif

	if (!h)
		return err_set(-ENOMEM, "out of memory");
	XXH3_128bits_reset(h);
	while ((n = read(fd, buf, sizeof buf)) > 0) {
		XXH3_128bits_update(h, buf, (size_t)n);
#ifdef FERRY_TEST_HOOKS
		if (slow_ms > 0)
			nanosleep(&(struct timespec){ .tv_sec = slow_ms / 1000,
						      .tv_nsec = slow_ms % 1000 * 1000000 }, NULL);
#endif
		conn_keepalive(c);
	}
	filedata_hash_out(h, out);
	XXH3_freeState(h);
	return n < 0 ? -errno : 0;
}

/* The whole-file hash is needed only where the records do not already
 * authenticate every byte: at protection none. At encrypt and integrity the
 * AEAD tags prove the receiver got exactly what the sender read, so the hash
 * could never disagree, and skipping it saves 3-4 instructions per byte on a
 * 32-bit MIPS router (docs/PROTOCOL.md, section 5). */
static int hash_new(const struct conn *c, int always, XXH3_state_t **h)
{
	*h = NULL;
	if (!c->verify && !always)
		return 0;
	*h = XXH3_createState();
	if (!*h)
		return err_set(-ENOMEM, "out of memory");
	XXH3_128bits_reset(*h);
	return 0;
}

/* Under fake super a file's mode is the one stored with it: its real one
 * has u+rw added and no set-id bits (a new file on the other side is given
 * FILE_BEGIN's mode). */
static uint32_t mode_to_send(const struct conn *c, int fd, mode_t real)
{
	struct fake_stat fs;

	if (c->fake_super && fd >= 0 &&
	    fake_stat_read(&(struct xa_at){ .fd = fd, .dirfd = -1 }, &fs))
		return fs.mode & 07777;
	return real & 07777;
}

int filedata_send_begin(struct conn *c, uint32_t index, int fd, const struct stat *sb)
{
	struct msg m = { .type = MSG_FILE_BEGIN };

	zdata_file(c);
	m.u.file_begin.index = index;
	m.u.file_begin.size = sb ? (uint64_t)sb->st_size : 0;
	m.u.file_begin.mode = sb ? mode_to_send(c, fd, sb->st_mode) : 0600;
	m.u.file_begin.mtime_s = sb ? sb->st_mtim.tv_sec : 0;
	m.u.file_begin.mtime_ns = sb ? (uint32_t)sb->st_mtim.tv_nsec : 0;
	return conn_send(c, &m);
}

int filedata_send_end(struct conn *c, uint8_t status, const uint8_t *hash)
{
	struct msg m = { .type = MSG_FILE_END };

	m.u.file_end.status = status;
	m.u.file_end.has_hash = hash != NULL;
	if (hash)
		memcpy(m.u.file_end.hash, hash, MSG_HASH_LEN);
	return conn_send(c, &m);
}

/* FILE_END with h's hash; a file sent whole whose stored hash (`want`,
 * NULL: none) differs from it ends as FILE_DAMAGED in *status. */
static int send_end(struct conn *c, uint8_t *status, XXH3_state_t *h, const uint8_t *want)
{
	uint8_t hash[MSG_HASH_LEN];

	if (h)
		filedata_hash_out(h, hash);
	if (h && want && *status == FILE_OK && memcmp(want, hash, MSG_HASH_LEN) != 0)
		*status = FILE_DAMAGED;
	return filedata_send_end(c, *status, h ? hash : NULL);
}

int filedata_stored(const struct conn *c, int fd, uint8_t want[MSG_HASH_LEN])
{
	int64_t when;
	return c->check_stored && snaphash_get(fd, want, &when) == 1;
}

const char *filedata_end_reason(uint8_t status, const char *otherwise)
{
	return status == FILE_DAMAGED ? "damaged on the box: its bytes no longer match the hash "
					"recorded when it was stored (ferry verify there says "
					"more); nothing was written here" :
	       status == FILE_VANISHED ? "vanished on the sender before it was read (deleted "
					 "meanwhile)" : otherwise;
}

const char *filedata_status_word(uint8_t status)
{
	return status == FILE_CHANGED ? "file shrank" :
	       status == FILE_DAMAGED ? "damaged on the box (its bytes no longer match the hash "
					"recorded when it was stored; ferry verify)" : "read error";
}

int filedata_send_failed(struct conn *c, uint32_t index)
{
	return filedata_send_unopened(c, index, -EIO, 0);
}

int filedata_send_unopened(struct conn *c, uint32_t index, int err, uint32_t flags2)
{
	int rc = filedata_send_begin(c, index, -1, NULL);
	uint8_t status = err == -ENOENT && (flags2 & REQ2_VANISHED) ? FILE_VANISHED :
			 FILE_READ_ERROR;
	return rc < 0 ? rc : send_end(c, &status, NULL, NULL);
}

/* Unverified PROT_NONE: the kernel moves the pages (sendfile), user space
 * never touches the data. A file that shrank is padded with zeros and
 * marked, as stream_extent does. */
static int stream_sendfile(struct conn *c, int fd, off_t off, uint64_t len, uint8_t *status,
			   struct progress *pg)
{
	while (len) {
		size_t piece = len < (8u << 20) ? (size_t)len : (8u << 20);
		off_t at = off;
		ratelimit_take(&c->rl, piece);
		int rc = chan_data_sendfile(c->ch, fd, &at, piece);
		size_t done = (size_t)(at - off);
		if (rc < 0 && !(rc == -EIO && done < piece))
			return rc;
		if (rc < 0) {
			*status = FILE_CHANGED;
			for (size_t pad = piece - done; pad;) {
				size_t k = pad < sizeof zpad ? pad : sizeof zpad;
				if ((rc = chan_data_send(c->ch, zpad, k)) < 0)
					return rc;
				pad -= k;
			}
		}
		if (pg)
			progress_bytes(pg, piece);
		off += (off_t)piece;
		len -= piece;
	}
	return 0;
}

/* Streams len bytes from off. The receiver expects exactly len bytes, so a
 * file that shrank or failed to read is padded and marked in *status. */
static int stream_extent(struct conn *c, int fd, off_t off, uint64_t len, XXH3_state_t *h,
			 uint8_t *status, struct progress *pg)
{
	int rc = conn_send_len(c, MSG_DATA, len);

	if (rc == 0 && !h && c->prot == PROT_NONE)
		return stream_sendfile(c, fd, off, len, status, pg);
	while (rc == 0 && len) {
		size_t cap;
		uint8_t *buf = chan_data_buf(c->ch, &cap);
		if (!buf) {   /* the channel has failed (the peer went away): stop */
			rc = err_set(-EPIPE, "connection lost while sending file data");
			break;
		}
		size_t want = len < cap ? (size_t)len : cap;
		ssize_t n = 0;
		if (*status == FILE_OK) {
			do
				n = pread(fd, buf, want, off);
			while (n < 0 && errno == EINTR);
		}
		if (n <= 0) {
			if (*status == FILE_OK)
				*status = n < 0 ? FILE_READ_ERROR : FILE_CHANGED;
			memset(buf, 0, want);
			n = (ssize_t)want;
		}
		if (h)
			XXH3_128bits_update(h, buf, (size_t)n);
		rc = chan_data_commit(c->ch, (size_t)n);
		off += n;
		len -= (uint64_t)n;
		ratelimit_take(&c->rl, (uint64_t)n);
		if (pg)
			progress_bytes(pg, (uint64_t)n);
	}
	return rc;
}

/* Where the next data extent at or after off starts and ends (sparse files). */
static void next_extent(int fd, off_t off, off_t size, off_t *data, off_t *end)
{
	*data = off;
	*end = size;
	if (size < (off_t)SPARSE_MIN)
		return;
	off_t d = lseek(fd, off, SEEK_DATA);
	if (d < 0) {
		if (errno == ENXIO)
			*data = size;   /* only a hole is left */
		return;
	}
	*data = d < size ? d : size;
	off_t e = lseek(fd, *data, SEEK_HOLE);
	if (e > *data && e < size)
		*end = e;
}

int filedata_send(struct conn *c, int fd, const struct stat *known, uint32_t index,
		  const char *path, struct xfer_stats *st, struct progress *pg)
{
	struct stat sb;
	uint8_t status = FILE_OK;
	XXH3_state_t *h;
	int rc;

	if (known)
		sb = *known;
	else if (fstat(fd, &sb) < 0)
		sb.st_mode = 0;
	if (!S_ISREG(sb.st_mode)) {
		xfer_note(st, "%s: no longer a regular file", path);   /* counted by the receiver */
		return filedata_send_failed(c, index);
	}
	if (pg)
		progress_file(pg, path, (uint64_t)sb.st_size);
	uint8_t want[MSG_HASH_LEN];
	int stored = filedata_stored(c, fd, want);
	if ((rc = hash_new(c, stored, &h)) < 0)
		return rc;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	rc = filedata_send_begin(c, index, fd, &sb);
	for (off_t off = 0; rc == 0 && off < sb.st_size;) {
		off_t data, end;
		next_extent(fd, off, sb.st_size, &data, &end);
		if (data > off) {
			rc = conn_send_len(c, MSG_HOLE, (uint64_t)(data - off));
			hash_hole(h, (uint64_t)(data - off));
			if (pg)   /* a hole is part of the file: the line reaches 100 % */
				progress_matched(pg, (uint64_t)(data - off));
			off = data;
			continue;
		}
		rc = zdata_sending(c) ? zdata_send_extent(c, fd, off, (uint64_t)(end - off), h, &status, pg, st)
				      : stream_extent(c, fd, off, (uint64_t)(end - off), h, &status, pg);
		st->bytes_data += (uint64_t)(end - off);
		off = end;
	}
	if (rc == 0)
		rc = send_end(c, &status, h, stored ? want : NULL);
	if (h)
		XXH3_freeState(h);
	if (rc == 0 && status != FILE_OK)   /* FILE_END tells the receiver, which counts it */
		xfer_note(st, "%s: %s while it was sent", path, filedata_status_word(status));
	else if (rc == 0)
		st->files_sent++;
	return rc;
}

size_t filedata_piece(uint64_t left)
{
	return left < SIZE_MAX ? (size_t)left : (size_t)SIZE_MAX;
}

/* Unverified PROT_NONE: socket -> pipe -> file, never through user space.
 * *n = bytes moved; a write failure clears *ok (the rest is then drained). */
static int splice_some(struct conn *c, struct afile *f, uint64_t len, size_t *n, int *ok,
		       char *why, size_t whylen)
{
	int fd = afile_direct_fd(f);
	int rc;

	*n = 0;
	if (fd < 0) {
		*ok = 0;
		snprintf(why, whylen, "%s", err_msg());
		return 0;
	}
	rc = chan_data_splice(c->ch, fd, filedata_piece(len), n);
	if (rc == -EIO && !*n) {   /* the file, not the stream, failed */
		*ok = 0;
		snprintf(why, whylen, "%s", err_msg());
		return rc;
	}
	if (rc < 0)
		return rc;
	if (afile_direct_done(f, *n) < 0) {
		*ok = 0;
		snprintf(why, whylen, "%s", err_msg());
	}
	return 0;
}

static int recv_extent(struct conn *c, uint64_t len, struct afile *f, XXH3_state_t *h,
		       int *ok, char *why, size_t whylen, struct progress *pg)
{
	while (len) {
		const uint8_t *p;
		size_t n = 0;
		int rc;
		if (!h && c->prot == PROT_NONE && f && *ok) {
			if ((rc = splice_some(c, f, len, &n, ok, why, whylen)) < 0)
				return rc;
			if (!n)
				continue;   /* the file failed: drain below */
		} else {
			if ((rc = chan_data_recv(c->ch, filedata_piece(len), &p, &n)) < 0)
				return rc;
			if (h)
				XXH3_128bits_update(h, p, n);
			if (f && *ok && afile_write(f, p, n) < 0) {
				*ok = 0;
				snprintf(why, whylen, "%s", err_msg());
			}
		}
		len -= n;
		ratelimit_take(&c->rl, n);
		if (pg)
			progress_bytes(pg, n);
	}
	return 0;
}

#define COPY_CHUNK (256u << 10)

/* COPY: blocks of the basis into the file. Checked against the basis the
 * signature described, and against the file's size, before anything is read. */
static int copy_blocks(const struct m_copy *cp, const struct basis *b, uint64_t off, uint64_t size,
		       struct afile *f, XXH3_state_t *h, int *ok, char *why, size_t whylen)
{
	if (!b || cp->block >= b->nblocks || cp->count > b->nblocks - cp->block ||
	    (uint64_t)cp->count * b->block > size - off)
		return err_set(-EBADMSG, "protocol: COPY of blocks %u+%u, past the basis or the file",
			       cp->block, cp->count);
	/* A run of blocks moves in pieces of up to COPY_CHUNK: small writes
	 * cost far more per byte (tmpfs here: 2.7 s for 1 GiB in 32 KiB writes,
	 * 0.46 s in 128 KiB or 1 MiB ones). A piece never spans the basis's two files. */
	uint32_t per = COPY_CHUNK / b->block ? COPY_CHUNK / b->block : 1;
	uint8_t *buf = malloc((size_t)(per < cp->count ? per : cp->count) * b->block);
	if (!buf)
		return err_set(-ENOMEM, "out of memory");
	for (uint32_t i = 0; i < cp->count;) {
		uint64_t at = (uint64_t)(cp->block + i) * b->block;
		uint32_t k = cp->count - i < per ? cp->count - i : per;
		if (at < b->split && at + (uint64_t)k * b->block > b->split)
			k = (uint32_t)((b->split - at) / b->block);
		size_t n = (size_t)k * b->block;
		if (basis_read(b, buf, n, at) < 0) {
			/* the basis changed meanwhile */
			memset(buf, 0, n);
			if (*ok)
				snprintf(why, whylen, "the old version changed while it was the basis");
			*ok = 0;
		}
		XXH3_128bits_update(h, buf, n);
		if (f && *ok && afile_write(f, buf, n) < 0) {
			*ok = 0;
			snprintf(why, whylen, "%s", err_msg());
		}
		i += k;
	}
	free(buf);
	return 0;
}

int filedata_recv(struct conn *c, const struct m_file_begin *fb, struct afile *f,
		  const struct basis *b, struct xfer_stats *st, struct progress *pg,
		  const char **why)
{
	static _Thread_local char reason[512];
	struct msg m;
	uint64_t off = 0;
	int ok = f != NULL, rc;
	XXH3_state_t *h;

	/* a delta is verified whatever the protection: blocks can collide */
	if ((rc = hash_new(c, b != NULL, &h)) < 0)
		return rc;
	snprintf(reason, sizeof reason, "not written");
	*why = reason;
	for (;;) {
		if ((rc = conn_recv(c, &m)) < 0)
			break;
		if (m.type == MSG_FILE_END)
			break;
		if (m.type == MSG_COPY) {
			if ((rc = copy_blocks(&m.u.copy, b, off, fb->size, f, h, &ok, reason,
					      sizeof reason)) < 0)
				break;
			off += (uint64_t)m.u.copy.count * b->block;
			st->bytes_matched += (uint64_t)m.u.copy.count * b->block;
			if (pg)
				progress_matched(pg, (uint64_t)m.u.copy.count * b->block);
			continue;
		}
		if (m.type == MSG_ZDATA) {   /* compressed (session/zdata.c checks it all) */
			if ((rc = zdata_recv_file(c, &m.u.zdata, fb->size - off, f, h, &ok, reason,
						  sizeof reason, pg, st)) < 0)
				break;
			off += m.u.zdata.raw_len;
			continue;
		}
		if ((m.type != MSG_DATA && m.type != MSG_HOLE) || m.u.len.len > fb->size - off) {
			rc = err_set(-EBADMSG, "protocol: unexpected %s inside a file's data",
				     msg_type_name(m.type));
			break;
		}
		if (m.type == MSG_HOLE) {
			hash_hole(h, m.u.len.len);
			if (pg)
				progress_matched(pg, m.u.len.len);
			if (f && ok && afile_skip(f, (off_t)m.u.len.len) < 0) {
				ok = 0;
				snprintf(reason, sizeof reason, "%s", err_msg());
			}
		} else {
			rc = recv_extent(c, m.u.len.len, f, h, &ok, reason, sizeof reason, pg);
			if (rc < 0)
				break;
			st->bytes_data += m.u.len.len;
		}
		off += m.u.len.len;
	}
	if (rc == 0 && off != fb->size)
		rc = err_set(-EBADMSG, "protocol: file data ended after %llu of %llu bytes",
			     (unsigned long long)off, (unsigned long long)fb->size);
	if (rc == 0 && m.u.file_end.status != FILE_OK) {
		snprintf(reason, sizeof reason, "%s",
			 filedata_end_reason(m.u.file_end.status,
					     "the sender could not read it completely"));
		st->vanished += m.u.file_end.status == FILE_VANISHED;   /* the caller may undo */
		ok = 0;
	}
	if (rc == 0 && h && !m.u.file_end.has_hash)
		rc = err_set(-EBADMSG, "protocol: file data %s without its hash",
			     b ? "of a delta" : "at protection none");
	if (rc == 0 && ok && h) {
		uint8_t mine[MSG_HASH_LEN];
		filedata_hash_out(h, mine);
		if (memcmp(mine, m.u.file_end.hash, MSG_HASH_LEN)) {
			snprintf(reason, sizeof reason, "whole-file hash mismatch");
			ok = 0;
		}
	}
	if (h)
		XXH3_freeState(h);
	return rc < 0 ? rc : ok;
}
