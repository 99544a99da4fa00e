/* SPDX-License-Identifier: MIT */
/* ferry.conf: the INI style of rsyncd.conf. [global] plus one section per
 * module. Unknown keys and bad values are errors naming file:line. */
#ifndef FERRY_UTIL_CONFIG_H
#define FERRY_UTIL_CONFIG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/retention.h"

#define FERRY_DEFAULT_PORT 7873
#define CONFIG_MAX_MODULES 256

struct module_cfg {
	char *name;               /* section name */
	char *path;               /* required */
	char *comment;            /* optional */
	int read_only;            /* default 0 ("read only = yes|no|true|false|1|0") */
	char *authorized_keys;    /* file; default: the global one */
	int protection;           /* least accepted: enum protection, default PROT_ENCRYPT */
	uint64_t bwlimit;         /* bytes/s, 0 = none (value read as rsync does: KiB/s or K/M/G suffix) */
	int compress;             /* enum cfg_compress: what a -z client gets, default auto */
	char *exclude;            /* "exclude": patterns, blank-separated, as rsyncd's; NULL = none */
	char *exclude_from;       /* "exclude from": a file of them; NULL = none */
	int fake_super;           /* "fake super = yes": owners, devices and modes kept in xattrs */
	int snapshots;            /* "snapshots = yes": every push that changes something is a snapshot */
	int append_only;          /* "append only = yes": snapshots, and no client can remove one */
	int no_bench;             /* "bench = no": ferry bench HOST:MODULE is refused */
	int no_verify;            /* "verify = no": ferry verify HOST:MODULE is refused */
	struct retention keep;    /* "keep daily = 7" ...: which snapshots the box prunes */
	int has_uid, has_gid;     /* "uid =", "gid =": a root daemon's session for this module */
	uid_t uid;                /* drops to them once the client is authorized for it */
	gid_t gid;                /* (gid: "gid =", else the uid's primary group) */
	int line;                 /* where the section starts, for messages */
};

/* The module's own filter list ("exclude", "exclude from"; patterns
 * relative to the module's path, as rsyncd's): what it excludes is never
 * sent, written or deleted, whatever the client asks. Checked when the
 * config is read; *out is NULL when the module has none. */
struct filter_list;
int config_module_filter(const struct module_cfg *m, struct filter_list **out);

/* "compress = auto | yes | no": auto compresses only while the link is
 * slower than the compressor (docs/DESIGN.md), yes whenever -z asks. */
enum cfg_compress { CFG_COMPRESS_AUTO = 0, CFG_COMPRESS_YES = 1, CFG_COMPRESS_NO = 2 };

struct global_cfg {
	char *listen;             /* "ADDR", "ADDR:PORT", "[v6]:PORT"; default "0.0.0.0" */
	unsigned max_connections; /* authorized sessions at a time; default 4; 0 = unlimited */
	unsigned max_unauthenticated; /* connections not yet authorized; default 8; 0 = unlimited */
	unsigned max_unauth_per_addr; /* the same from one IPv4 address or IPv6 /64; default 4; 0 = unlimited */
	uint64_t bwlimit;         /* bytes/s, 0 = none */
	int nice;                 /* default 10; range -20..19 */
	int ionice;               /* class idle(3) / best-effort(2) / none(0): "idle" | "best-effort" | "none"; default best-effort */
	char *log;                /* "stderr" (default) | "syslog" */
	char *host_key;           /* default: <config dir>/host_key */
	char *authorized_keys;    /* default for modules */
	int handshake_timeout;    /* seconds from accept to an authorized request, default 10 */
	int io_timeout;           /* "timeout": seconds per record afterwards, default 300 */
	long stale_age;           /* "stale temporaries": seconds, default 24 h; 0 = no sweep */
	long partial_age;         /* "stale partials" (resume): seconds, default 7 days; 0 = kept */
	char *pair_socket;        /* "pair socket": where `ferry pair MODULE` waits; default
				   * pair.sock beside the host key (cli/paths.c) */
	char *user;               /* "user =": the daemon drops to it after binding; NULL = stays */
	uid_t uid;                /* its uid, */
	gid_t gid;                /* and "group =" or else the user's primary group */
};

struct ferry_config {
	struct global_cfg global;
	struct module_cfg *modules;
	size_t n_modules;
};

/* Parses text (len bytes, need not be NUL-terminated); `name` is used in
 * messages ("name:line: ..."). On error nothing is left allocated in *out. */
int config_parse(const char *text, size_t len, const char *name, struct ferry_config *out);
int config_load(const char *path, struct ferry_config *out);
void config_free(struct ferry_config *c);
const struct module_cfg *config_module(const struct ferry_config *c, const char *name);

/* "1000", "1000K", "10M", "1G" (KiB/s when no suffix, as rsync --bwlimit) to bytes/s. */
int parse_rate(const char *s, uint64_t *bytes_per_sec);
/* "36" (hours), "90s", "15m", "24h", "2d" to seconds, at most 365 days;
 * "0" (any unit) is 0. */
int parse_age(const char *s, long *seconds);
/* A listen address: "ADDR", "ADDR:PORT", "[V6]", "[V6]:PORT", ":PORT"; no
 * address = 0.0.0.0, no port = FERRY_DEFAULT_PORT, port 0 = any (the kernel
 * picks one). A port past 65535 is an error, never wrapped. -EINVAL with
 * err_msg() naming the value. */
int listen_split(const char *spec, char *host, size_t hcap, unsigned *port);
/* "encrypt" | "integrity" | "none" to enum protection. */
int parse_protection(const char *s, int *out);

#endif
