/* SPDX-License-Identifier: MIT */
/* The receiver's side of resume (docs/DESIGN.md, "Resume"): a file can be
 * built from the old version and from the partial an earlier, interrupted
 * transfer of the same source version left (fs/partial.h); the new data is
 * written under the partial name, so that an interruption keeps it. */
#ifndef FERRY_SESSION_RESUME_H
#define FERRY_SESSION_RESUME_H

#include <stdint.h>
#include <sys/types.h>

#include "fs/partial.h"
#include "session/basis.h"

/* A partial smaller than this is not kept (a file this small goes whole). */
#define RESUME_MIN ((off_t)64 << 10)

/* Opens the bases of dirfd/leaf into b: the old version (a regular file)
 * when `old`, the partial made for source version id when `part`. Returns
 * how many it opened; a partial of another version is removed and said so
 * (with -v). */
int resume_open(struct basis *b, int dirfd, const char *leaf, int old, int part,
		const struct fs_part_id *id);

/* While a file arrives, the partial it is built from (open in b, and
 * locked) gives up its name to the new partial. */
void resume_begin(const struct basis *b, int dirfd, const char *leaf);
/* A partial of dirfd/leaf that ferry made and nobody is writing is removed:
 * once a file is committed without it (obsolete), and before a new partial
 * takes the name when it was no basis (one too small to resume from, or not
 * asked for): left there, it kept the name, the new data went to a random
 * temporary, and a receiver killed -9 left that behind, on a client for
 * good (the test_killpoints campaign found one). */
void resume_drop(int dirfd, const char *leaf);

#endif
