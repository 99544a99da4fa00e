/* SPDX-License-Identifier: MIT */
#include "fs/snapidx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/jail.h"
#include "util/err.h"

static int rank(unsigned char c)
{
	return c == '/' ? 0 : c == '\0' ? -1 : c + 1;
}

int snapidx_cmp(const char *a, const char *b)
{
	for (;; a++, b++) {
		int x = rank((unsigned char)*a), y = rank((unsigned char)*b);
		if (x != y)
			return x < y ? -1 : 1;
		if (x < 0)
			return 0;
	}
}

size_t snapidx_encode(char *buf, char kind, uint32_t obj, const char *path)
{
	size_t n = strlen(path);

	buf[0] = kind;
	snprintf(buf + 1, 9, "%08x", obj);
	memcpy(buf + SNAPIDX_HEAD, path, n + 1);
	return SNAPIDX_HEAD + n + 1;
}

int snapidx_decode(const char *buf, size_t len, struct snaprec *out)
{
	static const char kinds[] = { SNAP_ADDED, SNAP_OLD, SNAP_META, SNAP_PARENT, '\0' };
	return snapidx_decode_kinds(buf, len, kinds, out);
}

int snapidx_decode_kinds(const char *buf, size_t len, const char *kinds, struct snaprec *out)
{
	char hex[9];
	char *end;

	/* a path is never empty: the module's root itself has no record */
	if (len < SNAPIDX_HEAD + 2 || buf[len - 1] != '\0' ||
	    memchr(buf, '\0', len - 1) != NULL || !buf[0] || !strchr(kinds, buf[0]))
		return err_set(-EBADMSG, "snapshot index: a malformed record");
	memcpy(hex, buf + 1, 8);
	hex[8] = '\0';
	unsigned long v = strtoul(hex, &end, 16);
	if (*end || end != hex + 8 || path_check(buf + SNAPIDX_HEAD, len - 1 - SNAPIDX_HEAD) < 0)
		return err_set(-EBADMSG, "snapshot index: a malformed record");
	const char *p = buf + SNAPIDX_HEAD;
	size_t hl = strlen(SNAPIDX_NEVER);
	if (!strncmp(p, SNAPIDX_NEVER, hl) && (p[hl] == '/' || !p[hl]))
		return err_set(-EBADMSG, "snapshot index: a record of the history itself");
	out->kind = buf[0];
	out->obj = (uint32_t)v;
	out->path = p;
	return 0;
}

/* --- building: one run at a time --------------------------------------- */

struct ent {
	const char *rec;
	size_t len;
	size_t seq;
};

static int ent_cmp(const void *pa, const void *pb)
{
	const struct ent *a = pa, *b = pb;
	int c = snapidx_cmp(a->rec + SNAPIDX_HEAD, b->rec + SNAPIDX_HEAD);
	return c ? c : a->seq < b->seq ? -1 : a->seq > b->seq;
}

static int write_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return err_sys(-errno, "writing the snapshot index");
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Sorts buf[0..len) (whole records) and writes it as dirfd/idx.<no>. */
static int write_run(int dirfd, unsigned no, const char *buf, size_t len)
{
	size_t n = 0, cap = 0;
	struct ent *e = NULL;
	char name[32];
	int rc = 0;

	for (size_t off = 0; off < len;) {
		const char *z = memchr(buf + off, '\0', len - off);
		if (!z)
			return err_set(-EBADMSG, "snapshot log: a cut record");
		if (n == cap) {
			cap = cap ? cap * 2 : 256;
			struct ent *ne = realloc(e, cap * sizeof *e);
			if (!ne) {
				free(e);
				return err_set(-ENOMEM, "out of memory");
			}
			e = ne;
		}
		e[n] = (struct ent){ buf + off, (size_t)(z - (buf + off)) + 1, n };
		struct snaprec r;
		if (snapidx_decode(e[n].rec, e[n].len, &r) < 0) {
			free(e);
			return -EBADMSG;
		}
		off += e[n].len;
		n++;
	}
	qsort(e, n, sizeof *e, ent_cmp);
	snprintf(name, sizeof name, "idx.%u", no);
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		free(e);
		return err_sys(-errno, "creating the snapshot index");
	}
	size_t last = n;   /* the last record kept */
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (e[i].rec[0] == SNAP_PARENT)
			continue;
		if (last < n && !snapidx_cmp(e[i].rec + SNAPIDX_HEAD, e[last].rec + SNAPIDX_HEAD))
			continue;   /* the first touch of a path is what it was before */
		last = i;
		rc = write_all(fd, e[i].rec, e[i].len);
	}
	if (close(fd) < 0 && rc == 0)
		rc = err_sys(-errno, "writing the snapshot index");
	free(e);
	return rc;
}

int snapidx_build(int dirfd, int logfd, unsigned *runs)
{
	size_t cap = SNAPIDX_RUN + PATH_MAX_WIRE + SNAPIDX_HEAD + 2, have = 0;
	char *buf = malloc(cap);
	off_t pos = 0;
	int rc = 0, eof = 0;

	*runs = 0;
	if (!buf)
		return err_set(-ENOMEM, "out of memory");
	for (;;) {
		while (!eof && have < cap) {   /* a full buffer, or the whole log */
			ssize_t got = pread(logfd, buf + have, cap - have, pos);
			if (got < 0 && errno == EINTR)
				continue;
			if (got < 0) {
				rc = err_sys(-errno, "reading the snapshot log");
				goto out;
			}
			eof = got == 0;
			pos += got;
			have += (size_t)got;
		}
		if (!have)
			break;
		/* whole records up to the run's size; the rest waits for the next */
		size_t use = 0;
		while (use < have && use < SNAPIDX_RUN) {
			const char *z = memchr(buf + use, '\0', have - use);
			if (!z)
				break;
			use = (size_t)(z - buf) + 1;
		}
		if (!use) {
			rc = err_set(-EBADMSG, "snapshot log: a cut record");
			break;
		}
		if ((rc = write_run(dirfd, *runs, buf, use)) < 0)
			break;
		(*runs)++;
		memmove(buf, buf + use, have - use);
		have -= use;
	}
out:
	free(buf);
	return rc;
}

/* --- reading ------------------------------------------------------------- */

int snapidx_open(struct snapidx *x, int dirfd)
{
	size_t cap = 0;

	x->n = 0;
	x->run = NULL;
	for (unsigned i = 0;; i++) {
		char name[32];
		struct stat st;
		snprintf(name, sizeof name, "idx.%u", i);
		int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0 && errno == ENOENT)
			return 0;
		if (fd < 0 || fstat(fd, &st) < 0) {
			int e = -errno;
			if (fd >= 0)
				close(fd);
			snapidx_close(x);
			return err_sys(e, "snapshot index %s", name);
		}
		if (x->n == cap) {
			cap = cap ? cap * 2 : 4;
			void *nr = realloc(x->run, cap * sizeof *x->run);
			if (!nr) {
				close(fd);
				snapidx_close(x);
				return err_set(-ENOMEM, "out of memory");
			}
			x->run = nr;
		}
		x->run[i].len = (size_t)st.st_size;
		x->run[i].map = NULL;
		if (st.st_size) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
			if (m == MAP_FAILED) {
				close(fd);
				snapidx_close(x);
				return err_sys(-errno, "snapshot index %s", name);
			}
			x->run[i].map = m;
		}
		close(fd);
		x->n = i + 1;
		/* an index that ends mid-record is a damaged one: refused */
		if (st.st_size && x->run[i].map[st.st_size - 1] != '\0') {
			snapidx_close(x);
			return err_set(-EBADMSG, "snapshot index %s: cut short", name);
		}
	}
}

void snapidx_close(struct snapidx *x)
{
	for (unsigned i = 0; i < x->n; i++)
		if (x->run[i].map)
			munmap((void *)x->run[i].map, x->run[i].len);
	free(x->run);
	x->run = NULL;
	x->n = 0;
}

/* The first record start at or after `at`. */
static size_t start_from(const char *m, size_t len, size_t at)
{
	if (at == 0)
		return 0;
	const char *z = memchr(m + at - 1, '\0', len - (at - 1));
	return z ? (size_t)(z - m) + 1 : len;
}

static size_t rec_end(const char *m, size_t len, size_t s)
{
	const char *z = memchr(m + s, '\0', len - s);
	return z ? (size_t)(z - m) + 1 : len;
}

/* The first record whose path is not before key. */
static size_t lower_bound(const char *m, size_t len, const char *key)
{
	size_t lo = 0, hi = len;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		size_t s = start_from(m, len, mid);
		if (s >= hi) {
			hi = mid;
			continue;
		}
		if (s + SNAPIDX_HEAD < len && snapidx_cmp(m + s + SNAPIDX_HEAD, key) < 0)
			lo = rec_end(m, len, s);
		else
			hi = s;
	}
	return lo;
}

static int rec_at(const char *m, size_t len, size_t s, struct snaprec *out)
{
	size_t e = rec_end(m, len, s);
	return snapidx_decode(m + s, e - s, out);
}

int snapidx_find(const struct snapidx *x, const char *path, struct snaprec *out)
{
	for (unsigned i = 0; i < x->n; i++) {
		const char *m = x->run[i].map;
		size_t len = x->run[i].len, s;
		if (!m || (s = lower_bound(m, len, path)) >= len)
			continue;
		if (rec_at(m, len, s, out) == 0 && !strcmp(out->path, path))
			return 1;
	}
	return 0;
}

int snapidx_children(const struct snapidx *x, const char *dir, snapidx_child_fn fn, void *ctx)
{
	char key[PATH_MAX_WIRE + 2];
	size_t dl = strlen(dir);

	if (dl + 2 > sizeof key)
		return 0;
	snprintf(key, sizeof key, "%s%s", dir, dl ? "/" : "");
	size_t kl = strlen(key);
	for (unsigned i = 0; i < x->n; i++) {
		const char *m = x->run[i].map;
		size_t len = x->run[i].len;
		if (!m)
			continue;
		for (size_t s = lower_bound(m, len, key); s < len; s = rec_end(m, len, s)) {
			struct snaprec r;
			if (rec_at(m, len, s, &r) < 0 || strncmp(r.path, key, kl) != 0)
				break;
			const char *name = r.path + kl, *slash = strchr(name, '/');
			size_t n = slash ? (size_t)(slash - name) : strlen(name);
			if (!n)
				continue;   /* dir itself, as "dir/" in a damaged index */
			int rc = fn(ctx, name, n);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int snapidx_each(const struct snapidx *x, snapidx_rec_fn fn, void *ctx)
{
	for (unsigned i = 0; i < x->n; i++) {
		const char *m = x->run[i].map;
		size_t len = x->run[i].len;
		for (size_t s = 0; m && s < len; s = rec_end(m, len, s)) {
			struct snaprec r;
			if (rec_at(m, len, s, &r) < 0)
				return -EBADMSG;
			int rc = fn(ctx, &r);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int snapidx_log_append(int fd, char kind, uint32_t obj, const char *path)
{
	char buf[SNAPIDX_HEAD + PATH_MAX_WIRE + 1];

	if (strlen(path) > PATH_MAX_WIRE)
		return err_set(-ENAMETOOLONG, "a snapshot log record too long");
	size_t n = snapidx_encode(buf, kind, obj, path);
	return write_all(fd, buf, n) < 0 ? err_sys(-EIO, "writing a snapshot log") : 0;
}

int snapidx_log_reverse(int fd, const char *kinds, snapidx_log_fn fn, void *ctx)
{
	enum { CH = 64 * 1024 };
	struct stat st;
	char *buf = malloc(CH);
	int rc = 0;

	if (!buf || fstat(fd, &st) < 0) {
		free(buf);
		return err_set(-ENOMEM, "reading a snapshot log");
	}
	off_t pos = st.st_size;
	while (pos > 0) {   /* a record cut at the end was never acted on */
		char c;
		if (pread(fd, &c, 1, pos - 1) != 1 || c == '\0')
			break;
		pos--;
	}
	while (pos > 0 && rc == 0) {
		off_t a = pos > CH ? pos - CH : 0;
		size_t end = (size_t)(pos - a);
		if (pread(fd, buf, end, a) != (ssize_t)end) {
			rc = err_sys(-EIO, "reading a snapshot log");
			break;
		}
		size_t full = end;
		while (end > 0 && rc == 0) {
			size_t i = end - 1;
			while (i > 0 && buf[i - 1] != '\0')
				i--;
			if (i == 0 && a > 0)
				break;   /* its start is in the chunk before */
			struct snaprec r;
			if (snapidx_decode_kinds(buf + i, end - i, kinds, &r) == 0)
				rc = fn(ctx, &r, (long long)(a + (off_t)i));
			end = i;
		}
		if (end == full && a > 0) {
			rc = err_set(-EBADMSG, "a snapshot log: a record longer than any of ours");
			break;
		}
		pos = a + (off_t)end;
	}
	free(buf);
	return rc;
}

int snapidx_log_has_below(int fd, const char *dir)
{
	enum { CH = 64 * 1024 };
	char *buf = malloc(CH + SNAPIDX_HEAD + PATH_MAX_WIRE + 2);
	size_t dl = strlen(dir), have = 0;
	off_t pos = 0;
	int found = 0;

	if (!buf)
		return err_set(-ENOMEM, "out of memory");
	for (;;) {
		ssize_t got = pread(fd, buf + have, CH, pos);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		pos += got;
		have += (size_t)got;
		size_t off = 0;
		for (;;) {
			const char *z = memchr(buf + off, '\0', have - off);
			if (!z)
				break;
			const char *p = buf + off + SNAPIDX_HEAD;
			if ((size_t)(z - (buf + off)) > SNAPIDX_HEAD && !strncmp(p, dir, dl) && p[dl] == '/')
				found = 1;
			off = (size_t)(z - buf) + 1;
		}
		memmove(buf, buf + off, have - off);
		have -= off;
		if (found || have > SNAPIDX_HEAD + PATH_MAX_WIRE + 1)
			break;
	}
	free(buf);
	return found;
}
