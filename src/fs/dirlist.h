/* SPDX-License-Identifier: MIT */
/* One directory's entries, sorted by name (bytewise), with lstat data. Memory
 * is this directory's names only: the tree is walked one directory at a time. */
#ifndef FERRY_FS_DIRLIST_H
#define FERRY_FS_DIRLIST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fs/jail.h"

/* What a walk uses of an entry's lstat: a third of struct stat, so that a
 * directory of 200,000 entries costs about 13 MiB, not 60. */
struct dent_stat {
	mode_t st_mode;
	uid_t st_uid;
	gid_t st_gid;
	uint32_t st_nlink;   /* capped; -H looks closer at a file with more than one */
	off_t st_size;
	struct timespec st_mtim, st_ctim;
};

struct dirent_info {
	char *name;          /* points into the list's name arena */
	struct dent_stat st; /* from fstatat(AT_SYMLINK_NOFOLLOW) */
};

/* The fields a walk uses, from a whole struct stat. */
struct dent_stat dent_stat_of(const struct stat *st);

struct dirlist {
	struct dirent_info *ents;
	size_t n;
	char *arena;         /* all names, owned */
};

/* Which symlinks a PC's sender follows: none (the default, and always on a
 * box), all (push -L) or those to directories (push -k). */
enum follow { FOLLOW_NONE = 0, FOLLOW_ALL, FOLLOW_DIRS };

/* The entry's lstat, or under `follow` its target's; a link whose target is
 * missing (or loops) stays a link. Returns 0 or -errno. */
int fs_stat_entry(int dirfd, const char *name, struct stat *st, enum follow follow);
/* Reads every entry of the open directory `dirfd` except "." and "..",
 * lstat()s each relative to it, and sorts by name. An entry that vanishes
 * between readdir and fstatat is skipped. dirfd stays open and unchanged. */
int dirlist_read(int dirfd, struct dirlist *out);
/* The same with fs_stat_entry's `follow`. */
int dirlist_read_as(int dirfd, struct dirlist *out, enum follow follow);
void dirlist_free(struct dirlist *l);
/* 1 if the open directory holds nothing but "." and "..", else 0 (an error
 * too: then the caller stats as usual). One getdents64 call; it moves
 * dirfd's read position, which *at calls do not use. */
int fs_dir_is_empty(int dirfd);
/* Binary search; NULL if absent. */
const struct dirent_info *dirlist_find(const struct dirlist *l, const char *name);

/* The path of a depth-first walk, from its root to the directory being
 * descended into: one listing per level, on the heap. A walk that recursed
 * would need C stack per level, and a chain of 2048 directories (what
 * PATH_MAX_WIRE allows) overflows the default 8 MiB. The caller opens each
 * directory by d->path and closes it once listed, so a walk of any depth
 * holds one directory fd at a time. */
struct dirlevel {
	struct dirlist l;
	struct stat st;      /* the directory's own, from when it was listed */
	size_t next;         /* the entry of l to look at next for descent */
	size_t plen;         /* strlen of this directory's path */
};

struct dirstack {
	struct dirlevel *lv; /* owned; n levels used, cap allocated */
	size_t n, cap;
	char path[PATH_MAX_WIRE + 1];   /* the top level's, or its child's */
};

/* An empty stack whose first directory is `root` (-ENAMETOOLONG if it is
 * longer than PATH_MAX_WIRE). */
int dirstack_init(struct dirstack *d, const char *root);
/* Takes *l (which is cleared) as the listing of d->path, whose stat is st.
 * On failure (-ENOMEM) *l is freed. */
int dirstack_push(struct dirstack *d, struct dirlist *l, const struct stat *st);
/* Sets d->path to the top level's next subdirectory in listing order and
 * returns 1; or restores the top level's own path and returns 0 when none is
 * left. A child whose path would pass PATH_MAX_WIRE is passed over. */
int dirstack_next_dir(struct dirstack *d);
/* The level whose directory is dev/ino, or NULL: a walk that follows
 * symlinks meets a directory of its own path again (a loop). */
const struct dirlevel *dirstack_find(const struct dirstack *d, dev_t dev, ino_t ino);
/* The deepest level; the stack must not be empty. */
const struct dirlevel *dirstack_top(const struct dirstack *d);
/* Frees the deepest level's listing; d->path becomes its parent's path. */
void dirstack_pop(struct dirstack *d);
void dirstack_free(struct dirstack *d);

#endif
