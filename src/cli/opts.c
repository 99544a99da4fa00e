/* SPDX-License-Identifier: MIT */
/* The push / pull / ls command line. Every flag in rsync's OPTIONS SUMMARY
 * is in rsync_flags[]: handled with rsync's meaning (ferry's own code below),
 * accepted because it already is ferry's behaviour, or refused with the
 * reason. ferry's own flags (--identity, --protection, ...) come after. */
#include "cli/opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "fs/dirlist.h"
#include "fs/jail.h"
#include "util/chmod.h"
#include "cli/cli.h"
#include "proto/zchunk.h"
#include "session/progress.h"
#include "util/config.h"
#include "util/sizearg.h"
#include "util/stoptime.h"
#include "util/err.h"
#include "util/log.h"

enum action { OWN, SAME, REFUSE };

/* ids of what ferry handles itself (short options use their letter) */
enum {
	O_INFO = 256, O_DEBUG, O_STDERR, O_BACKUP_DIR, O_SUFFIX, O_CHMOD, O_EXISTING, O_FORCE,
	O_IGNORE_EXISTING, O_DELETE, O_IGNORE_MISSING, O_TIMEOUT, O_SIZE_ONLY, O_PORT,
	O_STATS, O_PROGRESS, O_LOG_FILE, O_BWLIMIT, O_FSYNC, O_HELP, O_NO_WHOLE, O_ZLEVEL,
	O_EXCLUDE, O_INCLUDE, O_EXCLUDE_FROM, O_INCLUDE_FROM, O_DELETE_EXCLUDED,
	O_NO_OWNER, O_NO_GROUP, O_DEVICES, O_NO_DEVICES, O_SPECIALS, O_NO_SPECIALS, O_NO_D,
	O_NUMERIC_IDS, O_MAX_DELETE, O_MAX_SIZE, O_MIN_SIZE, O_FILES_FROM, O_SAFE_LINKS,
	O_DEL_DURING, O_DEL_DELAY, O_DEL_AFTER, O_MKPATH,
	O_STOP_AFTER, O_STOP_AT,
	/* ferry's own */
	O_IDENTITY, O_KNOWN, O_ACCEPT, O_PROT, O_CIPHER, O_NO_VERIFY, O_NO_RESUME,
	O_TABLE = 1000   /* + index into rsync_flags: SAME or REFUSE */
};

struct rflag {
	const char *name;     /* long name, NULL if only a short one */
	char short_opt;       /* 0 if none */
	int has_arg;
	enum action act;
	int id;               /* OWN: the id the switch handles */
	const char *why;      /* SAME: what ferry already does; REFUSE: why not */
};

#define NO_SHELL "ferry talks to its own daemon over its own protocol: there is no remote shell"
#define NO_FOLLOW "the box keeps symlinks as links and never follows one (the jail relies on it); " \
	"push -L and -k follow the PC's own"
#define NO_IDMAP "owners and groups are mapped by name, or kept as numbers with --numeric-ids"
#define FAKE_SUPER "on the box, a module with 'fake super = yes' keeps owners, devices and modes in xattrs; on the PC, run as root to keep them"
#define NO_CVS "ferry has no built-in exclude list: write the patterns with --exclude or a .ferry-filter file (-F)"
#define LATER_DELTA "ferry chooses its delta blocks itself (about the square root of the size)"
#define ZSTD_ONLY "ferry compresses with zstd only (-z, --compress-level)"
#define ATOMIC "ferry writes every file to a temporary beside it and renames it into place"
#define SNAPSHOTS "the box keeps versions itself: a module with 'snapshots = yes' stores what " \
	"each push changes, no hard-link farm (ferry.conf(5))"

static const struct rflag rsync_flags[] = {
	{ "verbose", 'v', 0, OWN, 'v', NULL },
	{ "info", 0, 1, OWN, O_INFO, NULL },
	{ "debug", 0, 1, REFUSE, 0, "use -vv for ferry's debug output" },
	{ "stderr", 0, 1, REFUSE, 0, "ferry writes errors to stderr and everything else to stdout" },
	{ "quiet", 'q', 0, OWN, 'q', NULL },
	{ "no-motd", 0, 0, SAME, 0, "a ferry daemon sends no message of the day" },
	{ "checksum", 'c', 0, OWN, 'c', NULL },
	{ "no-OPTION", 0, 0, REFUSE, 0, "the --no- forms ferry has are listed here: "
	  "--no-o, --no-g, --no-D (and --no-owner, --no-group, --no-devices, --no-specials)" },
	{ "archive", 'a', 0, OWN, 'a', NULL },
	{ "recursive", 'r', 0, OWN, 'r', NULL },
	{ "inc-recursive", 0, 0, SAME, 0, "ferry always streams the file list" },
	{ "i-r", 0, 0, SAME, 0, "ferry always streams the file list" },
	{ "no-inc-recursive", 0, 0, SAME, 0, "ferry streams the file list and holds no list in memory" },
	{ "no-i-r", 0, 0, SAME, 0, "ferry streams the file list and holds no list in memory" },
	{ "relative", 'R', 0, OWN, 'R', NULL },
	{ "no-implied-dirs", 0, 0, REFUSE, 0, "with -R ferry sends the directories on the way "
	  "with their own modes and times, as rsync does by default" },
	{ "backup", 'b', 0, OWN, 'b', "a deleted directory is kept whole, as DIR~ (rsync keeps "
	  "its files one by one)" },
	{ "backup-dir", 0, 1, OWN, O_BACKUP_DIR, "DIR is a path inside the destination (no '..', "
	  "no leading '/'): on a push the box keeps nothing outside the module" },
	{ "suffix", 0, 1, OWN, O_SUFFIX, NULL },
	{ "update", 'u', 0, OWN, 'u', NULL },
	{ "inplace", 0, 0, REFUSE, 0, ATOMIC },
	{ "append", 0, 0, REFUSE, 0, ATOMIC },
	{ "append-verify", 0, 0, REFUSE, 0, ATOMIC },
	{ "dirs", 'd', 0, REFUSE, 0, "ferry always recurses" },
	{ "old-dirs", 0, 0, REFUSE, 0, "ferry always recurses" },
	{ "old-d", 0, 0, REFUSE, 0, "ferry always recurses" },
	{ "mkpath", 0, 0, OWN, O_MKPATH, "a push always creates its missing destination "
	  "directories on the box" },
	{ "links", 'l', 0, SAME, 0, "ferry always keeps symlinks as symlinks" },
	{ "copy-links", 'L', 0, OWN, 'L', NULL },
	{ "copy-unsafe-links", 0, 0, REFUSE, 0, NO_FOLLOW },
	{ "safe-links", 0, 0, OWN, O_SAFE_LINKS, NULL },
	{ "insecure-links", 0, 0, REFUSE, 0, NO_FOLLOW },
	{ "confine-root", 0, 1, REFUSE, 0, "the daemon confines every module to its directory itself" },
	{ "munge-links", 0, 0, REFUSE, 0, NO_FOLLOW },
	{ "copy-dirlinks", 'k', 0, OWN, 'k', NULL },
	{ "keep-dirlinks", 'K', 0, REFUSE, 0, NO_FOLLOW },
	{ "hard-links", 'H', 0, OWN, 'H', NULL },
	{ "perms", 'p', 0, SAME, 0, "ferry always keeps permissions" },
	{ "executability", 'E', 0, SAME, 0, "ferry always keeps the whole mode" },
	{ "chmod", 0, 1, OWN, O_CHMOD, NULL },
	{ "acls", 'A', 0, OWN, 'A', NULL },
	{ "xattrs", 'X', 0, OWN, 'X', NULL },
	{ "owner", 'o', 0, OWN, 'o', NULL },
	{ "group", 'g', 0, OWN, 'g', NULL },
	{ "no-owner", 0, 0, OWN, O_NO_OWNER, NULL },
	{ "no-o", 0, 0, OWN, O_NO_OWNER, NULL },
	{ "no-group", 0, 0, OWN, O_NO_GROUP, NULL },
	{ "no-g", 0, 0, OWN, O_NO_GROUP, NULL },
	{ "devices", 0, 0, OWN, O_DEVICES, NULL },
	{ "no-devices", 0, 0, OWN, O_NO_DEVICES, NULL },
	{ "copy-devices", 0, 0, REFUSE, 0, "ferry sends a device as a device (-D), never its contents" },
	{ "write-devices", 0, 0, REFUSE, 0, ATOMIC },
	{ "specials", 0, 0, OWN, O_SPECIALS, NULL },
	{ "no-specials", 0, 0, OWN, O_NO_SPECIALS, NULL },
	{ "drop-D", 0, 0, OWN, O_NO_D, NULL },
	{ NULL, 'D', 0, OWN, 'D', NULL },
	{ "no-D", 0, 0, OWN, O_NO_D, NULL },
	{ "times", 't', 0, SAME, 0, "ferry always keeps modification times (to the nanosecond)" },
	{ "atimes", 'U', 0, REFUSE, 0, "ferry keeps modification times only" },
	{ "open-noatime", 0, 0, REFUSE, 0, "ferry keeps modification times only" },
	{ "crtimes", 'N', 0, REFUSE, 0, "ferry keeps modification times only" },
	{ "omit-dir-times", 'O', 0, REFUSE, 0, "ferry always sets directory times" },
	{ "omit-link-times", 'J', 0, REFUSE, 0, "ferry always sets symlink times" },
	{ "super", 0, 0, REFUSE, 0, FAKE_SUPER },
	{ "fake-super", 0, 0, REFUSE, 0, FAKE_SUPER },
	{ "sparse", 'S', 0, SAME, 0, "ferry always keeps holes as holes" },
	{ "preallocate", 0, 0, SAME, 0, "ferry preallocates large files where the file system can" },
	{ "dry-run", 'n', 0, OWN, 'n', NULL },
	{ "whole-file", 'W', 0, OWN, 'W', NULL },
	{ "no-whole-file", 0, 0, OWN, O_NO_WHOLE, NULL },
	{ "no-W", 0, 0, OWN, O_NO_WHOLE, NULL },
	{ "checksum-choice", 0, 1, REFUSE, 0, "ferry's file checksum is always xxh3-128" },
	{ "cc", 0, 1, REFUSE, 0, "ferry's file checksum is always xxh3-128" },
	{ "one-file-system", 'x', 0, OWN, 'x', NULL },
	{ "block-size", 'B', 1, REFUSE, 0, LATER_DELTA },
	{ "rsh", 'e', 1, REFUSE, 0, NO_SHELL },
	{ "rsync-path", 0, 1, REFUSE, 0, NO_SHELL },
	{ "existing", 0, 0, OWN, O_EXISTING, NULL },
	{ "ignore-non-existing", 0, 0, OWN, O_EXISTING, NULL },
	{ "ignore-existing", 0, 0, OWN, O_IGNORE_EXISTING, NULL },
	{ "remove-source-files", 0, 0, REFUSE, 0, "ferry never changes the source" },
	{ "del", 0, 0, OWN, O_DELETE, NULL },
	{ "delete", 0, 0, OWN, O_DELETE, NULL },
	{ "delete-before", 0, 0, REFUSE, 0, "ferry finds what to delete one directory at a time "
	  "as the tree streams in: use --delete (deleted during) or --delete-delay (after)" },
	{ "delete-during", 0, 0, OWN, O_DEL_DURING, NULL },
	{ "delete-delay", 0, 0, OWN, O_DEL_DELAY, NULL },
	{ "delete-after", 0, 0, OWN, O_DEL_AFTER, NULL },
	{ "delete-excluded", 0, 0, OWN, O_DELETE_EXCLUDED, NULL },
	{ "ignore-missing-args", 0, 0, OWN, O_IGNORE_MISSING, NULL },
	{ "delete-missing-args", 0, 0, REFUSE, 0, "not implemented" },
	{ "ignore-errors", 0, 0, REFUSE, 0, "ferry deletes whatever I/O errors happened elsewhere; "
	  "a directory that could not be read is not mirrored" },
	{ "force", 0, 0, OWN, O_FORCE, NULL },
	{ "max-delete", 0, 1, OWN, O_MAX_DELETE, NULL },
	{ "max-size", 0, 1, OWN, O_MAX_SIZE, NULL },
	{ "min-size", 0, 1, OWN, O_MIN_SIZE, NULL },
	{ "max-alloc", 0, 1, REFUSE, 0, "ferry's memory is bounded by its protocol, whatever the tree" },
	{ "partial", 0, 0, SAME, 0, "ferry keeps what an interrupted transfer wrote (hidden, as "
	  ".ferry-part.NAME) and resumes from it; --no-resume turns that off" },
	{ "partial-dir", 0, 1, SAME, 0, "ferry keeps what an interrupted transfer wrote beside the "
	  "file it is for, as .ferry-part.NAME, out of listings, and resumes from it (DIR is not "
	  "used)" },
	{ "delay-updates", 0, 0, REFUSE, 0, "not implemented: each file is renamed into place as it "
	  "is complete" },
	{ "prune-empty-dirs", 'm', 0, OWN, 'm', NULL },
	{ "numeric-ids", 0, 0, OWN, O_NUMERIC_IDS, NULL },
	{ "usermap", 0, 1, REFUSE, 0, NO_IDMAP },
	{ "groupmap", 0, 1, REFUSE, 0, NO_IDMAP },
	{ "chown", 0, 1, REFUSE, 0, NO_IDMAP },
	{ "timeout", 0, 1, OWN, O_TIMEOUT, NULL },
	{ "contimeout", 0, 1, REFUSE, 0, "--timeout covers the connection too" },
	{ "ignore-times", 'I', 0, OWN, 'I', NULL },
	{ "size-only", 0, 0, OWN, O_SIZE_ONLY, NULL },
	{ "modify-window", '@', 1, OWN, '@', NULL },
	{ "temp-dir", 'T', 1, REFUSE, 0, ATOMIC },
	{ "fuzzy", 'y', 0, REFUSE, 0, "not implemented: a delta's basis is the file of the same name" },
	{ "compare-dest", 0, 1, REFUSE, 0, SNAPSHOTS },
	{ "copy-dest", 0, 1, REFUSE, 0, SNAPSHOTS },
	{ "link-dest", 0, 1, REFUSE, 0, SNAPSHOTS },
	{ "compress", 'z', 0, OWN, 'z', NULL },
	{ "compress-choice", 0, 1, REFUSE, 0, ZSTD_ONLY },
	{ "zc", 0, 1, REFUSE, 0, ZSTD_ONLY },
	{ "compress-level", 0, 1, OWN, O_ZLEVEL, NULL },
	{ "zl", 0, 1, OWN, O_ZLEVEL, NULL },
	{ "compress-threads", 0, 1, REFUSE, 0, "ferry compresses in the sending thread, one "
	  "independent chunk at a time" },
	{ "zt", 0, 1, REFUSE, 0, "ferry compresses in the sending thread, one independent chunk "
	  "at a time" },
	{ "skip-compress", 0, 1, REFUSE, 0, "ferry finds incompressible data itself: a chunk that "
	  "does not shrink by 3 % goes raw, and the file backs off" },
	{ "cvs-exclude", 'C', 0, REFUSE, 0, NO_CVS },
	{ "filter", 'f', 1, OWN, 'f', NULL },
	{ NULL, 'F', 0, OWN, 'F', NULL },
	{ "exclude", 0, 1, OWN, O_EXCLUDE, NULL },
	{ "exclude-from", 0, 1, OWN, O_EXCLUDE_FROM, NULL },
	{ "include", 0, 1, OWN, O_INCLUDE, NULL },
	{ "include-from", 0, 1, OWN, O_INCLUDE_FROM, NULL },
	{ "files-from", 0, 1, OWN, O_FILES_FROM, NULL },
	{ "from0", '0', 0, OWN, '0', NULL },
	{ "old-args", 0, 0, REFUSE, 0, "ferry sends paths inside its protocol, never through a shell" },
	{ "secluded-args", 's', 0, SAME, 0, "ferry always sends paths inside its encrypted protocol" },
	{ "trust-sender", 0, 0, SAME, 0, "ferry checks every name a sender sends, always" },
	{ "copy-as", 0, 1, REFUSE, 0, FAKE_SUPER },
	{ "address", 0, 1, REFUSE, 0, "not implemented" },
	{ "port", 0, 1, OWN, O_PORT, NULL },
	{ "sockopts", 0, 1, REFUSE, 0, "ferry sets its own socket options" },
	{ "blocking-io", 0, 0, REFUSE, 0, NO_SHELL },
	{ "outbuf", 0, 1, REFUSE, 0, "ferry line-buffers what it prints" },
	{ "stats", 0, 0, OWN, O_STATS, NULL },
	{ "8-bit-output", '8', 0, SAME, 0, "ferry prints valid UTF-8 names as they are and escapes "
	  "only control bytes and invalid UTF-8" },
	{ "human-readable", 'h', 0, OWN, 'h', NULL },
	{ "progress", 0, 0, OWN, O_PROGRESS, NULL },
	{ NULL, 'P', 0, OWN, 'P', NULL },
	{ "itemize-changes", 'i', 0, OWN, 'i', NULL },
	{ "remote-option", 'M', 1, REFUSE, 0, NO_SHELL },
	{ "out-format", 0, 1, REFUSE, 0, "not implemented: use -v or -i" },
	{ "log-file", 0, 1, OWN, O_LOG_FILE, NULL },
	{ "log-file-format", 0, 1, REFUSE, 0, "not implemented: the log file has -i's format" },
	{ "password-file", 0, 1, REFUSE, 0, "ferry authenticates with keys, never passwords "
	  "(--identity FILE)" },
	{ "early-input", 0, 1, REFUSE, 0, "a ferry daemon runs no programs" },
	{ "list-only", 0, 0, REFUSE, 0, "use 'ferry ls'" },
	{ "bwlimit", 0, 1, OWN, O_BWLIMIT, NULL },
	{ "stop-after", 0, 1, OWN, O_STOP_AFTER, NULL },
	{ "time-limit", 0, 1, OWN, O_STOP_AFTER, NULL },
	{ "stop-at", 0, 1, OWN, O_STOP_AT, NULL },
	{ "fsync", 0, 0, OWN, O_FSYNC, NULL },
	{ "write-batch", 0, 1, REFUSE, 0, "ferry has no batch files" },
	{ "only-write-batch", 0, 1, REFUSE, 0, "ferry has no batch files" },
	{ "read-batch", 0, 1, REFUSE, 0, "ferry has no batch files" },
	{ "protocol", 0, 1, REFUSE, 0, "ferry speaks FERRY/1 only" },
	{ "iconv", 0, 1, REFUSE, 0, "ferry sends names as bytes, unconverted" },
	{ "checksum-seed", 0, 1, REFUSE, 0, "ferry's checksums take no seed" },
	{ "ipv4", '4', 0, OWN, '4', NULL },
	{ "ipv6", '6', 0, OWN, '6', NULL },
	{ "version", 'V', 0, OWN, 'V', NULL },
	{ "help", 0, 0, OWN, O_HELP, NULL },
};
#define N_RSYNC (sizeof rsync_flags / sizeof rsync_flags[0])

static const struct option own_opts[] = {
	{ "identity", required_argument, NULL, O_IDENTITY },
	{ "known-hosts", required_argument, NULL, O_KNOWN },
	{ "accept-new", no_argument, NULL, O_ACCEPT },
	{ "protection", required_argument, NULL, O_PROT },
	{ "cipher", required_argument, NULL, O_CIPHER },
	{ "no-verify", no_argument, NULL, O_NO_VERIFY },
	{ "no-resume", no_argument, NULL, O_NO_RESUME },
};
#define N_OWN (sizeof own_opts / sizeof own_opts[0])

static int id_of(size_t i)
{
	const struct rflag *f = &rsync_flags[i];
	return f->act == OWN ? f->id : O_TABLE + (int)i;
}

/* getopt's tables, made from the two above (once: the tables are static). */
static void build(struct option *lo, char *shorts)
{
	size_t n = 0, s = 0;

	shorts[s++] = ':';   /* a missing argument is ':', not '?' */
	for (size_t i = 0; i < N_RSYNC; i++) {
		const struct rflag *f = &rsync_flags[i];
		if (f->name)
			lo[n++] = (struct option){ f->name, f->has_arg ? required_argument : no_argument,
						   NULL, id_of(i) };
		if (f->short_opt) {
			shorts[s++] = f->short_opt;
			if (f->has_arg)
				shorts[s++] = ':';
		}
	}
	for (size_t i = 0; i < N_OWN; i++)
		lo[n++] = own_opts[i];
	lo[n] = (struct option){ NULL, 0, NULL, 0 };
	shorts[s] = '\0';
}

static const struct rflag *by_short(int c)
{
	for (size_t i = 0; i < N_RSYNC; i++)
		if (rsync_flags[i].short_opt == c)
			return &rsync_flags[i];
	return NULL;
}

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

static int bad(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The one line a bad command line gets; returns -1. */
static int bad(const char *cmd, const char *fmt, ...)
{
	char line[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	die_msg("%s: %s", cmd, line);
	return -1;
}

/* The option just refused or not understood, as the user wrote it. */
static const char *written(char **argv, int ch)
{
	static char buf[4];
	const char *a = argv[optind - 1];

	if (a && a[0] == '-' && a[1] == '-')
		return a;
	snprintf(buf, sizeof buf, "-%c", ch);
	return buf;
}

static int parse_number(const char *s, long lo, long hi, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < lo || v > hi)   /* errno: past a 32-bit long */
		return -1;
	*out = v;
	return 0;
}

static int info_flags(const char *cmd, const char *s, struct xfer_cli *x)
{
	if (!strcmp(s, "progress2")) {
		x->progress = 1;
		x->progress_mode = PROGRESS_WHOLE;
	} else if (!strcmp(s, "progress1") || !strcmp(s, "progress")) {
		x->progress = 1;
		x->progress_mode = 0;
	} else if (!strcmp(s, "progress0") || !strcmp(s, "none") || !strcmp(s, "0")) {
		x->progress = 0;
	} else {
		return bad(cmd, "--info=%s: ferry understands --info=progress2, progress1, progress0 "
			   "and none", s);
	}
	return 0;
}

/* The filter rules in command-line order: at most one per argument, so
 * argc entries always suffice. The parser's, kept for the process. */
static struct filter_arg *fargs;

static void add_farg(struct xfer_cli *x, enum filter_arg_kind kind, const char *arg)
{
	fargs[x->nfargs++] = (struct filter_arg){ .kind = kind, .arg = arg };
}

/* The wall clock in ms: a --stop-at is a point of it, and --stop-after too. */
static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The ids ferry handles with rsync's meaning; 1 = not one of them. */
static int own_rsync(const char *cmd, int ch, struct xfer_cli *x)
{
	long v;

	switch (ch) {
	case 'v': x->co.verbose++; break;
	case 'a':   /* -rlptgoD; push and pull always recurse, links and times are kept */
		x->recursive = 1;
		x->flags |= REQ_OWNER | REQ_GROUP | REQ_DEVICES | REQ_SPECIALS;
		break;
	case 'r': x->recursive = 1; x->explicit_r = 1; break;   /* ls -r; --files-from's -r */
	case O_FILES_FROM: x->files_from = optarg; break;
	case 'R': x->relative = 1; break;
	case 'm': x->prune = 1; break;
	case O_SAFE_LINKS: x->flags2 |= REQ2_SAFE_LINKS; break;
	case O_MKPATH: x->mkpath = 1; break;
	case '@':   /* as rsync: seconds; a negative window compares nanoseconds,
		     * which ferry does anyway (at the receiver's precision) */
		if (parse_number(optarg, INT32_MIN, INT32_MAX, &v) < 0)
			return bad(cmd, "--modify-window=%s: a number of seconds, up to %d", optarg,
				   INT32_MAX);
		x->flags2 = v >= 0 ? x->flags2 | REQ2_MODIFY_WINDOW : x->flags2 & ~REQ2_MODIFY_WINDOW;
		x->modify_window = v >= 0 ? (uint32_t)v : 0;
		break;
	case '0': x->from0 = 1; break;
	case 'o': x->flags |= REQ_OWNER; break;
	case 'g': x->flags |= REQ_GROUP; break;
	case 'X': x->flags |= REQ_XATTRS; break;
	case 'H': x->flags |= REQ_HARD_LINKS; break;
	case 'A': x->flags |= REQ_ACLS; break;
	case 'D': x->flags |= REQ_DEVICES | REQ_SPECIALS; break;
	case O_NO_D: x->flags &= ~(REQ_DEVICES | REQ_SPECIALS); break;
	case O_DEVICES: x->flags |= REQ_DEVICES; break;
	case O_NO_DEVICES: x->flags &= ~REQ_DEVICES; break;
	case O_SPECIALS: x->flags |= REQ_SPECIALS; break;
	case O_NO_SPECIALS: x->flags &= ~REQ_SPECIALS; break;
	case O_NO_OWNER: x->flags &= ~REQ_OWNER; break;
	case O_NO_GROUP: x->flags &= ~REQ_GROUP; break;
	case O_NUMERIC_IDS: x->flags |= REQ_NUMERIC_IDS; break;
	case 'q': x->co.quiet = 1; break;
	case 'c': x->flags |= REQ_CHECKSUM; break;
	case 'u': x->flags |= REQ_UPDATE; break;
	case 'x': x->flags |= REQ_ONE_FS; break;
	case 'L': x->follow = FOLLOW_ALL; break;
	case 'k': x->follow = x->follow == FOLLOW_ALL ? FOLLOW_ALL : FOLLOW_DIRS; break;
	case 'n': x->flags |= REQ_DRY_RUN; break;
	case 'I': x->flags |= REQ_IGNORE_TIMES; break;
	case 'W': x->flags |= REQ_WHOLE_FILE; break;
	case 'z': x->flags |= REQ_COMPRESS; break;
	case O_ZLEVEL:
		if (parse_number(optarg, 0, ZCHUNK_LEVEL_MAX, &v) < 0)
			return bad(cmd, "--compress-level=%s: 1 to %d (0: do not compress)", optarg,
				   ZCHUNK_LEVEL_MAX);
		x->zlevel = (int)v;
		x->zlevel_set = 1;
		break;
	case O_NO_WHOLE: x->flags &= ~REQ_WHOLE_FILE; break;
	case 'h': x->human++; break;
	case 'i': x->itemize = 1; break;
	case 'b': x->flags |= REQ_BACKUP; break;
	case 'P': case O_PROGRESS: x->progress = 1; break;
	case '4': x->co.family = 4; break;
	case '6': x->co.family = 6; break;
	case O_INFO: return info_flags(cmd, optarg, x);
	case O_BACKUP_DIR:
		if (path_check(optarg, strlen(optarg)) < 0 || !optarg[0])
			return bad(cmd, "--backup-dir=%s: a path inside the destination, without '..' "
				   "or a leading '/'", optarg);
		x->backup_dir = optarg;
		x->flags |= REQ_BACKUP;
		break;
	case O_SUFFIX:
		if (strchr(optarg, '/') || strlen(optarg) > 255)
			return bad(cmd, "--suffix=%s: a suffix has no '/' and at most 255 bytes", optarg);
		x->suffix = optarg;
		break;
	case O_CHMOD: {
		if (chmod_check(optarg) < 0)
			return bad(cmd, "--chmod=%s: %s", optarg, err_msg());
		size_t n = strlen(x->chmod_buf);
		/* the REQUEST carries them as one string of MSG_MAX_NAME bytes */
		if (snprintf(x->chmod_buf + n, sizeof x->chmod_buf - n, "%s%s", n ? "," : "",
			     optarg) >= (int)(sizeof x->chmod_buf - n))
			return bad(cmd, "--chmod: the modes given add up to more than %zu bytes",
				   sizeof x->chmod_buf - 1);
		x->chmod = x->chmod_buf;
		break;
	}
	case O_EXISTING: x->flags |= REQ_EXISTING; break;
	case O_FORCE: x->flags |= REQ_FORCE; break;
	case O_MAX_SIZE: case O_MIN_SIZE: {
		uint64_t sz;
		if (size_arg_parse(optarg, &sz) < 0)
			return bad(cmd, "--%s=%s: a size such as 100M, 1.5GB or 2g+1 (K, M, G, T, P: "
				   "powers of 1024; KB, MB, GB ...: of 1000)",
				   ch == O_MAX_SIZE ? "max-size" : "min-size", optarg);
		*(ch == O_MAX_SIZE ? &x->max_size : &x->min_size) = sz;
		x->flags2 |= ch == O_MAX_SIZE ? REQ2_MAX_SIZE : REQ2_MIN_SIZE;
		break;
	}
	case O_MAX_DELETE:
		/* rsync's -1 is its old clients' way of saying 0 */
		if (parse_number(optarg, INT32_MIN, INT32_MAX, &v) < 0)
			return bad(cmd, "--max-delete=%s: a number of entries, up to %d (0 or less: "
				   "delete none, say how many would go)", optarg, INT32_MAX);
		x->max_delete = v < 0 ? 0 : (uint32_t)v;
		x->flags |= REQ_MAX_DELETE;
		break;
	case O_IGNORE_EXISTING: x->flags |= REQ_IGNORE_EXISTING; break;
	case O_DELETE: x->flags |= REQ_DELETE; break;
	/* as rsync's --delete-WHEN, each implies --delete, and one may be given;
	 * ferry's --delete-after is --delete-delay (what to delete is found during
	 * the transfer, from the listings, and deleted after it) whose rules are
	 * asked again then (rsync's scans the tree again after it) */
	case O_DEL_DURING:
	case O_DEL_DELAY:
	case O_DEL_AFTER:
		if (x->del_when && x->del_when != ch)
			return bad(cmd, "you may give one of --delete-during, --delete-delay and "
				   "--delete-after (as rsync)");
		x->del_when = ch;
		x->flags |= REQ_DELETE;
		if (ch != O_DEL_DURING)
			x->flags2 |= REQ2_DELETE_DELAY;
		if (ch == O_DEL_AFTER)
			x->flags2 |= REQ2_DELETE_AFTER;
		break;
	case O_IGNORE_MISSING: x->ignore_missing = 1; break;
	case O_SIZE_ONLY: x->flags |= REQ_SIZE_ONLY; break;
	case O_STATS: x->stats = 1; break;
	case O_LOG_FILE: x->log_file = optarg; break;
	case O_FSYNC: x->flags |= REQ_FSYNC; break;
	case O_TIMEOUT:
		if (parse_number(optarg, 1, 86400 * 7, &v) < 0)
			return bad(cmd, "--timeout %s: seconds, from 1 to 604800", optarg);
		x->co.timeout_ms = (int)v * 1000;
		break;
	case O_STOP_AFTER: {
		double secs;
		if (stop_after_parse(optarg, &secs) < 0)
			return bad(cmd, "--stop-after=%s: minutes, more than 0 (a fraction allowed) and "
				   "at most a year", optarg);
		long long ms = (long long)(secs * 1000);
		x->stop_at_ms = now_ms() + (ms < 1 ? 1 : ms);   /* 1 ms at least: 0 is never */
		break;
	}
	case O_STOP_AT: {
		time_t now = time(NULL), t;
		int rc = stop_at_parse(optarg, now, &t);
		if (rc < 0)
			return bad(cmd, rc == -ERANGE ? "--stop-at=%s: that time is not ahead" :
				   "--stop-at=%s: a local time as y-m-dTh:m: 2026-12-31T23:59, "
				   "2026-12-31, 12-31T23:59, 12-31, 23:59 or :59", optarg);
		x->stop_at_ms = (long long)t * 1000;
		break;
	}
	case O_PORT:
		if (parse_number(optarg, 1, 65535, &v) < 0)
			return bad(cmd, "--port %s: a port number from 1 to 65535", optarg);
		x->port = (unsigned)v;
		break;
	case O_BWLIMIT:
		if (parse_rate(optarg, &x->co.bwlimit) < 0)
			return bad(cmd, "--bwlimit %s: %s", optarg, err_msg());
		break;
	case 'f': add_farg(x, FA_RULE, optarg); break;
	case 'F': add_farg(x, FA_F, NULL); break;
	case O_EXCLUDE: add_farg(x, FA_EXCLUDE, optarg); break;
	case O_INCLUDE: add_farg(x, FA_INCLUDE, optarg); break;
	case O_EXCLUDE_FROM: add_farg(x, FA_EXCLUDE_FROM, optarg); break;
	case O_INCLUDE_FROM: add_farg(x, FA_INCLUDE_FROM, optarg); break;
	case O_DELETE_EXCLUDED:
		x->delete_excluded = 1;
		x->flags |= REQ_DELETE;   /* as rsync: --delete-excluded implies --delete */
		break;
	default:
		return 1;
	}
	return 0;
}

/* ferry's own flags; 1 = not one of them. */
static int own_ferry(const char *cmd, int ch, struct xfer_cli *x)
{
	int p;

	switch (ch) {
	case O_IDENTITY: x->co.identity = optarg; break;
	case O_KNOWN: x->co.known_hosts = optarg; break;
	case O_ACCEPT: x->co.accept_new = 1; break;
	case O_NO_VERIFY: x->flags |= REQ_NO_VERIFY; break;
	case O_NO_RESUME: x->flags |= REQ_NO_RESUME; break;
	case O_PROT:
		if (parse_protection(optarg, &p) < 0)
			return bad(cmd, "--protection %s: use encrypt, integrity or none", optarg);
		x->co.protection = p;
		break;
	case O_CIPHER:
		if (parse_cipher(optarg, &x->co.cipher_mask) < 0)
			return bad(cmd, "--cipher %s: use aesgcm, chachapoly or auto", optarg);
		break;
	default:
		return 1;
	}
	return 0;
}

/* A flag of the table that ferry does not handle itself: accepted (it is
 * already ferry's behaviour) or refused with the reason. */
static int table_flag(const char *cmd, char **argv, const struct rflag *f)
{
	const char *w = written(argv, f->short_opt ? f->short_opt : '?');

	if (f->act == SAME)
		return 0;   /* already what ferry does (ferry help --rsync says what) */
	return bad(cmd, "%s is not supported: %s", w, f->why);
}

static int unknown(const char *cmd, char **argv, int ch)
{
	const char *a = argv[optind - 1];

	if (ch == ':')
		return bad(cmd, "%s needs a value", written(argv, optopt));
	if (optopt && by_short(optopt) == NULL && (!a || a[1] != '-'))
		return bad(cmd, "unknown option -%c (see 'ferry help', or 'ferry help --rsync' for "
			   "rsync's flags)", optopt);
	return bad(cmd, "unknown option %s (see 'ferry help', or 'ferry help --rsync' for rsync's "
		   "flags)", a ? a : "?");
}

static int finish_opts(const char *cmd, struct xfer_cli *x)
{
	if ((x->flags & REQ_NO_VERIFY) && x->co.protection != PROT_NONE)
		return bad(cmd, "--no-verify goes with --protection none (encrypt and integrity "
			   "always verify every record)");
	/* as rsync: a level implies -z, and level 0 means no compression */
	if (x->zlevel_set && x->zlevel)
		x->flags |= REQ_COMPRESS;
	else if (x->zlevel_set)
		x->flags &= ~REQ_COMPRESS;
	x->co.compress_level = x->zlevel;
	/* as rsync: an empty suffix would name the file itself, and without -b
	 * a suffix names nothing (ignored) */
	if (x->suffix && !x->suffix[0] && !x->backup_dir)
		return bad(cmd, "--suffix cannot be empty without a --backup-dir");
	if (!(x->flags & REQ_BACKUP))
		x->suffix = NULL;
	if (x->stop_at_ms && strcmp(cmd, "push") && strcmp(cmd, "pull"))
		return bad(cmd, "--stop-after and --stop-at go with push and pull");
	if (x->files_from && strcmp(cmd, "push"))
		return bad(cmd, "--files-from works with push: the list names the PC's files");
	if (x->prune && strcmp(cmd, "push"))
		return bad(cmd, "-m/--prune-empty-dirs works with push: on a pull the box would have to "
			   "look ahead through its tree");
	if (x->relative && strcmp(cmd, "push"))
		return bad(cmd, "-R/--relative works with push: its paths name the PC's files");
	/* a part of the source: --delete must keep out of the directories on
	 * the way, which a box older than DIRB_PARTIAL would mirror */
	x->co.partial_delete = (x->files_from || x->relative) && (x->flags & REQ_DELETE);
	if (x->from0 && !x->files_from)
		return bad(cmd, "-0/--from0 goes with --files-from (--exclude-from and --include-from "
			   "read lines)");
	/* rsync's -L and -k are the sender's: on a pull or ls that is the box */
	if (x->follow && strcmp(cmd, "push"))
		return bad(cmd, "%s follows the sender's symlinks, and the box never follows one (the "
			   "jail relies on it): it works with push", x->follow == FOLLOW_ALL ?
			   "-L/--copy-links" : "-k/--copy-dirlinks");
	log_init("ferry", x->co.quiet ? LOG_ERR : x->co.verbose > 1 ? LOG_DEBUG : LOG_WARN, 0);
	if ((x->flags & REQ_DRY_RUN) && !x->co.verbose && !x->itemize)
		x->co.verbose = 1;
	if (x->co.verbose || x->itemize || x->log_file)
		x->flags |= REQ_CHANGES;
	if (x->progress && !x->co.quiet)
		x->flags |= REQ_TOTALS;
	return 0;
}

int xfer_opts_parse(int argc, char **argv, struct xfer_cli *x)
{
	static struct option lo[N_RSYNC + N_OWN + 1];
	static char shorts[2 * N_RSYNC + 2];
	const char *cmd = argv[0];
	int ch, rc;

	if (!shorts[0])
		build(lo, shorts);
	memset(x, 0, sizeof *x);
	free(fargs);
	if (!(fargs = calloc((size_t)argc + 1, sizeof *fargs)))
		return bad(cmd, "out of memory");
	x->fargs = fargs;
	x->co.protection = PROT_ENCRYPT;
	x->co.timeout_ms = 30000;
	optind = 1;
	opterr = 0;   /* every message is ours: one line, never getopt's */
	while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (ch == '?' || ch == ':')
			return unknown(cmd, argv, ch);
		if (ch == 'V') {   /* rsync -V: the version, and nothing else */
			printf("ferry %s\n", FERRY_VERSION);
			exit(EXIT_OK);
		}
		if (ch == O_HELP)
			return bad(cmd, "see 'ferry help'");
		const struct rflag *f = ch >= O_TABLE ? &rsync_flags[ch - O_TABLE] : by_short(ch);
		if (f && f->act != OWN) {
			if (table_flag(cmd, argv, f) < 0)
				return -1;
			continue;
		}
		if ((rc = own_rsync(cmd, ch, x)) == 1)
			rc = own_ferry(cmd, ch, x);
		if (rc != 0)
			return -1;
	}
	return finish_opts(cmd, x) < 0 ? -1 : optind;
}

void xfer_opts_print_rsync(void)
{
	printf("rsync's flags in ferry push/pull (the same meaning, already ferry's behaviour, "
	       "or not supported):\n\n");
	for (size_t i = 0; i < N_RSYNC; i++) {
		const struct rflag *f = &rsync_flags[i];
		char name[64];
		snprintf(name, sizeof name, "%s%c%s%s%s", f->short_opt ? "-" : "",
			 f->short_opt ? f->short_opt : ' ', f->short_opt && f->name ? ", " : "",
			 f->name ? "--" : "", f->name ? f->name : "");
		printf("  %-26s %s%s%s\n", f->short_opt ? name : name + 1,
		       f->act == OWN ? "yes, as in rsync" : f->act == SAME ? "accepted: " : "no: ",
		       f->act == OWN && f->why ? "; " : "", f->why ? f->why : "");
	}
}
