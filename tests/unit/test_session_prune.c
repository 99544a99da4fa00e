/* SPDX-License-Identifier: MIT */
/* -m's look ahead over a tree made up here: the answers, and that what it
 * learned spares the walk below a second look (test_prune compares the
 * trees with the real rsync -m). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "session/prune.h"

/* the tree: each directory and what is in it ('/' ends a directory) */
static const char *const tree[][4] = {
	{ "", "a/", "e/", "top" },
	{ "a", "b/", NULL, NULL },
	{ "a/b", "c/", NULL, NULL },
	{ "a/b/c", "d/", NULL, NULL },
	{ "a/b/c/d", "file", NULL, NULL },
	{ "e", "f/", "h/", NULL },
	{ "e/f", "g/", NULL, NULL },
	{ "e/f/g", NULL, NULL, NULL },
	{ "e/h", NULL, NULL, NULL },
	{ "bad", NULL, NULL, NULL },
	/* a chain whose every level also holds z/f */
	{ "c", "a/", "z/", NULL },
	{ "c/a", "a/", "z/", NULL },
	{ "c/a/a", "z/", NULL, NULL },
	{ "c/z", "f", NULL, NULL },
	{ "c/a/z", "f", NULL, NULL },
	{ "c/a/a/z", "f", NULL, NULL },
};
static int calls;

static int fake_list(void *ctx, const char *wpath, const struct stat *parent, struct dirlist *l,
		     struct stat *st)
{
	(void)ctx;
	(void)parent;
	calls++;
	memset(st, 0, sizeof *st);
	st->st_ino = (ino_t)calls;   /* no loops here */
	if (!strcmp(wpath, "bad"))
		return -EACCES;
	for (size_t i = 0; i < sizeof tree / sizeof tree[0]; i++) {
		if (strcmp(tree[i][0], wpath))
			continue;
		l->ents = calloc(3, sizeof *l->ents);
		l->arena = calloc(3, 8);
		l->n = 0;
		for (int k = 1; k < 4 && tree[i][k]; k++) {
			size_t n = strlen(tree[i][k]);
			int dir = tree[i][k][n - 1] == '/';
			char *name = l->arena + 8 * l->n;
			memcpy(name, tree[i][k], n - (size_t)dir);
			l->ents[l->n].name = name;
			l->ents[l->n].st.st_mode = dir ? S_IFDIR | 0755 : S_IFREG | 0644;
			l->n++;
		}
		return 0;
	}
	return -ENOENT;
}

static void test_prune(void **state)
{
	struct prune p;

	(void)state;
	prune_init(&p, fake_list, NULL);
	calls = 0;
	assert_int_equal(prune_has_file(&p, "a", NULL), 1);
	assert_int_equal(calls, 4);   /* a, a/b, a/b/c, a/b/c/d */
	assert_string_equal(p.deepest, "a/b/c/d/file");
	/* the walk below asks again: known */
	assert_int_equal(prune_has_file(&p, "a/b", NULL), 1);
	assert_int_equal(prune_has_file(&p, "a/b/c/d", NULL), 1);
	assert_int_equal(calls, 4);
	/* an empty subtree, looked through once */
	calls = 0;
	assert_int_equal(prune_has_file(&p, "e", NULL), 0);
	assert_int_equal(calls, 4);   /* e, e/f, e/f/g, e/h */
	assert_int_equal(prune_has_file(&p, "e/f", NULL), 0);
	assert_int_equal(prune_has_file(&p, "e/f/g", NULL), 0);
	assert_int_equal(calls, 4);
	/* a directory that cannot be read holds something: the walk says why */
	assert_int_equal(prune_has_file(&p, "bad", NULL), 1);
	/* the deepest entry found outlives the ring: the walk down the chain
	 * asks of each level's "a" after its "z" was found, and looks no more */
	calls = 0;
	assert_int_equal(prune_has_file(&p, "c", NULL), 1);   /* c, c/a, c/a/a, c/a/a/z */
	assert_int_equal(calls, 4);
	for (int i = 0; i < PRUNE_FOUND_KEPT + 1; i++)
		assert_int_equal(prune_has_file(&p, "c/z", NULL), 1);
	assert_int_equal(prune_has_file(&p, "c/a", NULL), 1);
	assert_int_equal(prune_has_file(&p, "c/a/a", NULL), 1);
	assert_int_equal(calls, 5);   /* c/z once */
	/* another source's paths are other directories */
	prune_forget(&p);
	calls = 0;
	assert_int_equal(prune_has_file(&p, "e/f", NULL), 0);
	assert_int_equal(calls, 2);
	prune_free(&p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_prune),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
