/* SPDX-License-Identifier: MIT */
/* rsync's filter rules (--exclude, --include, --exclude-from, --include-from,
 * --filter, -F, merge and dir-merge files, --delete-excluded) as a pure
 * library: no file system access except through the read callback the caller
 * gives, so the caller decides where merge files come from (the jail, never
 * through a symlink). docs/FILTERS.md has the syntax, what is refused, the
 * wire form and the limits.
 *
 * The walker is the caller's, and must do what rsync does:
 *   - the transfer root itself is never matched;
 *   - filter_enter_dir(dir) before matching the entries of `dir` (this reads
 *     its dir-merge files), filter_leave_dir() when done with it, so the
 *     entered directories are always the path from the root to the entries
 *     being matched;
 *   - an entry whose verdict is FILTER_EXCLUDED is skipped, and an excluded
 *     directory is not entered: nothing below it is visited or sent, whatever
 *     later rules say about its contents;
 *   - the sender asks with FILTER_SENDER (excluded: not sent); the receiver,
 *     which deletes only in directories the sender sent, asks with
 *     FILTER_RECEIVER before --delete removes an entry there (excluded:
 *     protected, not deleted; a directory with all it holds). With
 *     --delete-excluded (filter_opts.delete_excluded) rules without a side
 *     (s, r, H, S, P, R) are the sender's only, so they protect nothing. */
#ifndef FERRY_UTIL_FILTER_H
#define FERRY_UTIL_FILTER_H

#include <stddef.h>
#include <stdint.h>

#define FILTER_MAX_RULES 1000          /* rules in a list, merge files expanded */
#define FILTER_MAX_TEXT 65536          /* bytes of rule text in a list (its wire form) */
#define FILTER_MAX_RULE 4096           /* bytes of one rule or one line of a file */
#define FILTER_MAX_FILE (1u << 20)     /* bytes of one merge or dir-merge file */
#define FILTER_MAX_MERGE_DEPTH 8       /* merge files merged by merge files */
#define FILTER_MAX_DIR_MERGES 8        /* distinct dir-merge file names in a list */
#define FILTER_MAX_DIR_RULES 10000     /* rules from dir-merge files of the entered directories */
#define FILTER_MAX_DIR_TEXT (1u << 20) /* ... and their bytes */
/* The largest encoding: header, then a length and the text of each rule. */
#define FILTER_MAX_WIRE (4 + 2 * FILTER_MAX_RULES + FILTER_MAX_TEXT)

/* The name -F reads in every directory (rsync's .rsync-filter). */
#define FILTER_F_NAME ".ferry-filter"

enum filter_side { FILTER_SENDER = 1, FILTER_RECEIVER = 2 };
enum filter_verdict { FILTER_EXCLUDED = -1, FILTER_NO_MATCH = 0, FILTER_INCLUDED = 1 };
/* How a rule's text is read: --filter's full syntax, or --exclude's and
 * --include's (a bare pattern; "- " and "+ " prefixes allowed). */
enum filter_syntax { FILTER_RULE, FILTER_EXCLUDE, FILTER_INCLUDE };

/* Reads a merge file. For a merge rule (". FILE") dir is NULL and name is
 * FILE as written; for a dir-merge rule dir is the directory being entered,
 * relative to the transfer root ("" for the root), and name the file's
 * basename. Returns 0 with *data (malloc'd, then the library's, which frees
 * it) holding *len bytes, -ENOENT when there is no such file (a missing
 * dir-merge file means no rules, as in rsync), or another negative errno
 * with err_set() saying why (a symlink must be refused, not followed). More
 * than FILTER_MAX_FILE bytes is an error of the library's. */
typedef int (*filter_read_fn)(void *ctx, const char *dir, const char *name, char **data,
			      size_t *len);

struct filter_opts {
	int delete_excluded;   /* --delete-excluded (it travels in the wire form) */
	filter_read_fn read;   /* NULL: merge rules are refused, dir-merge files unreadable */
	void *ctx;             /* for read */
};

struct filter_list;

/* An empty list (matches nothing) in *out; -ENOMEM. */
int filter_new(struct filter_list **out, const struct filter_opts *o);
/* Frees the list, its rules and every entered directory's rules. NULL is fine. */
void filter_free(struct filter_list *fl);

/* Adds one rule: --filter RULE (FILTER_RULE), --exclude PAT, --include PAT.
 * A merge rule reads its file now, through o->read. An empty --exclude or
 * --include adds nothing, as in rsync. -EINVAL (err_msg: "rule 'X': why")
 * for a bad or unsupported rule, -E2BIG past the limits, the reader's error
 * for a merge file it could not give; the list is then as it was before. */
int filter_add(struct filter_list *fl, enum filter_syntax syn, const char *rule);
/* Adds the lines of a file: --exclude-from (FILTER_EXCLUDE), --include-from
 * (FILTER_INCLUDE), or a merge file's rules (FILTER_RULE). Lines end at '\n'
 * or '\r'; empty lines and lines starting with '#' or ';' are skipped.
 * `what` names the file in errors ("FILE line N: ..."). All or nothing. */
int filter_add_file(struct filter_list *fl, enum filter_syntax syn, const char *data, size_t len,
		    const char *what);
/* -F: the first adds "dir-merge /.ferry-filter", the second
 * "- .ferry-filter", later ones nothing (rsync's -F and -FF). */
int filter_add_F(struct filter_list *fl);
/* Rules in the list (a dir-merge rule counts one, its files' rules none). */
size_t filter_count(const struct filter_list *fl);

/* Enters directory `dir` (relative to the transfer root, "" for the root;
 * the child of the directory entered last): reads its file for every
 * dir-merge rule through o->read. Their rules apply to dir and below until
 * the matching filter_leave_dir(), before the rules of the same dir-merge
 * rule read in the directories above (rsync's inheritance; a rule with 'n'
 * is not inherited), at the place of the dir-merge rule in the list. On
 * error (a bad rule, a limit, a read error other than ENOENT) nothing is
 * entered: the caller must not send, or delete in, that directory, and must
 * not call filter_leave_dir for it. */
int filter_enter_dir(struct filter_list *fl, const char *dir);
/* Leaves the directory entered last and drops its rules. */
void filter_leave_dir(struct filter_list *fl);

/* The first rule for `side` that matches path (relative to the transfer
 * root, components separated by '/', no leading "./" or '/', no trailing
 * '/', not empty)
 * decides: FILTER_INCLUDED, FILTER_EXCLUDED, or FILTER_NO_MATCH (included
 * by default). is_dir: the entry is a directory (a symlink is not). */
enum filter_verdict filter_match(const struct filter_list *fl, enum filter_side side,
				 const char *path, int is_dir);

/* The list in its wire form (docs/FILTERS.md): merge files already merged,
 * dir-merge rules as rules, --delete-excluded as a flag. *out is malloc'd
 * (the caller's), at most FILTER_MAX_WIRE bytes. 0 or -ENOMEM. */
int filter_encode(const struct filter_list *fl, uint8_t **out, size_t *len);
/* A list from a peer's bytes: every length checked against the limits,
 * every rule parsed as filter_add(FILTER_RULE) does, merge rules refused (a
 * peer never names a file for us to read); o->delete_excluded is ignored
 * (the flag comes from the bytes), o->read is used for dir-merge files.
 * -EPROTO for malformed bytes, -EINVAL / -E2BIG as filter_add. */
int filter_decode(const uint8_t *buf, size_t len, const struct filter_opts *o,
		  struct filter_list **out);

#endif
