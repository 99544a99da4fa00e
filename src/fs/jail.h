/* SPDX-License-Identifier: MIT */
/* The module is a jail: every server-side access is relative to the module's
 * root directory fd, never through a path string, and never through a symlink.
 * openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) where the kernel has it,
 * else component by component with O_NOFOLLOW. */
#ifndef FERRY_FS_JAIL_H
#define FERRY_FS_JAIL_H

#include <stddef.h>
#include <sys/types.h>

#define PATH_MAX_WIRE 4096   /* longest relative path accepted from the network */
#define NAME_MAX_WIRE 255    /* longest path component */

/* Validates a relative path that came from the network: not absolute, no "."
 * or ".." component, no empty component (so no "//" and no trailing "/"), no
 * NUL, each name <= 255 bytes, whole path <= 4096. "" means the root itself.
 * Returns 0 or -EINVAL with err_msg() naming the path and the rule broken. */
int path_check(const char *path, size_t len);

struct jail {
	int root_fd;        /* O_PATH | O_DIRECTORY, owned */
	int have_openat2;   /* probed once in jail_open */
	/* A PC's own source under push -L or -k: the directories named are
	 * opened through symlinks (what the user asked; no name here came from
	 * the network). Never set for a module or a destination. */
	int follow;
};

/* Opens `root` (which may itself be a symlink: the admin chose it) and probes
 * openat2 once. FERRY_NO_OPENAT2=1 in the environment (or clearing
 * have_openat2 afterwards) forces the component-wise fallback. */
int jail_open(struct jail *j, const char *root);
/* Narrows a jail: `out` is rooted at directory `rel` of `parent` (opened
 * through the parent's rules, so never through a symlink). A receiver uses it
 * so that nothing the peer sends can reach above what the user named. */
int jail_open_at(struct jail *out, const struct jail *parent, const char *rel);
void jail_close(struct jail *j);

/* Opens the directory `rel` under the root with `flags` (O_DIRECTORY is
 * added; use O_RDONLY or O_PATH). No component may be a symlink (unless the
 * jail follows). */
int jail_open_dir(const struct jail *j, const char *rel, int flags);
/* Opens the parent directory of `rel` (which must not be "") O_RDONLY (so it
 * can also be read or fsynced) and sets *leaf to its last component (a pointer
 * into rel). The caller then uses *at() calls with AT_SYMLINK_NOFOLLOW /
 * O_NOFOLLOW on the leaf. A symlink component is -ELOOP ("... is a symlink
 * (not followed)"), a non-directory one -ENOTDIR. */
int jail_open_parent(const struct jail *j, const char *rel, const char **leaf);
/* 1 if `rel` is a symlink that may lead to a directory, read one step inside
 * the jail (never out of it): it does, or it cannot be told here (a target
 * that is absolute, has a "." or ".." component, or is a link itself). 0 if
 * `rel` is not a symlink, is one to a non-directory or to nothing, or its
 * directory cannot be opened. */
int jail_link_may_be_dir(const struct jail *j, const char *rel);
/* Creates directory `rel` (mode) if missing; its parent must exist. An existing
 * non-directory (or a symlink) is -ENOTDIR, not replaced. */
int jail_mkdir(const struct jail *j, const char *rel, mode_t mode);

#endif
