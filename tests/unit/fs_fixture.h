/* SPDX-License-Identifier: MIT */
/* A throwaway directory for the fs tests: TOP/dest (where the code under test
 * works, O_PATH) and TOP/outside (which must stay untouched), removed after. */
#ifndef FERRY_TESTS_FS_FIXTURE_H
#define FERRY_TESTS_FS_FIXTURE_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs/meta.h"

struct fx {
	char top[64];
	int dfd;   /* top/dest */
	int odfd;  /* top/outside */
};

static inline int fx_setup(void **state, const char *name)
{
	struct fx *f = calloc(1, sizeof *f);
	int tfd;

	if (!f)
		return -1;
	snprintf(f->top, sizeof f->top, "/tmp/ferry-%s-XXXXXX", name);
	if (!mkdtemp(f->top))
		return -1;
	tfd = open(f->top, O_PATH | O_DIRECTORY);
	if (tfd < 0 || mkdirat(tfd, "dest", 0755) || mkdirat(tfd, "outside", 0755))
		return -1;
	f->dfd = openat(tfd, "dest", O_PATH | O_DIRECTORY);
	f->odfd = openat(tfd, "outside", O_RDONLY | O_DIRECTORY);
	close(tfd);
	*state = f;
	return f->dfd < 0 || f->odfd < 0 ? -1 : 0;
}

static inline int fx_teardown(void **state)
{
	struct fx *f = *state;
	int fd = open("/tmp", O_PATH | O_DIRECTORY);

	close(f->dfd);
	close(f->odfd);
	fs_remove_tree(fd, f->top + strlen("/tmp/"));
	close(fd);
	free(f);
	return 0;
}

#endif
