/* SPDX-License-Identifier: MIT */
#include "proto/msg.h"

#include <errno.h>
#include <string.h>

#include "proto/wire.h"
#include "util/err.h"

const char *msg_type_name(uint8_t type)
{
	switch (type) {
	case MSG_REQUEST: return "REQUEST";
	case MSG_ACCEPT: return "ACCEPT";
	case MSG_REFUSE: return "REFUSE";
	case MSG_FILTER: return "FILTER";
	case MSG_DIR_BEGIN: return "DIR_BEGIN";
	case MSG_ENTRY: return "ENTRY";
	case MSG_DIR_END: return "DIR_END";
	case MSG_DIR_META: return "DIR_META";
	case MSG_END: return "END";
	case MSG_TOTALS: return "TOTALS";
	case MSG_SNAP: return "SNAP";
	case MSG_XMETA: return "XMETA";
	case MSG_FILE_BEGIN: return "FILE_BEGIN";
	case MSG_DATA: return "DATA";
	case MSG_HOLE: return "HOLE";
	case MSG_FILE_END: return "FILE_END";
	case MSG_COPY: return "COPY";
	case MSG_ZDATA: return "ZDATA";
	case MSG_WANT_DELTA: return "WANT_DELTA";
	case MSG_SIG: return "SIG";
	case MSG_REDO: return "REDO";
	case MSG_WANT_SIG: return "WANT_SIG";
	case MSG_FILE_SIG: return "FILE_SIG";
	case MSG_NEED: return "NEED";
	case MSG_NEED_END: return "NEED_END";
	case MSG_REFINE: return "REFINE";
	case MSG_REFINE_END: return "REFINE_END";
	case MSG_NOOP: return "NOOP";
	case MSG_BENCH: return "BENCH";
	case MSG_BENCH_DONE: return "BENCH_DONE";
	case MSG_BENCH_STAGE: return "BENCH_STAGE";
	case MSG_VERIFY: return "VERIFY";
	case MSG_VERIFY_BAD: return "VERIFY_BAD";
	case MSG_VERIFY_STATUS: return "VERIFY_STATUS";
	case MSG_PAKE: return "PAKE";
	case MSG_PAKE_TAG: return "PAKE_TAG";
	case MSG_WANT: return "WANT";
	case MSG_DECIDED: return "DECIDED";
	case MSG_CHANGE: return "CHANGE";
	case MSG_RESULT: return "RESULT";
	case MSG_ERROR: return "ERROR";
	default: return "unknown";
	}
}

static void rd_entry(struct rd *r, struct m_entry *e)
{
	e->type = rd_u8(r);
	e->flags = rd_u8(r);
	e->mode = rd_u32(r);
	e->size = rd_u64(r);
	e->mtime_s = (int64_t)rd_u64(r);
	e->mtime_ns = rd_u32(r);
	rd_str(r, e->name, MSG_MAX_NAME);
	e->target[0] = '\0';
	e->rdev_major = e->rdev_minor = 0;
	if (e->type == ENT_LNK)
		rd_str(r, e->target, MSG_MAX_PATH);
	if (e->type == ENT_SPECIAL) {
		e->rdev_major = rd_u32(r);
		e->rdev_minor = rd_u32(r);
	}
	if (e->flags & ENT_HAS_HASH)
		rd_bytes(r, e->hash, MSG_HASH_LEN);
	e->link = (e->flags & (ENT_LINK_FIRST | ENT_LINK_TO)) ? rd_u32(r) : 0;
	int link_bad = (e->flags & (ENT_LINK_FIRST | ENT_LINK_TO)) &&
		       (e->type != ENT_REG || (e->flags & ENT_LINK_FIRST && e->flags & ENT_LINK_TO) ||
			((e->flags & ENT_LINK_FIRST) && !e->link));
	uint32_t fmt = e->mode & WIRE_IFMT;
	int special_ok = fmt == WIRE_IFCHR || fmt == WIRE_IFBLK || fmt == WIRE_IFIFO ||
			 fmt == WIRE_IFSOCK;
	if (e->type < ENT_REG || e->type > ENT_SPECIAL || (e->flags & ~ENT_KNOWN) || link_bad ||
	    (e->type == ENT_SPECIAL ? !special_ok : fmt != 0) || (e->mode & ~(WIRE_IFMT | 07777)) ||
	    e->mtime_ns >= 1000000000u || !e->name[0])
		r->err = -EBADMSG;
}

int xmeta_name_ok(const char *name)
{
	static const char *const ns[] = { "user.", "trusted.", "security." };

	if (!strcmp(name, "system.posix_acl_access") || !strcmp(name, "system.posix_acl_default"))
		return 1;
	for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
		if (!strncmp(name, ns[i], strlen(ns[i])) && name[strlen(ns[i])])
			return 1;
	return 0;
}

int xmeta_next(const uint8_t *list, size_t bytes, size_t *off, struct xattr_rec *x)
{
	size_t o = *off;

	if (o >= bytes)
		return 0;
	size_t nl = list[o++];
	if (!nl || bytes - o < nl + 2 || memchr(list + o, 0, nl))
		return -EBADMSG;
	memcpy(x->name, list + o, nl);
	x->name[nl] = '\0';
	o += nl;
	x->len = (uint16_t)(list[o] << 8 | list[o + 1]);
	o += 2;
	if (bytes - o < x->len)
		return -EBADMSG;
	x->value = list + o;
	*off = o + x->len;
	return 1;
}

/* The list: exactly `count` records filling it, names allowed, sorted and unique. */
static int xattr_list_ok(const uint8_t *list, size_t bytes, unsigned count)
{
	struct xattr_rec x;
	char prev[256] = "";
	size_t off = 0;
	unsigned n = 0;
	int rc;

	while ((rc = xmeta_next(list, bytes, &off, &x)) > 0) {
		if (!xmeta_name_ok(x.name) || (n && strcmp(prev, x.name) >= 0))
			return 0;
		memcpy(prev, x.name, sizeof prev);
		n++;
	}
	return rc == 0 && n == count;
}

static void rd_xmeta(struct rd *r, struct m_xmeta *x)
{
	x->flags = rd_u8(r);
	x->uid = x->gid = 0;
	x->user[0] = x->group[0] = '\0';
	x->count = 0;
	x->xattr_bytes = 0;
	x->xattrs = NULL;
	if (x->flags & XM_OWNER) {
		x->uid = rd_u32(r);
		rd_str(r, x->user, XMETA_MAX_IDNAME);
	}
	if (x->flags & XM_GROUP) {
		x->gid = rd_u32(r);
		rd_str(r, x->group, XMETA_MAX_IDNAME);
	}
	if (x->flags & XM_XATTRS) {
		x->count = rd_u16(r);
		/* the records are the rest of the message */
		x->xattrs = r->p;
		x->xattr_bytes = (uint32_t)r->left;
		if (r->err || x->count > XMETA_MAX_COUNT || r->left > XMETA_MAX_XATTR_BYTES ||
		    !xattr_list_ok(r->p, r->left, x->count))
			r->err = -EBADMSG;
		else
			rd_skip(r, r->left);
	}
	if (x->flags & ~XM_KNOWN)
		r->err = -EBADMSG;
}

static void rd_bench_done(struct rd *r, struct m_bench_done *d)
{
	d->step = rd_u8(r);
	d->status = rd_u8(r);
	d->bytes = rd_u64(r);
	d->ns = rd_u64(r);
	d->user_us = rd_u64(r);
	d->sys_us = rd_u64(r);
	d->wait_us = rd_u64(r);
	d->tcp_busy_us = rd_u64(r);
	d->tcp_rwnd_us = rd_u64(r);
	d->tcp_sndbuf_us = rd_u64(r);
	d->tcp_sent = rd_u64(r);
	d->tcp_retrans = rd_u64(r);
	d->rcvbuf = rd_u32(r);
	d->sndbuf = rd_u32(r);
	rd_str(r, d->note, BENCH_MAX_NOTE);
	if (d->step < BSTEP_PING || d->step > BSTEP_LAST || d->status > BENCH_REFUSED)
		r->err = -EBADMSG;
}

static void wr_bench_done(struct wr *w, const struct m_bench_done *d)
{
	wr_u8(w, d->step);
	wr_u8(w, d->status);
	wr_u64(w, d->bytes);
	wr_u64(w, d->ns);
	wr_u64(w, d->user_us);
	wr_u64(w, d->sys_us);
	wr_u64(w, d->wait_us);
	wr_u64(w, d->tcp_busy_us);
	wr_u64(w, d->tcp_rwnd_us);
	wr_u64(w, d->tcp_sndbuf_us);
	wr_u64(w, d->tcp_sent);
	wr_u64(w, d->tcp_retrans);
	wr_u32(w, d->rcvbuf);
	wr_u32(w, d->sndbuf);
	wr_str(w, d->note);
}

static void rd_bench_stage(struct rd *r, struct m_bench_stage *s)
{
	s->unit = rd_u8(r);
	s->verdict = rd_u8(r);
	s->cliff = rd_u8(r);
	s->rate_m = rd_u64(r);
	s->seconds_us = rd_u64(r);
	s->bytes = rd_u64(r);
	s->ops = rd_u64(r);
	s->dev_bytes = rd_u64(r);
	s->burst_m = rd_u64(r);
	s->sustained_m = rd_u64(r);
	s->cliff_bytes = rd_u64(r);
	rd_str(r, s->name, sizeof s->name - 1);
	rd_str(r, s->label, sizeof s->label - 1);
	rd_str(r, s->method, sizeof s->method - 1);
	rd_str(r, s->note, sizeof s->note - 1);
	/* the client's enums: unit 0..2, verdict 0..4 (bench/bench.h) */
	if (s->unit > 2 || s->verdict > 4 || s->cliff > 1 || !s->name[0])
		r->err = -EBADMSG;
}

/* A REQUEST's extension (REQ_MORE): flags2, never 0, then its fields. */
static void rd_request_more(struct rd *r, struct m_request *q)
{
	q->flags2 = 0;
	q->max_size = q->min_size = 0;
	q->modify_window = 0;
	if (!(q->flags & REQ_MORE))
		return;
	q->flags2 = rd_u32(r);
	if (!q->flags2 || (q->flags2 & ~REQ2_KNOWN))
		r->err = -EBADMSG;
	if (q->flags2 & REQ2_MAX_SIZE)
		q->max_size = rd_u64(r);
	if (q->flags2 & REQ2_MIN_SIZE)
		q->min_size = rd_u64(r);
	if (q->flags2 & REQ2_MODIFY_WINDOW)
		q->modify_window = rd_u32(r);
	if (q->modify_window > INT32_MAX)
		r->err = -EBADMSG;
}

static void wr_bench_stage(struct wr *w, const struct m_bench_stage *s)
{
	wr_u8(w, s->unit);
	wr_u8(w, s->verdict);
	wr_u8(w, s->cliff);
	wr_u64(w, s->rate_m);
	wr_u64(w, s->seconds_us);
	wr_u64(w, s->bytes);
	wr_u64(w, s->ops);
	wr_u64(w, s->dev_bytes);
	wr_u64(w, s->burst_m);
	wr_u64(w, s->sustained_m);
	wr_u64(w, s->cliff_bytes);
	wr_str(w, s->name);
	wr_str(w, s->label);
	wr_str(w, s->method);
	wr_str(w, s->note);
}

/* A WANT_DELTA's levels: one (group 0), or groups of 2 .. DELTA_MAX_GROUP
 * blocks of at most DELTA_MAX_COARSE bytes, at least one whole group. */
static int want_delta_group_ok(const struct m_want_delta *w)
{
	uint32_t g = w->group;

	if (!g)
		return 1;
	return g >= 2 && g <= DELTA_MAX_GROUP && (uint64_t)w->block * g <= DELTA_MAX_COARSE &&
	       w->size / w->block >= g;
}

static void rd_fields(struct rd *r, struct msg *m)
{
	switch (m->type) {
	case MSG_REQUEST:
		m->u.request.op = rd_u8(r);
		m->u.request.protection = rd_u8(r);
		m->u.request.flags = rd_u32(r);
		rd_str(r, m->u.request.module, MSG_MAX_NAME);
		rd_str(r, m->u.request.path, MSG_MAX_PATH);
		rd_str(r, m->u.request.backup_dir, MSG_MAX_PATH);
		rd_str(r, m->u.request.suffix, MSG_MAX_NAME);
		rd_str(r, m->u.request.chmod, MSG_MAX_NAME);
		m->u.request.max_delete = m->u.request.flags & REQ_MAX_DELETE ? rd_u32(r) : 0;
		rd_request_more(r, &m->u.request);
		if (m->u.request.op < OP_PUSH || m->u.request.op > OP_PAIR ||
		    m->u.request.protection > 2 || (m->u.request.flags & ~REQ_KNOWN))
			r->err = -EBADMSG;
		break;
	case MSG_FILTER:
		m->u.filter.total = rd_u32(r);
		m->u.filter.offset = rd_u32(r);
		/* the piece is the rest of the record */
		m->u.filter.bytes = r->p;
		m->u.filter.len = (uint16_t)r->left;
		if (r->err || !r->left || r->left > FILTER_MAX_PIECE ||
		    m->u.filter.total > MSG_FILTER_MAX_TOTAL ||
		    m->u.filter.offset > m->u.filter.total ||
		    r->left > m->u.filter.total - m->u.filter.offset)
			r->err = -EBADMSG;
		else
			rd_skip(r, r->left);
		break;
	case MSG_ACCEPT:
		m->u.accept.protection = rd_u8(r);
		m->u.accept.flags = rd_u32(r);
		rd_str(r, m->u.accept.comment, MSG_MAX_NAME);
		if (m->u.accept.protection > 2 || (m->u.accept.flags & ~ACC_KNOWN) ||
		    (m->u.accept.flags & (ACC_COMPRESS | ACC_COMPRESS_AUTO)) == ACC_COMPRESS_AUTO)
			r->err = -EBADMSG;
		break;
	case MSG_REFUSE:
	case MSG_ERROR:
		m->u.refuse.code = rd_u16(r);
		rd_str(r, m->u.refuse.reason, MSG_MAX_TEXT);
		break;
	case MSG_DIR_BEGIN:
		m->u.dir_begin.flags = rd_u8(r);
		rd_str(r, m->u.dir_begin.path, MSG_MAX_PATH);
		if (m->u.dir_begin.flags & ~DIRB_KNOWN)
			r->err = -EBADMSG;
		break;
	case MSG_ENTRY:
		rd_entry(r, &m->u.entry);
		break;
	case MSG_XMETA:
		rd_xmeta(r, &m->u.xmeta);
		break;
	case MSG_DIR_END:
		break;
	case MSG_END:
		m->u.end.errors = rd_u32(r);
		rd_str(r, m->u.end.message, MSG_MAX_TEXT);
		break;
	case MSG_DIR_META:
		m->u.dir_meta.mode = rd_u32(r);
		m->u.dir_meta.mtime_s = (int64_t)rd_u64(r);
		m->u.dir_meta.mtime_ns = rd_u32(r);
		rd_str(r, m->u.dir_meta.path, MSG_MAX_PATH);
		if (m->u.dir_meta.mtime_ns >= 1000000000u)
			r->err = -EBADMSG;
		break;
	case MSG_TOTALS:
		m->u.totals.files = rd_u64(r);
		m->u.totals.bytes = rd_u64(r);
		break;
	case MSG_SNAP:
		m->u.snap.time = (int64_t)rd_u64(r);
		m->u.snap.files = rd_u64(r);
		m->u.snap.bytes = rd_u64(r);
		rd_str(r, m->u.snap.name, MSG_MAX_NAME);
		rd_str(r, m->u.snap.client, MSG_MAX_NAME);
		m->u.snap.failed = rd_u64(r);
		break;
	case MSG_FILE_BEGIN:
		m->u.file_begin.index = rd_u32(r);
		m->u.file_begin.size = rd_u64(r);
		m->u.file_begin.mode = rd_u32(r);
		m->u.file_begin.mtime_s = (int64_t)rd_u64(r);
		m->u.file_begin.mtime_ns = rd_u32(r);
		if (m->u.file_begin.mtime_ns >= 1000000000u ||
		    m->u.file_begin.size > (uint64_t)INT64_MAX)
			r->err = -EBADMSG;
		break;
	case MSG_DATA:
	case MSG_HOLE:
		m->u.len.len = rd_u64(r);
		if (m->u.len.len == 0 || m->u.len.len > (uint64_t)INT64_MAX)
			r->err = -EBADMSG;
		break;
	case MSG_ZDATA:
		m->u.zdata.raw_len = rd_u32(r);
		m->u.zdata.zlen = rd_u32(r);
		if (!m->u.zdata.raw_len || m->u.zdata.raw_len > ZDATA_MAX_RAW ||
		    !m->u.zdata.zlen || m->u.zdata.zlen > ZDATA_MAX_ZLEN)
			r->err = -EBADMSG;
		break;
	case MSG_FILE_END:
		m->u.file_end.status = rd_u8(r);
		m->u.file_end.has_hash = rd_u8(r);
		rd_bytes(r, m->u.file_end.hash, MSG_HASH_LEN);
		if (m->u.file_end.status > FILE_VANISHED || m->u.file_end.has_hash > 1)
			r->err = -EBADMSG;
		break;
	case MSG_WANT:
	case MSG_DECIDED:
	case MSG_REDO:
	case MSG_WANT_SIG:
	case MSG_NEED_END:
	case MSG_REFINE_END:
		m->u.index.index = rd_u32(r);
		break;
	case MSG_NOOP:   /* no fields */
		break;
	case MSG_WANT_DELTA:
	case MSG_FILE_SIG:
		m->u.want_delta.index = rd_u32(r);
		m->u.want_delta.block = rd_u32(r);
		m->u.want_delta.size = rd_u64(r);
		m->u.want_delta.group = rd_u8(r);
		if (m->type == MSG_FILE_SIG && m->u.want_delta.group)
			r->err = -EBADMSG;   /* a pull's signature has one level */
		/* FILE_SIG with block 0: "no signature, the file comes whole" */
		if (m->type == MSG_FILE_SIG && !m->u.want_delta.block)
			break;
		if (m->u.want_delta.block < DELTA_MIN_BLOCK || m->u.want_delta.block > DELTA_MAX_BLOCK ||
		    m->u.want_delta.size / m->u.want_delta.block > UINT32_MAX)
			r->err = -EBADMSG;
		else if (!want_delta_group_ok(&m->u.want_delta))
			r->err = -EBADMSG;
		break;
	case MSG_SIG:
		m->u.sig.index = rd_u32(r);
		m->u.sig.first = rd_u32(r);
		m->u.sig.count = rd_u16(r);
		/* the entries are the rest of the record, exactly count of them */
		m->u.sig.entries = r->p;
		if (r->err || !m->u.sig.count || m->u.sig.count > SIG_MAX_BLOCKS ||
		    r->left != (size_t)m->u.sig.count * SIG_ENTRY_LEN)
			r->err = -EBADMSG;
		else
			rd_skip(r, r->left);
		break;
	case MSG_BENCH:
		m->u.bench.step = rd_u8(r);
		m->u.bench.bytes = rd_u64(r);
		if (m->u.bench.step < BSTEP_PING || m->u.bench.step > BSTEP_LAST ||
		    m->u.bench.bytes > (uint64_t)INT64_MAX)
			r->err = -EBADMSG;
		break;
	case MSG_BENCH_DONE:
		rd_bench_done(r, &m->u.bench_done);
		break;
	case MSG_VERIFY:
		m->u.verify.if_older = rd_u64(r);
		m->u.verify.restart = rd_u8(r);
		if (m->u.verify.restart > 1 || m->u.verify.if_older > (uint64_t)INT64_MAX)
			r->err = -EBADMSG;
		break;
	case MSG_PAKE:
		rd_bytes(r, m->u.pake.share, MSG_PAKE_SHARE_LEN);
		break;
	case MSG_PAKE_TAG:
		rd_bytes(r, m->u.pake_tag.tag, MSG_PAKE_TAG_LEN);
		rd_str(r, m->u.pake_tag.module, MSG_MAX_NAME);
		break;
	case MSG_VERIFY_BAD:
		rd_str(r, m->u.verify_bad.where, MSG_MAX_NAME);
		rd_str(r, m->u.verify_bad.path, MSG_MAX_PATH);
		break;
	case MSG_VERIFY_STATUS: {
		struct m_verify_status *v = &m->u.verify_status;
		v->final = rd_u8(r);
		v->skipped_run = rd_u8(r);
		v->files = rd_u64(r);
		v->bytes = rd_u64(r);
		v->bad = rd_u64(r);
		v->unhashed = rd_u64(r);
		v->skipped = rd_u64(r);
		v->ms = rd_u64(r);
		if (v->final > 1 || v->skipped_run > 1)
			r->err = -EBADMSG;
		break;
	}
	case MSG_BENCH_STAGE:
		rd_bench_stage(r, &m->u.bench_stage);
		break;
	case MSG_NEED:
	case MSG_REFINE:
		m->u.need.index = rd_u32(r);
		m->u.need.block = rd_u32(r);
		m->u.need.count = rd_u32(r);
		if (!m->u.need.count)
			r->err = -EBADMSG;
		break;
	case MSG_COPY:
		m->u.copy.block = rd_u32(r);
		m->u.copy.count = rd_u32(r);
		if (!m->u.copy.count)
			r->err = -EBADMSG;
		break;
	case MSG_CHANGE: {
		uint8_t k = rd_u8(r);
		m->u.change.kind = k & ~CHG_F_TARGET;
		m->u.change.bits = rd_u8(r);
		rd_str(r, m->u.change.path, MSG_MAX_PATH);
		m->u.change.target[0] = '\0';
		if (k & CHG_F_TARGET)
			rd_str(r, m->u.change.target, MSG_MAX_PATH);
		/* a hard link names its first; a symlink (made, its attributes, or
		 * not made by --safe-links) may have its target */
		uint8_t kind = m->u.change.kind;
		int linked = kind == CHG_HLINK || kind == CHG_HLINK_UPD;
		int may = linked || kind == CHG_LINK || kind == CHG_META || kind == CHG_UNSAFE;
		if (kind < CHG_NEW || kind > CHG_HLINK_UPD || (m->u.change.bits & ~CHGB_KNOWN) ||
		    (linked && !(k & CHG_F_TARGET)) ||
		    ((k & CHG_F_TARGET) && (!may || !m->u.change.target[0])))
			r->err = -EBADMSG;
		break;
	}
	case MSG_RESULT:
		m->u.result.errors = rd_u32(r);
		m->u.result.files = rd_u64(r);
		m->u.result.bytes = rd_u64(r);
		m->u.result.uptodate = rd_u64(r);
		m->u.result.kept = rd_u64(r);
		m->u.result.deleted = rd_u64(r);
		rd_str(r, m->u.result.message, MSG_MAX_TEXT);
		/* a field an older peer does not send (nor gets: it is only sent
		 * when not 0, which only a --max-delete request makes) */
		m->u.result.del_skipped = 0;
		if (r->left) {
			m->u.result.del_skipped = rd_u64(r);
			if (!m->u.result.del_skipped)
				r->err = -EBADMSG;   /* one encoding per message: 0 is absent */
		}
		break;
	default:
		r->err = -EBADMSG;
	}
}

int msg_decode(const uint8_t *p, size_t n, struct msg *m)
{
	struct rd r;

	rd_init(&r, p, n);
	m->type = rd_u8(&r);
	if (r.err)
		return err_set(-EBADMSG, "protocol: empty message");
	rd_fields(&r, m);
	if (rd_end(&r))
		return err_set(-EBADMSG, "protocol: malformed %s message (type 0x%02x, %zu bytes)",
			       msg_type_name(m->type), m->type, n);
	return 0;
}

static void wr_fields(struct wr *w, const struct msg *m)
{
	const struct m_entry *e = &m->u.entry;

	switch (m->type) {
	case MSG_REQUEST:
		wr_u8(w, m->u.request.op);
		wr_u8(w, m->u.request.protection);
		wr_u32(w, (m->u.request.flags & ~REQ_MORE) | (m->u.request.flags2 ? REQ_MORE : 0));
		wr_str(w, m->u.request.module);
		wr_str(w, m->u.request.path);
		wr_str(w, m->u.request.backup_dir);
		wr_str(w, m->u.request.suffix);
		wr_str(w, m->u.request.chmod);
		if (m->u.request.flags & REQ_MAX_DELETE)
			wr_u32(w, m->u.request.max_delete);
		if (m->u.request.flags2) {
			wr_u32(w, m->u.request.flags2);
			if (m->u.request.flags2 & REQ2_MAX_SIZE)
				wr_u64(w, m->u.request.max_size);
			if (m->u.request.flags2 & REQ2_MIN_SIZE)
				wr_u64(w, m->u.request.min_size);
			if (m->u.request.flags2 & REQ2_MODIFY_WINDOW)
				wr_u32(w, m->u.request.modify_window);
		}
		break;
	case MSG_FILTER:
		wr_u32(w, m->u.filter.total);
		wr_u32(w, m->u.filter.offset);
		wr_bytes(w, m->u.filter.bytes, m->u.filter.len);
		break;
	case MSG_ACCEPT:
		wr_u8(w, m->u.accept.protection);
		wr_u32(w, m->u.accept.flags);
		wr_str(w, m->u.accept.comment);
		break;
	case MSG_REFUSE:
	case MSG_ERROR:
		wr_u16(w, m->u.refuse.code);
		wr_str(w, m->u.refuse.reason);
		break;
	case MSG_DIR_BEGIN:
		wr_u8(w, m->u.dir_begin.flags);
		wr_str(w, m->u.dir_begin.path);
		break;
	case MSG_ENTRY:
		wr_u8(w, e->type);
		wr_u8(w, e->flags);
		wr_u32(w, e->mode);
		wr_u64(w, e->size);
		wr_u64(w, (uint64_t)e->mtime_s);
		wr_u32(w, e->mtime_ns);
		wr_str(w, e->name);
		if (e->type == ENT_LNK)
			wr_str(w, e->target);
		if (e->type == ENT_SPECIAL) {
			wr_u32(w, e->rdev_major);
			wr_u32(w, e->rdev_minor);
		}
		if (e->flags & ENT_HAS_HASH)
			wr_bytes(w, e->hash, MSG_HASH_LEN);
		if (e->flags & (ENT_LINK_FIRST | ENT_LINK_TO))
			wr_u32(w, e->link);
		break;
	case MSG_XMETA:
		wr_u8(w, m->u.xmeta.flags);
		if (m->u.xmeta.flags & XM_OWNER) {
			wr_u32(w, m->u.xmeta.uid);
			wr_str(w, m->u.xmeta.user);
		}
		if (m->u.xmeta.flags & XM_GROUP) {
			wr_u32(w, m->u.xmeta.gid);
			wr_str(w, m->u.xmeta.group);
		}
		if (m->u.xmeta.flags & XM_XATTRS) {
			wr_u16(w, m->u.xmeta.count);
			wr_bytes(w, m->u.xmeta.xattrs, m->u.xmeta.xattr_bytes);
		}
		break;
	case MSG_DIR_END:
		break;
	case MSG_END:
		wr_u32(w, m->u.end.errors);
		wr_str(w, m->u.end.message);
		break;
	case MSG_DIR_META:
		wr_u32(w, m->u.dir_meta.mode);
		wr_u64(w, (uint64_t)m->u.dir_meta.mtime_s);
		wr_u32(w, m->u.dir_meta.mtime_ns);
		wr_str(w, m->u.dir_meta.path);
		break;
	case MSG_TOTALS:
		wr_u64(w, m->u.totals.files);
		wr_u64(w, m->u.totals.bytes);
		break;
	case MSG_SNAP:
		wr_u64(w, (uint64_t)m->u.snap.time);
		wr_u64(w, m->u.snap.files);
		wr_u64(w, m->u.snap.bytes);
		wr_str(w, m->u.snap.name);
		wr_str(w, m->u.snap.client);
		wr_u64(w, m->u.snap.failed);
		break;
	case MSG_FILE_BEGIN:
		wr_u32(w, m->u.file_begin.index);
		wr_u64(w, m->u.file_begin.size);
		wr_u32(w, m->u.file_begin.mode);
		wr_u64(w, (uint64_t)m->u.file_begin.mtime_s);
		wr_u32(w, m->u.file_begin.mtime_ns);
		break;
	case MSG_DATA:
	case MSG_HOLE:
		wr_u64(w, m->u.len.len);
		break;
	case MSG_ZDATA:
		wr_u32(w, m->u.zdata.raw_len);
		wr_u32(w, m->u.zdata.zlen);
		break;
	case MSG_FILE_END:
		wr_u8(w, m->u.file_end.status);
		wr_u8(w, m->u.file_end.has_hash);
		wr_bytes(w, m->u.file_end.hash, MSG_HASH_LEN);
		break;
	case MSG_WANT_SIG:
	case MSG_NEED_END:
	case MSG_REFINE_END:
	case MSG_REDO:
	case MSG_WANT:
	case MSG_DECIDED:
		wr_u32(w, m->u.index.index);
		break;
	case MSG_NOOP:
		break;
	case MSG_FILE_SIG:
	case MSG_WANT_DELTA:
		wr_u32(w, m->u.want_delta.index);
		wr_u32(w, m->u.want_delta.block);
		wr_u64(w, m->u.want_delta.size);
		wr_u8(w, m->u.want_delta.group);
		break;
	case MSG_SIG:
		wr_u32(w, m->u.sig.index);
		wr_u32(w, m->u.sig.first);
		wr_u16(w, m->u.sig.count);
		wr_bytes(w, m->u.sig.entries, (size_t)m->u.sig.count * SIG_ENTRY_LEN);
		break;
	case MSG_BENCH:
		wr_u8(w, m->u.bench.step);
		wr_u64(w, m->u.bench.bytes);
		break;
	case MSG_BENCH_DONE:
		wr_bench_done(w, &m->u.bench_done);
		break;
	case MSG_VERIFY:
		wr_u64(w, m->u.verify.if_older);
		wr_u8(w, m->u.verify.restart);
		break;
	case MSG_PAKE:
		wr_bytes(w, m->u.pake.share, MSG_PAKE_SHARE_LEN);
		break;
	case MSG_PAKE_TAG:
		wr_bytes(w, m->u.pake_tag.tag, MSG_PAKE_TAG_LEN);
		wr_str(w, m->u.pake_tag.module);
		break;
	case MSG_VERIFY_BAD:
		wr_str(w, m->u.verify_bad.where);
		wr_str(w, m->u.verify_bad.path);
		break;
	case MSG_VERIFY_STATUS: {
		const struct m_verify_status *v = &m->u.verify_status;
		wr_u8(w, v->final);
		wr_u8(w, v->skipped_run);
		wr_u64(w, v->files);
		wr_u64(w, v->bytes);
		wr_u64(w, v->bad);
		wr_u64(w, v->unhashed);
		wr_u64(w, v->skipped);
		wr_u64(w, v->ms);
		break;
	}
	case MSG_BENCH_STAGE:
		wr_bench_stage(w, &m->u.bench_stage);
		break;
	case MSG_NEED:
	case MSG_REFINE:
		wr_u32(w, m->u.need.index);
		wr_u32(w, m->u.need.block);
		wr_u32(w, m->u.need.count);
		break;
	case MSG_COPY:
		wr_u32(w, m->u.copy.block);
		wr_u32(w, m->u.copy.count);
		break;
	case MSG_CHANGE:
		wr_u8(w, m->u.change.kind | (m->u.change.target[0] ? CHG_F_TARGET : 0));
		wr_u8(w, m->u.change.bits);
		wr_str(w, m->u.change.path);
		if (m->u.change.target[0])
			wr_str(w, m->u.change.target);
		break;
	case MSG_RESULT:
		wr_u32(w, m->u.result.errors);
		wr_u64(w, m->u.result.files);
		wr_u64(w, m->u.result.bytes);
		wr_u64(w, m->u.result.uptodate);
		wr_u64(w, m->u.result.kept);
		wr_u64(w, m->u.result.deleted);
		wr_str(w, m->u.result.message);
		if (m->u.result.del_skipped)
			wr_u64(w, m->u.result.del_skipped);
		break;
	default:
		w->err = -EINVAL;
	}
}

int msg_encode(const struct msg *m, uint8_t *out, size_t cap)
{
	struct wr w;

	wr_init(&w, out, cap);
	wr_u8(&w, m->type);
	wr_fields(&w, m);
	if (w.err)
		return err_set(w.err, "protocol: cannot encode %s message", msg_type_name(m->type));
	return (int)w.len;
}

int hello_decode(const uint8_t *p, size_t n, struct hello *h)
{
	struct rd r;

	rd_init(&r, p, n);
	h->version = rd_u8(&r);
	h->features = rd_u32(&r);
	rd_str(&r, h->software, MSG_MAX_SOFTWARE);
	if (rd_end(&r))
		return err_set(-EBADMSG, "protocol: malformed hello (%zu bytes)", n);
	return 0;
}

int hello_encode(const struct hello *h, uint8_t *out, size_t cap)
{
	struct wr w;

	wr_init(&w, out, cap);
	wr_u8(&w, h->version);
	wr_u32(&w, h->features);
	wr_str(&w, h->software);
	if (w.err)
		return err_set(w.err, "protocol: cannot encode hello");
	return (int)w.len;
}
