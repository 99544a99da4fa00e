/* SPDX-License-Identifier: MIT */
#include "cli/view.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "session/summary.h"
#include "util/err.h"
#include "util/log.h"

/* An error line must never land on top of the progress line. */
static void clear_line(void *ctx)
{
	progress_clear(ctx);
}

static void log_line(struct view *v, const char *what, const char *path, const char *arrow,
		     const char *target);

/* an error or warning line of this run, in the log too (rsync's log holds them) */
static void tee_line(void *ctx, const char *line)
{
	log_line(ctx, "ferry:", line, NULL, NULL);
}

void view_begin(struct view *v, const struct xfer_cli *x)
{
	memset(v, 0, sizeof *v);
	v->x = x;
	if (x->log_file && !(v->log = fopen(x->log_file, "ae")))
		die_msg("--log-file %s: %s (the transfer goes on without it)", x->log_file,
			strerror(errno));
	if (v->log)
		log_set_tee(tee_line, v);
}

int view_open(struct view *v, char dir)
{
	const struct xfer_cli *x = v->x;

	v->dir = dir;
	v->live = !x->co.quiet && (x->progress || isatty(STDOUT_FILENO));
	progress_init(&v->pg, stdout, v->live, x->progress_mode, x->human);
	log_set_before(clear_line, &v->pg);
	return 0;
}

void view_close(struct view *v)
{
	(void)v;
	log_set_before(NULL, NULL);
}

int view_end(struct view *v, int code)
{
	if (v->log && code != EXIT_OK) {
		char n[16];
		snprintf(n, sizeof n, "%d", code);
		log_line(v, "ferry: finished with exit code", n, NULL, NULL);
	}
	log_set_tee(NULL, NULL);
	if (v->log)
		fclose(v->log);
	v->log = NULL;
	return code;
}

/* rsync's -i: YXcstpoguax, e.g. ">f+++++++++" (new), ">f.st......" (size and
 * time changed), ".f...p....." (only the mode), "cd+++++++++", "cL+++++++++"
 * (a symlink made; "cLc.t......" one changed), "hf+++++++++" (a hard link),
 * "*deleting". A target says the entry is a symlink (kinds LINK, META). */
static const char *itemize(char out[16], char dir, int kind, unsigned bits, const char *path,
			   const char *target)
{
	const char *rest = "+++++++++";
	char y = dir, x = path[0] && path[strlen(path) - 1] == '/' ? 'd' : 'f';

	switch (kind) {
	case CHG_DELETE: return "*deleting  ";
	case CHG_ERROR: return "*failed    ";
	case CHG_RETRY: return "*retry     ";
	case CHG_MKDIR: y = 'c'; x = 'd'; break;
	case CHG_LINK: y = 'c'; x = 'L'; rest = bits ? NULL : rest; break;
	case CHG_META: y = '.'; x = target ? 'L' : x; rest = NULL; break;
	case CHG_UPDATE: rest = NULL; break;
	case CHG_HLINK: y = 'h'; break;
	case CHG_HLINK_UPD: y = 'h'; rest = NULL; break;
	default: break;
	}
	snprintf(out, 16, "%c%c%s", y, x, rest ? rest : ".........");
	if (!rest) {
		out[2] = (bits & CHGB_CSUM) ? 'c' : '.';
		out[3] = (bits & CHGB_SIZE) ? 's' : '.';
		out[4] = (bits & CHGB_TIME) ? 't' : '.';
		out[5] = (bits & CHGB_PERMS) ? 'p' : '.';
		out[6] = (bits & CHGB_OWNER) ? 'o' : '.';
		out[7] = (bits & CHGB_GROUP) ? 'g' : '.';
		out[9] = (bits & CHGB_ACL) ? 'a' : '.';
		out[10] = (bits & CHGB_XATTR) ? 'x' : '.';
	}
	return out;
}

static void log_line(struct view *v, const char *what, const char *path, const char *arrow,
		     const char *target)
{
	char when[32];
	time_t t = time(NULL);
	struct tm tm;

	strftime(when, sizeof when, "%Y/%m/%d %H:%M:%S", localtime_r(&t, &tm));
	fprintf(v->log, "%s [%d] %s%s%s%s%s\n", when, (int)getpid(), what, path ? " " : "",
		path ? path : "", arrow ? arrow : "", target ? target : "");
	fflush(v->log);
}

void view_change(void *ctx, int kind, unsigned bits, const char *path, const char *target)
{
	static const char *const tag[] = { "", "new", "update", "delete", "mkdir", "link",
					    "attrs", "FAILED", "retry", "", "hlink", "hlink" };
	struct view *v = ctx;
	const struct xfer_cli *x = v->x;
	char q[4 * MSG_MAX_PATH + 8], qt[4 * MSG_MAX_PATH + 8], item[16];
	/* the path is the peer's (a push's CHANGE) or built from its names */
	const char *shown = peer_quote(q, sizeof q, path);
	/* rsync's %L: " -> TARGET" for a symlink, " => FIRST" for a hard link */
	const char *arrow = kind == CHG_HLINK || kind == CHG_HLINK_UPD ? " => " : " -> ";
	const char *tshown = target ? peer_quote(qt, sizeof qt, target) : "";

	if (!target)
		arrow = "";
	if (kind == CHG_UNSAFE) {   /* rsync's words, with -v */
		if (v->log)
			log_line(v, "ignoring unsafe symlink", shown, arrow, tshown);
		if (!x->co.quiet && x->co.verbose) {
			progress_clear(&v->pg);
			if (target)
				printf("ignoring unsafe symlink \"%s\" -> \"%s\"\n", shown, tshown);
			else
				printf("ignoring unsafe symlink \"%s\"\n", shown);
			fflush(stdout);
		}
		return;
	}
	/* a deletion, failure or retry is a fixed word, not the buffer */
	const char *it = itemize(item, v->dir, kind, bits, path, target);
	/* rsync's -i names a directory it makes "dir/", as every other one (the
	 * slash inside the quotes of a name that needs them) */
	char dp[MSG_MAX_PATH + 2], dq[sizeof q];
	size_t n = strlen(path);
	const char *ishown = kind == CHG_MKDIR && n && path[n - 1] != '/' &&
			     snprintf(dp, sizeof dp, "%s/", path) < (int)sizeof dp ?
			     peer_quote(dq, sizeof dq, dp) : shown;
	if (v->log)
		log_line(v, it, ishown, arrow, tshown);
	if (x->co.quiet || (!x->co.verbose && !x->itemize && kind != CHG_ERROR))
		return;
	progress_clear(&v->pg);
	if (x->itemize)
		printf("%s %s%s%s\n", it, ishown, arrow, tshown);
	else
		printf("%-7s %s%s%s\n", kind > 0 && kind <= CHG_HLINK_UPD && kind != CHG_UNSAFE ?
		       tag[kind] : "?", shown, arrow, tshown);
	fflush(stdout);
}

/* A file-system error of this side (a pull's destination, a push's source):
 * the peer's words come as -ECONNABORTED, the link's as socket errors. */
static int local_error(int rc)
{
	switch (-rc) {
	case ENOTDIR: case EISDIR: case ENOENT: case EACCES: case EPERM: case EEXIST:
	case ENOSPC: case EROFS: case EDQUOT: case ENAMETOOLONG: case ELOOP: case EXDEV:
		return 1;
	default:
		return 0;
	}
}

static int exit_of(int rc, uint16_t peer_code)
{
	if (rc == -ETIMEDOUT)
		return EXIT_TIMEOUT;
	if (rc == -ECONNABORTED)   /* the peer stopped, and said why */
		return peer_code == REF_IO ? EXIT_LOCAL : peer_code == REF_PROTOCOL ? EXIT_PROTOCOL :
		       EXIT_SOCKET;
	return rc == -EBADMSG ? EXIT_STREAM : EXIT_SOCKET;
}

int view_finish(struct view *v, int rc, const struct xfer_stats *st, const char *verb,
		const char *where, const struct channel *ch, uint16_t peer_code)
{
	const struct xfer_cli *x = v->x;
	/* Both messages may be the peer's words: an ERROR's reason, RESULT's text. */
	char q[4 * sizeof st->first_error + 8];
	struct summary s = { .verb = verb, .st = st, .secs = progress_elapsed(&v->pg),
			     .human = x->human, .dry = !!(x->flags & REQ_DRY_RUN) };

	if (rc < 0) {
		int here = local_error(rc);
		progress_clear(&v->pg);
		if (here)   /* this side's disk, not the server: no host in front */
			die_msg("%s", peer_quote(q, sizeof q, err_msg()));
		else
			die_msg("%s: %s", where, peer_quote(q, sizeof q, err_msg()));
		return here ? EXIT_LOCAL : exit_of(rc, peer_code);
	}
	if (ch)
		chan_get_stats(ch, &s.wire);
	if (!x->co.quiet && (v->live || x->co.verbose || x->itemize || x->stats)) {
		progress_end(&v->pg);
		if (x->stats)
			summary_stats(stdout, &s);
		summary_line(stdout, &s);
	} else {
		progress_clear(&v->pg);
	}
	if (v->log) {
		char line[512];
		FILE *m = fmemopen(line, sizeof line, "w");
		if (m) {
			summary_line(m, &s);
			fclose(m);
			line[strcspn(line, "\n")] = '\0';
			log_line(v, line, NULL, NULL, NULL);
		}
	}
	fflush(stdout);
	if (st->del_skipped)   /* rsync's words */
		die_msg("Deletions stopped due to --max-delete limit (%" PRIu64 " skipped)",
			 st->del_skipped);
	if (st->errors && st->errors == st->vanished) {   /* as rsync's 24 */
		die_msg("%u file(s) vanished before they were sent; first: %s", st->errors,
			peer_quote(q, sizeof q, st->first_error));
		return EXIT_VANISHED;
	}
	if (st->errors) {
		die_msg("%u file(s) failed; first: %s", st->errors,
			peer_quote(q, sizeof q, st->first_error));
		return EXIT_PARTIAL;
	}
	return st->del_skipped ? EXIT_DEL_LIMIT : EXIT_OK;
}
