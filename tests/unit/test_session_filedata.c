/* SPDX-License-Identifier: MIT */
/* File data extents of 4 GiB and more (session/filedata.c, issue 9 F6): a
 * DATA length is a u64, a receive's `max` a size_t, 32 bits wide on MIPS and
 * ARM32. make cross-mips runs this under qemu-mips, where it failed before
 * the clamp; on 64-bit builds it passes either way.
 *
 * The receiver is driven over a socketpair channel, the other end in a
 * thread. The 4 GiB + 1 MiB extent goes at protection none without the hash
 * (the user-space receive path, into no file): the sender sendfile()s a
 * sparse file, so the kernel moves zero pages and no emulated code touches
 * the bytes. The record levels are checked on a few records of an extent
 * announced as 2^32 + 5 bytes: an AEAD over 4 GiB under qemu would take
 * minutes, and the narrowing refused the very first record. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel/channel.h"
#include "channel/keys.h"
#include "session/conn.h"
#include "session/filedata.h"
#include "util/err.h"

#define GIB4 ((uint64_t)1 << 32)

static struct keypair ckey, skey;

/* --- the clamp ------------------------------------------------------------ */

static void test_piece(void **state)
{
	const uint64_t v[] = { 1, 65519, GIB4 - 1, GIB4, GIB4 + 1, GIB4 + 65518, GIB4 + 65519,
			       GIB4 + (1u << 20), 2 * GIB4, UINT64_MAX };

	(void)state;
	for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
		size_t p = filedata_piece(v[i]);
		/* Never 0, never more than is left, and whole unless size_t
		 * cannot hold it: then as much as it can. */
		assert_true(p > 0);
		assert_true((uint64_t)p <= v[i]);
		if (v[i] <= SIZE_MAX)
			assert_true((uint64_t)p == v[i]);
		else
			assert_true(p == SIZE_MAX);
	}
	fprintf(stderr, "  size_t is %zu bits\n", sizeof(size_t) * 8);
}

/* --- a connected pair ----------------------------------------------------- */

struct end {
	int fd, server, rc;
	struct chan_opts o;
	struct channel *c;
	struct chan_peer peer;
};

static void *handshake(void *arg)
{
	struct end *e = arg;

	e->rc = e->server ? chan_server(e->fd, &e->o, &e->c, &e->peer)
			  : chan_client(e->fd, &e->o, &e->c, &e->peer);
	return NULL;
}

/* Two conns after a real handshake, both at protection prot. */
static void conn_pair(struct conn *snd, struct conn *rcv, int prot, uint32_t req_flags)
{
	struct end cl = { .o.local = &ckey }, sv = { .o.local = &skey, .server = 1 };
	int fds[2];
	pthread_t t;

	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	cl.fd = fds[0];
	sv.fd = fds[1];
	cl.o.timeout_ms = sv.o.timeout_ms = 60000;
	assert_int_equal(pthread_create(&t, NULL, handshake, &sv), 0);
	handshake(&cl);
	pthread_join(t, NULL);
	assert_int_equal(cl.rc, 0);
	assert_int_equal(sv.rc, 0);
	memset(snd, 0, sizeof *snd);
	memset(rcv, 0, sizeof *rcv);
	snd->ch = cl.c;
	rcv->ch = sv.c;
	conn_set_protection(snd, prot, req_flags);
	conn_set_protection(rcv, prot, req_flags);
	ratelimit_init(&snd->rl, 0);
	ratelimit_init(&rcv->rl, 0);
}

/* --- the sending end, in a thread ----------------------------------------- */

struct feed {
	struct conn *c;
	uint64_t announce;   /* the DATA length */
	uint64_t send;       /* bytes actually sent; less = the stream is cut there */
	int rc;
};

static int end_file(struct conn *c)
{
	struct msg m = { .type = MSG_FILE_END };

	m.u.file_end.status = FILE_OK;
	return conn_send(c, &m);
}

/* sendfile() from a sparse file: the kernel moves zero pages. */
static int send_sparse(struct conn *c, uint64_t len)
{
	char name[] = "/tmp/ferry-filedata.XXXXXX";
	int fd = mkstemp(name), rc = 0;

	if (fd < 0)
		return -errno;
	unlink(name);
	if (ftruncate(fd, (off_t)len) < 0)
		rc = -errno;
	for (off_t off = 0; rc == 0 && (uint64_t)off < len;) {
		uint64_t left = len - (uint64_t)off;
		rc = chan_data_sendfile(c->ch, fd, &off, left < (8u << 20) ? (size_t)left : (8u << 20));
	}
	close(fd);
	return rc;
}

static int send_zeros(struct conn *c, uint64_t len)
{
	static const uint8_t z[65536];
	int rc = 0;

	while (rc == 0 && len) {
		size_t k = len < sizeof z ? (size_t)len : sizeof z;
		rc = chan_data_send(c->ch, z, k);
		len -= k;
	}
	return rc;
}

static void *feed_run(void *arg)
{
	struct feed *f = arg;

	f->rc = conn_send_len(f->c, MSG_DATA, f->announce);
	if (f->rc == 0)
		f->rc = f->c->prot == PROT_NONE ? send_sparse(f->c, f->send) : send_zeros(f->c, f->send);
	if (f->rc == 0 && f->send == f->announce)
		f->rc = end_file(f->c);
	if (f->rc == 0)
		f->rc = conn_flush(f->c);
	/* A cut stream ends here: the receiver sees the end of the connection. */
	shutdown(chan_fd(f->c->ch), SHUT_WR);
	return NULL;
}

/* Receives one file announced as `size` bytes while the thread sends it. */
static int receive(struct feed *f, struct conn *rcv, uint64_t size, struct xfer_stats *st)
{
	struct m_file_begin fb = { .index = 0, .size = size, .mode = 0600 };
	const char *why;
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, feed_run, f), 0);
	int rc = filedata_recv(rcv, &fb, NULL, NULL, st, NULL, &why);
	if (rc < 0) {
		fprintf(stderr, "  receiver: %s\n", err_msg());
		shutdown(chan_fd(rcv->ch), SHUT_RDWR);   /* the sender stops too */
	}
	pthread_join(t, NULL);
	return rc;
}

static double seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The whole 4 GiB + 1 MiB extent at protection none, unverified, into no
 * file: the chan_data_recv path (with a file it would splice). Before the
 * clamp a 32-bit receiver asked for 1 MiB, then for 0 bytes (-EINVAL). */
static void test_none_4g(void **state)
{
	const uint64_t len = GIB4 + (1u << 20);
	struct conn snd, rcv;
	struct xfer_stats st = { 0 };

	(void)state;
	conn_pair(&snd, &rcv, PROT_NONE, REQ_NO_VERIFY);
	struct feed f = { .c = &snd, .announce = len, .send = len };
	double t0 = seconds();
	int rc = receive(&f, &rcv, len, &st);
	fprintf(stderr, "  4 GiB + 1 MiB at none: %.1f s\n", seconds() - t0);
	assert_int_equal(f.rc, 0);
	assert_int_equal(rc, 0);   /* complete; 0 = not kept, as there was no file */
	assert_true(st.bytes_data == len);
	chan_free(snd.ch);
	chan_free(rcv.ch);
}

/* At the record levels, three records of an extent announced as 2^32 + 5
 * bytes, then the stream ends. Before the clamp a 32-bit receiver asked for
 * 5 bytes and refused the first record ("data record of 65519 bytes where 5
 * were expected"); now it takes the three and then sees the end. */
static void cut_extent(int prot)
{
	const uint64_t len = GIB4 + 5, sent = 3 * (uint64_t)CHAN_MAX_PLAIN;
	struct conn snd, rcv;
	struct xfer_stats st = { 0 };

	conn_pair(&snd, &rcv, prot, 0);
	struct feed f = { .c = &snd, .announce = len, .send = sent };
	int rc = receive(&f, &rcv, len, &st);
	assert_int_equal(f.rc, 0);
	/* The end of the stream is seen only after every record sent before
	 * it was taken: so "closed" means all three were accepted. */
	assert_true(rc < 0);
	assert_null(strstr(err_msg(), "expected"));
	assert_non_null(strstr(err_msg(), "closed"));
	chan_free(snd.ch);
	chan_free(rcv.ch);
}

static void test_integrity_cut(void **state)
{
	(void)state;
	cut_extent(PROT_INTEGRITY);
}

static void test_encrypt_cut(void **state)
{
	(void)state;
	cut_extent(PROT_ENCRYPT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_piece),
		cmocka_unit_test(test_integrity_cut),
		cmocka_unit_test(test_encrypt_cut),
		cmocka_unit_test(test_none_4g),
	};

	signal(SIGPIPE, SIG_IGN);   /* a receiver that gives up must fail the sender, not kill it */
	if (keys_generate(&ckey) < 0 || keys_generate(&skey) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
