/* SPDX-License-Identifier: MIT */
/* ferry-hold: holds connections to a daemon on 127.0.0.1 the way a slot
 * squatter would, for the e2e tests of the daemon's deadlines and caps.
 *
 *   ferry-hold MODE PORT N SECONDS [--every S] [--key FILE] [--module NAME] [--spread 1]
 *
 * opens N connections one after the other, then holds them for SECONDS.
 * MODE:
 *   silent    connects and sends nothing
 *   line      sends the opening line and stalls
 *   drip      completes the Noise XX handshake with a throwaway key made in
 *             memory, then sends a sealed REQUEST one byte every S seconds
 *   authdrip  completes the handshake with --key (an authorized key), sends a
 *             whole REQUEST (push to --module, default "m"), and after its
 *             ACCEPT sends a sealed DIR_BEGIN record one byte every S seconds
 * --spread 1 gives connection i its own source address, 127.1.(i / 250).(i % 250 + 1),
 * as squatters from many machines would (past the daemon's per-address cap).
 * S defaults to 1. The records dripped are a few hundred bytes, so they take
 * minutes to complete: the daemon has to cut them.
 * Output, one line per event (seconds since that connection's connect):
 *   OPEN i                 connection i is in place
 *   REFUSED i REASON       the daemon refused it (FERRY/1 ERROR, or REFUSE)
 *   FAILED i REASON        it failed otherwise before it was in place
 *   READY n                all N tried, n in place
 *   CUT i SECS             the daemon closed connection i
 *   END alive=n            SECONDS are over, n connections still open
 * Exit 0 unless the arguments are bad (2).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "channel/channel.h"
#include "channel/keys.h"
#include "channel/transport.h"
#include "proto/msg.h"
#include "util/err.h"

#define MAX_CONNS 256
#define OPENING "FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n"

enum mode { M_SILENT, M_LINE, M_DRIP, M_AUTHDRIP };

struct hold {
	int fd;                 /* -1: not open (refused, failed or cut) */
	struct channel *ch;     /* drip modes: keeps the fd */
	double t0;              /* when it connected */
	uint8_t *drip;          /* the sealed record sent byte by byte */
	size_t drip_len, drip_off;
	double next_drip;
};

struct opts {
	enum mode mode;
	int port, n;
	double seconds, every;
	const char *key, *module;
	int spread;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static int dial(int port, int i, int spread)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_in from = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(0x7f010000u | (uint32_t)(i / 250) << 8 |
							     (uint32_t)(i % 250 + 1)) };
	int one = 1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (spread && bind(fd, (struct sockaddr *)&from, sizeof from) < 0) {
		close(fd);
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* A refusal comes at once as "FERRY/1 ERROR <reason>\n": waits up to ms for
 * a line and copies it (without the newline); 0 if none came. */
static int read_line(int fd, char *line, size_t cap, int ms)
{
	size_t n = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };

	while (n + 1 < cap && poll(&p, 1, ms) == 1) {
		ssize_t r = recv(fd, line + n, 1, 0);
		if (r <= 0 || line[n] == '\n')
			break;
		n++;
	}
	line[n] = '\0';
	return n > 0;
}

/* Seals msg as the next transport record and takes its bytes out of the
 * channel's output buffer, to be sent by hand. */
static int seal(struct channel *ch, const struct msg *m, struct hold *h)
{
	static uint8_t buf[MSG_MAX_ENCODED];
	int n = msg_encode(m, buf, sizeof buf);

	if (n < 0 || chan_send(ch, buf, (size_t)n) < 0 || chan_batch_seal(ch) < 0)
		return -1;
	h->drip_len = ch->out_len - ch->out_off;
	if (!(h->drip = malloc(h->drip_len)))
		return -1;
	memcpy(h->drip, ch->out + ch->out_off, h->drip_len);
	ch->out_len = ch->out_off = 0;
	return 0;
}

static void long_path(char *out, size_t cap)
{
	snprintf(out, cap, "held/");
	memset(out + 5, 'x', cap - 6);
	out[cap - 1] = '\0';
}

static int handshake(struct hold *h, const struct keypair *kp, int i)
{
	struct chan_peer peer;
	struct hello hl = { .version = PROTO_VERSION };
	uint8_t hello[128];

	snprintf(hl.software, sizeof hl.software, "ferry-hold");
	int n = hello_encode(&hl, hello, sizeof hello);
	struct chan_opts co = { .local = kp, .payload = hello, .payload_len = (size_t)n,
				.timeout_ms = 10000 };
	if (chan_client(h->fd, &co, &h->ch, &peer) < 0) {
		say("%s %d %s", strstr(err_msg(), "refused") ? "REFUSED" : "FAILED", i, err_msg());
		return -1;
	}
	chan_set_timeout(h->ch, 10000);
	return 0;
}

static void request(struct msg *m, const char *module, uint8_t op)
{
	memset(m, 0, sizeof *m);
	m->type = MSG_REQUEST;
	m->u.request.op = op;
	m->u.request.protection = PROT_ENCRYPT;
	snprintf(m->u.request.module, sizeof m->u.request.module, "%s", module);
}

/* drip: a throwaway key's REQUEST, a byte at a time. */
static int setup_drip(struct hold *h, int i, const struct opts *o)
{
	struct keypair kp;
	struct msg m;

	if (keys_generate(&kp) < 0 || handshake(h, &kp, i) < 0)
		return -1;
	keys_wipe(&kp);
	request(&m, o->module, OP_PUSH);
	long_path(m.u.request.path, 300);
	return seal(h->ch, &m, h);
}

/* authdrip: an accepted push, then its first record a byte at a time. */
static int setup_authdrip(struct hold *h, int i, const struct opts *o)
{
	static struct msg m;
	struct keypair kp;
	const uint8_t *p;
	size_t n;

	if (keys_load(o->key, &kp) < 0) {
		say("FAILED %d %s", i, err_msg());
		return -1;
	}
	int rc = handshake(h, &kp, i);
	keys_wipe(&kp);
	if (rc < 0)
		return -1;
	request(&m, o->module, OP_PUSH);
	static uint8_t buf[MSG_MAX_ENCODED];
	int len = msg_encode(&m, buf, sizeof buf);
	if (len < 0 || chan_send(h->ch, buf, (size_t)len) < 0 || chan_flush(h->ch) < 0 ||
	    chan_recv(h->ch, &p, &n) < 0 || msg_decode(p, n, &m) < 0) {
		say("FAILED %d %s", i, err_msg());
		return -1;
	}
	if (m.type != MSG_ACCEPT) {
		say("REFUSED %d %s", i, m.type == MSG_REFUSE ? m.u.refuse.reason : msg_type_name(m.type));
		return -1;
	}
	memset(&m, 0, sizeof m);
	m.type = MSG_DIR_BEGIN;
	long_path(m.u.dir_begin.path, 300);
	return seal(h->ch, &m, h);
}

static int setup_one(struct hold *h, int i, const struct opts *o)
{
	char line[512];

	h->fd = dial(o->port, i, o->spread);
	h->t0 = now_s();
	if (h->fd < 0) {
		say("FAILED %d connect: %s", i, strerror(errno));
		return -1;
	}
	if (o->mode == M_LINE && send(h->fd, OPENING, strlen(OPENING), MSG_NOSIGNAL) < 0) {
		say("FAILED %d send: %s", i, strerror(errno));
		return -1;
	}
	if (o->mode == M_SILENT || o->mode == M_LINE) {
		/* a refused connection hears why at once; an accepted one hears
		 * nothing (silent) or the server's opening line (line) */
		if (read_line(h->fd, line, sizeof line, o->mode == M_LINE ? 2000 : 100) &&
		    !strncmp(line, "FERRY/1 ERROR", 13)) {
			say("REFUSED %d %s", i, line);
			return -1;
		}
		return 0;
	}
	int rc = o->mode == M_DRIP ? setup_drip(h, i, o) : setup_authdrip(h, i, o);
	h->next_drip = now_s();
	return rc;
}

static void drop(struct hold *h)
{
	if (h->ch)
		chan_free(h->ch);   /* closes fd */
	else if (h->fd >= 0)
		close(h->fd);
	h->ch = NULL;
	h->fd = -1;
}

static void cut(struct hold *h, int i)
{
	say("CUT %d %.1f", i, now_s() - h->t0);
	drop(h);
}

/* Sends the next byte of a drip when it is due. */
static void drip(struct hold *h, int i, double every)
{
	if (h->fd < 0 || !h->drip || h->drip_off >= h->drip_len || now_s() < h->next_drip)
		return;
	if (send(h->fd, h->drip + h->drip_off, 1, MSG_NOSIGNAL | MSG_DONTWAIT) == 1)
		h->drip_off++;
	else if (errno != EAGAIN)
		cut(h, i);
	h->next_drip += every;
}

/* Reads and drops what the daemon sends; its close is the cut. */
static void drain(struct hold *h, int i)
{
	char buf[4096];
	ssize_t n = recv(h->fd, buf, sizeof buf, MSG_DONTWAIT);

	if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
		cut(h, i);
}

static void hold_all(struct hold *hs, const struct opts *o)
{
	double end = now_s() + o->seconds;
	struct pollfd p[MAX_CONNS];
	int alive = 0;

	while (now_s() < end) {
		for (int i = 0; i < o->n; i++) {
			drip(&hs[i], i, o->every);
			p[i] = (struct pollfd){ .fd = hs[i].fd, .events = POLLIN };
		}
		if (poll(p, (nfds_t)o->n, 50) > 0)
			for (int i = 0; i < o->n; i++)
				if (hs[i].fd >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
					drain(&hs[i], i);
	}
	for (int i = 0; i < o->n; i++) {
		alive += hs[i].fd >= 0;
		drop(&hs[i]);
		free(hs[i].drip);
	}
	say("END alive=%d", alive);
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const char *const modes[] = { "silent", "line", "drip", "authdrip" };

	if (argc < 5)
		return -1;
	o->mode = (enum mode)-1;
	for (int m = 0; m < 4; m++)
		if (!strcmp(argv[1], modes[m]))
			o->mode = (enum mode)m;
	o->port = atoi(argv[2]);
	o->n = atoi(argv[3]);
	o->seconds = atof(argv[4]);
	o->every = 1;
	o->module = "m";
	for (int i = 5; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--every"))
			o->every = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--key"))
			o->key = argv[i + 1];
		else if (!strcmp(argv[i], "--module"))
			o->module = argv[i + 1];
		else if (!strcmp(argv[i], "--spread"))
			o->spread = atoi(argv[i + 1]);
		else
			return -1;
	}
	if ((int)o->mode < 0 || o->port <= 0 || o->n <= 0 || o->n > MAX_CONNS || o->every <= 0 ||
	    (argc - 5) % 2 || (o->mode == M_AUTHDRIP && !o->key))
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	static struct hold hs[MAX_CONNS];
	struct opts o = { 0 };
	int ready = 0;

	if (parse(argc, argv, &o) < 0) {
		fprintf(stderr, "usage: ferry-hold silent|line|drip|authdrip PORT N SECONDS "
				"[--every S] [--key FILE] [--module NAME] [--spread 1]\n");
		return 2;
	}
	for (int i = 0; i < o.n; i++) {
		hs[i].fd = -1;
		if (setup_one(&hs[i], i, &o) == 0) {
			say("OPEN %d", i);
			ready++;
		} else {
			drop(&hs[i]);
		}
	}
	say("READY %d", ready);
	hold_all(hs, &o);
	return 0;
}
