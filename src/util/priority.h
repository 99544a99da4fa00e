/* SPDX-License-Identifier: MIT */
/* Background work on the box (the stale sweep, a prune, verify) runs at the
 * lowest CPU and I/O priority, so that it never slows a session down. */
#ifndef FERRY_UTIL_PRIORITY_H
#define FERRY_UTIL_PRIORITY_H

/* nice 19 and the idle I/O class for this process; `who` names it in the
 * debug line said when the kernel refuses. */
void lowest_priority(const char *who);

#endif
