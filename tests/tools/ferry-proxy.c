/* SPDX-License-Identifier: MIT */
/* ferry-proxy: a man in the middle for the e2e tests. A TCP proxy on
 * 127.0.0.1 (a kernel-chosen port, printed as "PORT <n>" on stdout) that
 * forwards to 127.0.0.1:TARGET, one connection at a time, and can tamper:
 *
 *   ferry-proxy TARGET [--conns N] [--timeout S]
 *               [--flip-after-handshake [--dir c2s|s2c] [--skip N] [--xor X]]
 *               [--strip-aesgcm] [--rate BYTES_PER_SEC]
 *
 * --flip-after-handshake  parses the FERRY/1 framing of the chosen direction
 *                         (the opening line up to '\n', then the Noise XX
 *                         handshake messages, u16be length + body: two from
 *                         the client, one from the server), skips --skip
 *                         bytes of transport and XORs the next byte with X
 *                         (default 0x01).
 * --strip-aesgcm          removes "Noise_XX_25519_AESGCM_BLAKE2b " from the
 *                         client's opening line (a downgrade attempt).
 *
 * --rate                  forwards at most that many bytes per second in each
 *                         direction (a slow link, with small socket buffers so
 *                         the sender feels it soon).
 *
 * What it did goes to stderr ("proxy: flipped ...", "proxy: stripped ...");
 * after each connection "BYTES c2s=N s2c=M" (every byte forwarded) to stdout.
 * Exits after N connections (default 1) or S seconds (default 60). */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define STRIP_NAME "Noise_XX_25519_AESGCM_BLAKE2b "
#define LINE_MAX_LEN 4096
#define BUF_SZ 65536

enum st { S_LINE, S_LEN1, S_LEN2, S_BODY, S_TRANSPORT };

struct dir {
	const char *name;      /* "c2s" / "s2c" */
	int from, to;
	enum st state;
	int hs_left;           /* handshake messages still expected in this direction */
	unsigned hs_len, hs_got;
	char line[LINE_MAX_LEN + 1];
	size_t line_len;
	uint64_t transport;    /* transport bytes seen */
	uint64_t total;        /* every byte read from `from` */
	int flip;              /* this direction flips */
	int strip;             /* this direction strips AESGCM from the line */
	int flipped;
	int eof;               /* source closed */
	uint8_t out[2 * BUF_SZ + LINE_MAX_LEN];
	size_t out_len, out_off;
};

static uint64_t opt_skip;
static unsigned opt_xor = 0x01;
static uint64_t opt_rate;   /* bytes/s per direction; 0 = unlimited */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* --rate: sleeps until `total` bytes since `start` fit the rate. */
static void pace(double start, uint64_t total)
{
	if (!opt_rate)
		return;
	double due = start + (double)total / (double)opt_rate, t = now_s();
	if (due <= t)
		return;
	struct timespec ts = { .tv_sec = (time_t)(due - t),
			       .tv_nsec = (long)((due - t - (double)(time_t)(due - t)) * 1e9) };
	nanosleep(&ts, NULL);
}

static void on_alarm(int sig)
{
	(void)sig;
	static const char msg[] = "proxy: timeout, exiting\n";
	if (write(2, msg, sizeof msg - 1) < 0) {
		/* nothing to do */
	}
	_exit(0);
}

static void emit(struct dir *d, const void *p, size_t n)
{
	memcpy(d->out + d->out_len, p, n);
	d->out_len += n;
}

static void line_done(struct dir *d)
{
	if (d->strip) {
		char *s = strstr(d->line, STRIP_NAME);
		if (s) {
			size_t k = strlen(STRIP_NAME);
			memmove(s, s + k, strlen(s + k) + 1);
			d->line_len -= k;
			fprintf(stderr, "proxy: stripped AESGCM, client line now: %s", d->line);
		} else {
			fprintf(stderr, "proxy: nothing to strip in client line: %s", d->line);
		}
	}
	emit(d, d->line, d->line_len);
	d->line_len = 0;
	d->state = d->hs_left ? S_LEN1 : S_TRANSPORT;
}

/* Runs the framing parser over n input bytes, filling d->out. */
static void process(struct dir *d, uint8_t *p, size_t n)
{
	size_t i = 0;

	while (i < n) {
		switch (d->state) {
		case S_LINE:
			if (d->line_len < LINE_MAX_LEN)
				d->line[d->line_len++] = (char)p[i];
			d->line[d->line_len] = '\0';
			if (p[i++] == '\n' || d->line_len >= LINE_MAX_LEN)
				line_done(d);
			break;
		case S_LEN1:
			d->hs_len = (unsigned)p[i] << 8;
			emit(d, &p[i++], 1);
			d->state = S_LEN2;
			break;
		case S_LEN2:
			d->hs_len |= p[i];
			emit(d, &p[i++], 1);
			d->hs_got = 0;
			if (d->hs_len)
				d->state = S_BODY;
			else   /* an empty handshake message */
				d->state = --d->hs_left ? S_LEN1 : S_TRANSPORT;
			break;
		case S_BODY: {
			size_t k = n - i < d->hs_len - d->hs_got ? n - i : d->hs_len - d->hs_got;
			emit(d, p + i, k);
			i += k;
			d->hs_got += (unsigned)k;
			if (d->hs_got == d->hs_len)
				d->state = --d->hs_left ? S_LEN1 : S_TRANSPORT;
			break;
		}
		case S_TRANSPORT: {
			size_t k = n - i;
			if (d->flip && !d->flipped && opt_skip >= d->transport &&
			    opt_skip < d->transport + k) {
				size_t at = i + (size_t)(opt_skip - d->transport);
				uint8_t before = p[at];
				p[at] ^= (uint8_t)opt_xor;
				d->flipped = 1;
				fprintf(stderr, "proxy: flipped %s transport byte %llu: 0x%02x -> 0x%02x\n",
					d->name, (unsigned long long)opt_skip, before, p[at]);
			}
			emit(d, p + i, k);
			d->transport += k;
			i = n;
			break;
		}
		}
	}
}

static int listen_any(int *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof a;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (bind(fd, (struct sockaddr *)&a, sizeof a) < 0 || listen(fd, 16) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &al) < 0) {
		close(fd);
		return -1;
	}
	*port = ntohs(a.sin_port);
	return fd;
}

static int dial(int port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&a, sizeof a) < 0) {
		close(fd);
		return -1;
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* Forwards one connection in both directions until both are closed. */
static void relay(int cfd, int sfd, int flip_s2c, int flip, int strip)
{
	struct dir *d = calloc(2, sizeof *d);
	uint8_t buf[BUF_SZ];
	double start = now_s();
	/* a slow link reads in small pieces, so the pace is smooth */
	size_t rd_max = opt_rate && opt_rate / 50 < sizeof buf ? (size_t)(opt_rate / 50) + 1 : sizeof buf;

	if (!d) {
		perror("proxy: calloc");
		return;
	}
	d[0] = (struct dir){ .name = "c2s", .from = cfd, .to = sfd, .hs_left = 2,
			     .flip = flip && !flip_s2c, .strip = strip };
	d[1] = (struct dir){ .name = "s2c", .from = sfd, .to = cfd, .hs_left = 1,
			     .flip = flip && flip_s2c };
	for (;;) {
		struct pollfd pf[4];
		int map[4], np = 0;
		for (int k = 0; k < 2; k++) {
			if (d[k].out_len > d[k].out_off) {
				map[np] = 2 * k + 1;
				pf[np++] = (struct pollfd){ .fd = d[k].to, .events = POLLOUT };
			} else if (!d[k].eof) {
				map[np] = 2 * k;
				pf[np++] = (struct pollfd){ .fd = d[k].from, .events = POLLIN };
			}
		}
		if (np == 0)
			break;
		if (poll(pf, (nfds_t)np, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		int dead = 0;
		for (int q = 0; q < np; q++) {
			if (!pf[q].revents)
				continue;
			struct dir *x = &d[map[q] / 2];
			if (map[q] & 1) {
				ssize_t w = write(x->to, x->out + x->out_off, x->out_len - x->out_off);
				if (w < 0 && errno != EINTR && errno != EAGAIN) {
					dead = 1;   /* the receiving end went away */
					break;
				}
				if (w > 0)
					x->out_off += (size_t)w;
				if (x->out_off == x->out_len) {
					x->out_off = x->out_len = 0;
					if (x->eof)
						shutdown(x->to, SHUT_WR);
				}
			} else {
				pace(start, x->total);
				ssize_t r = read(x->from, buf, rd_max);
				if (r < 0 && (errno == EINTR || errno == EAGAIN))
					continue;
				if (r <= 0) {
					x->eof = 1;
					if (x->state == S_LINE && x->line_len)
						emit(x, x->line, x->line_len);   /* unterminated line */
					if (x->out_len == x->out_off)
						shutdown(x->to, SHUT_WR);
					continue;
				}
				x->total += (uint64_t)r;
				process(x, buf, (size_t)r);
			}
		}
		if (dead)
			break;
	}
	for (int k = 0; k < 2; k++)
		if ((d[k].flip) && !d[k].flipped)
			fprintf(stderr, "proxy: %s ended after %llu transport bytes, nothing flipped\n",
				d[k].name, (unsigned long long)d[k].transport);
	printf("BYTES c2s=%llu s2c=%llu\n", (unsigned long long)d[0].total,
	       (unsigned long long)d[1].total);
	fflush(stdout);
	free(d);
}

static void usage(void)
{
	fprintf(stderr, "usage: ferry-proxy TARGET_PORT [--conns N] [--timeout S] "
		"[--flip-after-handshake [--dir c2s|s2c] [--skip N] [--xor X]] [--strip-aesgcm] "
		"[--rate BYTES_PER_SEC]\n");
	exit(1);
}

int main(int argc, char **argv)
{
	int target = 0, conns = 1, timeout = 60, flip = 0, flip_s2c = 0, strip = 0, port, lfd;

	if (argc < 2)
		usage();
	target = atoi(argv[1]);
	for (int i = 2; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--flip-after-handshake")) {
			flip = 1;
		} else if (!strcmp(a, "--strip-aesgcm")) {
			strip = 1;
		} else if (!strcmp(a, "--dir") && v) {
			if (!strcmp(v, "s2c"))
				flip_s2c = 1;
			else if (strcmp(v, "c2s"))
				usage();
			i++;
		} else if (!strcmp(a, "--skip") && v) {
			opt_skip = strtoull(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "--xor") && v) {
			opt_xor = (unsigned)strtoul(v, NULL, 0) & 0xff;
			if (!opt_xor)
				usage();
			i++;
		} else if (!strcmp(a, "--rate") && v) {
			opt_rate = strtoull(v, NULL, 0);
			i++;
		} else if (!strcmp(a, "--conns") && v) {
			conns = atoi(v);
			i++;
		} else if (!strcmp(a, "--timeout") && v) {
			timeout = atoi(v);
			i++;
		} else {
			usage();
		}
	}
	if (target <= 0 || target > 65535 || conns <= 0 || timeout <= 0)
		usage();
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm((unsigned)timeout);
	if ((lfd = listen_any(&port)) < 0) {
		perror("proxy: listen");
		return 1;
	}
	printf("PORT %d\n", port);
	fflush(stdout);
	for (int n = 0; n < conns; n++) {
		int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0) {
			if (errno == EINTR) {
				n--;
				continue;
			}
			perror("proxy: accept");
			return 1;
		}
		int one = 1, small = 65536;
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
		if (opt_rate)
			setsockopt(cfd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
		int sfd = dial(target);
		if (sfd < 0) {
			perror("proxy: connect to target");
			close(cfd);
			continue;
		}
		fprintf(stderr, "proxy: connection %d\n", n + 1);
		relay(cfd, sfd, flip_s2c, flip, strip);
		close(cfd);
		close(sfd);
	}
	fprintf(stderr, "proxy: done\n");
	return 0;
}
