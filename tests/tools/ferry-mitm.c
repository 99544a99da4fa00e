/* SPDX-License-Identifier: MIT */
/* ferry-mitm: a man in the middle who holds keys of his own, for the
 * pairing test. Unlike ferry-proxy (which only forwards or flips bytes), it
 * ends the Noise session on each side: to the client it is a server with
 * its own host key, to the server a client with its own key, and it relays
 * every control message between the two sessions unchanged. A client that
 * pins whatever it is shown would be fooled; `ferry pair` must not be.
 *
 *   ferry-mitm TARGET_PORT [--timeout S]
 *
 * Prints "PORT <n>" (127.0.0.1, a kernel-chosen port), serves one
 * connection, and says on stderr how it ended ("mitm: relayed N messages"). */
#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel/channel.h"
#include "channel/keys.h"
#include "proto/msg.h"
#include "util/err.h"

static void on_alarm(int sig)
{
	(void)sig;
	_exit(3);
}

static int listen_any(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0)
		return -1;
	*port = ntohs(sa.sin_port);
	return fd;
}

static int dial(unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0)
		return -1;
	return fd;
}

/* Moves what `from` has (one message, and those already buffered) to `to`. */
static int relay(struct channel *from, struct channel *to, unsigned long *n)
{
	do {
		const uint8_t *msg;
		size_t len;
		int rc = chan_recv(from, &msg, &len);
		if (rc < 0)
			return rc;
		if ((rc = chan_send(to, msg, len)) < 0)
			return rc;
		(*n)++;
	} while (chan_readable(from));
	return chan_flush(to);
}

int main(int argc, char **argv)
{
	struct keypair host, client;
	struct chan_peer peer;
	struct channel *up = NULL, *down = NULL;
	uint8_t hello[128];
	struct hello h = { .version = PROTO_VERSION };
	unsigned port, target;
	unsigned long n = 0;
	int timeout = 30;

	if (argc < 2)
		return fprintf(stderr, "usage: ferry-mitm TARGET_PORT [--timeout S]\n"), 2;
	target = (unsigned)atoi(argv[1]);
	if (argc == 4 && !strcmp(argv[2], "--timeout"))
		timeout = atoi(argv[3]);
	signal(SIGALRM, on_alarm);
	alarm((unsigned)timeout);
	if (keys_generate(&host) < 0 || keys_generate(&client) < 0)
		return fprintf(stderr, "mitm: keygen: %s\n", err_msg()), 2;
	int lfd = listen_any(&port);
	if (lfd < 0)
		return perror("mitm: listen"), 2;
	printf("PORT %u\n", port);
	fflush(stdout);
	int cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	int sfd = dial(target);
	if (cfd < 0 || sfd < 0)
		return perror("mitm: accept/connect"), 2;
	/* the real server first: its hello is what the client is shown */
	snprintf(h.software, sizeof h.software, "ferry-mitm");
	int hl = hello_encode(&h, hello, sizeof hello);
	struct chan_opts to_server = { .local = &client, .payload = hello, .payload_len = (size_t)hl,
				       .timeout_ms = 10000 };
	if (chan_client(sfd, &to_server, &up, &peer) < 0)
		return fprintf(stderr, "mitm: handshake with the server: %s\n", err_msg()), 2;
	struct chan_opts to_client = { .local = &host, .payload = peer.payload,
				       .payload_len = peer.payload_len, .timeout_ms = 10000 };
	if (chan_server(cfd, &to_client, &down, &peer) < 0)
		return fprintf(stderr, "mitm: handshake with the client: %s\n", err_msg()), 2;
	for (;;) {
		struct pollfd p[2] = { { .fd = chan_fd(down), .events = POLLIN },
				       { .fd = chan_fd(up), .events = POLLIN } };
		if (!chan_readable(down) && !chan_readable(up) && poll(p, 2, -1) < 0)
			break;
		int rc = 0;
		if (chan_readable(down) || (p[0].revents & (POLLIN | POLLHUP)))
			rc = relay(down, up, &n);
		if (rc == 0 && (chan_readable(up) || (p[1].revents & (POLLIN | POLLHUP))))
			rc = relay(up, down, &n);
		if (rc < 0)
			break;
	}
	fprintf(stderr, "mitm: relayed %lu messages\n", n);
	chan_free(up);
	chan_free(down);
	return 0;
}
