/* SPDX-License-Identifier: MIT */
/* rsync's filter rules. The parser follows rsync's exclude.c rule by rule
 * (its prefixes, modifiers, separators and errors), the matcher follows its
 * rule_matches() and wildmatch() semantics (which string a pattern is matched
 * against, where it may start), written here as a non-recursive NFA so a
 * peer's pattern costs at most O(path x pattern) and no stack. */
#include "util/filter.h"

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

enum {
	R_INCLUDE = 1u << 0,
	R_SENDER = 1u << 1,          /* a side was named: s, H, S, or the merge rule's */
	R_RECEIVER = 1u << 2,        /* r, P, R */
	R_NEGATE = 1u << 3,          /* '!': the rule applies when the pattern does not match */
	R_DIRECTORY = 1u << 4,       /* a trailing '/': directories only */
	R_WILD = 1u << 5,            /* '*', '?' or '[' somewhere: wildcard matching */
	R_WILD2 = 1u << 6,           /* "**" somewhere */
	R_WILD2_PREFIX = 1u << 7,    /* starts with "**" */
	R_WILD3_SUFFIX = 1u << 8,    /* ends with "***" */
	R_MERGE = 1u << 9,           /* '.' */
	R_DIRMERGE = 1u << 10,       /* ':' */
	R_NO_PREFIXES = 1u << 11,    /* a merge rule's '-' or '+': its lines are bare patterns */
	R_NO_INHERIT = 1u << 12,     /* 'n' */
	R_EXCLUDE_SELF = 1u << 13,   /* 'e' */
	R_SIDE_BY_PREFIX = 1u << 14, /* H, S, P, R: 's' and 'r' are then invalid */
};
#define R_SIDES (R_SENDER | R_RECEIVER)
/* What a merge rule hands to the rules read from its file. */
#define R_TEMPLATE (R_NO_PREFIXES | R_INCLUDE | R_SIDES | R_NO_INHERIT)

/* A per-directory rule's pattern is "/" DIR PATTERN: at most this long. */
#define PAT_MAX (2 * FILTER_MAX_RULE + 2)
#define NAME_MAX_LEN 255

enum { T_LIT, T_ANY, T_CLASS, T_STAR, T_STAR2 };

struct tok {
	uint8_t op;
	uint8_t ch;    /* T_LIT */
	uint16_t cls;  /* T_CLASS: index into cpat.cls */
};

/* A wildcard pattern compiled into tokens. */
struct cpat {
	struct tok *t;
	uint8_t (*cls)[32];  /* one 256-bit set per class */
	uint32_t n;
	uint32_t ncls;
	bool never;          /* rsync's wildmatch aborts on it: it matches nothing */
};

struct rule {
	char *pat;           /* the pattern (trailing '/' removed) or the merge file's name */
	char *text;          /* the rule as the wire carries it; NULL in a dir-merge file */
	struct cpat cp;      /* when R_WILD */
	uint32_t flags;
	uint32_t slash_cnt;  /* '/' in pat */
	uint8_t sides;       /* the sides it applies to: FILTER_SENDER | FILTER_RECEIVER */
	uint8_t slot;        /* R_DIRMERGE: index into filter_list.slots */
};

struct rules {
	struct rule *v;
	size_t n, cap;
};

/* A dir-merge rule: the basename it reads in every directory and what its
 * rules inherit from it. */
struct slot {
	char name[NAME_MAX_LEN + 1];
	uint32_t flags;
};

/* The rules one directory's file gave one dir-merge rule. */
struct frame {
	struct rules rs;
	size_t depth;   /* the directory's: 1 for the transfer root */
	uint8_t slot;
};

struct filter_list {
	struct filter_opts o;
	struct rules top;
	size_t top_text;              /* bytes of top's rule texts */
	struct slot slots[FILTER_MAX_DIR_MERGES];
	unsigned nslots;
	struct frame *fr;             /* a stack: deeper directories last */
	size_t nfr, capfr;
	size_t depth;                 /* directories entered */
	size_t dir_rules, dir_text;   /* in fr: bounded by FILTER_MAX_DIR_* */
	unsigned f_count;             /* -F given so far */
	bool from_wire;               /* refuse merge rules: a peer names no file of ours */
};

/* Where the rules being parsed come from, and how to read them. */
struct ctx {
	struct filter_list *fl;
	struct rules *out;        /* &fl->top, or a frame's */
	const char *file;         /* NULL: an argument */
	const char *unit;         /* " line " or " rule " (with file) */
	size_t line;
	enum filter_syntax syn;   /* FILTER_EXCLUDE/INCLUDE: --exclude's syntax */
	uint32_t tmpl;            /* the R_TEMPLATE flags of the merge rule being read */
	const char *dir;          /* a dir-merge file's directory; NULL otherwise */
	int depth;                /* merge files above this one */
};

/* ---- errors ---------------------------------------------------------- */

/* s for an error line: printable ASCII kept, the rest as \xNN, long ones cut. */
static void quote(char *dst, size_t cap, const char *s, size_t n)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool plain = c >= 0x20 && c < 0x7f && c != '\\';
		if (o + (plain ? 1 : 4) + 4 > cap) {
			memcpy(dst + o, "...", 3);
			o += 3;
			break;
		}
		if (plain)
			dst[o++] = (char)c;
		else
			o += (size_t)snprintf(dst + o, cap - o, "\\x%02x", c);
	}
	dst[o] = '\0';
}

__attribute__((format(printf, 5, 6)))
static int bad(const struct ctx *c, int code, const char *rule, size_t len, const char *fmt, ...)
{
	char why[256], q[128], where[192] = "";
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof why, fmt, ap);
	va_end(ap);
	quote(q, sizeof q, rule, len);
	if (c->file) {
		char f[128];
		quote(f, sizeof f, c->file, strlen(c->file));
		snprintf(where, sizeof where, "%s%s%zu: ", f, c->unit, c->line);
	}
	return err_set(code, "%srule '%s': %s", where, q, why);
}

/* ---- wildcard patterns ------------------------------------------------- */

static void set_bit(uint8_t *set, unsigned c)
{
	set[c >> 3] |= (uint8_t)(1u << (c & 7));
}

static bool in_set(const uint8_t *set, unsigned c)
{
	return set[c >> 3] & (1u << (c & 7));
}

/* rsync's [:name:] classes, ASCII only (its ISALPHA() & co.). */
static const char *const class_names[] = { "alnum", "alpha", "blank", "cntrl", "digit", "graph",
					   "lower", "print", "punct", "space", "upper", "xdigit" };

static bool class_member(size_t k, unsigned c)
{
	bool up = c >= 'A' && c <= 'Z', lo = c >= 'a' && c <= 'z', dg = c >= '0' && c <= '9';
	bool graph = c > 0x20 && c < 0x7f;

	switch (k) {
	case 0: return up || lo || dg;
	case 1: return up || lo;
	case 2: return c == ' ' || c == '\t';
	case 3: return c < 0x20 || c == 0x7f;
	case 4: return dg;
	case 5: return graph;
	case 6: return lo;
	case 7: return graph || c == ' ';
	case 8: return graph && !(up || lo || dg);
	case 9: return c == ' ' || (c >= '\t' && c <= '\r');
	case 10: return up;
	default: return dg || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
	}
}

/* Adds [:name:]'s members; false for a name rsync does not know. */
static bool add_named(uint8_t *set, const char *name, size_t n)
{
	for (size_t k = 0; k < sizeof class_names / sizeof class_names[0]; k++) {
		if (strlen(class_names[k]) != n || memcmp(class_names[k], name, n) != 0)
			continue;
		for (unsigned c = 1; c < 256; c++)
			if (class_member(k, c))
				set_bit(set, c);
		return true;
	}
	return false;
}

/* The class whose '[' is at p[i-1], as rsync's wildmatch reads it: the
 * first member may be ']', '!' or '^' negates, "a-z" ranges (a '-' first or
 * last is itself), '\' escapes, [:name:] (without ":]" the '[' is itself).
 * Returns the index after the closing ']', or 0 when the class never
 * matches (unterminated, unknown name). */
static size_t compile_class(const char *p, size_t n, size_t i, uint8_t set[32])
{
	unsigned pc, prev = 0;
	bool neg;

	memset(set, 0, 32);
	if (i >= n)
		return 0;
	pc = (unsigned char)p[i];
	neg = pc == '!' || pc == '^';
	if (neg) {
		if (++i >= n)
			return 0;
		pc = (unsigned char)p[i];
	}
	do {
		if (pc == '\\') {
			if (++i >= n)
				return 0;
			pc = (unsigned char)p[i];
			set_bit(set, pc);
		} else if (pc == '-' && prev && i + 1 < n && p[i + 1] != ']') {
			pc = (unsigned char)p[++i];
			if (pc == '\\') {
				if (++i >= n)
					return 0;
				pc = (unsigned char)p[i];
			}
			for (unsigned c = prev; c <= pc; c++)
				set_bit(set, c);
			pc = 0;
		} else if (pc == '[' && i + 1 < n && p[i + 1] == ':') {
			size_t s = i + 2, j = s;
			while (j < n && p[j] != ']')
				j++;
			if (j >= n)
				return 0;
			if (j == s || p[j - 1] != ':') {
				set_bit(set, '[');   /* no ":]": a plain '[', then go on after it */
			} else {
				if (!add_named(set, p + s, j - s - 1))
					return 0;
				pc = 0;
				i = j;
			}
		} else {
			set_bit(set, pc);
		}
		prev = pc;
		if (++i >= n)
			return 0;
		pc = (unsigned char)p[i];
	} while (pc != ']');
	if (neg)
		for (size_t k = 0; k < 32; k++)
			set[k] = (uint8_t)~set[k];
	set['/' >> 3] &= (uint8_t)~(1u << ('/' & 7));   /* a class never matches '/' */
	set[0] &= (uint8_t)~1u;
	return i + 1;
}

static void cpat_free(struct cpat *cp)
{
	free(cp->t);
	free(cp->cls);
	memset(cp, 0, sizeof *cp);
}

static int compile(struct cpat *cp, const char *p, size_t n)
{
	size_t nbr = 0;

	memset(cp, 0, sizeof *cp);
	for (size_t i = 0; i < n; i++)
		nbr += p[i] == '[';
	cp->t = malloc((n ? n : 1) * sizeof *cp->t);
	cp->cls = nbr ? malloc(nbr * sizeof *cp->cls) : NULL;
	if (!cp->t || (nbr && !cp->cls)) {
		cpat_free(cp);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n && !cp->never;) {
		struct tok *t = &cp->t[cp->n++];
		unsigned char c = (unsigned char)p[i];
		memset(t, 0, sizeof *t);
		if (c == '\\') {
			if (i + 1 >= n)
				cp->never = true;   /* a trailing '\' matches nothing */
			else
				*t = (struct tok){ T_LIT, (uint8_t)p[i + 1], 0 };
			i += 2;
		} else if (c == '?') {
			t->op = T_ANY;
			i++;
		} else if (c == '*') {
			size_t j = i;
			while (j < n && p[j] == '*')
				j++;
			t->op = j - i >= 2 ? T_STAR2 : T_STAR;
			i = j;
		} else if (c == '[') {
			size_t next = compile_class(p, n, i + 1, cp->cls[cp->ncls]);
			if (!next) {
				cp->never = true;
				break;
			}
			*t = (struct tok){ T_CLASS, 0, (uint16_t)cp->ncls++ };
			i = next;
		} else {
			*t = (struct tok){ T_LIT, c, 0 };
			i++;
		}
	}
	return 0;
}

/* The text a pattern is matched against: rsync's array of strings (an
 * optional leading "/", the name, an optional trailing "/"). */
struct subj {
	const char *s[3];
	size_t n[3];
};

#define W_MAX ((PAT_MAX + 1 + 63) / 64)

static void bset(uint64_t *b, size_t i)
{
	b[i / 64] |= 1ull << (i % 64);
}

/* Follows the empty matches of '*' and '**': forward only, so one pass. */
static void closure(const struct cpat *cp, uint64_t *b, size_t w)
{
	for (size_t wi = 0; wi < w; wi++) {
		uint64_t m = b[wi];
		while (m) {
			size_t i = wi * 64 + (size_t)__builtin_ctzll(m);
			m &= m - 1;
			if (i < cp->n && (cp->t[i].op == T_STAR || cp->t[i].op == T_STAR2)) {
				bset(b, i + 1);
				if ((i + 1) / 64 == wi)
					m |= 1ull << ((i + 1) % 64);
			}
		}
	}
}

static void step(const struct cpat *cp, const uint64_t *cur, uint64_t *nxt, size_t w, unsigned c)
{
	for (size_t wi = 0; wi < w; wi++) {
		for (uint64_t m = cur[wi]; m; m &= m - 1) {
			size_t i = wi * 64 + (size_t)__builtin_ctzll(m);
			if (i >= cp->n)
				continue;
			const struct tok *t = &cp->t[i];
			switch (t->op) {
			case T_LIT: if (c == t->ch) bset(nxt, i + 1); break;
			case T_ANY: if (c != '/') bset(nxt, i + 1); break;
			case T_CLASS: if (in_set(cp->cls[t->cls], c)) bset(nxt, i + 1); break;
			case T_STAR: if (c != '/') bset(nxt, i); break;
			default: bset(nxt, i); break;
			}
		}
	}
}

/* Does the whole of sj match? every_slash: a match may also start after
 * any '/' (rsync's "try after every slash" for an unanchored "**"). */
static bool wild(const struct cpat *cp, const struct subj *sj, bool every_slash)
{
	uint64_t a[W_MAX], b[W_MAX], *cur = a, *nxt = b;
	size_t w = (cp->n + 1 + 63) / 64;
	bool live = true;

	if (cp->never)
		return false;
	memset(cur, 0, w * sizeof *cur);
	bset(cur, 0);
	closure(cp, cur, w);
	for (int k = 0; k < 3; k++) {
		for (size_t j = 0; j < sj->n[k]; j++) {
			unsigned c = (unsigned char)sj->s[k][j];
			memset(nxt, 0, w * sizeof *nxt);
			step(cp, cur, nxt, w, c);
			if (every_slash && c == '/')
				bset(nxt, 0);
			closure(cp, nxt, w);
			uint64_t *x = cur;
			cur = nxt;
			nxt = x;
			live = false;
			for (size_t wi = 0; wi < w && !live; wi++)
				live = cur[wi] != 0;
			if (!live && !every_slash)
				return false;
		}
	}
	return (cur[cp->n / 64] >> (cp->n % 64)) & 1;
}

/* ---- one rule against one path (rsync's rule_matches) ----------------- */

static bool rule_matches(const struct rule *r, const char *path, size_t plen, bool is_dir)
{
	bool hit = !(r->flags & R_NEGATE);
	const char *name = path, *pat = r->pat;
	size_t nlen = plen;
	struct subj sj = { { "", "", "" }, { 0, 0, 0 } };
	bool anchored = pat[0] == '/';

	if (!plen)
		return false;
	if (!r->slash_cnt && !(r->flags & R_WILD2)) {
		const char *sl = memrchr(path, '/', plen);
		if (sl) {
			name = sl + 1;   /* no '/' in the pattern: the last component only */
			nlen = (size_t)(path + plen - name);
		}
	} else if (r->flags & R_WILD2_PREFIX) {
		sj.s[0] = "/";   /* so "**" + "/" also matches at the start */
		sj.n[0] = 1;
	}
	if (is_dir && (r->flags & R_WILD3_SUFFIX)) {
		sj.s[2] = "/";   /* so that DIR + "/" + "***" matches DIR itself */
		sj.n[2] = 1;
	} else if (!is_dir && (r->flags & R_DIRECTORY)) {
		return !hit;
	}
	if (anchored)
		pat++;

	if (r->flags & R_WILD) {
		bool every = false;
		if (!anchored && r->slash_cnt && !(r->flags & R_WILD2)) {
			/* "a/b*": against the last slash_cnt + 1 components */
			size_t need = r->slash_cnt + 1, k = nlen;
			while (k > 0 && need > 0)
				if (name[--k] == '/' && --need == 0)
					k++;
			if (need > 1)
				return !hit;
			name += k;
			nlen -= k;
		} else if (!anchored && !(r->flags & R_WILD2_PREFIX) && (r->flags & R_WILD2)) {
			every = true;
		}
		sj.s[1] = name;
		sj.n[1] = nlen;
		return wild(&r->cp, &sj, every) ? hit : !hit;
	}
	size_t l2 = strlen(pat);
	if (anchored)
		return nlen == l2 && memcmp(name, pat, l2) == 0 ? hit : !hit;
	/* a tail of whole components */
	if (l2 <= nlen && memcmp(name + nlen - l2, pat, l2) == 0 &&
	    (l2 == nlen || name[nlen - l2 - 1] == '/'))
		return hit;
	return !hit;
}

/* ---- rule storage ------------------------------------------------------ */

static void rule_free(struct rule *r)
{
	free(r->pat);
	free(r->text);
	cpat_free(&r->cp);
}

static void rules_truncate(struct rules *rs, size_t n)
{
	while (rs->n > n)
		rule_free(&rs->v[--rs->n]);
}

static void rules_free(struct rules *rs)
{
	rules_truncate(rs, 0);
	free(rs->v);
	memset(rs, 0, sizeof *rs);
}

/* Appends r (its allocations become the list's, or are freed on error). */
static int push_rule(struct ctx *c, struct rule *r, const char *rule, size_t len)
{
	struct filter_list *fl = c->fl;
	struct rules *rs = c->out;
	size_t tl = r->text ? strlen(r->text) : 0;

	if (rs == &fl->top) {
		if (rs->n >= FILTER_MAX_RULES) {
			rule_free(r);
			return bad(c, -E2BIG, rule, len, "more than %d filter rules", FILTER_MAX_RULES);
		}
		if (tl > FILTER_MAX_RULE) {
			rule_free(r);
			return bad(c, -E2BIG, rule, len, "longer than %d bytes as sent", FILTER_MAX_RULE);
		}
		if (fl->top_text + tl > FILTER_MAX_TEXT) {
			rule_free(r);
			return bad(c, -E2BIG, rule, len, "more than %d bytes of filter rules",
				   FILTER_MAX_TEXT);
		}
	} else if (fl->dir_rules >= FILTER_MAX_DIR_RULES ||
		   fl->dir_text + strlen(r->pat) > FILTER_MAX_DIR_TEXT) {
		rule_free(r);
		return bad(c, -E2BIG, rule, len,
			   "the dir-merge files of the directories entered have more than %d rules or %u bytes",
			   FILTER_MAX_DIR_RULES, FILTER_MAX_DIR_TEXT);
	}
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 8;
		struct rule *v = realloc(rs->v, cap * sizeof *v);
		if (!v) {
			rule_free(r);
			return err_set(-ENOMEM, "filter rules: out of memory");
		}
		rs->v = v;
		rs->cap = cap;
	}
	rs->v[rs->n++] = *r;
	if (rs == &fl->top) {
		fl->top_text += tl;
	} else {
		fl->dir_rules++;
		fl->dir_text += strlen(r->pat);
	}
	return 0;
}

static uint8_t sides_of(const struct filter_list *fl, uint32_t flags)
{
	uint8_t s = (uint8_t)(((flags & R_SENDER) ? FILTER_SENDER : 0) |
			      ((flags & R_RECEIVER) ? FILTER_RECEIVER : 0));
	if (s)
		return s;
	/* --delete-excluded: a rule without a side hides, but protects nothing */
	return fl->o.delete_excluded ? FILTER_SENDER : FILTER_SENDER | FILTER_RECEIVER;
}

/* The wire form of a rule: its prefix, modifiers, one space, its argument. */
static char *rule_text(uint32_t flags, const char *arg, size_t alen)
{
	char head[8];
	size_t h = 0;
	char *t;

	if (flags & R_DIRMERGE) {
		head[h++] = ':';
		if (flags & R_NO_INHERIT)
			head[h++] = 'n';
		if (flags & R_NO_PREFIXES)
			head[h++] = (flags & R_INCLUDE) ? '+' : '-';
	} else {
		head[h++] = (flags & R_INCLUDE) ? '+' : '-';
		if (flags & R_NEGATE)
			head[h++] = '!';
	}
	if (flags & R_SENDER)
		head[h++] = 's';
	if (flags & R_RECEIVER)
		head[h++] = 'r';
	head[h++] = ' ';
	if (!(t = malloc(h + alen + 1)))
		return NULL;
	memcpy(t, head, h);
	memcpy(t + h, arg, alen);
	t[h + alen] = '\0';
	return t;
}

/* An include or exclude rule: rsync's add_rule(). */
static int add_pattern(struct ctx *c, uint32_t flags, const char *arg, size_t alen,
		       const char *rule, size_t len)
{
	struct rule r = { 0 };
	size_t plen = alen, pre = 0, dl = 0;
	const char *cp;

	if (plen > 1 && arg[plen - 1] == '/') {
		flags |= R_DIRECTORY;
		plen--;
	}
	/* Anchored in a dir-merge file: at that file's directory. Like rsync,
	 * the directory's path becomes part of the pattern. */
	if (c->dir && arg[0] == '/' && c->dir[0]) {
		dl = strlen(c->dir);
		pre = 1 + dl;
	}
	if (!(r.pat = malloc(pre + plen + 1)))
		return err_set(-ENOMEM, "filter rules: out of memory");
	if (pre) {
		r.pat[0] = '/';
		memcpy(r.pat + 1, c->dir, dl);
	}
	memcpy(r.pat + pre, arg, plen);
	r.pat[pre + plen] = '\0';
	plen += pre;
	for (size_t i = 0; i < plen; i++)
		r.slash_cnt += r.pat[i] == '/';
	if (strpbrk(r.pat, "*?[")) {
		flags |= R_WILD;
		if ((cp = strstr(r.pat, "**")) != NULL) {
			flags |= R_WILD2;
			if (cp == r.pat)
				flags |= R_WILD2_PREFIX;
			if (plen >= 3 && strcmp(r.pat + plen - 3, "***") == 0)
				flags |= R_WILD3_SUFFIX;
		}
		size_t skip = r.pat[0] == '/';
		if (compile(&r.cp, r.pat + skip, plen - skip) < 0) {
			free(r.pat);
			return err_set(-ENOMEM, "filter rules: out of memory");
		}
	}
	r.flags = flags;
	r.sides = sides_of(c->fl, flags);
	if (c->out == &c->fl->top && !(r.text = rule_text(flags, arg, alen))) {
		rule_free(&r);
		return err_set(-ENOMEM, "filter rules: out of memory");
	}
	return push_rule(c, &r, rule, len);
}

static int parse_lines(struct ctx *c, const char *data, size_t len);

/* ". FILE": its rules, read now, in place of the rule. */
static int add_merge_file(struct ctx *c, uint32_t flags, const char *name, const char *rule,
			  size_t len)
{
	struct filter_list *fl = c->fl;
	char *data = NULL;
	size_t dlen = 0;
	int rc;

	if (fl->from_wire)
		return bad(c, -EINVAL, rule, len, "a merge rule is not accepted from the peer");
	if (!fl->o.read)
		return bad(c, -EINVAL, rule, len, "merge files cannot be read here");
	if (c->depth >= FILTER_MAX_MERGE_DEPTH)
		return bad(c, -E2BIG, rule, len, "merge files nested more than %d deep",
			   FILTER_MAX_MERGE_DEPTH);
	if ((rc = fl->o.read(fl->o.ctx, NULL, name, &data, &dlen)) < 0) {
		char q[128];
		quote(q, sizeof q, rule, len);
		return err_wrap(rc, "rule '%s'", q);
	}
	if (dlen > FILTER_MAX_FILE) {
		free(data);
		return bad(c, -E2BIG, rule, len, "the file has more than %u bytes", FILTER_MAX_FILE);
	}
	struct ctx in = { .fl = fl, .out = c->out, .file = name, .unit = " line ", .syn = FILTER_RULE,
			  .tmpl = flags & R_TEMPLATE, .depth = c->depth + 1 };
	rc = parse_lines(&in, data, dlen);
	free(data);
	return rc;
}

/* ": NAME": remembered; its files are read as directories are entered. */
static int add_dir_merge(struct ctx *c, uint32_t flags, const char *arg, size_t alen,
			 const char *rule, size_t len)
{
	struct filter_list *fl = c->fl;
	const char *base = arg + (arg[0] == '/');
	size_t blen = alen - (size_t)(base - arg);
	struct rule r = { 0 };

	/* A leading '/' is -F's "also in the parent directories" (rsync): ferry
	 * reads from the transfer root down, which for a module is its root. */
	if (!blen || memchr(base, '/', blen) || (blen == 1 && base[0] == '.') ||
	    (blen == 2 && base[0] == '.' && base[1] == '.'))
		return bad(c, -EINVAL, rule, len, "a dir-merge file is a name in each directory, not a path");
	if (blen > NAME_MAX_LEN)
		return bad(c, -EINVAL, rule, len, "the dir-merge file name is longer than %d bytes",
			   NAME_MAX_LEN);
	for (unsigned i = 0; i < fl->nslots; i++)
		if (strlen(fl->slots[i].name) == blen && memcmp(fl->slots[i].name, base, blen) == 0)
			return 0;   /* rsync reads a name once: the first rule wins */
	if (fl->nslots >= FILTER_MAX_DIR_MERGES)
		return bad(c, -E2BIG, rule, len, "more than %d dir-merge rules", FILTER_MAX_DIR_MERGES);
	if (!(r.pat = strndup(arg, alen)) || !(r.text = rule_text(flags, arg, alen))) {
		rule_free(&r);
		return err_set(-ENOMEM, "filter rules: out of memory");
	}
	r.flags = flags;
	r.slot = (uint8_t)fl->nslots;
	int rc = push_rule(c, &r, rule, len);
	if (rc == 0) {
		struct slot *s = &fl->slots[fl->nslots++];
		memcpy(s->name, base, blen);
		s->name[blen] = '\0';
		s->flags = flags & R_TEMPLATE;
	}
	return rc;
}

static int add_merge(struct ctx *c, uint32_t flags, const char *arg, size_t alen,
		     const char *rule, size_t len)
{
	char *name;
	int rc;

	if (c->dir)
		return bad(c, -EINVAL, rule, len, "merge and dir-merge rules in a dir-merge file are not supported");
	if (flags & R_EXCLUDE_SELF) {
		/* 'e': "- BASENAME" first, as rsync adds it */
		const char *b = arg + alen;
		while (b > arg && b[-1] != '/')
			b--;
		if (b == arg + alen)
			return bad(c, -EINVAL, rule, len, "the merge file name ends in '/'");
		if ((rc = add_pattern(c, 0, b, (size_t)(arg + alen - b), rule, len)) < 0)
			return rc;
	}
	if (flags & R_DIRMERGE)
		return add_dir_merge(c, flags & ~R_EXCLUDE_SELF, arg, alen, rule, len);
	if (!(name = strndup(arg, alen)))
		return err_set(-ENOMEM, "filter rules: out of memory");
	rc = add_merge_file(c, flags, name, rule, len);
	free(name);
	return rc;
}

/* ---- parsing (rsync's parse_rule_tok) ---------------------------------- */

static const struct {
	const char *name;
	char ch;
} long_names[] = {
	{ "clear", '!' }, { "dir-merge", ':' }, { "exclude", '-' }, { "hide", 'H' },
	{ "include", '+' }, { "merge", '.' }, { "protect", 'P' }, { "risk", 'R' }, { "show", 'S' },
};

/* The rule's letter in *ch and the index of the last character before its
 * modifiers in *at; 0, or -EINVAL for an unknown rule. */
static int rule_name(const struct ctx *c, const char *s, size_t len, char *ch, size_t *at)
{
	if (strchr("cdehimprs", s[0])) {
		for (size_t k = 0; k < sizeof long_names / sizeof long_names[0]; k++) {
			size_t n = strlen(long_names[k].name);
			if (len < n || memcmp(s, long_names[k].name, n) != 0)
				continue;
			if (n == len || s[n] == '_' || strchr(" \t\n\v\f\r", s[n])) {
				*ch = long_names[k].ch;
				*at = n - 1;
				return 0;
			}
			if (s[n] == ',') {
				*ch = long_names[k].ch;
				*at = n;
				return 0;
			}
		}
		return bad(c, -EINVAL, s, len, "unknown rule");
	}
	*ch = s[0];
	*at = len > 1 && s[1] == ',' ? 1 : 0;
	return 0;
}

static int modifier(const struct ctx *c, char m, uint32_t *flags, const char *s, size_t len)
{
	bool merge = *flags & (R_MERGE | R_DIRMERGE);

	switch (m) {
	case '-':
	case '+':
		if (!merge || (*flags & R_NO_PREFIXES))
			break;
		*flags |= R_NO_PREFIXES | (m == '+' ? R_INCLUDE : 0);
		return 0;
	case '!':
		if (merge)
			break;
		*flags |= R_NEGATE;
		return 0;
	case 'e':
	case 'n':
		if (!merge)
			break;
		*flags |= m == 'e' ? R_EXCLUDE_SELF : R_NO_INHERIT;
		return 0;
	case 's':
	case 'r':
		if (*flags & R_SIDE_BY_PREFIX)
			break;
		*flags |= m == 's' ? R_SENDER : R_RECEIVER;
		return 0;
	case 'w':
		if (!merge)
			break;
		return bad(c, -EINVAL, s, len, "modifier 'w' (word-split merge file) is not supported");
	case 'C':
		if ((*flags & R_NO_PREFIXES) || (*flags & R_SIDE_BY_PREFIX))
			break;
		return bad(c, -EINVAL, s, len, "modifier 'C' (CVS excludes) is not supported");
	case '/':
		return bad(c, -EINVAL, s, len, "modifier '/' (absolute-path matching) is not supported");
	case 'p':
		return bad(c, -EINVAL, s, len, "modifier 'p' (perishable) is not supported");
	case 'x':
		return bad(c, -EINVAL, s, len, "modifier 'x' (xattr names) is not supported");
	default:
		break;
	}
	char q[8];
	quote(q, sizeof q, &m, 1);
	return bad(c, -EINVAL, s, len, "invalid modifier '%s'", q);
}

/* --filter's syntax: RULE[,MODIFIERS][ |_]ARG. */
static int parse_prefix(const struct ctx *c, const char *s, size_t len, uint32_t *flags,
			size_t *argat)
{
	size_t i = 0;
	char ch = 0;
	int rc;

	if ((rc = rule_name(c, s, len, &ch, &i)) < 0)
		return rc;
	switch (ch) {
	case ':': *flags = R_DIRMERGE; break;
	case '.': *flags = R_MERGE; break;
	case '+': *flags = R_INCLUDE; break;
	case '-': *flags = 0; break;
	case 'S': *flags = R_INCLUDE | R_SENDER | R_SIDE_BY_PREFIX; break;
	case 'H': *flags = R_SENDER | R_SIDE_BY_PREFIX; break;
	case 'R': *flags = R_INCLUDE | R_RECEIVER | R_SIDE_BY_PREFIX; break;
	case 'P': *flags = R_RECEIVER | R_SIDE_BY_PREFIX; break;
	case '!': return bad(c, -EINVAL, s, len, "clearing the list ('!') is not supported");
	default: return bad(c, -EINVAL, s, len, "unknown rule");
	}
	while (++i < len && s[i] != ' ' && s[i] != '_')
		if ((rc = modifier(c, s[i], flags, s, len)) < 0)
			return rc;
	*argat = i < len ? i + 1 : len;
	return 0;
}

/* One rule: a --filter argument, an --exclude pattern, a line of a file. */
static int parse_rule(struct ctx *c, const char *s, size_t len)
{
	uint32_t flags = 0;
	size_t at = 0;
	int rc;

	if (len > FILTER_MAX_RULE)
		return bad(c, -E2BIG, s, len, "longer than %d bytes", FILTER_MAX_RULE);
	if (memchr(s, '\0', len))
		return bad(c, -EINVAL, s, len, "a NUL byte in a rule");
	if (c->tmpl & R_NO_PREFIXES) {
		flags = c->tmpl & R_INCLUDE;   /* the whole line is the pattern */
	} else if (c->syn != FILTER_RULE) {
		flags = c->syn == FILTER_INCLUDE ? R_INCLUDE : 0;
		if (len >= 2 && (s[0] == '-' || s[0] == '+') && s[1] == ' ') {
			flags = s[0] == '+' ? R_INCLUDE : 0;
			at = 2;
		} else if (len == 1 && s[0] == '!') {
			return bad(c, -EINVAL, s, len, "clearing the list ('!') is not supported");
		}
	} else {
		if (!len)
			return bad(c, -EINVAL, s, len, "unknown rule");
		if ((rc = parse_prefix(c, s, len, &flags, &at)) < 0)
			return rc;
	}
	if (c->tmpl & R_SIDES) {
		if (flags & R_SIDES)
			return bad(c, -EINVAL, s, len, "a side given in a merge file that has one");
		flags |= c->tmpl & R_SIDES;
	}
	if (at >= len)
		return bad(c, -EINVAL, s, len, "no pattern");
	if (flags & (R_MERGE | R_DIRMERGE))
		return add_merge(c, flags, s + at, len - at, s, len);
	return add_pattern(c, flags, s + at, len - at, s, len);
}

/* A file's rules: lines end at '\n' or '\r'; empty lines and those starting
 * with '#' or ';' are skipped (rsync's parse_filter_file). */
static int parse_lines(struct ctx *c, const char *data, size_t len)
{
	size_t i = 0;
	int rc;

	c->line = 0;
	while (i < len) {
		size_t j = i;
		while (j < len && data[j] != '\n' && data[j] != '\r')
			j++;
		c->line++;
		if (j > i && data[i] != '#' && data[i] != ';' && (rc = parse_rule(c, data + i, j - i)) < 0)
			return rc;
		if (j + 1 < len && data[j] == '\r' && data[j + 1] == '\n')
			j++;   /* one line, for the line numbers */
		i = j + 1;
	}
	return 0;
}

/* ---- the list ---------------------------------------------------------- */

int filter_new(struct filter_list **out, const struct filter_opts *o)
{
	struct filter_list *fl = calloc(1, sizeof *fl);

	*out = NULL;
	if (!fl)
		return err_set(-ENOMEM, "filter rules: out of memory");
	if (o)
		fl->o = *o;
	*out = fl;
	return 0;
}

static void drop_frames(struct filter_list *fl, size_t n)
{
	while (fl->nfr > n) {
		struct frame *f = &fl->fr[--fl->nfr];
		fl->dir_rules -= f->rs.n;
		for (size_t i = 0; i < f->rs.n; i++)
			fl->dir_text -= strlen(f->rs.v[i].pat);
		rules_free(&f->rs);
	}
}

void filter_free(struct filter_list *fl)
{
	if (!fl)
		return;
	drop_frames(fl, 0);
	free(fl->fr);
	rules_free(&fl->top);
	free(fl);
}

/* Undoes a failed addition, so the list is as before it. */
static int undo(struct filter_list *fl, size_t n, size_t text, unsigned nslots, int rc)
{
	rules_truncate(&fl->top, n);
	fl->top_text = text;
	fl->nslots = nslots;
	return rc;
}

static int add_top(struct filter_list *fl, enum filter_syntax syn, const char *data, size_t len,
		   const char *what, bool lines)
{
	struct ctx c = { .fl = fl, .out = &fl->top, .file = what, .unit = " line ", .syn = syn };
	size_t n = fl->top.n, text = fl->top_text;
	unsigned nslots = fl->nslots;
	int rc;

	if (lines)
		rc = parse_lines(&c, data, len);
	else if (syn != FILTER_RULE && len == 0)
		rc = 0;   /* --exclude= adds nothing, as in rsync */
	else
		rc = parse_rule(&c, data, len);
	return rc < 0 ? undo(fl, n, text, nslots, rc) : 0;
}

int filter_add(struct filter_list *fl, enum filter_syntax syn, const char *rule)
{
	return add_top(fl, syn, rule, strlen(rule), NULL, false);
}

int filter_add_file(struct filter_list *fl, enum filter_syntax syn, const char *data, size_t len,
		    const char *what)
{
	if (len > FILTER_MAX_FILE)
		return err_set(-E2BIG, "%s: more than %u bytes of filter rules", what, FILTER_MAX_FILE);
	return add_top(fl, syn, data, len, what ? what : "filter file", true);
}

int filter_add_F(struct filter_list *fl)
{
	int rc = 0;

	if (fl->f_count == 0)
		rc = filter_add(fl, FILTER_RULE, ": /" FILTER_F_NAME);
	else if (fl->f_count == 1)
		rc = filter_add(fl, FILTER_RULE, "- " FILTER_F_NAME);
	if (rc == 0)
		fl->f_count++;
	return rc;
}

size_t filter_count(const struct filter_list *fl)
{
	return fl->top.n;
}

/* ---- directories ------------------------------------------------------- */

/* dir's file for one dir-merge rule, onto the frame stack (nothing if the
 * file is missing or has no rules). */
static int read_dir_file(struct filter_list *fl, const char *dir, unsigned slot)
{
	const struct slot *s = &fl->slots[slot];
	char *data = NULL, where[FILTER_MAX_RULE + NAME_MAX_LEN + 2];
	size_t len = 0;
	int rc;

	if ((rc = fl->o.read(fl->o.ctx, dir, s->name, &data, &len)) == -ENOENT)
		return 0;
	if (rc < 0)
		return rc;
	snprintf(where, sizeof where, "%s%s%s", dir, dir[0] ? "/" : "", s->name);
	if (len > FILTER_MAX_FILE) {
		free(data);
		return err_set(-E2BIG, "%s: more than %u bytes of filter rules", where, FILTER_MAX_FILE);
	}
	if (fl->nfr == fl->capfr) {
		size_t cap = fl->capfr ? 2 * fl->capfr : 8;
		struct frame *v = realloc(fl->fr, cap * sizeof *v);
		if (!v) {
			free(data);
			return err_set(-ENOMEM, "filter rules: out of memory");
		}
		fl->fr = v;
		fl->capfr = cap;
	}
	struct frame *f = &fl->fr[fl->nfr++];
	memset(f, 0, sizeof *f);
	f->depth = fl->depth + 1;
	f->slot = (uint8_t)slot;
	struct ctx c = { .fl = fl, .out = &f->rs, .file = where, .unit = " line ", .syn = FILTER_RULE,
			 .tmpl = s->flags, .dir = dir };
	rc = parse_lines(&c, data, len);
	free(data);
	if (rc == 0 && f->rs.n == 0)
		drop_frames(fl, fl->nfr - 1);
	return rc;
}

int filter_enter_dir(struct filter_list *fl, const char *dir)
{
	size_t nfr = fl->nfr;
	int rc;

	if (strcmp(dir, ".") == 0)
		dir = "";
	if (fl->nslots) {
		if (!fl->o.read)
			return err_set(-EINVAL, "%s: dir-merge files cannot be read here", dir);
		if (dir[0] == '/' || strlen(dir) >= FILTER_MAX_RULE)
			return err_set(-EINVAL, "filter: bad directory %.64s", dir);
		for (unsigned i = 0; i < fl->nslots; i++) {
			if ((rc = read_dir_file(fl, dir, i)) < 0) {
				drop_frames(fl, nfr);
				return rc;
			}
		}
	}
	fl->depth++;
	return 0;
}

void filter_leave_dir(struct filter_list *fl)
{
	size_t n = fl->nfr;

	if (!fl->depth)
		return;
	while (n > 0 && fl->fr[n - 1].depth == fl->depth)
		n--;
	drop_frames(fl, n);
	fl->depth--;
}

/* ---- matching ---------------------------------------------------------- */

static int first_match(const struct rules *rs, enum filter_side side, const char *path,
		       size_t plen, bool is_dir)
{
	for (size_t i = 0; i < rs->n; i++) {
		const struct rule *r = &rs->v[i];
		if ((r->sides & side) && rule_matches(r, path, plen, is_dir))
			return (r->flags & R_INCLUDE) ? FILTER_INCLUDED : FILTER_EXCLUDED;
	}
	return FILTER_NO_MATCH;
}

/* A dir-merge rule's rules: the innermost directory's first. */
static int slot_match(const struct filter_list *fl, unsigned slot, enum filter_side side,
		      const char *path, size_t plen, bool is_dir)
{
	bool inherit = !(fl->slots[slot].flags & R_NO_INHERIT);

	for (size_t k = fl->nfr; k-- > 0;) {
		const struct frame *f = &fl->fr[k];
		if (f->slot != slot)
			continue;
		if (!inherit && f->depth != fl->depth)
			break;
		int v = first_match(&f->rs, side, path, plen, is_dir);
		if (v)
			return v;
	}
	return FILTER_NO_MATCH;
}

enum filter_verdict filter_match(const struct filter_list *fl, enum filter_side side,
				 const char *path, int is_dir)
{
	size_t plen = strlen(path);

	for (size_t i = 0; i < fl->top.n; i++) {
		const struct rule *r = &fl->top.v[i];
		int v;
		if (r->flags & R_DIRMERGE)
			v = slot_match(fl, r->slot, side, path, plen, is_dir);
		else if ((r->sides & side) && rule_matches(r, path, plen, is_dir))
			v = (r->flags & R_INCLUDE) ? FILTER_INCLUDED : FILTER_EXCLUDED;
		else
			v = FILTER_NO_MATCH;
		if (v)
			return (enum filter_verdict)v;
	}
	return FILTER_NO_MATCH;
}

/* ---- the wire form ------------------------------------------------------
 * u8 version (1), u8 flags (bit 0: --delete-excluded), u16 count, then count
 * times u16 length + the rule's text; big-endian; nothing after. */

enum { WIRE_VERSION = 1, WIRE_DELETE_EXCLUDED = 1 };

int filter_encode(const struct filter_list *fl, uint8_t **out, size_t *len)
{
	size_t n = 4 + 2 * fl->top.n + fl->top_text, o = 4;
	uint8_t *b = malloc(n);

	*out = NULL;
	*len = 0;
	if (!b)
		return err_set(-ENOMEM, "filter rules: out of memory");
	b[0] = WIRE_VERSION;
	b[1] = fl->o.delete_excluded ? WIRE_DELETE_EXCLUDED : 0;
	b[2] = (uint8_t)(fl->top.n >> 8);
	b[3] = (uint8_t)fl->top.n;
	for (size_t i = 0; i < fl->top.n; i++) {
		size_t l = strlen(fl->top.v[i].text);
		b[o] = (uint8_t)(l >> 8);
		b[o + 1] = (uint8_t)l;
		memcpy(b + o + 2, fl->top.v[i].text, l);
		o += 2 + l;
	}
	*out = b;
	*len = o;
	return 0;
}

static int decode_rules(struct filter_list *fl, const uint8_t *buf, size_t len, size_t count)
{
	size_t o = 4, text = 0;
	int rc;

	for (size_t i = 0; i < count; i++) {
		if (len - o < 2)
			return err_set(-EPROTO, "filter rules: rule %zu of %zu is cut short", i + 1, count);
		size_t l = (size_t)buf[o] << 8 | buf[o + 1];
		o += 2;
		if (l == 0 || l > FILTER_MAX_RULE || l > len - o)
			return err_set(-EPROTO, "filter rules: rule %zu has a bad length (%zu)", i + 1, l);
		if ((text += l) > FILTER_MAX_TEXT)
			return err_set(-EPROTO, "filter rules: more than %d bytes", FILTER_MAX_TEXT);
		const char *s = (const char *)buf + o;
		if (memchr(s, '\0', l) || memchr(s, '\n', l) || memchr(s, '\r', l))
			return err_set(-EPROTO, "filter rules: rule %zu has a NUL or line break", i + 1);
		struct ctx c = { .fl = fl, .out = &fl->top, .file = "peer's filter", .unit = " rule ",
				 .line = i + 1, .syn = FILTER_RULE };
		if ((rc = parse_rule(&c, s, l)) < 0)
			return rc;
		o += l;
	}
	if (o != len)
		return err_set(-EPROTO, "filter rules: %zu bytes after the last rule", len - o);
	return 0;
}

int filter_decode(const uint8_t *buf, size_t len, const struct filter_opts *o,
		  struct filter_list **out)
{
	struct filter_opts mine = { 0 };
	struct filter_list *fl;
	size_t count;
	int rc;

	*out = NULL;
	if (len < 4 || buf[0] != WIRE_VERSION || (buf[1] & ~WIRE_DELETE_EXCLUDED))
		return err_set(-EPROTO, "filter rules: bad header");
	count = (size_t)buf[2] << 8 | buf[3];
	if (count > FILTER_MAX_RULES)
		return err_set(-EPROTO, "filter rules: %zu rules (at most %d)", count, FILTER_MAX_RULES);
	if (len > FILTER_MAX_WIRE)
		return err_set(-EPROTO, "filter rules: %zu bytes (at most %d)", len, FILTER_MAX_WIRE);
	if (o)
		mine = *o;
	mine.delete_excluded = buf[1] & WIRE_DELETE_EXCLUDED;
	if ((rc = filter_new(&fl, &mine)) < 0)
		return rc;
	fl->from_wire = true;
	if ((rc = decode_rules(fl, buf, len, count)) < 0) {
		filter_free(fl);
		return rc;
	}
	*out = fl;
	return 0;
}
