/* SPDX-License-Identifier: MIT */
/* One directory's entries, sorted by name (bytewise), with lstat data. Memory
 * is this directory's names only: the tree is walked one directory at a time. */
#ifndef FERRY_FS_DIRLIST_H
#define FERRY_FS_DIRLIST_H

#include <stddef.h>
#include <sys/stat.h>

struct dirent_info {
	char *name;          /* points into the list's name arena */
	struct stat st;      /* fstatat(AT_SYMLINK_NOFOLLOW) */
};

struct dirlist {
	struct dirent_info *ents;
	size_t n;
	char *arena;         /* all names, owned */
};

/* Reads every entry of the open directory `dirfd` except "." and "..",
 * lstat()s each relative to it, and sorts by name. An entry that vanishes
 * between readdir and fstatat is skipped. dirfd stays open and unchanged. */
int dirlist_read(int dirfd, struct dirlist *out);
void dirlist_free(struct dirlist *l);
/* Binary search; NULL if absent. */
const struct dirent_info *dirlist_find(const struct dirlist *l, const char *name);

#endif
