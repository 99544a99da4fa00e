/* SPDX-License-Identifier: MIT */
#include "fs/meta.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "fs/dirlist.h"
#include "fs/quote.h"
#include "util/err.h"

#define TMP_RAND 6
#define TMP_CHECK 4   /* letters that check the rest of the name */

static int name_ok(const char *name)
{
	size_t n = strlen(name);
	return n > 0 && n <= 255 && !strchr(name, '/') &&
	       strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* Random bytes for temporary names, drawn from the kernel a batch at a time:
 * one getrandom per file was one syscall in eight of a small file's. A child
 * of fork starts with an empty pool, so parent and child never walk the same
 * names (O_EXCL would catch them, at the price of a retry per file). */
static unsigned char pool[TMP_RAND * 42];
static size_t pool_left;

static void pool_forget(void)
{
	pool_left = 0;
}

static void pool_take(unsigned char *out, size_t n)
{
	static int hooked;

	if (!hooked)
		hooked = pthread_atfork(NULL, NULL, pool_forget) == 0 ? 1 : -1;
	if (pool_left < n && hooked > 0 &&
	    getrandom(pool, sizeof pool, GRND_NONBLOCK) == (ssize_t)sizeof pool)
		pool_left = sizeof pool;
	if (pool_left >= n) {
		memcpy(out, pool + sizeof pool - pool_left, n);
		pool_left -= n;
		return;
	}
	/* Names only need to be unlikely to collide (O_EXCL catches the rest),
	 * so a short read is topped up from the clock. */
	if (getrandom(out, n, GRND_NONBLOCK) != (ssize_t)n) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		for (size_t i = 0; i < n; i++)
			out[i] ^= (unsigned char)((unsigned long)ts.tv_nsec >> (i * 5)) ^
				  (unsigned char)getpid();
	}
}

static const char ALNUM[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* The check letters of a temporary: FNV-1a of its random letters and of the
 * rest of its name, so that a user's ".ferry-backup.tar" is never taken for
 * one (it would be left out of a transfer and swept after a day). */
static void tmp_check(const char *rnd, const char *rest, char out[TMP_CHECK])
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < TMP_RAND; i++)
		h = (h ^ (uint8_t)rnd[i]) * 0x100000001b3ull;
	for (const char *p = rest; *p; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ull;
	for (size_t i = 0; i < TMP_CHECK; i++, h /= sizeof ALNUM - 1)
		out[i] = ALNUM[h % (sizeof ALNUM - 1)];
}

int fs_tmp_name(char out[256], const char *final)
{
	unsigned char rnd[TMP_RAND] = { 0 };
	size_t pre = sizeof FS_TMP_PREFIX - 1, head = pre + TMP_RAND + TMP_CHECK;
	size_t room, n;

	if (!name_ok(final))
		return err_set(-EINVAL, "invalid file name for a temporary");
	pool_take(rnd, sizeof rnd);
	memcpy(out, FS_TMP_PREFIX, pre);
	for (size_t i = 0; i < TMP_RAND; i++)
		out[pre + i] = ALNUM[rnd[i] % (sizeof ALNUM - 1)];
	out[head] = '.';
	room = 255 - (head + 1);
	n = strlen(final);
	if (n > room)
		n = room;
	memcpy(out + head + 1, final, n);
	out[head + 1 + n] = '\0';
	tmp_check(out + pre, out + head + 1, out + pre + TMP_RAND);
	return 0;
}

int fs_is_tmp_name(const char *name)
{
	size_t pre = sizeof FS_TMP_PREFIX - 1, head = pre + TMP_RAND + TMP_CHECK;
	char check[TMP_CHECK];

	if (strncmp(name, FS_TMP_PREFIX, pre) != 0 || strnlen(name + pre, head - pre + 1) <= head - pre ||
	    name[head] != '.')
		return 0;
	tmp_check(name + pre, name + head + 1, check);
	return !memcmp(check, name + pre + TMP_RAND, TMP_CHECK);
}

int fs_open_unnamed(int dirfd)
{
	int fd = openat(dirfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);

	if (fd >= 0)
		return fd;
	/* (EISDIR, EINVAL: kernels or libcs without O_TMPFILE) */
	return errno == EISDIR || errno == EINVAL ? -EOPNOTSUPP : -errno;
}

int fs_open_tmp(int dirfd, const char *final, char name[256])
{
	if (fs_tmp_name(name, final) < 0)
		return -EINVAL;
	int fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	return fd < 0 ? -errno : fd;
}

/* fchmodat(AT_SYMLINK_NOFOLLOW) acts on the inode it looked up (glibc and
 * musl go through an O_PATH fd, newer kernels have fchmodat2), so there is no
 * window in which `name` could be swapped for a symlink. */
static int chmod_nofollow(int dirfd, const char *name, mode_t mode)
{
	struct stat st;
	int fd = -1;
	int r = 0;

	if (fchmodat(dirfd, name, mode, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOTSUP)
		return -errno;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	if (S_ISLNK(st.st_mode))
		return 0;   /* a symlink: nothing to set */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return -EOPNOTSUPP;
	/* No /proc for libc's emulation: open the object itself. */
	fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fchmod(fd, mode) < 0)
		r = -errno;
	close(fd);
	return r;
}

int fs_set_meta(int dirfd, const char *name, mode_t mode, const struct timespec *mtime)
{
	char q[FS_QUOTE_BUF];
	int r;

	r = chmod_nofollow(dirfd, name, mode & 07777);
	if (r < 0)
		return err_sys(r, "chmod %s", fs_quote(q, name, strlen(name)));
	if (mtime) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, *mtime };
		if (utimensat(dirfd, name, ts, AT_SYMLINK_NOFOLLOW) < 0)
			return err_sys(-errno, "set mtime of %s", fs_quote(q, name, strlen(name)));
	}
	return 0;
}

int fs_symlink_atomic(int dirfd, const char *name, const char *target,
		      const struct timespec *mtime)
{
	char q[FS_QUOTE_BUF];
	char tmp[256];
	int r;

	if (!name_ok(name))
		return err_set(-EINVAL, "symlink %s: invalid name", fs_quote(q, name, strlen(name)));
	for (int tries = 0;; tries++) {
		r = fs_tmp_name(tmp, name);
		if (r < 0)
			return r;
		if (symlinkat(target, dirfd, tmp) == 0)
			break;
		if (errno != EEXIST || tries >= 100)
			return err_sys(-errno, "symlink %s", fs_quote(q, name, strlen(name)));
	}
	if (mtime) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, *mtime };
		if (utimensat(dirfd, tmp, ts, AT_SYMLINK_NOFOLLOW) < 0) {
			r = err_sys(-errno, "set mtime of symlink %s", fs_quote(q, name, strlen(name)));
			goto fail;
		}
	}
	if (renameat(dirfd, tmp, dirfd, name) < 0) {
		r = err_sys(-errno, "rename symlink into place as %s", fs_quote(q, name, strlen(name)));
		goto fail;
	}
	return 0;
fail:
	unlinkat(dirfd, tmp, 0);
	return r;
}

/* fs_remove_tree: directories shallower than RM_HOLD keep their fd open while
 * a subdirectory is emptied; deeper ones close it and reopen it afterwards by
 * walking the recorded path from the top with O_NOFOLLOW. So at most about
 * RM_HOLD + 3 fds are open, however deep the tree. */
#define RM_HOLD 16

struct rm_ctx {
	int top;        /* the caller's dirfd */
	char *path;     /* current directory, relative to top */
	size_t len, cap;
	fs_keep_fn keep;   /* NULL: everything goes */
	void *kctx;
	int force;         /* directories of ours made writable to be emptied */
	int counting;      /* fs_count_tree: nothing removed, entries counted */
	uint64_t count, limit;
};

static int rm_push(struct rm_ctx *c, const char *name)
{
	size_t n = strlen(name);
	size_t need = c->len + n + 2;

	if (need > c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 4096;
		while (cap < need)
			cap *= 2;
		char *p = realloc(c->path, cap);
		if (!p)
			return err_set(-ENOMEM, "remove: out of memory");
		c->path = p;
		c->cap = cap;
	}
	if (c->len)
		c->path[c->len++] = '/';
	memcpy(c->path + c->len, name, n + 1);
	c->len += n;
	return 0;
}

static void rm_pop(struct rm_ctx *c)
{
	char *slash = memrchr(c->path, '/', c->len);
	c->len = slash ? (size_t)(slash - c->path) : 0;
	c->path[c->len] = '\0';
}

/* Reopens the current directory (c->path) from the top, refusing symlinks. */
static int rm_reopen(const struct rm_ctx *c)
{
	char q[FS_QUOTE_BUF];
	int cur = c->top;
	const char *p = c->path;

	for (;;) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		char name[256];
		int fd;

		if (n > 255) {
			fd = -ENAMETOOLONG;
		} else {
			memcpy(name, p, n);
			name[n] = '\0';
			fd = openat(cur, name, (slash ? O_PATH : O_RDONLY) |
				    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			if (fd < 0)
				fd = -errno;
		}
		if (cur != c->top)
			close(cur);
		if (fd < 0)
			return err_sys(fd, "remove: reopen %s", fs_quote(q, c->path, c->len));
		cur = fd;
		if (!slash)
			return cur;
		p = slash + 1;
	}
}

static int rm_contents(struct rm_ctx *c, int fd, int depth);

/* Removes `name` in *pfd (reopened into *pfd when it had to be closed). */
static int rm_entry(struct rm_ctx *c, int *pfd, const char *name, int depth)
{
	char q[FS_QUOTE_BUF];
	struct stat st;
	int cfd;
	int r;

	if (c->counting) {
		if (fstatat(*pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return errno == ENOENT ? 0 : err_sys(-errno, "count %s",
							       fs_quote(q, name, strlen(name)));
		if (!S_ISDIR(st.st_mode)) {
			c->count++;
			return 0;
		}
	} else if (unlinkat(*pfd, name, 0) == 0 || errno == ENOENT) {
		return 0;
	} else {
		/* Linux says EISDIR for a directory; confirm without following. */
		r = -errno;
		if (r != -EISDIR && (fstatat(*pfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
				     !S_ISDIR(st.st_mode)))
			return err_sys(r, "remove %s", fs_quote(q, name, strlen(name)));
	}
	cfd = openat(*pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0 && errno == EACCES && c->force && fchmodat(*pfd, name, 0700, 0) == 0)
		cfd = openat(*pfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (cfd < 0)
		return err_sys(-errno, "remove: open directory %s", fs_quote(q, name, strlen(name)));
	/* a daemon that is not root empties a 0555 directory of its own */
	if (c->force && fstat(cfd, &st) == 0 && (st.st_mode & 0700) != 0700)
		fchmod(cfd, (st.st_mode & 07777) | 0700);
	if (depth >= RM_HOLD) {
		close(*pfd);
		*pfd = -1;
	}
	r = rm_push(c, name);
	if (r < 0) {
		close(cfd);
		goto reopen;
	}
	r = rm_contents(c, cfd, depth + 1);
	rm_pop(c);
reopen:
	if (*pfd < 0) {
		int e = rm_reopen(c);
		if (e < 0)
			return e;
		*pfd = e;
	}
	/* a directory counts after its contents, when nothing in it is kept:
	 * so the count only grows, and may stop once past the limit */
	if (c->counting && r == 0)
		c->count++;
	if (r != 0 || c->counting)   /* an error, or something kept inside: it stays */
		return r;
	if (unlinkat(*pfd, name, AT_REMOVEDIR) < 0 && errno != ENOENT)
		return err_sys(-errno, "remove directory %s", fs_quote(q, name, strlen(name)));
	return 0;
}

/* Empties the directory open as fd (owned: closed before returning). */
static int rm_contents(struct rm_ctx *c, int fd, int depth)
{
	struct dirlist l;
	int r;

	int kept = 0;

	r = dirlist_read(fd, &l);
	for (size_t i = 0; r >= 0 && i < l.n && !(c->counting && c->count > c->limit); i++) {
		if (c->keep && rm_push(c, l.ents[i].name) == 0) {
			int k = c->keep(c->kctx, c->path, S_ISDIR(l.ents[i].st.st_mode));
			rm_pop(c);
			if (k) {
				kept = 1;
				continue;
			}
		}
		r = rm_entry(c, &fd, l.ents[i].name, depth);
		kept |= r == 1;
	}
	dirlist_free(&l);   /* zeroed by a failed dirlist_read */
	if (fd >= 0)
		close(fd);
	return r < 0 ? r : kept;
}

int fs_remove_tree(int dirfd, const char *name)
{
	return fs_remove_tree_keep(dirfd, name, NULL, NULL);
}

int64_t fs_count_tree(int dirfd, const char *name, fs_keep_fn keep, void *ctx, uint64_t limit)
{
	struct rm_ctx c = { .top = dirfd, .keep = keep, .kctx = ctx, .counting = 1,
			    .limit = limit < INT64_MAX ? limit : INT64_MAX - 1 };
	int fd = dirfd;

	if (!name_ok(name))
		return err_set(-EINVAL, "count: invalid name");
	int r = rm_entry(&c, &fd, name, 0);
	free(c.path);
	return r < 0 ? r : (int64_t)c.count;
}

int fs_remove_tree_force(int dirfd, const char *name)
{
	struct rm_ctx c = { .top = dirfd, .force = 1 };
	int fd = dirfd;

	if (!name_ok(name))
		return err_set(-EINVAL, "remove: invalid name");
	int r = rm_entry(&c, &fd, name, 0);
	free(c.path);
	return r;
}

int fs_remove_tree_keep(int dirfd, const char *name, fs_keep_fn keep, void *ctx)
{
	struct rm_ctx c = { .top = dirfd, .keep = keep, .kctx = ctx };
	int fd = dirfd;
	int r;

	if (!name_ok(name))
		return err_set(-EINVAL, "remove: invalid name");
	/* depth 0: the caller's fd is never closed (0 < RM_HOLD). */
	r = rm_entry(&c, &fd, name, 0);
	free(c.path);
	return r;
}
