/* SPDX-License-Identifier: MIT */
/* ferry.conf: the INI style of rsyncd.conf. [global] plus one section per
 * module. Unknown keys and bad values are errors naming file:line. */
#ifndef FERRY_UTIL_CONFIG_H
#define FERRY_UTIL_CONFIG_H

#include <stddef.h>
#include <stdint.h>

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
	int line;                 /* where the section starts, for messages */
};

struct global_cfg {
	char *listen;             /* "ADDR", "ADDR:PORT", "[v6]:PORT"; default "0.0.0.0" */
	unsigned max_connections; /* default 4; 0 = unlimited */
	unsigned max_unauthenticated; /* default 8 */
	uint64_t bwlimit;         /* bytes/s, 0 = none */
	int nice;                 /* default 10; range -20..19 */
	int ionice;               /* class idle(3) / best-effort(2) / none(0): "idle" | "best-effort" | "none"; default best-effort */
	char *log;                /* "stderr" (default) | "syslog" */
	char *host_key;           /* default: <config dir>/host_key */
	char *authorized_keys;    /* default for modules */
	int handshake_timeout;    /* seconds, default 10 */
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
/* "encrypt" | "integrity" | "none" to enum protection. */
int parse_protection(const char *s, int *out);

#endif
