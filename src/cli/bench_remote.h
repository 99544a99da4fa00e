/* SPDX-License-Identifier: MIT */
/* ferry bench HOST:MODULE, the client's side: sessions with the daemon at
 * each protection level, the steps of PROTOCOL.md section 9, this machine's
 * own disk, and the verdict (bench/verdict.c). */
#ifndef FERRY_CLI_BENCH_REMOTE_H
#define FERRY_CLI_BENCH_REMOTE_H

#include <stdint.h>

#include "bench/bench.h"
#include "cli/client.h"
#include "cli/remote.h"

struct bench_remote_opts {
	struct client_opts co;     /* co.protection: the level of the disk and end-to-end steps */
	uint64_t size;             /* the end-to-end file and the server's disk test */
	double seconds;            /* what each network step aims to take */
	const char *local;         /* the directory of this side's test files */
	int progress;              /* a progress line on stderr */
	volatile sig_atomic_t *stop;
};

#define BENCH_REMOTE_SIZE (64ull << 20)
#define BENCH_REMOTE_SECONDS 3.0

/* Fills r (kind BENCH_REMOTE); returns 0 or an exit code, the failure
 * printed. Removes its local files on every return. */
int bench_remote_run(const struct remote *rm, const struct bench_remote_opts *o,
		     struct bench_report *r);

#endif
