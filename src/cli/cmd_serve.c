/* SPDX-License-Identifier: MIT */
/* ferry serve: the configuration (a file, or the embedded default of one
 * directory exported as module "default"), the host key, niceness, then the
 * daemon loop. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/cli.h"
#include "channel/keys.h"
#include "cli/daemon.h"
#include "util/config.h"
#include "util/err.h"
#include "util/log.h"

struct serve_args {
	const char *dir;
	const char *config;
	const char *listen;
	const char *host_key;
	const char *authorized_keys;
};

static int set_str(char **dst, const char *v)
{
	char *n = strdup(v);
	if (!n)
		return err_set(-ENOMEM, "out of memory");
	free(*dst);
	*dst = n;
	return 0;
}

static int embedded_config(const struct serve_args *a, struct ferry_config *cfg)
{
	char text[8192];
	int n = snprintf(text, sizeof text, "[default]\npath = %s\n", a->dir);
	if (n < 0 || (size_t)n >= sizeof text || strpbrk(a->dir, "\n"))
		return err_set(-EINVAL, "%s: unusable directory name", a->dir);
	return config_parse(text, (size_t)n, "(command line)", cfg);
}

/* A module nobody can use is a mistake worth stopping for, unless it says it
 * is closed ("authorized keys = none"). The list is read once now, so a bad
 * line is an error at start, not at the first client. */
static int check_keys(const struct serve_args *a, const struct ferry_config *cfg,
		      const struct module_cfg *m)
{
	static const uint8_t nobody[KEY_LEN];
	const char *keys = m->authorized_keys ? m->authorized_keys : cfg->global.authorized_keys;
	const char *where = a->config ? a->config : "(command line)";

	if (!keys)
		return err_set(-EINVAL, "%s:%d: module '%s' has no authorized keys, so no client "
			       "could use it: set 'authorized keys = FILE' (or 'authorized keys = none' "
			       "for a module closed on purpose)", where, m->line, m->name);
	if (!strcmp(keys, "none"))
		return 0;
	if (keys_authorized(keys, nobody) < 0)
		return err_set(-EINVAL, "%s:%d: module '%s': %s%s", where, m->line, m->name, err_msg(),
			       a->config ? "" : " (put the clients' public keys there: 'ferry keygen' "
			       "prints one)");
	return 0;
}

/* 1 if directory `in` is `out` or lies below it (both resolved). */
static int inside(const char *in, const char *out)
{
	size_t n = strlen(out);

	return !strncmp(in, out, n) && (in[n] == '\0' || in[n] == '/' || (n == 1 && out[0] == '/'));
}

/* A module that keeps snapshots must not lie in another writable module's
 * tree: that module's clients could change its history and its committed
 * files, past everything append only promises. */
static int check_nesting(const struct serve_args *a, const struct ferry_config *cfg)
{
	const char *where = a->config ? a->config : "(command line)";

	for (size_t i = 0; i < cfg->n_modules; i++) {
		const struct module_cfg *in = &cfg->modules[i];
		char rin[PATH_MAX], rout[PATH_MAX];
		if (!(in->snapshots || in->append_only) || !realpath(in->path, rin))
			continue;
		for (size_t j = 0; j < cfg->n_modules; j++) {
			const struct module_cfg *out = &cfg->modules[j];
			if (j == i || out->read_only || !realpath(out->path, rout) || !inside(rin, rout))
				continue;
			return err_set(-EINVAL, "%s:%d: module '%s' keeps snapshots, and its path is in "
				       "the tree of module '%s', which clients may write: they could change "
				       "its history; make '%s' read only or move one of them", where,
				       in->line, in->name, out->name, out->name);
		}
	}
	return 0;
}

/* Defaults that live in ferry's directory, then command-line overrides. */
static int complete_config(const struct serve_args *a, struct ferry_config *cfg)
{
	char path[4096];
	char *old_keys = cfg->global.authorized_keys;
	int rc = 0;

	char host[256];
	unsigned port;
	if (a->listen && listen_split(a->listen, host, sizeof host, &port) < 0)
		return err_set(-EINVAL, "--listen: %s", err_msg());
	if (a->listen)
		rc = set_str(&cfg->global.listen, a->listen);
	if (rc == 0 && !cfg->global.host_key &&
	    (rc = default_host_key(a->config, path, sizeof path)) == 0)
		rc = set_str(&cfg->global.host_key, path);
	/* beside the config's host key, before --host-key: `ferry pair`
	 * reads the config alone and must find the same socket */
	if (rc == 0 && !cfg->global.pair_socket &&
	    (rc = default_pair_socket(cfg->global.host_key, path, sizeof path)) == 0)
		rc = set_str(&cfg->global.pair_socket, path);
	if (rc == 0 && a->host_key)
		rc = set_str(&cfg->global.host_key, a->host_key);
	const char *keys = a->authorized_keys;
	if (!keys && !old_keys && !a->config && ferry_path(path, sizeof path, "authorized_keys") == 0)
		keys = path;
	for (size_t i = 0; rc == 0 && keys && i < cfg->n_modules; i++) {
		struct module_cfg *m = &cfg->modules[i];
		if (!m->authorized_keys || m->authorized_keys == old_keys ||
		    (old_keys && !strcmp(m->authorized_keys, old_keys)))
			rc = set_str(&m->authorized_keys, keys);
	}
	if (rc == 0 && keys)
		rc = set_str(&cfg->global.authorized_keys, keys);
	for (size_t i = 0; rc == 0 && i < cfg->n_modules; i++) {
		struct stat st;
		if ((rc = check_keys(a, cfg, &cfg->modules[i])) < 0)
			break;
		if (stat(cfg->modules[i].path, &st) < 0)
			rc = err_sys(-errno, "module '%s': path %s", cfg->modules[i].name,
				     cfg->modules[i].path);
		else if (!S_ISDIR(st.st_mode))
			rc = err_set(-ENOTDIR, "module '%s': path %s is not a directory",
				     cfg->modules[i].name, cfg->modules[i].path);
	}
	return rc < 0 ? rc : check_nesting(a, cfg);
}

static int load_config(const struct serve_args *a, struct ferry_config *cfg)
{
	int rc;

	memset(cfg, 0, sizeof *cfg);
	rc = a->config ? config_load(a->config, cfg) : embedded_config(a, cfg);
	if (rc < 0)
		return rc;
	if ((rc = complete_config(a, cfg)) < 0)
		config_free(cfg);
	return rc;
}

static int reload(struct daemon *d)
{
	struct ferry_config fresh;
	int rc = load_config(d->ctx, &fresh);
	if (rc < 0)
		return rc;
	const struct global_cfg *was = &d->cfg.global, *now = &fresh.global;
	if (!was->user != !now->user || (was->user && (was->uid != now->uid || was->gid != now->gid))) {
		config_free(&fresh);
		return err_set(-EINVAL, "'user' or 'group' changed: that takes a restart");
	}
	config_free(&d->cfg);
	d->cfg = fresh;
	return 0;
}

/* The host key is made on first start, like sshd's. */
static int host_key(const char *path, struct keypair *kp)
{
	struct stat st;
	char fpr[KEY_FPR_LEN];
	int rc;

	if (stat(path, &st) < 0 && errno == ENOENT) {
		ferry_dir_ensure();
		/* a configured path's directory may be missing too (mkdir -p, 0700) */
		char dir[4096];
		snprintf(dir, sizeof dir, "%s", path);
		for (char *p = dir + 1; *p; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			mkdir(dir, 0700);
			*p = '/';
		}
		if ((rc = keys_generate(kp)) < 0 || (rc = keys_save(path, kp, "ferry host key", 0)) < 0)
			return rc;
		key_fingerprint(kp->pub, fpr);
		log_info("created host key %s (%s)", path, fpr);
		keys_wipe(kp);
	}
	return keys_load(path, kp);
}

/* Keep the box responsive (ssh, routing) while ferry works. */
static void be_gentle(const struct global_cfg *g)
{
	if (g->nice && setpriority(PRIO_PROCESS, 0, g->nice) < 0)
		log_warn("nice %d: %s", g->nice, strerror(errno));
#ifdef SYS_ioprio_set
	if (g->ionice) {
		/* IOPRIO_WHO_PROCESS = 1; class in the top bits, level 7 for best-effort. */
		int prio = (g->ionice << 13) | (g->ionice == 2 ? 7 : 0);
		if (syscall(SYS_ioprio_set, 1, 0, prio) < 0)
			log_warn("ionice: %s", strerror(errno));
	}
#endif
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "listen", required_argument, NULL, 'l' },
		{ "host-key", required_argument, NULL, 'k' },
		{ "authorized-keys", required_argument, NULL, 'a' },
		{ "check-config", no_argument, NULL, 'C' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 },
	};
	struct serve_args a = { 0 };
	struct daemon d = { .reload = reload, .ctx = &a };
	int ch, check = 0, level = LOG_INFO, rc;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "vq", opts, NULL)) != -1) {
		switch (ch) {
		case 'f': a.config = optarg; break;
		case 'l': a.listen = optarg; break;
		case 'k': a.host_key = optarg; break;
		case 'a': a.authorized_keys = optarg; break;
		case 'C': check = 1; break;
		case 'v': level = LOG_DEBUG; break;
		case 'q': level = LOG_WARN; break;
		default: return EXIT_USAGE;
		}
	}
	if (optind < argc)
		a.dir = argv[optind++];
	if (optind < argc || (!a.dir == !a.config))
		return die_msg("usage: ferry serve DIR | --config FILE [options] (see ferry help)"),
		       EXIT_USAGE;
	log_init("ferry", level, 0);
	if (load_config(&a, &d.cfg) < 0)
		return die_msg("%s", err_msg()), EXIT_USAGE;
	if (check) {
		printf("ferry: configuration OK: %zu module(s)\n", d.cfg.n_modules);
		config_free(&d.cfg);
		return EXIT_OK;
	}
	if (d.cfg.global.log && !strcmp(d.cfg.global.log, "syslog"))
		log_init("ferry", level, 1);
	if (host_key(d.cfg.global.host_key, &d.host_key) < 0) {
		die_msg("%s", err_msg());
		config_free(&d.cfg);
		return EXIT_LOCAL;
	}
	be_gentle(&d.cfg.global);
	rc = daemon_run(&d);
	if (rc < 0)
		die_msg("%s", err_msg());
	keys_wipe(&d.host_key);
	config_free(&d.cfg);
	return rc < 0 ? EXIT_SOCKET : EXIT_OK;
}
