/* SPDX-License-Identifier: MIT */
/* ferry-filter [--delete-excluded] [--no-wire] [--sorted] [--deletions DEST] TREE [RULE...]
 *
 * What `rsync -an --out-format=%n [RULE...] TREE/ DEST/` lists into an empty
 * DEST, by ferry's filter library (src/util/filter.h), for the oracle test
 * (tests/e2e/test_filter_oracle.sh): one entry per line, relative to TREE,
 * directories with a trailing '/', the root itself not listed (rsync does
 * not list "./" when DEST exists). The order is a depth-first walk with
 * names in byte order; rsync's differs (files before directories), so the
 * test sorts both sides: --sorted prints the lines in byte order (as
 * LC_ALL=C sort).
 *
 * RULE is --exclude=PAT, --include=PAT, --exclude-from=FILE,
 * --include-from=FILE, --filter=RULE, -fRULE, -F, or a bare RULE (as --filter's).
 * The walk skips excluded directories, as rsync's sender does, and reads
 * the dir-merge files of the directories it enters (never through a
 * symlink). Merge files (". FILE") are read relative to the current
 * directory.
 *
 * The rules go through the wire form first (encode, decode, walk with the
 * decoded list: so the oracle checks the encoding too) unless --no-wire.
 *
 * --deletions DEST: instead, what `rsync -an --delete [RULE...] TREE/ DEST/`
 * deletes in the directories it sends ("deleting NAME" lines): entries of
 * DEST not in TREE's list and not protected by the receiver's rules (the
 * dir-merge files then come from DEST, as rsync's receiver reads them).
 * Directories that are deleted are not looked into. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/filter.h"

/* The fd of the directory being entered, for the dir-merge reader. */
struct reader {
	int dirfd;
};

static int read_fd(int fd, const char *what, char **data, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *b = malloc(cap);
	ssize_t r;

	if (!b)
		return err_set(-ENOMEM, "%s: out of memory", what);
	for (;;) {
		if (n == cap) {
			if (cap > FILTER_MAX_FILE) {
				free(b);
				return err_set(-E2BIG, "%s: too big", what);
			}
			char *nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return err_set(-ENOMEM, "%s: out of memory", what);
			}
			b = nb;
			cap *= 2;
		}
		if ((r = read(fd, b + n, cap - n)) < 0) {
			int e = -errno;
			free(b);
			return err_sys(e, "%s: read", what);
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*data = b;
	*len = n;
	return 0;
}

/* A merge file (dir == NULL): relative to the current directory. A
 * dir-merge file: in the directory being entered, never through a symlink,
 * a regular file or nothing. */
static int read_rules(void *ctx, const char *dir, const char *name, char **data, size_t *len)
{
	const struct reader *rd = ctx;
	struct stat st;
	int fd, rc;

	if (dir)
		fd = openat(rd->dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	else
		fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = -errno;
		if (e == -ENOENT && dir)
			return -ENOENT;
		if (e == -ELOOP && dir)
			return err_set(e, "%s%s%s: a symlink, not followed", dir, dir[0] ? "/" : "", name);
		return err_sys(e, "%s%s%s", dir ? dir : "", dir && dir[0] ? "/" : "", name);
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return err_set(-EINVAL, "%s: not a regular file", name);
	}
	rc = read_fd(fd, name, data, len);
	close(fd);
	return rc;
}

static int add_file(struct filter_list *fl, enum filter_syntax syn, const char *path)
{
	char *data;
	size_t len;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return err_sys(-errno, "%s", path);
	rc = read_fd(fd, path, &data, &len);
	close(fd);
	if (rc < 0)
		return rc;
	rc = filter_add_file(fl, syn, data, len, path);
	free(data);
	return rc;
}

static int add_arg(struct filter_list *fl, const char *a)
{
	if (strncmp(a, "--exclude=", 10) == 0)
		return filter_add(fl, FILTER_EXCLUDE, a + 10);
	if (strncmp(a, "--include=", 10) == 0)
		return filter_add(fl, FILTER_INCLUDE, a + 10);
	if (strncmp(a, "--exclude-from=", 15) == 0)
		return add_file(fl, FILTER_EXCLUDE, a + 15);
	if (strncmp(a, "--include-from=", 15) == 0)
		return add_file(fl, FILTER_INCLUDE, a + 15);
	if (strncmp(a, "--filter=", 9) == 0)
		return filter_add(fl, FILTER_RULE, a + 9);
	if (strcmp(a, "-F") == 0)
		return filter_add_F(fl);
	if (strncmp(a, "-f", 2) == 0 && a[2])
		return filter_add(fl, FILTER_RULE, a + 2);
	return filter_add(fl, FILTER_RULE, a);
}

/* ---- the walk: a heap stack of sorted listings, no recursion ---------- */

struct level {
	int fd;
	char **names;
	size_t n, i;
	size_t plen;   /* length of the directory's path in walk.path */
};

struct walk {
	struct filter_list *fl;
	struct reader *rd;
	struct level *lv;
	size_t depth, cap;
	char path[PATH_MAX];
};

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* Takes fd (a directory): its names, sorted, onto the stack. */
static int push_dir(struct walk *w, int fd, size_t plen)
{
	int dfd = dup(fd);
	DIR *d = dfd >= 0 ? fdopendir(dfd) : NULL;
	char **v = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;

	if (!d) {
		if (dfd >= 0)
			close(dfd);
		close(fd);
		return err_sys(-errno, "%s: opendir", w->path);
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 16;
			char **nv = realloc(v, cap * sizeof *nv);
			if (!nv)
				goto nomem;
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name)))
			goto nomem;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof *v, cmp_names);
	if (w->depth == w->cap) {
		size_t nc = w->cap ? 2 * w->cap : 16;
		struct level *nl = realloc(w->lv, nc * sizeof *nl);
		if (!nl) {
			free_names(v, n);
			close(fd);
			return err_set(-ENOMEM, "out of memory");
		}
		w->lv = nl;
		w->cap = nc;
	}
	w->lv[w->depth++] = (struct level){ fd, v, n, 0, plen };
	return 0;
nomem:
	closedir(d);
	free_names(v, n);
	close(fd);
	return err_set(-ENOMEM, "out of memory");
}

static void pop_dir(struct walk *w)
{
	struct level *l = &w->lv[--w->depth];
	filter_leave_dir(w->fl);
	close(l->fd);
	free_names(l->names, l->n);
}

/* Enters directory fd at w->path (length plen): its dir-merge files, then
 * its listing. */
static int enter(struct walk *w, int fd, size_t plen)
{
	int rc;

	w->rd->dirfd = fd;
	if ((rc = filter_enter_dir(w->fl, w->path)) < 0) {
		close(fd);
		return rc;
	}
	if ((rc = push_dir(w, fd, plen)) < 0)
		filter_leave_dir(w->fl);
	return rc;
}

/* Called for every entry: returns 1 to descend into a directory. */
typedef int (*visit_fn)(void *arg, const char *path, bool is_dir);

static int walk(struct walk *w, const char *root, visit_fn visit, void *arg)
{
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return err_sys(-errno, "%s", root);
	w->path[0] = '\0';
	if ((rc = enter(w, fd, 0)) < 0)
		return rc;
	while (w->depth && rc >= 0) {
		struct level *l = &w->lv[w->depth - 1];
		struct stat st;
		if (l->i == l->n) {
			pop_dir(w);
			continue;
		}
		const char *name = l->names[l->i++];
		size_t plen = l->plen, nl = strlen(name);
		if (plen + 1 + nl + 1 > sizeof w->path) {
			rc = err_set(-ENAMETOOLONG, "%s/%s: path too long", w->path, name);
			break;
		}
		if (plen)
			w->path[plen++] = '/';
		memcpy(w->path + plen, name, nl + 1);
		if (fstatat(l->fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			rc = err_sys(-errno, "%s", w->path);
			break;
		}
		bool is_dir = S_ISDIR(st.st_mode);
		if ((rc = visit(arg, w->path, is_dir)) < 0)
			break;
		if (rc == 1 && is_dir) {
			int cfd = openat(l->fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (cfd < 0) {
				rc = err_sys(-errno, "%s", w->path);
				break;
			}
			rc = enter(w, cfd, plen + nl);   /* l may have moved */
		}
	}
	while (w->depth)
		pop_dir(w);
	return rc < 0 ? rc : 0;
}

/* ---- the sender's list ------------------------------------------------- */

/* Lines of output, or the sender's list: "path", or "path/" for a directory. */
struct lines {
	char **v;
	size_t n, cap;
};

static int add_line(struct lines *ls, const char *head, const char *path, bool is_dir)
{
	size_t hl = strlen(head), l = strlen(path);

	if (ls->n == ls->cap) {
		size_t nc = ls->cap ? 2 * ls->cap : 64;
		char **nv = realloc(ls->v, nc * sizeof *nv);
		if (!nv)
			return err_set(-ENOMEM, "out of memory");
		ls->v = nv;
		ls->cap = nc;
	}
	if (!(ls->v[ls->n] = malloc(hl + l + 2)))
		return err_set(-ENOMEM, "out of memory");
	memcpy(ls->v[ls->n], head, hl);
	memcpy(ls->v[ls->n] + hl, path, l);
	strcpy(ls->v[ls->n] + hl + l, is_dir ? "/" : "");
	ls->n++;
	return 0;
}

struct sent {
	struct filter_list *fl;
	struct lines ls;
};

static int visit_send(void *arg, const char *path, bool is_dir)
{
	struct sent *s = arg;
	int rc;

	if (filter_match(s->fl, FILTER_SENDER, path, is_dir) == FILTER_EXCLUDED)
		return 0;   /* and an excluded directory is not entered */
	if ((rc = add_line(&s->ls, "", path, is_dir)) < 0)
		return rc;
	return 1;
}

/* ---- the receiver's deletions ------------------------------------------ */

struct del {
	struct filter_list *fl;
	const struct lines *sent;   /* sorted */
	struct lines out;
};

static bool sent_as(const struct lines *s, const char *path, bool is_dir)
{
	char key[PATH_MAX + 1];
	const char *k = key;

	if (!s->n)
		return false;
	snprintf(key, sizeof key, "%s%s", path, is_dir ? "/" : "");
	return bsearch(&k, s->v, s->n, sizeof *s->v, cmp_names) != NULL;
}

static int visit_delete(void *arg, const char *path, bool is_dir)
{
	struct del *d = arg;
	int rc;

	if (sent_as(d->sent, path, is_dir))
		return 1;   /* kept, and deletions go on in a directory the sender sent */
	if (filter_match(d->fl, FILTER_RECEIVER, path, is_dir) == FILTER_EXCLUDED)
		return 0;   /* protected */
	if ((rc = add_line(&d->out, "deleting ", path, is_dir)) < 0)
		return rc;
	return 0;
}

static void print_lines(struct lines *ls, bool sorted)
{
	if (sorted && ls->n)
		qsort(ls->v, ls->n, sizeof *ls->v, cmp_names);
	for (size_t i = 0; i < ls->n; i++)
		printf("%s\n", ls->v[i]);
}

/* ---- main --------------------------------------------------------------- */

static int build(const struct filter_opts *o, int argc, char **argv, bool via_wire,
		 struct filter_list **out)
{
	struct filter_list *fl, *back;
	uint8_t *wire, *again;
	size_t wlen, alen;
	int rc;

	*out = NULL;
	if ((rc = filter_new(&fl, o)) < 0)
		return rc;
	for (int i = 0; i < argc; i++) {
		if ((rc = add_arg(fl, argv[i])) < 0) {
			filter_free(fl);
			return rc;
		}
	}
	if (!via_wire) {
		*out = fl;
		return 0;
	}
	rc = filter_encode(fl, &wire, &wlen);
	filter_free(fl);
	if (rc < 0)
		return rc;
	rc = filter_decode(wire, wlen, o, &back);
	if (rc == 0 && (rc = filter_encode(back, &again, &alen)) == 0) {
		if (alen != wlen || memcmp(again, wire, wlen) != 0)
			rc = err_set(-EPROTO, "the wire form does not survive a round trip");
		free(again);
	}
	free(wire);
	if (rc < 0) {
		filter_free(back);
		return rc;
	}
	*out = back;
	return 0;
}

int main(int argc, char **argv)
{
	struct reader rd = { -1 };
	struct filter_opts o = { .read = read_rules, .ctx = &rd };
	const char *dest = NULL;
	bool via_wire = true, sorted = false;
	int i = 1, rc;

	for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
		if (strcmp(argv[i], "--delete-excluded") == 0)
			o.delete_excluded = 1;
		else if (strcmp(argv[i], "--no-wire") == 0)
			via_wire = false;
		else if (strcmp(argv[i], "--sorted") == 0)
			sorted = true;
		else if (strcmp(argv[i], "--deletions") == 0 && i + 1 < argc)
			dest = argv[++i];
		else
			break;
	}
	if (i >= argc || strncmp(argv[i], "--", 2) == 0) {
		fprintf(stderr, "usage: ferry-filter [--delete-excluded] [--no-wire] [--sorted] [--deletions DEST] "
				"TREE [RULE...]\n");
		return 2;
	}
	const char *tree = argv[i++];
	struct filter_list *fl;
	if ((rc = build(&o, argc - i, argv + i, via_wire, &fl)) < 0) {
		fprintf(stderr, "ferry-filter: %s\n", err_msg());
		return 1;
	}
	struct walk w = { .fl = fl, .rd = &rd };
	struct sent s = { .fl = fl };
	struct del d = { .fl = fl, .sent = &s.ls };
	rc = walk(&w, tree, visit_send, &s);
	if (rc == 0 && !dest) {
		print_lines(&s.ls, sorted);
	} else if (rc == 0) {
		if (s.ls.n)
			qsort(s.ls.v, s.ls.n, sizeof *s.ls.v, cmp_names);
		if ((rc = walk(&w, dest, visit_delete, &d)) == 0)
			print_lines(&d.out, sorted);
	}
	free_names(s.ls.v, s.ls.n);
	free_names(d.out.v, d.out.n);
	free(w.lv);
	filter_free(fl);
	if (rc < 0) {
		fprintf(stderr, "ferry-filter: %s\n", err_msg());
		return 1;
	}
	return fflush(stdout) == 0 ? 0 : 1;
}
