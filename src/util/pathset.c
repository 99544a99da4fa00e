/* SPDX-License-Identifier: MIT */
#include "util/pathset.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* One entry resolved into out (at most PATHSET_MAX_PATH bytes and a NUL):
 * components split at '/', "" and "." dropped, ".." taking the one before
 * it away (or nothing, at the top: "../foo" is "foo", as rsync says).
 * Returns its length, -1 when too long, -2 for rsync's -R anchor ("/./"
 * inside: the part after it would be the name sent, which ferry cannot
 * map). *contents: it names a directory's contents as rsync reads them
 * (it ends in '/', ".", or "..").
 */
static long resolve(const char *s, size_t n, char *out, unsigned *contents)
{
	size_t o = 0, i = 0;

	*contents = 0;
	while (i < n) {
		size_t j = i;
		while (j < n && s[j] != '/')
			j++;
		size_t cl = j - i;
		int dot = cl == 1 && s[i] == '.', dotdot = cl == 2 && s[i] == '.' && s[i + 1] == '.';
		if (dot && i > 0 && s[i - 1] == '/' && j < n && o > 0)
			return -2;
		*contents = j >= n - 1 ? (j == n - 1 || dot || dotdot) : *contents;
		if (dotdot) {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;   /* the '/' before the component taken away */
		} else if (cl && !dot) {
			if (o + (o ? 1 : 0) + cl > PATHSET_MAX_PATH)
				return -1;
			if (o)
				out[o++] = '/';
			memcpy(out + o, s + i, cl);
			o += cl;
		}
		i = j + 1;
	}
	out[o] = '\0';
	return (long)o;
}

static int cmp_ent(const void *a, const void *b)
{
	return strcmp(((const struct pathset_ent *)a)->path, ((const struct pathset_ent *)b)->path);
}

/* Entries, comments and blanks left out: calls add() on each, in order. */
static int each_entry(const char *data, size_t len, int nul_sep, const char *what,
		      int (*add)(void *ctx, const char *s, size_t n, size_t number), void *ctx)
{
	size_t number = 0;

	for (size_t i = 0; i < len;) {
		size_t j = i, next;
		while (j < len && data[j] != '\0' && (nul_sep || (data[j] != '\n' && data[j] != '\r')))
			j++;
		/* a NUL in a line ends its entry, and the rest of the line is
		 * dropped, as rsync reads it: no file name holds one */
		next = j;
		while (!nul_sep && next < len && data[next] != '\n' && data[next] != '\r')
			next++;
		number++;
		if (j > i && data[i] != '#' && data[i] != ';') {
			int rc = add(ctx, data + i, j - i, number);
			if (rc == -EINVAL)
				return err_set(rc, "%s: entry %zu has \"/./\" inside (rsync's --relative "
					       "anchor), which ferry does not take", what, number);
			if (rc < 0)
				return rc == -ENAMETOOLONG ?
				       err_set(rc, "%s: entry %zu is longer than %d bytes", what, number,
					       PATHSET_MAX_PATH) : err_set(rc, "%s: out of memory", what);
		}
		i = next + 1;
	}
	return 0;
}

struct build {
	struct pathset *ps;
	size_t cap, alen, acap;
	size_t *offs;   /* each entry's arena offset: the arena moves as it grows */
	char buf[PATHSET_MAX_PATH + 1];
};

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 64;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > (size_t)-1 / 4 / elem)
			return -ENOMEM;
		n *= 2;
	}
	void *np = realloc(*p, n * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

static int add_one(void *ctx, const char *s, size_t n, size_t number)
{
	struct build *b = ctx;
	struct pathset *ps = b->ps;
	unsigned contents;
	long rl = resolve(s, n, b->buf, &contents);
	size_t ecap = b->cap;

	(void)number;
	if (rl < 0)
		return rl == -2 ? -EINVAL : -ENAMETOOLONG;
	if (grow((void **)&ps->e, &b->cap, ps->n + 1, sizeof *ps->e) < 0 ||
	    grow((void **)&b->offs, &ecap, ps->n + 1, sizeof *b->offs) < 0 ||
	    grow((void **)&ps->arena, &b->acap, b->alen + (size_t)rl + 1, 1) < 0)
		return -ENOMEM;
	memcpy(ps->arena + b->alen, b->buf, (size_t)rl + 1);
	b->offs[ps->n] = b->alen;
	ps->e[ps->n] = (struct pathset_ent){ .contents = contents };
	ps->n++;
	b->alen += (size_t)rl + 1;
	return 0;
}

int pathset_parse(struct pathset *ps, const char *data, size_t len, int nul_sep, const char *what)
{
	struct build b = { .ps = ps };
	int rc;

	memset(ps, 0, sizeof *ps);
	rc = each_entry(data, len, nul_sep, what, add_one, &b);
	if (rc < 0) {
		free(b.offs);
		pathset_free(ps);
		return rc;
	}
	for (size_t i = 0; i < ps->n; i++)
		ps->e[i].path = ps->arena + b.offs[i];
	free(b.offs);
	if (ps->n)
		qsort(ps->e, ps->n, sizeof *ps->e, cmp_ent);
	/* one entry a path: "dir" and "dir/" both listed send the contents */
	size_t k = 0;
	for (size_t i = 0; i < ps->n; i++) {
		if (k && !strcmp(ps->e[k - 1].path, ps->e[i].path))
			ps->e[k - 1].contents |= ps->e[i].contents;
		else
			ps->e[k++] = ps->e[i];
	}
	ps->n = k;
	return 0;
}

void pathset_free(struct pathset *ps)
{
	free(ps->e);
	free(ps->arena);
	memset(ps, 0, sizeof *ps);
}

/* The first entry not less than path[0..n) (bytewise, a prefix first). */
static size_t lower_bound(const struct pathset *ps, const char *path, size_t n)
{
	size_t lo = 0, hi = ps->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strncmp(ps->e[mid].path, path, n) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The entry whose path is exactly path[0..n), or NULL: the first entry not
 * less than it, if that is it (a longer one sorts after). */
static struct pathset_ent *find(const struct pathset *ps, const char *path, size_t n)
{
	size_t i = lower_bound(ps, path, n);

	return i < ps->n && !strncmp(ps->e[i].path, path, n) && ps->e[i].path[n] == '\0' ?
	       &ps->e[i] : NULL;
}

/* find(), less an entry that is only a directory on the way. */
static const struct pathset_ent *listed_ent(const struct pathset *ps, const char *path, size_t n)
{
	const struct pathset_ent *e = find(ps, path, n);

	return e && !e->way_only ? e : NULL;
}

/* Some entry lies below path[0..n): one starts with "path/". */
static int has_below(const struct pathset *ps, const char *path, size_t n)
{
	char key[PATHSET_MAX_PATH + 2];

	if (n > PATHSET_MAX_PATH)
		return 0;
	memcpy(key, path, n);
	key[n] = '/';
	size_t i = lower_bound(ps, key, n + 1);
	return i < ps->n && !strncmp(ps->e[i].path, key, n + 1);
}

enum pathset_want pathset_wants(struct pathset *ps, const char *path, int is_dir)
{
	size_t n = strlen(path);
	struct pathset_ent *e = find(ps, path, n);
	const char *slash = strrchr(path, '/');
	size_t plen = slash ? (size_t)(slash - path) : 0;

	if (e) {
		e->seen = 1;
		return e->way_only ? PATHSET_IMPLIED : e->contents ? PATHSET_LISTED_DIR : PATHSET_LISTED;
	}
	/* in a "dir/" listed: the immediate entries */
	const struct pathset_ent *parent = listed_ent(ps, path, plen);
	if (parent && parent->contents)
		return PATHSET_WITHIN;
	/* below a listed directory, at any depth, with -r ("" listed: the
	 * whole source) */
	if (ps->recursive) {
		if (listed_ent(ps, "", 0))
			return PATHSET_WITHIN;
		for (size_t i = 0; i < n; i++)
			if (path[i] == '/' && listed_ent(ps, path, i))
				return PATHSET_WITHIN;
	}
	if (is_dir && has_below(ps, path, n))
		return PATHSET_IMPLIED;   /* on the way to something listed */
	return PATHSET_NO;
}

int pathset_complete(const struct pathset *ps, const char *path)
{
	size_t n = strlen(path);
	const struct pathset_ent *e = listed_ent(ps, path, n);

	if (e && (e->contents || ps->recursive))
		return 1;
	if (!ps->recursive)
		return 0;
	if (n && listed_ent(ps, "", 0))
		return 1;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/' && listed_ent(ps, path, i))
			return 1;
	return 0;
}

int pathset_link_on_way(struct pathset *ps, const char *path)
{
	size_t n = strlen(path);
	struct pathset_ent *e = find(ps, path, n);

	if (!e || !has_below(ps, path, n))
		return 0;
	e->way_only = 1;
	return 1;
}

int pathset_is_listed(const struct pathset *ps, const char *path, size_t n)
{
	return listed_ent(ps, path, n) != NULL;
}

void pathset_unsee(struct pathset *ps)
{
	for (size_t i = 0; i < ps->n; i++)
		ps->e[i].seen = 0;
}

const struct pathset_ent *pathset_root(const struct pathset *ps)
{
	return find(ps, "", 0);
}
