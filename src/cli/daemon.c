/* SPDX-License-Identifier: MIT */
/* The listening daemon: one process per connection (a crash in one session
 * cannot take down the others), limits on connections and on connections
 * that have not authenticated yet, a growing penalty for addresses that keep
 * failing, SIGHUP reload and SIGTERM shutdown. */
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
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fs/afile.h"
#include "proto/msg.h"
#include "session/server.h"
#include "util/err.h"
#include "util/log.h"

#define MAX_CHILDREN 256
#define PENALTY_SLOTS 64

struct child {
	pid_t pid;
	int status_fd;          /* the child reports 'A'uthenticated or 'F'ailed here */
	int authed;
	char addr[INET6_ADDRSTRLEN];
};

struct penalty {
	char addr[INET6_ADDRSTRLEN];
	unsigned failures;
	time_t until;
};

static volatile sig_atomic_t got_term, got_hup;

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

static void install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* "ADDR", "ADDR:PORT", "[V6]", "[V6]:PORT", ":PORT" */
static int split_listen(const char *s, char *host, size_t hcap, char *port, size_t pcap)
{
	const char *colon;

	snprintf(port, pcap, "%u", FERRY_DEFAULT_PORT);
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb)
			return err_set(-EINVAL, "listen '%s': missing ']'", s);
		snprintf(host, hcap, "%.*s", (int)(rb - s - 1), s + 1);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			return err_set(-EINVAL, "listen '%s': junk after ']'", s);
	} else {
		colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon)
			return err_set(-EINVAL, "listen '%s': write IPv6 addresses in brackets", s);
		snprintf(host, hcap, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
	}
	if (colon)
		snprintf(port, pcap, "%s", colon + 1);
	if (!host[0])
		snprintf(host, hcap, "0.0.0.0");
	return 0;
}

static int open_listener(const char *spec, char *shown, size_t cap)
{
	char host[256], port[16];
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
	struct addrinfo *res;
	int fd = -1, one = 1, rc;

	if ((rc = split_listen(spec, host, sizeof host, port, sizeof port)) < 0)
		return rc;
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

struct daemon_state {
	struct daemon *d;
	int lfd;
	struct child kids[MAX_CHILDREN];
	size_t nkids;
	struct penalty pen[PENALTY_SLOTS];
};

static struct penalty *penalty_find(struct daemon_state *s, const char *addr, int create)
{
	struct penalty *oldest = &s->pen[0];
	for (size_t i = 0; i < PENALTY_SLOTS; i++) {
		if (!strcmp(s->pen[i].addr, addr))
			return &s->pen[i];
		if (s->pen[i].until < oldest->until)
			oldest = &s->pen[i];
	}
	if (!create)
		return NULL;
	memset(oldest, 0, sizeof *oldest);
	snprintf(oldest->addr, sizeof oldest->addr, "%s", addr);
	return oldest;
}

/* 1 s after the second failure, doubling up to 60 s: a guesser gets nowhere,
 * a user who mistyped a key path is barely slowed. */
static void penalty_fail(struct daemon_state *s, const char *addr)
{
	struct penalty *p = penalty_find(s, addr, 1);
	p->failures++;
	unsigned delay = p->failures < 2 ? 0 : 1u << (p->failures - 2 > 6 ? 6 : p->failures - 2);
	if (delay > 60)
		delay = 60;
	p->until = time(NULL) + delay;
}

static void child_report(int fd, char what)
{
	if (fd >= 0 && write(fd, &what, 1) < 0)
		log_debug("status pipe: %s", strerror(errno));
}

static void on_auth(void *ctx, int ok)
{
	int *fd = ctx;
	child_report(*fd, ok ? 'A' : 'F');
	close(*fd);   /* one report per connection */
	*fd = -1;
}

/* The per-connection process. */
static int serve_child(struct daemon *d, int fd, int status_fd, const char *addr)
{
	struct channel *ch = NULL;
	struct chan_peer *peer = calloc(1, sizeof *peer);
	struct hello h = { .version = PROTO_VERSION };
	uint8_t hello[128];
	char prefix[80];
	int one = 1, rc;

	snprintf(prefix, sizeof prefix, "[%d %s]", (int)getpid(), addr);
	log_set_prefix(prefix);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	snprintf(h.software, sizeof h.software, "ferry %s", FERRY_VERSION);
	int hl = hello_encode(&h, hello, sizeof hello);
	struct chan_opts co = { .local = &d->host_key, .payload = hello, .payload_len = (size_t)hl,
				.timeout_ms = d->cfg.global.handshake_timeout * 1000 };
	if (!peer || chan_server(fd, &co, &ch, peer) < 0) {
		log_warn("handshake failed: %s", peer ? err_msg() : "out of memory");
		child_report(status_fd, 'F');
		free(peer);
		close(fd);
		return 1;
	}
	/* The private key is not needed after the handshake. */
	keys_wipe(&d->host_key);
	chan_set_timeout(ch, d->io_timeout_ms);
	struct server_ctx sc = { .cfg = &d->cfg, .peer = peer, .on_auth = on_auth,
				 .ctx = &status_fd };
	writer_opts_default(&sc.writer);
	rc = server_session(ch, &sc);
	/* A session that ended before its key was judged (no REQUEST) failed. */
	child_report(status_fd, 'F');
	if (rc < 0)
		log_err("session failed: %s", err_msg());
	chan_free(ch);
	free(peer);
	return rc < 0 ? 1 : 0;
}

static size_t count_unauthed(const struct daemon_state *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nkids; i++)
		n += !s->kids[i].authed;
	return n;
}

static void accept_one(struct daemon_state *s)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;
	char addr[INET6_ADDRSTRLEN] = "?", why[160];
	int fd = accept4(s->lfd, (struct sockaddr *)&ss, &sl, SOCK_CLOEXEC);
	const struct global_cfg *g = &s->d->cfg.global;

	if (fd < 0)
		return;
	addr_string(&ss, addr, sizeof addr);
	struct penalty *p = penalty_find(s, addr, 0);
	why[0] = '\0';
	if (p && p->until > time(NULL))
		snprintf(why, sizeof why, "too many failed attempts from %s; retry in %ld s", addr,
			 (long)(p->until - time(NULL)));
	else if ((g->max_connections && s->nkids >= g->max_connections) || s->nkids >= MAX_CHILDREN)
		snprintf(why, sizeof why, "server busy: %zu connections (max connections)", s->nkids);
	else if (g->max_unauthenticated && count_unauthed(s) >= g->max_unauthenticated)
		snprintf(why, sizeof why, "too many connections awaiting authentication");
	if (why[0]) {
		log_warn("[%s] refused: %s", addr, why);
		chan_refuse(fd, why);
		close(fd);
		return;
	}
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		log_err("pipe: %s", strerror(errno));
		close(fd);
		return;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(s->lfd);
		close(pfd[0]);
		for (size_t i = 0; i < s->nkids; i++)
			if (s->kids[i].status_fd >= 0)
				close(s->kids[i].status_fd);
		signal(SIGTERM, on_child_term);
		signal(SIGINT, on_child_term);
		signal(SIGHUP, SIG_IGN);
		_exit(serve_child(s->d, fd, pfd[1], addr));
	}
	close(fd);
	close(pfd[1]);
	if (pid < 0) {
		log_err("fork: %s", strerror(errno));
		close(pfd[0]);
		return;
	}
	struct child *k = &s->kids[s->nkids++];
	k->pid = pid;
	k->status_fd = pfd[0];
	k->authed = 0;
	snprintf(k->addr, sizeof k->addr, "%s", addr);
	log_debug("[%s] connection, pid %d", addr, (int)pid);
}

static void read_status(struct daemon_state *s, struct child *k)
{
	char c;
	ssize_t n = read(k->status_fd, &c, 1);

	if (n == 1 && c == 'A') {
		k->authed = 1;
		struct penalty *p = penalty_find(s, k->addr, 0);
		if (p)
			p->failures = 0, p->until = 0;
		return;
	}
	if (n == 1 && c == 'F')
		penalty_fail(s, k->addr);
	/* 'F', EOF or error: nothing more will come; an exiting child no longer
	 * counts as waiting for authentication. */
	k->authed = 1;
	close(k->status_fd);
	k->status_fd = -1;
}

static void reap(struct daemon_state *s)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (size_t i = 0; i < s->nkids; i++) {
			if (s->kids[i].pid != pid)
				continue;
			if (WIFSIGNALED(status))
				log_err("[%s] session process %d died of signal %d", s->kids[i].addr,
					(int)pid, WTERMSIG(status));
			if (s->kids[i].status_fd >= 0)
				close(s->kids[i].status_fd);
			s->kids[i] = s->kids[--s->nkids];
			break;
		}
	}
}

static void shutdown_children(struct daemon_state *s)
{
	for (size_t i = 0; i < s->nkids; i++)
		kill(s->kids[i].pid, SIGTERM);
	for (int t = 0; t < 50 && s->nkids; t++) {
		reap(s);
		if (s->nkids)
			usleep(100000);
	}
	for (size_t i = 0; i < s->nkids; i++)
		kill(s->kids[i].pid, SIGKILL);
	while (s->nkids && waitpid(-1, NULL, 0) > 0)
		reap(s);
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
	s->lfd = open_listener(d->cfg.global.listen, shown, sizeof shown);
	if (s->lfd < 0) {
		int rc = s->lfd;
		free(s);
		return rc;
	}
	install_signals();
	key_fingerprint(d->host_key.pub, fpr);
	log_info("listening on %s, %zu module(s), host key %s", shown, d->cfg.n_modules, fpr);
	while (!got_term) {
		size_t n = 0;
		pfds[n++] = (struct pollfd){ .fd = s->lfd, .events = POLLIN };
		for (size_t i = 0; i < s->nkids; i++) {
			if (s->kids[i].status_fd < 0)
				continue;
			who[n] = &s->kids[i];
			pfds[n++] = (struct pollfd){ .fd = s->kids[i].status_fd, .events = POLLIN };
		}
		int r = poll(pfds, n, 1000);
		if (r > 0) {
			for (size_t i = 1; i < n; i++)
				if (pfds[i].revents)
					read_status(s, who[i]);
		}
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
