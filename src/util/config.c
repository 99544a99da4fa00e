/* SPDX-License-Identifier: MIT */
#include "util/config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/retention.h"
#include "util/filter.h"
#include "util/privdrop.h"
#include "util/readfile.h"

#define CONFIG_MAX_LINE  4096          /* bytes, without the newline */
#define CONFIG_MAX_FILE  (1 << 20)     /* config_load refuses larger files */
#define MODULE_NAME_MAX  255

/* enum protection in channel/channel.h: PROT_NONE 0, PROT_INTEGRITY 1,
 * PROT_ENCRYPT 2. util/ sits below channel/, so the values are repeated here;
 * test_util_config checks them. */
#define CFG_PROT_NONE      0
#define CFG_PROT_INTEGRITY 1
#define CFG_PROT_ENCRYPT   2

enum scope { S_GLOBAL = 1, S_MODULE = 2 };

enum key_id {
	K_LISTEN, K_MAX_CONN, K_MAX_UNAUTH, K_BWLIMIT, K_NICE, K_IONICE, K_LOG,
	K_HOST_KEY, K_PAIR_SOCKET, K_AUTH_KEYS, K_HS_TIMEOUT, K_MAX_UNAUTH_ADDR, K_TIMEOUT, K_STALE, K_STALE_PART,
	K_PATH, K_COMMENT, K_READ_ONLY, K_PROTECTION, K_COMPRESS, K_EXCLUDE, K_EXCLUDE_FROM, K_FAKE_SUPER,
	K_SNAPSHOTS, K_BENCH, K_VERIFY, K_APPEND_ONLY, K_KEEP_LAST, K_KEEP_HOURLY, K_KEEP_DAILY, K_KEEP_WEEKLY,
	K_KEEP_MONTHLY, K_KEEP_YEARLY, K_KEEP_WITHIN, K_PROTECT_WITHIN,
	K_USER, K_GROUP, K_UID, K_GID,
};

static const struct {
	const char *name;
	enum key_id id;
	int scope;
} keys[] = {
	{ "listen",             K_LISTEN,     S_GLOBAL },
	{ "max connections",    K_MAX_CONN,   S_GLOBAL },
	{ "max unauthenticated", K_MAX_UNAUTH, S_GLOBAL },
	{ "bwlimit",            K_BWLIMIT,    S_GLOBAL | S_MODULE },
	{ "nice",               K_NICE,       S_GLOBAL },
	{ "ionice",             K_IONICE,     S_GLOBAL },
	{ "log",                K_LOG,        S_GLOBAL },
	{ "host key",           K_HOST_KEY,   S_GLOBAL },
	{ "pair socket",        K_PAIR_SOCKET, S_GLOBAL },
	{ "authorized keys",    K_AUTH_KEYS,  S_GLOBAL | S_MODULE },
	{ "handshake timeout",  K_HS_TIMEOUT, S_GLOBAL },
	{ "max unauthenticated per address", K_MAX_UNAUTH_ADDR, S_GLOBAL },
	{ "timeout",            K_TIMEOUT,    S_GLOBAL },
	{ "stale temporaries",  K_STALE,      S_GLOBAL },
	{ "stale partials",     K_STALE_PART, S_GLOBAL },
	{ "path",               K_PATH,       S_MODULE },
	{ "comment",            K_COMMENT,    S_MODULE },
	{ "read only",          K_READ_ONLY,  S_MODULE },
	{ "protection",         K_PROTECTION, S_MODULE },
	{ "compress",           K_COMPRESS,   S_MODULE },
	{ "fake super",         K_FAKE_SUPER, S_MODULE },
	{ "snapshots",          K_SNAPSHOTS,  S_MODULE },
	{ "bench",              K_BENCH,      S_MODULE },
	{ "verify",             K_VERIFY,     S_MODULE },
	{ "append only",        K_APPEND_ONLY, S_MODULE },
	{ "keep last",          K_KEEP_LAST,  S_MODULE },
	{ "keep hourly",        K_KEEP_HOURLY, S_MODULE },
	{ "keep daily",         K_KEEP_DAILY, S_MODULE },
	{ "keep weekly",        K_KEEP_WEEKLY, S_MODULE },
	{ "keep monthly",       K_KEEP_MONTHLY, S_MODULE },
	{ "keep yearly",        K_KEEP_YEARLY, S_MODULE },
	{ "keep within",        K_KEEP_WITHIN, S_MODULE },
	{ "protect within",     K_PROTECT_WITHIN, S_MODULE },
	{ "exclude",            K_EXCLUDE,    S_MODULE },
	{ "exclude from",       K_EXCLUDE_FROM, S_MODULE },
	{ "user",               K_USER,       S_GLOBAL },
	{ "group",              K_GROUP,      S_GLOBAL },
	{ "uid",                K_UID,        S_MODULE },
	{ "gid",                K_GID,        S_MODULE },
};

/* Parser state: where we are, and which keys the current section has set. */
struct pstate {
	const char *file;
	int line;
	struct ferry_config *c;
	struct module_cfg *mod;     /* NULL: in the global section */
	uint64_t global_seen;
	uint64_t mod_seen;
	size_t mod_cap;
};

static int perr(const struct pstate *p, const char *what, const char *detail)
{
	return err_set(-EINVAL, "%s:%d: %s%s", p->file, p->line, what, detail ? detail : "");
}

static int parse_bool(const char *s, int *out);

static int parse_compress(const struct pstate *p, const char *val, int *out)
{
	int yes;

	if (!strcmp(val, "auto")) {
		*out = CFG_COMPRESS_AUTO;
		return 0;
	}
	if (parse_bool(val, &yes) < 0)
		return perr(p, "compress: expected auto, yes or no: ", val);
	*out = yes ? CFG_COMPRESS_YES : CFG_COMPRESS_NO;
	return 0;
}

static int parse_uint_range(const char *s, long lo, long hi, long *out);

int listen_split(const char *s, char *host, size_t hcap, unsigned *port)
{
	const char *colon;
	long v;

	*port = FERRY_DEFAULT_PORT;
	if (s[0] == '[') {
		const char *rb = strchr(s, ']');
		if (!rb)
			return err_set(-EINVAL, "listen '%s': missing ']'", s);
		snprintf(host, hcap, "%.*s", (int)(rb - s - 1), s + 1);
		colon = rb[1] == ':' ? rb + 1 : NULL;
		if (rb[1] && !colon)
			return err_set(-EINVAL, "listen '%s': junk after ']'", s);
	} else {
		colon = strrchr(s, ':');
		if (colon && strchr(s, ':') != colon)
			return err_set(-EINVAL, "listen '%s': write IPv6 addresses in brackets", s);
		snprintf(host, hcap, "%.*s", colon ? (int)(colon - s) : (int)strlen(s), s);
	}
	if (colon) {
		if (strspn(colon + 1, "0123456789") != strlen(colon + 1) ||
		    parse_uint_range(colon + 1, 0, 65535, &v) < 0)
			return err_set(-EINVAL, "listen '%s': port '%s' is not a number from 0 (any) to "
				       "65535", s, colon + 1);
		*port = (unsigned)v;
	}
	if (!host[0])
		snprintf(host, hcap, "0.0.0.0");
	return 0;
}

static int parse_uint_range(const char *s, long lo, long hi, long *out)
{
	char *end;
	long v;

	if (!*s || isspace((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_bool(const char *s, int *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
		if (strcasecmp(s, yes[i]) == 0) {
			*out = 1;
			return 0;
		}
		if (strcasecmp(s, no[i]) == 0) {
			*out = 0;
			return 0;
		}
	}
	return -EINVAL;
}

int parse_protection(const char *s, int *out)
{
	if (strcasecmp(s, "encrypt") == 0)
		*out = CFG_PROT_ENCRYPT;
	else if (strcasecmp(s, "integrity") == 0)
		*out = CFG_PROT_INTEGRITY;
	else if (strcasecmp(s, "none") == 0)
		*out = CFG_PROT_NONE;
	else
		return err_set(-EINVAL, "bad protection \"%.64s\" (encrypt, integrity or none)", s);
	return 0;
}

/* As rsync reads --bwlimit: a plain number is KiB/s; K, M, G (and KiB, MiB,
 * GiB) are powers of 1024, KB, MB, GB powers of 1000; case does not matter;
 * a fraction is allowed ("1.5M"). Integer arithmetic only, so no rounding
 * surprises and no float conversions of absurd values. */
int parse_rate(const char *s, uint64_t *bytes_per_sec)
{
	static const struct {
		const char *suf;
		uint64_t mult;
	} sufs[] = {
		{ "", 1024 }, { "b", 1 },
		{ "k", 1024 }, { "kib", 1024 }, { "kb", 1000 },
		{ "m", 1024 * 1024 }, { "mib", 1024 * 1024 }, { "mb", 1000 * 1000 },
		{ "g", 1024 * 1024 * 1024 }, { "gib", 1024 * 1024 * 1024 },
		{ "gb", 1000 * 1000 * 1000 },
	};
	const char *p = s;
	uint64_t ip = 0, frac = 0, scale = 1, mult = 0, v;
	int digits = 0, nonzero = 0;

	while (*p >= '0' && *p <= '9') {
		nonzero |= *p != '0';
		if (ip > (UINT64_MAX - 9) / 10)
			goto range;
		ip = ip * 10 + (uint64_t)(*p++ - '0');
		digits++;
	}
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9') {
			nonzero |= *p != '0';
			if (scale < 1000000000ull) {   /* 9 digits are plenty */
				frac = frac * 10 + (uint64_t)(*p - '0');
				scale *= 10;
			}
			p++;
			digits++;
		}
	}
	if (digits == 0)
		goto bad;
	for (size_t i = 0; i < sizeof sufs / sizeof sufs[0]; i++) {
		if (strcasecmp(p, sufs[i].suf) == 0) {
			mult = sufs[i].mult;
			break;
		}
	}
	if (!mult)
		goto bad;
	/* frac < 1e9 and mult <= 2^30, so frac * mult < 2^60. */
	if (ip > UINT64_MAX / mult)
		goto range;
	v = ip * mult;
	if (v > UINT64_MAX - frac * mult / scale)
		goto range;
	v += frac * mult / scale;
	if (v == 0 && nonzero)
		v = 1;   /* a tiny limit is still a limit, not "unlimited" */
	*bytes_per_sec = v;
	return 0;
bad:
	return err_set(-EINVAL, "bad rate \"%.64s\" (KiB/s, or a number with K, M or G)", s);
range:
	return err_set(-ERANGE, "rate \"%.64s\" is too large", s);
}

int parse_age(const char *s, long *seconds)
{
	static const struct {
		char unit;
		long mult;
	} units[] = { { '\0', 3600 }, { 's', 1 }, { 'm', 60 }, { 'h', 3600 }, { 'd', 86400 } };
	const long max = 365L * 86400;
	long v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++)
		if (v <= max)   /* stops growing past the limit: no overflow */
			v = v * 10 + (*p - '0');
	if (p == s || (p[0] && p[1]))
		goto bad;
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (units[i].unit != (char)tolower((unsigned char)*p))
			continue;
		if (v > max / units[i].mult)
			return err_set(-ERANGE, "age \"%.64s\" is more than 365 days", s);
		*seconds = v * units[i].mult;
		return 0;
	}
bad:
	return err_set(-EINVAL, "bad age \"%.64s\" (hours, or a number with s, m, h or d)", s);
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

/* An inline comment starts at '#' or ';' that follows a blank. */
static void strip_comment(char *s)
{
	for (char *p = s; *p; p++) {
		if ((*p == '#' || *p == ';') && (p == s || p[-1] == ' ' || p[-1] == '\t')) {
			*p = '\0';
			return;
		}
	}
}

static int set_str(char **dst, const char *v, const struct pstate *p)
{
	char *s = strdup(v);

	if (!s)
		return err_set(-ENOMEM, "%s:%d: out of memory", p->file, p->line);
	free(*dst);
	*dst = s;
	return 0;
}

static int finish_module(const struct pstate *p)
{
	const struct module_cfg *m = p->mod;

	if (m && !m->path)
		return err_set(-EINVAL, "%s:%d: module [%s] has no path", p->file, m->line, m->name);
	return 0;
}

static int start_section(struct pstate *p, char *line)
{
	struct ferry_config *c = p->c;
	char *end = strchr(line, ']');
	char *name, *rest;
	struct module_cfg *m;
	size_t n;
	int r;

	if (!end)
		return perr(p, "missing ']' in section header", NULL);
	*end = '\0';
	rest = end + 1;
	strip_comment(rest);
	if (*trim(rest))
		return perr(p, "unexpected text after section header", NULL);
	name = trim(line + 1);
	n = strlen(name);
	if (n == 0)
		return perr(p, "empty section name", NULL);
	if (n > MODULE_NAME_MAX)
		return perr(p, "section name is too long", NULL);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)name[i];
		if (!isalnum(ch) && ch != '_' && ch != '.' && ch != '-')
			return perr(p, "bad module name (allowed: A-Z a-z 0-9 _ . -): ", name);
	}
	r = finish_module(p);
	if (r < 0)
		return r;
	if (strcasecmp(name, "global") == 0) {
		p->mod = NULL;
		return 0;
	}
	if (config_module(c, name))
		return perr(p, "duplicate module ", name);
	if (c->n_modules >= CONFIG_MAX_MODULES)
		return perr(p, "too many modules (limit 256)", NULL);
	if (c->n_modules == p->mod_cap) {
		size_t cap = p->mod_cap ? p->mod_cap * 2 : 8;
		struct module_cfg *nm = realloc(c->modules, cap * sizeof *nm);
		if (!nm)
			return err_set(-ENOMEM, "%s:%d: out of memory", p->file, p->line);
		c->modules = nm;
		p->mod_cap = cap;
	}
	m = &c->modules[c->n_modules];
	memset(m, 0, sizeof *m);
	m->name = strdup(name);
	if (!m->name)
		return err_set(-ENOMEM, "%s:%d: out of memory", p->file, p->line);
	m->protection = CFG_PROT_ENCRYPT;
	m->line = p->line;
	c->n_modules++;
	p->mod = m;
	p->mod_seen = 0;
	return 0;
}

/* Lower-cases the key and folds runs of blanks into one space, so that
 * "Max   Connections" is "max connections". */
static void norm_key(char *k)
{
	char *o = k;

	for (char *s = k; *s; s++) {
		if (*s == ' ' || *s == '\t') {
			if (o > k && o[-1] != ' ')
				*o++ = ' ';
		} else {
			*o++ = (char)tolower((unsigned char)*s);
		}
	}
	while (o > k && o[-1] == ' ')
		o--;
	*o = '\0';
}

static int set_key(struct pstate *p, char *line)
{
	struct global_cfg *g = &p->c->global;
	struct module_cfg *m = p->mod;
	char *eq = strchr(line, '=');
	char *key, *val;
	uint64_t *seen;
	int scope = m ? S_MODULE : S_GLOBAL;
	size_t k;
	long n;
	int r;

	if (!eq)
		return perr(p, "expected \"key = value\"", NULL);
	*eq = '\0';
	key = trim(line);
	norm_key(key);
	val = eq + 1;
	strip_comment(val);
	val = trim(val);
	if (!*key)
		return perr(p, "missing key before '='", NULL);
	for (k = 0; k < sizeof keys / sizeof keys[0]; k++)
		if (strcmp(keys[k].name, key) == 0)
			break;
	if (k == sizeof keys / sizeof keys[0])
		return err_set(-EINVAL, "%s:%d: unknown key \"%.64s\"", p->file, p->line, key);
	if (!(keys[k].scope & scope))
		return err_set(-EINVAL, "%s:%d: key \"%s\" is not allowed in %s", p->file, p->line,
			       key, m ? "a module section" : "the global section");
	seen = m ? &p->mod_seen : &p->global_seen;
	if (*seen & (1ull << keys[k].id))
		return err_set(-EINVAL, "%s:%d: duplicate key \"%s\"", p->file, p->line, key);
	*seen |= 1ull << keys[k].id;

	switch (keys[k].id) {
	case K_LISTEN: {
		char host[256];
		unsigned port;
		if (!*val)
			return perr(p, "listen: empty address", NULL);
		if (listen_split(val, host, sizeof host, &port) < 0)
			return perr(p, err_msg(), NULL);   /* err_set copes with its own message */
		return set_str(&g->listen, val, p);
	}
	case K_MAX_CONN:
		if (parse_uint_range(val, 0, 65535, &n) < 0)
			return perr(p, "max connections: not a number 0..65535: ", val);
		g->max_connections = (unsigned)n;
		return 0;
	case K_MAX_UNAUTH:
		if (parse_uint_range(val, 0, 65535, &n) < 0)
			return perr(p, "max unauthenticated: not a number 0..65535: ", val);
		g->max_unauthenticated = (unsigned)n;
		return 0;
	case K_BWLIMIT:
		r = parse_rate(val, m ? &m->bwlimit : &g->bwlimit);
		if (r < 0)
			return err_wrap(-EINVAL, "%s:%d: bwlimit", p->file, p->line);
		return 0;
	case K_NICE:
		if (*val == '-' ? parse_uint_range(val + 1, 0, 20, &n) < 0 :
				  parse_uint_range(val, 0, 19, &n) < 0)
			return perr(p, "nice: not a number -20..19: ", val);
		g->nice = *val == '-' ? -(int)n : (int)n;
		return 0;
	case K_IONICE:
		if (strcasecmp(val, "idle") == 0)
			g->ionice = 3;
		else if (strcasecmp(val, "best-effort") == 0)
			g->ionice = 2;
		else if (strcasecmp(val, "none") == 0)
			g->ionice = 0;
		else
			return perr(p, "ionice: expected idle, best-effort or none: ", val);
		return 0;
	case K_LOG:
		if (strcmp(val, "stderr") != 0 && strcmp(val, "syslog") != 0)
			return perr(p, "log: expected stderr or syslog: ", val);
		return set_str(&g->log, val, p);
	case K_HOST_KEY:
		if (!*val)
			return perr(p, "host key: empty file name", NULL);
		return set_str(&g->host_key, val, p);
	case K_PAIR_SOCKET:
		if (*val != '/')
			return perr(p, "pair socket: expected an absolute path: ", val);
		if (strlen(val) >= 108)   /* sun_path */
			return perr(p, "pair socket: path too long for a unix socket: ", val);
		return set_str(&g->pair_socket, val, p);
	case K_AUTH_KEYS:
		if (!*val)
			return perr(p, "authorized keys: empty file name", NULL);
		return set_str(m ? &m->authorized_keys : &g->authorized_keys, val, p);
	case K_HS_TIMEOUT:
		if (parse_uint_range(val, 1, 3600, &n) < 0)
			return perr(p, "handshake timeout: not a number of seconds 1..3600: ", val);
		g->handshake_timeout = (int)n;
		return 0;
	case K_MAX_UNAUTH_ADDR:
		if (parse_uint_range(val, 0, 65535, &n) < 0)
			return perr(p, "max unauthenticated per address: not a number 0..65535: ", val);
		g->max_unauth_per_addr = (unsigned)n;
		return 0;
	case K_TIMEOUT:
		if (parse_uint_range(val, 1, 86400, &n) < 0)
			return perr(p, "timeout: not a number of seconds 1..86400: ", val);
		g->io_timeout = (int)n;
		return 0;
	case K_STALE:
		if (parse_age(val, &g->stale_age) < 0)
			return err_wrap(-EINVAL, "%s:%d: stale temporaries", p->file, p->line);
		return 0;
	case K_STALE_PART:
		if (parse_age(val, &g->partial_age) < 0)
			return err_wrap(-EINVAL, "%s:%d: stale partials", p->file, p->line);
		return 0;
	case K_PATH:
		if (!*val)
			return perr(p, "path: empty", NULL);
		return set_str(&m->path, val, p);
	case K_COMMENT:
		return set_str(&m->comment, val, p);
	case K_EXCLUDE:
	case K_EXCLUDE_FROM: {
		int rc = set_str(keys[k].id == K_EXCLUDE ? &m->exclude : &m->exclude_from, val, p);
		struct filter_list *fl = NULL;
		if (rc == 0 && (rc = config_module_filter(m, &fl)) < 0)
			rc = perr(p, "", err_msg());
		filter_free(fl);
		return rc;
	}
	case K_READ_ONLY:
		if (parse_bool(val, &m->read_only) < 0)
			return perr(p, "read only: expected yes or no: ", val);
		return 0;
	case K_PROTECTION:
		if (parse_protection(val, &m->protection) < 0)
			return err_wrap(-EINVAL, "%s:%d: protection", p->file, p->line);
		return 0;
	case K_COMPRESS:
		return parse_compress(p, val, &m->compress);
	case K_FAKE_SUPER:
		if (parse_bool(val, &m->fake_super) < 0)
			return perr(p, "fake super: expected yes or no: ", val);
		return 0;
	case K_KEEP_LAST:
	case K_KEEP_HOURLY:
	case K_KEEP_DAILY:
	case K_KEEP_WEEKLY:
	case K_KEEP_MONTHLY:
	case K_KEEP_YEARLY:
	case K_KEEP_WITHIN:
	case K_PROTECT_WITHIN:
		if (retention_set(&m->keep, key, val) < 0)
			return err_wrap(-EINVAL, "%s:%d", p->file, p->line);
		return 0;
	case K_SNAPSHOTS:
		if (parse_bool(val, &m->snapshots) < 0)
			return perr(p, "snapshots: expected yes or no: ", val);
		return 0;
	case K_BENCH:
		if (parse_bool(val, &r) < 0)
			return perr(p, "bench: expected yes or no: ", val);
		m->no_bench = !r;
		return 0;
	case K_VERIFY:
		if (parse_bool(val, &r) < 0)
			return perr(p, "verify: expected yes or no: ", val);
		m->no_verify = !r;
		return 0;
	case K_APPEND_ONLY:
		if (parse_bool(val, &m->append_only) < 0)
			return perr(p, "append only: expected yes or no: ", val);
		return 0;
	case K_USER:
	case K_UID: {
		uid_t uid;
		gid_t gid;
		if (!*val || priv_user(val, &uid, &gid) < 0)
			return perr(p, keys[k].id == K_USER ? "user: " : "uid: ",
				    *val ? err_msg() : "empty");
		if (m) {
			m->has_uid = 1;
			m->uid = uid;
			if (!m->has_gid)
				m->gid = gid;
			return 0;
		}
		g->uid = uid;
		if (!(p->global_seen & (1ull << K_GROUP)))
			g->gid = gid;
		return set_str(&g->user, val, p);
	}
	case K_GROUP:
	case K_GID: {
		gid_t gid;
		if (!*val || priv_group(val, &gid) < 0)
			return perr(p, keys[k].id == K_GROUP ? "group: " : "gid: ",
				    *val ? err_msg() : "empty");
		if (m) {
			m->has_gid = 1;
			m->gid = gid;
		} else {
			g->gid = gid;
		}
		return 0;
	}
	}
	return perr(p, "internal error: unhandled key", NULL);
}

static int set_defaults(struct ferry_config *c)
{
	struct global_cfg *g = &c->global;

	memset(c, 0, sizeof *c);
	g->max_connections = 4;
	g->max_unauthenticated = 8;
	g->nice = 10;
	g->ionice = 2;
	g->max_unauth_per_addr = 4;
	g->handshake_timeout = 10;
	g->io_timeout = 300;
	g->stale_age = 24L * 3600;
	g->partial_age = 7L * 24 * 3600;
	g->listen = strdup("0.0.0.0");
	g->log = strdup("stderr");
	if (!g->listen || !g->log)
		return err_set(-ENOMEM, "config: out of memory");
	return 0;
}

/* A uid without a passwd entry needs its group named; a session can only
 * switch users while the daemon is still root. */
static int check_ids(const struct pstate *p)
{
	const struct ferry_config *c = p->c;

	if (!c->global.user && (p->global_seen & (1ull << K_GROUP)))
		return err_set(-EINVAL, "%s: \"group\" without \"user\": the daemon would stay root",
			       p->file);
	if (c->global.user && c->global.gid == (gid_t)-1)
		return err_set(-EINVAL, "%s: user %s has no passwd entry: name its group with \"group =\"",
			       p->file, c->global.user);
	for (size_t i = 0; i < c->n_modules; i++) {
		const struct module_cfg *m = &c->modules[i];
		if (m->has_gid && !m->has_uid)
			return err_set(-EINVAL, "%s:%d: module '%s': gid without uid: the session would "
				       "stay root", p->file, m->line, m->name);
		if ((retention_any(&m->keep) || m->keep.protect_within) && !m->snapshots &&
		    !m->append_only)
			return err_set(-EINVAL, "%s:%d: module '%s': retention rules without snapshots "
				       "(add \"snapshots = yes\")", p->file, m->line, m->name);
		if (m->has_uid && m->gid == (gid_t)-1)
			return err_set(-EINVAL, "%s:%d: module '%s': uid %u has no passwd entry: set gid too",
				       p->file, m->line, m->name, (unsigned)m->uid);
		if ((m->has_uid || m->has_gid) && c->global.user && c->global.uid != 0)
			return err_set(-EINVAL, "%s:%d: module '%s': uid and gid need a daemon that stays "
				       "root (\"user = %s\" in [global] drops it first)",
				       p->file, m->line, m->name, c->global.user);
	}
	return 0;
}

int config_parse(const char *text, size_t len, const char *name, struct ferry_config *out)
{
	struct pstate p = { .file = name ? name : "config", .c = out };
	char line[CONFIG_MAX_LINE + 2];
	size_t pos = 0;
	int r;

	r = set_defaults(out);
	if (r < 0)
		goto fail;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		char *s;

		p.line++;
		if (n > CONFIG_MAX_LINE) {
			r = err_set(-EINVAL, "%s:%d: line longer than %d bytes", p.file, p.line,
				    CONFIG_MAX_LINE);
			goto fail;
		}
		if (memchr(text + pos, '\0', n)) {
			r = perr(&p, "NUL byte in line", NULL);
			goto fail;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + (nl ? 1 : 0);
		s = trim(line);
		if (!*s || *s == '#' || *s == ';')
			continue;
		r = *s == '[' ? start_section(&p, s) : set_key(&p, s);
		if (r < 0)
			goto fail;
	}
	r = finish_module(&p);
	if (r < 0)
		goto fail;
	if ((r = check_ids(&p)) < 0)
		goto fail;
	for (size_t i = 0; i < out->n_modules; i++) {
		struct module_cfg *m = &out->modules[i];
		if (!m->authorized_keys && out->global.authorized_keys) {
			m->authorized_keys = strdup(out->global.authorized_keys);
			if (!m->authorized_keys) {
				r = err_set(-ENOMEM, "config: out of memory");
				goto fail;
			}
		}
	}
	return 0;
fail:
	config_free(out);
	return r;
}

int config_load(const char *path, struct ferry_config *out)
{
	struct stat st;
	char *text = NULL;
	size_t got = 0;
	int fd = -1;
	int r = 0;

	memset(out, 0, sizeof *out);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(-errno, "config %s", path);
	if (fstat(fd, &st) < 0) {
		r = err_sys(-errno, "config %s", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > CONFIG_MAX_FILE) {
		r = err_set(-EINVAL, "config %s: not a regular file of at most %d bytes",
			    path, CONFIG_MAX_FILE);
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		r = err_set(-ENOMEM, "config %s: out of memory", path);
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, text + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = err_sys(-errno, "config %s", path);
			goto out;
		}
		if (n == 0)
			break;   /* shrank meanwhile: parse what is there */
		got += (size_t)n;
	}
	r = config_parse(text, got, path, out);
	if (r < 0)
		goto out;
out:
	free(text);
	if (fd >= 0)
		close(fd);
	return r;
}

void config_free(struct ferry_config *c)
{
	struct global_cfg *g = &c->global;

	for (size_t i = 0; i < c->n_modules; i++) {
		free(c->modules[i].name);
		free(c->modules[i].path);
		free(c->modules[i].comment);
		free(c->modules[i].exclude);
		free(c->modules[i].exclude_from);
		free(c->modules[i].authorized_keys);
	}
	free(c->modules);
	free(g->listen);
	free(g->log);
	free(g->host_key);
	free(g->pair_socket);
	free(g->authorized_keys);
	free(g->user);
	memset(c, 0, sizeof *c);
}

const struct module_cfg *config_module(const struct ferry_config *c, const char *name)
{
	for (size_t i = 0; i < c->n_modules; i++)
		if (strcmp(c->modules[i].name, name) == 0)
			return &c->modules[i];
	return NULL;
}

/* "exclude from": the administrator's file, read whole (at most what a
 * filter file may hold, and one byte more for the library to say so). */
static int read_exclude_file(const char *path, char **data, size_t *len)
{
	/* a regular file only: a FIFO or /proc/kmsg would block the daemon */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return err_sys(-errno, "exclude from %s", path);
	int rc = read_regular_fd(fd, FILTER_MAX_FILE + 1, data, len);
	close(fd);
	if (rc == -EINVAL)
		return err_set(rc, "exclude from %s: not a regular file", path);
	if (rc == -ENOMEM)
		return err_set(rc, "out of memory");
	return rc < 0 ? err_sys(rc, "exclude from %s", path) : 0;
}

int config_module_filter(const struct module_cfg *m, struct filter_list **out)
{
	struct filter_opts o = { 0 };
	struct filter_list *fl;
	int rc;

	*out = NULL;
	if (!m->exclude && !m->exclude_from && !m->snapshots && !m->append_only)
		return 0;
	if ((rc = filter_new(&fl, &o)) < 0)
		return rc;
	/* the snapshot history is never part of the module's tree */
	if ((m->snapshots || m->append_only) &&
	    (rc = filter_add(fl, FILTER_EXCLUDE, "/.ferry-history")) < 0) {
		filter_free(fl);
		return rc;
	}
	char *list = m->exclude ? strdup(m->exclude) : NULL, *save = NULL;
	if (m->exclude && !list)
		rc = err_set(-ENOMEM, "out of memory");
	for (char *t = list ? strtok_r(list, " \t", &save) : NULL; rc == 0 && t;
	     t = strtok_r(NULL, " \t", &save))
		if ((rc = filter_add(fl, FILTER_EXCLUDE, t)) < 0)
			err_wrap(rc, "exclude");
	free(list);
	if (rc == 0 && m->exclude_from) {
		char *data = NULL;
		size_t len = 0;
		if ((rc = read_exclude_file(m->exclude_from, &data, &len)) == 0) {
			rc = filter_add_file(fl, FILTER_EXCLUDE, data, len, m->exclude_from);
			free(data);
		}
	}
	if (rc < 0) {
		filter_free(fl);
		return rc;
	}
	*out = fl;
	return 0;
}
