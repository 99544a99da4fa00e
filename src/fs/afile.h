/* SPDX-License-Identifier: MIT */
/* The atomic, flash-friendly file writer. A file is written under a temporary
 * name in its destination directory, through a large coalescing buffer, with
 * dirty pages pushed out behind the write position (sync_file_range) and
 * dropped from the page cache (POSIX_FADV_DONTNEED) so that a 64 MB box never
 * piles up dirty data; then it gets its mode and mtime and is renamed over the
 * final name. Until afile_commit the old file is untouched. */
#ifndef FERRY_FS_AFILE_H
#define FERRY_FS_AFILE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* Files at least this big are preallocated (afile_open's size_hint). */
#define AFILE_PREALLOC_MIN ((off_t)1 << 20)

struct writer_opts {
	size_t buf_size;       /* coalescing buffer, default 1 MiB */
	size_t flush_behind;   /* start writeback every this many bytes, default 8 MiB; 0 = off */
	int fsync_each;        /* fdatasync before the rename (--fsync) */
};
void writer_opts_default(struct writer_opts *o);

struct afile {
	int dirfd;             /* borrowed: the destination directory */
	int fd;                /* the temporary file, -1 when closed */
	char final[256];       /* final leaf name */
	char tmp[256];         /* temporary leaf name: ".ferry-<rand>.<name prefix>" */
	uint8_t *buf;          /* owned coalescing buffer */
	size_t buf_len, buf_cap;
	off_t pos;             /* bytes accepted so far */
	off_t synced;          /* writeback started up to here */
	off_t dropped;         /* written back and dropped from the cache up to here */
	int partial;           /* tmp is the file's partial name (fs/partial.h) */
	mode_t mode;           /* the mode the temporary was created with */
	struct writer_opts opts;
	/* sees every byte written, in order (p NULL: n zero bytes of a hole),
	 * e.g. to hash it; tap_lost once data went around it (splice) */
	void (*tap)(void *ctx, const void *p, uint64_t n);
	void *tap_ctx;
	int tap_lost;
};

/* Creates the temporary file in dirfd (O_EXCL | O_NOFOLLOW, 0600); `name` is
 * one component. size_hint > 0 is preallocated (fallocate KEEP_SIZE, ignored
 * where unsupported); pass 0 for a sparse file, or its holes get blocks. On
 * failure nothing is left behind and afile_abort is still safe to call. */
int afile_open(struct afile *f, int dirfd, const char *name, off_t size_hint,
	       const struct writer_opts *o);
/* The same, for a file that will get `mode` at commit: where the umask
 * allows, the temporary is created with it (see create_mode), else 0600. */
int afile_open_as(struct afile *f, int dirfd, const char *name, off_t size_hint,
		  const struct writer_opts *o, mode_t mode);
/* The two halves of afile_open_as: the temporary and its buffer, then the
 * preallocation (nothing below AFILE_PREALLOC_MIN or in memory), so that a
 * resumable file takes its partial name (afile_make_partial) before a slow
 * fallocate: killed in between, it is never left under a random name. On
 * failure afile_prealloc has aborted the file. */
int afile_open_bare(struct afile *f, int dirfd, const char *name, off_t size_hint,
		    const struct writer_opts *o, mode_t mode);
int afile_prealloc(struct afile *f, off_t size_hint);
int afile_write(struct afile *f, const void *p, size_t n);
/* For data that reaches the file without passing through the caller's memory
 * (splice): flushes the buffer and returns the fd, positioned at the write
 * offset; afile_direct_done then accounts n bytes written there. */
int afile_direct_fd(struct afile *f);
int afile_direct_done(struct afile *f, size_t n);
/* Writes out what is buffered, so that what a write would clear (a file
 * capability) can be set after it. */
int afile_flush(struct afile *f);
/* A hole of n bytes (sparse files): seeks instead of writing zeros. */
int afile_skip(struct afile *f, off_t n);
/* Flushes, truncates to the final size, sets mode (& 07777) and mtime (ns;
 * NULL = leave) on the temporary, optionally fdatasyncs, then renameat()s it
 * over the final name: a symlink there is replaced, never written through; a
 * directory there fails (-EISDIR). The directory itself is not fsynced (use
 * fs_syncfs once per transfer). On failure the temporary file is removed and
 * the old file is untouched. */
int afile_commit(struct afile *f, mode_t mode, const struct timespec *mtime);
/* Resume: moves the just-opened temporary to the partial name of the final
 * name, locked and tagged with id, so that what has been written survives
 * an interruption (afile_keep) or a kill. 1 if it did; 0 if it stays an
 * ordinary temporary (another session's partial has the name, or the file
 * system cannot rename without replacing). */
struct fs_part_id;
int afile_make_partial(struct afile *f, const struct fs_part_id *id);
/* The transfer was interrupted: a partial file keeps what was written (at
 * least `min` bytes; less is removed); an ordinary temporary is removed.
 * Returns the bytes kept. */
off_t afile_keep(struct afile *f, off_t min);
/* Removes the temporary file; safe to call twice or after commit. */
void afile_abort(struct afile *f);

/* Async-signal-safe: removes the temporary file this process is writing, if
 * any (a daemon child stopped by SIGTERM leaves no partial file behind). */
void afile_signal_cleanup(void);

#endif
