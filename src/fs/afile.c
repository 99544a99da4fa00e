/* SPDX-License-Identifier: MIT */
#include "fs/afile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/magic.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs/meta.h"
#include "fs/partial.h"
#include "fs/quote.h"
#include "util/err.h"

#define AFILE_DEFAULT_BUF   (1u << 20)
#define AFILE_DIRECT_MIN    ((size_t)32 << 10)   /* written without the buffer */
#define AFILE_DEFAULT_BEHIND ((size_t)8 << 20)

void writer_opts_default(struct writer_opts *o)
{
	o->buf_size = AFILE_DEFAULT_BUF;
	o->flush_behind = AFILE_DEFAULT_BEHIND;
	o->fsync_each = 0;
}

static const char *qname(char *q, const char *name)
{
	return fs_quote(q, name, strlen(name));
}

/* The temporary file being written, for afile_signal_cleanup. One at a time
 * per process: the receiver writes files one after the other. */
static volatile int sig_dirfd = -1;
static char sig_tmp[256];

static void track(const struct afile *f)
{
	sig_dirfd = -1;
	memcpy(sig_tmp, f->tmp, sizeof sig_tmp);
	sig_dirfd = f->dirfd;
}

static void untrack(const struct afile *f)
{
	if (sig_dirfd == f->dirfd && !strcmp(sig_tmp, f->tmp))
		sig_dirfd = -1;
}

void afile_signal_cleanup(void)
{
	int fd = sig_dirfd;
	if (fd >= 0)
		unlinkat(fd, sig_tmp, 0);
}

/* tmpfs/ramfs: preallocation only makes every later partial-page write
 * zero the rest of its page again (measured: a fifth of a push's server CPU),
 * and memory cannot fragment the way a disk does. */
static int in_memory_fs(int fd)
{
	struct statfs sfs;
	return fstatfs(fd, &sfs) == 0 &&
	       ((unsigned long)sfs.f_type == TMPFS_MAGIC ||
		(unsigned long)sfs.f_type == RAMFS_MAGIC);
}

/* The process's umask, read once (umask cannot be read without being set:
 * ferry runs no threads, so nothing is created during that moment). */
static mode_t the_umask(void)
{
	static int known;
	static mode_t mask;

	if (!known) {
		mask = umask(077);
		umask(mask);
		known = 1;
	}
	return mask;
}

/* The temporary can be born with the final mode, saving commit's fchmod,
 * when the umask leaves that mode whole, it has no set-id or sticky bit
 * (commit's fchmod after a fchown is what keeps those), and the owner can
 * read and write it (a partial is tagged and later read back). */
static mode_t create_mode(mode_t want)
{
	want &= 07777;
	if (!want || (want & 07000) || (want & 0600) != 0600 || (want & the_umask()))
		return 0600;
	return want;
}

int afile_open(struct afile *f, int dirfd, const char *name, off_t size_hint,
	       const struct writer_opts *o)
{
	return afile_open_as(f, dirfd, name, size_hint, o, 0600);
}

int afile_open_as(struct afile *f, int dirfd, const char *name, off_t size_hint,
		  const struct writer_opts *o, mode_t mode)
{
	int r = afile_open_bare(f, dirfd, name, size_hint, o, mode);
	return r < 0 ? r : afile_prealloc(f, size_hint);
}

int afile_open_bare(struct afile *f, int dirfd, const char *name, off_t size_hint,
		    const struct writer_opts *o, mode_t mode)
{
	char q[FS_QUOTE_BUF];
	size_t n = strlen(name);
	int r = 0;

	memset(f, 0, sizeof *f);
	f->fd = -1;
	f->dirfd = dirfd;
	f->partial = 0;
	if (o)
		f->opts = *o;
	else
		writer_opts_default(&f->opts);
	if (f->opts.buf_size == 0)
		f->opts.buf_size = AFILE_DEFAULT_BUF;
	if (n == 0 || n >= sizeof f->final || strchr(name, '/') ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return err_set(-EINVAL, "write %s: not a file name", qname(q, name));
	memcpy(f->final, name, n + 1);
	f->mode = create_mode(mode);

	/* A small file gets a small buffer: a fresh 1 MiB per 4 KiB file is
	 * mmap/munmap and page faults for nothing. Taken before the file is
	 * made: a kill -9 between the temporary's creation and its rename to a
	 * partial name (afile_make_partial) leaves it behind, so nothing slow
	 * goes in between. */
	size_t cap = f->opts.buf_size;
	if (size_hint > 0 && (uint64_t)size_hint < cap)
		cap = (size_t)size_hint < 65536 ? 65536 : (size_t)size_hint;
	f->buf = malloc(cap);
	if (!f->buf) {
		r = err_set(-ENOMEM, "write %s: no memory for a %zu-byte buffer",
			    qname(q, name), cap);
		goto fail;
	}
	for (int tries = 0;; tries++) {
		r = fs_tmp_name(f->tmp, name);
		if (r < 0)
			goto fail;
		f->fd = openat(dirfd, f->tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       f->mode);
		if (f->fd >= 0) {
			track(f);
			break;
		}
		if (errno != EEXIST || tries >= 100) {
			r = err_sys(-errno, "create temporary for %s", qname(q, name));
			f->tmp[0] = '\0';   /* not ours: afile_abort must not remove it */
			goto fail;
		}
	}
	f->buf_cap = cap;
	return 0;
fail:
	afile_abort(f);
	return r;
}

int afile_prealloc(struct afile *f, off_t size_hint)
{
	char q[FS_QUOTE_BUF];
	int r;

	/* fallocate(2), not posix_fallocate(3): where the file system cannot
	 * preallocate, glibc's fallback writes a byte into every block, which
	 * doubles the wear on flash. KEEP_SIZE: the file's size stays what has
	 * been written (resume reads it), and commit's ftruncate fixes it up.
	 * Small files do not fragment: the syscall would cost more than it saves. */
	if (size_hint >= AFILE_PREALLOC_MIN && !in_memory_fs(f->fd) &&
	    fallocate(f->fd, FALLOC_FL_KEEP_SIZE, 0, size_hint) < 0 &&
	    errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL) {
		r = err_sys(-errno, "preallocate %jd bytes for %s", (intmax_t)size_hint,
			    qname(q, f->final));
		afile_abort(f);
		return r;
	}
	return 0;
}

/* sync_file_range is advisory here: file systems without it (some FUSE,
 * network ones) are fine, but a real I/O error must not be swallowed. */
static int range_sync(int fd, off_t off, off_t len, unsigned flags)
{
	if (len <= 0 || sync_file_range(fd, off, len, flags) == 0)
		return 0;
	if (errno == EINVAL || errno == ESPIPE || errno == ENOSYS || errno == EOPNOTSUPP)
		return 0;
	return -errno;
}

/* Called with the file offset at f->pos and nothing buffered. Once a window
 * of flush_behind bytes is complete, starts its writeback, then waits for the
 * window before it and drops that from the page cache: at most about two
 * windows are dirty or cached at any time. */
static int push_behind(struct afile *f, off_t end)
{
	char q[FS_QUOTE_BUF];
	off_t win = (off_t)f->opts.flush_behind;
	int r;

	if (win <= 0 || end - f->synced < win)
		return 0;
	r = range_sync(f->fd, f->synced, end - f->synced, SYNC_FILE_RANGE_WRITE);
	if (r < 0)
		return err_sys(r, "write %s", qname(q, f->final));
	if (f->synced > f->dropped) {
		r = range_sync(f->fd, f->dropped, f->synced - f->dropped,
			       SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE |
			       SYNC_FILE_RANGE_WAIT_AFTER);
		if (r < 0)
			return err_sys(r, "write %s", qname(q, f->final));
		posix_fadvise(f->fd, f->dropped, f->synced - f->dropped, POSIX_FADV_DONTNEED);
		f->dropped = f->synced;
	}
	f->synced = end;
	return 0;
}

#ifdef FERRY_TEST_HOOKS
/* Test builds only (tests/e2e/test_faults.sh): FERRY_TEST_EIO_AFTER=N makes
 * every write of this process fail with EIO once N bytes were written, as a
 * disk that starts failing would (no device-mapper in the test machines). */
static ssize_t test_write(int fd, const void *p, size_t n)
{
	static long long left = -2;

	if (left == -2) {
		const char *e = getenv("FERRY_TEST_EIO_AFTER");
		left = e ? atoll(e) : -1;
	}
	if (left < 0)
		return write(fd, p, n);
	if ((long long)n > left)
		n = (size_t)left;
	if (n == 0) {
		errno = EIO;
		return -1;
	}
	left -= (long long)n;
	return write(fd, p, n);
}
#define write test_write
#endif

static int write_all(struct afile *f, const uint8_t *p, size_t n)
{
	char q[FS_QUOTE_BUF];

	while (n > 0) {
		ssize_t w = write(f->fd, p, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(-errno, "write %s", qname(q, f->final));
		}
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

#ifdef FERRY_TEST_HOOKS
#undef write
#endif

static int flush_buf(struct afile *f)
{
	int r;

	if (f->buf_len == 0)
		return 0;
	r = write_all(f, f->buf, f->buf_len);
	if (r < 0)
		return r;
	f->buf_len = 0;
	return push_behind(f, f->pos);
}

int afile_write(struct afile *f, const void *p, size_t n)
{
	const uint8_t *s = p;
	int r;

	if (f->fd < 0)
		return err_set(-EBADF, "write: file is not open");
	if ((uintmax_t)n > (uintmax_t)(INTMAX_MAX - f->pos))
		return err_set(-EFBIG, "write %s: file too large", f->final);
	if (f->tap)
		f->tap(f->tap_ctx, p, n);
	while (n > 0) {
		size_t room = f->buf_cap - f->buf_len;
		if (f->buf_len == 0 && n >= AFILE_DIRECT_MIN) {
			/* A whole record or more: straight from the caller. The copy
			 * into the buffer cost more CPU (10% of a push at encrypt)
			 * than the extra write calls; the page cache coalesces what
			 * reaches the device either way. */
			size_t chunk = n >= f->buf_cap ? n - n % f->buf_cap : n;
			r = write_all(f, s, chunk);
			if (r < 0)
				return r;
			f->pos += (off_t)chunk;
			s += chunk;
			n -= chunk;
			r = push_behind(f, f->pos);
			if (r < 0)
				return r;
			continue;
		}
		if (room > n)
			room = n;
		memcpy(f->buf + f->buf_len, s, room);
		f->buf_len += room;
		f->pos += (off_t)room;
		s += room;
		n -= room;
		if (f->buf_len == f->buf_cap) {
			r = flush_buf(f);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int afile_direct_fd(struct afile *f)
{
	if (f->fd < 0)
		return err_set(-EBADF, "write: file is not open");
	f->tap_lost = 1;
	int r = flush_buf(f);
	return r < 0 ? r : f->fd;
}

int afile_direct_done(struct afile *f, size_t n)
{
	f->pos += (off_t)n;
	return push_behind(f, f->pos);
}

int afile_skip(struct afile *f, off_t n)
{
	char q[FS_QUOTE_BUF];
	int r;

	if (f->fd < 0)
		return err_set(-EBADF, "write: file is not open");
	if (n < 0 || (intmax_t)n > INTMAX_MAX - (intmax_t)f->pos)
		return err_set(-EINVAL, "write %s: bad hole length %jd", qname(q, f->final),
			       (intmax_t)n);
	if (n == 0)
		return 0;
	if (f->tap)
		f->tap(f->tap_ctx, NULL, (uint64_t)n);
	r = flush_buf(f);
	if (r < 0)
		return r;
	if (lseek(f->fd, n, SEEK_CUR) < 0)
		return err_sys(-errno, "write %s: seek", qname(q, f->final));
	/* Preallocation gave the hole real blocks: give them back, so a sparse
	 * file stays sparse. ext4 punches only below the file's size, so the
	 * size moves to the hole's end first. Not every file system can punch;
	 * that costs only space. */
	if (ftruncate(f->fd, f->pos + n) < 0)
		return err_sys(-errno, "write %s: extend", qname(q, f->final));
	fallocate(f->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, f->pos, n);
	f->pos += n;
	return 0;
}

int afile_flush(struct afile *f)
{
	return f->fd < 0 ? err_set(-EBADF, "flush: file is not open") : flush_buf(f);
}

int afile_commit(struct afile *f, mode_t mode, const struct timespec *mtime)
{
	char q[FS_QUOTE_BUF];
	int fd;
	int r;

	if (f->fd < 0)
		return err_set(-EBADF, "commit: file is not open");
	r = flush_buf(f);
	if (r < 0)
		goto fail;
	/* No ftruncate: writes and afile_skip's extension keep the size at pos,
	 * and KEEP_SIZE preallocation never moves it. A needless ftruncate
	 * costs ext4 a forced writeback at close (3x slower on 10,000 files). */
	if ((mode & 07777) != f->mode && fchmod(f->fd, mode & 07777) < 0) {
		r = err_sys(-errno, "chmod %s", qname(q, f->final));
		goto fail;
	}
	if (mtime) {
		struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, *mtime };
		if (futimens(f->fd, ts) < 0) {
			r = err_sys(-errno, "set mtime of %s", qname(q, f->final));
			goto fail;
		}
	}
	if (f->opts.fsync_each) {
		if (fdatasync(f->fd) < 0) {
			r = err_sys(-errno, "fdatasync %s", qname(q, f->final));
			goto fail;
		}
	} else if (f->opts.flush_behind && f->pos >= (off_t)f->opts.flush_behind &&
		   f->pos > f->synced) {
		/* Start (not wait for) the tail's writeback, so a run of
		 * large files does not leave it all dirty. Not for small files:
		 * one I/O each would defeat the kernel's batching. */
		range_sync(f->fd, f->synced, f->pos - f->synced, SYNC_FILE_RANGE_WRITE);
	}
	if (f->partial)   /* the identity of a partial is not the file's */
		fs_partial_untag(f->fd);
	/* close() is where NFS and some FUSE file systems report write errors. */
	fd = f->fd;
	f->fd = -1;
	if (close(fd) < 0 && errno != EINTR) {
		r = err_sys(-errno, "close %s", qname(q, f->final));
		goto fail;
	}
	/* renameat replaces whatever is at the final name (a symlink included:
	 * the link is replaced, its target never written). A directory there
	 * makes it fail with EISDIR, and the temporary is removed. */
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->final) < 0) {
		r = err_sys(-errno, "rename into place as %s", qname(q, f->final));
		goto fail;
	}
	untrack(f);
	f->tmp[0] = '\0';
	free(f->buf);
	f->buf = NULL;
	f->buf_len = f->buf_cap = 0;
	return 0;
fail:
	afile_abort(f);
	return r;
}

int afile_make_partial(struct afile *f, const struct fs_part_id *id)
{
	char name[256];

	if (f->fd < 0 || f->partial || fs_partial_name(name, f->final) < 0 ||
	    flock(f->fd, LOCK_EX | LOCK_NB) < 0)
		return 0;
	int tag = fs_partial_tag(f->fd, id);
	/* an untagged partial would be taken for a user's file of that name:
	 * none is kept, unless the file system has no xattrs at all */
	if (tag < 0 && tag != -ENOTSUP && tag != -EOPNOTSUPP && tag != -ENOSYS)
		return 0;
	int tagged = tag == 0;
	if (fs_rename_noreplace(f->dirfd, f->tmp, name) < 0) {
		if (tagged)
			fs_partial_untag(f->fd);
		return 0;
	}
	untrack(f);   /* a session stopped by a signal keeps it too */
	memcpy(f->tmp, name, sizeof f->tmp);
	f->partial = 1;
	return 1;
}

off_t afile_keep(struct afile *f, off_t min)
{
	off_t kept = 0;

	if (f->fd >= 0 && f->partial && flush_buf(f) == 0 && f->pos >= min &&
	    ftruncate(f->fd, f->pos) == 0)
		kept = f->pos;
	if (!kept) {
		afile_abort(f);
		return 0;
	}
	close(f->fd);
	f->fd = -1;
	f->tmp[0] = '\0';
	f->partial = 0;
	free(f->buf);
	f->buf = NULL;
	f->buf_len = f->buf_cap = 0;
	return kept;
}

void afile_abort(struct afile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	if (f->tmp[0]) {
		untrack(f);
		unlinkat(f->dirfd, f->tmp, 0);
	}
	f->tmp[0] = '\0';
	free(f->buf);
	f->buf = NULL;
	f->buf_len = f->buf_cap = 0;
}
