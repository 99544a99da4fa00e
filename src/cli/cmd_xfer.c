/* SPDX-License-Identifier: MIT */
/* ferry push / pull / ls: local sources and destinations, the request, and
 * the transfer (options in opts.c, what the user sees in view.c). */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/client.h"
#include "cli/filter_args.h"
#include "cli/opts.h"
#include "cli/view.h"
#include "fs/dirlist.h"
#include "session/receiver.h"
#include "session/sender.h"
#include "session/zdata.h"
#include "util/config.h"
#include "util/err.h"
#include "util/pathset.h"
#include "util/readfile.h"
#include "util/log.h"

static void request_init(struct m_request *rq, int op, const struct xfer_cli *x,
			 const struct remote *r)
{
	memset(rq, 0, sizeof *rq);
	rq->op = (uint8_t)op;
	rq->protection = (uint8_t)x->co.protection;
	rq->flags = x->flags | (r->slash ? REQ_SLASH : 0) | (x->nfargs ? REQ_FILTER : 0);
	snprintf(rq->module, sizeof rq->module, "%s", r->module);
	snprintf(rq->path, sizeof rq->path, "%s", r->path);
	snprintf(rq->backup_dir, sizeof rq->backup_dir, "%s", x->backup_dir ? x->backup_dir : "");
	snprintf(rq->suffix, sizeof rq->suffix, "%s", x->suffix ? x->suffix : "");
	snprintf(rq->chmod, sizeof rq->chmod, "%s", x->chmod ? x->chmod : "");
	rq->max_delete = x->max_delete;
	/* a pull's receiver (this side) knows FILE_VANISHED, and keeps
	 * --safe-links, --modify-window and --delete-delay to itself */
	rq->flags2 = op == OP_PULL ? (x->flags2 & ~(REQ2_SAFE_LINKS | REQ2_MODIFY_WINDOW |
						    REQ2_DELETE_DELAY | REQ2_DELETE_AFTER)) |
				     REQ2_VANISHED : x->flags2;
	/* a push's receiver may mark -c's findings with -i's 'c' */
	if (op == OP_PUSH && (x->flags & REQ_CHECKSUM) && (x->flags & REQ_CHANGES))
		rq->flags2 |= REQ2_CHG_CSUM;
	/* ... and say a symlink's target and a hard link's first name */
	if (op == OP_PUSH && (x->flags & REQ_CHANGES))
		rq->flags2 |= REQ2_CHG_TARGET;
	rq->flags2 |= REQ2_NOOP;   /* conn_recv skips them */
	rq->max_size = x->max_size;
	rq->min_size = x->min_size;
	rq->modify_window = op == OP_PULL ? 0 : x->modify_window;
}

/* The remote operand, with --port applied. An exit code on failure. */
static int remote_of(const char *arg, const struct xfer_cli *x, const char *what,
		     struct remote *r)
{
	if (!remote_is(arg))
		return die_msg("%s", what), EXIT_USAGE;
	if (remote_parse(arg, x->port ? x->port : FERRY_DEFAULT_PORT, r) < 0)
		return die_msg("%s", err_msg()), EXIT_USAGE;
	return 0;
}

static volatile sig_atomic_t stop_resumes = 1;   /* --no-resume clears it */

/* Leaves at once from a signal handler (async-signal-safe calls only): a
 * pull's file being written is a temporary, removed here; what the receiver
 * keeps is a partial name, for the next run. One of the two lines, as
 * --no-resume says, then `code`. */
__attribute__((noreturn)) static void leave(const char *kept, size_t kept_len, const char *none,
					    size_t none_len, int code)
{
	afile_signal_cleanup();
	if (write(STDERR_FILENO, stop_resumes ? kept : none, stop_resumes ? kept_len : none_len) < 0) {
		/* nothing more to do: we are leaving */
	}
	_exit(code);
}

/* Ctrl-C or SIGTERM: exit 20 with one line, as rsync. */
static void on_stop(int sig)
{
	static const char kept[] = "\nferry: stopped by a signal (no file is left half-written "
				   "under its name; what arrived of a big file is kept, and the "
				   "next run resumes it)\n";
	static const char none[] = "\nferry: stopped by a signal (no file is left half-written "
				   "under its name; --no-resume: nothing partial is kept)\n";

	(void)sig;
	leave(kept, sizeof kept - 1, none, sizeof none - 1, EXIT_SIGNAL);
}

/* --stop-after or --stop-at reached: as a signal, with rsync's exit 30 and
 * its words. The box's end of a push keeps its partial the same way. */
static void on_deadline(int sig)
{
	static const char kept[] = "\nferry: stopping at requested limit (--stop-after, "
				   "--stop-at): no file is left half-written under its name; what "
				   "arrived of a big file is kept, and the next run resumes it\n";
	static const char none[] = "\nferry: stopping at requested limit (--stop-after, "
				   "--stop-at): no file is left half-written under its name "
				   "(--no-resume: nothing partial is kept)\n";

	(void)sig;
	leave(kept, sizeof kept - 1, none, sizeof none - 1, EXIT_TIMEOUT);
}

/* The signals that stop a transfer, and the clock that may. */
static void stops_arm(const struct xfer_cli *x)
{
	stop_resumes = !(x->flags & REQ_NO_RESUME);
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGHUP, on_stop);
	if (x->stop_at_ms > 0) {
		/* from the point fixed when the options were read: a list read
		 * from a pipe meanwhile counts too */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		long long left = x->stop_at_ms - ((long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
		struct itimerval it = { .it_value = { .tv_sec = left > 0 ? (time_t)(left / 1000) : 0,
						      .tv_usec = left > 0 ? (suseconds_t)(left % 1000) * 1000 :
									    1 } };
		if (!it.it_value.tv_sec && !it.it_value.tv_usec)
			it.it_value.tv_usec = 1;
		signal(SIGALRM, on_deadline);
		setitimer(ITIMER_REAL, &it, NULL);
	}
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

/* ssh's habit "-i KEY" now reads as rsync's -i and a source named KEY: say so. */
static int is_private_key(const char *path)
{
	static const char head[] = "FERRY PRIVATE KEY\n";
	char buf[sizeof head - 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
	ssize_t n = fd >= 0 ? read(fd, buf, sizeof buf) : -1;

	if (fd >= 0)
		close(fd);
	return n == (ssize_t)sizeof buf && !memcmp(buf, head, sizeof buf);
}

/* Source k (`arg`) would share the destination with one before it (the
 * first, `first`): a directory's contents ("dir/") beside other sources, or
 * two by one name. rsync merges them into one tree; ferry's sender walks
 * each source as a tree of its own, so it refuses them in one line rather
 * than send a tree whose --delete would undo the other's files. */
static int source_clash(const char *arg, const char *first, const struct source *srcs, int k)
{
	if (k > 0 && (!srcs[k].top[0] || !srcs[0].top[0]))
		return die_msg("push: %s: a directory's contents (a source ending in '/', or '.') go "
			       "alone: ferry cannot merge several sources into one directory as "
			       "rsync does; push them one at a time",
			       srcs[k].top[0] ? first : arg), -1;
	for (int j = 0; j < k; j++)
		if (!strcmp(srcs[j].top, srcs[k].top))
			return die_msg("push: %s: two sources are named \"%s\": ferry cannot merge them "
				       "into one directory as rsync does; push them one at a time",
				       arg, srcs[k].top), -1;
	return 0;
}

/* Opens every source. One that cannot be used is reported and left out, as
 * rsync does (the transfer still ends with 23); with --ignore-missing-args
 * one that does not exist is left out in silence. Returns how many are open,
 * or -1 after one line (source_clash; none is left open). */
static int sources_open(char **args, int n, const struct xfer_cli *x, struct source *srcs,
			struct jail *jails, struct xfer_stats *local)
{
	const char *first = NULL;   /* the first source that opened */
	int k = 0;

	for (int i = 0; i < n; i++) {
		jails[k].root_fd = -1;
		int rc = source_open(args[i], &srcs[k], &jails[k]);
		if (rc == 0 && !first)
			first = args[i];
		if (rc == 0 && source_clash(args[i], first, srcs, k) < 0) {
			for (int j = 0; j <= k; j++)
				jail_close(&jails[j]);
			return -1;
		}
		/* -L, -k, and --files-from's or -R's links to directories on the
		 * way: the PC's own */
		if (rc == 0)
			jails[k++].follow = x->follow != FOLLOW_NONE || x->files_from || x->relative;
		else if (!(x->ignore_missing && rc == -ENOENT))
			xfer_error(local, "%s", err_msg());
	}
	return k;
}

/* The largest --files-from list read: the PC holds it, sorted. */
#define FILES_FROM_MAX (256u << 20)

/* *src as "SRC/" (owned by the caller): the list's paths are below it. */
static int as_dir(char **src, struct pathset *ps)
{
	size_t n = strlen(*src);
	char *s = malloc(n + 2);
	if (!s) {
		pathset_free(ps);
		return die_msg("out of memory"), EXIT_LOCAL;
	}
	snprintf(s, n + 2, "%s%s", *src, n && (*src)[n - 1] == '/' ? "" : "/");
	*src = s;
	return 0;
}

/* --files-from: the list, read now ("-": standard input). Its paths are
 * relative to the one source, a directory, whose trailing slash does not
 * matter (as rsync): *src becomes "SRC/" (owned by the caller). 0, or an
 * exit code after one line. */
static int files_from_load(const struct xfer_cli *x, int nsrc, char **src, struct pathset *ps)
{
	char what[4200], *data;
	size_t len, n = strlen(*src);
	int fd, rc;

	if (nsrc != 1)
		return die_msg("push --files-from: give one source directory (the list's paths are "
			       "relative to it)"), EXIT_USAGE;
	if (!n)   /* not "/" (an unset $SRC), as rsync refuses it */
		return die_msg("push --files-from: the source directory is empty"), EXIT_USAGE;
	snprintf(what, sizeof what, "--files-from %s", x->files_from);
	/* blocking: a named FIFO's writer is waited for, as rsync waits */
	fd = !strcmp(x->files_from, "-") ? dup(STDIN_FILENO) :
					   open(x->files_from, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return die_msg("%s: %s", what, strerror(errno)), EXIT_USAGE;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		return die_msg("%s: is a directory", what), EXIT_USAGE;
	}
	rc = read_stream_fd(fd, FILES_FROM_MAX, &data, &len);
	close(fd);
	if (rc == 0 && len >= FILES_FROM_MAX) {
		free(data);
		rc = -EFBIG;
	}
	if (rc < 0)
		return die_msg("%s: %s", what, rc == -EFBIG ? "longer than 256 MiB" : strerror(-rc)),
		       EXIT_USAGE;
	rc = pathset_parse(ps, data, len, x->from0, what);
	free(data);
	if (rc < 0)
		return die_msg("%s", err_msg()), EXIT_USAGE;
	ps->recursive = x->explicit_r;   /* -a's -r does not count here, as in rsync */
	ps->origin = "listed in --files-from";
	return as_dir(src, ps);
}


/* One -R source: its base (what comes before rsync's "/./" anchor, or "/"
 * for an absolute path, or "."), and what of it is kept below the
 * destination, appended to *list with a NUL. 0, or an exit code after one
 * line. */
static int relative_one(const char *a, char **base, char **list, size_t *len)
{
	const char *anchor = strstr(a, "/./"), *rest = a;
	size_t blen = 0;

	if (anchor) {
		blen = (size_t)(anchor - a);
		rest = anchor + 3;
	} else if (a[0] == '/') {
		rest = a + 1;
	}
	*base = blen ? strndup(a, blen) : strdup(anchor || a[0] == '/' ? "/" : ".");
	size_t rl = strlen(rest);
	char *nl = *base ? realloc(*list, *len + rl + 4) : NULL;
	if (!nl)
		return die_msg("out of memory"), EXIT_LOCAL;
	*list = nl;
	for (size_t b = strlen(*base); b > 1 && (*base)[b - 1] == '/';)
		(*base)[--b] = '\0';   /* "src//./x" is "src" */
	/* what is kept: "/./" again inside is "/", and no ".." (as rsync);
	 * after "./", which the list drops, so that a name starting with '#'
	 * or ';' is no comment */
	char *o = nl + *len + 2;
	size_t k = 0;
	for (size_t i = 0; i < rl; i++) {
		if (rest[i] == '/' && rest[i + 1] == '.' && rest[i + 2] == '/') {
			i++;
			continue;
		}
		o[k++] = rest[i];
	}
	o[k] = '\0';
	for (char *c = o; *c; c = strchr(c, '/') ? strchr(c, '/') + 1 : c + strlen(c))
		if (c[0] == '.' && c[1] == '.' && (c[2] == '/' || !c[2]))
			return die_msg("push -R: %s: \"..\" in the path that is kept (put \"/./\" "
				       "after it: what follows is kept)", a), EXIT_USAGE;
	if (!k)   /* the base itself: "." */
		o[k++] = '.';
	o[k] = '\0';
	memcpy(nl + *len, "./", 2);
	*len += 2 + k + 1;
	return 0;
}

/* Two spellings of one directory ("src" and "./src"). */
static int same_dir(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && S_ISDIR(sa.st_mode) &&
	       sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* -R: each source's path is kept below the destination, from its "/./" on,
 * as in rsync. The sources share the part before it, ferry's one source
 * directory: they become a list of that directory's paths, read as
 * --files-from reads one but recursive (-R's directories come whole), and
 * *src becomes "BASE/" (owned by the caller). 0, or an exit code after one
 * line. */
static int relative_load(int nsrc, char **argv, char **src, struct pathset *ps)
{
	char *list = NULL, *base = NULL;
	size_t len = 0;
	int rc = 0;

	for (int i = 0; rc == 0 && i < nsrc; i++) {
		char *b = NULL;
		if (!argv[i][0])
			rc = (die_msg("push -R: a source is empty"), EXIT_USAGE);
		else
			rc = relative_one(argv[i], &b, &list, &len);
		if (rc == 0 && base && strcmp(base, b) && !same_dir(base, b))
			rc = (die_msg("push -R: the sources' bases differ (\"%s\" and \"%s\"): ferry "
				      "sends from one directory; give each the same part before "
				      "\"/./\"", base, b), EXIT_USAGE);
		if (!base) {
			base = b;
			b = NULL;
		}
		free(b);
	}
	if (rc == 0 && (rc = pathset_parse(ps, list, len, 1, "-R")) < 0)
		rc = (die_msg("push %s", err_msg()), EXIT_USAGE);
	free(list);
	if (rc == 0) {
		ps->recursive = 1;   /* ferry always recurses */
		*src = base;
		rc = as_dir(src, ps);
	}
	free(base);
	return rc;
}

int cmd_push(int argc, char **argv)
{
	struct xfer_cli x;
	struct remote r;
	struct m_request rq;
	struct m_accept acc;
	struct conn c = { 0 };
	struct view v;
	struct xfer_stats st = { 0 }, local = { 0 };
	struct pathset ps = { 0 };
	char *listed_src = NULL;   /* --files-from's "SRC/", owned */
	int first = xfer_opts_parse(argc, argv, &x);

	if (first < 0)
		return EXIT_USAGE;
	int nsrc = argc - first - 1;
	if (nsrc < 1)
		return die_msg("usage: ferry push [OPTIONS] SRC... HOST:MODULE[/PATH]"), EXIT_USAGE;
	view_begin(&v, &x);
	int rc = remote_of(argv[argc - 1], &x, "push: the destination must be remote "
			   "(HOST:MODULE[/PATH])", &r);
	for (int i = first; rc == 0 && i < argc - 1; i++) {
		if (remote_is(argv[i]))
			rc = (die_msg("push: %s: sources must be local", argv[i]), EXIT_USAGE);
		else if (is_private_key(argv[i]))
			rc = (die_msg("push: %s is a ferry private key: -i means --itemize-changes, as "
				      "in rsync; give a key with --identity FILE", argv[i]), EXIT_USAGE);
	}
	if (rc == 0 && x.files_from && nsrc >= 1) {   /* it implies -R, as in rsync */
		listed_src = argv[first];
		if ((rc = files_from_load(&x, nsrc, &listed_src, &ps)) != 0)
			listed_src = NULL;
	} else if (rc == 0 && x.relative) {
		if ((rc = relative_load(nsrc, argv + first, &listed_src, &ps)) != 0)
			listed_src = NULL;
		nsrc = 1;
	}
	if (rc)
		return view_end(&v, rc);
	struct source *srcs = calloc((size_t)nsrc, sizeof *srcs);
	struct jail *jails = calloc((size_t)nsrc, sizeof *jails);
	if (!srcs || !jails) {
		free(srcs);
		free(jails);
		free(listed_src);
		pathset_free(&ps);
		return die_msg("out of memory"), view_end(&v, EXIT_LOCAL);
	}
	struct xfilter xf = { 0 };
	if ((rc = filter_args_build(&x, &xf)) != 0) {
		free(jails);
		free(srcs);
		free(listed_src);
		pathset_free(&ps);
		return view_end(&v, rc);
	}
	x.co.filter = &xf;
	int nopen = sources_open(listed_src ? &listed_src : argv + first, nsrc, &x, srcs, jails,
				 &local);
	if (nopen < 0) {
		rc = EXIT_USAGE;
		nopen = 0;
	} else if (nopen == 0) {
		/* each source was named already, as it failed */
		rc = local.errors ? (die_msg("push: nothing to send"), EXIT_PARTIAL) : EXIT_OK;
	} else {
		request_init(&rq, OP_PUSH, &x, &r);
		stops_arm(&x);
		rc = client_open(&r, &x.co, &rq, &c, &acc);
	}
	if (nopen && rc == 0 && (rc = view_open(&v, '<')) == 0) {
		/* the PC rolls over its files against the box's signatures */
		struct xfer_opts o = { .flags = x.flags, .do_delta = 1, .follow = x.follow,
				       .files_from = listed_src ? &ps : NULL,
				       .ignore_missing = x.ignore_missing, .prune = x.prune,
				       .filter = x.nfargs ? &xf : NULL };
		struct xfer_hooks h = { .change = view_change, .ctx = &v, .progress = &v.pg };
		int s = sender_run(&c, srcs, (size_t)nopen, &o, &h, &st);
		xfer_merge(&st, &local);
		rc = view_finish(&v, s, &st, "sent", r.display, c.ch, c.peer_code);
		view_close(&v);
	}
	zdata_free(&c);
	if (c.ch)
		chan_free(c.ch);
	for (int i = 0; i < nopen; i++)
		jail_close(&jails[i]);
	xfilter_free(&xf);
	free(jails);
	free(srcs);
	free(listed_src);
	pathset_free(&ps);
	return view_end(&v, rc);
}

/* --- pull ------------------------------------------------------------------- */

/* --mkpath: every missing directory of `dir` (a copy is cut at each '/'),
 * as rsync makes them (0777 less the umask). */
static int make_path(const char *dir)
{
	char p[4097];
	int n = snprintf(p, sizeof p, "%s", dir);

	if (n < 0 || n >= (int)sizeof p)
		return err_set(-ENAMETOOLONG, "%s: path too long", dir);
	for (char *s = p + 1; ; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;
		*s = '\0';
		if (mkdir(p, 0777) < 0 && errno != EEXIST)
			return err_set(-errno, "--mkpath: mkdir %s: %s", p, strerror(errno));
		if (!c)
			return 0;
		*s = c;
	}
}

/* -n --mkpath: nothing is made; the jail is the deepest directory of `dir`
 * there is, and the root the rest of the way (the receiver's dry run reads
 * what it cannot open as "nothing there yet"). */
static int dest_open_dry(const char *dir, const char *leaf, struct jail *j, char *root,
			 size_t cap)
{
	char a[4097], name[4097];
	struct stat st;
	int none = 0;   /* no directory of `dir` is there: the jail is "." */

	snprintf(name, sizeof name, "%s", leaf);   /* leaf may be root itself */
	snprintf(a, sizeof a, "%s", dir);
	while (!(stat(a, &st) == 0 && S_ISDIR(st.st_mode))) {
		if (lstat(a, &st) == 0)   /* as the real run would find it */
			return err_set(-ENOTDIR, "--mkpath: %s is in the way: not a directory", a);
		char *s = strrchr(a, '/');
		if (!s) {
			snprintf(a, sizeof a, ".");
			none = 1;
			break;
		}
		s[s == a] = '\0';   /* "/x" goes to "/" */
	}
	const char *rest = dir + (none ? 0 : strlen(a));
	rest += strspn(rest, "/");
	if ((size_t)snprintf(root, cap, "%s%s%s", rest, *rest ? "/" : "", name) >= cap)
		return err_set(-ENAMETOOLONG, "%s: path too long", dir);
	return jail_open(j, a);
}

/* The local destination: an existing directory is the root; otherwise its
 * parent must exist (--mkpath makes it; -n --mkpath pretends) and the last
 * component is created (or, for a single file, becomes the file's name). */
static int dest_open(const char *arg, int mkpath, int dry, struct jail *j, char *root,
		     size_t cap)
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
	const char *dir = dirname(parent);
	if (mkpath && dry)
		return dest_open_dry(dir, root, j, root, cap);
	int rc = mkpath ? make_path(dir) : 0;
	if (rc < 0)
		return rc;
	rc = jail_open(j, dir);
	if (rc == -ENOENT || rc == -ENOTDIR)   /* as rsync: only the last part is made */
		return err_set(rc, "destination %s: %s %s (only the last part of a destination "
			       "is made; --mkpath makes them all)", arg, dir,
			       rc == -ENOENT ? "does not exist" : "is not a directory");
	return rc;
}

int cmd_pull(int argc, char **argv)
{
	struct xfer_cli x;
	struct remote r;
	struct m_request rq;
	struct m_accept acc;
	struct conn c = { 0 };
	struct view v;
	struct jail j = { .root_fd = -1 };
	struct xfer_stats st = { 0 };
	char root[4097];
	int first = xfer_opts_parse(argc, argv, &x);

	if (first < 0)
		return EXIT_USAGE;
	if (argc - first != 2)
		return die_msg("usage: ferry pull [OPTIONS] HOST:MODULE[/PATH] DEST"), EXIT_USAGE;
	const char *src = argv[first], *dest = argv[first + 1];
	view_begin(&v, &x);
	int rc = remote_of(src, &x, "pull: the source must be remote (HOST:MODULE[/PATH])", &r);
	if (rc)
		return view_end(&v, rc);
	if (remote_is(dest))
		return die_msg("pull: %s: the destination must be local", dest), view_end(&v, EXIT_USAGE);
	struct xfilter xf;
	if ((rc = filter_args_build(&x, &xf)) != 0)
		return view_end(&v, rc);
	x.co.filter = &xf;
	if (dest_open(dest, x.mkpath, !!(x.flags & REQ_DRY_RUN), &j, root, sizeof root) < 0) {
		xfilter_free(&xf);
		return die_msg("%s", err_msg()), view_end(&v, EXIT_LOCAL);
	}
	request_init(&rq, OP_PULL, &x, &r);
	stops_arm(&x);
	x.co.missing_ok = x.ignore_missing;
	rc = client_open(&r, &x.co, &rq, &c, &acc);
	if (rc == 0 && (rc = view_open(&v, '>')) == 0) {
		size_t n = strlen(dest);
		struct xfer_opts o = { .flags = (x.flags & ~REQ_SLASH) |
						(n && dest[n - 1] == '/' ? REQ_SLASH : 0),
				       .chmod = x.chmod, .backup_dir = x.backup_dir,
				       .suffix = x.suffix, .want_sig = 1, .max_delete = x.max_delete,
				       .flags2 = x.flags2, .max_size = x.max_size, .min_size = x.min_size,
				       .modify_window = x.modify_window,
				       .filter = x.nfargs ? &xf : NULL };
		writer_opts_default(&o.writer);
		o.writer.fsync_each = !!(x.flags & REQ_FSYNC);
		struct xfer_hooks h = { .change = view_change, .ctx = &v, .progress = &v.pg };
		int s = receiver_run(&c, &j, root, &o, &h, &st);
		rc = view_finish(&v, s, &st, "received", r.display, c.ch, c.peer_code);
		view_close(&v);
	}
	zdata_free(&c);
	if (c.ch)
		chan_free(c.ch);
	jail_close(&j);
	xfilter_free(&xf);
	return view_end(&v, rc == CLIENT_NO_SOURCE ? 0 : rc);   /* --ignore-missing-args: nothing to do */
}

/* --- ls ----------------------------------------------------------------------- */

static void mode_string(int type, uint32_t mode, char out[11])
{
	static const char rwx[] = "rwxrwxrwx";
	uint32_t fmt = mode & WIRE_IFMT;
	out[0] = type == ENT_DIR ? 'd' : type == ENT_LNK ? 'l' : type != ENT_SPECIAL ? '-' :
		 fmt == WIRE_IFCHR ? 'c' : fmt == WIRE_IFBLK ? 'b' : fmt == WIRE_IFIFO ? 'p' : 's';
	for (int i = 0; i < 9; i++)
		out[i + 1] = (mode & (0400u >> i)) ? rwx[i] : '-';
	out[10] = '\0';
}

struct ls_ctx {
	int header;             /* the snapshot list's header was printed */
	int human;              /* -h */
};

static void on_entry(void *ctx, int type, uint32_t mode, uint64_t size, int64_t mtime,
		     const char *name, const char *target)
{
	char m[11], when[32], qn[4 * MSG_MAX_PATH + 8], qt[4 * MSG_MAX_PATH + 8];
	time_t t = (time_t)mtime;
	struct tm tm;

	const struct ls_ctx *l = ctx;
	char sz[24];

	mode_string(type, mode, m);
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	if (type == ENT_LNK)   /* a link's size is its target's length, as lstat and rsync say */
		size = strlen(target);
	if (l->human)
		progress_size(sz, sizeof sz, size, l->human);
	else
		snprintf(sz, sizeof sz, "%llu", (unsigned long long)size);
	/* name and target are the server's bytes */
	printf("%s %15s %s %s%s%s\n", m, sz, when,
	       peer_quote(qn, sizeof qn, name), type == ENT_LNK ? " -> " : "",
	       type == ENT_LNK ? peer_quote(qt, sizeof qt, target) : "");
}

/* ls HOST:MODULE@: a snapshot per line, as `restic snapshots` */
static void on_snap(void *ctx, const struct m_snap *sn)
{
	char when[32], qn[4 * MSG_MAX_NAME + 8], qc[4 * MSG_MAX_NAME + 8];
	time_t t = (time_t)sn->time;
	struct tm tm;
	int *header = &((struct ls_ctx *)ctx)->header;

	if (!*header) {
		printf("%-34s %-19s %-16s %10s %15s\n", "SNAPSHOT", "TIME", "CLIENT", "CHANGED",
		       "BYTES ADDED");
		*header = 1;
	}
	strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime_r(&t, &tm));
	printf("%-34s %-19s %-16s %10llu %15llu", peer_quote(qn, sizeof qn, sn->name), when,
	       peer_quote(qc, sizeof qc, sn->client), (unsigned long long)sn->files,
	       (unsigned long long)sn->bytes);
	if (sn->failed)
		printf("  partial: %llu failed", (unsigned long long)sn->failed);
	putchar('\n');
}

int cmd_ls(int argc, char **argv)
{
	struct xfer_cli x;
	struct remote r;
	struct m_request rq;
	struct m_accept acc;
	struct conn c = { 0 };
	int first = xfer_opts_parse(argc, argv, &x);

	if (first < 0)
		return EXIT_USAGE;
	if (argc - first != 1)
		return die_msg("usage: ferry ls [OPTIONS] HOST:MODULE[/PATH]"), EXIT_USAGE;
	int rc = remote_of(argv[first], &x, "ls: HOST:MODULE[/PATH]", &r);
	if (rc)
		return rc;
	/* ls shows a directory's contents, as `ls dir` does; -r the whole tree,
	 * as rsync --list-only -r. */
	r.slash = 1;
	struct xfilter xf;
	if ((rc = filter_args_build(&x, &xf)) != 0)
		return rc;
	x.co.filter = &xf;
	request_init(&rq, OP_LIST, &x, &r);
	rq.flags = REQ_SLASH | (x.recursive ? 0 : REQ_NO_RECURSE) | (x.nfargs ? REQ_FILTER : 0) |
		   (x.flags & (REQ_DEVICES | REQ_SPECIALS));   /* -a and -D list them, as rsync */
	rc = client_open(&r, &x.co, &rq, &c, &acc);
	xfilter_free(&xf);   /* the box applies them */
	if (rc)
		return rc;
	struct ls_ctx lc = { .human = x.human };
	struct xfer_hooks h = { .entry = on_entry, .snap = on_snap, .ctx = &lc };
	rc = receiver_list(&c, &h);
	fflush(stdout);
	zdata_free(&c);
	chan_free(c.ch);
	if (rc < 0) {
		char q[4 * MSG_MAX_TEXT + 8];
		die_msg("%s: %s", r.display, peer_quote(q, sizeof q, err_msg()));
		return rc == -EBADMSG ? EXIT_STREAM : EXIT_SOCKET;
	}
	return EXIT_OK;
}
