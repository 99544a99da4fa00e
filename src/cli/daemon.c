/* SPDX-License-Identifier: MIT */
/* The listening daemon: one process per connection (a crash in one session
 * cannot take down the others); admission in two stages, so that a
 * connection that has not had a key accepted is held to one deadline and
 * capped on its own (in all, and per address) and never takes a session's
 * slot; a growing penalty for addresses that keep failing; a periodic sweep
 * of stale temporaries; SIGHUP reload and SIGTERM shutdown. */
#include "cli/daemon.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs/afile.h"
#include "fs/jail.h"
#include "fs/sweep.h"
#include "proto/msg.h"
#include "session/server.h"
#include "util/err.h"
#include "util/privdrop.h"
#include "util/log.h"
#include "util/priority.h"

#define MAX_CHILDREN 256
#define PENALTY_SLOTS 256
#define ADDR_KEY_LEN (INET6_ADDRSTRLEN + 4)   /* an address, or a /64 prefix */
#define KILL_GRACE_MS 1000                    /* the child's own deadline fires first */
#define ADMIT_WAIT_MS 5000
#define SWEEP_EVERY_MS (6 * 3600 * 1000LL)

/* A connection's stages: it counts against `max unauthenticated` until its
 * key is accepted for a module, then against `max connections`. */
enum kid_state { K_UNAUTH, K_SESSION, K_DONE };

struct child {
	pid_t pid;
	int status_fd;          /* socketpair: 'A'uthorized / 'F'ailed up, 'Y' / 'N' (admitted) down */
	enum kid_state state;
	int64_t deadline;       /* monotonic ms: authorized by then, or stopped */
	char addr[INET6_ADDRSTRLEN];
	char key[ADDR_KEY_LEN]; /* what caps and penalties count by */
};

struct penalty {
	char key[ADDR_KEY_LEN]; /* "" = free */
	unsigned failures;
	int64_t until;          /* monotonic ms */
};

static volatile sig_atomic_t got_term, got_hup;

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		got_hup = 1;
	else
		got_term = 1;
}

/* A session stopped by the daemon's shutdown removes its partial file. */
static void on_child_term(int sig)
{
	(void)sig;
	afile_signal_cleanup();
	_exit(1);
}

static void on_chld(int sig)
{
	(void)sig;   /* only to end the ppoll: the loop reaps */
}

/* The signal mask while the loop waits; outside ppoll SIGCHLD stays blocked,
 * so that a session that ends between reap() and the wait still wakes it
 * (its slot and its zombie are gone at once, not at the next 1 s tick). */
static sigset_t wait_mask;

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = on_chld;
	sigaction(SIGCHLD, &sa, NULL);
	sigset_t chld;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &wait_mask);
	sigdelset(&wait_mask, SIGCHLD);
}

static int wait_events(struct pollfd *pfds, size_t n, int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	return ppoll(pfds, n, &ts, &wait_mask);
}

/* Error messages can carry peer text (the reason in a peer's ERROR): control
 * bytes are escaped so that it cannot forge or colour a log line. */
static const char *clean(const char *s, char *buf, size_t cap)
{
	size_t o = 0;

	for (; *s && o + 5 < cap; s++) {
		unsigned char c = (unsigned char)*s;
		if (c < 0x20 || c == 0x7f)
			o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
		else
			buf[o++] = (char)c;
	}
	buf[o] = '\0';
	return buf;
}

static int open_listener(const char *spec, char *shown, size_t cap)
{
	char host[256], port[16];
	unsigned pnum;
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res;
	int fd = -1, one = 1, rc;

	if ((rc = listen_split(spec, host, sizeof host, &pnum)) < 0)
		return rc;
	snprintf(port, sizeof port, "%u", pnum);
	int g = getaddrinfo(host, port, &hints, &res);
	if (g)
		return err_set(-EINVAL, "listen '%s': %s", spec, gai_strerror(g));
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	if (fd < 0) {
		rc = err_sys(-errno, "listen '%s': socket", spec);
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 64) < 0) {
		rc = err_sys(-errno, "listen on %s port %s", host, port);
		close(fd);
		fd = -1;
		goto out;
	}
	/* Port 0 asks the kernel for one: show the real one (tests read it). */
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		snprintf(port, sizeof port, "%u", ntohs(ss.ss_family == AF_INET6 ?
			 ((struct sockaddr_in6 *)&ss)->sin6_port : ((struct sockaddr_in *)&ss)->sin_port));
	snprintf(shown, cap, strchr(host, ':') ? "[%s]:%s" : "%s:%s", host, port);
	rc = fd;
out:
	freeaddrinfo(res);
	return rc;
}

static void addr_string(const struct sockaddr_storage *ss, char *out, size_t cap)
{
	if (ss->ss_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)ss)->sin6_addr, out, (socklen_t)cap);
	else
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, out, (socklen_t)cap);
}

/* Caps and penalties count an IPv4 address, or the /64 of an IPv6 address:
 * one subscriber gets a whole /64, so counting single IPv6 addresses would
 * limit nothing (and let one flood evict every penalty). An IPv4-mapped
 * address counts as its IPv4 address. */
static void addr_key(const struct sockaddr_storage *ss, char *out, size_t cap)
{
	char buf[INET6_ADDRSTRLEN];

	if (ss->ss_family != AF_INET6) {
		inet_ntop(AF_INET, &((const struct sockaddr_in *)ss)->sin_addr, out, (socklen_t)cap);
		return;
	}
	struct in6_addr a = ((const struct sockaddr_in6 *)ss)->sin6_addr;
	if (IN6_IS_ADDR_V4MAPPED(&a)) {
		inet_ntop(AF_INET, &a.s6_addr[12], out, (socklen_t)cap);
		return;
	}
	memset(&a.s6_addr[8], 0, 8);
	inet_ntop(AF_INET6, &a, buf, sizeof buf);
	snprintf(out, cap, "%s/64", buf);
}

struct daemon_state {
	struct daemon *d;
	int lfd;
	struct child kids[MAX_CHILDREN];
	size_t nkids;
	struct penalty pen[PENALTY_SLOTS];
	pid_t sweeper;            /* the stale-temporary sweep running, or 0 */
	int64_t next_sweep;       /* monotonic ms */
};

static struct penalty *penalty_find(struct daemon_state *s, const char *key)
{
	for (size_t i = 0; i < PENALTY_SLOTS; i++)
		if (!strcmp(s->pen[i].key, key))
			return &s->pen[i];
	return NULL;
}

/* A slot for a new address: a free one, else the one whose penalty ran out
 * first. Live penalties are never evicted (that would let a flood of fresh
 * addresses wipe a guesser's record): when all are live, NULL, and the new
 * address goes unrecorded until one runs out. */
static struct penalty *penalty_slot(struct daemon_state *s, const char *key, int64_t now)
{
	struct penalty *p = penalty_find(s, key), *best = NULL;

	if (p)
		return p;
	for (size_t i = 0; i < PENALTY_SLOTS; i++) {
		struct penalty *e = &s->pen[i];
		if (!e->key[0]) {
			best = e;
			break;
		}
		if (e->until <= now && (!best || e->until < best->until))
			best = e;
	}
	if (best) {
		memset(best, 0, sizeof *best);
		snprintf(best->key, sizeof best->key, "%s", key);
	}
	return best;
}

/* 1 s after the second failure in a row, doubling up to 60 s: a guesser gets
 * nowhere, a user who mistyped a key path is barely slowed. */
static void penalty_fail(struct daemon_state *s, const char *key)
{
	int64_t now = now_ms();
	struct penalty *p = penalty_slot(s, key, now);

	if (!p) {
		log_debug("penalty table full: a failure from %s is not recorded", key);
		return;
	}
	p->failures++;
	unsigned delay = p->failures < 2 ? 0 : 1u << (p->failures - 2 > 6 ? 6 : p->failures - 2);
	if (delay > 60)
		delay = 60;
	p->until = now + delay * 1000LL;
}

static void child_report(int fd, char what)
{
	if (fd >= 0 && write(fd, &what, 1) < 0)
		log_debug("status channel: %s", strerror(errno));
}

static pid_t parent_daemon;   /* the daemon's, as its children know it */

/* 1 once this child has a parent other than the daemon. A dying process
 * closes its files before its children are handed on: the end of the
 * status channel may come a moment before getppid() shows it. */
static int daemon_gone(void)
{
	for (int t = 0; t < 100; t++) {
		if (getppid() != parent_daemon)
			return 1;
		poll(NULL, 0, 2);
	}
	return 0;
}

/* The child's side of the admission: after 'A' the daemon answers whether a
 * `max connections` slot is free. No answer in time counts as no. A daemon
 * that died first (its end closed, no answer) counts as yes: its sessions
 * are processes of their own and finish, and this one was already accepted;
 * refusing it "busy" would be a false reason (the fault campaign's
 * kill-daemon runs met it). */
static int await_admission(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char c = 0;
	ssize_t n = -1;

	while (poll(&p, 1, ADMIT_WAIT_MS) < 0 && errno == EINTR)
		;
	if (p.revents & (POLLIN | POLLHUP))
		n = read(fd, &c, 1);
	if (n == 0 && daemon_gone()) {
		log_warn("the daemon ended during this session's admission: it goes on");
		return 1;
	}
	return n == 1 && c == 'Y';
}

struct auth_ctx {
	int fd;                        /* the status channel; -1 once the key is judged */
	struct channel *ch;
	const struct global_cfg *g;
};

/* All sessions are taken. Nothing of the module has been touched yet, and
 * the server's on_auth hook cannot veto, so the refusal is sent and the
 * process ends right here. */
__attribute__((noreturn)) static void refuse_busy(struct auth_ctx *a)
{
	static uint8_t buf[MSG_MAX_ENCODED];
	struct msg m = { .type = MSG_REFUSE };
	int n;

	m.u.refuse.code = REF_BUSY;
	snprintf(m.u.refuse.reason, sizeof m.u.refuse.reason,
		 "server busy: %u sessions running (max connections)", a->g->max_connections);
	log_warn("refused: %s", m.u.refuse.reason);
	if ((n = msg_encode(&m, buf, sizeof buf)) > 0 && chan_send(a->ch, buf, (size_t)n) == 0)
		chan_flush(a->ch);
	chan_free(a->ch);
	_exit(0);
}

static void on_auth(void *ctx, int ok)
{
	struct auth_ctx *a = ctx;

	if (a->fd < 0)
		return;   /* one report per connection */
	child_report(a->fd, ok ? 'A' : 'F');
	int admitted = ok && await_admission(a->fd);
	close(a->fd);
	a->fd = -1;
	if (!ok)
		return;
	if (!admitted)
		refuse_busy(a);
	/* The handshake deadline no longer applies: the session's own I/O
	 * timeout does, per record. */
	chan_set_timeout(a->ch, a->g->io_timeout * 1000);
}

static int ms_left(int64_t deadline)
{
	int64_t left = deadline - now_ms();
	return left < 1 ? 1 : left > 0x7fffffff ? 0x7fffffff : (int)left;
}

/* A connection that ended before its key was judged. A client that closes
 * cleanly after the handshake, before any request, is one that did not
 * accept our host key: it tried no key and learnt nothing, so it is not a
 * failure (ferry's client sends its last handshake message before it checks
 * the host key, so this is where it leaves). Everything else is: garbage, a
 * stall past the deadline, a module without keys. */
static void end_unjudged(struct auth_ctx *a, int rc)
{
	char buf[512];

	if (rc == -EPIPE) {
		log_info("the client closed the connection before its request (host key not accepted?)");
	} else {
		if (rc == -ETIMEDOUT)
			log_warn("no authorized request within the handshake timeout");
		else if (rc < 0)
			log_warn("no authorized request: %s", clean(err_msg(), buf, sizeof buf));
		child_report(a->fd, 'F');
	}
	close(a->fd);
	a->fd = -1;
}

/* The per-connection process. `deadline` is the accept time plus the
 * handshake timeout: the opening, the handshake and the REQUEST all share it. */
static int serve_child(struct daemon *d, int fd, int status_fd, const char *addr, int64_t deadline)
{
	struct channel *ch = NULL;
	struct chan_peer *peer = calloc(1, sizeof *peer);
	struct hello h = { .version = PROTO_VERSION,
			   .features = HELLO_REQ_MORE | HELLO_MORE2 | HELLO_MORE3 |
					HELLO_MORE4 };
#ifdef FERRY_TEST_HOOKS
	if (getenv("FERRY_TEST_OLD_HELLO"))   /* test builds: an older server, with these */
		h.features = (uint32_t)strtoul(getenv("FERRY_TEST_OLD_HELLO"), NULL, 0);
#endif
	uint8_t hello[128];
	char prefix[80], buf[512];
	int one = 1, rc;

	snprintf(prefix, sizeof prefix, "[%d %s]", (int)getpid(), addr);
	log_set_prefix(prefix);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	snprintf(h.software, sizeof h.software, "ferry %s", FERRY_VERSION);
	int hl = hello_encode(&h, hello, sizeof hello);
	struct chan_opts co = { .local = &d->host_key, .payload = hello, .payload_len = (size_t)hl,
				.timeout_ms = ms_left(deadline) };
	if (!peer || chan_server(fd, &co, &ch, peer) < 0) {
		log_warn("handshake failed: %s", peer ? clean(err_msg(), buf, sizeof buf) : "out of memory");
		child_report(status_fd, 'F');
		free(peer);
		close(fd);
		return 1;
	}
	/* The private key is not needed after the handshake. */
	keys_wipe(&d->host_key);
	/* The REQUEST gets what is left of the deadline: a record's timeout
	 * counts from when the wait starts, which is now. */
	chan_set_timeout(ch, ms_left(deadline));
	struct auth_ctx ac = { .fd = status_fd, .ch = ch, .g = &d->cfg.global };
	struct server_ctx sc = { .cfg = &d->cfg, .peer = peer, .addr = addr, .on_auth = on_auth,
				 .ctx = &ac, .sandbox = &d->sandbox };
	writer_opts_default(&sc.writer);
	rc = server_session(ch, &sc);
	if (ac.fd >= 0)
		end_unjudged(&ac, rc);
	else if (rc < 0)
		log_err("session failed: %s", clean(err_msg(), buf, sizeof buf));
	chan_free(ch);   /* the client sees the end here */
	server_session_after();
	free(peer);
	return rc < 0 ? 1 : 0;
}

static size_t count_state(const struct daemon_state *s, enum kid_state st)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nkids; i++)
		n += s->kids[i].state == st;
	return n;
}

/* Sessions holding a slot: a session that has ended is not one, even before
 * the loop reaps it (its SIGCHLD may wake the same wait as the next client's
 * admission, which is handled first). */
static size_t count_sessions(const struct daemon_state *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nkids; i++) {
		siginfo_t si = { 0 };
		if (s->kids[i].state != K_SESSION)
			continue;
		if (waitid(P_PID, (id_t)s->kids[i].pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
		    si.si_pid == s->kids[i].pid)
			continue;
		n++;
	}
	return n;
}

static size_t count_unauthed_from(const struct daemon_state *s, const char *key)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nkids; i++)
		n += s->kids[i].state == K_UNAUTH && !strcmp(s->kids[i].key, key);
	return n;
}

/* Why a new connection from `key` is refused before its handshake, or "". */
static void admission_refusal(struct daemon_state *s, const char *key, char *why, size_t cap)
{
	const struct global_cfg *g = &s->d->cfg.global;
	struct penalty *p = penalty_find(s, key);
	int64_t now = now_ms();
	size_t n;

	why[0] = '\0';
	if (p && p->until > now)
		snprintf(why, cap, "too many failed attempts from %s; retry in %lld s", key,
			 (long long)((p->until - now + 999) / 1000));
	else if (g->max_connections && (n = count_sessions(s)) >= g->max_connections)
		snprintf(why, cap, "server busy: %zu sessions running (max connections)", n);
	else if (g->max_unauth_per_addr && count_unauthed_from(s, key) >= g->max_unauth_per_addr)
		snprintf(why, cap, "too many connections from %s awaiting authentication "
			 "(max unauthenticated per address: %u)", key, g->max_unauth_per_addr);
	else if (g->max_unauthenticated && count_state(s, K_UNAUTH) >= g->max_unauthenticated)
		snprintf(why, cap, "too many connections awaiting authentication (max unauthenticated)");
	else if (s->nkids >= MAX_CHILDREN)
		snprintf(why, cap, "server busy: %zu connections", s->nkids);
}

/* What a forked child must not keep of the daemon's: its listener, the other
 * children's status channels, and the daemon's way of waiting for SIGCHLD. */
static void drop_inherited(struct daemon_state *s)
{
	signal(SIGCHLD, SIG_DFL);
	sigprocmask(SIG_SETMASK, &wait_mask, NULL);
	close(s->lfd);
	for (size_t i = 0; i < s->nkids; i++)
		if (s->kids[i].status_fd >= 0)
			close(s->kids[i].status_fd);
}

static void accept_one(struct daemon_state *s)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char addr[INET6_ADDRSTRLEN] = "?", key[ADDR_KEY_LEN], why[200];
	int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC), sv[2];

	if (fd < 0)
		return;
	addr_string(&ss, addr, sizeof addr);
	addr_key(&ss, key, sizeof key);
	admission_refusal(s, key, why, sizeof why);
	if (why[0]) {
		log_warn("[%s] refused: %s", addr, why);
		chan_refuse(fd, why);
		close(fd);
		return;
	}
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
		log_err("socketpair: %s", strerror(errno));
		close(fd);
		return;
	}
	int64_t deadline = now_ms() + s->d->cfg.global.handshake_timeout * 1000LL;
	pid_t pid = fork();
	if (pid == 0) {
		drop_inherited(s);
		close(sv[0]);
		signal(SIGTERM, on_child_term);
		signal(SIGINT, on_child_term);
		signal(SIGHUP, SIG_IGN);
		_exit(serve_child(s->d, fd, sv[1], addr, deadline));
	}
	close(fd);
	close(sv[1]);
	if (pid < 0) {
		log_err("fork: %s", strerror(errno));
		close(sv[0]);
		return;
	}
	struct child *k = &s->kids[s->nkids++];
	*k = (struct child){ .pid = pid, .status_fd = sv[0], .state = K_UNAUTH, .deadline = deadline };
	snprintf(k->addr, sizeof k->addr, "%s", addr);
	snprintf(k->key, sizeof k->key, "%s", key);
	log_debug("[%s] connection, pid %d", addr, (int)pid);
}

/* The key was accepted: a success clears the address's record, and the
 * session gets a `max connections` slot if one is free. */
static void admit(struct daemon_state *s, struct child *k)
{
	unsigned max = s->d->cfg.global.max_connections;
	struct penalty *p = penalty_find(s, k->key);
	int ok = !max || count_sessions(s) < max;
	char reply = ok ? 'Y' : 'N';

	if (p)
		memset(p, 0, sizeof *p);
	k->state = ok ? K_SESSION : K_DONE;
	if (send(k->status_fd, &reply, 1, MSG_DONTWAIT | MSG_NOSIGNAL) != 1)
		log_debug("[%s] status channel: %s", k->addr, strerror(errno));
}

static void read_status(struct daemon_state *s, struct child *k)
{
	char c = 0;
	ssize_t n = recv(k->status_fd, &c, 1, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n == 1 && c == 'A' && k->state == K_UNAUTH) {
#ifdef FERRY_TEST_HOOKS
		/* test builds (test_daemon): the daemon dies as a session waits
		 * for its slot */
		if (getenv("FERRY_TEST_DIE_AT_ADMIT"))
			_exit(9);
#endif
		admit(s, k);
		return;   /* the child closes its end next */
	}
	if (n == 1 && c == 'F' && k->state == K_UNAUTH)
		penalty_fail(s, k->key);
	/* 'F', EOF or error: nothing more will come. A child that ends without a
	 * word (a client that left before its request, or a crash) is not
	 * counted as a failure. */
	if (k->state == K_UNAUTH)
		k->state = K_DONE;
	close(k->status_fd);
	k->status_fd = -1;
}

/* The daemon's side of the one deadline: a child whose key is not accepted
 * by then (its own timeout should have ended it) is stopped and counted. */
static void expire_unauthed(struct daemon_state *s)
{
	int64_t now = now_ms();

	for (size_t i = 0; i < s->nkids; i++) {
		struct child *k = &s->kids[i];
		if (k->state != K_UNAUTH || now < k->deadline + KILL_GRACE_MS)
			continue;
		log_warn("[%s] pid %d: no authorized request within the handshake timeout; closed",
			 k->addr, (int)k->pid);
		kill(k->pid, SIGTERM);
		penalty_fail(s, k->key);
		k->state = K_DONE;
	}
}

/* Milliseconds until the next thing the loop must do unasked, at most 1 s. */
static int next_wakeup(const struct daemon_state *s)
{
	int64_t now = now_ms(), next = now + 1000;

	for (size_t i = 0; i < s->nkids; i++)
		if (s->kids[i].state == K_UNAUTH && s->kids[i].deadline + KILL_GRACE_MS < next)
			next = s->kids[i].deadline + KILL_GRACE_MS;
	if (s->d->cfg.global.stale_age && !s->sweeper && s->next_sweep < next)
		next = s->next_sweep;
	return next <= now ? 0 : (int)(next - now);
}


static void sweep_module(const struct module_cfg *m, long age, long part_age)
{
	struct jail j = { .root_fd = -1 };
	struct sweep_stats st;

	if (jail_open(&j, m->path) < 0 || fs_sweep_stale(&j, age, part_age, &st) < 0) {
		log_warn("sweep of module '%s': %s", m->name, err_msg());
		jail_close(&j);
		return;
	}
	jail_close(&j);
	if (st.removed || st.partials || st.skipped)
		log_info("sweep of module '%s': %lu stale temporaries removed, %lu stale partials "
			 "removed, %lu directories skipped (%lu read)", m->name, st.removed,
			 st.partials, st.skipped, st.dirs);
}

__attribute__((noreturn)) static void sweep_child(struct daemon_state *s, pid_t daemon_pid)
{
	const struct ferry_config *cfg = &s->d->cfg;

	drop_inherited(s);
	keys_wipe(&s->d->host_key);
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_IGN);
	/* The daemon's end ends the sweep, even when it is killed outright. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
	if (getppid() != daemon_pid)
		_exit(0);
	log_set_prefix("[sweep]");
	lowest_priority("sweep");   /* never slows a session or the accept loop */
	for (size_t i = 0; i < cfg->n_modules; i++)
		sweep_module(&cfg->modules[i], cfg->global.stale_age, cfg->global.partial_age);
	_exit(0);
}

/* At start, then every SWEEP_EVERY_MS, in a child: a tree of a million
 * files takes a while to walk, and accepts must not wait for it. */
static void sweep_maybe_start(struct daemon_state *s)
{
	pid_t me = getpid();

	if (!s->d->cfg.global.stale_age || s->sweeper || now_ms() < s->next_sweep)
		return;
	s->next_sweep = now_ms() + SWEEP_EVERY_MS;
	pid_t pid = fork();
	if (pid == 0)
		sweep_child(s, me);
	if (pid < 0)
		log_err("fork for the sweep: %s", strerror(errno));
	else
		s->sweeper = pid;
}

static void forget(struct daemon_state *s, pid_t pid, int status)
{
	if (pid == s->sweeper) {
		s->sweeper = 0;
		return;
	}
	for (size_t i = 0; i < s->nkids; i++) {
		if (s->kids[i].pid != pid)
			continue;
		if (WIFSIGNALED(status) && s->kids[i].state != K_DONE)
			log_err("[%s] session process %d died of signal %d", s->kids[i].addr,
				(int)pid, WTERMSIG(status));
		if (s->kids[i].status_fd >= 0)
			close(s->kids[i].status_fd);
		s->kids[i] = s->kids[--s->nkids];
		return;
	}
}

static void reap(struct daemon_state *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		forget(s, pid, status);
}

static void shutdown_children(struct daemon_state *s)
{
	int status;
	pid_t pid;

	if (s->sweeper)
		kill(s->sweeper, SIGTERM);
	for (size_t i = 0; i < s->nkids; i++)
		kill(s->kids[i].pid, SIGTERM);
	for (int t = 0; t < 50 && (s->nkids || s->sweeper); t++) {
		reap(s);
		if (s->nkids || s->sweeper)
			usleep(100000);
	}
	if (s->sweeper)
		kill(s->sweeper, SIGKILL);
	for (size_t i = 0; i < s->nkids; i++)
		kill(s->kids[i].pid, SIGKILL);
	while ((s->nkids || s->sweeper) && (pid = waitpid(-1, &status, 0)) > 0)
		forget(s, pid, status);
}

int daemon_run(struct daemon *d)
{
	struct daemon_state *s = calloc(1, sizeof *s);
	struct pollfd pfds[MAX_CHILDREN + 1];
	struct child *who[MAX_CHILDREN + 1];
	char shown[300], fpr[KEY_FPR_LEN];

	if (!s)
		return err_set(-ENOMEM, "out of memory");
	s->d = d;
	parent_daemon = getpid();
	s->lfd = open_listener(d->cfg.global.listen, shown, sizeof shown);
	if (s->lfd < 0) {
		int rc = s->lfd;
		free(s);
		return rc;
	}
	/* Bound and holding the host key: root is no longer needed. */
	const struct global_cfg *g = &d->cfg.global;
	if (g->user && priv_drop(g->uid, g->gid) < 0) {
		int rc = err_wrap(-EPERM, "user = %s", g->user);
		close(s->lfd);
		free(s);
		return rc;
	}
	if (g->user)
		log_info("running as user %s (uid %u, gid %u)", g->user, (unsigned)g->uid,
			 (unsigned)g->gid);
	char sb[320];
	sandbox_probe(&d->sandbox);
	sandbox_describe(&d->sandbox, sb, sizeof sb);
	log_info("%s", sb);
	install_signals();
	key_fingerprint(d->host_key.pub, fpr);
	log_info("listening on %s, %zu module(s), host key %s", shown, d->cfg.n_modules, fpr);
	while (!got_term) {
		size_t n = 0;
		sweep_maybe_start(s);
		pfds[n++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		for (size_t i = 0; i < s->nkids; i++) {
			if (s->kids[i].status_fd < 0)
				continue;
			who[n] = &s->kids[i];
			pfds[n++] = (struct pollfd){ .fd = s->kids[i].status_fd, .events = POLLIN };
		}
		int r = wait_events(pfds, n, next_wakeup(s));
		if (r > 0) {
			for (size_t i = 1; i < n; i++)
				if (pfds[i].revents)
					read_status(s, who[i]);
		}
		expire_unauthed(s);
		reap(s);
		if (got_hup) {
			got_hup = 0;
			if (d->reload(d) < 0)
				log_err("reload failed, keeping the old configuration: %s", err_msg());
			else
				log_info("configuration reloaded: %zu module(s)", d->cfg.n_modules);
		}
		if (r > 0 && (pfds[0].revents & POLLIN) && !got_term)
			accept_one(s);
	}
	log_info("stopping: %zu session(s) to end", s->nkids);
	close(s->lfd);
	shutdown_children(s);
	free(s);
	return 0;
}
