/* SPDX-License-Identifier: MIT */
/* Transport: buffered, batched records over the socket (consecutive control
 * messages share one record); in-place sealing and opening; rekeying;
 * flushing that keeps reading so two writers never deadlock. */
#include "channel/transport.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "channel/io.h"
#include "util/err.h"

static uint64_t test_rekey_interval;

/* How much must move for a wait's deadline to start over (see struct pace). */
#define PACE_UNIT 65536u

/* The deadline of one wait for the peer. It is set when the wait first
 * blocks and starts over only once PACE_UNIT bytes have moved since, never
 * on a single byte: a peer that trickles a byte now and then is cut after
 * the timeout, while one that moves 64 KiB per timeout (218 B/s at the
 * daemon's default of 300 s) never is. A record is at most about PACE_UNIT
 * bytes, so every record must arrive whole within the timeout. */
struct pace {
	int64_t deadline;   /* 0: not waiting yet */
	size_t moved;       /* bytes since the deadline was set */
};

static int64_t pace_deadline(const struct channel *c, struct pace *p)
{
	if (!p->deadline) {
		p->deadline = io_deadline(c->timeout_ms);
		p->moved = 0;
	}
	return p->deadline;
}

static void pace_moved(struct pace *p, size_t n)
{
	p->moved += n;
	if (p->moved >= PACE_UNIT)
		p->deadline = 0;
}

void chan_test_set_rekey_interval(uint64_t n)
{
	test_rekey_interval = n;
}

int chan_new(int fd, enum cipher_id cipher, struct noise_cs *tx, struct noise_cs *rx,
	     const uint8_t hash[NOISE_HASHLEN], struct channel **out)
{
	struct channel *c = calloc(1, sizeof *c);

	if (!c || !(c->out = malloc(CHAN_OUTBUF)) || !(c->in = malloc(CHAN_INBUF))) {
		if (c) {
			free(c->out);
			free(c);
		}
		return err_set(-ENOMEM, "out of memory for the channel buffers");
	}
	c->fd = fd;
	c->cipher = cipher;
	c->prot = PROT_ENCRYPT;
	c->in_lim = CHAN_INBUF;
	c->pipe[0] = c->pipe[1] = -1;
	c->rekey_interval = test_rekey_interval ? test_rekey_interval : CHAN_REKEY_INTERVAL;
	/* A plain struct copy moves the states; the sources must not be wiped
	 * with aead_wipe afterwards (that would free the shared EVP context). */
	c->tx = *tx;
	c->rx = *rx;
	memset(tx, 0, sizeof *tx);
	memset(rx, 0, sizeof *rx);
	memcpy(c->hash, hash, NOISE_HASHLEN);
	*out = c;
	return 0;
}

void chan_free(struct channel *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	if (c->pipe[0] >= 0) {
		close(c->pipe[0]);
		close(c->pipe[1]);
	}
	noise_cs_wipe(&c->tx);
	noise_cs_wipe(&c->rx);
	/* Buffers may hold plaintext: wipe before free. */
	sodium_memzero(c->out, CHAN_OUTBUF);
	sodium_memzero(c->in, CHAN_INBUF);
	free(c->out);
	free(c->in);
	sodium_memzero(c, sizeof *c);
	free(c);
}

int chan_fd(const struct channel *c)
{
	return c->fd;
}

const char *chan_cipher_name(enum cipher_id id)
{
	return id == CIPHER_AESGCM ? "AESGCM" : "ChaChaPoly";
}

const uint8_t *chan_handshake_hash(const struct channel *c)
{
	return c->hash;
}

void chan_set_data_protection(struct channel *c, enum protection p)
{
	c->prot = p;
}

void chan_set_timeout(struct channel *c, int timeout_ms)
{
	c->timeout_ms = timeout_ms > 0 ? timeout_ms : 0;
}

void chan_get_stats(const struct channel *c, struct chan_stats *st)
{
	*st = c->st;
}

/* Counts one message on cs and rekeys it every rekey_interval messages;
 * the peer does the same at the same nonce, so no signalling is needed. */
static int count_msg(struct channel *c, struct noise_cs *cs)
{
	int rc;

	if (cs->n % c->rekey_interval != 0)
		return 0;
	if ((rc = noise_cs_rekey(cs)) < 0)
		return rc;
	c->st.rekeys++;
	return 0;
}

/* Moves unread input to the front when the tail could not take a whole
 * record (eager: whenever it gains room). The record last handed to the
 * caller stays valid until the next chan_recv/chan_data_recv, so while it
 * is live the move must fit below it and later reads stop at it. */
static void in_compact(struct channel *c, int eager)
{
	size_t unread = c->in_w - c->in_r;

	if (!c->live)
		c->in_lim = CHAN_INBUF;
	if (c->in_r == 0)
		return;
	if (!c->live && unread == 0) {
		c->in_r = c->in_w = 0;
		return;
	}
	if (!eager && c->in_lim - c->in_w >= CHAN_REC_MAX)
		return;   /* the tail still takes a whole record */
	if (c->live) {
		/* Only worth it if the room below the live record beats the tail. */
		if (unread > c->live_lo || c->live_lo - unread <= c->in_lim - c->in_w)
			return;
		c->in_lim = c->live_lo;
	}
	memmove(c->in, c->in + c->in_r, unread);
	c->in_w = unread;
	c->in_r = 0;
}

/* One non-blocking read into the input buffer: bytes read, 0 at EOF, -EAGAIN, <0. */
static ssize_t in_read_once(struct channel *c)
{
	ssize_t n;

	if (c->in_w >= c->in_lim)
		return -EAGAIN;
	n = io_recv(c->fd, c->in + c->in_w, c->in_lim - c->in_w);
	if (n > 0) {
		c->in_w += (size_t)n;
		c->st.bytes_in += (uint64_t)n;
	} else if (n == 0) {
		c->eof = 1;
	} else if (n != -EAGAIN) {
		return err_sys((int)n, "channel: read failed");
	}
	return n;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Seals the control record being filled, if any: before data records,
 * before a flush, and when the next message does not fit. */
int chan_batch_seal(struct channel *c)
{
	size_t reclen;
	int rc;

	if (!c->batch_open)
		return 0;
	c->batch_open = 0;
	if ((rc = rec_seal(&c->tx, PROT_ENCRYPT, c->out + c->batch_at, c->batch_len, &reclen)) < 0)
		return c->error = rc;   /* its messages are lost: nothing may follow */
	c->out_len = c->batch_at + reclen;
	c->st.records_out++;
	return count_msg(c, &c->tx);
}

int chan_flush(struct channel *c)
{
	struct pace pc = { 0 };
	short rev;
	int rc;

	if ((rc = chan_batch_seal(c)) < 0)
		return rc;
	while (c->out_off < c->out_len) {
		ssize_t n = io_send(c->fd, c->out + c->out_off, c->out_len - c->out_off);
		if (n > 0) {
			c->out_off += (size_t)n;
			c->st.bytes_out += (uint64_t)n;
			pace_moved(&pc, (size_t)n);
			continue;
		}
		if (n != -EAGAIN)
			return err_sys(n < 0 ? (int)n : -EIO, "channel: write failed");
		/* While the peer is not reading, read what it sends us: it may be
		 * blocked writing to us right now. All free space counts then
		 * (after the first wait in_r is 0, so this moves bytes once). */
		in_compact(c, 1);
		short ev = POLLOUT;
		if (!c->eof && !c->error && c->in_w < c->in_lim)
			ev |= POLLIN;
		uint64_t t0 = mono_ns();
		rc = io_wait(c->fd, ev, pace_deadline(c, &pc), &rev, "channel");
		c->st.wait_out_ns += mono_ns() - t0;
		if (rc < 0)
			return rc;
		/* Bytes the peer sends meanwhile count as progress too: it may be
		 * flushing to us before it reads. */
		if ((ev & POLLIN) && (rev & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t got = in_read_once(c);
			if (got < 0 && got != -EAGAIN)
				return (int)got;
			if (got > 0)
				pace_moved(&pc, (size_t)got);
		}
	}
	c->out_off = c->out_len = 0;
	return 0;
}

/* Makes room for one more whole record in the output buffer. */
static int out_reserve(struct channel *c)
{
	if (CHAN_OUTBUF - c->out_len >= CHAN_REC_MAX)
		return 0;
	return chan_flush(c);
}

/* Waits for more input (flushing our own output first: the peer may be
 * waiting for it before it answers), under the caller's pace: the caller
 * keeps it for everything it waits for (a whole record), so the deadline is
 * not renewed by each read. 0, or -EPIPE at EOF, or <0. */
static int in_fill(struct channel *c, struct pace *pc)
{
	short rev;
	int rc;
	ssize_t n;

	if ((c->batch_open || c->out_len > c->out_off) && (rc = chan_flush(c)) < 0)
		return rc;
	if (c->eof)
		return -EPIPE;
	for (;;) {
		n = in_read_once(c);
		if (n > 0) {
			pace_moved(pc, (size_t)n);
			return 0;
		}
		if (n == 0)
			return -EPIPE;
		if (n != -EAGAIN)
			return (int)n;
		if (c->in_w >= c->in_lim)
			return err_set(-ENOBUFS, "channel: input buffer full");
		if ((rc = io_wait(c->fd, POLLIN, pace_deadline(c, pc), &rev, "channel")) < 0)
			return rc;
	}
}

/* Next record at level prot, opened in place. */
static int next_record(struct channel *c, enum protection prot, uint8_t **p, size_t *len)
{
	struct pace pc = { 0 };   /* one deadline for the whole record */
	size_t used = 0;
	int rc;

	if (c->error)
		return err_set(c->error, "channel: unusable after an earlier error");
	c->live = 0;
	c->in_lim = CHAN_INBUF;   /* the last record handed out is released */
	for (;;) {
		rc = rec_open(&c->rx, prot, c->in + c->in_r, c->in_w - c->in_r, &used, p, len);
		if (rc < 0) {
			c->error = rc;
			return rc;
		}
		if (rc == 1)
			break;
		/* Compact only when a record is incomplete: then less than one
		 * record is unread, so the move is short. Compacting while whole
		 * records wait moved every byte once more (measured: 100% of a
		 * 64 MiB push went through memmove). */
		in_compact(c, 0);
		rc = in_fill(c, &pc);
		if (rc == -EPIPE) {
			if (c->in_r == c->in_w)
				return err_set(-EPIPE, "channel: connection closed by the peer");
			c->error = -EPROTO;
			return err_set(-EPROTO, "channel: connection closed in the middle of a record");
		}
		if (rc < 0)
			return rc;
	}
	c->live_lo = c->in_r;
	c->in_r += used;
	c->live = 1;
	c->st.records_in++;
	if ((rc = count_msg(c, &c->rx)) < 0)
		c->error = rc;
	return rc;
}

int chan_send(struct channel *c, const void *msg, size_t len)
{
	uint8_t *p;
	int rc;

	if (len > CHAN_MAX_CTRL)
		return err_set(-EMSGSIZE, "channel: message of %zu bytes is too large", len);
	if (c->batch_open && c->batch_len + 2 + len > CHAN_BATCH && (rc = chan_batch_seal(c)) < 0)
		return rc;
	if (!c->batch_open) {
		if ((rc = out_reserve(c)) < 0)
			return rc;
		c->batch_open = 1;
		c->batch_at = c->out_len;
		c->batch_len = 0;
	}
	p = c->out + c->batch_at + 2 + c->batch_len;   /* +2: the record's length */
	p[0] = (uint8_t)(len >> 8);
	p[1] = (uint8_t)len;
	memcpy(p + 2, msg, len);
	c->batch_len += 2 + len;
	return 0;
}

/* The next message of the live control record. */
static int sub_next(struct channel *c, const uint8_t **msg, size_t *len)
{
	int rc = rec_next_msg(&c->sub, &c->sub_left, msg, len);

	if (rc < 0) {
		c->error = rc;
		c->sub_left = 0;
	}
	return rc;
}

int chan_recv(struct channel *c, const uint8_t **msg, size_t *len)
{
	uint8_t *p;
	size_t n;
	int rc;

	if (c->error)
		return err_set(c->error, "channel: unusable after an earlier error");
	if (c->sub_left)
		return sub_next(c, msg, len);
	if ((rc = next_record(c, PROT_ENCRYPT, &p, &n)) < 0)
		return rc;
	c->sub = p;
	c->sub_left = n;
	return sub_next(c, msg, len);
}

uint8_t *chan_data_buf(struct channel *c, size_t *cap)
{
	if (chan_batch_seal(c) < 0 || out_reserve(c) < 0)
		return NULL;
	*cap = CHAN_MAX_PLAIN;
	/* Raw data has no length prefix; records leave 2 bytes for it. */
	return c->out + c->out_len + (c->prot == PROT_NONE ? 0 : 2);
}

int chan_data_commit(struct channel *c, size_t n)
{
	size_t reclen;
	int rc;

	if (n > CHAN_MAX_PLAIN || CHAN_OUTBUF - c->out_len < CHAN_REC_MAX || c->batch_open)
		return err_set(-EINVAL, "channel: chan_data_commit without a matching chan_data_buf");
	if (n == 0)
		return 0;
	if (c->prot == PROT_NONE) {
		c->out_len += n;
		return 0;
	}
	if ((rc = rec_seal(&c->tx, c->prot, c->out + c->out_len, n, &reclen)) < 0)
		return rc;
	c->out_len += reclen;
	c->st.records_out++;
	return count_msg(c, &c->tx);
}

int chan_data_send(struct channel *c, const void *p, size_t len)
{
	const uint8_t *src = p;
	size_t cap, n;
	uint8_t *dst;
	int rc;

	while (len) {
		if (!(dst = chan_data_buf(c, &cap)))
			return -EIO;
		n = len < cap ? len : cap;
		memcpy(dst, src, n);
		if ((rc = chan_data_commit(c, n)) < 0)
			return rc;
		src += n;
		len -= n;
	}
	return 0;
}

int chan_data_recv(struct channel *c, size_t max, const uint8_t **p, size_t *n)
{
	uint8_t *rec;
	int rc;

	if (max == 0)
		return err_set(-EINVAL, "channel: chan_data_recv of 0 bytes");
	if (c->sub_left) {
		c->error = -EPROTO;
		return err_set(-EPROTO, "channel: file data expected where control messages came");
	}
	if (c->prot != PROT_NONE) {
		if ((rc = next_record(c, c->prot, &rec, n)) < 0)
			return rc;
		if (*n == 0 || *n > max) {
			c->error = -EPROTO;
			return err_set(-EPROTO, "channel: data record of %zu bytes where %zu were expected",
				       *n, max);
		}
		*p = rec;
		return 0;
	}
	if (c->error)
		return err_set(c->error, "channel: unusable after an earlier error");
	c->live = 0;
	c->in_lim = CHAN_INBUF;
	/* Raw data has no records: a unit of up to PACE_UNIT bytes (what the
	 * peer announced is sure to come) takes the place of one, so a peer
	 * cannot hold the session by sending the data a byte at a time. */
	size_t unit = max < PACE_UNIT ? max : PACE_UNIT;
	struct pace pc = { 0 };
	while (c->in_w - c->in_r < unit) {
		in_compact(c, 0);   /* nothing live: rewinds, or moves less than a unit */
		rc = in_fill(c, &pc);
		if (rc == -EPIPE && c->in_w > c->in_r)
			break;   /* hand over what came; the next call reports the EOF */
		if (rc == -EPIPE)
			return err_set(-EPROTO, "channel: connection closed in the middle of file data");
		if (rc < 0)
			return rc;
	}
	*n = c->in_w - c->in_r < max ? c->in_w - c->in_r : max;
	*p = c->in + c->in_r;
	c->live_lo = c->in_r;
	c->in_r += *n;
	c->live = 1;
	return 0;
}

/* sendfile(2) straight from the page cache to the socket, with the socket
 * non-blocking for the duration so a full socket buffer never blocks us
 * while the peer waits for us to read. */
static int send_raw_file(struct channel *c, int fd, off_t *off, size_t len)
{
	int flags = fcntl(c->fd, F_GETFL), rc = 0;
	struct pace pc = { 0 };
	short rev;

	if (flags < 0)
		return err_sys(-errno, "channel: fcntl");
	if (!(flags & O_NONBLOCK) && fcntl(c->fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return err_sys(-errno, "channel: fcntl");
	while (len) {
		ssize_t n = sendfile(c->fd, fd, off, len);
		if (n > 0) {
			len -= (size_t)n;
			c->st.bytes_out += (uint64_t)n;
			pace_moved(&pc, (size_t)n);
			continue;
		}
		if (n == 0) {
			rc = err_set(-EIO, "channel: file ended %zu bytes early", len);
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			rc = err_sys(-errno, "channel: sendfile failed");
			break;
		}
		in_compact(c, 1);
		short ev = POLLOUT | ((!c->eof && c->in_w < c->in_lim) ? POLLIN : 0);
		if ((rc = io_wait(c->fd, ev, pace_deadline(c, &pc), &rev, "channel")) < 0)
			break;
		if ((ev & POLLIN) && (rev & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t got = in_read_once(c);
			if (got < 0 && got != -EAGAIN) {
				rc = (int)got;
				break;
			}
			if (got > 0)
				pace_moved(&pc, (size_t)got);
		}
	}
	if (!(flags & O_NONBLOCK))
		fcntl(c->fd, F_SETFL, flags);
	return rc;
}

int chan_data_sendfile(struct channel *c, int fd, off_t *off, size_t len)
{
	size_t cap, want;
	uint8_t *dst;
	ssize_t n;
	int rc;

	if (c->prot == PROT_NONE) {
		if ((rc = chan_flush(c)) < 0)
			return rc;
		return send_raw_file(c, fd, off, len);
	}
	while (len) {
		if (!(dst = chan_data_buf(c, &cap)))
			return -EIO;
		want = len < cap ? len : cap;
		n = pread(fd, dst, want, *off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_sys(-errno, "channel: read of the file failed");
		if (n == 0)
			return err_set(-EIO, "channel: file ended %zu bytes early", len);
		if ((rc = chan_data_commit(c, (size_t)n)) < 0)
			return rc;
		*off += n;
		len -= (size_t)n;
	}
	return 0;
}

int chan_readable(struct channel *c)
{
	size_t avail = c->in_w - c->in_r;

	if (c->sub_left && !c->error)
		return 1;
	/* Try once to pull in what the socket holds, without waiting. */
	if (!c->eof && !c->error && (avail < 2 || avail < rec_size(c->prot, c->in + c->in_r))) {
		in_compact(c, 0);
		in_read_once(c);
		avail = c->in_w - c->in_r;
	}
	if (c->error)
		return 0;
	if (c->prot == PROT_NONE && avail > 0)
		return 1;
	/* rec_size at the data level counts the integrity tag too, so this
	 * never claims a record that is not all there. */
	return avail >= 2 && avail >= rec_size(c->prot == PROT_INTEGRITY ? PROT_INTEGRITY : PROT_ENCRYPT,
						 c->in + c->in_r);
}

/* Moves raw file data from the socket into fd without passing it through
 * user space: what is already buffered is written first, then splice(2)
 * socket -> pipe -> file. For PROT_NONE without verification only. */
static int splice_pipe(struct channel *c)
{
	if (c->pipe[0] >= 0)
		return 0;
	if (pipe2(c->pipe, O_CLOEXEC) < 0)
		return err_sys(-errno, "channel: pipe");
	fcntl(c->pipe[1], F_SETPIPE_SZ, 1 << 20);   /* fewer, larger moves; best effort */
	return 0;
}

/* What one chan_data_splice call waits for: up to PACE_UNIT bytes, but no
 * more than the pipe holds (a pipe can be as small as one page when the
 * user's pipe quota is used up: waiting to fill more would never end). */
static size_t splice_unit(const struct channel *c, size_t want)
{
	int cap = fcntl(c->pipe[1], F_GETPIPE_SZ);
	size_t unit = want < PACE_UNIT ? want : PACE_UNIT;

	if (cap > 0 && (size_t)cap < unit)
		unit = (size_t)cap;
	return unit ? unit : 1;
}

int chan_data_splice(struct channel *c, int fd, size_t max, size_t *moved)
{
	struct pace pc = { 0 };
	short rev;
	int rc;

	*moved = 0;
	if (c->prot != PROT_NONE || max == 0)
		return err_set(-EINVAL, "channel: splice is for unframed data only");
	if (c->error)
		return err_set(c->error, "channel: unusable after an earlier error");
	if (c->sub_left) {
		c->error = -EPROTO;
		return err_set(-EPROTO, "channel: file data expected where control messages came");
	}
	c->live = 0;
	c->in_lim = CHAN_INBUF;
	if (c->in_r < c->in_w) {
		size_t n = c->in_w - c->in_r < max ? c->in_w - c->in_r : max;
		if ((rc = io_write_all(fd, c->in + c->in_r, n, 0, "channel")) < 0)
			return rc;
		c->in_r += n;
		*moved = n;
		return 0;
	}
	if ((rc = splice_pipe(c)) < 0)
		return rc;
	size_t want = max < (1u << 20) ? max : (1u << 20);
	size_t unit = splice_unit(c, want), got = 0;
	ssize_t n;
	/* As chan_data_recv: a unit, not a byte, must arrive within the timeout. */
	while (got < unit) {
		n = splice(c->fd, NULL, c->pipe[1], NULL, want - got, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (n > 0) {
			got += (size_t)n;
			pace_moved(&pc, (size_t)n);
			continue;
		}
		if (n == 0) {
			c->eof = 1;
			if (got)
				break;   /* write out what came; the next call reports the EOF */
			return err_set(-EPROTO, "channel: connection closed in the middle of file data");
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN) {
			rc = err_sys(-errno, "channel: splice from the socket");
			if (got)
				c->error = -EIO;
			return rc;
		}
		if ((rc = io_wait(c->fd, POLLIN, pace_deadline(c, &pc), &rev, "channel")) < 0) {
			if (got)
				c->error = -EIO;   /* stream bytes stranded in the pipe */
			return rc;
		}
	}
	n = (ssize_t)got;
	c->st.bytes_in += (uint64_t)n;
	for (ssize_t left = n; left > 0;) {
		ssize_t w = splice(c->pipe[0], NULL, fd, NULL, (size_t)left, SPLICE_F_MOVE);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			/* The pipe now holds stream bytes we cannot put back. */
			c->error = -EIO;
			return err_sys(w < 0 ? -errno : -EIO, "channel: splice into the file");
		}
		left -= w;
	}
	*moved = (size_t)n;
	return 0;
}
