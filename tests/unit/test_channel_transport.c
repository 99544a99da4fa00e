/* SPDX-License-Identifier: MIT */
/* Opening + handshake + transport over socketpair(AF_UNIX), the other end
 * in a thread (or a forked process for the backend interop test). */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel/channel.h"
#include "channel/transport.h"
#include "util/err.h"

static struct keypair ckey, skey;

struct end {
	int fd;
	int server;
	struct chan_opts o;
	struct channel *c;
	struct chan_peer peer;
	int rc;
	char err[1024];
};

static void *run_end(void *arg)
{
	struct end *e = arg;

	e->rc = e->server ? chan_server(e->fd, &e->o, &e->c, &e->peer)
			  : chan_client(e->fd, &e->o, &e->c, &e->peer);
	snprintf(e->err, sizeof e->err, "%s", err_msg());
	return NULL;
}

static void ends_init(struct end *cl, struct end *sv, int fds[2])
{
	memset(cl, 0, sizeof *cl);
	memset(sv, 0, sizeof *sv);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds), 0);
	cl->fd = fds[0];
	sv->fd = fds[1];
	sv->server = 1;
	cl->o.local = &ckey;
	sv->o.local = &skey;
	cl->o.payload = (const uint8_t *)"client hello";
	cl->o.payload_len = 12;
	sv->o.payload = (const uint8_t *)"server hello!";
	sv->o.payload_len = 13;
	cl->o.timeout_ms = sv->o.timeout_ms = 10000;
}

/* Both ends' handshakes at once; returns after both finished. */
static void run_pair(struct end *cl, struct end *sv)
{
	pthread_t t;

	assert_int_equal(pthread_create(&t, NULL, run_end, sv), 0);
	run_end(cl);
	pthread_join(t, NULL);
}

static void connect_pair(struct end *cl, struct end *sv)
{
	int fds[2];

	ends_init(cl, sv, fds);
	run_pair(cl, sv);
	if (cl->rc || sv->rc)
		fprintf(stderr, "client: %s\nserver: %s\n", cl->err, sv->err);
	assert_int_equal(cl->rc, 0);
	assert_int_equal(sv->rc, 0);
}

static void test_handshake(void **state)
{
	struct end cl, sv;

	(void)state;
	connect_pair(&cl, &sv);
	assert_memory_equal(cl.peer.pub, skey.pub, KEY_LEN);
	assert_memory_equal(sv.peer.pub, ckey.pub, KEY_LEN);
	assert_int_equal(cl.peer.payload_len, 13);
	assert_memory_equal(cl.peer.payload, "server hello!", 13);
	assert_int_equal(sv.peer.payload_len, 12);
	assert_memory_equal(sv.peer.payload, "client hello", 12);
	assert_int_equal(cl.peer.cipher, sv.peer.cipher);
	assert_int_equal(cl.peer.cipher, chan_have_hw_aes() ? CIPHER_AESGCM : CIPHER_CHACHAPOLY);
	assert_memory_equal(chan_handshake_hash(cl.c), chan_handshake_hash(sv.c), 64);
	fprintf(stderr, "  negotiated %s with %s\n", chan_cipher_name(cl.peer.cipher), chan_backend_name());
	chan_free(cl.c);
	chan_free(sv.c);
}

static void test_cipher_masks(void **state)
{
	struct end cl, sv;
	int fds[2];

	(void)state;
	ends_init(&cl, &sv, fds);
	cl.o.cipher_mask = 1u << CIPHER_CHACHAPOLY;
	run_pair(&cl, &sv);
	assert_int_equal(cl.rc, 0);
	assert_int_equal(cl.peer.cipher, CIPHER_CHACHAPOLY);
	chan_free(cl.c);
	chan_free(sv.c);

	ends_init(&cl, &sv, fds);
	sv.o.cipher_mask = 1u << CIPHER_CHACHAPOLY;
	run_pair(&cl, &sv);
	assert_int_equal(sv.rc, 0);
	assert_int_equal(sv.peer.cipher, CIPHER_CHACHAPOLY);
	chan_free(cl.c);
	chan_free(sv.c);

	if (chan_have_hw_aes()) {
		ends_init(&cl, &sv, fds);
		cl.o.cipher_mask = 1u << CIPHER_AESGCM;
		sv.o.cipher_mask = 1u << CIPHER_CHACHAPOLY;
		run_pair(&cl, &sv);
		assert_true(cl.rc < 0 && sv.rc < 0);
		assert_non_null(strstr(cl.err, "server refused: no common cipher"));
		close(fds[0]);
		close(fds[1]);
	}
}

/* ---- a generic "other end" thread ---- */

struct job {
	struct channel *c;
	void (*fn)(struct job *);
	size_t size;
	enum protection prot;
	int rc;
	uint64_t sum;
	char err[1024];
};

static void *run_job(void *arg)
{
	struct job *j = arg;
	j->fn(j);
	snprintf(j->err, sizeof j->err, "%s", err_msg());
	return NULL;
}

static uint8_t pattern(size_t i, unsigned seed)
{
	return (uint8_t)((i * 2654435761u) >> 13 ^ seed);
}

/* Receives `size` bytes of data and checks the pattern; then echoes one
 * control message "done". */
static void recv_data_job(struct job *j)
{
	size_t got = 0, n;
	const uint8_t *p;

	while (got < j->size) {
		if ((j->rc = chan_data_recv(j->c, j->size - got, &p, &n)) < 0)
			return;
		for (size_t i = 0; i < n; i++)
			if (p[i] != pattern(got + i, 7)) {
				j->rc = -EILSEQ;
				return;
			}
		got += n;
	}
	if ((j->rc = chan_send(j->c, "done", 4)) == 0)
		j->rc = chan_flush(j->c);
}

static void test_control_messages(void **state)
{
	static uint8_t big[CHAN_MAX_PLAIN + 1];
	struct end cl, sv;
	const uint8_t *m;
	size_t len;

	(void)state;
	connect_pair(&cl, &sv);
	for (size_t i = 0; i < sizeof big; i++)
		big[i] = pattern(i, 1);
	assert_int_equal(chan_send(cl.c, "hello", 5), 0);
	assert_int_equal(chan_send(cl.c, "", 0), 0);
	assert_int_equal(chan_send(cl.c, big, CHAN_MAX_CTRL), 0);
	assert_int_equal(chan_send(cl.c, big, CHAN_MAX_CTRL + 1), -EMSGSIZE);
	assert_int_equal(chan_flush(cl.c), 0);
	assert_int_equal(chan_recv(sv.c, &m, &len), 0);
	assert_int_equal(len, 5);
	assert_memory_equal(m, "hello", 5);
	assert_int_equal(chan_recv(sv.c, &m, &len), 0);
	assert_int_equal(len, 0);
	assert_int_equal(chan_recv(sv.c, &m, &len), 0);
	assert_int_equal(len, CHAN_MAX_CTRL);
	assert_memory_equal(m, big, len);
	/* The other way, and chan_readable. */
	assert_int_equal(chan_readable(cl.c), 0);
	assert_int_equal(chan_send(sv.c, "pong", 4), 0);
	assert_int_equal(chan_flush(sv.c), 0);
	assert_int_equal(chan_readable(cl.c), 1);
	assert_int_equal(chan_recv(cl.c, &m, &len), 0);
	assert_memory_equal(m, "pong", 4);

	struct chan_stats st;
	chan_get_stats(cl.c, &st);
	/* "hello" and "" share a record; the big one needs one of its own. */
	assert_int_equal(st.records_out, 2);
	assert_int_equal(st.records_in, 1);
	assert_int_equal(st.bytes_out, (2 + 2 + 5 + 2 + 16) + (2 + 2 + CHAN_MAX_CTRL + 16));

	/* Clean EOF between records: -EPIPE. */
	chan_free(sv.c);
	assert_int_equal(chan_recv(cl.c, &m, &len), -EPIPE);
	chan_free(cl.c);
}

static void data_levels(enum protection prot)
{
	struct end cl, sv;
	struct job j = { .fn = recv_data_job, .size = 3 * 1000 * 1000 + 17, .prot = prot };
	const size_t sz = j.size;
	uint8_t *buf = malloc(sz), *dst;
	const uint8_t *m;
	size_t len, cap, off = 0, n;
	pthread_t t;

	assert_non_null(buf);
	for (size_t i = 0; i < sz; i++)
		buf[i] = pattern(i, 7);
	connect_pair(&cl, &sv);
	chan_set_data_protection(cl.c, prot);
	chan_set_data_protection(sv.c, prot);
	j.c = sv.c;
	assert_int_equal(pthread_create(&t, NULL, run_job, &j), 0);
	/* Half through chan_data_buf/commit, a record at a time, half through chan_data_send. */
	while (off < sz / 2) {
		dst = chan_data_buf(cl.c, &cap);
		assert_non_null(dst);
		assert_true(cap > 0 && cap <= CHAN_MAX_PLAIN);
		n = cap < sz / 2 - off ? cap : sz / 2 - off;
		if (n > 10000)
			n -= off % 997;   /* uneven record sizes */
		memcpy(dst, buf + off, n);
		assert_int_equal(chan_data_commit(cl.c, n), 0);
		off += n;
	}
	assert_int_equal(chan_data_send(cl.c, buf + off, sz - off), 0);
	assert_int_equal(chan_recv(cl.c, &m, &len), 0);   /* flushes first */
	assert_int_equal(len, 4);
	assert_memory_equal(m, "done", 4);
	pthread_join(t, NULL);
	if (j.rc)
		fprintf(stderr, "receiver: %s\n", j.err);
	assert_int_equal(j.rc, 0);

	/* chan_data_sendfile from a temporary file. */
	char path[] = "/tmp/ferry-chan-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(write(fd, buf, sz), (ssize_t)sz);
	j.rc = 0;
	assert_int_equal(pthread_create(&t, NULL, run_job, &j), 0);
	off_t foff = 0;
	assert_int_equal(chan_data_sendfile(cl.c, fd, &foff, sz), 0);
	assert_int_equal(foff, (off_t)sz);
	assert_int_equal(chan_recv(cl.c, &m, &len), 0);
	assert_memory_equal(m, "done", 4);
	pthread_join(t, NULL);
	assert_int_equal(j.rc, 0);
	close(fd);

	struct chan_stats st;
	chan_get_stats(cl.c, &st);
	if (prot == PROT_NONE)
		assert_true(st.bytes_out >= 2 * sz && st.bytes_out < 2 * sz + 1000);
	else
		assert_true(st.records_out >= 2 * sz / CHAN_MAX_PLAIN);
	chan_free(cl.c);
	chan_free(sv.c);
	free(buf);
}

static void test_data_encrypt(void **state)
{
	(void)state;
	data_levels(PROT_ENCRYPT);
}

static void test_data_integrity(void **state)
{
	(void)state;
	data_levels(PROT_INTEGRITY);
}

static void test_data_none(void **state)
{
	(void)state;
	data_levels(PROT_NONE);
}

/* Many messages batch into few records; data ends a batch; a record whose
 * framing is broken, or data where messages are pending, is refused. */
static void test_batch_framing(void **state)
{
	struct end cl, sv;
	const uint8_t *m;
	size_t len, rl;
	char msg[32];
	struct chan_stats st;

	(void)state;
	connect_pair(&cl, &sv);
	for (int i = 0; i < 3000; i++) {
		snprintf(msg, sizeof msg, "message %d", i);
		assert_int_equal(chan_send(cl.c, msg, strlen(msg)), 0);
	}
	assert_int_equal(chan_data_send(cl.c, "data", 4), 0);
	assert_int_equal(chan_send(cl.c, "after", 5), 0);
	assert_int_equal(chan_flush(cl.c), 0);
	chan_get_stats(cl.c, &st);
	/* ~39,000 bytes of messages: 3 records, then the data, then "after". */
	assert_int_equal(st.records_out, 3 + 1 + 1);
	for (int i = 0; i < 3000; i++) {
		snprintf(msg, sizeof msg, "message %d", i);
		assert_int_equal(chan_recv(sv.c, &m, &len), 0);
		assert_int_equal(len, strlen(msg));
		assert_memory_equal(m, msg, len);
		assert_int_equal(chan_readable(sv.c), 1);
	}
	assert_int_equal(chan_data_recv(sv.c, 4, &m, &len), 0);
	assert_memory_equal(m, "data", 4);
	assert_int_equal(chan_recv(sv.c, &m, &len), 0);
	assert_memory_equal(m, "after", 5);

	/* Data asked for while a record still holds messages. */
	assert_int_equal(chan_send(cl.c, "one", 3), 0);
	assert_int_equal(chan_send(cl.c, "two", 3), 0);
	assert_int_equal(chan_flush(cl.c), 0);
	assert_int_equal(chan_recv(sv.c, &m, &len), 0);
	assert_int_equal(chan_data_recv(sv.c, 3, &m, &len), -EPROTO);
	assert_non_null(strstr(err_msg(), "control messages came"));
	chan_free(sv.c);
	chan_free(cl.c);

	/* A length that runs past the record, sealed by hand. */
	connect_pair(&cl, &sv);
	static const uint8_t bad[9] = { 0, 3, 'a', 'b', 'c', 0, 9, 'a', 'b' };
	uint8_t *o = cl.c->out + cl.c->out_len;
	memcpy(o + 2, bad, sizeof bad);
	assert_int_equal(rec_seal(&cl.c->tx, PROT_ENCRYPT, o, 9, &rl), 0);
	cl.c->out_len += rl;
	assert_int_equal(chan_flush(cl.c), 0);
	assert_int_equal(chan_recv(sv.c, &m, &len), 0);
	assert_memory_equal(m, "abc", 3);
	assert_int_equal(chan_recv(sv.c, &m, &len), -EPROTO);
	assert_non_null(strstr(err_msg(), "malformed message framing"));
	assert_int_equal(chan_recv(sv.c, &m, &len), -EPROTO);   /* and it stays unusable */
	chan_free(sv.c);
	chan_free(cl.c);
}

/* A record must not run past what the caller asked for. */
static void test_data_overrun(void **state)
{
	struct end cl, sv;
	const uint8_t *p;
	size_t n;

	(void)state;
	connect_pair(&cl, &sv);
	assert_int_equal(chan_data_send(cl.c, "0123456789", 10), 0);
	assert_int_equal(chan_flush(cl.c), 0);
	assert_int_equal(chan_data_recv(sv.c, 5, &p, &n), -EPROTO);
	assert_non_null(strstr(err_msg(), "data record of 10 bytes"));
	chan_free(cl.c);
	chan_free(sv.c);
}

static void test_rekey(void **state)
{
	struct end cl, sv;
	struct chan_stats a, b;
	const uint8_t *m;
	size_t len;
	char msg[32];

	(void)state;
	chan_test_set_rekey_interval(3);
	connect_pair(&cl, &sv);
	chan_test_set_rekey_interval(0);
	for (int round = 0; round < 5; round++) {
		for (int i = 0; i < 7; i++) {
			snprintf(msg, sizeof msg, "c%d.%d", round, i);
			assert_int_equal(chan_send(cl.c, msg, strlen(msg)), 0);
		}
		chan_set_data_protection(cl.c, round % 2 ? PROT_INTEGRITY : PROT_ENCRYPT);
		chan_set_data_protection(sv.c, round % 2 ? PROT_INTEGRITY : PROT_ENCRYPT);
		assert_int_equal(chan_data_send(cl.c, "data!", 5), 0);
		assert_int_equal(chan_flush(cl.c), 0);
		for (int i = 0; i < 7; i++) {
			snprintf(msg, sizeof msg, "c%d.%d", round, i);
			assert_int_equal(chan_recv(sv.c, &m, &len), 0);
			assert_int_equal(len, strlen(msg));
			assert_memory_equal(m, msg, len);
		}
		assert_int_equal(chan_data_recv(sv.c, 5, &m, &len), 0);
		assert_memory_equal(m, "data!", 5);
		assert_int_equal(chan_send(sv.c, "ack", 3), 0);
		assert_int_equal(chan_flush(sv.c), 0);
		assert_int_equal(chan_recv(cl.c, &m, &len), 0);
		assert_memory_equal(m, "ack", 3);
	}
	chan_get_stats(cl.c, &a);
	chan_get_stats(sv.c, &b);
	/* Client: 10 records sent (7 messages in one, then the data: 3
	 * rekeys) and 5 received (1). */
	assert_int_equal(a.records_out, 10);
	assert_int_equal(a.rekeys, 10 / 3 + 5 / 3);
	assert_int_equal(b.rekeys, a.rekeys);
	chan_free(cl.c);
	chan_free(sv.c);
}

/* Both ends push megabytes at each other at the same time, reading what
 * is readable between their writes: neither may deadlock. */
static void bulk_job(struct job *j)
{
	static _Thread_local uint8_t chunk[100000];
	size_t sent = 0, got = 0, n;
	const uint8_t *p;

	j->sum = 0;
	while (sent < j->size || got < j->size) {
		if (sent < j->size) {
			n = j->size - sent < sizeof chunk ? j->size - sent : sizeof chunk;
			for (size_t i = 0; i < n; i++)
				chunk[i] = pattern(sent + i, 3);
			if ((j->rc = chan_data_send(j->c, chunk, n)) < 0)
				return;
			sent += n;
			if (sent == j->size && (j->rc = chan_flush(j->c)) < 0)
				return;
		}
		while (got < j->size && (sent == j->size || chan_readable(j->c))) {
			if ((j->rc = chan_data_recv(j->c, j->size - got, &p, &n)) < 0)
				return;
			for (size_t i = 0; i < n; i++)
				if (p[i] != pattern(got + i, 3)) {
					j->rc = -EILSEQ;
					return;
				}
			got += n;
		}
	}
	j->rc = 0;
}

static void test_bulk_both_ways(void **state)
{
	struct end cl, sv;
	struct job a = { .fn = bulk_job, .size = 8u << 20 }, b = a;
	pthread_t t;

	(void)state;
	connect_pair(&cl, &sv);
	chan_set_timeout(cl.c, 5000);
	chan_set_timeout(sv.c, 5000);
	a.c = cl.c;
	b.c = sv.c;
	assert_int_equal(pthread_create(&t, NULL, run_job, &b), 0);
	run_job(&a);
	pthread_join(t, NULL);
	if (a.rc || b.rc) {
		fprintf(stderr, "a: %s\nb: %s\n", a.err, b.err);
		for (int i = 0; i < 2; i++) {
			struct channel *c = i ? sv.c : cl.c;
			fprintf(stderr, "  in %zu..%zu live %d@%zu out %zu/%zu eof %d\n", c->in_r, c->in_w,
				c->live, c->live_lo, c->out_off, c->out_len, c->eof);
		}
	}
	assert_int_equal(a.rc, 0);
	assert_int_equal(b.rc, 0);
	chan_free(cl.c);
	chan_free(sv.c);
}

/* Takes everything the peer wrote to `fd` so far, lets edit() change it,
 * and puts it back behind the same descriptor number. */
static void tamper(int fd, void (*edit)(uint8_t *, size_t *), int close_after)
{
	static uint8_t raw[1 << 20];
	size_t n = 0;
	ssize_t r;
	int sp[2];

	while ((r = recv(fd, raw + n, sizeof raw - n, MSG_DONTWAIT)) > 0)
		n += (size_t)r;
	edit(raw, &n);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	assert_int_equal(write(sp[1], raw, n), (ssize_t)n);
	if (close_after)
		close(sp[1]);
	assert_int_equal(dup2(sp[0], fd), fd);
	close(sp[0]);
}

static void flip_byte(uint8_t *raw, size_t *n)
{
	raw[*n / 2] ^= 0x01;
}

static void truncate_last(uint8_t *raw, size_t *n)
{
	(void)raw;
	*n -= 3;
}

static void huge_len(uint8_t *raw, size_t *n)
{
	raw[0] = 0xff;
	raw[1] = 0xff;
	(void)n;
}

static void test_tamper(void **state)
{
	struct end cl, sv;
	const uint8_t *m;
	size_t len;

	(void)state;
	/* ENCRYPT: a flipped bit anywhere in a record fails the tag. */
	connect_pair(&cl, &sv);
	assert_int_equal(chan_send(cl.c, "some control message", 20), 0);
	assert_int_equal(chan_flush(cl.c), 0);
	tamper(chan_fd(sv.c), flip_byte, 0);
	assert_int_equal(chan_recv(sv.c, &m, &len), -EBADMSG);
	assert_non_null(strstr(err_msg(), "decryption failed"));
	assert_true(chan_recv(sv.c, &m, &len) < 0);   /* sticky */
	chan_free(cl.c);
	chan_free(sv.c);

	/* INTEGRITY: the data travels in clear, but a change is caught. */
	connect_pair(&cl, &sv);
	chan_set_data_protection(cl.c, PROT_INTEGRITY);
	chan_set_data_protection(sv.c, PROT_INTEGRITY);
	assert_int_equal(chan_data_send(cl.c, "visible file data", 17), 0);
	assert_int_equal(chan_flush(cl.c), 0);
	tamper(chan_fd(sv.c), flip_byte, 0);
	assert_int_equal(chan_data_recv(sv.c, 17, &m, &len), -EBADMSG);
	assert_non_null(strstr(err_msg(), "integrity check"));
	chan_free(cl.c);
	chan_free(sv.c);

	/* A truncated record followed by EOF. */
	connect_pair(&cl, &sv);
	assert_int_equal(chan_send(cl.c, "cut short", 9), 0);
	assert_int_equal(chan_flush(cl.c), 0);
	tamper(chan_fd(sv.c), truncate_last, 1);
	assert_int_equal(chan_recv(sv.c, &m, &len), -EPROTO);
	assert_non_null(strstr(err_msg(), "middle of a record"));
	chan_free(cl.c);
	chan_free(sv.c);

	/* An integrity length beyond the limit. */
	connect_pair(&cl, &sv);
	chan_set_data_protection(cl.c, PROT_INTEGRITY);
	chan_set_data_protection(sv.c, PROT_INTEGRITY);
	assert_int_equal(chan_data_send(cl.c, "x", 1), 0);
	assert_int_equal(chan_flush(cl.c), 0);
	tamper(chan_fd(sv.c), huge_len, 1);
	assert_int_equal(chan_data_recv(sv.c, 100000, &m, &len), -EPROTO);
	assert_non_null(strstr(err_msg(), "oversized"));
	chan_free(cl.c);
	chan_free(sv.c);
}

/* ---- a man in the middle that rewrites the client's opening line ---- */

struct mitm { int to_client, to_server; };

static void *mitm_run(void *arg)
{
	struct mitm *m = arg;
	const char *line = "FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n";
	char ch;
	uint8_t buf[4096];

	do {
		if (read(m->to_client, &ch, 1) != 1)
			goto out;
	} while (ch != '\n');
	if (write(m->to_server, line, strlen(line)) < 0)
		goto out;
	for (;;) {
		struct pollfd p[2] = { { m->to_client, POLLIN, 0 }, { m->to_server, POLLIN, 0 } };
		if (poll(p, 2, 5000) <= 0)
			break;
		for (int i = 0; i < 2; i++) {
			if (!p[i].revents)
				continue;
			ssize_t n = read(p[i].fd, buf, sizeof buf);
			if (n <= 0 || write(p[1 - i].fd, buf, (size_t)n) != n)
				goto out;
		}
	}
out:
	close(m->to_client);
	close(m->to_server);
	return NULL;
}

static void test_downgrade(void **state)
{
	struct end cl, sv;
	struct mitm m;
	int a[2], b[2];
	pthread_t tm, ts;

	(void)state;
	/* Without AES instructions (MIPS, most ARM) nobody offers AESGCM: there
	 * is nothing to strip, so nothing to test. */
	if (!chan_have_hw_aes())
		skip();
	ends_init(&cl, &sv, a);
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, b), 0);
	m.to_client = a[1];
	m.to_server = b[0];
	sv.fd = b[1];
	cl.o.cipher_mask = CIPHER_MASK_ALL;
	assert_int_equal(pthread_create(&tm, NULL, mitm_run, &m), 0);
	assert_int_equal(pthread_create(&ts, NULL, run_end, &sv), 0);
	run_end(&cl);
	close(cl.fd);   /* the client gave up: lets the relay and server finish */
	pthread_join(ts, NULL);
	pthread_join(tm, NULL);
	assert_true(cl.rc < 0);
	assert_non_null(strstr(cl.err, "handshake: decryption failed"));
	assert_true(sv.rc < 0);
	close(sv.fd);
}

/* ---- a raw peer speaking bytes of our choosing ---- */

static void raw_server_answer(const char *answer, const char *expect_err)
{
	struct end cl, sv;
	int fds[2];
	char line[300];

	ends_init(&cl, &sv, fds);
	assert_int_equal(write(fds[1], answer, strlen(answer)), (ssize_t)strlen(answer));
	shutdown(fds[1], SHUT_WR);
	assert_true(chan_client(fds[0], &cl.o, &cl.c, &cl.peer) < 0);
	if (!strstr(err_msg(), expect_err))
		fprintf(stderr, "got: %s\n", err_msg());
	assert_non_null(strstr(err_msg(), expect_err));
	ssize_t n = read(fds[1], line, sizeof line - 1);
	assert_true(n > 8);
	assert_int_equal(strncmp(line, "FERRY/1 Noise_XX_25519_", 23), 0);
	close(fds[0]);
	close(fds[1]);
}

static void raw_client_bytes(const char *line, size_t linelen, const char *expect_err,
			     const char *expect_reply)
{
	struct end cl, sv;
	int fds[2];
	char reply[300] = "";

	ends_init(&cl, &sv, fds);
	sv.o.timeout_ms = 2000;
	assert_int_equal(write(fds[0], line, linelen), (ssize_t)linelen);
	assert_true(chan_server(fds[1], &sv.o, &sv.c, &sv.peer) < 0);
	if (!strstr(err_msg(), expect_err))
		fprintf(stderr, "got: %s\n", err_msg());
	assert_non_null(strstr(err_msg(), expect_err));
	if (expect_reply) {
		ssize_t n = recv(fds[0], reply, sizeof reply - 1, MSG_DONTWAIT);
		assert_true(n > 0);
		reply[n] = '\0';
		assert_non_null(strstr(reply, expect_reply));
	}
	close(fds[0]);
	close(fds[1]);
}

static void raw_client_line(const char *line, const char *expect_err, const char *expect_reply)
{
	raw_client_bytes(line, strlen(line), expect_err, expect_reply);
}

static void test_opening_errors(void **state)
{
	char longline[400];

	(void)state;
	raw_server_answer("FERRY/1 ERROR too many connections\n", "server refused: too many connections");
	raw_server_answer("FERRY/1 Noise_XX_25519_ChaChaPoly_SHA256\n", "did not offer");
	raw_server_answer("FERRY/1 Noise_XX_448_Foo_BLAKE2b\n", "did not offer");
	raw_server_answer("SSH-2.0-OpenSSH_9.2\n", "server's opening line is malformed");
	raw_server_answer("FERRY/1 ", "connection closed during the server's opening line");

	raw_client_line("FERRY/1 Noise_XX_25519_Foo_SHA512 Noise_IK_25519_ChaChaPoly_BLAKE2b\n",
			"no protocol we speak", "FERRY/1 ERROR no common cipher");
	raw_client_line("FERRY/1  Noise_XX_25519_ChaChaPoly_BLAKE2b\n", "client's opening line is malformed",
			"FERRY/1 ERROR malformed");
	raw_client_line("GET / HTTP/1.1\r\n", "client's opening line is malformed", "FERRY/1 ERROR");
	raw_client_line("FERRY/2 Noise_XX_25519_ChaChaPoly_BLAKE2b\n", "another protocol version", NULL);
	memset(longline, 'A', sizeof longline);
	memcpy(longline, "FERRY/1 ", 8);
	longline[sizeof longline - 1] = '\0';
	raw_client_line(longline, "longer than 255 bytes", NULL);
	/* A good line, then a first message that is not 32 bytes. */
	static const char bad_msg1[] = "FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n\x00\x05hello";
	raw_client_bytes(bad_msg1, sizeof bad_msg1 - 1, "handshake: message", NULL);
}

static void test_timeouts(void **state)
{
	struct end cl, sv;
	int fds[2];
	struct timespec t0, t1;
	const uint8_t *m;
	size_t len;

	(void)state;
	ends_init(&cl, &sv, fds);
	sv.o.timeout_ms = 300;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(chan_server(fds[1], &sv.o, &sv.c, &sv.peer), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double dt = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	assert_true(dt >= 0.25 && dt < 3);
	assert_non_null(strstr(err_msg(), "timed out"));
	close(fds[0]);
	close(fds[1]);

	connect_pair(&cl, &sv);
	chan_set_timeout(sv.c, 200);
	assert_int_equal(chan_recv(sv.c, &m, &len), -ETIMEDOUT);
	chan_free(cl.c);
	chan_free(sv.c);
}

/* Client with OpenSSL, server (forked) with libsodium: same bytes. */
static void test_backend_interop(void **state)
{
	struct end cl, sv;
	int fds[2];
	const uint8_t *m;
	size_t len;
	pid_t pid;
	int status;

	(void)state;
#ifndef FERRY_HAVE_OPENSSL
	skip();
#endif
	for (int mask = 1; mask <= 2; mask++) {
		ends_init(&cl, &sv, fds);
		cl.o.cipher_mask = (unsigned)mask;
		pid = fork();
		assert_true(pid >= 0);
		if (pid == 0) {
			setenv("FERRY_AEAD", "sodium", 1);
			close(fds[0]);
			if (chan_server(fds[1], &sv.o, &sv.c, &sv.peer) < 0)
				_exit(1);
			for (int lvl = PROT_INTEGRITY; lvl <= PROT_ENCRYPT; lvl++) {
				chan_set_data_protection(sv.c, (enum protection)lvl);
				if (chan_recv(sv.c, &m, &len) < 0 || chan_send(sv.c, m, len) < 0 ||
				    chan_data_recv(sv.c, 70000, &m, &len) < 0 || chan_data_send(sv.c, m, len) < 0 ||
				    chan_flush(sv.c) < 0)
					_exit(2);
			}
			chan_free(sv.c);
			_exit(0);
		}
		close(fds[1]);
		unsetenv("FERRY_AEAD");
		assert_int_equal(chan_client(fds[0], &cl.o, &cl.c, &cl.peer), 0);
		assert_int_equal((int)cl.peer.cipher, mask == 1 ? CIPHER_CHACHAPOLY : CIPHER_AESGCM);
		for (int lvl = PROT_INTEGRITY; lvl <= PROT_ENCRYPT; lvl++) {
			chan_set_data_protection(cl.c, (enum protection)lvl);
			assert_int_equal(chan_send(cl.c, "interop", 7), 0);
			assert_int_equal(chan_data_send(cl.c, "file data", 9), 0);
			assert_int_equal(chan_recv(cl.c, &m, &len), 0);
			assert_memory_equal(m, "interop", 7);
			assert_int_equal(chan_data_recv(cl.c, 9, &m, &len), 0);
			assert_memory_equal(m, "file data", 9);
		}
		chan_free(cl.c);
		assert_int_equal(waitpid(pid, &status, 0), pid);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_handshake),
		cmocka_unit_test(test_cipher_masks),
		cmocka_unit_test(test_control_messages),
		cmocka_unit_test(test_data_encrypt),
		cmocka_unit_test(test_data_integrity),
		cmocka_unit_test(test_data_none),
		cmocka_unit_test(test_data_overrun),
		cmocka_unit_test(test_batch_framing),
		cmocka_unit_test(test_rekey),
		cmocka_unit_test(test_bulk_both_ways),
		cmocka_unit_test(test_tamper),
		cmocka_unit_test(test_downgrade),
		cmocka_unit_test(test_opening_errors),
		cmocka_unit_test(test_timeouts),
		cmocka_unit_test(test_backend_interop),
	};
	if (keys_generate(&ckey) < 0 || keys_generate(&skey) < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
