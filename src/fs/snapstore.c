/* SPDX-License-Identifier: MIT */
#include "fs/snapstore.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/quote.h"
#include "util/err.h"
#include "util/readfile.h"

#define TIME_LEN 18   /* "2026-12-03T091245Z" */

static int open_sub(int at, const char *name, int create)
{
	if (create && mkdirat(at, name, 0700) < 0 && errno != EEXIST)
		return err_sys(-errno, "creating %s", name);
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? err_sys(-errno, "%s", name) : fd;
}

int snapstore_open(int module_fd, int create, int *hist, int *snaps)
{
	*hist = *snaps = -1;
	int h = open_sub(module_fd, SNAP_DIR, create);
	if (h < 0)
		return h;
	int s = open_sub(h, "snaps", create);
	if (s < 0) {
		close(h);
		return s;
	}
	*hist = h;
	*snaps = s;
	return 0;
}

int snapstore_lock(int hist, int exclusive)
{
	/* a reader may be confined to reading: the first push made the file */
	int fd = exclusive ? openat(hist, "lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600) :
			     openat(hist, "lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(-errno, SNAP_DIR "/lock");
	while (flock(fd, exclusive ? LOCK_EX : LOCK_SH) < 0) {
		if (errno == EINTR)
			continue;
		int e = -errno;
		close(fd);
		return err_sys(e, "locking " SNAP_DIR);
	}
	return fd;
}

static int64_t time_of(const char *name);

int snapstore_name_ok(const char *name)
{
	size_t n = strlen(name);
	if (n <= TIME_LEN + 1 || n >= SNAP_NAME_MAX || name[TIME_LEN] != '-')
		return 0;
	for (size_t i = 0; i < TIME_LEN; i++) {
		char c = name[i];
		int want_digit = !(i == 4 || i == 7 || i == 10 || i == 17);
		if (want_digit ? !isdigit((unsigned char)c) :
		    c != (i == 10 ? 'T' : i == 17 ? 'Z' : '-'))
			return 0;
	}
	for (size_t i = TIME_LEN + 1; i < n; i++)
		if (!isalnum((unsigned char)name[i]) && name[i] != '_' && name[i] != '-')
			return 0;
	return time_of(name) >= 0;
}

/* The last second a name's four-digit year can say. */
#define TIME_LAST INT64_C(253402300799)   /* 9999-12-31T235959Z */

static void time_part(char out[TIME_LEN + 1], int64_t t)
{
	time_t tt = (time_t)(t < 0 ? 0 : t > TIME_LAST ? TIME_LAST : t);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(out, TIME_LEN + 1, "%Y-%m-%dT%H%M%SZ", &tm);
}

/* A name's time, or -1 when its time part is not a real UTC time (month 0,
 * February 31st): a name made by hand or damaged, which would not keep the
 * order of names and times that the history relies on. */
static int64_t time_of(const char *name)
{
	struct tm tm = { 0 }, back;
	if (sscanf(name, "%4d-%2d-%2dT%2d%2d%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
		   &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6)
		return -1;
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	struct tm want = tm;
	time_t t = timegm(&tm);
	if (t < 0 || !gmtime_r(&t, &back) || back.tm_year != want.tm_year || back.tm_mon != want.tm_mon ||
	    back.tm_mday != want.tm_mday || back.tm_hour != want.tm_hour ||
	    back.tm_min != want.tm_min || back.tm_sec != want.tm_sec)
		return -1;
	return (int64_t)t;
}

void snapstore_name(char out[SNAP_NAME_MAX], int64_t now, const char *client, const char *last)
{
	char tp[TIME_LEN + 1];

	if (last && now <= time_of(last))
		now = time_of(last) + 1;   /* a clock stepped back keeps the order */
	time_part(tp, now);
	snprintf(out, SNAP_NAME_MAX, "%s-%.*s", tp, SNAP_CLIENT_MAX, client);
}

int snapinfo_write(int dirfd, const struct snapinfo *si)
{
	char buf[256];
	int n = snprintf(buf, sizeof buf, "time=%" PRId64 "\nclient=%s\nfiles=%" PRIu64
			 "\nbytes=%" PRIu64 "\n", si->time, si->client, si->files, si->bytes);
	if (si->failed)   /* absent in a whole snapshot, as in those before it existed */
		n += snprintf(buf + n, sizeof buf - (size_t)n, "failed=%" PRIu64 "\n", si->failed);
	int fd = openat(dirfd, "info", O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_sys(-errno, "writing a snapshot's info");
	int ok = write(fd, buf, (size_t)n) == n;
	if (close(fd) < 0 || !ok)
		return err_sys(-EIO, "writing a snapshot's info");
	return 0;
}

static int parse_info(const char *text, struct snapinfo *si)
{
	int got = 0;
	for (const char *l = text; *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);
		char line[128];
		snprintf(line, sizeof line, "%.*s", (int)(len < 127 ? len : 127), l);
		got += sscanf(line, "time=%" SCNd64, &si->time) == 1;
		got += sscanf(line, "files=%" SCNu64, &si->files) == 1;
		got += sscanf(line, "bytes=%" SCNu64, &si->bytes) == 1;
		sscanf(line, "failed=%" SCNu64, &si->failed);   /* optional */
		if (!strncmp(line, "client=", 7))
			snprintf(si->client, sizeof si->client, "%.*s", SNAP_CLIENT_MAX, line + 7);
		l += len + (nl != NULL);
	}
	return got == 3 ? 0 : -EBADMSG;
}

int snapinfo_read(int snaps, const char *name, struct snapinfo *si)
{
	char path[SNAP_NAME_MAX + 8], *text = NULL;
	size_t len;

	memset(si, 0, sizeof *si);
	snprintf(si->name, sizeof si->name, "%s", name);
	snprintf(path, sizeof path, "%s/info", name);
	int fd = openat(snaps, path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return err_sys(-errno, "snapshot %s: its info", name);
	int rc = read_regular_fd(fd, 4096, &text, &len);
	close(fd);
	if (rc == 0) {
		text[len < 4095 ? len : 4095] = '\0';
		rc = parse_info(text, si);
	}
	free(text);
	return rc < 0 ? err_set(rc, "snapshot %s: its info is damaged", name) : 0;
}

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct snapinfo *)a)->name, ((const struct snapinfo *)b)->name);
}

const char *snapinfo_dir(const struct snapinfo *si, char out[SNAP_NAME_MAX + 2])
{
	snprintf(out, SNAP_NAME_MAX + 2, "%s%s", si->name, si->hidden ? ".h" : "");
	return out;
}

/* 1 for a snapshot's directory, 2 for a hidden one's, 0 for anything else. */
static int entry_kind(const char *d)
{
	char base[SNAP_NAME_MAX];
	size_t n = strlen(d);

	if (snapstore_name_ok(d))
		return 1;
	if (n < 3 || n - 2 >= sizeof base || strcmp(d + n - 2, ".h"))
		return 0;
	memcpy(base, d, n - 2);
	base[n - 2] = '\0';
	return snapstore_name_ok(base) ? 2 : 0;
}

static int list_some(int snaps, int with_hidden, struct snapinfo **out, size_t *n)
{
	int fd = openat(snaps, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct snapinfo *v = NULL;
	size_t cap = 0;
	int rc = 0;

	*out = NULL;
	*n = 0;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return err_sys(-errno, "listing snapshots");
	}
	for (struct dirent *e; (e = readdir(d));) {
		int kind = entry_kind(e->d_name);
		if (!kind || (kind == 2 && !with_hidden))
			continue;   /* ".", "..", a push in progress (new.tmp) */
		if (*n == cap) {
			cap = cap ? cap * 2 : 16;
			struct snapinfo *nv = realloc(v, cap * sizeof *v);
			if (!nv) {
				rc = err_set(-ENOMEM, "out of memory");
				break;
			}
			v = nv;
		}
		if ((rc = snapinfo_read(snaps, e->d_name, &v[*n])) < 0)
			break;
		v[*n].hidden = kind == 2;
		if (kind == 2)
			v[*n].name[strlen(v[*n].name) - 2] = '\0';
		(*n)++;
	}
	closedir(d);
	if (rc < 0) {
		free(v);
		*n = 0;
		return rc;
	}
	if (*n)
		qsort(v, *n, sizeof *v, by_name);
	*out = v;
	return 0;
}

int snapstore_list(int snaps, struct snapinfo **out, size_t *n)
{
	return list_some(snaps, 0, out, n);
}

int snapstore_chain(int snaps, struct snapinfo **out, size_t *n)
{
	return list_some(snaps, 1, out, n);
}

int snapstore_select(const struct snapinfo *s, size_t n, const char *sel)
{
	char q[FS_QUOTE_BUF];
	size_t len = strlen(sel);

	if (!n)
		return err_set(-ENOENT, "the module has no snapshots yet");
	if (!len || !strcmp(sel, "latest"))
		return (int)(n - 1);
	if (sel[0] == '-') {
		char *end;
		unsigned long k = strtoul(sel + 1, &end, 10);
		if (*end || end == sel + 1 || k >= n)
			return err_set(-ENOENT, "snapshot %s: there are %zu snapshots", fs_quote(q, sel, len), n);
		return (int)(n - 1 - k);
	}
	for (size_t i = n; i-- > 0;)
		if (!strcmp(s[i].name, sel))
			return (int)i;
	/* a time prefix: the newest at or before it; written as ISO 8601 with
	 * colons (or a blank for the T) it means the same as the name's form */
	char t[TIME_LEN + 1];
	size_t tl = 0;
	for (const char *p = sel; *p && tl < sizeof t; p++)
		if (*p != ':')
			t[tl++] = *p == ' ' ? 'T' : *p;
	if (tl <= TIME_LEN && isdigit((unsigned char)sel[0]))
		for (size_t i = n; i-- > 0;)
			if (strncmp(s[i].name, t, tl) <= 0)
				return (int)i;
	return err_set(-ENOENT, "no snapshot %s (a name as listed, latest, -N, or a UTC time such "
		       "as 2026-11-30 or 2026-11-30T12:00)", fs_quote(q, sel, len));
}

int snaphash_put(int fd, const uint8_t hash[16], int64_t when)
{
	uint8_t v[24];

	memcpy(v, hash, 16);
	for (int i = 0; i < 8; i++)
		v[16 + i] = (uint8_t)((uint64_t)when >> (56 - 8 * i));
	if (fsetxattr(fd, SNAP_HASH_XATTR, v, sizeof v, 0) < 0)
		return errno == ENOTSUP ? 0 : err_sys(-errno, "recording a file's hash");
	return 0;
}

int snaphash_get(int fd, uint8_t hash[16], int64_t *when)
{
	uint8_t v[24];
	ssize_t n = fgetxattr(fd, SNAP_HASH_XATTR, v, sizeof v);

	if (n < 0)
		return errno == ENODATA || errno == ENOTSUP ? 0 : err_sys(-errno, "a file's hash");
	if (n != (ssize_t)sizeof v)
		return 0;
	memcpy(hash, v, 16);
	uint64_t t = 0;
	for (int i = 0; i < 8; i++)
		t = t << 8 | v[16 + i];
	*when = (int64_t)t;
	return 1;
}

void snapstat_put(uint8_t b[SNAPSTAT_LEN], const struct stat *st)
{
	uint32_t v[3] = { st->st_mode, st->st_uid, st->st_gid };
	int64_t sec = st->st_mtim.tv_sec;
	uint32_t ns = (uint32_t)st->st_mtim.tv_nsec;

	memcpy(b, v, 12);
	memcpy(b + 12, &sec, 8);
	memcpy(b + 20, &ns, 4);
}

void snapstat_get(const uint8_t b[SNAPSTAT_LEN], struct stat *st)
{
	uint32_t v[3], ns;
	int64_t sec;

	memcpy(v, b, 12);
	memcpy(&sec, b + 12, 8);
	memcpy(&ns, b + 20, 4);
	memset(st, 0, sizeof *st);
	st->st_mode = v[0];
	st->st_uid = v[1];
	st->st_gid = v[2];
	st->st_mtim.tv_sec = (time_t)sec;
	st->st_mtim.tv_nsec = ns < 1000000000u ? (long)ns : 0;
}

void snapstat_apply(int dfd, const char *leaf, const struct stat *st)
{
	const struct timespec t[2] = { { .tv_nsec = UTIME_OMIT }, st->st_mtim };
	struct stat cur;

	if (!leaf) {
		if (fchown(dfd, st->st_uid, st->st_gid) < 0) {
			/* not root: the owner is the session's anyway */
		}
		fchmod(dfd, st->st_mode & 07777);
		futimens(dfd, t);
		return;
	}
	if (fchownat(dfd, leaf, st->st_uid, st->st_gid, AT_SYMLINK_NOFOLLOW) < 0) {
		/* as above */
	}
	if (fstatat(dfd, leaf, &cur, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISLNK(cur.st_mode))
		fchmodat(dfd, leaf, st->st_mode & 07777, 0);
	utimensat(dfd, leaf, t, AT_SYMLINK_NOFOLLOW);
}
