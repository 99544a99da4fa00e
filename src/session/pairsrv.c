/* SPDX-License-Identifier: MIT */
#include "session/pairsrv.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "channel/pake.h"
#include "util/err.h"
#include "util/log.h"

#define BOX_WAIT_MS 10000   /* the waiting process answers at once; this is a dead one */

/* A refusal about to be sent counts against the client's address (a wrong
 * code, or knocking where no pairing waits), as a wrong key does. */
static void count_failure(const struct server_ctx *sc)
{
	if (sc->on_auth)
		sc->on_auth(sc->ctx, 0);
}

static int box_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (!path || strlen(path) >= sizeof sa.sun_path)
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

int pair_read_line(int fd, char *line, size_t cap, int timeout_ms)
{
	struct timespec ts;
	size_t n = 0;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	int64_t until = (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 + timeout_ms;
	while (n + 1 < cap) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		int64_t left = until - ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		if (left <= 0 || poll(&p, 1, (int)left) <= 0)
			return err_set(-ETIMEDOUT, "the pair socket did not answer");
		if (read(fd, line + n, 1) != 1)
			return err_set(-EPIPE, "the other end of the pair socket went away");
		if (line[n] == '\n') {
			line[n] = '\0';
			return 0;
		}
		n++;
	}
	return err_set(-EPROTO, "the pair socket sent too long a line");
}

static int box_read_line(int fd, char *line, size_t cap)
{
	return pair_read_line(fd, line, cap, BOX_WAIT_MS);
}

static int box_say(int fd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int box_say(int fd, const char *fmt, ...)
{
	char line[PAIR_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof line, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof line)
		return -EINVAL;
	return write(fd, line, (size_t)n) == n ? 0 : -EPIPE;
}

/* The code and module of the pairing that waits: "PAIR <module> <code>". */
static int box_offer(int fd, char module[MSG_MAX_NAME + 1], char code[PAKE_CODE_SYMBOLS + 1])
{
	char line[PAIR_LINE_MAX];
	int rc = box_read_line(fd, line, sizeof line);

	if (rc < 0)
		return rc;
	_Static_assert(MSG_MAX_NAME == 255, "the width below");
	if (sscanf(line, "PAIR %255s %8s", module, code) != 2 ||
	    strlen(code) != PAKE_CODE_SYMBOLS)
		return err_set(-EPROTO, "the pair socket sent something else than a pairing");
	return 0;
}

/* The client's share, ours back, the client's tag. 1 when the tag is
 * right, 0 when it is not, <0 on a broken exchange. */
static int exchange(struct conn *c, struct pake *p, struct msg *m)
{
	int rc = conn_recv(c, m);

	if (rc == 0 && m->type != MSG_PAKE)
		rc = err_set(-EBADMSG, "pairing: expected PAKE, got %s", msg_type_name(m->type));
	if (rc == 0)
		rc = pake_finish(p, m->u.pake.share);
	if (rc < 0)
		return rc;
	m->type = MSG_PAKE;
	memcpy(m->u.pake.share, p->mine, sizeof m->u.pake.share);
	if ((rc = conn_send(c, m)) < 0 || (rc = conn_flush(c)) < 0 || (rc = conn_recv(c, m)) < 0)
		return rc;
	if (m->type != MSG_PAKE_TAG)
		return err_set(-EBADMSG, "pairing: expected PAKE_TAG, got %s", msg_type_name(m->type));
	return pake_check(p, m->u.pake_tag.tag) == 0;
}

/* The right code: the waiting process adds the key, then the box proves it
 * knew the code too and names the module. */
static int paired(struct conn *c, const struct server_ctx *sc, int fd, const struct pake *p,
		  const char *module, struct msg *m)
{
	char b64[KEY_B64_LEN + 1], line[PAIR_LINE_MAX], fpr[KEY_FPR_LEN];
	int rc;

	/* counted as an authorized session from here (its slot, no penalty) */
	if (sc->on_auth)
		sc->on_auth(sc->ctx, 1);
	key_to_base64(sc->peer->pub, b64);
	key_fingerprint(sc->peer->pub, fpr);
	if ((rc = box_say(fd, "OK %s %s\n", sc->addr ? sc->addr : "-", b64)) < 0 ||
	    (rc = box_read_line(fd, line, sizeof line)) < 0)
		return conn_refuse(c, REF_NOT_AUTHORIZED, "the box's pairing process did not answer: %s",
				   err_msg());
	if (strcmp(line, "ADDED") != 0)
		return conn_refuse(c, REF_NOT_AUTHORIZED, "the box could not add your key: %.200s",
				   !strncmp(line, "FAILED ", 7) ? line + 7 : line);
	log_info("paired: key %s added to module '%s'", fpr, module);
	m->type = MSG_PAKE_TAG;
	pake_tag(p, m->u.pake_tag.tag);
	snprintf(m->u.pake_tag.module, sizeof m->u.pake_tag.module, "%s", module);
	if ((rc = conn_send(c, m)) < 0 || (rc = conn_flush(c)) < 0)
		return rc;
	return 0;
}

static int wrong(struct conn *c, const struct server_ctx *sc, int fd)
{
	char line[PAIR_LINE_MAX];
	unsigned left = 0;

	if (box_say(fd, "WRONG %s\n", sc->addr ? sc->addr : "-") < 0 ||
	    box_read_line(fd, line, sizeof line) < 0) {
		/* as a right code without the box's answer: the client must not
		 * learn from the refusal which it was */
		count_failure(sc);
		return conn_refuse(c, REF_NOT_AUTHORIZED, "the box's pairing process did not answer: %s",
				   err_msg());
	}
	sscanf(line, "LEFT %u", &left);
	count_failure(sc);
	if (!left)
		return conn_refuse(c, REF_NOT_AUTHORIZED, "wrong pairing code; the code is no "
				   "longer valid (a new one: 'ferry pair MODULE' on the box)");
	return conn_refuse(c, REF_NOT_AUTHORIZED, "wrong pairing code (%u %s left)", left,
			   left == 1 ? "try" : "tries");
}

static int run(struct conn *c, const struct server_ctx *sc, const struct m_request *rq, int fd)
{
	char module[MSG_MAX_NAME + 1], code[PAKE_CODE_SYMBOLS + 1];
	struct msg *m = calloc(1, sizeof *m);
	struct pake p;
	int rc;

	if (!m)
		return err_set(-ENOMEM, "out of memory");
	if ((rc = box_offer(fd, module, code)) < 0) {
		log_err("pair socket: %s", err_msg());
		rc = conn_refuse(c, REF_NOT_AUTHORIZED, "the box's pairing process did not answer");
		goto out;
	}
	if (rq->module[0] && strcmp(rq->module, module) != 0) {
		box_say(fd, "ABORT %s\n", sc->addr ? sc->addr : "-");
		count_failure(sc);
		rc = conn_refuse(c, REF_NOT_AUTHORIZED, "the pairing waiting on this box is for another "
				 "module");
		goto out;
	}
	*m = (struct msg){ .type = MSG_ACCEPT };
	m->u.accept.protection = PROT_ENCRYPT;
	rc = pake_start(&p, 0, (const uint8_t *)code, strlen(code), (const uint8_t *)PAIR_CI,
			sizeof PAIR_CI - 1, chan_handshake_hash(c->ch), 64, NULL);
	explicit_bzero(code, sizeof code);
	if (rc == 0)
		rc = conn_send(c, m);
	if (rc == 0 && (rc = exchange(c, &p, m)) == 1)
		rc = paired(c, sc, fd, &p, module, m);
	else if (rc == 0)
		rc = wrong(c, sc, fd);
	else
		box_say(fd, "ABORT %s\n", sc->addr ? sc->addr : "-");
	pake_wipe(&p);
out:
	free(m);
	return rc;
}

int pairsrv_run(struct conn *c, const struct server_ctx *sc, const struct m_request *rq)
{
	const char *path = sc->cfg->global.pair_socket;

	if (!pake_available())
		return conn_refuse(c, REF_NOT_AUTHORIZED, "this box's ferry was built without pairing (its "
				   "libsodium is a minimal build); add the key to the module's "
				   "authorized keys by hand");
	int fd = box_connect(path);

	if (fd < 0) {
		if (fd != -ENOENT && fd != -ECONNREFUSED)
			log_err("pair socket %s: %s", path ? path : "(none)", strerror(-fd));
		count_failure(sc);
		return conn_refuse(c, REF_NOT_AUTHORIZED, "no pairing is waiting on this box (run 'ferry pair "
				   "MODULE' there first)");
	}
	log_info("pairing asked");
	int rc = run(c, sc, rq, fd);
	close(fd);
	return rc;
}
