/* SPDX-License-Identifier: MIT */
#include "fs/sweep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/dirlist.h"
#include "fs/snapstore.h"
#include "fs/meta.h"
#include "fs/partial.h"
#include "util/err.h"

/* Directories still to visit, as paths relative to the root: depth-first,
 * so the stack holds the unvisited siblings along one path, not the tree. */
struct dir_stack {
	char **paths;
	size_t n, cap;
};

static int stack_push(struct dir_stack *s, const char *dir, const char *name)
{
	size_t dl = strlen(dir), nl = strlen(name);
	char *p;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **np = realloc(s->paths, cap * sizeof *np);
		if (!np)
			return err_set(-ENOMEM, "sweep: out of memory");
		s->paths = np;
		s->cap = cap;
	}
	if (!(p = malloc(dl + nl + 2)))
		return err_set(-ENOMEM, "sweep: out of memory");
	memcpy(p, dir, dl);
	if (dl)
		p[dl++] = '/';
	memcpy(p + dl, name, nl + 1);
	s->paths[s->n++] = p;
	return 0;
}

static void stack_free(struct dir_stack *s)
{
	while (s->n)
		free(s->paths[--s->n]);
	free(s->paths);
}

static int is_old(struct timespec mtime, struct timespec ctime, time_t now, long max_age)
{
	return now - mtime.tv_sec > max_age && now - ctime.tv_sec > max_age;
}

static int stale_tmp(int dirfd, const struct dirent_info *e, time_t now, long max_age)
{
	struct stat st;

	if (!(S_ISREG(e->st.st_mode) || S_ISLNK(e->st.st_mode)) || !fs_is_tmp_name(e->name) ||
	    !is_old(e->st.st_mtim, e->st.st_ctim, now, max_age))
		return 0;
	/* Looked at again right before the unlink: the listing may be a while old. */
	return fstatat(dirfd, e->name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode)) && is_old(st.st_mtim, st.st_ctim, now, max_age);
}

/* A partial nobody has written for part_age and nobody holds the lock of. */
static int stale_partial(int dirfd, const struct dirent_info *e, time_t now, long part_age)
{
	struct stat st;

	if (!part_age || !S_ISREG(e->st.st_mode) || !fs_is_partial_name(e->name) ||
	    !is_old(e->st.st_mtim, e->st.st_ctim, now, part_age) || !fs_partial_ours(dirfd, e->name))
		return 0;   /* (a user's untagged look-alike is not ours to sweep) */
	int fd = openat(dirfd, e->name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return 0;
	int ok = flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &st) == 0 &&
		 S_ISREG(st.st_mode) && is_old(st.st_mtim, st.st_ctim, now, part_age);
	if (ok && unlinkat(dirfd, e->name, 0) < 0)
		ok = 0;
	close(fd);
	return ok;
}

/* ".ferry-bench-" and 6 hex digits: the directory `ferry bench HOST:MODULE`
 * makes at a module's root for its disk test (bench/disk.c). */
static int bench_dir_name(const char *n)
{
	static const char pre[] = ".ferry-bench-";
	size_t k = sizeof pre - 1;

	if (strncmp(n, pre, k) || strlen(n) != k + 6)
		return 0;
	return strspn(n + k, "0123456789abcdef") == 6;
}

/* A disk test's directory that a killed daemon left: its files (the test
 * makes no subdirectories; one with any is left alone), then itself. */
static int stale_bench_dir(int dirfd, const struct dirent_info *e, time_t now, long max_age)
{
	struct dirlist l = { 0 };
	int ok = 1;

	if (!bench_dir_name(e->name) || !is_old(e->st.st_mtim, e->st.st_ctim, now, max_age))
		return 0;
	int fd = openat(dirfd, e->name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (dirlist_read(fd, &l) < 0) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < l.n; i++)
		ok &= S_ISREG(l.ents[i].st.st_mode) && is_old(l.ents[i].st.st_mtim, l.ents[i].st.st_ctim,
							      now, max_age);
	for (size_t i = 0; ok && i < l.n; i++)
		ok = unlinkat(fd, l.ents[i].name, 0) == 0;
	dirlist_free(&l);
	close(fd);
	return ok && unlinkat(dirfd, e->name, AT_REMOVEDIR) == 0;
}

/* One directory: removes its stale temporaries, queues its subdirectories. */
static int sweep_dir(const struct jail *j, const char *rel, struct dir_stack *todo,
		     long max_age, long part_age, struct sweep_stats *st)
{
	struct dirlist l = { 0 };
	time_t now = time(NULL);
	int fd, rc = 0;

	if ((fd = jail_open_dir(j, rel, O_RDONLY)) < 0)
		rc = fd;
	else if ((rc = dirlist_read(fd, &l)) < 0)
		close(fd);
	if (rc < 0) {
		st->skipped++;
		return rel[0] ? 0 : rc;   /* only an unreadable root is fatal */
	}
	st->dirs++;
	for (size_t i = 0; i < l.n; i++) {
		const struct dirent_info *e = &l.ents[i];
		if (S_ISDIR(e->st.st_mode)) {
			if (!rel[0] && !strcmp(e->name, SNAP_DIR))
				continue;   /* a snapshot history: its versions are what they were */
			if (!rel[0] && stale_bench_dir(fd, e, now, max_age)) {
				st->removed++;
				continue;
			}
			if (strlen(rel) + 1 + strlen(e->name) > PATH_MAX_WIRE)
				st->skipped++;   /* no client can reach it either */
			else if ((rc = stack_push(todo, rel, e->name)) < 0)
				goto out;
		} else if (stale_tmp(fd, e, now, max_age) && unlinkat(fd, e->name, 0) == 0) {
			st->removed++;
		} else if (stale_partial(fd, e, now, part_age)) {
			st->partials++;
		}
	}
	rc = 0;
out:
	dirlist_free(&l);
	close(fd);
	return rc;
}

int fs_sweep_stale(const struct jail *j, long max_age, long part_age, struct sweep_stats *st)
{
	struct dir_stack todo = { 0 };
	char *rel = strdup("");
	int rc = rel ? 0 : err_set(-ENOMEM, "sweep: out of memory");

	memset(st, 0, sizeof *st);
	while (rc == 0 && rel) {
		rc = sweep_dir(j, rel, &todo, max_age, part_age, st);
		free(rel);
		rel = todo.n ? todo.paths[--todo.n] : NULL;
	}
	free(rel);
	stack_free(&todo);
	return rc;
}
