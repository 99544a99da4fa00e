/* SPDX-License-Identifier: MIT */
/* ferry verify HOST:MODULE | MODULE | DIR [--if-older D] [--restart]: the
 * snapshot module's verify pass, asked of the box by a client whose key the
 * module authorizes (PROTOCOL.md section 10), or run on the box itself (as
 * ferry admin verify). The box reads; this side shows what it says. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/remote.h"
#include "cli/verify_out.h"
#include "util/config.h"
#include "util/err.h"
#include "util/retention.h"

#define VERIFY_USAGE "usage: ferry verify HOST:MODULE|MODULE|DIR [--if-older D] [--restart] " \
		     "[--config FILE] [--identity FILE] [--known-hosts FILE] [--port N]"

struct verify_cli {
	struct client_opts co;
	struct m_verify q;
	unsigned port;
};

/* The box's messages until its final VERIFY_STATUS. */
static int follow(struct conn *c, const struct remote *rm, struct verify_report *r)
{
	struct msg *m = calloc(1, sizeof *m);
	char q1[4 * MSG_MAX_NAME + 8], q2[4 * MSG_MAX_PATH + 8];
	int rc = 0;

	if (!m)
		return err_set(-ENOMEM, "out of memory");
	while (rc == 0 && (rc = conn_recv(c, m)) == 0) {
		if (m->type == MSG_VERIFY_BAD) {
			verify_print_bad(NULL, peer_quote(q1, sizeof q1, m->u.verify_bad.where),
					 peer_quote(q2, sizeof q2, m->u.verify_bad.path));
			continue;
		}
		if (m->type != MSG_VERIFY_STATUS) {
			rc = err_set(-EBADMSG, "%s: protocol: unexpected %s", rm->display,
				     msg_type_name(m->type));
			break;
		}
		const struct m_verify_status *v = &m->u.verify_status;
		*r = (struct verify_report){ .files = v->files, .bytes = v->bytes, .bad = v->bad,
					     .unhashed = v->unhashed, .skipped = v->skipped,
					     .skipped_run = v->skipped_run };
		if (v->final)
			break;
		verify_print_progress(NULL, r, (double)v->ms / 1e3);
	}
	free(m);
	return rc;
}

static int remote_verify(const char *arg, const struct verify_cli *x)
{
	struct remote rm;
	struct m_request rq = { .op = OP_VERIFY, .protection = (uint8_t)x->co.protection };
	struct m_accept acc;
	struct conn c = { 0 };
	struct msg m = { .type = MSG_VERIFY };
	struct verify_report r = { 0 };
	int rc;

	if (remote_parse(arg, x->port ? x->port : FERRY_DEFAULT_PORT, &rm) < 0)
		return die_msg("verify: %s", err_msg()), EXIT_USAGE;
	snprintf(rq.module, sizeof rq.module, "%s", rm.module);
	snprintf(rq.path, sizeof rq.path, "%s", rm.path);
	if ((rc = client_open(&rm, &x->co, &rq, &c, &acc)) != 0)
		return rc;
	m.u.verify = x->q;
	if ((rc = conn_send(&c, &m)) == 0 && (rc = conn_flush(&c)) == 0)
		rc = follow(&c, &rm, &r);
	chan_free(c.ch);
	if (rc < 0) {
		char q[4 * MSG_MAX_TEXT + 8];
		die_msg("%s: verify: %s", rm.display, peer_quote(q, sizeof q, err_msg()));
		return rc == -EBADMSG ? EXIT_STREAM : EXIT_SOCKET;
	}
	return verify_print_summary(&r);
}

int cmd_verify(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "if-older", required_argument, NULL, 'o' },
		{ "restart", no_argument, NULL, 'r' },
		{ "config", required_argument, NULL, 'c' },
		{ "identity", required_argument, NULL, 'i' },
		{ "known-hosts", required_argument, NULL, 'k' },
		{ "accept-new", no_argument, NULL, 'a' },
		{ "port", required_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	struct verify_cli x = { .co = { .protection = PROT_ENCRYPT, .timeout_ms = 0 } };
	const char *config = NULL, *older = NULL;
	int ch, client_only = 0;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		int64_t d;
		char *end;
		switch (ch) {
		case 'o':
			if (retention_duration(optarg, &d) < 0)
				return die_msg("--if-older: %s", err_msg()), EXIT_USAGE;
			x.q.if_older = (uint64_t)d;
			older = optarg;
			break;
		case 'r': x.q.restart = 1; break;
		case 'c': config = optarg; break;
		case 'i': x.co.identity = optarg; client_only = 1; break;
		case 'k': x.co.known_hosts = optarg; client_only = 1; break;
		case 'a': x.co.accept_new = 1; client_only = 1; break;
		case 'P':
			x.port = (unsigned)strtoul(optarg, &end, 10);
			if (end == optarg || *end || !x.port || x.port > 65535)
				return die_msg("verify: bad --port '%s'", optarg), EXIT_USAGE;
			client_only = 1;
			break;
		default:
			return die_msg("%s", VERIFY_USAGE), EXIT_USAGE;
		}
	}
	if (argc - optind != 1)
		return die_msg("%s", VERIFY_USAGE), EXIT_USAGE;
	if (remote_is(argv[optind]))
		return config ? (die_msg("verify: --config is for a module on this box"), EXIT_USAGE) :
			remote_verify(argv[optind], &x);
	if (client_only)
		return die_msg("verify: --identity, --known-hosts and --port are for HOST:MODULE"),
		       EXIT_USAGE;
	/* on the box: ferry admin verify, with the same options */
	char *args[8];
	int n = 0;
	args[n++] = "admin";
	args[n++] = "verify";
	args[n++] = argv[optind];
	if (config) {
		args[n++] = "--config";
		args[n++] = (char *)config;
	}
	if (older) {
		args[n++] = "--if-older";
		args[n++] = (char *)older;
	}
	if (x.q.restart)
		args[n++] = "--restart";
	args[n] = NULL;
	return cmd_admin(n, args);
}
