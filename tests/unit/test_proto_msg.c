/* SPDX-License-Identifier: MIT */
/* The bounds-checked reader and the message codec: every message round-trips,
 * and truncated, oversized, trailing or out-of-range input is refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "proto/msg.h"
#include "proto/wire.h"

static uint8_t buf[MSG_MAX_ENCODED];

static void test_reader_bounds(void **state)
{
	(void)state;
	const uint8_t b[] = { 0x01, 0x02, 0x03 };
	struct rd r;

	rd_init(&r, b, sizeof b);
	assert_int_equal(rd_u16(&r), 0x0102);
	assert_int_equal(rd_u16(&r), 0);      /* only one byte left */
	assert_int_equal(r.err, -EBADMSG);
	assert_int_equal(rd_u8(&r), 0);       /* sticky */
	assert_int_equal(r.err, -EBADMSG);

	rd_init(&r, b, sizeof b);
	assert_int_equal(rd_u8(&r), 1);
	assert_int_equal(rd_end(&r), -EBADMSG);   /* trailing bytes */
}

static void test_reader_strings(void **state)
{
	(void)state;
	char out[8];
	struct rd r;
	const uint8_t ok[] = { 0, 3, 'a', 'b', 'c' };
	const uint8_t too_long[] = { 0, 8, 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };
	const uint8_t nul[] = { 0, 3, 'a', 0, 'c' };
	const uint8_t short_body[] = { 0, 5, 'a', 'b' };
	const uint8_t huge_len[] = { 0xff, 0xff, 'a' };

	rd_init(&r, ok, sizeof ok);
	rd_str(&r, out, 7);
	assert_int_equal(rd_end(&r), 0);
	assert_string_equal(out, "abc");
	rd_init(&r, too_long, sizeof too_long);
	rd_str(&r, out, 7);
	assert_int_equal(r.err, -EBADMSG);
	assert_string_equal(out, "");
	rd_init(&r, nul, sizeof nul);
	rd_str(&r, out, 7);
	assert_int_equal(r.err, -EBADMSG);
	rd_init(&r, short_body, sizeof short_body);
	rd_str(&r, out, 7);
	assert_int_equal(r.err, -EBADMSG);
	rd_init(&r, huge_len, sizeof huge_len);
	rd_str(&r, out, 7);
	assert_int_equal(r.err, -EBADMSG);
}

static void test_writer_overflow(void **state)
{
	(void)state;
	uint8_t small[5];
	struct wr w;

	wr_init(&w, small, sizeof small);
	wr_u32(&w, 1);
	assert_int_equal(w.err, 0);
	wr_u16(&w, 2);
	assert_int_equal(w.err, -EMSGSIZE);
	assert_int_equal(w.len, 4);
}

static void roundtrip(const struct msg *m)
{
	struct msg back;
	int n = msg_encode(m, buf, sizeof buf);
	assert_true(n > 0);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.type, m->type);
	/* re-encoding the decoded message gives the same bytes */
	uint8_t again[MSG_MAX_ENCODED];
	assert_int_equal(msg_encode(&back, again, sizeof again), n);
	assert_memory_equal(buf, again, (size_t)n);
	/* every truncation is refused, and so is a trailing byte */
	for (int k = 0; k < n; k++)
		assert_int_equal(msg_decode(buf, (size_t)k, &back), -EBADMSG);
	buf[n] = 0;
	assert_int_equal(msg_decode(buf, (size_t)n + 1, &back), -EBADMSG);
}

static void test_roundtrip_all(void **state)
{
	(void)state;
	struct msg m;

	memset(&m, 0, sizeof m);
	m.type = MSG_REQUEST;
	m.u.request.op = OP_PUSH;
	m.u.request.protection = 2;
	m.u.request.flags = REQ_DELETE | REQ_SLASH | REQ_MAX_DELETE;
	m.u.request.max_delete = 0xfffffffeu;
	m.u.request.flags2 = REQ2_MAX_SIZE | REQ2_MIN_SIZE | REQ2_MODIFY_WINDOW;
	m.u.request.max_size = UINT64_MAX;
	m.u.request.min_size = 1;
	m.u.request.modify_window = INT32_MAX;
	memset(m.u.request.module, 'm', MSG_MAX_NAME);
	memset(m.u.request.path, 'p', MSG_MAX_PATH);
	m.u.request.path[MSG_MAX_PATH] = '\0';
	/* the largest message there is: every string at its limit */
	memset(m.u.request.backup_dir, 'b', MSG_MAX_PATH);
	memset(m.u.request.suffix, 's', MSG_MAX_NAME);
	memset(m.u.request.chmod, 'c', MSG_MAX_NAME);
	roundtrip(&m);

	memset(&m, 0, sizeof m);
	m.type = MSG_ENTRY;
	m.u.entry.type = ENT_LNK;
	m.u.entry.flags = ENT_HAS_HASH;
	m.u.entry.mode = 0777;
	m.u.entry.mtime_s = -5;
	m.u.entry.mtime_ns = 999999999;
	memset(m.u.entry.name, 'n', MSG_MAX_NAME);
	memset(m.u.entry.target, 't', MSG_MAX_PATH);
	memset(m.u.entry.hash, 0xab, MSG_HASH_LEN);
	roundtrip(&m);

	memset(&m, 0, sizeof m);
	m.type = MSG_FILE_BEGIN;
	m.u.file_begin.index = 0xffffffffu;
	m.u.file_begin.size = (uint64_t)5 << 30;
	m.u.file_begin.mode = 0644;
	roundtrip(&m);

	memset(&m, 0, sizeof m);
	m.type = MSG_DIR_END;
	roundtrip(&m);
	m.type = MSG_END;
	roundtrip(&m);
	m.u.end.errors = 2;
	strcpy(m.u.end.message, "d: cannot list directory");
	roundtrip(&m);
	memset(&m, 0, sizeof m);
	m.type = MSG_RESULT;
	m.u.result.errors = 3;
	m.u.result.uptodate = (uint64_t)1 << 40;
	strcpy(m.u.result.message, "x: failed");
	roundtrip(&m);
	/* --max-delete's count: a trailing field, on the wire only when not 0
	 * (so an older client never meets it), and 0 spelled out is refused */
	{
		struct msg back;
		m.u.result.del_skipped = 5;
		int n = msg_encode(&m, buf, sizeof buf);
		assert_true(n > 8);
		assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
		assert_int_equal(back.u.result.del_skipped, 5);
		assert_int_equal(msg_decode(buf, (size_t)n - 8, &back), 0);
		assert_int_equal(back.u.result.del_skipped, 0);
		for (int k = 1; k < 8; k++)
			assert_int_equal(msg_decode(buf, (size_t)n - (size_t)k, &back), -EBADMSG);
		memset(buf + n - 8, 0, 8);
		assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
		buf[n] = 1;
		assert_int_equal(msg_decode(buf, (size_t)n + 1, &back), -EBADMSG);
	}
	/* flags2 comes with REQ_MORE, which the encoder sets; REQ_MORE with
	 * flags2 0, or a flags2 bit this side does not know, is refused */
	memset(&m, 0, sizeof m);
	m.type = MSG_REQUEST;
	m.u.request.op = OP_PULL;
	m.u.request.flags2 = REQ2_MIN_SIZE;
	m.u.request.min_size = 1024;
	roundtrip(&m);
	{
		struct msg back;
		int n = msg_encode(&m, buf, sizeof buf);
		assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
		assert_true(back.u.request.flags & REQ_MORE);
		assert_int_equal(back.u.request.flags2, REQ2_MIN_SIZE);
		assert_int_equal(back.u.request.min_size, 1024);
		assert_int_equal(back.u.request.max_size, 0);
		/* flags2 is the 4 bytes before min_size, big-endian */
		buf[n - 9] = 0;
		assert_int_equal(msg_decode(buf, (size_t)n - 8, &back), -EBADMSG);
		buf[n - 10] = 0x01;   /* 0x100: the first bit past REQ2_DELETE_AFTER */
		assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
		buf[n - 10] = 0;
		buf[n - 9] = REQ2_DELETE_DELAY | REQ2_CHG_CSUM | REQ2_DELETE_AFTER | REQ2_MIN_SIZE;
		assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);   /* known, no field */
		assert_int_equal(back.u.request.flags2,
				 REQ2_DELETE_DELAY | REQ2_CHG_CSUM | REQ2_DELETE_AFTER | REQ2_MIN_SIZE);
		assert_int_equal(back.u.request.min_size, 1024);
		buf[n - 9] = REQ2_MIN_SIZE;
		assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	}
	/* a REQUEST without the flag carries no limit */
	memset(&m, 0, sizeof m);
	m.type = MSG_REQUEST;
	m.u.request.op = OP_PULL;
	m.u.request.max_delete = 7;   /* not sent without REQ_MAX_DELETE */
	{
		struct msg back;
		int n = msg_encode(&m, buf, sizeof buf);
		assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
		assert_int_equal(back.u.request.max_delete, 0);
	}

	memset(&m, 0, sizeof m);
	m.type = MSG_SNAP;
	m.u.snap.time = -1;
	m.u.snap.files = (uint64_t)1 << 50;
	m.u.snap.bytes = 12345;
	memset(m.u.snap.name, 'n', MSG_MAX_NAME);
	strcpy(m.u.snap.client, "Ldesu4xp");
	roundtrip(&m);

	/* two-level signatures: the group, REFINE and REFINE_END */
	memset(&m, 0, sizeof m);
	m.type = MSG_WANT_DELTA;
	m.u.want_delta = (struct m_want_delta){ .index = 7, .block = 65536, .size = 1ull << 34,
						.group = 16 };
	roundtrip(&m);
	m.type = MSG_REFINE;
	m.u.need = (struct m_need){ .index = 7, .block = 3, .count = 0xffffffffu };
	roundtrip(&m);
	memset(&m, 0, sizeof m);
	m.type = MSG_REFINE_END;
	m.u.index.index = 7;
	roundtrip(&m);

	/* ferry bench HOST:MODULE: BENCH, BENCH_DONE, BENCH_STAGE and the op */
	struct msg back;
	int n;
	memset(&m, 0, sizeof m);
	m.type = MSG_BENCH;
	m.u.bench = (struct m_bench){ .step = BSTEP_E2E_DOWN, .bytes = 1ull << 40 };
	roundtrip(&m);
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.u.bench.step, BSTEP_E2E_DOWN);
	assert_true(back.u.bench.bytes == 1ull << 40);

	memset(&m, 0, sizeof m);
	m.type = MSG_BENCH_DONE;
	m.u.bench_done = (struct m_bench_done){
		.step = BSTEP_DISK, .status = BENCH_REFUSED, .bytes = 1ull << 41,
		.ns = 123456789012ull, .user_us = 1, .sys_us = 2, .wait_us = 3,
		.tcp_busy_us = 4, .tcp_rwnd_us = 5, .tcp_sndbuf_us = UINT64_MAX,
		.tcp_sent = 6, .tcp_retrans = UINT64_MAX - 1
	};
	memset(m.u.bench_done.note, 'n', BENCH_MAX_NOTE);   /* 200 chars, the limit */
	roundtrip(&m);
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.u.bench_done.status, BENCH_REFUSED);
	assert_true(back.u.bench_done.tcp_sndbuf_us == UINT64_MAX);
	assert_true(back.u.bench_done.tcp_sent == 6);
	assert_true(back.u.bench_done.tcp_retrans == UINT64_MAX - 1);
	assert_int_equal(strlen(back.u.bench_done.note), BENCH_MAX_NOTE);

	memset(&m, 0, sizeof m);
	m.type = MSG_BENCH_STAGE;
	m.u.bench_stage = (struct m_bench_stage){
		.unit = 2, .verdict = 4, .cliff = 1, .rate_m = 1, .seconds_us = 2, .bytes = 3,
		.ops = 4, .dev_bytes = 5, .burst_m = 6, .sustained_m = 7, .cliff_bytes = UINT64_MAX
	};
	/* every string at its limit: the field's size less the NUL */
	memset(m.u.bench_stage.name, 'a', sizeof m.u.bench_stage.name - 1);
	memset(m.u.bench_stage.label, 'l', sizeof m.u.bench_stage.label - 1);
	memset(m.u.bench_stage.method, 'm', sizeof m.u.bench_stage.method - 1);
	memset(m.u.bench_stage.note, 'n', sizeof m.u.bench_stage.note - 1);
	assert_int_equal(strlen(m.u.bench_stage.name), 31);
	assert_int_equal(strlen(m.u.bench_stage.label), 39);
	assert_int_equal(strlen(m.u.bench_stage.method), 39);
	assert_int_equal(strlen(m.u.bench_stage.note), 127);
	roundtrip(&m);
	n = msg_encode(&m, buf, sizeof buf);
	/* compared as memory: the padding must be equal too (the stack's left
	 * it different under qemu-mips once other code used it) */
	memset(&back, 0, sizeof back);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_memory_equal(&back.u.bench_stage, &m.u.bench_stage, sizeof m.u.bench_stage);

	memset(&m, 0, sizeof m);
	m.type = MSG_REQUEST;
	m.u.request.op = OP_BENCH;
	strcpy(m.u.request.module, "data");
	roundtrip(&m);
}

/* CHANGE: every kind and every bit (0x80, -c's 'c', included) travel; a kind
 * past the last is refused */
static void test_change(void **state)
{
	struct msg m, back;

	(void)state;
	memset(&m, 0, sizeof m);
	m.type = MSG_CHANGE;
	strcpy(m.u.change.path, "d/f");
	for (int k = CHG_NEW; k <= CHG_UNSAFE; k++) {
		m.u.change.kind = (uint8_t)k;
		m.u.change.bits = CHGB_KNOWN;
		roundtrip(&m);
	}
	int n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.u.change.bits, CHGB_CSUM | CHGB_XATTR | CHGB_ACL | CHGB_GROUP |
					     CHGB_OWNER | CHGB_PERMS | CHGB_TIME | CHGB_SIZE);
	/* kinds 10 and 11 and a symlink's change carry a target; nothing else does */
	for (int k = CHG_NEW; k <= CHG_HLINK_UPD; k++) {
		m.u.change.kind = (uint8_t)k;
		m.u.change.bits = CHGB_TIME;
		memset(m.u.change.target, 'x', MSG_MAX_PATH);
		m.u.change.target[MSG_MAX_PATH] = '\0';
		n = msg_encode(&m, buf, sizeof buf);
		assert_true(n > 0);
		int linked = k == CHG_HLINK || k == CHG_HLINK_UPD;
		if (linked || k == CHG_LINK || k == CHG_META || k == CHG_UNSAFE) {
			roundtrip(&m);
			assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
			assert_int_equal(strlen(back.u.change.target), MSG_MAX_PATH);
			assert_int_equal(back.u.change.kind, k);
		} else {
			assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
		}
		m.u.change.target[0] = '\0';
		n = msg_encode(&m, buf, sizeof buf);
		assert_int_equal(msg_decode(buf, (size_t)n, &back), linked ? -EBADMSG : 0);
	}
	/* the target flag with an empty target */
	m.u.change.kind = CHG_LINK;
	n = msg_encode(&m, buf, sizeof buf);
	buf[1] |= CHG_F_TARGET;
	buf[n] = 0;
	buf[n + 1] = 0;
	assert_int_equal(msg_decode(buf, (size_t)n + 2, &back), -EBADMSG);
	m.u.change.kind = CHG_HLINK_UPD + 1;
	n = msg_encode(&m, buf, sizeof buf);
	assert_true(n < 0 || msg_decode(buf, (size_t)n, &back) == -EBADMSG);
}

static void test_noop(void **state)
{
	struct msg m = { .type = MSG_NOOP }, back;

	(void)state;
	roundtrip(&m);
	int n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(n, 1);
	assert_int_equal(msg_decode(buf, 1, &back), 0);
	assert_int_equal(back.type, MSG_NOOP);
}

static void test_refuses_bad_values(void **state)
{
	(void)state;
	struct msg m, back;
	int n;

	/* an unknown type */
	buf[0] = 0x7f;
	assert_int_equal(msg_decode(buf, 1, &back), -EBADMSG);
	assert_int_equal(msg_decode(buf, 0, &back), -EBADMSG);

	/* nanoseconds out of range */
	memset(&m, 0, sizeof m);
	m.type = MSG_ENTRY;
	m.u.entry.type = ENT_REG;
	strcpy(m.u.entry.name, "a");
	m.u.entry.mtime_ns = 1000000000u;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* an unknown entry type, an empty name */
	m.u.entry.mtime_ns = 0;
	m.u.entry.type = 9;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	m.u.entry.type = ENT_REG;
	m.u.entry.name[0] = '\0';
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* a name longer than 255 bytes, written by hand */
	uint8_t raw[600] = { MSG_ENTRY, ENT_REG, 0, 0, 0, 0, 0 };
	size_t off = 1 + 1 + 1 + 4 + 8 + 8 + 4;
	raw[off] = 1;       /* length 256 */
	raw[off + 1] = 0;
	memset(raw + off + 2, 'a', 256);
	assert_int_equal(msg_decode(raw, off + 2 + 256, &back), -EBADMSG);

	/* --modify-window: at most INT32_MAX seconds */
	memset(&m, 0, sizeof m);
	m.type = MSG_REQUEST;
	m.u.request.op = OP_PUSH;
	m.u.request.flags2 = REQ2_MODIFY_WINDOW;
	m.u.request.modify_window = (uint32_t)INT32_MAX + 1;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* DIR_BEGIN: the known flags, and no other (a partial listing's
	 * meaning must not be lost on a receiver that would mirror it) */
	memset(&m, 0, sizeof m);
	m.type = MSG_DIR_BEGIN;
	strcpy(m.u.dir_begin.path, "a/b");
	m.u.dir_begin.flags = DIRB_PARTIAL;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.u.dir_begin.flags, DIRB_PARTIAL);
	m.u.dir_begin.flags = DIRB_KNOWN + 1;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* unknown request flags and ops */
	memset(&m, 0, sizeof m);
	m.type = MSG_REQUEST;
	m.u.request.op = 9;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	m.u.request.op = OP_PULL;
	m.u.request.flags = REQ_KNOWN + 1;   /* the first unassigned bit */
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	/* OP_VERIFY is the last op there is */
	m.u.request.flags = 0;
	m.u.request.op = OP_BENCH;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.u.request.op, OP_BENCH);
	m.u.request.op = OP_VERIFY;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	m.u.request.op = OP_PAIR;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	m.u.request.op = OP_PAIR + 1;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* VERIFY: restart 0/1, if_older an int64; VERIFY_STATUS: flags 0/1 */
	memset(&m, 0, sizeof m);
	m.type = MSG_VERIFY;
	m.u.verify = (struct m_verify){ .if_older = (uint64_t)INT64_MAX, .restart = 1 };
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.u.verify.if_older, (uint64_t)INT64_MAX);
	m.u.verify.restart = 2;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	m.u.verify = (struct m_verify){ .if_older = (uint64_t)INT64_MAX + 1 };
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	memset(&m, 0, sizeof m);
	m.type = MSG_VERIFY_STATUS;
	m.u.verify_status = (struct m_verify_status){ .final = 1, .skipped_run = 1, .files = 3,
						      .bytes = 1ull << 40, .bad = 2, .unhashed = 1,
						      .skipped = 7, .ms = 12345 };
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_int_equal(back.u.verify_status.bytes, 1ull << 40);
	m.u.verify_status.final = 2;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	memset(&m, 0, sizeof m);
	m.type = MSG_VERIFY_BAD;
	memset(m.u.verify_bad.where, 'w', MSG_MAX_NAME);
	memset(m.u.verify_bad.path, 'p', MSG_MAX_PATH);
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_memory_equal(back.u.verify_bad.path, m.u.verify_bad.path, MSG_MAX_PATH + 1);

	/* PAKE: exactly a share; PAKE_TAG: a tag and a module name; cut short fails */
	memset(&m, 0, sizeof m);
	m.type = MSG_PAKE;
	memset(m.u.pake.share, 0xab, MSG_PAKE_SHARE_LEN);
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(n, 1 + MSG_PAKE_SHARE_LEN);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_memory_equal(back.u.pake.share, m.u.pake.share, MSG_PAKE_SHARE_LEN);
	assert_int_equal(msg_decode(buf, (size_t)n - 1, &back), -EBADMSG);
	memset(&m, 0, sizeof m);
	m.type = MSG_PAKE_TAG;
	memset(m.u.pake_tag.tag, 0xcd, MSG_PAKE_TAG_LEN);
	strcpy(m.u.pake_tag.module, "backup");
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	assert_memory_equal(back.u.pake_tag.tag, m.u.pake_tag.tag, MSG_PAKE_TAG_LEN);
	assert_string_equal(back.u.pake_tag.module, "backup");
	assert_int_equal(msg_decode(buf, 40, &back), -EBADMSG);

	/* BENCH: steps 1 .. BSTEP_LAST, bytes that fit an int64 */
	memset(&m, 0, sizeof m);
	m.type = MSG_BENCH;
	m.u.bench = (struct m_bench){ .step = BSTEP_NET_UP, .bytes = (uint64_t)INT64_MAX };
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	m.u.bench.bytes = (uint64_t)INT64_MAX + 1;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	m.u.bench.bytes = 0;
	m.u.bench.step = 0;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	m.u.bench.step = BSTEP_LAST + 1;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* BENCH_DONE: no step 0, status OK or REFUSED only */
	memset(&m, 0, sizeof m);
	m.type = MSG_BENCH_DONE;
	m.u.bench_done.step = BSTEP_PING;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), 0);
	m.u.bench_done.step = 0;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	m.u.bench_done.step = BSTEP_PING;
	m.u.bench_done.status = 2;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* BENCH_STAGE: unit 0..2, verdict 0..4, cliff 0..1, a name */
	struct { uint8_t unit, verdict, cliff; const char *name; int ok; } bs[] = {
		{ 0, 0, 0, "seq_write", 0 },
		{ 3, 0, 0, "seq_write", -EBADMSG },
		{ 0, 5, 0, "seq_write", -EBADMSG },
		{ 0, 0, 2, "seq_write", -EBADMSG },
		{ 0, 0, 0, "", -EBADMSG },
	};
	for (size_t i = 0; i < sizeof bs / sizeof *bs; i++) {
		memset(&m, 0, sizeof m);
		m.type = MSG_BENCH_STAGE;
		m.u.bench_stage.unit = bs[i].unit;
		m.u.bench_stage.verdict = bs[i].verdict;
		m.u.bench_stage.cliff = bs[i].cliff;
		strcpy(m.u.bench_stage.name, bs[i].name);
		n = msg_encode(&m, buf, sizeof buf);
		assert_true(n > 0);
		assert_int_equal(msg_decode(buf, (size_t)n, &back), bs[i].ok);
	}

	/* groups: not 1, at most DELTA_MAX_GROUP blocks and DELTA_MAX_COARSE
	 * bytes, one whole group at least; never on FILE_SIG; REFINE of none */
	struct { uint8_t type; uint32_t block; uint64_t size; uint8_t group; int ok; } g[] = {
		{ MSG_WANT_DELTA, 8192, 40u << 20, 16, 0 },
		{ MSG_WANT_DELTA, 8192, 40u << 20, 1, -EBADMSG },
		{ MSG_WANT_DELTA, 2048, 40u << 20, 65, -EBADMSG },
		{ MSG_WANT_DELTA, 131072, 1ull << 36, 16, -EBADMSG },   /* 2 MiB groups */
		{ MSG_WANT_DELTA, 131072, 1ull << 36, 8, 0 },
		{ MSG_WANT_DELTA, 8192, 8192 * 15, 16, -EBADMSG },     /* no whole group */
		{ MSG_FILE_SIG, 8192, 40u << 20, 16, -EBADMSG },
		{ MSG_FILE_SIG, 8192, 40u << 20, 0, 0 },
	};
	for (size_t i = 0; i < sizeof g / sizeof *g; i++) {
		memset(&m, 0, sizeof m);
		m.type = g[i].type;
		m.u.want_delta = (struct m_want_delta){ .index = 1, .block = g[i].block,
							.size = g[i].size, .group = g[i].group };
		n = msg_encode(&m, buf, sizeof buf);
		assert_int_equal(msg_decode(buf, (size_t)n, &back), g[i].ok);
	}
	memset(&m, 0, sizeof m);
	m.type = MSG_REFINE;
	m.u.need.index = 1;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);

	/* zero-length DATA and a length beyond any file */
	memset(&m, 0, sizeof m);
	m.type = MSG_DATA;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
	m.u.len.len = UINT64_MAX;
	n = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)n, &back), -EBADMSG);
}

static void test_hello(void **state)
{
	(void)state;
	struct hello h = { .version = 1, .features = 7 }, back;
	strcpy(h.software, "ferry 0.1.0");
	int n = hello_encode(&h, buf, sizeof buf);
	assert_true(n > 0);
	assert_int_equal(hello_decode(buf, (size_t)n, &back), 0);
	assert_string_equal(back.software, "ferry 0.1.0");
	assert_int_equal(hello_decode(buf, (size_t)n - 1, &back), -EBADMSG);
}


/* XMETA: xattr records are counted, sorted, unique, in known namespaces and
 * within the limits; an owner name is at most XMETA_MAX_IDNAME bytes. */
static size_t rec(uint8_t *p, const char *name, size_t vlen)
{
	size_t nl = strlen(name), o = 0;
	p[o++] = (uint8_t)nl;
	memcpy(p + o, name, nl);
	o += nl;
	p[o++] = (uint8_t)(vlen >> 8);
	p[o++] = (uint8_t)vlen;
	memset(p + o, 'v', vlen);
	return o + vlen;
}

static int xmeta_try(const uint8_t *list, size_t bytes, uint16_t count, const char *user)
{
	static uint8_t enc[MSG_MAX_ENCODED + 70000];
	struct wr w;
	struct msg m;

	wr_init(&w, enc, sizeof enc);
	wr_u8(&w, MSG_XMETA);
	wr_u8(&w, XM_OWNER | XM_XATTRS);
	wr_u32(&w, 1000);
	wr_str(&w, user);
	wr_u16(&w, count);
	wr_bytes(&w, list, bytes);
	assert_int_equal(w.err, 0);
	return msg_decode(enc, w.len, &m);
}

static void test_xmeta_limits(void **state)
{
	(void)state;
	static uint8_t l[70000];
	static char longname[10001];
	size_t n;

	n = rec(l, "system.posix_acl_access", 28);
	n += rec(l + n, "user.a", 3);
	n += rec(l + n, "user.b", 0);
	assert_int_equal(xmeta_try(l, n, 3, "alice"), 0);
	assert_int_equal(xmeta_try(l, n, 2, "alice"), -EBADMSG);       /* count */
	assert_int_equal(xmeta_try(l, n - 1, 3, "alice"), -EBADMSG);   /* cut short */
	memset(longname, 'x', 10000);
	assert_int_equal(xmeta_try(l, n, 3, longname), -EBADMSG);      /* 10,000-byte owner */
	n = rec(l, "user.b", 1);
	n += rec(l + n, "user.a", 1);
	assert_int_equal(xmeta_try(l, n, 2, ""), -EBADMSG);            /* unsorted */
	n = rec(l, "user.a", 1);
	n += rec(l + n, "user.a", 1);
	assert_int_equal(xmeta_try(l, n, 2, ""), -EBADMSG);            /* twice */
	n = rec(l, "system.evil", 1);
	assert_int_equal(xmeta_try(l, n, 1, ""), -EBADMSG);            /* namespace */
	n = rec(l, "user.", 1);
	assert_int_equal(xmeta_try(l, n, 1, ""), -EBADMSG);            /* no name */
	n = rec(l, "user.a", 30000);
	n += rec(l + n, "user.b", 30000);
	assert_int_equal(xmeta_try(l, n, 2, ""), -EBADMSG);            /* > 60000 bytes */
	n = rec(l, "user.a", 29000);
	n += rec(l + n, "user.b", 29000);
	assert_int_equal(xmeta_try(l, n, 2, ""), 0);
}

/* ENT_SPECIAL: only the four special types, with a device number. */
static void test_entry_special(void **state)
{
	(void)state;
	struct msg m = { .type = MSG_ENTRY }, back;
	int len;

	m.u.entry.type = ENT_SPECIAL;
	m.u.entry.mode = WIRE_IFCHR | 0666;
	m.u.entry.rdev_major = 1;
	m.u.entry.rdev_minor = 3;
	snprintf(m.u.entry.name, sizeof m.u.entry.name, "null");
	len = msg_encode(&m, buf, sizeof buf);
	assert_true(len > 0);
	assert_int_equal(msg_decode(buf, (size_t)len, &back), 0);
	assert_int_equal(back.u.entry.rdev_major, 1);
	assert_int_equal(back.u.entry.rdev_minor, 3);
	assert_int_equal(back.u.entry.mode, WIRE_IFCHR | 0666);
	m.u.entry.mode = 0040000 | 0755;   /* a directory is not special */
	len = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)len, &back), -EBADMSG);
	m.u.entry.type = ENT_REG;
	m.u.entry.mode = WIRE_IFIFO | 0644;  /* a regular file has no type bits */
	len = msg_encode(&m, buf, sizeof buf);
	assert_int_equal(msg_decode(buf, (size_t)len, &back), -EBADMSG);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_reader_bounds),
		cmocka_unit_test(test_reader_strings),
		cmocka_unit_test(test_writer_overflow),
		cmocka_unit_test(test_roundtrip_all),
		cmocka_unit_test(test_change),
		cmocka_unit_test(test_noop),
		cmocka_unit_test(test_refuses_bad_values),
		cmocka_unit_test(test_hello),
		cmocka_unit_test(test_xmeta_limits),
		cmocka_unit_test(test_entry_special),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
