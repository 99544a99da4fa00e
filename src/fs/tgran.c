/* SPDX-License-Identifier: MIT */
#include "fs/tgran.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "fs/meta.h"

/* statfs(2) f_type values (linux/magic.h; not every libc has them all) */
#define MSDOS_MAGIC 0x4d44
#define EXFAT_MAGIC 0x2011bab0
#define NTFS3_MAGIC 0x7366746e

/* An odd second and every nanosecond digit set: what is lost of it shows
 * the precision. */
#define PROBE_SEC 1600000001
#define PROBE_NS 999999999u

int tgran_from(int64_t sec, uint32_t ns, const struct timespec *got, struct tgran *g)
{
	uint32_t gn = 0, gs = 0;

	*g = TGRAN_EXACT;
	for (uint64_t p = 1; p <= 1000000000u && !gn; p *= 10)
		if ((uint64_t)got->tv_nsec == ns - ns % p)
			gn = (uint32_t)p;
	if (got->tv_sec == sec)
		gs = 1;
	else if (got->tv_sec == sec - (sec & 1))
		gs = 2;
	if (!gn || !gs || (gs == 2 && gn != 1000000000u))
		return -EINVAL;
	*g = (struct tgran){ .ns = gn, .sec = gs };
	return 0;
}

/* futimens fd to the probing time and read back what its file system kept */
static int probe_fd(int fd, struct tgran *g)
{
	struct timespec t[2] = { { .tv_nsec = UTIME_OMIT }, { .tv_sec = PROBE_SEC, .tv_nsec = PROBE_NS } };
	struct stat st;

	if (futimens(fd, t) < 0 || fstat(fd, &st) < 0)
		return -errno;
	return tgran_from(PROBE_SEC, PROBE_NS, &st.st_mtim, g);
}

int tgran_probe(int dirfd, struct tgran *g)
{
	*g = TGRAN_EXACT;
	int fd = fs_open_unnamed(dirfd);
	if (fd < 0)
		return fd;
	int rc = probe_fd(fd, g);
	close(fd);
	return rc;
}

int tgran_probe_file(int dirfd, struct tgran *g)
{
	char name[256];

	*g = TGRAN_EXACT;
	int fd = fs_open_tmp(dirfd, "mtime-probe", name);
	if (fd < 0)
		return fd;
	int rc = probe_fd(fd, g);
	close(fd);
	unlinkat(dirfd, name, 0);
	return rc;
}

int tgran_guess(int fd, struct tgran *g)
{
	struct statfs sf;

	*g = TGRAN_EXACT;
	if (fstatfs(fd, &sf) < 0)
		return -errno;
	switch ((unsigned long)sf.f_type) {
	case MSDOS_MAGIC: *g = (struct tgran){ .ns = 1000000000u, .sec = 2 }; return 0;
	case EXFAT_MAGIC: *g = (struct tgran){ .ns = 10000000u, .sec = 1 }; return 0;
	case NTFS3_MAGIC: *g = (struct tgran){ .ns = 100u, .sec = 1 }; return 0;
	default: return -ENOENT;
	}
}

struct timespec tgran_trunc(const struct tgran *g, int64_t sec, uint32_t ns)
{
	int64_t s = sec - ((sec % (int64_t)g->sec) + (int64_t)g->sec) % (int64_t)g->sec;

	return (struct timespec){ .tv_sec = (time_t)s, .tv_nsec = (long)(ns - ns % g->ns) };
}
