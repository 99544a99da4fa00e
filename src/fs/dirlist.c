/* SPDX-License-Identifier: MIT */
#include "fs/dirlist.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"

#include <sys/syscall.h>

/* struct linux_dirent64's head: the kernel's ABI (getdents64(2)) */
struct dent64_head {
	uint64_t ino;
	int64_t off;
	unsigned short reclen;
	unsigned char type;
	char name[];
};

int fs_dir_is_empty(int dirfd)
{
	/* room for "." and ".." and at least one longest name: a third entry,
	 * if there is one, comes back in the same call */
	_Alignas(8) char buf[2048];
	long n = syscall(SYS_getdents64, dirfd, buf, sizeof buf);

	if (n < 0)
		return 0;
	for (long off = 0; off < n;) {
		const struct dent64_head *d = (const struct dent64_head *)(buf + off);
		if (d->reclen == 0 || d->reclen > n - off)
			return 0;
		if (strcmp(d->name, ".") && strcmp(d->name, ".."))
			return 0;
		off += d->reclen;
	}
	return 1;
}

struct dent_stat dent_stat_of(const struct stat *st)
{
	return (struct dent_stat){ .st_mode = st->st_mode, .st_uid = st->st_uid,
				   .st_gid = st->st_gid, .st_size = st->st_size,
				   .st_nlink = st->st_nlink > UINT32_MAX ? UINT32_MAX : (uint32_t)st->st_nlink,
				   .st_mtim = st->st_mtim, .st_ctim = st->st_ctim };
}

static int cmp_ent(const void *a, const void *b)
{
	const struct dirent_info *x = a, *y = b;
	return strcmp(x->name, y->name);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (n < need) {
		if (n > SIZE_MAX / 2 / elem)
			return -ENOMEM;
		n *= 2;
	}
	np = realloc(*p, n * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = n;
	return 0;
}

int fs_stat_entry(int dirfd, const char *name, struct stat *st, enum follow follow)
{
	struct stat t;

	if (fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW) < 0)
		return -errno;
	/* a link whose target is gone (or a loop) stays the link it is */
	if (follow != FOLLOW_NONE && S_ISLNK(st->st_mode) && fstatat(dirfd, name, &t, 0) == 0 &&
	    (follow == FOLLOW_ALL || S_ISDIR(t.st_mode)))
		*st = t;
	return 0;
}

int dirlist_read(int dirfd, struct dirlist *out)
{
	return dirlist_read_as(dirfd, out, FOLLOW_NONE);
}

int dirlist_read_as(int dirfd, struct dirlist *out, enum follow follow)
{
	size_t *offs = NULL;   /* the names' arena offsets: the arena moves as it grows */
	size_t n = 0, ecap = 0, ocap = 0;
	char *arena = NULL;
	size_t alen = 0, acap = 0;
	struct dirent_info *ents = NULL;
	DIR *d = NULL;
	int fd = -1;
	int r = 0;

	memset(out, 0, sizeof *out);
	/* A fresh open file description of the same directory, not a dup():
	 * a dup shares the offset, and readdir would leave the caller's fd at
	 * the end. This also works when dirfd is O_PATH. */
	fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(-errno, "open directory");
	d = fdopendir(fd);
	if (!d) {
		r = err_sys(-errno, "fdopendir");
		goto out;
	}
	fd = -1;   /* owned by d now */
	for (;;) {
		struct dirent *e;
		struct stat st;
		size_t nl;

		errno = 0;
		e = readdir(d);
		if (!e) {
			if (errno)
				r = err_sys(-errno, "readdir");
			break;
		}
		if (e->d_name[0] == '.' && (e->d_name[1] == '\0' ||
		    (e->d_name[1] == '.' && e->d_name[2] == '\0')))
			continue;
		if ((r = fs_stat_entry(dirfd, e->d_name, &st, follow)) < 0) {
			if (r == -ENOENT) {
				r = 0;
				continue;   /* deleted since readdir */
			}
			r = err_sys(r, "stat %s", e->d_name);
			break;
		}
		nl = strlen(e->d_name) + 1;
		if (grow((void **)&ents, &ecap, n + 1, sizeof *ents) < 0 ||
		    grow((void **)&offs, &ocap, n + 1, sizeof *offs) < 0 ||
		    grow((void **)&arena, &acap, alen + nl, 1) < 0) {
			r = err_set(-ENOMEM, "directory listing: out of memory");
			break;
		}
		memcpy(arena + alen, e->d_name, nl);
		offs[n] = alen;
		ents[n].st = dent_stat_of(&st);
		alen += nl;
		n++;
	}
	if (r < 0 || n == 0)
		goto out;
	for (size_t i = 0; i < n; i++)
		ents[i].name = arena + offs[i];
	qsort(ents, n, sizeof *ents, cmp_ent);
	out->ents = ents;
	out->n = n;
	out->arena = arena;
	arena = NULL;
	ents = NULL;
out:
	free(arena);
	free(ents);
	free(offs);
	if (d)
		closedir(d);
	if (fd >= 0)
		close(fd);
	return r;
}

void dirlist_free(struct dirlist *l)
{
	free(l->ents);
	free(l->arena);
	l->ents = NULL;
	l->arena = NULL;
	l->n = 0;
}

const struct dirent_info *dirlist_find(const struct dirlist *l, const char *name)
{
	size_t lo = 0, hi = l->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(name, l->ents[mid].name);
		if (c == 0)
			return &l->ents[mid];
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

/* --- the walk's stack ----------------------------------------------------- */

int dirstack_init(struct dirstack *d, const char *root)
{
	size_t n = strlen(root);

	memset(d, 0, offsetof(struct dirstack, path));
	d->path[0] = '\0';
	if (n > PATH_MAX_WIRE)
		return err_set(-ENAMETOOLONG, "%.64s...: path longer than %d bytes", root,
			       PATH_MAX_WIRE);
	memcpy(d->path, root, n + 1);
	return 0;
}

int dirstack_push(struct dirstack *d, struct dirlist *l, const struct stat *st)
{
	if (grow((void **)&d->lv, &d->cap, d->n + 1, sizeof *d->lv) < 0) {
		dirlist_free(l);
		return err_set(-ENOMEM, "directory walk: out of memory");
	}
	struct dirlevel *v = &d->lv[d->n++];
	v->l = *l;
	v->st = *st;
	v->next = 0;
	v->plen = strlen(d->path);
	memset(l, 0, sizeof *l);
	return 0;
}

int dirstack_next_dir(struct dirstack *d)
{
	struct dirlevel *v = &d->lv[d->n - 1];
	size_t sep = v->plen ? 1 : 0;

	d->path[v->plen] = '\0';
	while (v->next < v->l.n) {
		const struct dirent_info *e = &v->l.ents[v->next++];
		size_t nl = strlen(e->name);
		if (!S_ISDIR(e->st.st_mode) || v->plen + sep + nl > PATH_MAX_WIRE)
			continue;
		if (sep)
			d->path[v->plen] = '/';
		memcpy(d->path + v->plen + sep, e->name, nl + 1);
		return 1;
	}
	return 0;
}

const struct dirlevel *dirstack_find(const struct dirstack *d, dev_t dev, ino_t ino)
{
	for (size_t i = 0; i < d->n; i++)
		if (d->lv[i].st.st_dev == dev && d->lv[i].st.st_ino == ino)
			return &d->lv[i];
	return NULL;
}

const struct dirlevel *dirstack_top(const struct dirstack *d)
{
	return &d->lv[d->n - 1];
}

void dirstack_pop(struct dirstack *d)
{
	dirlist_free(&d->lv[--d->n].l);
	if (d->n)
		d->path[d->lv[d->n - 1].plen] = '\0';
}

void dirstack_free(struct dirstack *d)
{
	while (d->n)
		dirstack_pop(d);
	free(d->lv);
	d->lv = NULL;
	d->cap = 0;
}
