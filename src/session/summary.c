/* SPDX-License-Identifier: MIT */
#include "session/summary.h"

#include <inttypes.h>

#include "session/progress.h"

void summary_line(FILE *out, const struct summary *s)
{
	const struct xfer_stats *st = s->st;
	char size[24], extra[96] = "";
	int n = 0;

	if (st->files_kept)
		n += snprintf(extra + n, sizeof extra - (size_t)n, ", %" PRIu64 " kept", st->files_kept);
	if (st->errors)
		snprintf(extra + n, sizeof extra - (size_t)n, ", %u failed", st->errors);
	fprintf(out, "%s %" PRIu64 " file%s (%" PRIu64 " up to date%s), %s in %.2f s, %.1f MB/s",
		s->verb, st->files_sent, st->files_sent == 1 ? "" : "s", st->files_skipped, extra,
		progress_size(size, sizeof size, st->bytes_committed, s->human), s->secs,
		s->secs > 0 ? (double)st->bytes_committed / 1e6 / s->secs : 0.0);
	if (st->bytes_matched) {   /* a delta: what moved, what the basis gave */
		char lit[24], match[24];
		fprintf(out, "; delta: %s literal, %s matched",
			progress_size(lit, sizeof lit, st->bytes_data, s->human),
			progress_size(match, sizeof match, st->bytes_matched, s->human));
	}
	if (st->bytes_zraw) {   /* -z: what went compressed, and to how much */
		char raw[24], z[24];
		fprintf(out, "; compressed %s to %s (ratio %.2f)",
			progress_size(raw, sizeof raw, st->bytes_zraw, s->human),
			progress_size(z, sizeof z, st->bytes_zwire, s->human),
			st->bytes_zwire ? (double)st->bytes_zraw / (double)st->bytes_zwire : 0.0);
	}
	if (st->bytes_matched || st->bytes_zraw) {
		/* rsync's speedup: the files' size over every byte on the wire, both
		 * ways (the channel counts them after compression and framing) */
		uint64_t wire = s->wire.bytes_in + s->wire.bytes_out;
		fprintf(out, ", speedup %.1f", wire ? (double)st->bytes_committed / (double)wire : 0.0);
	}
	fprintf(out, "%s\n", s->dry ? " (DRY RUN)" : "");
}

static void stat_bytes(FILE *out, const char *what, uint64_t v, int human)
{
	char b[24];
	if (human)
		fprintf(out, "%s: %s\n", what, progress_size(b, sizeof b, v, human));
	else
		fprintf(out, "%s: %" PRIu64 " bytes\n", what, v);
}

void summary_stats(FILE *out, const struct summary *s)
{
	const struct xfer_stats *st = s->st;

	fprintf(out, "\nNumber of files: %" PRIu64 " (reg: %" PRIu64 ", dir: %" PRIu64
		", link: %" PRIu64 ")\n", st->files_seen + st->dirs + st->links, st->files_seen,
		st->dirs, st->links);
	fprintf(out, "Number of regular files transferred: %" PRIu64 "\n", st->files_sent);
	fprintf(out, "Number of files up to date: %" PRIu64 "\n", st->files_skipped);
	fprintf(out, "Number of files kept (-u, --existing, --ignore-existing, --max-size, "
		"--min-size): %" PRIu64 "\n",
		st->files_kept);
	fprintf(out, "Number of deleted files: %" PRIu64 "\n", st->deleted);
	fprintf(out, "Number of failures: %u\n", st->errors);
	stat_bytes(out, "Total file size", st->bytes_total, s->human);
	stat_bytes(out, "Total transferred file size", st->bytes_committed, s->human);
	stat_bytes(out, "Literal data", st->bytes_data, s->human);
	stat_bytes(out, "Matched data", st->bytes_matched, s->human);
	stat_bytes(out, "Compressed data (before)", st->bytes_zraw, s->human);
	stat_bytes(out, "Compressed data (after)", st->bytes_zwire, s->human);
	stat_bytes(out, "Total bytes sent", s->wire.bytes_out, s->human);
	stat_bytes(out, "Total bytes received", s->wire.bytes_in, s->human);
	fprintf(out, "\n");
}
