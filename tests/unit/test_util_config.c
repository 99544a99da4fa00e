/* SPDX-License-Identifier: MIT */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "util/config.h"
#include "util/err.h"

static int parse(const char *text, struct ferry_config *c)
{
	return config_parse(text, strlen(text), "t.conf", c);
}

static void test_full_file(void **state)
{
	struct ferry_config c;
	const struct module_cfg *m;

	(void)state;
	assert_int_equal(config_load(FERRY_TEST_DATA_DIR "/ferry-full.conf", &c), 0);
	assert_string_equal(c.global.listen, "127.0.0.1:7900");
	assert_int_equal(c.global.max_connections, 12);
	assert_int_equal(c.global.max_unauthenticated, 3);
	assert_int_equal(c.global.bwlimit, 1572864);
	assert_int_equal(c.global.nice, -5);
	assert_int_equal(c.global.ionice, 3);
	assert_string_equal(c.global.log, "syslog");
	assert_string_equal(c.global.host_key, "/etc/ferry/host_key");
	assert_string_equal(c.global.authorized_keys, "/etc/ferry/all.keys");
	assert_int_equal(c.global.handshake_timeout, 30);
	assert_int_equal(c.n_modules, 2);

	m = config_module(&c, "backup");
	assert_non_null(m);
	assert_string_equal(m->path, "/mnt/usb/backup");
	assert_string_equal(m->comment, "nightly backups");
	assert_int_equal(m->read_only, 0);
	assert_string_equal(m->authorized_keys, "/etc/ferry/backup.keys");
	assert_int_equal(m->protection, 1);
	assert_int_equal(m->bwlimit, 500 * 1024);
	assert_int_equal(m->line, 16);

	m = config_module(&c, "media.v2");
	assert_non_null(m);
	assert_string_equal(m->path, "/mnt/usb/media");
	assert_null(m->comment);
	assert_int_equal(m->read_only, 1);
	assert_int_equal(m->protection, 0);
	assert_int_equal(m->bwlimit, 0);
	/* inherits the global authorized keys */
	assert_string_equal(m->authorized_keys, "/etc/ferry/all.keys");
	assert_null(config_module(&c, "missing"));
	assert_null(config_module(&c, "global"));
	config_free(&c);
	config_free(&c);   /* harmless twice */
}

static void test_defaults(void **state)
{
	struct ferry_config c;
	const struct module_cfg *m;
	char path[] = "/tmp/ferry-conf-XXXXXX";
	const char *text = "[m]\npath=/srv\n";
	int fd;

	(void)state;
	assert_int_equal(parse("", &c), 0);
	assert_string_equal(c.global.listen, "0.0.0.0");
	assert_int_equal(c.global.max_connections, 4);
	assert_int_equal(c.global.max_unauthenticated, 8);
	assert_int_equal(c.global.bwlimit, 0);
	assert_int_equal(c.global.nice, 10);
	assert_int_equal(c.global.ionice, 2);
	assert_string_equal(c.global.log, "stderr");
	assert_null(c.global.host_key);
	assert_null(c.global.authorized_keys);
	assert_int_equal(c.global.handshake_timeout, 10);
	assert_int_equal(c.global.max_unauth_per_addr, 4);
	assert_int_equal(c.global.io_timeout, 300);
	assert_int_equal(c.global.stale_age, 24 * 3600);
	assert_int_equal(c.global.partial_age, 7 * 24 * 3600);   /* stale partials */
	assert_int_equal(c.n_modules, 0);
	config_free(&c);

	/* keys before any section are global, as in rsyncd.conf; CRLF is fine;
	 * no trailing newline is fine */
	assert_int_equal(parse("nice = 0\r\n[m]\r\npath = /srv/x\r\nread only = true", &c), 0);
	assert_int_equal(c.global.nice, 0);
	m = config_module(&c, "m");
	assert_non_null(m);
	assert_string_equal(m->path, "/srv/x");
	assert_int_equal(m->read_only, 1);
	assert_int_equal(m->protection, 2);   /* PROT_ENCRYPT */
	assert_int_equal(m->compress, CFG_COMPRESS_AUTO);
	assert_null(m->authorized_keys);
	config_free(&c);

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	assert_int_equal(config_load(path, &c), 0);
	/* the default (ferry's directory, or an old key next to the file) is
	 * the daemon's to choose: cmd_serve.c, tested in test_known_hosts.sh */
	assert_null(c.global.host_key);
	config_free(&c);
	unlink(path);
	assert_int_equal(config_load(path, &c), -ENOENT);
	assert_non_null(strstr(err_msg(), path));
	assert_int_equal(config_load("/tmp", &c), -EINVAL);
}

/* Every class of mistake names file:line and what is wrong. */
static void test_errors(void **state)
{
	static const struct {
		const char *text;
		const char *where;
		const char *what;
	} cases[] = {
		{ "[m]\npath = /x\nfrobnicate = 1\n", "t.conf:3:", "unknown key \"frobnicate\"" },
		{ "[m]\ncomment = no path\n", "t.conf:1:", "module [m] has no path" },
		{ "[a]\npath=/a\n[b]\n\n[c]\npath=/c\n", "t.conf:3:", "module [b] has no path" },
		{ "\n\n[m]\npath = /x\n[m]\npath = /y\n", "t.conf:5:", "duplicate module m" },
		{ "max connections = lots\n", "t.conf:1:", "max connections" },
		{ "max connections = -1\n", "t.conf:1:", "max connections" },
		{ "max connections = 99999999999999999999\n", "t.conf:1:", "max connections" },
		{ "nice = 20\n", "t.conf:1:", "nice" },
		{ "nice = -21\n", "t.conf:1:", "nice" },
		{ "nice = 1x\n", "t.conf:1:", "nice" },
		{ "handshake timeout = 0\n", "t.conf:1:", "handshake timeout" },
		{ "timeout = 0\n", "t.conf:1:", "timeout: not a number of seconds 1..86400" },
		{ "timeout = 86401\n", "t.conf:1:", "timeout" },
		{ "max unauthenticated per address = -1\n", "t.conf:1:",
		  "max unauthenticated per address" },
		{ "stale temporaries = 1w\n", "t.conf:1:", "stale temporaries: bad age \"1w\"" },
		{ "stale temporaries = 366d\n", "t.conf:1:", "more than 365 days" },
		{ "[m]\npath=/x\ntimeout = 5\n", "t.conf:3:", "not allowed in a module" },
		{ "bwlimit = fast\n", "t.conf:1:", "bwlimit: bad rate \"fast\"" },
		{ "[m]\npath=/x\nbwlimit = 10Q\n", "t.conf:3:", "bwlimit" },
		{ "bwlimit = 99999999999999999999G\n", "t.conf:1:", "too large" },
		{ "[m]\npath=/x\nread only = maybe\n", "t.conf:3:", "read only" },
		{ "[m]\npath=/x\nprotection = strong\n", "t.conf:3:", "protection: bad protection" },
		{ "[m]\npath=/x\ncompress = fast\n", "t.conf:3:", "compress: expected auto, yes or no" },
		{ "compress = yes\n", "t.conf:1:", "not allowed in the global section" },
		{ "ionice = realtime\n", "t.conf:1:", "ionice" },
		{ "log = file\n", "t.conf:1:", "log" },
		{ "nice = 1\nnice = 2\n", "t.conf:2:", "duplicate key \"nice\"" },
		{ "[m]\npath=/x\nPath = /y\n", "t.conf:3:", "duplicate key \"path\"" },
		{ "nice = 1\n[global]\nnice = 2\n", "t.conf:3:", "duplicate key \"nice\"" },
		{ "path = /x\n", "t.conf:1:", "not allowed in the global section" },
		{ "[m]\npath=/x\nlisten = 1.2.3.4\n", "t.conf:3:", "not allowed in a module" },
		{ "just words\n", "t.conf:1:", "expected \"key = value\"" },
		{ " = value\n", "t.conf:1:", "missing key" },
		{ "[m\npath=/x\n", "t.conf:1:", "missing ']'" },
		{ "[]\n", "t.conf:1:", "empty section name" },
		{ "[a b]\n", "t.conf:1:", "bad module name" },
		{ "[a/b]\n", "t.conf:1:", "bad module name" },
		{ "[m] junk\n", "t.conf:1:", "unexpected text" },
		{ "[m]\npath =\n", "t.conf:2:", "path: empty" },
		{ "listen =   \n", "t.conf:1:", "listen" },
		{ "user = no-such-user-xyz\n", "t.conf:1:", "user: no user 'no-such-user-xyz'" },
		{ "user =\n", "t.conf:1:", "user: empty" },
		{ "user = 4242424\n", "t.conf:", "user 4242424 has no passwd entry" },
		{ "group = no-such-group-xyz\n", "t.conf:1:", "group: no group" },
		{ "[m]\npath=/x\nuid = 4242424\n", "t.conf:1:", "uid 4242424 has no passwd entry" },
		{ "[m]\npath=/x\ngid = nope-xyz\n", "t.conf:3:", "gid: no group 'nope-xyz'" },
		{ "user = nobody\n[m]\npath=/x\nuid = 0\ngid = 0\n", "t.conf:2:", "need a daemon that stays root" },
		{ "[m]\npath=/x\ngid = 0\n", "t.conf:1:", "gid without uid: the session would stay root" },
		{ "group = 0\n", "t.conf:", "\"group\" without \"user\"" },
		{ "[m]\npath=/x\nuser = nobody\n", "t.conf:3:", "not allowed in a module" },
	};
	struct ferry_config c;

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		err_clear();
		int r = parse(cases[i].text, &c);
		if (r == 0 || strncmp(err_msg(), cases[i].where, strlen(cases[i].where)) != 0 ||
		    !strstr(err_msg(), cases[i].what))
			fail_msg("case %zu (%s): r=%d msg \"%s\"", i, cases[i].text, r, err_msg());
		/* nothing left behind */
		assert_null(c.modules);
		assert_null(c.global.listen);
		assert_int_equal(c.n_modules, 0);
	}
}

static void test_hard_limits(void **state)
{
	struct ferry_config c;
	size_t cap = 300 * 32 + 64;
	char *text = malloc(cap);
	size_t n = 0;

	(void)state;
	assert_non_null(text);
	for (int i = 0; i < 257; i++)
		n += (size_t)snprintf(text + n, cap - n, "[m%d]\npath = /x\n", i);
	assert_int_equal(config_parse(text, n, "t.conf", &c), -EINVAL);
	assert_non_null(strstr(err_msg(), "t.conf:513:"));
	assert_non_null(strstr(err_msg(), "too many modules"));
	/* 256 is fine */
	n = 0;
	for (int i = 0; i < 256; i++)
		n += (size_t)snprintf(text + n, cap - n, "[m%d]\npath = /x\n", i);
	assert_int_equal(config_parse(text, n, "t.conf", &c), 0);
	assert_int_equal(c.n_modules, 256);
	assert_non_null(config_module(&c, "m255"));
	config_free(&c);
	free(text);

	text = malloc(5000);
	assert_non_null(text);
	memcpy(text, "comment = ", 10);
	memset(text + 10, 'c', 4990);
	assert_int_equal(config_parse(text, 5000, "t.conf", &c), -EINVAL);
	assert_non_null(strstr(err_msg(), "t.conf:1: line longer than 4096"));
	/* a line of exactly 4096 bytes is accepted (here: a long comment) */
	memset(text, '#', 4096);
	assert_int_equal(config_parse(text, 4096, "t.conf", &c), 0);
	config_free(&c);
	free(text);

	assert_int_equal(config_parse("nice = 1\n\0x", 11, "t.conf", &c), -EINVAL);
	assert_non_null(strstr(err_msg(), "t.conf:2: NUL"));
}

static void test_parse_rate(void **state)
{
	static const struct {
		const char *s;
		uint64_t want;
	} good[] = {
		{ "0", 0 }, { "1", 1024 }, { "100", 102400 }, { "1000K", 1024000 },
		{ "1k", 1024 }, { "10M", 10485760 }, { "1G", 1073741824 },
		{ "1.5M", 1572864 }, { "0.5", 512 }, { "1KB", 1000 }, { "2mb", 2000000 },
		{ "1GB", 1000000000 }, { "3MiB", 3145728 }, { "100b", 100 },
		{ "0.0001", 1 },   /* tiny but non-zero stays a limit */
		{ "1.", 1024 }, { ".5K", 512 }, { "0.000000000001G", 1 },
		{ "17179869183G", 17179869183ull << 30 },
	};
	static const char *const bad[] = {
		"", "K", ".", "-1", "1 K", " 1", "1K ", "1X", "1KK", "1.2.3", "0x10", "+5",
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		if (parse_rate(good[i].s, &v) != 0 || v != good[i].want)
			fail_msg("parse_rate(\"%s\") = %ju, want %ju (%s)", good[i].s,
				 (uintmax_t)v, (uintmax_t)good[i].want, err_msg());
	}
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (parse_rate(bad[i], &v) != -EINVAL)
			fail_msg("parse_rate(\"%s\") accepted", bad[i]);
	assert_int_equal(parse_rate("17179869184G", &v), -ERANGE);
	assert_int_equal(parse_rate("18446744073709551616", &v), -ERANGE);
}

/* The daemon's abuse limits: the per-address cap, the I/O timeout and the
 * age of stale temporaries (a plain number is hours). */
static void test_daemon_limits(void **state)
{
	static const struct {
		const char *s;
		long want;
	} ages[] = {
		{ "36", 36 * 3600 }, { "90s", 90 }, { "15m", 900 }, { "24h", 86400 }, { "2d", 172800 },
		{ "2D", 172800 }, { "0", 0 }, { "0h", 0 }, { "365d", 365L * 86400 },
		{ "8760", 365L * 86400 },
	};
	static const char *const bad[] = { "", "h", "-1", "1.5h", "1 h", "1hh", "1w", "0x10" };
	struct ferry_config c;
	long v;

	(void)state;
	assert_int_equal(parse("max unauthenticated per address = 2\ntimeout = 60\n"
			       "Stale  Temporaries = 36\nstale partials = 3d\n", &c), 0);
	assert_int_equal(c.global.max_unauth_per_addr, 2);
	assert_int_equal(c.global.io_timeout, 60);
	assert_int_equal(c.global.stale_age, 36 * 3600);
	assert_int_equal(c.global.partial_age, 3 * 24 * 3600);
	config_free(&c);
	assert_int_equal(parse("max unauthenticated per address = 0\nstale temporaries = 0\n", &c), 0);
	assert_int_equal(c.global.max_unauth_per_addr, 0);   /* no cap */
	assert_int_equal(c.global.stale_age, 0);             /* no sweep */
	config_free(&c);
	for (size_t i = 0; i < sizeof ages / sizeof ages[0]; i++)
		if (parse_age(ages[i].s, &v) != 0 || v != ages[i].want)
			fail_msg("parse_age(\"%s\") = %ld, want %ld", ages[i].s, v, ages[i].want);
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		if (parse_age(bad[i], &v) != -EINVAL)
			fail_msg("parse_age(\"%s\") accepted", bad[i]);
	assert_int_equal(parse_age("8761", &v), -ERANGE);
	assert_int_equal(parse_age("99999999999999999999d", &v), -ERANGE);
}

static void test_compress_key(void **state)
{
	struct ferry_config c;
	static const struct { const char *v; int want; } cases[] = {
		{ "auto", CFG_COMPRESS_AUTO }, { "yes", CFG_COMPRESS_YES }, { "true", CFG_COMPRESS_YES },
		{ "no", CFG_COMPRESS_NO }, { "0", CFG_COMPRESS_NO },
	};

	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
		char text[64];
		snprintf(text, sizeof text, "[m]\npath = /x\ncompress = %s\n", cases[i].v);
		assert_int_equal(parse(text, &c), 0);
		assert_int_equal(config_module(&c, "m")->compress, cases[i].want);
		config_free(&c);
	}
}

/* snapshots, append only and retention; rules without snapshots are refused,
 * and so is every key given twice (the seen-mask holds more than 32 keys). */
static void test_snapshot_keys(void **state)
{
	struct ferry_config c;

	(void)state;
	assert_int_equal(parse("[m]\npath = /x\nsnapshots = yes\nkeep last = 3\nkeep daily = 7\n"
			       "keep weekly = 4\nkeep monthly = 12\nkeep yearly = 2\nkeep hourly = 24\n"
			       "keep within = 2w\nprotect within = 3d\n[n]\npath = /y\n"
			       "append only = yes\n", &c), 0);
	const struct module_cfg *m = config_module(&c, "m");
	assert_true(m->snapshots && !m->append_only);
	assert_int_equal(m->keep.last, 3);
	assert_int_equal(m->keep.daily, 7);
	assert_int_equal(m->keep.yearly, 2);
	assert_int_equal(m->keep.within, 14 * 86400);
	assert_int_equal(m->keep.protect_within, 3 * 86400);
	assert_true(config_module(&c, "n")->append_only);
	config_free(&c);
	assert_true(parse("[m]\npath = /x\nkeep daily = 7\n", &c) < 0);
	assert_true(parse("[m]\npath = /x\nprotect within = 1d\n", &c) < 0);
	assert_true(parse("[m]\npath = /x\nsnapshots = yes\nkeep daily = x\n", &c) < 0);
	assert_true(parse("[m]\npath = /x\nsnapshots = yes\nkeep within = 7\n", &c) < 0);
	assert_true(parse("[m]\npath = /x\nsnapshots = yes\nprotect within = 1d\n"
			  "protect within = 2d\n", &c) < 0);
	assert_true(parse("[m]\npath = /x\nsnapshots = maybe\n", &c) < 0);
	assert_true(parse("keep daily = 1\n[m]\npath = /x\n", &c) < 0);
}

/* user/group and uid/gid: names or numbers, the group defaulting to the
 * user's primary one, in either order. */
static void test_ids(void **state)
{
	struct ferry_config c;

	(void)state;
	assert_int_equal(parse("group = 7\nuser = root\n[m]\npath=/x\n[n]\npath=/y\nuid = 0\n"
			       "[o]\npath=/z\ngid = 12\nuid = 4242424\n", &c), 0);
	assert_string_equal(c.global.user, "root");
	assert_int_equal(c.global.uid, 0);
	assert_int_equal(c.global.gid, 7);
	assert_false(config_module(&c, "m")->has_uid || config_module(&c, "m")->has_gid);
	assert_true(config_module(&c, "n")->has_uid && !config_module(&c, "n")->has_gid);
	assert_int_equal(config_module(&c, "n")->gid, 0);
	assert_int_equal(config_module(&c, "o")->uid, 4242424);
	assert_int_equal(config_module(&c, "o")->gid, 12);
	config_free(&c);
}

/* The numbers of enum protection in channel/channel.h. */
static void test_parse_protection(void **state)
{
	int p = -1;

	(void)state;
	assert_int_equal(parse_protection("encrypt", &p), 0);
	assert_int_equal(p, 2);
	assert_int_equal(parse_protection("integrity", &p), 0);
	assert_int_equal(p, 1);
	assert_int_equal(parse_protection("none", &p), 0);
	assert_int_equal(p, 0);
	assert_int_equal(parse_protection("Encrypt", &p), 0);
	assert_int_equal(parse_protection("encrypted", &p), -EINVAL);
	assert_int_equal(parse_protection("", &p), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_file),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_hard_limits),
		cmocka_unit_test(test_parse_rate),
		cmocka_unit_test(test_daemon_limits),
		cmocka_unit_test(test_parse_protection),
		cmocka_unit_test(test_compress_key),
		cmocka_unit_test(test_snapshot_keys),
		cmocka_unit_test(test_ids),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
