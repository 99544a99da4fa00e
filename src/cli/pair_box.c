/* SPDX-License-Identifier: MIT */
/* ferry pair MODULE, on the box: shows a one-time code and waits (a few
 * minutes) on the pair socket for the daemon's session that a client with
 * that code reaches (session/pairsrv.h). This process, run by whoever
 * administers the box, is the one that adds the client's key to the
 * module's authorized keys: the daemon never writes its own key lists.
 * It ends after one pairing, after three wrong codes, or when the code
 * expires; every attempt is logged (stderr and syslog, LOG_AUTH). */
#include "cli/pair_box.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "channel/keys.h"
#include "channel/pake.h"
#include "cli/cli.h"
#include "session/pairsrv.h"
#include "util/config.h"
#include "util/err.h"

#define MAX_WRONG 3
#define CONN_WAIT_MS 15000   /* one session's whole exchange */

struct box {
	const struct module_cfg *mod;
	const char *keys;          /* the module's authorized keys file */
	char sock[108];
	uid_t daemon_uid;
	int lfd;
	char code[PAKE_CODE_SYMBOLS + 1];
	unsigned wrong;
};

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static void say(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* What happens to a pairing goes to the terminal and to the auth log. */
static void say(int prio, const char *fmt, ...)
{
	char line[600];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	fprintf(stderr, "ferry pair: %s\n", line);
	syslog(prio, "%s", line);
}

/* The daemon's host key file, as `ferry serve --config` finds it. */
static int host_key_of(const struct ferry_config *cfg, const char *config, char *out, size_t cap)
{
	if (!cfg->global.host_key)
		return default_host_key(config, out, cap);
	snprintf(out, cap, "%s", cfg->global.host_key);
	return 0;
}

/* Who may connect: the daemon's user ("user =", else the owner of the host
 * key, which the daemon reads), and root. */
static uid_t daemon_uid(const struct ferry_config *cfg, const char *config)
{
	char hk[4096];
	struct stat st;

	if (cfg->global.user)
		return cfg->global.uid;
	if (host_key_of(cfg, config, hk, sizeof hk) < 0)
		return geteuid();
	return stat(hk, &st) == 0 ? st.st_uid : geteuid();
}

static int sock_path(const struct ferry_config *cfg, const char *config, char *out, size_t cap)
{
	char hk[4096];

	if (cfg->global.pair_socket) {
		snprintf(out, cap, "%s", cfg->global.pair_socket);
		return 0;
	}
	if (host_key_of(cfg, config, hk, sizeof hk) < 0)
		return -1;
	return default_pair_socket(hk, out, cap);
}

/* Binds the pair socket; one `ferry pair` at a time per daemon. */
static int listen_on(struct box *b)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return err_sys(-errno, "socket");
	snprintf(sa.sun_path, sizeof sa.sun_path, "%s", b->sock);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0) {
		close(fd);
		return err_set(-EBUSY, "another 'ferry pair' is waiting on %s", b->sock);
	}
	unlink(b->sock);   /* a socket left by one that was killed */
	mode_t old = umask(077);
	int rc = bind(fd, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (rc < 0 || listen(fd, 4) < 0) {
		rc = err_sys(-errno, "pair socket %s", b->sock);
		close(fd);
		return rc;
	}
	if (b->daemon_uid != geteuid() && chown(b->sock, b->daemon_uid, (gid_t)-1) < 0) {
		rc = err_sys(-errno, "pair socket %s: cannot give it to the daemon's user (uid %u)",
			     b->sock, (unsigned)b->daemon_uid);
		close(fd);
		unlink(b->sock);
		return rc;
	}
	b->lfd = fd;
	return 0;
}

static int64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void reply(int fd, const char *s)
{
	if (write(fd, s, strlen(s)) < 0)
		return;   /* the session is gone: it tells its client itself */
}

/* The right code: the key goes into the module's list. 0 when it is there. */
static int add_key(struct box *b, int fd, const char *addr, const char *b64)
{
	uint8_t pub[KEY_LEN];
	char comment[160], fpr[KEY_FPR_LEN], when[32];
	time_t t = time(NULL);
	struct tm tm;

	if (key_from_base64(b64, strlen(b64), pub) < 0) {
		reply(fd, "FAILED the session sent no key\n");
		return -1;
	}
	key_fingerprint(pub, fpr);
	strftime(when, sizeof when, "%Y-%m-%d", localtime_r(&t, &tm));
	snprintf(comment, sizeof comment, "paired %s from %.64s", when, addr);
	int rc = keys_authorize_add(b->keys, pub, comment);
	if (rc < 0) {
		char line[PAIR_LINE_MAX];
		say(LOG_ERR, "key %s from %s: %s", fpr, addr, err_msg());
		snprintf(line, sizeof line, "FAILED %.400s\n", err_msg());
		reply(fd, line);
		return -1;
	}
	reply(fd, "ADDED\n");
	say(LOG_NOTICE, "paired: key %s from %s %s %s (module '%s')", fpr, addr,
	    rc == 1 ? "was already in" : "added to", b->keys, b->mod->name);
	return 0;
}

/* A wrong code, or a session that had the code and gave no answer in time
 * (its client may have learnt the outcome all the same): one of MAX_WRONG.
 * 0 go on waiting, -1 the code is spent. A session without an answer gets
 * none (fd -1): it then refuses its client as it would a right code that
 * the box did not answer, so the refusal tells nothing. */
static int count_wrong(struct box *b, int fd, const char *what, const char *addr)
{
	char line[32];
	unsigned left = MAX_WRONG - ++b->wrong;

	snprintf(line, sizeof line, "LEFT %u\n", left);
	if (fd >= 0)
		reply(fd, line);
	say(LOG_WARNING, "%s from %s (%u of %u)", what, addr, b->wrong, MAX_WRONG);
	return left ? 0 : -1;
}

/* One session: 1 paired, 0 go on waiting, -1 the code is spent. */
static int serve_one(struct box *b, int fd)
{
	char line[PAIR_LINE_MAX], what[16], addr[128], key[KEY_B64_LEN + 8];
	struct ucred cr;
	socklen_t cl = sizeof cr;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &cl) < 0 ||
	    (cr.uid != b->daemon_uid && cr.uid != 0 && cr.uid != geteuid())) {
		say(LOG_WARNING, "pair socket: a connection from uid %d, not the daemon's: ignored",
		    (int)cr.uid);
		return 0;
	}
	snprintf(line, sizeof line, "PAIR %s %s\n", b->mod->name, b->code);
	reply(fd, line);
	if (pair_read_line(fd, line, sizeof line, CONN_WAIT_MS) < 0)
		return count_wrong(b, -1, "no answer (counted as a wrong code)",
				   "a pairing session");
	key[0] = '\0';
	if (sscanf(line, "%15s %127s %51s", what, addr, key) < 2)
		return count_wrong(b, -1, "no answer (counted as a wrong code)", "a pairing session");
	if (!strcmp(what, "OK"))
		return add_key(b, fd, addr, key) == 0 ? 1 : 0;
	if (!strcmp(what, "WRONG"))
		return count_wrong(b, fd, "wrong code", addr);
	say(LOG_INFO, "%s left without trying a code", addr);
	return 0;
}

static int wait_for_pairing(struct box *b, int64_t until)
{
	while (!stop) {
		int64_t left = until - mono_ms();
		if (left <= 0)
			return err_set(-ETIMEDOUT, "the code expired; nothing was paired");
		struct pollfd p = { .fd = b->lfd, .events = POLLIN };
		if (poll(&p, 1, left > 1000 ? 1000 : (int)left) <= 0)
			continue;
		int fd = accept4(b->lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		int r = serve_one(b, fd);
		close(fd);
		if (r == 1)
			return 0;
		if (r < 0)
			return err_set(-EACCES, "%d wrong codes: this code is no longer valid", MAX_WRONG);
	}
	return err_set(-EINTR, "stopped; nothing was paired");
}

/* Two names of one file: the same text, or (both existing) the same inode. */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	return strcmp(a, b) == 0 || (stat(a, &sa) == 0 && stat(b, &sb) == 0 &&
				     sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino);
}

static int module_keys(const struct ferry_config *cfg, const struct module_cfg *m,
		       const char **out)
{
	const char *k = m->authorized_keys ? m->authorized_keys : cfg->global.authorized_keys;

	if (!k || !strcmp(k, "none"))
		return err_set(-EINVAL, "module '%s' has no authorized keys file to add a key to "
			       "(set 'authorized keys = FILE' for it)", m->name);
	/* A key added to a file that other modules read would open them too:
	 * pairing is for one module, so it needs a file of the module's own. */
	char others[256] = "";
	size_t n = 0;
	for (size_t i = 0; i < cfg->n_modules; i++) {
		const struct module_cfg *o = &cfg->modules[i];
		if (o == m || !o->authorized_keys || !same_file(o->authorized_keys, k))
			continue;
		size_t len = strlen(others);
		if (n++ < 4)
			snprintf(others + len, sizeof others - len, "%s'%s'", len ? ", " : "",
				 o->name);
	}
	if (n)
		return err_set(-EINVAL, "module '%s' shares its authorized keys file %s with "
			       "%zu other module%s (%s%s): a paired key would open %s too; give "
			       "'%s' a file of its own ('authorized keys = FILE' in its section)",
			       m->name, k, n, n == 1 ? "" : "s", others, n > 4 ? ", ..." : "",
			       n == 1 ? "it" : "them", m->name);
	*out = k;
	return 0;
}

int pair_box(const char *config, const char *module, long valid_s)
{
	struct ferry_config cfg;
	struct box b = { .lfd = -1 };
	char code[PAKE_CODE_BUF];
	int rc;

	if (!pake_available())
		return die_msg("pair: this ferry was built without pairing (its libsodium is a "
			       "minimal build, without ristretto255)"), EXIT_LOCAL;
	if (config_load(config, &cfg) < 0)
		return die_msg("%s", err_msg()), EXIT_USAGE;
	b.mod = config_module(&cfg, module);
	if (!b.mod) {
		config_free(&cfg);
		return die_msg("pair: no module '%s' in %s", module, config), EXIT_USAGE;
	}
	b.daemon_uid = daemon_uid(&cfg, config);
	if ((rc = module_keys(&cfg, b.mod, &b.keys)) < 0 ||
	    (rc = sock_path(&cfg, config, b.sock, sizeof b.sock)) < 0 || (rc = listen_on(&b)) < 0) {
		config_free(&cfg);
		return die_msg("pair: %s", err_msg()), EXIT_LOCAL;
	}
	struct sigaction sa = { .sa_handler = on_stop };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	openlog("ferry-pair", LOG_PID, LOG_AUTH);
	pake_code_new(code);
	pake_code_read(code, b.code);
	printf("Pairing code for module '%s': %s\n"
	       "It is valid for %ld %s, for one client; %d wrong tries end it.\n"
	       "On the client: ferry pair HOST %s   (HOST: this box's address, as in HOST:%s)\n",
	       b.mod->name, code, valid_s >= 120 ? valid_s / 60 : valid_s,
	       valid_s >= 120 ? "minutes" : "seconds", MAX_WRONG, code, b.mod->name);
	fflush(stdout);
	say(LOG_NOTICE, "waiting for a client to pair with module '%s' (%ld s)", b.mod->name,
	    valid_s);
	rc = wait_for_pairing(&b, mono_ms() + valid_s * 1000);
	if (rc < 0)
		say(LOG_NOTICE, "module '%s': %s", b.mod->name, err_msg());
	close(b.lfd);
	unlink(b.sock);
	explicit_bzero(b.code, sizeof b.code);
	explicit_bzero(code, sizeof code);
	closelog();
	config_free(&cfg);
	return rc == 0 ? EXIT_OK : rc == -ETIMEDOUT ? EXIT_TIMEOUT : EXIT_REFUSED;
}
