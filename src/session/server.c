/* SPDX-License-Identifier: MIT */
#include "session/server.h"

#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/quote.h"
#include "fs/snapview.h"
#include "proto/msg.h"
#include "session/benchsrv.h"
#include "session/conn.h"
#include "session/pairsrv.h"
#include "session/receiver.h"
#include "session/sender.h"
#include "session/snapshots.h"
#include "session/verifysrv.h"
#include "session/xfilter.h"
#include "proto/zchunk.h"
#include "session/zdata.h"
#include "util/chmod.h"
#include "util/err.h"
#include "util/idmap.h"
#include "util/priority.h"
#include "util/privdrop.h"
#include "util/log.h"

static const char *prot_name(int p)
{
	return p == PROT_ENCRYPT ? "encrypt" : p == PROT_INTEGRITY ? "integrity" : "none";
}

/* Everything that must hold before the module's files are touched. */
static int authorize(struct conn *c, const struct server_ctx *sc, const struct m_request *rq,
		     const struct module_cfg **out)
{
	const struct module_cfg *mod = config_module(sc->cfg, rq->module);
	char fpr[KEY_FPR_LEN];
	const char *keys;

	key_fingerprint(sc->peer->pub, fpr);
	if (!mod) {
		char q[FS_QUOTE_BUF];
		if (sc->on_auth)   /* probing for module names counts as a failure */
			sc->on_auth(sc->ctx, 0);
		/* The name is the peer's, unchecked: quoted, or it could forge log lines. */
		return conn_refuse(c, REF_UNKNOWN_MODULE, "unknown module %s",
			      fs_quote(q, rq->module, strlen(rq->module)));
	}
	/* From here on the module's own name (letters, digits, _ . -) is shown. */
	keys = mod->authorized_keys ? mod->authorized_keys : sc->cfg->global.authorized_keys;
	if (!keys)
		return conn_refuse(c, REF_NOT_AUTHORIZED,
			      "module '%s' has no authorized keys configured", mod->name);
	if (!strcmp(keys, "none"))
		return conn_refuse(c, REF_NOT_AUTHORIZED, "module '%s' is closed", mod->name);
	int ok = keys_authorized(keys, sc->peer->pub);
	if (ok < 0) {
		log_err("%s", err_msg());
		return conn_refuse(c, REF_INTERNAL, "module '%s': the server cannot read its key list",
			      mod->name);
	}
	if (sc->on_auth)
		sc->on_auth(sc->ctx, ok);
	if (!ok)
		return conn_refuse(c, REF_NOT_AUTHORIZED, "key %s is not authorized for module '%s'",
			      fpr, mod->name);
	if (rq->protection < mod->protection)
		return conn_refuse(c, REF_PROTECTION,
			      "module '%s' requires protection '%s' or stronger (asked: '%s')",
			      mod->name, prot_name(mod->protection), prot_name(rq->protection));
	if (rq->op == OP_PUSH && mod->read_only)
		return conn_refuse(c, REF_READ_ONLY, "module '%s' is read-only", mod->name);
	if (rq->op == OP_VERIFY && mod->no_verify)
		return conn_refuse(c, REF_NOT_AUTHORIZED, "module '%s' does not let clients verify it "
			      "(verify = no)", mod->name);
	if (rq->op == OP_BENCH && mod->no_bench)
		return conn_refuse(c, REF_NOT_AUTHORIZED, "module '%s' does not allow ferry bench "
			      "(bench = no)", mod->name);
	if (path_check(rq->path, strlen(rq->path)) < 0)
		return conn_refuse(c, REF_BAD_PATH, "%s", err_msg());   /* path_check quotes the path */
	if (rq->backup_dir[0] && path_check(rq->backup_dir, strlen(rq->backup_dir)) < 0)
		return conn_refuse(c, REF_BAD_PATH, "--backup-dir: %s", err_msg());
	if (strchr(rq->suffix, '/'))
		return conn_refuse(c, REF_BAD_PATH, "--suffix: a suffix has no '/'");
	if (rq->chmod[0] && chmod_check(rq->chmod) < 0)
		return conn_refuse(c, REF_BAD_PATH, "--chmod: %s", err_msg());
	char qp[FS_QUOTE_BUF];
	log_info("key %s: %s module '%s' path %s protection %s", fpr,
		 rq->op == OP_PUSH ? "push to" : rq->op == OP_PULL ? "pull from" :
		 rq->op == OP_BENCH ? "bench on" : rq->op == OP_VERIFY ? "verify" : "list",
		 mod->name, fs_quote(qp, rq->path, strlen(rq->path)), prot_name(rq->protection));
	*out = mod;
	return 0;
}

/* The source of a pull or ls inside the module: "dir/" sends the contents,
 * "dir" the directory itself, "" the module's root contents. */
static void source_of(struct source *s, struct jail *j, const char *path, uint32_t flags)
{
	const char *slash = strrchr(path, '/');

	s->jail = j;
	if (!path[0] || (flags & REQ_SLASH)) {
		snprintf(s->base, sizeof s->base, "%s", path);
		s->top[0] = '\0';
	} else {
		snprintf(s->base, sizeof s->base, "%.*s", slash ? (int)(slash - path) : 0, path);
		/* path_check allowed no name over 255 bytes: the precision only says so */
		snprintf(s->top, sizeof s->top, "%.255s", slash ? slash + 1 : path);
	}
}

static int is_dir(const struct jail *j, const char *path)
{
	int fd = jail_open_dir(j, path, O_RDONLY);
	if (fd < 0)
		return 0;
	close(fd);
	return 1;
}

static int exists(const struct jail *j, const char *path)
{
	struct stat st;
	const char *leaf;

	if (!path[0])
		return 1;
	int fd = jail_open_parent(j, path, &leaf);
	if (fd < 0)
		return 0;
	int ok = fstatat(fd, leaf, &st, AT_SYMLINK_NOFOLLOW) == 0;
	close(fd);
	return ok;
}

/* A push to a module that keeps snapshots: all of it lands as a new
 * snapshot, or none of it (fs/snapinc.h). */
static int push_snapshot(struct conn *c, const struct server_ctx *sc, const struct m_request *rq,
			 struct jail *j, struct xfer_opts *o, struct xfer_stats *st)
{
	struct xfer_hooks h = { 0 };
	struct snapinc si;
	char fpr[KEY_FPR_LEN], client[SNAP_CLIENT_MAX + 1];
	int rc;

	key_fingerprint(sc->peer->pub, fpr);
	snap_client_of(fpr, client);
	if ((rc = snapinc_begin(&si, j, client)) < 0)
		return rc;
	o->snap = &si;
	/* the receiver commits the snapshot before it reports success */
	rc = receiver_run(c, j, rq->path, o, &h, st);
	if (rc < 0 || !si.committed) {
		log_info("push failed: what it changed is undone, no snapshot");
		snapinc_abort(&si);
		return rc < 0 ? rc : err_set(-EIO, "the push ended without its snapshot");
	}
	if (si.made)
		log_info("snapshot %s: %llu changes, %llu bytes written%s", si.name,
			 (unsigned long long)si.files, (unsigned long long)si.bytes,
			 si.failed ? " (partial: files failed)" : "");
	else
		log_info("nothing changed: no snapshot");
	return 0;
}

/* What a module with snapshots refuses, and what a snapshot is asked for. */
static int snapshot_checks(struct conn *c, const struct m_request *rq,
			   const struct module_cfg *mod, int has_sel)
{
	int snaps = mod->snapshots || mod->append_only;
	size_t hl = strlen(SNAP_DIR);

	if (has_sel && !snaps)
		return conn_refuse(c, REF_BAD_PATH, "module '%s' keeps no snapshots", mod->name);
	if (has_sel && rq->op == OP_BENCH)
		return conn_refuse(c, REF_BAD_PATH, "ferry bench measures a module, not a snapshot");
	if (rq->op == OP_VERIFY && (!snaps || has_sel || rq->path[0]))
		return conn_refuse(c, REF_BAD_PATH, !snaps ? "module '%s' keeps no snapshots: no hashes to "
			      "verify against" : "ferry verify checks a whole module ('%s')", mod->name);
	if (has_sel && rq->op == OP_PUSH)
		return conn_refuse(c, REF_READ_ONLY, "a snapshot is never changed: push to '%s' itself",
			      mod->name);
	if (!snaps)
		return 0;
	if (!strncmp(rq->path, SNAP_DIR, hl) && (rq->path[hl] == '/' || !rq->path[hl]))
		return conn_refuse(c, REF_BAD_PATH, "module '%s': its snapshot history is not part of "
			      "its tree (read a snapshot as '%s@SNAPSHOT')", mod->name, mod->name);
	if (rq->op == OP_PUSH && (rq->flags & REQ_BACKUP))
		return conn_refuse(c, REF_BAD_PATH, "module '%s' keeps snapshots: what a push replaces "
			      "is kept in them, -b is not needed", mod->name);
	return 0;
}

static int run_op(struct conn *c, const struct server_ctx *sc, const struct m_request *rq,
		  struct jail *j, struct xfilter *xf, const struct module_cfg *mod,
		  const struct filter_list *mfl, int list_snaps, int schedstat)
{
	/* setuid/setgid bits from a client are dropped (a daemon often runs as root) */
	struct xfer_opts o = { .flags = rq->flags, .writer = sc->writer, .strip_setid = 1,
			       .chmod = rq->chmod[0] ? rq->chmod : NULL,
			       .backup_dir = rq->backup_dir[0] ? rq->backup_dir : NULL,
			       .suffix = rq->suffix[0] ? rq->suffix : NULL,
			       .max_delete = rq->max_delete, .flags2 = rq->flags2,
			       .max_size = rq->max_size, .min_size = rq->min_size,
			       .modify_window = rq->modify_window,
			       /* the box asks for deltas and never rolls (issue 11) */
			       .want_delta = 1, .do_delta = 0, .send_sig = 1, .box = 1,
			       .filter = (rq->flags & REQ_FILTER) ? xf : NULL,
			       .module_filter = mfl, .fake_super = mod->fake_super };
	struct xfer_hooks h = { 0 };
	struct xfer_stats st = { 0 };
	struct source src;
	int rc;

	if (rq->flags & REQ_FSYNC)
		o.writer.fsync_each = 1;
	if (rq->op == OP_VERIFY)
		return verifysrv_run(c, j);
	if (rq->op == OP_BENCH) {
		struct benchsrv b = { .c = c, .root_fd = j->root_fd, .module = mod->name,
				      .writable = !mod->read_only, .schedstat = schedstat };
		return benchsrv_run(&b);
	}
	if (rq->op == OP_PUSH && (mod->snapshots || mod->append_only)) {
		rc = push_snapshot(c, sc, rq, j, &o, &st);
	} else if (rq->op == OP_PUSH) {
		rc = receiver_run(c, j, rq->path, &o, &h, &st);
	} else if (list_snaps) {
		return snap_list_send(c, j);
	} else {
		uint32_t fl = rq->flags;
		/* ls of a file shows the file, not a listing of it */
		if (rq->op == OP_LIST && !is_dir(j, rq->path))
			fl &= ~REQ_SLASH;
		source_of(&src, j, rq->path, fl);
		if (rq->op == OP_LIST)   /* ls -r recurses, as rsync --list-only -r */
			o.flags &= ~REQ_CHECKSUM;
		/* a restore never passes on rot silently: what the snapshot module
		 * recorded at commit is checked as the file goes */
		c->check_stored = rq->op == OP_PULL && (mod->snapshots || mod->append_only);
		c->fake_super = rq->op == OP_PULL && mod->fake_super;
		rc = sender_run(c, &src, 1, &o, &h, &st);
	}
	if (rc == 0)
		log_info("done: %llu files moved, %llu up to date, %llu bytes, %u errors",
			 (unsigned long long)st.files_sent, (unsigned long long)st.files_skipped,
			 (unsigned long long)st.bytes_data, st.errors);
	return rc;
}

/* -z: what the module makes of it, for ACCEPT's flags (PROTOCOL.md 4.5). */
static uint32_t compress_flags(const struct module_cfg *mod, const struct m_request *rq)
{
	if (!(rq->flags & REQ_COMPRESS) || rq->op == OP_LIST)
		return 0;
	if (mod->compress == CFG_COMPRESS_NO) {
		log_info("-z asked, module '%s' does not compress", mod->name);
		return 0;
	}
	return ACC_COMPRESS | (mod->compress == CFG_COMPRESS_AUTO ? ACC_COMPRESS_AUTO : 0);
}

/* From here on the session reaches only its module (read-only unless it
 * receives): what it needs from outside is read first. */
static int confine(const struct server_ctx *sc, const struct m_request *rq, const struct jail *j,
		   const struct module_cfg *mod)
{
	int rc;

	if ((rq->flags & (REQ_OWNER | REQ_GROUP)) && !(rq->flags & REQ_NUMERIC_IDS) &&
	    (rc = idmap_freeze()) < 0)
		return err_set(rc, "cannot read the user and group databases");
	int devices = rq->op == OP_PUSH && (rq->flags & REQ_DEVICES) && geteuid() == 0 &&
		      !mod->fake_super;
	/* verify notes how far it got in the module's history */
	int writes = rq->op == OP_PUSH ||
		     ((rq->op == OP_BENCH || rq->op == OP_VERIFY) && !mod->read_only);
	/* a snapshot's view is the session's to remove when it ends */
	enum sandbox_tree tree = writes ? SANDBOX_WRITE :
				 snapview_active() ? SANDBOX_READ_SCRATCH : SANDBOX_READ;
	if ((rc = sandbox_enter(sc->sandbox, j->root_fd, tree, devices, rq->op == OP_BENCH)) < 0)
		return rc;
#ifdef FERRY_TEST_HOOKS
	sandbox_test_escape(getenv("FERRY_TEST_ESCAPE"), j->root_fd);
#endif
	return 0;
}

static void log_pruned(void *ctx, const struct snapinfo *s, unsigned why)
{
	(void)ctx;
	if (!why)
		log_info("prune: snapshot %s goes (no rule keeps it)", s->name);
}

/* The module's retention, once the client has all it needs: at the lowest
 * priority, after the push's own work (fs/snapprune.h). */
static void prune_after_push(struct conn *c, const struct jail *j, const struct module_cfg *mod)
{
	conn_flush(c);
	lowest_priority("prune");
	int n = snap_prune(j, &mod->keep, 0, log_pruned, NULL);
	if (n < 0)
		log_err("module '%s': prune: %s", mod->name, err_msg());
	else if (n)
		log_info("module '%s': prune: %d snapshot(s) deleted", mod->name, n);
}

int server_session(struct channel *ch, const struct server_ctx *sc)
{
	struct conn c = { .ch = ch };
	struct msg *m = calloc(1, sizeof *m);
	const struct module_cfg *mod = NULL;
	struct jail j = { .root_fd = -1 };
	int rc;

	if (!m)
		return err_set(-ENOMEM, "out of memory");
	rc = conn_recv(&c, m);
	if (rc == 0 && m->type != MSG_REQUEST)
		rc = err_set(-EBADMSG, "protocol: expected REQUEST, got %s", msg_type_name(m->type));
#ifdef FERRY_TEST_HOOKS
	/* test builds (test_max_delete, test_safe_links): a server older than
	 * the HELLO features it says it has, which refused what it did not know
	 * as a malformed REQUEST */
	const char *old = rc == 0 ? getenv("FERRY_TEST_OLD_HELLO") : NULL;
	uint32_t had = old ? (uint32_t)strtoul(old, NULL, 0) : 0;
	if (old && ((!(had & HELLO_REQ_MORE) && (m->u.request.flags & ~0x1fffffffu)) ||
		    (!(had & HELLO_MORE2) && (m->u.request.flags2 & ~0x7u)) ||
		    (!(had & HELLO_MORE3) && (m->u.request.flags2 & ~0x1fu)) ||   /* (0x20-0x80) */
		    (!(had & HELLO_MORE4) && (m->u.request.flags2 & ~0xffu))))
		rc = err_set(-EBADMSG, "protocol: malformed REQUEST message (an older server)");
#endif
	/* a client that skips NOOPs gets them while this side works long */
	c.noop = rc == 0 && (m->u.request.flags2 & REQ2_NOOP);
	/* a key no module knows yet, with the box's one-time code */
	if (rc == 0 && m->u.request.op == OP_PAIR) {
		rc = pairsrv_run(&c, sc, &m->u.request);
		if (rc < 0)
			conn_fail(&c, rc == -EBADMSG ? REF_PROTOCOL : REF_INTERNAL, err_msg());
		free(m);
		return rc;
	}
	char sel[SNAP_NAME_MAX];
	int has_sel = 0, list_snaps = 0;
	if (rc == 0 && (has_sel = snap_split(m->u.request.module, sel)) < 0)
		rc = conn_refuse(&c, REF_BAD_PATH, "%s", err_msg());
	if (rc == 0)
		rc = authorize(&c, sc, &m->u.request, &mod);
	if (rc == 0)
		rc = snapshot_checks(&c, &m->u.request, mod, has_sel);
	if (rc == 0 && (mod->has_uid || mod->has_gid) &&
	    priv_drop(mod->has_uid ? mod->uid : geteuid(), mod->gid) < 0) {
		log_err("module '%s': %s", mod->name, err_msg());
		rc = conn_refuse(&c, REF_INTERNAL, "module '%s' is not available", mod->name);
	}
	if (rc == 0 && jail_open(&j, mod->path) < 0) {
		log_err("%s", err_msg());
		rc = conn_refuse(&c, REF_INTERNAL, "module '%s' is not available", mod->name);
	}
	if (rc == 0 && has_sel && m->u.request.op == OP_LIST && !sel[0] && !m->u.request.path[0])
		list_snaps = 1;
	else if (rc == 0 && has_sel && (rc = snap_open(&j, sel, m->u.request.path)) < 0)
		rc = conn_refuse(&c, rc == -ENOENT ? REF_NOT_FOUND : REF_INTERNAL, "module '%s': %s",
			    mod->name, err_msg());
	if (rc == 0 && m->u.request.op != OP_PUSH && !list_snaps && !exists(&j, m->u.request.path)) {
		char q[FS_QUOTE_BUF];
		rc = conn_refuse(&c, REF_NOT_FOUND, "module '%s': %s does not exist", mod->name,
			    fs_quote(q, m->u.request.path, strlen(m->u.request.path)));
	}
	/* the client's filter rules, once it may use the module */
	struct xfilter xf;
	struct filter_list *mfl = NULL;
	int xrc = xfilter_init(&xf, 0, 0);
	if (rc == 0 && xrc < 0)
		rc = xrc;
	/* the module's own, read again: "exclude from" may have changed */
	if (rc == 0 && config_module_filter(mod, &mfl) < 0) {
		log_err("module '%s': %s", mod->name, err_msg());
		rc = conn_refuse(&c, REF_INTERNAL, "module '%s': its exclude list cannot be read",
			    mod->name);
	}
	/* bench: the run delay comes from /proc, which the sandbox closes */
	int sched = rc == 0 && m->u.request.op == OP_BENCH ?
		    open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC) : -1;
	if (rc == 0 && sc->sandbox && confine(sc, &m->u.request, &j, mod) < 0) {
		log_err("module '%s': %s", mod->name, err_msg());
		rc = conn_refuse(&c, REF_INTERNAL, "module '%s' is not available", mod->name);
	}
	if (rc == 0 && (m->u.request.flags & REQ_FILTER) && (xrc = xfilter_recv(&c, &xf)) < 0) {
		log_warn("%s", err_msg());
		rc = xrc == -EBADMSG ? xrc : conn_refuse(&c, REF_PROTOCOL, "%s", err_msg());
	}
	struct msg acc = { .type = MSG_ACCEPT };
	if (rc == 0) {
		acc.u.accept.protection = m->u.request.protection;
		acc.u.accept.flags = compress_flags(mod, &m->u.request);
		snprintf(acc.u.accept.comment, sizeof acc.u.accept.comment, "%s",
			 mod->comment ? mod->comment : "");
		rc = conn_send(&c, &acc);
	}
	if (rc == 0)
		rc = zdata_setup(&c, acc.u.accept.flags, m->u.request.op != OP_PUSH, ZCHUNK_LEVEL_BOX);
	if (rc == 0) {
		conn_set_protection(&c, m->u.request.protection, m->u.request.flags);
		ratelimit_init(&c.rl, ratelimit_min(sc->cfg->global.bwlimit, mod->bwlimit));
		rc = run_op(&c, sc, &m->u.request, &j, &xf, mod, mfl, list_snaps, sched);
	}
	if (rc < 0)
		/* a bad peer is a protocol error; anything else, the server's disk */
		conn_fail(&c, rc == -EBADMSG ? REF_PROTOCOL : REF_IO, err_msg());
	else if (rc == 0 && m->u.request.op == OP_PUSH && (mod->snapshots || mod->append_only) &&
		 retention_any(&mod->keep))
		prune_after_push(&c, &j, mod);
	if (sched >= 0)
		close(sched);
	zdata_free(&c);
	xfilter_free(&xf);
	filter_free(mfl);
	jail_close(&j);
	free(m);
	return rc;
}

void server_session_after(void)
{
	if (snapview_drop() < 0)
		log_warn("%s", err_msg());
}
