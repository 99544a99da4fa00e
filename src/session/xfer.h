/* SPDX-License-Identifier: MIT */
/* What both transfer roles share: options, counters, and the hooks through
 * which the client shows progress and changes. */
#ifndef FERRY_SESSION_XFER_H
#define FERRY_SESSION_XFER_H

#include <stdint.h>

#include "fs/afile.h"
#include "fs/jail.h"
#include "proto/msg.h"

struct progress;

struct xfer_hooks {
	/* A change made (or, with --dry-run, that would be made); bits: CHGB_*;
	 * target: a symlink's, or a hard link's first name (CHG_HLINK*), or NULL. */
	void (*change)(void *ctx, int kind, unsigned bits, const char *path, const char *target);
	/* ls: one entry of a listing (type, mode, size, mtime, name, link target). */
	void (*entry)(void *ctx, int type, uint32_t mode, uint64_t size, int64_t mtime,
		      const char *name, const char *target);
	/* ls HOST:MODULE@: one snapshot of the module */
	void (*snap)(void *ctx, const struct m_snap *s);
	void *ctx;
	struct progress *progress;   /* may be NULL */
};

struct xfilter;
struct pathset;
struct filter_list;

struct xfer_opts {
	uint32_t flags;              /* REQ_* */
	struct writer_opts writer;
	int window;                  /* entries in flight; 0 = default (at most PROTO_WINDOW_FILES) */
	int strip_setid;             /* receiver: clear setuid/setgid bits of what the peer sends */
	int fake_super;              /* a module's "fake super": owners, types and modes in an xattr */
	const char *chmod;           /* receiver: --chmod (checked), NULL = none */
	const char *backup_dir;      /* receiver, with REQ_BACKUP: relative to the root, NULL = beside */
	const char *suffix;          /* receiver, with REQ_BACKUP: NULL = rsync's default */
	uint32_t max_delete;         /* receiver, with REQ_MAX_DELETE (session/delbudget.h) */
	uint32_t flags2;             /* REQ2_* */
	uint64_t max_size, min_size; /* receiver, with REQ2_MAX_SIZE / REQ2_MIN_SIZE */
	uint32_t modify_window;      /* receiver, with REQ2_MODIFY_WINDOW: seconds */
	int want_delta;              /* receiver: may ask for deltas (a box receiver: push) */
	int box;                     /* receiver: the box's (a push): a destination the user
					named that is a symlink is never followed */
	int do_delta;                /* sender: may roll over its files (a PC sender only) */
	int follow;                  /* sender: enum follow (fs/dirlist.h), a PC's push only */
	struct pathset *files_from;  /* sender: --files-from or -R (util/pathset.h), a PC's push only */
	int ignore_missing;          /* sender, with files_from: --ignore-missing-args */
	int prune;                   /* sender: -m, --prune-empty-dirs, a PC's push only */
	int want_sig;                /* receiver: may ask for block hashes (a PC: pull) */
	int send_sig;                /* sender: answers WANT_SIG (a box: pull) */
	struct xfilter *filter;      /* filter rules (session/xfilter.h); NULL = none */
	/* the module's own excludes (a server's): never sent, written or deleted */
	const struct filter_list *module_filter;
	/* receiver: the module's snapshot history, which keeps what the push
	 * replaces, deletes or changes (fs/snapinc.h); NULL = none */
	struct snapinc *snap;
};

struct xfer_stats {
	uint64_t files_seen;         /* regular files considered */
	uint64_t files_sent;         /* regular files whose data moved */
	uint64_t files_skipped;      /* up to date (compared and found equal) */
	uint64_t files_kept;         /* left as they are: -u, --existing, --ignore-existing */
	uint64_t bytes_data;         /* file bytes moved (holes excluded) */
	uint64_t bytes_committed;    /* the sizes of the files renamed into place */
	uint64_t bytes_matched;      /* file bytes a delta took from the basis instead */
	uint64_t bytes_total;        /* file bytes covered, skipped ones included */
	uint64_t bytes_zraw;         /* file bytes that travelled compressed (in bytes_data too), */
	uint64_t bytes_zwire;        /* and their compressed size */
	uint64_t dirs, links, deleted;
	uint64_t del_skipped;        /* extraneous entries --max-delete left */
	uint32_t errors;             /* files that failed (the transfer goes on) */
	uint32_t vanished;           /* of them, gone before their read: a sender's own, or
					a receiver's told so (FILE_VANISHED); rsync's exit 24
					when they are all */
	char first_error[1025];      /* fits a RESULT message */
};

/* Records a per-file error: counted, the first message kept, logged. */
void xfer_error(struct xfer_stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A failure the peer learns of through the stream and counts itself (a file
 * that could not be read, announced in its FILE_END): logged, its message
 * kept if it is the first, not counted here. */
void xfer_note(struct xfer_stats *st, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Adds the failures of `earlier` (e.g. sources that could not be opened)
 * to st; the first message is then the earlier one. */
void xfer_merge(struct xfer_stats *st, const struct xfer_stats *earlier);

/* Where a tree is read from: a jail, the path of the transfer root inside it
 * ("" = the jail's root), and the one top-level name to send ("" = send the
 * root directory's contents, as rsync does for "src/"). */
struct source {
	struct jail *jail;
	char base[4097];
	char top[256];
};

#define XFER_DEFAULT_WINDOW PROTO_WINDOW_FILES

#endif
