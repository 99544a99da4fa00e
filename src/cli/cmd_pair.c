/* SPDX-License-Identifier: MIT */
/* ferry pair: the first contact without copying keys by hand.
 *   on the box:  ferry pair MODULE [--config FILE] [--valid DURATION]
 *                shows a one-time code and waits (cli/pair_box.c)
 *   on the PC:   ferry pair HOST[:MODULE] CODE [--identity F] [--known-hosts F] [--port N]
 *                proves the code to the box inside the Noise session
 *                (CPace, channel/pake.h); on success the box authorizes
 *                this side's key for the module and this side pins the
 *                box's host key in known_hosts. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "channel/keys.h"
#include "channel/pake.h"
#include "cli/cli.h"
#include "cli/client.h"
#include "cli/pair_box.h"
#include "cli/remote.h"
#include "session/pairsrv.h"
#include "util/err.h"

#define PAIR_USAGE "usage: ferry pair MODULE [--config FILE] [--valid DURATION]   (on the box)\n" \
		   "       ferry pair HOST[:MODULE] CODE [--identity FILE] [--known-hosts FILE] " \
		   "[--port N]   (on the client)"
#define DEFAULT_CONFIG "/etc/ferry/ferry.conf"
#define DEFAULT_VALID_S 300
#define MAX_VALID_S 3600

/* HOST, HOST:MODULE, ferry://HOST[:PORT][/MODULE]: the module may be left
 * out (the box knows which one its code is for). */
static int pair_remote(const char *arg, unsigned port, struct remote *r)
{
	char buf[600];
	size_t n = strlen(arg);

	if (remote_parse(arg, port, r) == 0)
		return 0;
	if (n + 3 > sizeof buf)
		return err_set(-EINVAL, "%s: too long", arg);
	while (n && (arg[n - 1] == ':' || arg[n - 1] == '/'))
		n--;
	snprintf(buf, sizeof buf, "%.*s%s-", (int)n, arg, !strncmp(arg, "ferry://", 8) ? "/" : ":");
	if (remote_parse(buf, port, r) < 0)
		return err_set(-EINVAL, "%s: not a HOST, HOST:MODULE or ferry://HOST:PORT", arg);
	r->module[0] = '\0';
	return 0;
}

static int refused(const struct remote *r, const struct msg *m)
{
	char q[4 * MSG_MAX_TEXT + 8];

	die_msg("%s refused: %s", r->display, peer_quote(q, sizeof q, m->u.refuse.reason));
	return EXIT_REFUSED;
}

/* The next message of the pairing: `want`, or a refusal (an exit code). */
static int next(struct conn *c, const struct remote *r, struct msg *m, uint8_t want)
{
	char q[4 * MSG_MAX_TEXT + 8];
	int rc = conn_recv(c, m);

	if (rc < 0) {
		die_msg("%s: %s", r->display, peer_quote(q, sizeof q, err_msg()));
		return rc == -ETIMEDOUT ? EXIT_TIMEOUT : EXIT_SOCKET;
	}
	if (m->type == MSG_REFUSE)
		return refused(r, m);
	if (m->type != want) {
		die_msg("%s: protocol error: expected %s, got %s", r->display, msg_type_name(want),
			msg_type_name(m->type));
		return EXIT_PROTOCOL;
	}
	return 0;
}

/* CPace with the box: 0 when both proved the code (*module set), or an
 * exit code with the failure printed. */
static int prove(struct conn *c, const struct remote *r, const char *code, char *module,
		 size_t mcap)
{
	struct msg *m = calloc(1, sizeof *m);
	uint8_t tag[PAKE_TAG_LEN];
	struct pake p;
	int rc;

	if (!m)
		return die_msg("out of memory"), EXIT_LOCAL;
	if (pake_start(&p, 1, (const uint8_t *)code, strlen(code), (const uint8_t *)PAIR_CI,
		       strlen(PAIR_CI), chan_handshake_hash(c->ch), 64, NULL) < 0) {
		free(m);
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	}
	m->type = MSG_PAKE;
	memcpy(m->u.pake.share, p.mine, sizeof m->u.pake.share);
	rc = conn_send(c, m) == 0 && conn_flush(c) == 0 ? next(c, r, m, MSG_PAKE) : EXIT_SOCKET;
	if (rc == 0 && pake_finish(&p, m->u.pake.share) < 0) {
		die_msg("%s: %s", r->display, err_msg());
		rc = EXIT_PROTOCOL;
	}
	if (rc == 0) {
		*m = (struct msg){ .type = MSG_PAKE_TAG };
		pake_tag(&p, tag);
		memcpy(m->u.pake_tag.tag, tag, sizeof tag);
		rc = conn_send(c, m) == 0 && conn_flush(c) == 0 ? next(c, r, m, MSG_PAKE_TAG)
								 : EXIT_SOCKET;
	}
	if (rc == 0)
		memcpy(tag, m->u.pake_tag.tag, sizeof tag);
	if (rc == 0 && pake_check(&p, tag) < 0) {
		die_msg("%s did not prove that it knows the code: someone may be in the middle. "
			"Nothing was pinned; do not use this connection", r->display);
		rc = EXIT_HOSTKEY;
	}
	if (rc == 0)
		snprintf(module, mcap, "%s", m->u.pake_tag.module);
	pake_wipe(&p);
	free(m);
	return rc;
}

/* The box's key, proved by the code, goes into known_hosts. */
static int pin(const struct remote *r, const struct client_opts *co, const uint8_t *pub,
	       char *kh, size_t cap)
{
	if (co->known_hosts)
		snprintf(kh, cap, "%s", co->known_hosts);
	else if (ferry_path(kh, cap, "known_hosts") < 0 || ferry_dir_ensure() < 0)
		return -1;
	int k = known_hosts_check(kh, r->display, pub);
	if (k < 0)
		return -1;
	return k == KNOWN_HOST_OK ? 0 : known_hosts_add(kh, r->display, pub);
}

static int pair_client(const char *arg, const char *typed, struct client_opts *co, unsigned port)
{
	char code[PAKE_CODE_SYMBOLS + 1], module[MSG_MAX_NAME + 1], kh[4096];
	char hfpr[KEY_FPR_LEN], mq[4 * MSG_MAX_NAME + 8];
	uint8_t host_pub[KEY_LEN];
	struct remote r;
	struct m_request rq = { .op = OP_PAIR, .protection = PROT_ENCRYPT };
	struct m_accept acc;
	struct conn c = { 0 };
	int rc;

	if (!pake_available())
		return die_msg("pair: this ferry was built without pairing (its libsodium is a "
			       "minimal build, without ristretto255)"), EXIT_LOCAL;
	if (pake_code_read(typed, code) < 0)
		return die_msg("pair: %s", err_msg()), EXIT_USAGE;
	if (pair_remote(arg, port ? port : FERRY_DEFAULT_PORT, &r) < 0)
		return die_msg("pair: %s", err_msg()), EXIT_USAGE;
	snprintf(rq.module, sizeof rq.module, "%s", r.module);
	co->pairing = 1;
	co->host_pub = host_pub;
	if ((rc = client_open(&r, co, &rq, &c, &acc)) != 0)
		return rc;
	rc = prove(&c, &r, code, module, sizeof module);
	explicit_bzero(code, sizeof code);
	chan_free(c.ch);
	if (rc != 0)
		return rc;
	if (pin(&r, co, host_pub, kh, sizeof kh) < 0)
		return die_msg("paired, but the host key was not pinned: %s", err_msg()), EXIT_LOCAL;
	key_fingerprint(host_pub, hfpr);
	const char *mod = peer_quote(mq, sizeof mq, module);
	if (!co->quiet)
		printf("Paired with %s: module '%s' now authorizes this key.\n"
		       "The box's key %s is pinned in %s.\n"
		       "Next: ferry push DIR %s:%s   (or ferry ls %s:%s)\n", r.display, mod, hfpr, kh,
		       r.display, mod, r.display, mod);
	return EXIT_OK;
}

int cmd_pair(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "valid", required_argument, NULL, 'v' },
		{ "identity", required_argument, NULL, 'i' },
		{ "known-hosts", required_argument, NULL, 'k' },
		{ "port", required_argument, NULL, 'P' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct client_opts co = { .protection = PROT_ENCRYPT, .timeout_ms = 30000 };
	const char *config = NULL;
	long valid = DEFAULT_VALID_S;
	unsigned port = 0;
	int ch, client_only = 0, box_only = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "i:q46", opts, NULL)) != -1) {
		int64_t d;
		char *end;
		switch (ch) {
		case 'c': config = optarg; box_only = 1; break;
		case 'v':
			d = strtol(optarg, &end, 10);
			d *= !strcmp(end, "m") ? 60 : !strcmp(end, "h") ? 3600 :
			     !*end || !strcmp(end, "s") ? 1 : 0;
			if (end == optarg || d < 1 || d > MAX_VALID_S)
				return die_msg("pair: --valid: a duration from 1s to 1h, as 90s, 5m "
					       "or 1h ('%s')", optarg), EXIT_USAGE;
			valid = (long)d;
			box_only = 1;
			break;
		case 'i': co.identity = optarg; client_only = 1; break;
		case 'k': co.known_hosts = optarg; client_only = 1; break;
		case 'q': co.quiet = 1; break;
		case '4': co.family = 4; client_only = 1; break;
		case '6': co.family = 6; client_only = 1; break;
		case 'P':
			port = (unsigned)strtoul(optarg, &end, 10);
			if (end == optarg || *end || !port || port > 65535)
				return die_msg("pair: bad --port '%s'", optarg), EXIT_USAGE;
			client_only = 1;
			break;
		default:
			return die_msg("%s", PAIR_USAGE), EXIT_USAGE;
		}
	}
	int n = argc - optind;
	if (n == 1 && !client_only)
		return pair_box(config ? config : DEFAULT_CONFIG, argv[optind], valid);
	if (n == 2 && !box_only)
		return pair_client(argv[optind], argv[optind + 1], &co, port);
	return die_msg("%s", PAIR_USAGE), EXIT_USAGE;
}
