/* SPDX-License-Identifier: MIT */
#include "session/benchsrv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "fs/meta.h"
#include "util/err.h"
#include "util/log.h"
#include "util/tcpinfo.h"

/* DATA pieces of a step: a download that must stop at its time limit stops
 * between two of them. */
#define PIECE (1u << 20)

struct mark {              /* where a step began */
	uint64_t ns, user_us, sys_us, wait_us;
	struct tcpinfo tcp;
};

struct state {
	const struct benchsrv *b;
	int schedstat;          /* /proc/self/schedstat, opened before the sandbox; -1: none */
	uint64_t began;         /* the session's first step */
	uint64_t written;       /* bytes the steps wrote to the module */
	char tmp[256];          /* the E2E file in the module; "" when none */
	uint64_t tmp_size;
	struct msg m;
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static uint64_t tv_us(struct timeval t)
{
	return (uint64_t)t.tv_sec * 1000000u + (uint64_t)t.tv_usec;
}

/* Time spent runnable but not running (ns in the file): a CPU quota's
 * throttling or other tasks. What CPU time alone cannot show: a box held
 * to 10 % of a core is CPU-bound at 10 %. */
static uint64_t run_delay_us(int fd)
{
	char buf[96];
	unsigned long long run, wait;
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof buf - 1, 0) : -1;

	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return sscanf(buf, "%llu %llu", &run, &wait) == 2 ? wait / 1000 : 0;
}

static void mark(const struct state *s, struct mark *k)
{
	struct rusage u;

	getrusage(RUSAGE_SELF, &u);
	k->user_us = tv_us(u.ru_utime);
	k->sys_us = tv_us(u.ru_stime);
	k->wait_us = run_delay_us(s->schedstat);
	tcpinfo_get(chan_fd(s->b->c->ch), &k->tcp);
	k->ns = now_ns();
}

/* BENCH_DONE for the step begun at k (status BENCH_OK) or a refusal. */
static int done(struct state *s, uint8_t step, uint8_t status, uint64_t bytes,
		const struct mark *k, const char *note)
{
	struct msg m = { .type = MSG_BENCH_DONE };
	struct m_bench_done *d = &m.u.bench_done;
	struct mark e;

	mark(s, &e);
	*d = (struct m_bench_done){ .step = step, .status = status, .bytes = bytes };
	if (k) {
		d->ns = e.ns - k->ns;
		d->user_us = e.user_us - k->user_us;
		d->sys_us = e.sys_us - k->sys_us;
		d->wait_us = e.wait_us - k->wait_us;
		d->tcp_busy_us = e.tcp.busy_us - k->tcp.busy_us;
		d->tcp_rwnd_us = e.tcp.rwnd_limited_us - k->tcp.rwnd_limited_us;
		d->tcp_sndbuf_us = e.tcp.sndbuf_limited_us - k->tcp.sndbuf_limited_us;
		d->tcp_sent = e.tcp.bytes_sent - k->tcp.bytes_sent;
		d->tcp_retrans = e.tcp.bytes_retrans - k->tcp.bytes_retrans;
	}
	d->rcvbuf = e.tcp.rcvbuf;
	d->sndbuf = e.tcp.sndbuf;
	snprintf(d->note, sizeof d->note, "%s", note ? note : "");
	int rc = conn_send(s->b->c, &m);
	return rc < 0 ? rc : conn_flush(s->b->c);
}

/* A network step's time (a test build takes a shorter one, to test it). */
static double net_max_seconds(void)
{
#ifdef FERRY_TEST_HOOKS
	const char *e = getenv("FERRY_TEST_BENCH_NET_S");
	if (e && atof(e) > 0)
		return atof(e);
#endif
	return BENCHSRV_MAX_SECONDS;
}

/* n bytes of DATA from the client, into fd (or nowhere: fd < 0), by the
 * deadline (0: none); past it the step ends the session. */
static int take_data(struct state *s, uint64_t n, int fd, uint64_t deadline, const char **why)
{
	struct conn *c = s->b->c;
	int rc;

	while (n) {
		if ((rc = conn_recv(c, &s->m)) < 0)
			return rc;
		if (s->m.type != MSG_DATA || s->m.u.len.len > n)
			return err_set(-EBADMSG, "protocol: bench: expected %llu bytes of DATA, got %s",
				       (unsigned long long)n, msg_type_name(s->m.type));
		for (uint64_t left = s->m.u.len.len; left;) {
			const uint8_t *p;
			size_t k;
			/* checked per record: a slow client cannot stretch one DATA */
			if (deadline && now_ns() > deadline)
				return err_set(-ETIMEDOUT, "bench: an upload step still had %llu bytes "
					       "to come after %g s", (unsigned long long)n, net_max_seconds());
			if ((rc = chan_data_recv(c->ch, left < PIECE ? (size_t)left : PIECE, &p, &k)) < 0)
				return rc;
			if (fd >= 0 && !*why && write(fd, p, k) != (ssize_t)k)
				*why = "cannot write the test file";
			left -= k;
			n -= k;
		}
	}
	return 0;
}

/* Up to n bytes of DATA, from fd (or memory: fd < 0), until the deadline. */
static int give_data(struct state *s, uint64_t n, int fd, uint64_t deadline, uint64_t *sent)
{
	struct conn *c = s->b->c;
	int rc = 0;

	*sent = 0;
	while (rc == 0 && *sent < n && now_ns() < deadline) {
		uint64_t len = n - *sent < PIECE ? n - *sent : PIECE;
		if ((rc = conn_send_len(c, MSG_DATA, len)) < 0)
			break;
		for (uint64_t left = len; rc == 0 && left;) {
			size_t cap;
			uint8_t *buf = chan_data_buf(c->ch, &cap);
			if (!buf)
				return err_set(-EPIPE, "connection lost while sending bench data");
			size_t k = left < cap ? (size_t)left : cap;
			/* the file's bytes, or whatever this connection sent before */
			if (fd >= 0 && pread(fd, buf, k, (off_t)*sent) != (ssize_t)k)
				memset(buf, 0, k);
			rc = chan_data_commit(c->ch, k);
			left -= k;
			*sent += k;
		}
	}
	return rc < 0 ? rc : conn_flush(c);
}

static int too_big(uint64_t n, uint64_t max, const char *what)
{
	return err_set(-EBADMSG, "bench: %s of %llu bytes asked, this server allows %llu", what,
		       (unsigned long long)n, (unsigned long long)max);
}

static void drop_tmp(struct state *s)
{
	if (s->tmp[0] && unlinkat(s->b->root_fd, s->tmp, 0) < 0 && errno != ENOENT)
		log_warn("bench: cannot remove %s: %s", s->tmp, strerror(errno));
	s->tmp[0] = '\0';
}

static int step_net(struct state *s, const struct m_bench *q)
{
	struct mark k;
	uint64_t sent = 0;
	const char *why = NULL;
	int rc;

	if (q->bytes > BENCHSRV_MAX_NET)
		return too_big(q->bytes, BENCHSRV_MAX_NET, "a network step");
	mark(s, &k);
	uint64_t deadline = k.ns + (uint64_t)(net_max_seconds() * 1e9);
	if (q->step == BSTEP_NET_UP)
		rc = take_data(s, q->bytes, -1, deadline, &why);
	else
		rc = give_data(s, q->bytes, -1, deadline, &sent);
	if (rc < 0)
		return rc;
	return done(s, q->step, BENCH_OK, q->step == BSTEP_NET_UP ? q->bytes : sent, &k, NULL);
}

/* One disk stage as BENCH_STAGE. */
static int send_stage(struct state *s, const struct bench_stage *g)
{
	struct msg m = { .type = MSG_BENCH_STAGE };
	struct m_bench_stage *t = &m.u.bench_stage;

	*t = (struct m_bench_stage){
		.unit = (uint8_t)g->unit, .verdict = (uint8_t)g->verdict, .cliff = !!g->cliff.found,
		.rate_m = (uint64_t)(g->rate * 1000.0), .seconds_us = (uint64_t)(g->seconds * 1e6),
		.bytes = g->bytes, .ops = g->ops, .dev_bytes = g->dev_bytes,
		.burst_m = (uint64_t)(g->cliff.burst * 1000.0),
		.sustained_m = (uint64_t)(g->cliff.sustained * 1000.0), .cliff_bytes = g->cliff.bytes,
	};
	snprintf(t->name, sizeof t->name, "%s", g->name);
	snprintf(t->label, sizeof t->label, "%s", g->label);
	snprintf(t->method, sizeof t->method, "%.39s", g->method);
	snprintf(t->note, sizeof t->note, "%s", g->note);
	return conn_send(s->b->c, &m);
}

/* The disk stages of `ferry bench disk`, run by the same code in the module. */
static int step_disk(struct state *s, const struct m_bench *q)
{
	struct bench_opts o = { .size = q->bytes, .seconds = BENCHSRV_MAX_SECONDS };
	char note[BENCH_MAX_NOTE + 1];
	struct mark k;
	int rc;

	if (q->bytes > BENCHSRV_MAX_FILE) {
		snprintf(note, sizeof note, "this server measures at most %llu MiB (%llu MiB asked)",
			 (unsigned long long)(BENCHSRV_MAX_FILE >> 20),
			 (unsigned long long)(q->bytes >> 20));
		return done(s, q->step, BENCH_REFUSED, 0, NULL, note);
	}
	struct bench_report *r = calloc(1, sizeof *r);
	if (!r)
		return err_set(-ENOMEM, "out of memory");
	mark(s, &k);
	/* a read-only module: the read test alone, of a file already there */
	rc = s->b->writable ? bench_disk_run_at(s->b->root_fd, s->b->module, &o, r)
			    : bench_disk_read_existing_at(s->b->root_fd, s->b->module, &o, r);
	if (rc < 0) {
		snprintf(note, sizeof note, "%s", err_msg());
		free(r);
		return done(s, q->step, BENCH_REFUSED, 0, NULL, note);
	}
	for (uint32_t i = 0; rc == 0 && i < r->nstages; i++)
		rc = send_stage(s, &r->stages[i]);
	const struct bench_target *t = &r->target;
	/* "ext4 on sda1, SanDisk Ultra Fit, USB 480 Mb/s": at most 31 + 4 + 31 +
	 * 2 + 95 + 2 + 47 bytes, which fit */
	size_t at = (size_t)snprintf(note, sizeof note, "%.31s%s%.31s", t->fstype,
				     t->device[0] ? " on " : "", t->device);
	if (t->model[0])
		at += (size_t)snprintf(note + at, sizeof note - at, ", %.95s", t->model);
	if (t->usb[0])
		snprintf(note + at, sizeof note - at, ", %.47s", t->usb);
	if (t->memory)
		snprintf(note, sizeof note, "%.31s (memory)", t->fstype);
	free(r);
	return rc < 0 ? rc : done(s, q->step, BENCH_OK, o.size, &k, note);
}

/* Upload into a file in the module (synced, as a transfer with --fsync),
 * or that file back with the page cache dropped first. */
static int step_e2e(struct state *s, const struct m_bench *q)
{
	const char *why = NULL;
	struct mark k;
	uint64_t sent = 0;
	int fd, rc;

	if (q->bytes > BENCHSRV_MAX_FILE)
		return too_big(q->bytes, BENCHSRV_MAX_FILE, "a file step");
	if (q->step == BSTEP_E2E_DOWN) {
		if (!s->tmp[0] || (fd = openat(s->b->root_fd, s->tmp, O_RDONLY | O_CLOEXEC)) < 0)
			return done(s, q->step, BENCH_REFUSED, 0, NULL, "no file uploaded to read back");
		posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
		mark(s, &k);
		rc = give_data(s, q->bytes < s->tmp_size ? q->bytes : s->tmp_size, fd,
			       k.ns + (uint64_t)(BENCHSRV_MAX_SECONDS * 1e9), &sent);
		close(fd);
		drop_tmp(s);
		return rc < 0 ? rc : done(s, q->step, BENCH_OK, sent, &k, NULL);
	}
	if (!s->b->writable)
		return err_set(-EBADMSG, "bench: an upload to a read-only module");
	drop_tmp(s);
	fd = -1;
	if (fs_tmp_name(s->tmp, "bench") == 0)
		fd = openat(s->b->root_fd, s->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		why = "cannot create the test file";
		s->tmp[0] = '\0';
	}
	mark(s, &k);
	rc = take_data(s, q->bytes, fd, 0, &why);
	if (fd >= 0 && !why && fdatasync(fd) < 0)
		why = "fdatasync failed";
	if (fd >= 0)
		close(fd);
	s->tmp_size = q->bytes;
	if (rc < 0)
		return rc;
	return done(s, q->step, why ? BENCH_REFUSED : BENCH_OK, q->bytes, &k, why);
}

/* One session may write at most BENCHSRV_MAX_WRITTEN to the module and
 * run steps for BENCHSRV_MAX_SESSION_S: past that each step is refused. */
static const char *over_budget(struct state *s, const struct m_bench *q)
{
	uint64_t t = now_ns();

	if (!s->began)
		s->began = t;
	if ((double)(t - s->began) / 1e9 > BENCHSRV_MAX_SESSION_S)
		return "this session's time for bench steps is spent";
	/* what the step may write at most: the disk stages twice their size,
	 * where 0 asks for the default size (up to BENCH_DEFAULT_SIZE) */
	_Static_assert(BENCH_DEFAULT_SIZE <= BENCHSRV_MAX_FILE, "a default disk step fits a step");
	uint64_t n = q->bytes && q->bytes < BENCHSRV_MAX_FILE ? q->bytes : BENCHSRV_MAX_FILE;
	uint64_t w = q->step == BSTEP_DISK ? 2 * n : q->step == BSTEP_E2E_UP ? n : 0;
	if (s->written + w > BENCHSRV_MAX_WRITTEN)
		return "this session's bytes to write are spent";
	s->written += w;
	return NULL;
}

static int step(struct state *s, const struct m_bench *q)
{
	struct mark k;
	const char *no = over_budget(s, q);

	/* an upload's data comes anyway: it is read, not written */
	if (no && (q->step == BSTEP_NET_UP || q->step == BSTEP_E2E_UP))
		return err_set(-EBADMSG, "bench: %s", no);
	if (no)
		return done(s, q->step, BENCH_REFUSED, 0, NULL, no);

	switch (q->step) {
	case BSTEP_PING: {   /* with what the box is, for the report's header */
		struct bench_env e;
		char note[BENCH_MAX_NOTE + 1];
		mark(s, &k);
		bench_env_collect(&e, 0, NULL);
		int n = snprintf(note, sizeof note, "ferry %.23s | %.60s | %.50s (%d CPU%s)",
				 e.version, e.kernel, e.cpu, e.cpus, e.cpus == 1 ? "" : "s");
		if (e.link[0] && n > 0 && (size_t)n < sizeof note)
			snprintf(note + n, sizeof note - (size_t)n, " | %s", e.link);
		return done(s, q->step, BENCH_OK, 0, &k, note);
	}
	case BSTEP_NET_UP:
	case BSTEP_NET_DOWN:
		return step_net(s, q);
	case BSTEP_DISK:
		return step_disk(s, q);
	default:
		return step_e2e(s, q);
	}
}

int benchsrv_run(const struct benchsrv *b)
{
	struct state *s = calloc(1, sizeof *s);
	int rc = 0;

	if (!s)
		return err_set(-ENOMEM, "out of memory");
	s->b = b;
	s->schedstat = b->schedstat;
	while (rc == 0) {
		if ((rc = conn_recv(b->c, &s->m)) < 0)
			break;
		if (s->m.type != MSG_BENCH) {
			rc = err_set(-EBADMSG, "protocol: bench: unexpected %s",
				     msg_type_name(s->m.type));
			break;
		}
		struct m_bench q = s->m.u.bench;
		rc = step(s, &q);
	}
	drop_tmp(s);
	free(s);
	return rc == -EPIPE ? 0 : rc;   /* the client closing is the end */
}
