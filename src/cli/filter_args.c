/* SPDX-License-Identifier: MIT */
#include "cli/filter_args.h"

#include <stdlib.h>

#include "cli/cli.h"
#include "util/err.h"
#include "util/log.h"

static const char *flag_of(enum filter_arg_kind k)
{
	switch (k) {
	case FA_RULE: return "--filter";
	case FA_EXCLUDE: return "--exclude";
	case FA_INCLUDE: return "--include";
	case FA_EXCLUDE_FROM: return "--exclude-from";
	case FA_INCLUDE_FROM: return "--include-from";
	default: return "-F";
	}
}

static int add_one(struct filter_list *fl, const struct filter_arg *a)
{
	char *data;
	size_t len;
	int rc;

	switch (a->kind) {
	case FA_RULE: return filter_add(fl, FILTER_RULE, a->arg);
	case FA_EXCLUDE: return filter_add(fl, FILTER_EXCLUDE, a->arg);
	case FA_INCLUDE: return filter_add(fl, FILTER_INCLUDE, a->arg);
	case FA_F: return filter_add_F(fl);
	case FA_EXCLUDE_FROM:
	case FA_INCLUDE_FROM:
		if ((rc = xfilter_read_local(a->arg, &data, &len)) < 0)
			return rc;
		rc = filter_add_file(fl, a->kind == FA_EXCLUDE_FROM ? FILTER_EXCLUDE : FILTER_INCLUDE,
				     data, len, a->arg);
		free(data);
		return rc;
	}
	return 0;
}

int filter_args_build(const struct xfer_cli *x, struct xfilter *xf)
{
	if (xfilter_init(xf, 1, x->delete_excluded) < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	for (size_t i = 0; i < x->nfargs; i++) {
		if (add_one(xf->fl, &x->fargs[i]) < 0) {
			die_msg("%s: %s", flag_of(x->fargs[i].kind), err_msg());
			xfilter_free(xf);
			return EXIT_USAGE;
		}
	}
	return 0;
}
