/* SPDX-License-Identifier: MIT */
#include "cli/client.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel/keys.h"
#include "cli/cli.h"
#include "util/err.h"

static int dial(const struct remote *r, int *fdp)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	char port[8];
	int fd = -1, e = 0;

	snprintf(port, sizeof port, "%u", r->port);
	int g = getaddrinfo(r->host, port, &hints, &res);
	if (g)
		return err_set(-EHOSTUNREACH, "%s: %s", r->host, gai_strerror(g));
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		e = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		return err_sys(-e, "cannot connect to %s port %u", r->host, r->port);
	int one = 1;
	/* Decisions and acks are small; they must not wait for Nagle. */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	*fdp = fd;
	return 0;
}

static int ask_yes(const char *host, const char *fpr)
{
	char line[16];

	fprintf(stderr, "The authenticity of host '%s' can't be established.\n"
		"Its key fingerprint is %s.\n"
		"Are you sure you want to continue connecting (yes/no)? ", host, fpr);
	fflush(stderr);
	if (!fgets(line, sizeof line, stdin))
		return 0;
	return !strcmp(line, "yes\n") || !strcmp(line, "y\n");
}

static int check_host(const struct remote *r, const struct client_opts *o, const uint8_t pub[KEY_LEN])
{
	char kh[4096], fpr[KEY_FPR_LEN];
	int rc;

	key_fingerprint(pub, fpr);
	if (o->known_hosts)
		snprintf(kh, sizeof kh, "%s", o->known_hosts);
	else if (ferry_path(kh, sizeof kh, "known_hosts") < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	rc = known_hosts_check(kh, r->display, pub);
	if (rc < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	if (rc == KNOWN_HOST_CHANGED) {
		die_msg("the host key of %s has CHANGED (now %s); someone may be intercepting the "
			"connection, or the server's key was replaced. If you know why, remove its "
			"line from %s. Refusing to connect.", r->display, fpr, kh);
		return EXIT_HOSTKEY;
	}
	if (rc == KNOWN_HOST_OK)
		return 0;
	if (!o->accept_new && !(isatty(STDIN_FILENO) && ask_yes(r->display, fpr))) {
		die_msg("host %s is not known (key %s): refusing without confirmation; use "
			"--accept-new or add it to %s", r->display, fpr, kh);
		return EXIT_HOSTKEY;
	}
	if (!o->known_hosts)
		ferry_dir_ensure();
	if (known_hosts_add(kh, r->display, pub) < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	if (!o->quiet)
		fprintf(stderr, "ferry: added %s (key %s) to %s\n", r->display, fpr, kh);
	return 0;
}

/* The key first: a local problem must not look like a failed login to the server. */
static int load_identity(const struct client_opts *o, struct keypair *kp)
{
	char idpath[4096];

	if (o->identity)
		snprintf(idpath, sizeof idpath, "%s", o->identity);
	else if (ferry_path(idpath, sizeof idpath, "id_ferry") < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	if (keys_load(idpath, kp) < 0) {
		die_msg("%s%s", err_msg(), o->identity ? "" : " (create one with 'ferry keygen')");
		return EXIT_LOCAL;
	}
	return 0;
}

static int handshake(const struct remote *r, const struct client_opts *o,
		     const struct keypair *kp, int fd, struct channel **ch)
{
	struct chan_peer peer;
	uint8_t hello[128];
	struct hello h = { .version = PROTO_VERSION };
	int rc;

	snprintf(h.software, sizeof h.software, "ferry %s", FERRY_VERSION);
	int hl = hello_encode(&h, hello, sizeof hello);
	struct chan_opts co = { .local = kp, .cipher_mask = o->cipher_mask, .payload = hello,
				.payload_len = (size_t)hl, .timeout_ms = o->timeout_ms };
	rc = chan_client(fd, &co, ch, &peer);
	if (rc < 0) {
		die_msg("%s: %s", r->display, err_msg());
		if (rc == -ECONNREFUSED)   /* "FERRY/1 ERROR": busy, or too many failures */
			return EXIT_REFUSED;
		return rc == -ETIMEDOUT ? EXIT_TIMEOUT : EXIT_PROTOCOL;
	}
	chan_set_timeout(*ch, o->timeout_ms);
	if ((rc = check_host(r, o, peer.pub)) != 0) {
		chan_free(*ch);
		*ch = NULL;
		return rc;
	}
	if (o->verbose) {
		char fpr[KEY_FPR_LEN];
		key_fingerprint(peer.pub, fpr);
		fprintf(stderr, "ferry: connected to %s, Noise_XX_25519_%s_BLAKE2b (%s), host key %s\n",
			r->display, chan_cipher_name(peer.cipher), chan_backend_name(), fpr);
	}
	return 0;
}

static int refusal_code(uint16_t code)
{
	return code == REF_NOT_FOUND || code == REF_BAD_PATH ? EXIT_LOCAL : EXIT_REFUSED;
}

int client_open(const struct remote *r, const struct client_opts *o, const struct m_request *rq,
		struct conn *c, struct m_accept *acc)
{
	struct msg *m = calloc(1, sizeof *m);
	struct channel *ch = NULL;
	int fd = -1, rc;

	if (!m)
		return die_msg("out of memory"), EXIT_LOCAL;
	struct keypair kp;
	if ((rc = load_identity(o, &kp)) != 0) {
		free(m);
		return rc;
	}
	if (dial(r, &fd) < 0) {
		keys_wipe(&kp);
		free(m);
		return die_msg("%s", err_msg()), EXIT_SOCKET;
	}
	rc = handshake(r, o, &kp, fd, &ch);
	keys_wipe(&kp);
	if (rc != 0) {
		if (!ch)
			close(fd);
		free(m);
		return rc;
	}
	memset(c, 0, sizeof *c);
	c->ch = ch;
	m->type = MSG_REQUEST;
	m->u.request = *rq;
	rc = conn_send(c, m);
	if (rc == 0)
		rc = conn_flush(c);
	if (rc == 0)
		rc = conn_recv(c, m);
	if (rc < 0) {
		die_msg("%s: %s", r->display, err_msg());
		rc = rc == -EBADMSG ? EXIT_STREAM : rc == -ETIMEDOUT ? EXIT_TIMEOUT : EXIT_SOCKET;
	} else if (m->type == MSG_REFUSE) {
		die_msg("%s refused: %s", r->display, m->u.refuse.reason);
		rc = refusal_code(m->u.refuse.code);
	} else if (m->type != MSG_ACCEPT) {
		die_msg("%s: protocol error: expected ACCEPT, got %s", r->display,
			msg_type_name(m->type));
		rc = EXIT_PROTOCOL;
	} else {
		*acc = m->u.accept;
		conn_set_protection(c, acc->protection, rq->flags);
		ratelimit_init(&c->rl, o->bwlimit);
		if (o->verbose)
			fprintf(stderr, "ferry: module '%s'%s%s, protection %s\n", rq->module,
				acc->comment[0] ? ": " : "", acc->comment,
				acc->protection == 2 ? "encrypt" :
				acc->protection == 1 ? "integrity" :
				c->verify ? "none (whole-file hash checked)" : "none, unverified");
	}
	free(m);
	if (rc) {
		chan_free(ch);
		c->ch = NULL;
	}
	return rc;
}
