/* SPDX-License-Identifier: MIT */
/* rsync's filter rules (src/util/filter.c): parsing, matching, sides,
 * merge and dir-merge files, errors, limits, the wire form. The expected
 * verdicts are rsync 3's (checked by hand against rsync -an and, for random
 * trees and rules, by tests/e2e/test_filter_oracle.sh). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "util/err.h"
#include "util/filter.h"

/* ---- a fake file system for merge and dir-merge files ------------------ */

struct fake_file {
	const char *dir;   /* NULL: a merge file */
	const char *name;
	const char *text;
};

static const struct fake_file *fake_fs;
static int reads;

static int fake_read(void *ctx, const char *dir, const char *name, char **data, size_t *len)
{
	(void)ctx;
	reads++;
	for (const struct fake_file *f = fake_fs; f && f->name; f++) {
		if ((f->dir == NULL) != (dir == NULL) || strcmp(f->name, name) != 0)
			continue;
		if (dir && strcmp(f->dir, dir) != 0)
			continue;
		if (strcmp(f->text, "<EACCES>") == 0)
			return err_set(-EACCES, "%s: permission denied", name);
		*len = strlen(f->text);
		*data = malloc(*len + 1);
		assert_non_null(*data);
		memcpy(*data, f->text, *len + 1);
		return 0;
	}
	return dir ? -ENOENT : err_set(-ENOENT, "%s: no such file", name);
}

static struct filter_list *list_opts(int delete_excluded, const struct fake_file *fs)
{
	struct filter_opts o = { .delete_excluded = delete_excluded, .read = fake_read };
	struct filter_list *fl;

	fake_fs = fs;
	assert_int_equal(filter_new(&fl, &o), 0);
	return fl;
}

/* A list of --filter rules (NULL-terminated). */
static struct filter_list *rules(const char *const *r)
{
	struct filter_list *fl = list_opts(0, NULL);
	for (; *r; r++) {
		int rc = filter_add(fl, FILTER_RULE, *r);
		if (rc)
			print_error("%s: %s\n", *r, err_msg());
		assert_int_equal(rc, 0);
	}
	return fl;
}

#define RULES(...) rules((const char *const[]){ __VA_ARGS__, NULL })

static int snd(const struct filter_list *fl, const char *path, int dir)
{
	return filter_match(fl, FILTER_SENDER, path, dir);
}

static int rcv(const struct filter_list *fl, const char *path, int dir)
{
	return filter_match(fl, FILTER_RECEIVER, path, dir);
}

enum { IN = FILTER_INCLUDED, EX = FILTER_EXCLUDED, NO = FILTER_NO_MATCH };

/* ---- patterns ------------------------------------------------------------ */

struct pcase {
	const char *rule, *path;
	int dir, want;
};

static void run_cases(const struct pcase *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct filter_list *fl = RULES(c[i].rule);
		int got = snd(fl, c[i].path, c[i].dir);
		if (got != c[i].want)
			print_error("rule '%s' on %s%s: want %d, got %d\n", c[i].rule, c[i].path,
				    c[i].dir ? "/" : "", c[i].want, got);
		assert_int_equal(got, c[i].want);
		filter_free(fl);
	}
}

static void test_patterns(void **state)
{
	static const struct pcase c[] = {
		/* no '/': the last component only */
		{ "- foo", "foo", 0, EX }, { "- foo", "a/b/foo", 0, EX }, { "- foo", "a/foo/b", 0, NO },
		{ "- foo", "xfoo", 0, NO }, { "- *.o", "a/x.o", 0, EX }, { "- *.o", "a.o/x", 0, NO },
		/* a '/' inside: the tail of the path, whole components */
		{ "- a/b", "a/b", 0, EX }, { "- a/b", "x/a/b", 0, EX }, { "- a/b", "xa/b", 0, NO },
		{ "- a/*", "x/a/b", 0, EX }, { "- a/*", "a/b/c", 0, NO }, { "- */b", "a/b", 1, EX },
		{ "- foo/*/bar", "x/foo/y/bar", 0, EX }, { "- foo/*/bar", "foo/y/z/bar", 0, NO },
		/* a leading '/': anchored at the transfer root */
		{ "- /foo", "foo", 0, EX }, { "- /foo", "a/foo", 0, NO }, { "- /a/*", "a/b", 0, EX },
		{ "- /a/*", "a/b/c", 0, NO }, { "- /", "a", 0, NO },
		/* a trailing '/': directories only */
		{ "- foo/", "foo", 1, EX }, { "- foo/", "foo", 0, NO }, { "- a/b/", "a/b", 1, EX },
		/* '*' does not cross '/', '**' does */
		{ "- /a*", "ab", 0, EX }, { "- /a*", "a/b", 0, NO }, { "- /a/**", "a/b/c", 0, EX },
		{ "- /a/**", "a", 1, NO }, { "- a/**/b", "a/x/b", 0, EX }, { "- a/**/b", "a/b", 0, NO },
		{ "- /**/foo", "foo", 0, NO }, { "- /**/foo", "a/foo", 0, EX },
		{ "- **/foo", "foo", 0, EX }, { "- **/foo", "a/b/foo", 0, EX },
		{ "- **foo", "a/xfoo", 0, EX }, { "- a**", "x/ab/c", 0, EX }, { "- b**", "ab/c", 0, NO },
		/* DIR + "/" + "***": the directory and everything in it */
		{ "- a/***", "a", 1, EX }, { "- a/***", "a", 0, NO }, { "- a/***", "a/b/c", 0, EX },
		{ "- a/***", "x/a/b", 0, EX }, { "- a/***", "ab", 1, NO },
		/* '?' and classes */
		{ "- ?", "a", 0, EX }, { "- ?", "ab", 0, NO }, { "- a?b", "a/b", 0, NO },
		{ "- [ab]", "b", 0, EX }, { "- [!ab]", "b", 0, NO }, { "- [^ab]", "c", 0, EX },
		{ "- [a-c]x", "bx", 0, EX }, { "- [c-a]", "b", 0, NO }, { "- []]", "]", 0, EX },
		{ "- [!]]", "]", 0, NO }, { "- []-a]", "^", 0, EX }, { "- [a-]", "-", 0, EX },
		{ "- [[:digit:]]*", "1x", 0, EX }, { "- [[:digit:]]*", "x1", 0, NO },
		{ "- [![:alpha:]]*", "_x", 0, EX }, { "- [[:upper:][:digit:]]", "Q", 0, EX },
		{ "- [[:foo:]]", "f", 0, NO }, { "- [[:a]", ":", 0, EX }, { "- [x", "[x", 0, NO },
		{ "- a[/]b", "a/b", 0, NO }, { "- [\\]]", "]", 0, EX }, { "- [a\\-c]", "-", 0, EX },
		/* '\' escapes only in a pattern with wildcards */
		{ "- a\\b", "a\\b", 0, EX }, { "- a\\b*", "a\\b", 0, NO }, { "- a\\b*", "ab", 0, EX },
		{ "- a\\\\b*", "a\\b", 0, EX }, { "- \\[x]", "[x]", 0, EX }, { "- [x]", "[x]", 0, NO },
		{ "- *\\", "a\\", 0, NO }, { "- \\*", "*", 0, EX }, { "- \\*", "a", 0, NO },
		/* '!': the rule applies when the pattern does not match */
		{ "-! */", "f", 0, EX }, { "-! */", "d", 1, NO }, { "-! foo", "foo", 0, NO },
		{ "-! foo", "bar", 0, EX },
		/* spaces and underscores belong to the pattern */
		{ "-  a", " a", 0, EX }, { "-_a b", "a b", 0, EX }, { "- a_", "a_", 0, EX },
		{ "- a ", "a", 0, NO },
	};
	(void)state;
	run_cases(c, sizeof c / sizeof c[0]);
}

static void test_rule_syntax(void **state)
{
	static const struct pcase c[] = {
		{ "exclude foo", "foo", 0, EX }, { "include foo", "foo", 0, IN },
		{ "exclude_foo", "foo", 0, EX }, { "exclude,! foo", "bar", 0, EX },
		{ "-,!_foo", "bar", 0, EX }, { "+,s foo", "foo", 0, IN }, { "hide foo", "foo", 0, EX },
		{ "show foo", "foo", 0, IN }, { "H foo", "foo", 0, EX }, { "S foo", "foo", 0, IN },
		{ "protect foo", "foo", 0, NO }, { "P foo", "foo", 0, NO }, { "R foo", "foo", 0, NO },
		{ "-r foo", "foo", 0, NO }, { "-s foo", "foo", 0, EX }, { "-sr foo", "foo", 0, EX },
		{ "P! foo", "bar", 0, NO },
	};
	(void)state;
	run_cases(c, sizeof c / sizeof c[0]);
}

static void test_first_match_wins(void **state)
{
	struct filter_list *fl = RULES("+ */", "+ *.c", "- *");

	(void)state;
	assert_int_equal(snd(fl, "src", 1), IN);
	assert_int_equal(snd(fl, "src/a.c", 0), IN);
	assert_int_equal(snd(fl, "src/a.h", 0), EX);
	assert_int_equal(snd(fl, "a.c", 1), IN);
	filter_free(fl);
	fl = RULES("- *.o", "+ foo.o");
	assert_int_equal(snd(fl, "foo.o", 0), EX);
	assert_int_equal(snd(fl, "foo.c", 0), NO);
	filter_free(fl);
}

/* ---- sides: what protects from --delete ------------------------------- */

static void test_sides(void **state)
{
	struct filter_list *fl = RULES("P keep", "H hidden", "R risky", "P *.log", "- x", "S shown",
				       "-! */");

	(void)state;
	assert_int_equal(snd(fl, "keep", 0), EX);        /* by the last rule: P is not the sender's */
	assert_int_equal(rcv(fl, "keep", 0), EX);        /* protected */
	assert_int_equal(snd(fl, "hidden", 1), EX);
	assert_int_equal(rcv(fl, "hidden", 1), NO);      /* at risk */
	assert_int_equal(rcv(fl, "risky.log", 0), EX);
	assert_int_equal(rcv(fl, "risky", 0), IN);       /* R: at risk */
	assert_int_equal(rcv(fl, "x", 0), EX);
	assert_int_equal(snd(fl, "shown", 0), IN);
	assert_int_equal(rcv(fl, "shown", 0), EX);       /* S is the sender's: the last rule */
	filter_free(fl);

	/* --delete-excluded: rules without a side are the sender's only */
	fl = list_opts(1, NULL);
	assert_int_equal(filter_add(fl, FILTER_RULE, "- a"), 0);
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, "b"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, "-sr c"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, "P d"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, "-r e"), 0);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(snd(fl, "a", 0), EX);
		assert_int_equal(rcv(fl, "a", 0), NO);
		assert_int_equal(snd(fl, "b", 0), EX);
		assert_int_equal(rcv(fl, "b", 0), NO);
		assert_int_equal(rcv(fl, "c", 0), EX);
		assert_int_equal(snd(fl, "d", 0), NO);
		assert_int_equal(rcv(fl, "d", 0), EX);
		assert_int_equal(rcv(fl, "e", 0), EX);
		/* the flag travels with the rules */
		uint8_t *w;
		size_t wl;
		struct filter_list *back;
		assert_int_equal(filter_encode(fl, &w, &wl), 0);
		assert_int_equal(filter_decode(w, wl, NULL, &back), 0);
		free(w);
		filter_free(fl);
		fl = back;
	}
	filter_free(fl);
}

/* ---- --exclude / --include and their files ------------------------------ */

static void test_old_syntax(void **state)
{
	struct filter_list *fl = list_opts(0, NULL);

	(void)state;
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, "+ inc"), 0);
	assert_int_equal(filter_add(fl, FILTER_INCLUDE, "- exc"), 0);
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, "!bang"), 0);
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, "-x"), 0);
	assert_int_equal(filter_add(fl, FILTER_INCLUDE, "P keep"), 0);
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, ""), 0);   /* nothing, as rsync */
	assert_int_equal(filter_count(fl), 5);
	assert_int_equal(snd(fl, "inc", 0), IN);
	assert_int_equal(snd(fl, "exc", 0), EX);
	assert_int_equal(snd(fl, "!bang", 0), EX);
	assert_int_equal(snd(fl, "-x", 0), EX);
	assert_int_equal(snd(fl, "P keep", 0), IN);
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, "!"), -EINVAL);
	assert_non_null(strstr(err_msg(), "not supported"));
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, "- "), -EINVAL);
	assert_int_equal(filter_add(fl, FILTER_RULE, ""), -EINVAL);
	assert_int_equal(filter_count(fl), 5);
	filter_free(fl);

	static const char from[] = "# comment\n; comment\n\n*.o\r\n+ keep.o\r- *.tmp\nbuild/\n";
	fl = list_opts(0, NULL);
	assert_int_equal(filter_add_file(fl, FILTER_EXCLUDE, from, strlen(from), "ex.txt"), 0);
	assert_int_equal(filter_count(fl), 4);
	assert_int_equal(snd(fl, "a.o", 0), EX);
	assert_int_equal(snd(fl, "keep.o", 0), EX);   /* first match: *.o */
	assert_int_equal(snd(fl, "x.tmp", 0), EX);
	assert_int_equal(snd(fl, "build", 1), EX);
	assert_int_equal(snd(fl, "#x", 0), NO);
	filter_free(fl);

	fl = list_opts(0, NULL);
	assert_int_equal(filter_add_file(fl, FILTER_INCLUDE, "a\n- b\n", 6, "in.txt"), 0);
	assert_int_equal(snd(fl, "a", 0), IN);
	assert_int_equal(snd(fl, "b", 0), EX);
	/* all or nothing, and the line is named */
	assert_int_equal(filter_add_file(fl, FILTER_RULE, "- c\n+ d\nbogus rule\n", 19, "m.txt"),
			 -EINVAL);
	assert_non_null(strstr(err_msg(), "m.txt line 3: rule 'bogus rule'"));
	assert_int_equal(filter_count(fl), 2);
	assert_int_equal(filter_add_file(fl, FILTER_RULE, "- c\0d\n", 6, "nul.txt"), -EINVAL);
	filter_free(fl);
}

/* ---- refusals ------------------------------------------------------------ */

static void test_refused(void **state)
{
	static const struct {
		const char *rule, *msg;
	} bad[] = {
		{ "!", "clearing the list" }, { "clear", "clearing the list" },
		{ "-p foo", "'p' (perishable) is not supported" },
		{ "-/ foo", "'/' (absolute-path matching) is not supported" },
		{ "-x foo", "'x' (xattr names) is not supported" },
		{ "-C", "'C' (CVS excludes) is not supported" },
		{ ":C", "'C' (CVS excludes) is not supported" },
		{ ".w x", "'w' (word-split merge file) is not supported" },
		{ "-w foo", "invalid modifier 'w'" }, { "-foo", "invalid modifier 'f'" },
		{ "-e foo", "invalid modifier 'e'" }, { "-n foo", "invalid modifier 'n'" },
		{ "P,s foo", "invalid modifier 's'" }, { "H,r foo", "invalid modifier 'r'" },
		{ ".! x", "invalid modifier '!'" }, { ":-- x", "invalid modifier '-'" },
		{ "-,,x", "invalid modifier ','" }, { "-\tfoo", "invalid modifier '\\x09'" },
		{ "exclude\tfoo", "invalid modifier '\\x09'" },
		{ "x foo", "unknown rule" }, { "e foo", "unknown rule" }, { "excludes foo", "unknown rule" },
		{ "-", "no pattern" }, { "- ", "no pattern" }, { "exclude", "no pattern" },
		{ ": a/b", "not a path" }, { ": ..", "not a path" }, { ": /", "not a path" },
		{ ". nowhere", "no such file" },
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct filter_list *fl = list_opts(0, NULL);
		int rc = filter_add(fl, FILTER_RULE, bad[i].rule);
		if (rc == 0 || !strstr(err_msg(), bad[i].msg) || !strstr(err_msg(), "rule '"))
			print_error("%s: rc %d, '%s'\n", bad[i].rule, rc, err_msg());
		assert_true(rc < 0);
		assert_non_null(strstr(err_msg(), bad[i].msg));
		assert_int_equal(filter_count(fl), 0);
		filter_free(fl);
	}
	/* a peer's byte is quoted, not printed */
	struct filter_list *fl = list_opts(0, NULL);
	assert_int_equal(filter_add(fl, FILTER_RULE, "\x1b[2J"), -EINVAL);
	assert_null(strchr(err_msg(), '\x1b'));
	assert_non_null(strstr(err_msg(), "\\x1b"));
	filter_free(fl);
}

/* ---- merge files --------------------------------------------------------- */

static void test_merge(void **state)
{
	static const struct fake_file fs[] = {
		{ NULL, "m1", "# merged\n- *.o\n. m2\n+ x\n" },
		{ NULL, "m2", "- deep\n" },
		{ NULL, "bare", "a\n- b\n" },
		{ NULL, "sided", "- a\n" },
		{ NULL, "sided2", "P a\n" },
		{ NULL, "loop", ". loop\n" },
		{ NULL, "dm", ": .rules\n" },
		{ NULL, "secret", "<EACCES>" },
		{ NULL, NULL, NULL },
	};
	struct filter_list *fl = list_opts(0, fs);

	(void)state;
	assert_int_equal(filter_add(fl, FILTER_RULE, "- first"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, ". m1"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, "merge,+ bare"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, ".es sided"), 0);
	assert_int_equal(filter_count(fl), 8);   /* first *.o deep x a "- b" "- sided" a */
	assert_int_equal(snd(fl, "y.o", 0), EX);
	assert_int_equal(snd(fl, "deep", 0), EX);
	assert_int_equal(snd(fl, "x", 0), IN);
	assert_int_equal(snd(fl, "a", 0), IN);
	assert_int_equal(snd(fl, "- b", 0), IN);   /* '+': every line is an include pattern */
	assert_int_equal(snd(fl, "sided", 0), EX);  /* 'e' */
	assert_int_equal(rcv(fl, "a", 0), IN);
	filter_free(fl);

	fl = list_opts(0, fs);
	assert_int_equal(filter_add(fl, FILTER_RULE, ".s sided"), 0);
	assert_int_equal(snd(fl, "a", 0), EX);
	assert_int_equal(rcv(fl, "a", 0), NO);   /* the merge rule's side */
	assert_int_equal(filter_add(fl, FILTER_RULE, ".r sided2"), -EINVAL);
	assert_non_null(strstr(err_msg(), "sided2 line 1: rule 'P a': a side given"));
	assert_int_equal(filter_add(fl, FILTER_RULE, ". loop"), -E2BIG);
	assert_non_null(strstr(err_msg(), "nested more than"));
	assert_int_equal(filter_add(fl, FILTER_RULE, ". secret"), -EACCES);
	assert_non_null(strstr(err_msg(), "rule '. secret': secret: permission denied"));
	assert_int_equal(filter_add(fl, FILTER_RULE, ". dm"), 0);   /* a dir-merge from a merge file */
	assert_int_equal(filter_count(fl), 2);
	filter_free(fl);

	/* no reader, no merge */
	struct filter_list *nr;
	assert_int_equal(filter_new(&nr, NULL), 0);
	assert_int_equal(filter_add(nr, FILTER_RULE, ". m1"), -EINVAL);
	assert_int_equal(filter_add(nr, FILTER_RULE, ": .r"), 0);
	assert_int_equal(filter_enter_dir(nr, ""), -EINVAL);
	filter_free(nr);
}

/* ---- dir-merge files ----------------------------------------------------- */

static void test_dir_merge(void **state)
{
	static const struct fake_file fs[] = {
		{ "", ".rules", "- /top\n+ keep*\n- *.tmp\n" },
		{ "a", ".rules", "- /x\n- keep2\n+ *.tmp\n" },
		{ "a/b", ".rules", "- /y/z\n" },
		{ "n", ".nrules", "- only\n" },
		{ "", ".ex", "gone\n" },
		{ NULL, NULL, NULL },
	};
	struct filter_list *fl = list_opts(0, fs);

	(void)state;
	assert_int_equal(filter_add(fl, FILTER_RULE, "- outer1"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, ": .rules"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, "dir-merge /.rules"), 0);   /* the same name: once */
	assert_int_equal(filter_add(fl, FILTER_RULE, "+ x"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, ":n .nrules"), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, ":-e .ex"), 0);
	assert_int_equal(filter_count(fl), 6);   /* outer1 :.rules +x :n "- .ex" :.ex */

	assert_int_equal(filter_enter_dir(fl, ""), 0);
	assert_int_equal(snd(fl, "top", 0), EX);
	assert_int_equal(snd(fl, "outer1", 0), EX);      /* before the dir-merge rule */
	assert_int_equal(snd(fl, "keep.tmp", 0), IN);
	assert_int_equal(snd(fl, "x.tmp", 0), EX);
	assert_int_equal(snd(fl, "gone", 0), EX);
	assert_int_equal(snd(fl, ".ex", 0), EX);
	assert_int_equal(snd(fl, "x", 0), IN);

	assert_int_equal(filter_enter_dir(fl, "a"), 0);
	assert_int_equal(snd(fl, "a/x", 0), EX);         /* "/x" anchored at a */
	assert_int_equal(snd(fl, "a/y.tmp", 0), IN);     /* a's rules before the root's */
	assert_int_equal(snd(fl, "a/keep2", 0), EX);
	assert_int_equal(snd(fl, "a/top", 0), NO);       /* "/top" is the root's top only */
	assert_int_equal(snd(fl, "a/keep", 0), IN);      /* inherited */
	assert_int_equal(filter_enter_dir(fl, "a/b"), 0);
	assert_int_equal(snd(fl, "a/b/y", 1), NO);
	assert_int_equal(snd(fl, "a/b/y/z", 0), EX);
	assert_int_equal(snd(fl, "a/b/x", 0), IN);       /* a's "/x" is a/x only */
	filter_leave_dir(fl);
	filter_leave_dir(fl);
	assert_int_equal(snd(fl, "x.tmp", 0), EX);       /* a's rules are gone */

	assert_int_equal(filter_enter_dir(fl, "n"), 0);
	assert_int_equal(snd(fl, "n/only", 0), EX);
	assert_int_equal(filter_enter_dir(fl, "n/m"), 0);
	assert_int_equal(snd(fl, "n/m/only", 0), NO);    /* 'n': not inherited */
	assert_int_equal(snd(fl, "n/m/a.tmp", 0), EX);   /* the root's are */
	filter_leave_dir(fl);
	filter_leave_dir(fl);
	filter_leave_dir(fl);
	filter_leave_dir(fl);   /* one too many: nothing */
	assert_int_equal(snd(fl, "top", 0), NO);
	filter_free(fl);
}

static void test_dir_merge_errors(void **state)
{
	static const struct fake_file fs[] = {
		{ "", ".r", "- ok\n" },
		{ "bad", ".r", "- fine\n. /etc/passwd\n" },
		{ "bad2", ".r", ": .other\n" },
		{ "bad3", ".r", "-p x\n" },
		{ "locked", ".r", "<EACCES>" },
		{ "s", ".s", "P x\n" },
		{ NULL, NULL, NULL },
	};
	struct filter_list *fl = list_opts(0, fs);

	(void)state;
	assert_int_equal(filter_add(fl, FILTER_RULE, ": .r"), 0);
	assert_int_equal(filter_enter_dir(fl, ""), 0);
	assert_int_equal(filter_enter_dir(fl, "bad"), -EINVAL);
	assert_non_null(strstr(err_msg(), "bad/.r line 2: rule '. /etc/passwd'"));
	assert_int_equal(filter_enter_dir(fl, "bad2"), -EINVAL);
	assert_int_equal(filter_enter_dir(fl, "bad3"), -EINVAL);
	assert_non_null(strstr(err_msg(), "bad3/.r line 1: rule '-p x'"));
	assert_int_equal(filter_enter_dir(fl, "locked"), -EACCES);
	/* a failed enter left the root's state as it was */
	assert_int_equal(snd(fl, "ok", 0), EX);
	assert_int_equal(snd(fl, "bad/fine", 0), NO);
	filter_leave_dir(fl);
	assert_int_equal(snd(fl, "ok", 0), NO);
	assert_int_equal(filter_add(fl, FILTER_RULE, ":s .s"), 0);
	assert_int_equal(filter_enter_dir(fl, "s"), -EINVAL);
	assert_non_null(strstr(err_msg(), "a side given in a merge file"));
	filter_free(fl);

	fl = list_opts(0, fs);
	static const char *const names[] = { ": .1", ": .2", ": .3", ": .4", ": .5", ": .6", ": .7", ": .8" };
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(filter_add(fl, FILTER_RULE, names[i]), 0);
	assert_int_equal(filter_add(fl, FILTER_RULE, ": .9"), -E2BIG);
	assert_int_equal(filter_add(fl, FILTER_RULE, ": .1"), 0);   /* a duplicate is nothing */
	reads = 0;
	assert_int_equal(filter_enter_dir(fl, ""), 0);
	assert_int_equal(reads, 8);
	filter_free(fl);
}

/* FILTER_MAX_DIR_RULES rules along the entered path, then a clear error. */
static void test_dir_rule_limit(void **state)
{
	static char big[FILTER_MAX_DIR_RULES / 4 * 4 + 16];
	static const struct fake_file fs[] = {
		{ "", ".r", big }, { "a", ".r", big }, { "a/b", ".r", big }, { "a/b/c", ".r", big },
		{ "a/b/c/d", ".r", big }, { NULL, NULL, NULL },
	};
	struct filter_list *fl = list_opts(0, fs);
	size_t o = 0;

	(void)state;
	for (int i = 0; i < FILTER_MAX_DIR_RULES / 4; i++)
		big[o++] = '-', big[o++] = ' ', big[o++] = 'x', big[o++] = '\n';
	big[o] = '\0';
	assert_int_equal(filter_add(fl, FILTER_RULE, ": .r"), 0);
	assert_int_equal(filter_enter_dir(fl, ""), 0);
	assert_int_equal(filter_enter_dir(fl, "a"), 0);
	assert_int_equal(filter_enter_dir(fl, "a/b"), 0);
	assert_int_equal(filter_enter_dir(fl, "a/b/c"), 0);
	assert_int_equal(filter_enter_dir(fl, "a/b/c/d"), -E2BIG);
	assert_non_null(strstr(err_msg(), "more than 10000 rules"));
	filter_leave_dir(fl);
	assert_int_equal(filter_enter_dir(fl, "a/b/c"), 0);   /* room again */
	filter_free(fl);
}

static void test_F(void **state)
{
	static const struct fake_file fs[] = {
		{ "", ".ferry-filter", "- junk\n" },
		{ NULL, NULL, NULL },
	};
	struct filter_list *fl = list_opts(0, fs);

	(void)state;
	assert_int_equal(filter_add_F(fl), 0);
	assert_int_equal(filter_count(fl), 1);
	assert_int_equal(filter_enter_dir(fl, ""), 0);
	assert_int_equal(snd(fl, "junk", 0), EX);
	assert_int_equal(snd(fl, ".ferry-filter", 0), NO);
	assert_int_equal(filter_add_F(fl), 0);
	assert_int_equal(snd(fl, ".ferry-filter", 0), EX);
	assert_int_equal(filter_add_F(fl), 0);
	assert_int_equal(filter_count(fl), 2);
	filter_free(fl);
}

/* ---- limits -------------------------------------------------------------- */

static void test_limits(void **state)
{
	struct filter_list *fl = list_opts(0, NULL);
	char rule[FILTER_MAX_RULE + 8];

	(void)state;
	for (int i = 0; i < FILTER_MAX_RULES; i++) {
		snprintf(rule, sizeof rule, "- r%d", i);
		assert_int_equal(filter_add(fl, FILTER_RULE, rule), 0);
	}
	assert_int_equal(filter_add(fl, FILTER_RULE, "- one-more"), -E2BIG);
	assert_non_null(strstr(err_msg(), "more than 1000 filter rules"));
	assert_int_equal(filter_count(fl), FILTER_MAX_RULES);
	assert_int_equal(snd(fl, "r999", 0), EX);
	filter_free(fl);

	/* 64 KiB of rule text */
	fl = list_opts(0, NULL);
	memset(rule, 'a', sizeof rule);
	rule[0] = '-';
	rule[1] = ' ';
	rule[1000] = '\0';
	int n = 0;
	while (filter_add(fl, FILTER_RULE, rule) == 0)
		n++;
	assert_int_equal(n, FILTER_MAX_TEXT / 1000);
	assert_non_null(strstr(err_msg(), "more than 65536 bytes"));
	filter_free(fl);

	/* one rule: at most FILTER_MAX_RULE bytes, as given and as sent */
	fl = list_opts(0, NULL);
	memset(rule, 'a', sizeof rule);
	rule[0] = '-';
	rule[1] = ' ';
	rule[FILTER_MAX_RULE] = '\0';
	assert_int_equal(filter_add(fl, FILTER_RULE, rule), 0);
	rule[FILTER_MAX_RULE] = 'a';
	rule[FILTER_MAX_RULE + 1] = '\0';
	assert_int_equal(filter_add(fl, FILTER_RULE, rule), -E2BIG);
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, rule + 3), 0);   /* sent as "- " + 4094 */
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, rule + 2), -E2BIG);   /* "- " + 4095 */
	assert_int_equal(filter_count(fl), 2);
	filter_free(fl);
}

/* A pattern that makes a backtracking matcher exponential: linear here. */
static void test_no_blowup(void **state)
{
	char pat[2100] = "- ", path[4001];
	struct timespec t0, t1;

	(void)state;
	for (int i = 0; i < 1000; i++)
		strcat(pat, "*a");
	strcat(pat, "b");
	memset(path, 'a', 4000);
	path[4000] = '\0';
	struct filter_list *fl = RULES(pat, "- **a**a**a**a**a**a**a**a**a**a**a**a**a**a**c");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(snd(fl, path, 0), NO);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	assert_true(t1.tv_sec - t0.tv_sec < 5);
	filter_free(fl);
}

/* ---- the wire form ------------------------------------------------------- */

static struct filter_list *wire_trip(struct filter_list *fl)
{
	struct filter_opts o = { .read = fake_read };
	struct filter_list *back;
	uint8_t *w, *w2;
	size_t wl, wl2;

	assert_int_equal(filter_encode(fl, &w, &wl), 0);
	assert_true(wl <= FILTER_MAX_WIRE);
	assert_int_equal(filter_decode(w, wl, &o, &back), 0);
	assert_int_equal(filter_encode(back, &w2, &wl2), 0);
	assert_int_equal(wl, wl2);
	assert_memory_equal(w, w2, wl);
	free(w);
	free(w2);
	filter_free(fl);
	return back;
}

static void test_wire(void **state)
{
	static const struct fake_file fs[] = {
		{ NULL, "m", "- from-merge\nP prot\n" },
		{ "", ".r", "- /anch\n" },
		{ NULL, NULL, NULL },
	};
	struct filter_list *fl = list_opts(0, fs);

	(void)state;
	static const char *const r[] = { "exclude,! */", "+ a b/", "P keep", ". m", ":n- .r",
					 "-_ lead", "+s  two", "R r*", "H,! x" };
	for (size_t i = 0; i < sizeof r / sizeof r[0]; i++)
		assert_int_equal(filter_add(fl, FILTER_RULE, r[i]), 0);
	assert_int_equal(filter_add(fl, FILTER_EXCLUDE, "+ inc"), 0);
	fl = wire_trip(fl);
	uint8_t *w;
	size_t wl;
	assert_int_equal(filter_encode(fl, &w, &wl), 0);
	static const uint8_t head[] = { 1, 0, 0, 11, 0, 5, '-', '!', ' ', '*', '/', 0, 6, '+' };
	assert_memory_equal(w, head, sizeof head);
	free(w);
	assert_int_equal(snd(fl, "f", 0), EX);
	assert_int_equal(snd(fl, "a b", 1), IN);
	assert_int_equal(rcv(fl, "keep", 1), EX);
	assert_int_equal(snd(fl, "from-merge", 1), EX);
	assert_int_equal(snd(fl, " lead", 1), EX);
	assert_int_equal(snd(fl, " two", 1), IN);
	assert_int_equal(filter_enter_dir(fl, ""), 0);
	assert_int_equal(rcv(fl, "- /anch", 1), EX);   /* ":-": the line is the pattern */
	assert_int_equal(rcv(fl, "anch", 1), NO);
	filter_free(fl);

	/* empty */
	fl = wire_trip(list_opts(0, NULL));
	assert_int_equal(filter_count(fl), 0);
	filter_free(fl);
}

static int decode(const void *b, size_t n)
{
	struct filter_list *fl = NULL;
	int rc = filter_decode(b, n, NULL, &fl);
	assert_true((rc == 0) == (fl != NULL));
	filter_free(fl);
	return rc;
}

static void test_wire_malformed(void **state)
{
	(void)state;
	assert_int_equal(decode("", 0), -EPROTO);
	assert_int_equal(decode("\1\0\0", 3), -EPROTO);
	assert_int_equal(decode("\2\0\0\0", 4), -EPROTO);        /* version */
	assert_int_equal(decode("\1\2\0\0", 4), -EPROTO);        /* flags */
	assert_int_equal(decode("\1\0\0\0", 4), 0);
	assert_int_equal(decode("\1\0\0\0x", 5), -EPROTO);       /* trailing */
	assert_int_equal(decode("\1\0\0\1", 4), -EPROTO);        /* cut */
	assert_int_equal(decode("\1\0\0\1\0", 5), -EPROTO);
	assert_int_equal(decode("\1\0\0\1\0\0", 6), -EPROTO);    /* empty rule */
	assert_int_equal(decode("\1\0\0\1\0\5- a", 9), -EPROTO); /* longer than the rest */
	assert_int_equal(decode("\1\0\0\1\0\3- a", 9), 0);
	assert_int_equal(decode("\1\0\0\1\0\3-\0a", 9), -EPROTO);
	assert_int_equal(decode("\1\0\0\1\0\3-\na", 9), -EPROTO);
	assert_int_equal(decode("\1\0\0\1\0\3. a", 9), -EINVAL); /* a peer names no file */
	assert_non_null(strstr(err_msg(), "not accepted from the peer"));
	assert_int_equal(decode("\1\0\0\1\0\3? a", 9), -EINVAL);
	assert_non_null(strstr(err_msg(), "peer's filter rule 1: rule '? a'"));
	assert_int_equal(decode("\1\0\x03\xe9", 4), -EPROTO);    /* 1001 rules */

	/* a rule longer than FILTER_MAX_RULE */
	size_t n = 4 + 2 + FILTER_MAX_RULE + 1;
	uint8_t *b = calloc(1, n);
	assert_non_null(b);
	b[0] = 1;
	b[3] = 1;
	b[4] = (FILTER_MAX_RULE + 1) >> 8;
	b[5] = (FILTER_MAX_RULE + 1) & 0xff;
	memset(b + 6, 'a', FILTER_MAX_RULE + 1);
	b[6] = '-';
	b[7] = ' ';
	assert_int_equal(decode(b, n), -EPROTO);
	free(b);

	/* 500 rules of 132 bytes: past 64 KiB of text (but not FILTER_MAX_WIRE) */
	n = 4 + 500 * (2 + 132);
	b = malloc(n);
	assert_non_null(b);
	b[0] = 1, b[1] = 0, b[2] = 500 >> 8, b[3] = 500 & 0xff;
	for (size_t i = 0; i < 500; i++) {
		uint8_t *r = b + 4 + i * 134;
		r[0] = 0, r[1] = 132;
		memset(r + 2, 'x', 132);
		r[2] = '-', r[3] = ' ';
	}
	assert_int_equal(decode(b, n), -EPROTO);
	assert_non_null(strstr(err_msg(), "more than 65536 bytes"));
	/* and 1000 of them is past FILTER_MAX_WIRE before anything is parsed */
	b[2] = 1000 >> 8, b[3] = 1000 & 0xff;
	uint8_t *b2 = realloc(b, 4 + 1000 * 134);
	assert_non_null(b2);
	b = b2;
	memcpy(b + 4 + 500 * 134, b + 4, 500 * 134);
	assert_int_equal(decode(b, 4 + 1000 * 134), -EPROTO);
	assert_non_null(strstr(err_msg(), "at most 67540"));
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_patterns),
		cmocka_unit_test(test_rule_syntax),
		cmocka_unit_test(test_first_match_wins),
		cmocka_unit_test(test_sides),
		cmocka_unit_test(test_old_syntax),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_dir_merge),
		cmocka_unit_test(test_dir_merge_errors),
		cmocka_unit_test(test_dir_rule_limit),
		cmocka_unit_test(test_F),
		cmocka_unit_test(test_limits),
		cmocka_unit_test(test_no_blowup),
		cmocka_unit_test(test_wire),
		cmocka_unit_test(test_wire_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
