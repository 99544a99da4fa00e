/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the spool --delete-delay keeps (fs/spool.h): the
 * input read back as a spool (a damaged one must end in -EBADMSG, never a
 * crash, a path longer than the limit or one with a NUL in it), and, split
 * at newlines into records (a kind byte, then the path), written and read
 * back: the same records, in the same order. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/spool.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct want {
	const uint8_t *data;
	size_t size, at;
	uint64_t seen;
};

static int dir_once(void)
{
	static int fd = -1;
	static char dir[] = "/tmp/ferry-fuzz-spool-XXXXXX";

	if (fd < 0 && mkdtemp(dir))
		fd = open(dir, O_RDONLY | O_DIRECTORY);
	return fd;
}

static int any(void *arg, uint8_t kind, const char *path)
{
	(void)arg;
	(void)kind;
	if (strlen(path) > SPOOL_MAX_PATH)
		abort();
	return 0;
}

/* the next record of the input: [at, end of line) */
static int next(struct want *w, uint8_t *kind, const uint8_t **p, size_t *len)
{
	if (w->at >= w->size)
		return 0;
	const uint8_t *s = w->data + w->at, *nl = memchr(s, '\n', w->size - w->at);
	size_t n = nl ? (size_t)(nl - s) : w->size - w->at;
	w->at += n + 1;
	*kind = n ? s[0] : 0;
	*p = n ? s + 1 : s;
	*len = n ? n - 1 : 0;
	return 1;
}

static int same(void *arg, uint8_t kind, const char *path)
{
	struct want *w = arg;
	const uint8_t *p;
	size_t len;
	uint8_t k;

	do {
		if (!next(w, &k, &p, &len))
			abort();   /* more records than were written */
	} while (memchr(p, '\0', len) || len > SPOOL_MAX_PATH);
	if (k != kind || strlen(path) != len || memcmp(p, path, len))
		abort();
	w->seen++;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spool s;
	int dir = dir_once();

	if (dir < 0 || spool_open(&s, dir, SPOOL_UNNAMED) < 0)
		return 0;
	/* as a spool: records that may say anything */
	if (fwrite(data, 1, size, s.f) == size) {
		s.n = size + 1;   /* more than it can hold: it must end, in -EBADMSG */
		if (spool_each(&s, any, NULL) != -EBADMSG)
			abort();
	}
	spool_close(&s);

	/* written record by record (what spool_add refuses is left out) and
	 * read back */
	struct want w = { .data = data, .size = size };
	char path[SPOOL_MAX_PATH + 1];
	const uint8_t *p;
	size_t len;
	uint8_t k;
	uint64_t added = 0;
	if (spool_open(&s, dir, SPOOL_UNNAMED) < 0)
		return 0;
	while (next(&w, &k, &p, &len)) {
		if (memchr(p, '\0', len) || len > SPOOL_MAX_PATH)
			continue;
		memcpy(path, p, len);
		path[len] = '\0';
		if (spool_add(&s, k, path) < 0)
			abort();
		added++;
	}
	w.at = 0;
	if (spool_each(&s, same, &w) != 0 || w.seen != added)
		abort();
	spool_close(&s);
	return 0;
}
