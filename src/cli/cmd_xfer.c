/* SPDX-License-Identifier: MIT */
/* ferry push / pull / ls: option parsing, local sources and destinations,
 * and what the user sees (changes, progress, summary, exit code). */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "session/progress.h"
#include "session/summary.h"
#include "session/receiver.h"
#include "session/sender.h"
#include "util/config.h"
#include "util/err.h"
#include "util/log.h"

struct xfer_cli {
	struct client_opts co;
	uint32_t flags;
	int progress;
	int fsync;
};

enum { OPT_KNOWN = 256, OPT_ACCEPT, OPT_DELETE, OPT_BWLIMIT, OPT_PROT, OPT_CIPHER,
       OPT_FSYNC, OPT_TIMEOUT, OPT_NO_VERIFY };

static const struct option long_opts[] = {
	{ "identity", required_argument, NULL, 'i' },
	{ "known-hosts", required_argument, NULL, OPT_KNOWN },
	{ "accept-new", no_argument, NULL, OPT_ACCEPT },
	{ "delete", no_argument, NULL, OPT_DELETE },
	{ "dry-run", no_argument, NULL, 'n' },
	{ "checksum", no_argument, NULL, 'c' },
	{ "update", no_argument, NULL, 'u' },
	{ "progress", no_argument, NULL, 'P' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "archive", no_argument, NULL, 'a' },
	{ "recursive", no_argument, NULL, 'r' },
	{ "bwlimit", required_argument, NULL, OPT_BWLIMIT },
	{ "protection", required_argument, NULL, OPT_PROT },
	{ "cipher", required_argument, NULL, OPT_CIPHER },
	{ "fsync", no_argument, NULL, OPT_FSYNC },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "no-verify", no_argument, NULL, OPT_NO_VERIFY },
	{ NULL, 0, NULL, 0 },
};

static int parse_cipher(const char *s, unsigned *mask)
{
	if (!strcasecmp(s, "chachapoly") || !strcasecmp(s, "chacha20-poly1305"))
		*mask = 1u << CIPHER_CHACHAPOLY;
	else if (!strcasecmp(s, "aesgcm") || !strcasecmp(s, "aes-256-gcm"))
		*mask = 1u << CIPHER_AESGCM;
	else if (!strcasecmp(s, "auto"))
		*mask = 0;
	else
		return -EINVAL;
	return 0;
}

/* Parses the options; returns the index of the first operand, or -1. */
static int parse_opts(int argc, char **argv, struct xfer_cli *x)
{
	int ch, p;

	memset(x, 0, sizeof *x);
	x->co.protection = PROT_ENCRYPT;
	x->co.timeout_ms = 30000;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "i:ncuPvqar", long_opts, NULL)) != -1) {
		switch (ch) {
		case 'i': x->co.identity = optarg; break;
		case OPT_KNOWN: x->co.known_hosts = optarg; break;
		case OPT_ACCEPT: x->co.accept_new = 1; break;
		case OPT_DELETE: x->flags |= REQ_DELETE; break;
		case 'n': x->flags |= REQ_DRY_RUN; break;
		case 'c': x->flags |= REQ_CHECKSUM; break;
		case 'u': x->flags |= REQ_UPDATE; break;
		case 'P': x->progress = 1; break;
		case 'v': x->co.verbose++; break;
		case 'q': x->co.quiet = 1; break;
		case 'a': case 'r': break;   /* rsync habits: always on */
		case OPT_FSYNC: x->flags |= REQ_FSYNC; break;
		case OPT_NO_VERIFY: x->flags |= REQ_NO_VERIFY; break;
		case OPT_BWLIMIT:
			if (parse_rate(optarg, &x->co.bwlimit) < 0)
				return die_msg("--bwlimit %s: %s", optarg, err_msg()), -1;
			break;
		case OPT_PROT:
			if (parse_protection(optarg, &p) < 0)
				return die_msg("--protection %s: use encrypt, integrity or none", optarg), -1;
			x->co.protection = p;
			break;
		case OPT_CIPHER:
			if (parse_cipher(optarg, &x->co.cipher_mask) < 0)
				return die_msg("--cipher %s: use aesgcm, chachapoly or auto", optarg), -1;
			break;
		case OPT_TIMEOUT:
			x->co.timeout_ms = atoi(optarg) * 1000;
			if (x->co.timeout_ms <= 0)
				return die_msg("--timeout %s: seconds, more than 0", optarg), -1;
			break;
		default:
			return -1;
		}
	}
	if ((x->flags & REQ_NO_VERIFY) && x->co.protection != PROT_NONE)
		return die_msg("--no-verify goes with --protection none (encrypt and integrity "
			       "always verify every record)"), -1;
	log_init("ferry", x->co.quiet ? LOG_ERR : x->co.verbose > 1 ? LOG_DEBUG : LOG_WARN, 0);
	if (x->flags & (REQ_DRY_RUN))
		x->co.verbose = x->co.verbose ? x->co.verbose : 1;
	if (x->co.verbose)
		x->flags |= REQ_CHANGES;
	if (x->progress && !x->co.quiet)
		x->flags |= REQ_TOTALS;
	return optind;
}

/* --- what the user sees ----------------------------------------------------- */

/* In client.c (declared here until client.h may carry it): a peer string as
 * it is when clean, else quoted with every control byte escaped. */

struct view {
	struct progress pg;
	int verbose, quiet, live;
};

static void on_change(void *ctx, int kind, const char *path)
{
	static const char *const tag[] = { "", "new", "update", "delete", "mkdir", "link",
					    "attrs", "FAILED" };
	struct view *v = ctx;
	char q[4 * MSG_MAX_PATH + 8];

	if (!v->verbose && kind != CHG_ERROR)
		return;
	if (v->quiet)
		return;
	progress_clear(&v->pg);
	/* the path is the peer's (a push's CHANGE) or built from its names */
	printf("%-7s %s\n", kind > 0 && kind <= CHG_ERROR ? tag[kind] : "?",
	       peer_quote(q, sizeof q, path));
	fflush(stdout);
}

static void view_init(struct view *v, const struct xfer_cli *x)
{
	memset(v, 0, sizeof *v);
	v->verbose = x->co.verbose;
	v->quiet = x->co.quiet;
	v->live = !x->co.quiet && (x->progress || isatty(STDOUT_FILENO));
	progress_init(&v->pg, stdout, v->live, 0, 0);
}

static int finish(struct view *v, const struct xfer_cli *x, int rc, const struct xfer_stats *st,
		  const char *verb, const char *where)
{
	/* Both messages may be the peer's words: an ERROR's reason, RESULT's text. */
	char q[4 * sizeof st->first_error + 8];

	if (rc < 0) {
		progress_clear(&v->pg);
		die_msg("%s: %s", where, peer_quote(q, sizeof q, err_msg()));
		if (rc == -ETIMEDOUT)
			return EXIT_TIMEOUT;
		return rc == -EBADMSG ? EXIT_STREAM : EXIT_SOCKET;
	}
	if (!x->co.quiet && (v->live || x->co.verbose) && !(x->flags & REQ_DRY_RUN))
	{
		progress_end(&v->pg);
		summary_line(stdout, &(struct summary){ .verb = verb, .st = st,
			     .secs = progress_elapsed(&v->pg) });
	} else
		progress_clear(&v->pg);
	if (st->errors) {
		die_msg("%u file(s) failed; first: %s", st->errors,
			peer_quote(q, sizeof q, st->first_error));
		return EXIT_PARTIAL;
	}
	return EXIT_OK;
}

static void request_init(struct m_request *rq, int op, const struct xfer_cli *x,
			 const struct remote *r)
{
	memset(rq, 0, sizeof *rq);
	rq->op = (uint8_t)op;
	rq->protection = (uint8_t)x->co.protection;
	rq->flags = x->flags | (r->slash ? REQ_SLASH : 0);
	snprintf(rq->module, sizeof rq->module, "%s", r->module);
	snprintf(rq->path, sizeof rq->path, "%s", r->path);
}

/* --- push ------------------------------------------------------------------- */

/* "dir/" sends the contents (rsync's rule), "dir" the directory itself. */
static int source_open(const char *arg, struct source *s, struct jail *j)
{
	char buf[4097], dir[4097];
	struct stat st;
	size_t n = strlen(arg);

	if (n >= sizeof buf)
		return err_set(-ENAMETOOLONG, "%s: path too long", arg);
	if (lstat(arg, &st) < 0)
		return err_sys(-errno, "%s", arg);
	snprintf(buf, sizeof buf, "%s", arg);
	int contents = n > 1 && arg[n - 1] == '/';
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	snprintf(dir, sizeof dir, "%s", buf);
	const char *base = basename(buf);
	if (!strcmp(buf, "/") || !strcmp(base, ".") || !strcmp(base, ".."))
		contents = 1;
	if (contents && !S_ISDIR(st.st_mode) && stat(arg, &st) == 0 && !S_ISDIR(st.st_mode))
		return err_set(-ENOTDIR, "%s: not a directory", arg);
	s->jail = j;
	s->base[0] = '\0';
	if (contents) {
		s->top[0] = '\0';
		return jail_open(j, dir);
	}
	snprintf(s->top, sizeof s->top, "%s", base);
	return jail_open(j, dirname(dir));
}

int cmd_push(int argc, char **argv)
{
	struct xfer_cli x;
	struct remote r;
	struct m_request rq;
	struct m_accept acc;
	struct conn c;
	struct view v;
	struct xfer_stats st = { 0 };
	int first = parse_opts(argc, argv, &x);

	if (first < 0)
		return EXIT_USAGE;
	int nsrc = argc - first - 1;
	if (nsrc < 1)
		return die_msg("usage: ferry push [OPTIONS] SRC... HOST:MODULE[/PATH]"), EXIT_USAGE;
	const char *dest = argv[argc - 1];
	if (!remote_is(dest) || remote_parse(dest, FERRY_DEFAULT_PORT, &r) < 0)
		return die_msg("%s", remote_is(dest) ? err_msg() :
			       "push: the destination must be remote (HOST:MODULE[/PATH])"), EXIT_USAGE;
	struct source *srcs = calloc((size_t)nsrc, sizeof *srcs);
	struct jail *jails = calloc((size_t)nsrc, sizeof *jails);
	int rc = srcs && jails ? 0 : (die_msg("out of memory"), EXIT_LOCAL);
	for (int i = 0; i < nsrc && rc == 0; i++) {
		jails[i].root_fd = -1;
		if (remote_is(argv[first + i]))
			rc = (die_msg("push: %s: sources must be local", argv[first + i]), EXIT_USAGE);
		else if (source_open(argv[first + i], &srcs[i], &jails[i]) < 0)
			rc = (die_msg("%s", err_msg()), EXIT_LOCAL);
	}
	if (rc == 0) {
		request_init(&rq, OP_PUSH, &x, &r);
		rc = client_open(&r, &x.co, &rq, &c, &acc);
	}
	if (rc == 0) {
		struct xfer_opts o = { .flags = x.flags };
		view_init(&v, &x);
		struct xfer_hooks h = { .change = on_change, .ctx = &v, .progress = &v.pg };
		int s = sender_run(&c, srcs, (size_t)nsrc, &o, &h, &st);
		rc = finish(&v, &x, s, &st, "sent", r.display);
		chan_free(c.ch);
	}
	for (int i = 0; jails && i < nsrc; i++)
		if (jails[i].root_fd >= 0)
			jail_close(&jails[i]);
	free(jails);
	free(srcs);
	return rc;
}

/* --- pull ------------------------------------------------------------------- */

/* Ctrl-C during a pull: the file being written is a temporary; remove it. */
static void on_stop(int sig)
{
	(void)sig;
	afile_signal_cleanup();
	_exit(EXIT_SIGNAL);
}

/* The local destination: an existing directory is the root; otherwise its
 * parent must exist and the last component is created (or, for a single
 * file, becomes the file's name). */
static int dest_open(const char *arg, struct jail *j, char *root, size_t cap)
{
	char buf[4097];
	struct stat st;

	if (strlen(arg) >= sizeof buf)
		return err_set(-ENAMETOOLONG, "%s: path too long", arg);
	if (stat(arg, &st) == 0 && S_ISDIR(st.st_mode)) {
		root[0] = '\0';
		return jail_open(j, arg);
	}
	char parent[sizeof buf];
	snprintf(buf, sizeof buf, "%s", arg);
	size_t n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	memcpy(parent, buf, n + 1);   /* basename() and dirname() may write into their argument */
	snprintf(root, cap, "%s", basename(buf));
	return jail_open(j, dirname(parent));
}

int cmd_pull(int argc, char **argv)
{
	struct xfer_cli x;
	struct remote r;
	struct m_request rq;
	struct m_accept acc;
	struct conn c;
	struct view v;
	struct jail j = { .root_fd = -1 };
	struct xfer_stats st = { 0 };
	char root[4097];
	int first = parse_opts(argc, argv, &x);

	if (first < 0)
		return EXIT_USAGE;
	if (argc - first != 2)
		return die_msg("usage: ferry pull [OPTIONS] HOST:MODULE[/PATH] DEST"), EXIT_USAGE;
	const char *src = argv[first], *dest = argv[first + 1];
	if (!remote_is(src) || remote_parse(src, FERRY_DEFAULT_PORT, &r) < 0)
		return die_msg("%s", remote_is(src) ? err_msg() :
			       "pull: the source must be remote (HOST:MODULE[/PATH])"), EXIT_USAGE;
	if (remote_is(dest))
		return die_msg("pull: %s: the destination must be local", dest), EXIT_USAGE;
	if (dest_open(dest, &j, root, sizeof root) < 0)
		return die_msg("%s", err_msg()), EXIT_LOCAL;
	request_init(&rq, OP_PULL, &x, &r);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGHUP, on_stop);
	int rc = client_open(&r, &x.co, &rq, &c, &acc);
	if (rc == 0) {
		size_t n = strlen(dest);
		struct xfer_opts o = { .flags = (x.flags & ~REQ_SLASH) |
						(n && dest[n - 1] == '/' ? REQ_SLASH : 0) };
		writer_opts_default(&o.writer);
		o.writer.fsync_each = !!(x.flags & REQ_FSYNC);
		view_init(&v, &x);
		struct xfer_hooks h = { .change = on_change, .ctx = &v, .progress = &v.pg };
		int s = receiver_run(&c, &j, root, &o, &h, &st);
		rc = finish(&v, &x, s, &st, "received", r.display);
		chan_free(c.ch);
	}
	jail_close(&j);
	return rc;
}

/* --- ls ----------------------------------------------------------------------- */

static void mode_string(int type, uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	out[0] = type == ENT_DIR ? 'd' : type == ENT_LNK ? 'l' : '-';
	for (int i = 0; i < 9; i++)
		out[i + 1] = (mode & (0400u >> i)) ? rwx[i] : '-';
	out[10] = '\0';
}

static void on_entry(void *ctx, int type, uint32_t mode, uint64_t size, int64_t mtime,
		     const char *name, const char *target)
{
	char m[11], when[32], qn[4 * MSG_MAX_PATH + 8], qt[4 * MSG_MAX_PATH + 8];
	time_t t = (time_t)mtime;
	struct tm tm;

	(void)ctx;
	mode_string(type, mode, m);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	/* name and target are the server's bytes */
	printf("%s %15llu %s %s%s%s\n", m, (unsigned long long)size, when,
	       peer_quote(qn, sizeof qn, name), type == ENT_LNK ? " -> " : "",
	       type == ENT_LNK ? peer_quote(qt, sizeof qt, target) : "");
}

int cmd_ls(int argc, char **argv)
{
	struct xfer_cli x;
	struct remote r;
	struct m_request rq;
	struct m_accept acc;
	struct conn c;
	int first = parse_opts(argc, argv, &x);

	if (first < 0)
		return EXIT_USAGE;
	if (argc - first != 1)
		return die_msg("usage: ferry ls [OPTIONS] HOST:MODULE[/PATH]"), EXIT_USAGE;
	if (remote_parse(argv[first], FERRY_DEFAULT_PORT, &r) < 0)
		return die_msg("%s", err_msg()), EXIT_USAGE;
	/* ls shows a directory's contents, as `ls dir` does. */
	r.slash = 1;
	request_init(&rq, OP_LIST, &x, &r);
	rq.flags = REQ_SLASH | REQ_NO_RECURSE;
	int rc = client_open(&r, &x.co, &rq, &c, &acc);
	if (rc)
		return rc;
	struct xfer_hooks h = { .entry = on_entry };
	rc = receiver_list(&c, &h);
	fflush(stdout);
	chan_free(c.ch);
	if (rc < 0)
		return die_msg("%s: %s", r.display, err_msg()), rc == -EBADMSG ? EXIT_STREAM : EXIT_SOCKET;
	return EXIT_OK;
}
