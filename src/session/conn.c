/* SPDX-License-Identifier: MIT */
#include "session/conn.h"

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/err.h"
#include "util/log.h"

void conn_set_protection(struct conn *c, int prot, uint32_t req_flags)
{
	c->prot = (enum protection)prot;
	c->verify = prot == PROT_NONE && !(req_flags & REQ_NO_VERIFY);
	chan_set_data_protection(c->ch, c->prot);
}

int conn_send(struct conn *c, const struct msg *m)
{
	int n = msg_encode(m, c->out, sizeof c->out);
	if (n < 0)
		return n;
	return chan_send(c->ch, c->out, (size_t)n);
}

/* The clock is read here, in the long work, not on every send: the
 * channel's count of bytes written tells whether the peer heard from us. */
int conn_keepalive(struct conn *c)
{
	struct msg m = { .type = MSG_NOOP };
	struct chan_stats st;

	if (!c || !c->noop)
		return 0;
	double now = now_monotonic();
	chan_get_stats(c->ch, &st);
	if (!c->ka_at || st.bytes_out != c->ka_out) {
		c->ka_out = st.bytes_out;
		c->ka_at = now;
		return 0;
	}
	if (now - c->ka_at < 1.0)
		return 0;
	int rc = conn_send(c, &m);
	if (rc == 0)
		rc = conn_flush(c);
	chan_get_stats(c->ch, &st);
	c->ka_out = st.bytes_out;
	c->ka_at = now;
	return rc;
}

int conn_send_len(struct conn *c, uint8_t type, uint64_t v)
{
	struct msg m = { .type = type };

	if (type == MSG_WANT || type == MSG_DECIDED)
		m.u.index.index = (uint32_t)v;
	else
		m.u.len.len = v;
	return conn_send(c, &m);
}

int conn_recv(struct conn *c, struct msg *m)
{
	const uint8_t *p;
	size_t n;
	int rc;

	do {
		rc = chan_recv(c->ch, &p, &n);
		if (rc == -EPIPE)
			return err_set(-EPIPE, "connection closed by peer");
		if (rc < 0)
			return rc;
		rc = msg_decode(p, n, m);
		if (rc < 0)
			return rc;
	} while (m->type == MSG_NOOP);
	if (m->type == MSG_ERROR) {
		c->peer_code = m->u.refuse.code;
		return err_set(-ECONNABORTED, "peer reported: %s", m->u.refuse.reason);
	}
	return 0;
}

int conn_pending(struct conn *c)
{
	if (chan_readable(c->ch))
		return 1;
	/* Nothing buffered: peek at the socket so a waiting decision is seen
	 * without blocking; a partial record then completes quickly. */
	struct pollfd pfd = { .fd = chan_fd(c->ch), .events = POLLIN };
	return poll(&pfd, 1, 0) == 1;
}

int conn_refuse(struct conn *c, uint16_t code, const char *fmt, ...)
{
	struct msg m = { .type = MSG_REFUSE };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.u.refuse.reason, sizeof m.u.refuse.reason, fmt, ap);
	va_end(ap);
	m.u.refuse.code = code;
	log_warn("refused: %s", m.u.refuse.reason);
	if (conn_send(c, &m) == 0)
		conn_flush(c);
	return 1;
}

void conn_fail(struct conn *c, uint16_t code, const char *reason)
{
	struct msg m = { .type = MSG_ERROR };

	m.u.refuse.code = code;
	snprintf(m.u.refuse.reason, sizeof m.u.refuse.reason, "%s", reason);
	if (conn_send(c, &m) < 0 || chan_flush(c->ch) < 0)
		return;
	/* Close gently: closing with unread input makes the kernel send a reset,
	 * which can overtake the ERROR and leave the peer with only
	 * "connection reset". Half-close, then drain briefly. */
	int fd = chan_fd(c->ch);
	char sink[4096];
	shutdown(fd, SHUT_WR);
	for (int i = 0; i < 256; i++) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 100) != 1 || read(fd, sink, sizeof sink) <= 0)
			break;
	}
}

int conn_flush(struct conn *c)
{
	return chan_flush(c->ch);
}
