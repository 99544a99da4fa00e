/* SPDX-License-Identifier: MIT */
#include "util/priority.h"

#include <errno.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/log.h"

void lowest_priority(const char *who)
{
	if (setpriority(PRIO_PROCESS, 0, 19) < 0)
		log_debug("%s: nice: %s", who, strerror(errno));
#ifdef SYS_ioprio_set
	/* IOPRIO_WHO_PROCESS = 1; class idle (3) in the top bits. */
	if (syscall(SYS_ioprio_set, 1, 0, 3 << 13) < 0)
		log_debug("%s: ionice idle: %s", who, strerror(errno));
#endif
}
