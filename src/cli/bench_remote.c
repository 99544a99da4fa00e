/* SPDX-License-Identifier: MIT */
#include "cli/bench_remote.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "session/benchsrv.h"
#include "util/err.h"
#include "util/tcpinfo.h"

#define PIECE (1u << 20)
#define PINGS 5
#define PROBE (4ull << 20)
#define NET_MIN (4ull << 20)
#define NET_RESIZES 3   /* times a network step is measured again when too short */
#define NET_GROW 8      /* by at most this factor each time */

static const char *const level_names[] = { "none", "integrity", "encrypt" };

struct run {
	const struct remote *rm;
	const struct bench_remote_opts *o;
	struct bench_report *r;
	struct conn c;
	struct msg m;
	char file[4200], back[4200];   /* this side's test files; "" when none */
};

struct clock {                     /* this side, where a step began */
	double wall, cpu;
	struct tcpinfo tcp;
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double cpu_now(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return (double)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
	       (double)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

static void start(struct run *x, struct clock *k)
{
	tcpinfo_get(chan_fd(x->c.ch), &k->tcp);
	k->cpu = cpu_now();
	k->wall = now();
}

static void say(const struct run *x, const char *what)
{
	if (x->o->progress)
		fprintf(stderr, "\r\033[K%s ...", what);
}

static int open_level(struct run *x, int level)
{
	struct client_opts co = x->o->co;
	struct m_request rq = { .op = OP_BENCH, .protection = (uint8_t)level };
	struct m_accept acc;

	co.protection = level;
	snprintf(rq.module, sizeof rq.module, "%s", x->rm->module);
	memset(&x->c, 0, sizeof x->c);
	return client_open(x->rm, &co, &rq, &x->c, &acc);
}

static void close_conn(struct run *x)
{
	if (x->c.ch) {
		conn_flush(&x->c);
		chan_free(x->c.ch);
	}
	x->c.ch = NULL;
}

static int ask(struct run *x, uint8_t step, uint64_t bytes)
{
	struct msg m = { .type = MSG_BENCH };

	m.u.bench = (struct m_bench){ .step = step, .bytes = bytes };
	int rc = conn_send(&x->c, &m);
	return rc < 0 ? rc : conn_flush(&x->c);
}

/* A disk stage the server measured, into the report as server_NAME. */
static int add_server_stage(struct run *x, const struct m_bench_stage *t)
{
	char name[40], label[48];

	snprintf(name, sizeof name, "server_%.24s", t->name);
	snprintf(label, sizeof label, "server: %.31s", t->label);
	struct bench_stage *st = bench_stage_add(x->r, name, label, (enum bench_unit)t->unit);
	if (!st)
		return 0;
	st->verdict = (enum bench_verdict)t->verdict;
	st->rate = (double)t->rate_m / 1000.0;
	st->seconds = (double)t->seconds_us / 1e6;
	st->bytes = t->bytes;
	st->ops = t->ops;
	st->dev_bytes = t->dev_bytes;
	st->cliff.found = t->cliff;
	st->cliff.burst = (double)t->burst_m / 1000.0;
	st->cliff.sustained = (double)t->sustained_m / 1000.0;
	st->cliff.bytes = t->cliff_bytes;
	/* the server's strings go to a terminal and to JSON: quoted */
	char q[4 * sizeof t->note + 8];
	snprintf(st->method, sizeof st->method, "%s", peer_quote(q, sizeof q, t->method));
	snprintf(st->note, sizeof st->note, "%s", peer_quote(q, sizeof q, t->note));
	st->srv_cpu = st->cli_cpu = st->srv_sys_share = 0;
	st->rwnd_frac = st->sndbuf_frac = st->retrans_frac = -1;
	return 0;
}

/* Reads until the step's BENCH_DONE: its DATA into fd (or nowhere), the
 * disk stages into the report. got: the DATA bytes. */
static int until_done(struct run *x, uint8_t step, int fd, struct m_bench_done *d, uint64_t *got)
{
	int rc;

	*got = 0;
	for (;;) {
		if ((rc = conn_recv(&x->c, &x->m)) < 0)
			return rc;
		if (x->m.type == MSG_BENCH_DONE && x->m.u.bench_done.step == step) {
			*d = x->m.u.bench_done;
			return 0;
		}
		if (x->m.type == MSG_BENCH_STAGE && step == BSTEP_DISK) {
			add_server_stage(x, &x->m.u.bench_stage);
			continue;
		}
		if (x->m.type != MSG_DATA || (step != BSTEP_NET_DOWN && step != BSTEP_E2E_DOWN))
			return err_set(-EBADMSG, "protocol: bench: unexpected %s",
				       msg_type_name(x->m.type));
		for (uint64_t left = x->m.u.len.len; left;) {
			const uint8_t *p;
			size_t k;
			if ((rc = chan_data_recv(x->c.ch, left < PIECE ? (size_t)left : PIECE, &p, &k)) < 0)
				return rc;
			if (fd >= 0 && write(fd, p, k) != (ssize_t)k)
				return err_sys(-errno, "%s", x->back);
			left -= k;
			*got += k;
		}
	}
}

/* n bytes of DATA from fd (or memory). */
static int push_data(struct run *x, uint64_t n, int fd)
{
	int rc = 0;

	for (uint64_t off = 0; rc == 0 && off < n;) {
		uint64_t len = n - off < PIECE ? n - off : PIECE;
		if ((rc = conn_send_len(&x->c, MSG_DATA, len)) < 0)
			break;
		for (uint64_t left = len; rc == 0 && left;) {
			size_t cap;
			uint8_t *buf = chan_data_buf(x->c.ch, &cap);
			if (!buf)
				return err_set(-EPIPE, "connection lost");
			size_t k = left < cap ? (size_t)left : cap;
			if (fd >= 0 && pread(fd, buf, k, (off_t)off) != (ssize_t)k)
				return err_sys(-EIO, "%s: read", x->file);
			rc = chan_data_commit(x->c.ch, k);
			left -= k;
			off += k;
		}
		if (x->o->stop && *x->o->stop)
			return -EINTR;
	}
	return rc < 0 ? rc : conn_flush(&x->c);
}

/* An upload whose write failed. A server that ends the step sends its
 * reason, but a close with our data unread resets the connection, and the
 * reset can discard that reason before we read it: then say what the
 * likely cause is. */
static int upload_lost(struct run *x, int rc)
{
	if (rc != -EPIPE && rc != -ECONNRESET)
		return rc;
	int why = conn_recv(&x->c, &x->m);
	if (why == -ECONNABORTED)
		return why;
	return err_set(rc, "the connection was lost during an upload step (a server ends one "
		       "still running after %.0f s: was the link slower than its probe?)",
		       BENCHSRV_MAX_SECONDS);
}

/* One step that moves data: timed on this side (from asking to the
 * server's BENCH_DONE), with both ends' CPU and the sender's TCP_INFO. */
static int move(struct run *x, uint8_t step, uint64_t n, int fd, const char *name,
		const char *label)
{
	struct m_bench_done d;
	struct clock k;
	struct tcpinfo e;
	uint64_t got = 0;
	int up = step == BSTEP_NET_UP || step == BSTEP_E2E_UP, rc;

	say(x, label);
	start(x, &k);
	if ((rc = ask(x, step, n)) < 0)
		return rc;
	if (up && (rc = push_data(x, n, fd)) < 0)
		return upload_lost(x, rc);
	if ((rc = until_done(x, step, up ? -1 : fd, &d, &got)) < 0)
		return rc;
	double wall = now() - k.wall, cpu = cpu_now() - k.cpu;
	tcpinfo_get(chan_fd(x->c.ch), &e);
	if (d.status != BENCH_OK) {
		char q[4 * BENCH_MAX_NOTE + 8];
		return err_set(-EIO, "%s: the server says: %s", label,
			       peer_quote(q, sizeof q, d.note));
	}
	struct bench_stage *st = bench_stage_add(x->r, name, label, BENCH_MBPS);
	if (!st)
		return 0;
	uint64_t bytes = up ? n : got;
	double srv_s = d.ns ? (double)d.ns / 1e9 : wall;
	double srv_cpu_s = (double)(d.user_us + d.sys_us) / 1e6;
	uint64_t busy = up ? e.busy_us - k.tcp.busy_us : d.tcp_busy_us;
	uint64_t rwnd = up ? e.rwnd_limited_us - k.tcp.rwnd_limited_us : d.tcp_rwnd_us;
	uint64_t sndbuf = up ? e.sndbuf_limited_us - k.tcp.sndbuf_limited_us : d.tcp_sndbuf_us;
	uint64_t sent = up ? e.bytes_sent - k.tcp.bytes_sent : d.tcp_sent;
	uint64_t resent = up ? e.bytes_retrans - k.tcp.bytes_retrans : d.tcp_retrans;
	st->rate = wall > 0 ? (double)bytes / wall : 0;
	st->seconds = wall;
	st->bytes = bytes;
	st->verdict = BENCH_NETWORK;
	st->srv_cpu = (float)(srv_cpu_s / srv_s);
	st->srv_wait = (float)((double)d.wait_us / 1e6 / srv_s);
	st->cli_cpu = (float)(cpu / wall);
	st->srv_sys_share = srv_cpu_s > 0 ? (float)((double)d.sys_us / 1e6 / srv_cpu_s) : 0;
	st->rcv_buf = up ? d.rcvbuf : e.rcvbuf;
	st->snd_buf = up ? e.sndbuf : d.sndbuf;
	st->rwnd_frac = busy ? (float)((double)rwnd / (double)busy) : -1;
	st->sndbuf_frac = busy ? (float)((double)sndbuf / (double)busy) : -1;
	st->retrans_frac = sent ? (float)((double)resent / (double)sent) : -1;
	snprintf(st->method, sizeof st->method, "server CPU %.0f %% (+%.0f %% waiting), client %.0f %%",
		 100 * st->srv_cpu, 100 * st->srv_wait, 100 * st->cli_cpu);
	if (busy && st->rwnd_frac + st->sndbuf_frac >= 0.05)
		snprintf(st->note, sizeof st->note, "sender limited by window %.0f %%, buffer %.0f %%",
			 100 * st->rwnd_frac, 100 * st->sndbuf_frac);
	if (st->retrans_frac >= 0.001) {
		size_t at = strlen(st->note);
		snprintf(st->note + at, sizeof st->note - at, "%s%.1f %% sent again (lost)",
			 at ? "; " : "", 100 * st->retrans_frac);
	}
	return 0;
}

static int pings(struct run *x)
{
	double t[PINGS];
	struct m_bench_done d;
	uint64_t got;
	int rc;

	say(x, "round trip");
	for (int i = 0; i < PINGS; i++) {
		double t0 = now();
		if ((rc = ask(x, BSTEP_PING, 0)) < 0 || (rc = until_done(x, BSTEP_PING, -1, &d, &got)) < 0)
			return rc;
		t[i] = now() - t0;
	}
	char q[4 * BENCH_MAX_NOTE + 8];
	snprintf(x->r->remote.server_env, sizeof x->r->remote.server_env, "%s",
		 peer_quote(q, sizeof q, d.note));
	for (int i = 1; i < PINGS; i++)   /* insertion sort: the median */
		for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
			double v = t[j];
			t[j] = t[j - 1];
			t[j - 1] = v;
		}
	x->r->remote.rtt_ms = t[PINGS / 2] * 1e3;
	return 0;
}

/* How long a network step should last: o->seconds, but well inside the
 * time the server gives an upload (past it the server ends the session). */
static double net_seconds(const struct run *x)
{
	return x->o->seconds < BENCHSRV_MAX_SECONDS / 2 ? x->o->seconds : BENCHSRV_MAX_SECONDS / 2;
}

/* Bytes for a network step to last about net_seconds at rate. */
static uint64_t net_bytes(const struct run *x, double rate)
{
	double want = rate * net_seconds(x);
	return want > (double)BENCHSRV_MAX_NET ? BENCHSRV_MAX_NET :
	       want < (double)NET_MIN ? NET_MIN : (uint64_t)want;
}

/* One memory-to-memory step of about net_seconds. A step that ends in under
 * half of it was sized from a rate the link did not keep (a probe slowed by
 * its start, or a CPU quota whose unspent slice let a short step through at
 * full speed): it is measured again, sized from its own rate but at most
 * NET_GROW times larger, since a short step's rate may be such a burst (one
 * sized from it in full ran 8 s for 0.5 s asked, and could outlast the
 * server's time for an upload). */
static int net_step(struct run *x, uint8_t step, uint64_t *n, const char *name, const char *label)
{
	for (int again = 0;; again++) {
		uint32_t before = x->r->nstages;
		int rc = move(x, step, *n, -1, name, label);
		if (rc < 0 || x->r->nstages == before)
			return rc;
		const struct bench_stage *st = &x->r->stages[x->r->nstages - 1];
		uint64_t bigger = net_bytes(x, st->rate);
		if (bigger / NET_GROW > *n)
			bigger = *n * NET_GROW;
		if (again == NET_RESIZES || st->seconds >= net_seconds(x) / 2 || bigger <= *n)
			return 0;
		x->r->nstages--;
		*n = bigger;
	}
}

/* Upload and download from memory at one level, sized from a probe to take
 * about net_seconds each (the download as long as the upload's last step). */
static int network(struct run *x, int level)
{
	char name[40], label[48];
	int rc;

	if (!x->r->remote.rtt_ms && (rc = pings(x)) < 0)
		return rc;
	double t0 = now();
	if ((rc = ask(x, BSTEP_NET_UP, PROBE)) < 0 || (rc = push_data(x, PROBE, -1)) < 0) {
		return rc;
	}
	struct m_bench_done d;
	uint64_t got;
	if ((rc = until_done(x, BSTEP_NET_UP, -1, &d, &got)) < 0)
		return rc;
	uint64_t n = net_bytes(x, (double)PROBE / (now() - t0 + 1e-9));
	snprintf(name, sizeof name, "net_up_%s", level_names[level]);
	snprintf(label, sizeof label, "upload, %s (memory)", level_names[level]);
	if ((rc = net_step(x, BSTEP_NET_UP, &n, name, label)) < 0)
		return rc;
	snprintf(name, sizeof name, "net_down_%s", level_names[level]);
	snprintf(label, sizeof label, "download, %s (memory)", level_names[level]);
	return net_step(x, BSTEP_NET_DOWN, &n, name, label);
}

static void local_stage(struct bench_report *r, const char *name, const char *label,
			const char *method, uint64_t bytes, double secs)
{
	struct bench_stage *st = bench_stage_add(r, name, label, BENCH_MBPS);

	if (!st)
		return;
	st->rate = (double)bytes / secs;
	st->seconds = secs;
	st->bytes = bytes;
	st->verdict = BENCH_UNVERIFIED;
	st->rwnd_frac = st->sndbuf_frac = st->retrans_frac = -1;
	snprintf(st->method, sizeof st->method, "%s", method);
}

/* This side's test file: `size` bytes written and synced (client_write),
 * then read with the page cache dropped (client_read). */
static int local_disk(struct run *x)
{
	static uint8_t buf[PIECE];
	uint64_t size = x->o->size;
	int fd;

	say(x, "this machine's disk");
	snprintf(x->file, sizeof x->file, "%s/.ferry-bench-XXXXXX", x->o->local);
	if ((fd = mkstemp(x->file)) < 0) {
		int e = errno;
		snprintf(x->back, sizeof x->back, "%s", x->file);
		x->file[0] = '\0';
		return err_sys(-e, "%s: cannot create a test file", x->back);
	}
	if (getrandom(buf, sizeof buf, 0) < 0)
		memset(buf, 0x5a, sizeof buf);
	double t0 = now();
	for (uint64_t off = 0; off < size; off += PIECE) {
		size_t k = size - off < PIECE ? (size_t)(size - off) : PIECE;
		buf[0] = (uint8_t)(off >> 20);   /* no two pieces alike */
		if (write(fd, buf, k) != (ssize_t)k)
			return close(fd), err_sys(-errno, "%s: write", x->file);
	}
	if (fdatasync(fd) < 0)
		return close(fd), err_sys(-errno, "%s: fdatasync", x->file);
	double tw = now() - t0;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	t0 = now();
	for (uint64_t off = 0; off < size; off += PIECE)
		if (pread(fd, buf, PIECE, (off_t)off) < 0)
			return close(fd), err_sys(-errno, "%s: read", x->file);
	double tr = now() - t0;
	posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	local_stage(x->r, "client_write", "this machine: write", "buffered+fdatasync", size, tw);
	local_stage(x->r, "client_read", "this machine: read", "fadvise DONTNEED", size, tr);
	return 0;
}

/* The server's disk, and a file up and back at the chosen level. */
static int disk_and_e2e(struct run *x)
{
	struct m_bench_done d;
	uint64_t got;
	int fd, rc;

	say(x, "the server's disk");
	if ((rc = ask(x, BSTEP_DISK, x->o->size)) < 0 ||
	    (rc = until_done(x, BSTEP_DISK, -1, &d, &got)) < 0)
		return rc;
	char q[4 * BENCH_MAX_NOTE + 8];
	snprintf(x->r->remote.server_disk, sizeof x->r->remote.server_disk, "%s%s",
		 d.status == BENCH_OK ? "" : "not measured: ", peer_quote(q, sizeof q, d.note));
	if (d.status != BENCH_OK)
		return 0;   /* no disk figure: no file goes there either */
	if (!bench_stage_find(x->r, "server_seq_write"))
		return 0;   /* a read-only module: its read test only, nothing uploaded */
	/* the box's CPU over its disk run: a disk figure it made while starved
	 * of CPU says more about the CPU (bench/verdict.c) */
	double secs = d.ns ? (double)d.ns / 1e9 : 0;
	for (uint32_t i = 0; secs > 0 && i < x->r->nstages; i++) {
		struct bench_stage *st = &x->r->stages[i];
		if (strncmp(st->name, "server_", 7))
			continue;
		st->srv_cpu = (float)((double)(d.user_us + d.sys_us) / 1e6 / secs);
		st->srv_wait = (float)((double)d.wait_us / 1e6 / secs);
	}
	if ((rc = local_disk(x)) < 0)
		return rc;
	if ((fd = open(x->file, O_RDONLY | O_CLOEXEC)) < 0)
		return err_sys(-errno, "%s", x->file);
	rc = move(x, BSTEP_E2E_UP, x->o->size, fd, "e2e_up", "upload, disk to disk");
	close(fd);
	if (rc < 0)
		return rc;
	snprintf(x->back, sizeof x->back, "%s/.ferry-bench-XXXXXX", x->o->local);
	if ((fd = mkstemp(x->back)) < 0) {
		x->back[0] = '\0';
		return err_sys(-errno, "%s: cannot create a test file", x->o->local);
	}
	/* the download lands synced, as the upload did on the server */
	struct clock k;
	start(x, &k);
	rc = move(x, BSTEP_E2E_DOWN, x->o->size, fd, "e2e_down", "download, disk to disk");
	if (rc == 0 && fdatasync(fd) < 0)
		rc = err_sys(-errno, "%s: fdatasync", x->back);
	struct bench_stage *st = (struct bench_stage *)bench_stage_find(x->r, "e2e_down");
	if (rc == 0 && st) {   /* the rate with the final sync in it */
		st->seconds = now() - k.wall;
		st->rate = (double)st->bytes / st->seconds;
	}
	close(fd);
	return rc;
}

static void remove_files(struct run *x)
{
	if (x->file[0])
		unlink(x->file);
	if (x->back[0])
		unlink(x->back);
}

static int failed(struct run *x, int rc)
{
	char q[4 * MSG_MAX_TEXT + 8];

	if (x->o->progress)
		fputs("\r\033[K", stderr);
	if (rc == -EINTR)
		return die_msg("bench stopped by a signal (its files are removed)"), EXIT_SIGNAL;
	die_msg("%s: bench: %s", x->rm->display, peer_quote(q, sizeof q, err_msg()));
	return rc == -EBADMSG ? EXIT_STREAM : rc == -EIO ? EXIT_LOCAL : EXIT_SOCKET;
}

int bench_remote_run(const struct remote *rm, const struct bench_remote_opts *o,
		     struct bench_report *r)
{
	struct run *x = calloc(1, sizeof *x);
	int rc = 0, code = 0, opened = 0;
	double t0 = now();

	if (!x)
		return die_msg("out of memory"), EXIT_LOCAL;
	*x = (struct run){ .rm = rm, .o = o, .r = r };
	r->kind = BENCH_REMOTE;
	snprintf(r->remote.server, sizeof r->remote.server, "%.200s:%.90s", rm->display, rm->module);
	snprintf(r->remote.level, sizeof r->remote.level, "%s", level_names[o->co.protection]);
	snprintf(r->remote.local, sizeof r->remote.local, "%s", o->local);
	/* every level the module takes: a refused one is said and skipped */
	for (int level = PROT_NONE; level <= PROT_ENCRYPT && rc == 0; level++) {
		if ((code = open_level(x, level)) != 0) {
			if (code != EXIT_REFUSED)
				break;
			code = 0;
			continue;
		}
		opened++;
		rc = network(x, level);
		if (rc == 0 && level == o->co.protection)
			rc = disk_and_e2e(x);
		if (rc < 0)   /* said before close_conn, whose flush may fail and say less */
			code = failed(x, rc);
		close_conn(x);
	}
	if (!code && !opened)
		code = EXIT_REFUSED;
	remove_files(x);
	close_conn(x);
	if (o->progress)
		fputs("\r\033[K", stderr);
	r->elapsed = now() - t0;
	if (!code)
		bench_verdict(r);
	free(x);
	return code;
}
