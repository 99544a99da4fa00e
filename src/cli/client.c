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
#include "proto/zchunk.h"
#include "session/xfilter.h"
#include "session/zdata.h"
#include "util/config.h"
#include "util/err.h"

/* Declared here and in cmd_xfer.c until client.h may carry it. */

/* --- strings from the peer --------------------------------------------------- */

/* Length of the valid UTF-8 sequence at p, or 0 if it is not one (overlong,
 * surrogate, beyond U+10FFFF, cut short) or encodes a C1 control
 * (U+0080..U+009F, which some terminals obey like their 8-bit bytes). */
static size_t utf8_len(const unsigned char *p)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if (p[0] == 0xc2 || p[0] == 0xe0)
		lo = 0xa0;   /* C1 controls; overlong 3-byte forms */
	else if (p[0] == 0xed)
		hi = 0x9f;   /* surrogates */
	else if (p[0] == 0xf0)
		lo = 0x90;   /* overlong 4-byte forms */
	else if (p[0] == 0xf4)
		hi = 0x8f;   /* beyond U+10FFFF */
	if (p[1] < lo || p[1] > hi)
		return 0;
	/* stops at the first bad byte, so a NUL ends the walk inside the string */
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

static int plain_ascii(unsigned char c)
{
	return c >= 0x20 && c < 0x7f;
}

static int needs_quote(const unsigned char *p)
{
	if (*p == '"')
		return 1;   /* it could pass for the quoted form of another string */
	while (*p) {
		size_t n = plain_ascii(*p) ? 1 : utf8_len(p);
		if (!n)
			return 1;
		p += n;
	}
	return 0;
}

/* Names, link targets, reasons and messages from the peer reach the terminal
 * only through this: a file named "\e]0;...\a\e[2J" must not retitle the
 * window, clear the screen or forge lines. A clean string (printable ASCII
 * and valid UTF-8, so "café" stays readable) is returned as it is; any other
 * is written into buf in double quotes with C0, DEL, C1 and bytes that are
 * not valid UTF-8 as \xHH, and '"' and '\' escaped too, so the quoted form
 * cannot be taken for a clean one. Cut short with "..." if buf is too small
 * (cap >= 16). */
const char *peer_quote(char *buf, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t o = 0;

	if (!needs_quote(p))
		return s;
	buf[o++] = '"';
	while (*p) {
		size_t n = plain_ascii(*p) ? 1 : utf8_len(p);
		int esc = !n || *p == '"' || *p == '\\';
		size_t k = esc ? 4 : n;
		if (o + k + 5 > cap) {   /* room for the piece, '"', "..." and the NUL */
			memcpy(buf + o, "\"...", 4);
			o += 4;
			break;
		}
		if (esc) {
			snprintf(buf + o, 5, "\\x%02x", *p);
			n = 1;
		} else {
			memcpy(buf + o, p, n);
		}
		o += k;
		p += n;
	}
	if (!*p)
		buf[o++] = '"';
	buf[o] = '\0';
	return buf;
}

/* "HOST:7883/backup" reads as module "7883" on the port used: when nothing
 * answers there, or the server has no such module, say what was understood
 * and what to write ("" for any other module name). */
static const char *number_hint(const char *module, unsigned port)
{
	static char hint[200];

	size_t n = strlen(module);

	if (!n || n > 5 || strspn(module, "0123456789") != n)
		return "";
	snprintf(hint, sizeof hint, " (HOST:%.5s/... names module '%.5s' on port %u; for port %.5s "
		 "write ferry://HOST:%.5s/MODULE or --port %.5s)", module, module, port,
		 module, module, module);
	return hint;
}

static int dial(const struct remote *r, int family, int *fdp)
{
	struct addrinfo hints = { .ai_family = family == 4 ? AF_INET : family == 6 ? AF_INET6 :
					       AF_UNSPEC, .ai_socktype = SOCK_STREAM };
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
		return err_set(-e, "cannot connect to %s port %u: %s%s", r->host, r->port,
			       strerror(e), number_hint(r->module, r->port));
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
			"connection, or the server's key was replaced. If you know why, forget the old "
			"key with 'ferry known-hosts --remove %s%s%s' and connect again. Refusing to "
			"connect.", r->display, fpr, r->display, o->known_hosts ? " --known-hosts " : "",
			o->known_hosts ? kh : "");
		return EXIT_HOSTKEY;
	}
	if (rc == KNOWN_HOST_OK || o->pairing)
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
		     const struct keypair *kp, int fd, struct channel **ch, struct hello *server)
{
	struct chan_peer peer;
	uint8_t hello[128];
	struct hello h = { .version = PROTO_VERSION,
			   .features = HELLO_REQ_MORE | HELLO_MORE2 | HELLO_MORE3 |
					HELLO_MORE4 };
	int rc;

	snprintf(h.software, sizeof h.software, "ferry %s", FERRY_VERSION);
	int hl = hello_encode(&h, hello, sizeof hello);
	struct chan_opts co = { .local = kp, .cipher_mask = o->cipher_mask, .payload = hello,
				.payload_len = (size_t)hl, .timeout_ms = o->timeout_ms };
	rc = chan_client(fd, &co, ch, &peer);
	if (rc < 0) {
		char q[4 * MSG_MAX_TEXT + 8];   /* err_msg() holds at most 1023 bytes */
		/* may carry the server's "FERRY/1 ERROR <reason>" */
		die_msg("%s: %s", r->display, peer_quote(q, sizeof q, err_msg()));
		if (rc == -ECONNREFUSED)   /* "FERRY/1 ERROR": busy, or too many failures */
			return EXIT_REFUSED;
		if (rc == -EPIPE || rc == -ECONNRESET)   /* the link broke, as after the handshake */
			return EXIT_SOCKET;
		return rc == -ETIMEDOUT ? EXIT_TIMEOUT : EXIT_PROTOCOL;
	}
	chan_set_timeout(*ch, o->timeout_ms);
	if (hello_decode(peer.payload, peer.payload_len, server) < 0)
		memset(server, 0, sizeof *server);   /* what it knows: the first form only */
	if (o->host_pub)
		memcpy(o->host_pub, peer.pub, KEY_LEN);
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

static int refusal_code(uint16_t code, uint8_t op)
{
	if (code == REF_NOT_FOUND && op != OP_PUSH)
		return EXIT_PARTIAL;   /* the source does not exist, as rsync's link_stat failure */
	return code == REF_NOT_FOUND || code == REF_BAD_PATH ? EXIT_LOCAL : EXIT_REFUSED;
}

static const char *prot_name(int p)
{
	return p == PROT_ENCRYPT ? "encrypt" : p == PROT_INTEGRITY ? "integrity" : "none";
}

/* The ACCEPT may name a stronger level than asked, never a weaker one: a
 * server (or whoever holds its key) answering "none" to "encrypt" would
 * otherwise get a push's data in clear. Nothing but an ERROR is sent then. */
static int check_accept(const struct remote *r, const struct m_request *rq,
			const struct m_accept *acc, struct conn *c)
{
	char why[160];

	if ((acc->flags & ACC_COMPRESS) && !(rq->flags & REQ_COMPRESS)) {
		die_msg("%s: protocol error: the server turned on compression, which was not asked for",
			r->display);
		conn_fail(c, REF_PROTOCOL, "compression was not asked for");
		return EXIT_PROTOCOL;
	}
	if (acc->protection >= rq->protection)
		return 0;
	snprintf(why, sizeof why, "protection '%s' was asked for, the server answered '%s'",
		 prot_name(rq->protection), prot_name(acc->protection));
	die_msg("%s: protocol error: %s; refusing to continue with weaker protection",
		r->display, why);
	conn_fail(c, REF_PROTECTION, why);
	return EXIT_PROTOCOL;
}

static void show_accept(const struct client_opts *o, const struct m_request *rq,
			const struct m_accept *acc, const struct conn *c)
{
	char q[4 * MSG_MAX_NAME + 8];

	if (!o->verbose)
		return;
	fprintf(stderr, "ferry: module '%s'%s%s, protection %s\n", rq->module,
		acc->comment[0] ? ": " : "", peer_quote(q, sizeof q, acc->comment),
		acc->protection != PROT_NONE ? prot_name(acc->protection) :
		c->verify ? "none (whole-file hash checked)" : "none, unverified");
	if (!(rq->flags & REQ_COMPRESS))
		return;
	if (!(acc->flags & ACC_COMPRESS))
		fprintf(stderr, "ferry: module '%s' does not compress: -z has no effect\n", rq->module);
	else
		fprintf(stderr, "ferry: compression: zstd%s%s\n",
			acc->flags & ACC_COMPRESS_AUTO ? ", only while the link is slower than the "
			"compressor (the module's compress = auto)" : "",
			rq->op == OP_PUSH ? "" : ", by the server");
}


/* What the first answer to REQUEST means: 0 (ACCEPT, usable) or an exit
 * code with the failure printed. Every peer string is quoted. */
static int judge_answer(const struct remote *r, const struct client_opts *o,
			const struct m_request *rq, int rc, const struct msg *m,
			struct conn *c, struct m_accept *acc)
{
	char q[4 * MSG_MAX_TEXT + 8];

	if (rc < 0) {
		/* a peer's ERROR arrives as "peer reported: <reason>" */
		die_msg("%s: %s", r->display, peer_quote(q, sizeof q, err_msg()));
		return rc == -EBADMSG ? EXIT_STREAM : rc == -ETIMEDOUT ? EXIT_TIMEOUT : EXIT_SOCKET;
	}
	if (m->type == MSG_REFUSE) {
		/* a snapshot that does not exist is no missing file: said, even so */
		if (m->u.refuse.code == REF_NOT_FOUND && rq->op != OP_PUSH && o->missing_ok &&
		    !strchr(rq->module, '@'))
			return CLIENT_NO_SOURCE;
		die_msg("%s refused: %s%s", r->display, peer_quote(q, sizeof q, m->u.refuse.reason),
			m->u.refuse.code == REF_UNKNOWN_MODULE ?
			number_hint(rq->module, FERRY_DEFAULT_PORT) : "");
		return refusal_code(m->u.refuse.code, rq->op);
	}
	if (m->type != MSG_ACCEPT) {
		die_msg("%s: protocol error: expected ACCEPT, got %s", r->display,
			msg_type_name(m->type));
		return EXIT_PROTOCOL;
	}
	if ((rc = check_accept(r, rq, &m->u.accept, c)) != 0)
		return rc;
	*acc = m->u.accept;
	conn_set_protection(c, acc->protection, rq->flags);
	ratelimit_init(&c->rl, o->bwlimit);
	if (zdata_setup(c, acc->flags, rq->op == OP_PUSH, o->compress_level) < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	show_accept(o, rq, acc, c);
	return 0;
}

/* The REQUEST as this server can read it: one older than the REQUEST's
 * extensions gets none (a pull's "I know FILE_VANISHED" is left out), and
 * an option that needs them is refused here, in one line. */
static int fit_request(const struct remote *r, const struct client_opts *o,
		       const struct hello *server, struct m_request *q)
{
	char sw[4 * MSG_MAX_SOFTWARE + 8];

	if ((o->partial_delete || (q->flags2 & (REQ2_SAFE_LINKS | REQ2_MODIFY_WINDOW))) &&
	    !(server->features & HELLO_MORE2)) {
		die_msg("%s: the server (%s) is older than %s: update it, or leave %s out",
			r->display, server->software[0] ?
			peer_quote(sw, sizeof sw, server->software) : "unknown",
			o->partial_delete ? "--delete with -R or --files-from (it would delete in "
			"the directories on the way)" : q->flags2 & REQ2_SAFE_LINKS ? "--safe-links" :
			"--modify-window", o->partial_delete ? "--delete" : "it");
		return EXIT_REFUSED;
	}
	if ((q->flags2 & REQ2_DELETE_DELAY) && !(server->features & HELLO_MORE3)) {
		die_msg("%s: the server (%s) is older than --delete-delay and --delete-after: update "
			"it, or use --delete (which deletes during the transfer)", r->display,
			server->software[0] ? peer_quote(sw, sizeof sw, server->software) : "unknown");
		return EXIT_REFUSED;
	}
	if (!(server->features & HELLO_MORE3))
		q->flags2 &= ~REQ2_CHG_CSUM;
	if (!(server->features & HELLO_MORE4))
		q->flags2 &= ~(REQ2_CHG_TARGET | REQ2_NOOP);
	if (server->features & HELLO_REQ_MORE)
		return 0;
	q->flags2 &= ~REQ2_VANISHED;
	if (!(q->flags & REQ_MAX_DELETE) && !q->flags2)
		return 0;
	die_msg("%s: the server (%s) is older than --max-delete, --max-size and --min-size: "
		"update it, or leave them out", r->display,
		server->software[0] ? peer_quote(sw, sizeof sw, server->software) : "unknown");
	return EXIT_REFUSED;
}

int client_open(const struct remote *r, const struct client_opts *o, const struct m_request *rq,
		struct conn *c, struct m_accept *acc)
{
	struct hello server;
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
	if (dial(r, o->family, &fd) < 0) {
		keys_wipe(&kp);
		free(m);
		return die_msg("%s", err_msg()), EXIT_SOCKET;
	}
	rc = handshake(r, o, &kp, fd, &ch, &server);
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
	if ((rc = fit_request(r, o, &server, &m->u.request)) != 0) {
		chan_free(ch);
		c->ch = NULL;
		free(m);
		return rc;
	}
	rc = conn_send(c, m);
	if (rc == 0 && (rq->flags & REQ_FILTER) && o->filter)
		rc = xfilter_send(c, o->filter);
	if (rc == 0)
		rc = conn_flush(c);
	if (rc == 0)
		rc = conn_recv(c, m);
	rc = judge_answer(r, o, rq, rc, m, c, acc);
	free(m);
	if (rc) {
		chan_free(ch);
		c->ch = NULL;
	}
	return rc;
}
