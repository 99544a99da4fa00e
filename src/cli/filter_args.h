/* SPDX-License-Identifier: MIT */
/* The client's filter rules, from the command line (docs/FILTERS.md). */
#ifndef FERRY_CLI_FILTER_ARGS_H
#define FERRY_CLI_FILTER_ARGS_H

#include "cli/opts.h"
#include "session/xfilter.h"

/* Builds x's rules, in order, into xf (made here; the caller frees it with
 * xfilter_free): --exclude-from, --include-from and merge files are read
 * now, relative to the current directory. 0, or an exit code after the one
 * line that names the rule or the file. */
int filter_args_build(const struct xfer_cli *x, struct xfilter *xf);

#endif
