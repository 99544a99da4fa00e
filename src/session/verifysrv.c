/* SPDX-License-Identifier: MIT */
#include "session/verifysrv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "session/snapverify.h"
#include "util/err.h"
#include "util/log.h"
#include "util/priority.h"

struct sink {
	struct conn *c;
	int rc;                 /* the first failure to send: the pass goes on, unheard */
};

static void send_status(struct sink *k, const struct verify_report *r, double secs, int final)
{
	struct msg m = { .type = MSG_VERIFY_STATUS };

	if (k->rc < 0)
		return;
	m.u.verify_status = (struct m_verify_status){
		.final = (uint8_t)final, .skipped_run = (uint8_t)!!r->skipped_run,
		.files = r->files, .bytes = r->bytes, .bad = r->bad, .unhashed = r->unhashed,
		.skipped = r->skipped, .ms = secs > 0 ? (uint64_t)(secs * 1e3) : 0,
	};
	if ((k->rc = conn_send(k->c, &m)) == 0)
		k->rc = conn_flush(k->c);
}

static void on_bad(void *ctx, const char *where, const char *path)
{
	struct sink *k = ctx;
	struct msg m = { .type = MSG_VERIFY_BAD };

	log_warn("verify: damaged: %s: %s", where, path);
	if (k->rc < 0)
		return;
	snprintf(m.u.verify_bad.where, sizeof m.u.verify_bad.where, "%s", where);
	snprintf(m.u.verify_bad.path, sizeof m.u.verify_bad.path, "%s", path);
	k->rc = conn_send(k->c, &m);
}

static void on_progress(void *ctx, const struct verify_report *r, double secs)
{
	send_status(ctx, r, secs, 0);
}

int verifysrv_run(struct conn *c, const struct jail *mod)
{
	struct msg *m = calloc(1, sizeof *m);
	struct sink k = { .c = c };
	struct verify_report r;
	int rc;

	if (!m)
		return err_set(-ENOMEM, "out of memory");
	if ((rc = conn_recv(c, m)) == 0 && m->type != MSG_VERIFY)
		rc = err_set(-EBADMSG, "protocol: expected VERIFY, got %s", msg_type_name(m->type));
	if (rc == 0) {
		struct verify_opts o = { .if_older = (int64_t)m->u.verify.if_older,
					 .restart = m->u.verify.restart, .bad = on_bad,
					 .progress = on_progress, .ctx = &k };
		lowest_priority("verify");
		if ((rc = snap_verify(mod, &o, &r)) == 0) {
			log_info("verify: %llu files, %llu bytes read, %llu damaged",
				 (unsigned long long)r.files, (unsigned long long)r.bytes,
				 (unsigned long long)r.bad);
			send_status(&k, &r, 0, 1);
			rc = k.rc;
		}
	}
	free(m);
	return rc;
}
