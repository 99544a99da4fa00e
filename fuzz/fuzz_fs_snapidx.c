/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for what a snapshot reader takes from the disk: an
 * increment's index (fs/snapidx.h; a damaged or hostile file must give
 * "not found" or an error, never a crash or a loop) and a snapshot's info
 * (fs/snapstore.h). The input is written as idx.0 and as info. And what a
 * client names a snapshot by (MODULE@SEL: a name, "latest", "-N", a time
 * prefix), selected among three; a name the store accepts, as the latest
 * one that the next snapshot's name must come after. And the input as an
 * increment's log or a prune's journal, as the undo after a kill reads it
 * (last record first; a record cut at the end, or a damaged one, is left
 * out, never acted on) and as a push asks it what is below a directory. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/snapidx.h"
#include "fs/snapstore.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int dirfd_once(void)
{
	static int fd = -1;
	static char dir[] = "/tmp/ferry-fuzz-snapidx-XXXXXX";

	if (fd < 0 && mkdtemp(dir)) {
		fd = open(dir, O_RDONLY | O_DIRECTORY);
		mkdirat(fd, "2026-12-03T000000Z-fuzz", 0700);
	}
	return fd;
}

static int put(int dir, const char *name, const uint8_t *data, size_t size)
{
	int fd = openat(dir, name, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0)
		return -1;
	int ok = write(fd, data, size) == (ssize_t)size;
	close(fd);
	return ok ? 0 : -1;
}

static int count(void *ctx, const char *name, size_t len)
{
	(void)name;
	if (len == 0 || len > 4096)
		abort();   /* a child's name is never empty, never a whole path */
	++*(size_t *)ctx;
	return 0;
}

static void names(const uint8_t *data, size_t size)
{
	static const struct snapinfo three[3] = {
		{ .name = "2026-11-30T120000Z-a", .time = 1764504000 },
		{ .name = "2026-12-01T000000Z-b", .time = 1764547200 },
		{ .name = "2026-12-03T235959Z-a", .time = 1764806399 },
	};
	char sel[SNAP_NAME_MAX + 8], next[SNAP_NAME_MAX];
	size_t len = size < sizeof sel - 1 ? size : sizeof sel - 1;

	memcpy(sel, data, len);
	sel[len] = '\0';
	int i = snapstore_select(three, 3, sel);
	if (i >= 3 || (i < 0 && i != -ENOENT))
		abort();
	if (snapstore_name_ok(sel)) {
		snapstore_name(next, 1764806399, "c", sel);
		/* the next name always sorts after the last, up to the last
		 * second a four-digit year can name */
		if (!snapstore_name_ok(next) ||
		    (strcmp(next, sel) <= 0 && strncmp(sel, "9999-12-31T235959Z", 18)))
			abort();
	}
}

/* Each record the undo would act on: a decoded path, inside the log. */
static int undo_check(void *ctx, const struct snaprec *r, long long at)
{
	if (at < 0 || (size_t)at >= *(size_t *)ctx || !r->path || !strchr("AOMPRTIS", r->kind))
		abort();
	return 0;
}

static void logs(int dir, const uint8_t *data, size_t size)
{
	if (put(dir, "log", data, size) < 0)
		return;
	int fd = openat(dir, "log", O_RDONLY);
	if (fd < 0)
		return;
	snapidx_log_reverse(fd, "AOMP", undo_check, &size);
	snapidx_log_reverse(fd, "RTIS", undo_check, &size);
	snapidx_log_has_below(fd, "a");
	snapidx_log_has_below(fd, "");
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int dir = dirfd_once();
	struct snapidx x;
	struct snaprec r;
	struct snapinfo si;
	size_t kids = 0;

	names(data, size);
	if (dir >= 0)
		logs(dir, data, size);
	if (dir < 0 || put(dir, "idx.0", data, size) < 0)
		return 0;
	snapidx_decode((const char *)data, size, &r);
	if (snapidx_open(&x, dir) == 0) {
		/* every NUL-terminated piece of the input is looked up as a path */
		for (size_t off = 0; off < size;) {
			const uint8_t *z = memchr(data + off, 0, size - off);
			size_t len = z ? (size_t)(z - (data + off)) : size - off;
			char p[4097];
			if (len < sizeof p) {
				memcpy(p, data + off, len);
				p[len] = '\0';
				if (snapidx_find(&x, p, &r) == 1 && strcmp(r.path, p))
					abort();
				snapidx_children(&x, p, count, &kids);
			}
			off += len + 1;
		}
		snapidx_children(&x, "", count, &kids);
		snapidx_close(&x);
	}
	if (put(dir, "2026-12-03T000000Z-fuzz/info", data, size) == 0 &&
	    snapinfo_read(dir, "2026-12-03T000000Z-fuzz", &si) == 0 && si.hidden)
		abort();
	return 0;
}
