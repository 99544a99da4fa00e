/* SPDX-License-Identifier: MIT */
/* ferry-evil: a misbehaving peer for the e2e tests. It performs a real
 * handshake (the peer's key is NOT checked: a test tool) and then sends
 * crafted protocol messages the real client or server never would.
 *
 *   ferry-evil request-path HOST PORT KEYFILE MODULE PATH OP
 *       OP = push | pull | list. Sends REQUEST with PATH as given (raw) and
 *       prints the answer: "ACCEPT" (exit 0) or "REFUSE <code> <reason>"
 *       (exit 5). Other failures exit 7.
 *
 *       EVIL_FILTER=FILE (any client mode): REQ_FILTER, and FILE's bytes as
 *       FILTER records after the REQUEST (EVIL_FILTER_TOTAL: the total they
 *       announce, default the file's size).
 *
 *   ferry-evil push-entry HOST PORT KEYFILE MODULE DIRPATH NAME TYPE [TARGET]
 *       TYPE = file | dir | link (TARGET: the link's target). NAME is sent raw
 *       (ENTRY is encoded by hand: even a name over 255 bytes). Requests a push
 *       to the module's root, then sends DIR_BEGIN(DIRPATH) + ENTRY(NAME,
 *       TYPE) + DIR_END + END and answers the server as below.
 *
 *   ferry-evil push-script HOST PORT KEYFILE MODULE PATH SCRIPT [FLAGS]
 *       A client: REQUEST op push with PATH raw and FLAGS (decimal or 0xhex,
 *       default REQ_CHANGES), then SCRIPT as the sender, then answers.
 *
 *   ferry-evil bench-steps HOST PORT KEYFILE MODULE STEP:BYTES ...
 *       A client of `ferry bench HOST:MODULE` that asks for the steps given
 *       (BSTEP_* numbers, BYTES as asked, 0 included), sending an upload's
 *       bytes; prints "DONE <step> <status> <note>" per step, or the message
 *       that ended the session.
 *
 *   ferry-evil serve KEYFILE SCRIPT
 *       A server on 127.0.0.1, port chosen by the kernel: prints "PORT <n>",
 *       accepts one connection, handshakes with KEYFILE as its host key,
 *       prints "REQUEST op=.. module=.. path=.. flags=0x.. protection=..".
 *       EVIL_REFUSE="CODE:REASON" (escapes decoded): sends REFUSE, exits 0.
 *       Otherwise ACCEPT with protection EVIL_ACCEPT_PROT (0, 1, 2; default
 *       the requested one) and flags EVIL_ACCEPT_FLAGS (default 0; 1 turns
 *       compression on, whether the client asked or not). Pull or list: SCRIPT as the sender, then answers
 *       until the client's RESULT. Push: prints the client's messages until
 *       its END, decides everything as unwanted (DECIDED n: a receiver that
 *       wants nothing), sends SCRIPT (CHANGE, RESULT, ERROR, ...), and waits
 *       up to 10 s for the client to close (exit 0 when it does).
 *
 *   Answering: each WANT <i> gets FILE_BEGIN(i, 10 bytes, mode EVIL_FILE_MODE
 *   (octal, default 0644), mtime 1000000000) + DATA 10 + "evil data\n" +
 *   FILE_END (ok; with the whole-file hash at protection none), unless
 *   EVIL_NO_DATA=1. EVIL_ZDATA=ok sends the ten bytes as a ZDATA frame
 *   instead, EVIL_ZDATA=bomb as a frame of 1 MiB announced as ten bytes. One line is printed per message received ("WANT <i>",
 *   "DECIDED <i>", "CHANGE <kind> <path>", "RESULT errors=<n> files=<n>
 *   message=<text>", "ERROR <reason>", "LOST <reason>"); the exit code is
 *   0 after a RESULT without errors, 4 with errors, 5 REFUSE, 6 ERROR,
 *   7 anything else (connection lost, timeout, unexpected message).
 *
 *   Scripts: one message per line, '#' starts a comment (at a token start),
 *   tokens separated by spaces or tabs. In a token "" is the empty string and
 *   \xHH \n \t \r \e (ESC) \a (BEL) \\ are decoded (\x20 is a space; \x00
 *   is refused). The last argument of RESULT and ERROR is the rest of the
 *   line, its tokens joined by single spaces.
 *     DIR_BEGIN <flags: decimal or 0xhex> <path>
 *     ENTRY <file|dir|link> <name> [mode-octal [size [target]]]
 *           defaults 0644 (dir 0755), size 10 for a file (0 otherwise), target "x"
 *     DIR_END
 *     DIR_META <mode-octal> <path>
 *     TOTALS <files> <bytes>
 *     END
 *     FILE_BEGIN <index> <size>     unsolicited file data, for tests
 *     DATA <n>                      DATA(n), then n bytes of 'A' as data records
 *     ZDATA <raw_len> <zlen>        ZDATA(raw_len, zlen) and zlen bytes of 'A' (no frame)
 *     LINK <name> <first|to> <n>    ENTRY of a file that opens a hard-link group of n more
 *                                   links (first), or links to entry n (to)
 *     XMETA_OWNER <len>             XMETA with an owner name of len bytes (raw: past the limit)
 *     XMETA_XATTRS <count> <len>    XMETA with count xattrs user.aNNNNN of len bytes each
 *     ZFRAME <raw_len> <n> [nocsize]  ZDATA(raw_len, its size) and a real zstd frame of
 *                                   n bytes of 'A' (with its content size unless nocsize):
 *                                   n > raw_len is a decompression bomb
 *     FILE_END                      status ok (hash of the DATA since FILE_BEGIN at none)
 *     CHANGE <kind: 1-7 or new|update|delete|mkdir|link|attrs|failed> <path>
 *     RESULT <errors> <files> <bytes> [message...]
 *     ERROR <code> [reason...]
 *     HOLD <seconds>                flush, then sleep (fractions allowed)
 *     REPEAT <n> <line>             the line n times, "%d" replaced by 0..n-1
 *   Everything is flushed at HOLD and at the end of the script. The script is
 *   checked before connecting: a bad line exits 1 and names SCRIPT:LINE.
 *
 *   Environment: EVIL_PROTECTION=0|1|2 (default 2) for a client's REQUEST;
 *   EVIL_TIMEOUT seconds (default 30) for the whole run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include "channel/channel.h"
#include "channel/keys.h"
#include "proto/msg.h"
#include "session/conn.h"
#include "util/err.h"

#define EX_USAGE 1
#define EX_RESULT_ERRORS 4
#define EX_REFUSED 5
#define EX_ERROR 6
#define EX_OTHER 7

#define EVIL_MTIME 1000000000
#define MAX_TOKENS 64
#define MAX_REPEAT_DEPTH 4

static const char evil_data[] = "evil data\n";
#define EVIL_LEN (sizeof evil_data - 1)

/* --- output ------------------------------------------------------------- */

/* One line per event, flushed at once: the tests read the output while the
 * tool runs, and a timeout must not lose what came before it. */
__attribute__((format(printf, 1, 2)))
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void on_alarm(int sig)
{
	static const char line[] = "LOST timeout (EVIL_TIMEOUT)\n";

	(void)sig;
	if (write(STDOUT_FILENO, line, sizeof line - 1) < 0) {
		/* nothing left to do: we are giving up anyway */
	}
	_exit(EX_OTHER);
}

static void arm_timeout(void)
{
	const char *t = getenv("EVIL_TIMEOUT");
	int secs = t ? atoi(t) : 30;

	signal(SIGALRM, on_alarm);
	alarm(secs > 0 ? (unsigned)secs : 30);
}

/* --- numbers and tokens ----------------------------------------------------- */

/* "0x..." is hex, anything else decimal (a leading 0 is not octal here). */
static int parse_num(const char *s, int base, uint64_t max, uint64_t *out)
{
	char *end;

	if (base == 0)
		base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (!*s || *s == '-' || *end || errno || v > max)
		return err_set(-EINVAL, "bad number '%s'", s);
	*out = v;
	return 0;
}

static int hexval(char ch)
{
	if (ch >= '0' && ch <= '9')
		return ch - '0';
	if (ch >= 'a' && ch <= 'f')
		return ch - 'a' + 10;
	if (ch >= 'A' && ch <= 'F')
		return ch - 'A' + 10;
	return -1;
}

static int unescape_char(const char **pp, char *out)
{
	const char *p = *pp;
	int hi, lo;

	switch (*p) {
	case 'n': *out = '\n'; break;
	case 't': *out = '\t'; break;
	case 'r': *out = '\r'; break;
	case 'e': *out = 0x1b; break;
	case 'a': *out = 0x07; break;
	case '\\': *out = '\\'; break;
	case 'x':
		if ((hi = hexval(p[1])) < 0 || (lo = hexval(p[2])) < 0)
			return err_set(-EINVAL, "bad \\x escape (two hex digits wanted)");
		if (hi == 0 && lo == 0)
			return err_set(-EINVAL, "\\x00 cannot be sent (strings end at NUL)");
		*out = (char)(hi * 16 + lo);
		p += 2;
		break;
	default:
		return err_set(-EINVAL, "unknown escape '\\%c'", *p ? *p : '0');
	}
	*pp = p + 1;
	return 0;
}

/* Decodes a token in place (the result is never longer). */
static int unescape(char *t)
{
	const char *p = t;
	char *o = t;
	int rc;

	if (!strcmp(t, "\"\"")) {
		t[0] = '\0';
		return 0;
	}
	while (*p) {
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		p++;
		if ((rc = unescape_char(&p, o++)) < 0)
			return rc;
	}
	*o = '\0';
	return 0;
}

/* Splits s in place on blanks, up to a token that starts with '#'. */
static int tokenize(char *s, char **tok)
{
	int n = 0;

	for (;;) {
		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s || *s == '#')
			return n;
		if (n == MAX_TOKENS)
			return err_set(-E2BIG, "more than %d tokens", MAX_TOKENS);
		tok[n++] = s;
		while (*s && *s != ' ' && *s != '\t')
			s++;
		if (*s)
			*s++ = '\0';
	}
}

/* The rest of a line as one text field: tokens joined by single spaces. */
static void join(char *out, size_t cap, char **tok, int n)
{
	size_t o = 0;

	out[0] = '\0';
	for (int i = 0; i < n && o < cap - 1; i++)
		o += (size_t)snprintf(out + o, cap - o, "%s%s", i ? " " : "", tok[i]);
}

/* --- the network ------------------------------------------------------------ */

static int dial(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	int fd = -1, one = 1;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd >= 0)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fd;
}

/* Listens on 127.0.0.1 (only ever loopback: a test tool) at a kernel-chosen port. */
static int listen_local(unsigned *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t sl = sizeof sa;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return err_sys(-errno, "socket");
	if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 1) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
		int e = -errno;
		close(fd);
		return err_sys(e, "listen on 127.0.0.1");
	}
	*port = ntohs(sa.sin_port);
	return fd;
}

static uint8_t *put(uint8_t *p, uint64_t v, int bytes)
{
	for (int i = bytes - 1; i >= 0; i--)
		*p++ = (uint8_t)(v >> (8 * i));
	return p;
}

static int send_raw_request(struct conn *c, uint8_t op, uint8_t prot, uint32_t flags,
			    const char *module, const char *path)
{
	static uint8_t buf[CHAN_MAX_PLAIN];
	size_t ml = strlen(module), pl = strlen(path);
	uint8_t *p = buf;

	if (ml > 1024 || pl > sizeof buf - 1100)
		return err_set(-EINVAL, "module or path too long for this tool");
	*p++ = MSG_REQUEST;
	*p++ = op;
	*p++ = prot;
	p = put(p, flags, 4);
	p = put(p, ml, 2);
	memcpy(p, module, ml);
	p += ml;
	p = put(p, pl, 2);
	memcpy(p, path, pl);
	p += pl;
	p = put(p, 0, 2);   /* backup dir, suffix, chmod: empty */
	p = put(p, 0, 2);
	p = put(p, 0, 2);
	return chan_send(c->ch, buf, (size_t)(p - buf));
}

/* ENTRY by hand, so that names and targets over the limits can be sent
 * (msg_encode takes them from fixed-size fields). */
static int send_raw_entry(struct conn *c, uint8_t et, uint32_t mode, uint64_t size,
			  const char *name, const char *target)
{
	static uint8_t buf[2 * 4096 + 64];
	size_t nl = strlen(name), tl = strlen(target);
	uint8_t *p = buf;

	if (nl > 4096 || tl > 4096)
		return err_set(-EINVAL, "name or target too long for this tool");
	*p++ = MSG_ENTRY;
	*p++ = et;
	*p++ = 0;                                         /* flags */
	p = put(p, mode, 4);
	p = put(p, size, 8);
	p = put(p, EVIL_MTIME, 8);                        /* mtime_s */
	p = put(p, 0, 4);                                 /* mtime_ns */
	p = put(p, nl, 2);
	memcpy(p, name, nl);
	p += nl;
	if (et == ENT_LNK) {
		p = put(p, tl, 2);
		memcpy(p, target, tl);
		p += tl;
	}
	return chan_send(c->ch, buf, (size_t)(p - buf));
}

/* --- file data ------------------------------------------------------------- */

static uint32_t file_mode(void)
{
	const char *s = getenv("EVIL_FILE_MODE");
	uint64_t v;

	return s && parse_num(s, 8, 07777, &v) == 0 ? (uint32_t)v : 0644;
}

static void hash_digest(XXH3_state_t *h, uint8_t out[MSG_HASH_LEN])
{
	XXH128_canonical_t canon;

	/* canonical = big-endian bytes, as src/session/filedata.c sends it */
	XXH128_canonicalFromHash(&canon, XXH3_128bits_digest(h));
	memcpy(out, canon.digest, MSG_HASH_LEN);
}

static int send_file_begin(struct conn *c, uint32_t index, uint64_t size)
{
	struct msg m = { .type = MSG_FILE_BEGIN };

	m.u.file_begin.index = index;
	m.u.file_begin.size = size;
	m.u.file_begin.mode = file_mode();
	m.u.file_begin.mtime_s = EVIL_MTIME;
	return conn_send(c, &m);
}

/* FILE_END ok; with the hash of what h saw when there is one (protection none). */
static int send_file_end(struct conn *c, XXH3_state_t *h)
{
	struct msg m = { .type = MSG_FILE_END };

	m.u.file_end.status = FILE_OK;
	m.u.file_end.has_hash = h != NULL;
	if (h)
		hash_digest(h, m.u.file_end.hash);
	return conn_send(c, &m);
}

static int send_data(struct conn *c, const void *p, size_t n, XXH3_state_t *h)
{
	int rc = conn_send_len(c, MSG_DATA, n);

	if (rc == 0)
		rc = chan_data_send(c->ch, p, n);
	if (rc == 0 && h)
		XXH3_128bits_update(h, p, n);
	return rc;
}

static XXH3_state_t *hash_start(const struct conn *c)
{
	XXH3_state_t *h;

	if (!c->verify || !(h = XXH3_createState()))
		return NULL;
	XXH3_128bits_reset(h);
	return h;
}

/* A real zstd frame of n bytes of `fill` (the peer's own limits ignored):
 * with its content size unless csize is 0. Returns its length or 0. */
static size_t make_frame(uint8_t *dst, size_t cap, const uint8_t *src, size_t n, int csize)
{
	ZSTD_CCtx *cc = ZSTD_createCCtx();
	ZSTD_inBuffer in = { src, n, 0 };
	ZSTD_outBuffer out = { dst, cap, 0 };
	size_t r;

	if (!cc)
		return 0;
	ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, csize);
	/* streamed without a pledged size: no content size in the header */
	r = csize ? ZSTD_compress2(cc, dst, cap, src, n) : ZSTD_compressStream2(cc, &out, &in, ZSTD_e_end);
	ZSTD_freeCCtx(cc);
	if (ZSTD_isError(r) || (!csize && r != 0))
		return 0;
	return csize ? r : out.pos;
}

/* ZDATA(raw_len, zlen) and the frame's bytes. */
static int send_zdata(struct conn *c, uint32_t raw_len, const uint8_t *z, size_t zlen)
{
	struct msg m = { .type = MSG_ZDATA };
	int rc;

	m.u.zdata = (struct m_zdata){ .raw_len = raw_len, .zlen = (uint32_t)zlen };
	if ((rc = conn_send(c, &m)) == 0)
		rc = chan_data_send(c->ch, z, zlen);
	return rc;
}

/* EVIL_ZDATA=ok|bomb: the file's ten bytes as ZDATA instead of DATA. */
static int send_evil_zdata(struct conn *c, const char *how, XXH3_state_t *h)
{
	static uint8_t zeros[1 << 20], z[1 << 16];
	int bomb = !strcmp(how, "bomb");
	size_t zl = bomb ? make_frame(z, sizeof z, zeros, sizeof zeros, 0)
			 : make_frame(z, sizeof z, (const uint8_t *)evil_data, EVIL_LEN, 1);

	if (!zl)
		return err_set(-EIO, "zstd failed");
	if (h)
		XXH3_128bits_update(h, evil_data, EVIL_LEN);
	return send_zdata(c, EVIL_LEN, z, zl);
}

/* The answer to WANT: the same ten bytes for every file. */
static int send_file(struct conn *c, uint32_t index)
{
	XXH3_state_t *h = hash_start(c);
	int rc;

	if (c->verify && !h)
		return err_set(-ENOMEM, "out of memory");
	const char *zd = getenv("EVIL_ZDATA");
	rc = send_file_begin(c, index, EVIL_LEN);
	if (rc == 0)
		rc = zd ? send_evil_zdata(c, zd, h) : send_data(c, evil_data, EVIL_LEN, h);
	if (rc == 0)
		rc = send_file_end(c, h);
	if (h)
		XXH3_freeState(h);
	return rc < 0 ? rc : conn_flush(c);
}

/* Reads and drops n bytes of file data the peer announced. */
static int skip_data(struct conn *c, uint64_t n)
{
	const uint8_t *p;
	size_t got;
	int rc;

	while (n) {
		size_t max = n > SIZE_MAX ? SIZE_MAX : (size_t)n;
		if ((rc = chan_data_recv(c->ch, max, &p, &got)) < 0)
			return rc;
		n -= got;
	}
	return 0;
}

/* --- the script engine ---------------------------------------------------------- */

struct script {
	struct conn *c;         /* NULL while the script is only checked */
	const char *file;
	unsigned line;
	XXH3_state_t *h;        /* an unsolicited file at protection none */
};

typedef int (*cmd_fn)(struct script *s, char **a, int n);

static int emit(struct script *s, const struct msg *m)
{
	return s->c ? conn_send(s->c, m) : 0;
}

static int entry_type(const char *t)
{
	return !strcmp(t, "file") ? ENT_REG : !strcmp(t, "dir") ? ENT_DIR :
	       !strcmp(t, "link") ? ENT_LNK : -1;
}

static int change_kind(const char *k, uint64_t *out)
{
	static const char *const names[] = { "new", "update", "delete", "mkdir", "link",
					     "attrs", "failed" };

	for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
		if (!strcmp(k, names[i])) {
			*out = i + 1;
			return 0;
		}
	}
	return parse_num(k, 0, 255, out);
}

static int copy_str(char *dst, size_t cap, const char *src, const char *what)
{
	if (strlen(src) >= cap)
		return err_set(-EINVAL, "%s longer than %zu bytes", what, cap - 1);
	memcpy(dst, src, strlen(src) + 1);
	return 0;
}

static int do_dir_begin(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_DIR_BEGIN };
	uint64_t fl;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, 255, &fl)) < 0 ||
	    (rc = copy_str(m.u.dir_begin.path, sizeof m.u.dir_begin.path, a[1], "path")) < 0)
		return rc;
	m.u.dir_begin.flags = (uint8_t)fl;
	return emit(s, &m);
}

static int do_entry(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_ENTRY };
	struct m_entry *e = &m.u.entry;
	int et = entry_type(a[0]);
	uint64_t mode = et == ENT_DIR ? 0755 : 0644, size = et == ENT_REG ? EVIL_LEN : 0;
	const char *target = n > 4 ? a[4] : "x";
	int rc;

	if (et < 0)
		return err_set(-EINVAL, "ENTRY type '%s': file, dir or link", a[0]);
	if ((n > 2 && (rc = parse_num(a[2], 8, 0xffffffffu, &mode)) < 0) ||
	    (n > 3 && (rc = parse_num(a[3], 0, UINT64_MAX, &size)) < 0))
		return rc;
	if (strlen(a[1]) > MSG_MAX_NAME || strlen(target) > MSG_MAX_PATH)
		return s->c ? send_raw_entry(s->c, (uint8_t)et, (uint32_t)mode, size, a[1], target)
			    : 0;
	e->type = (uint8_t)et;
	e->mode = (uint32_t)mode;
	e->size = size;
	e->mtime_s = EVIL_MTIME;
	copy_str(e->name, sizeof e->name, a[1], "name");
	if (et == ENT_LNK)
		copy_str(e->target, sizeof e->target, target, "target");
	return emit(s, &m);
}

static int do_plain(struct script *s, uint8_t type)
{
	struct msg m = { .type = type };

	return emit(s, &m);
}

static int do_dir_end(struct script *s, char **a, int n)
{
	(void)a, (void)n;
	return do_plain(s, MSG_DIR_END);
}

static int do_end(struct script *s, char **a, int n)
{
	(void)a, (void)n;
	return do_plain(s, MSG_END);
}

static int do_dir_meta(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_DIR_META };
	uint64_t mode;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 8, 0xffffffffu, &mode)) < 0 ||
	    (rc = copy_str(m.u.dir_meta.path, sizeof m.u.dir_meta.path, a[1], "path")) < 0)
		return rc;
	m.u.dir_meta.mode = (uint32_t)mode;
	m.u.dir_meta.mtime_s = EVIL_MTIME;
	return emit(s, &m);
}

static int do_totals(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_TOTALS };
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, UINT64_MAX, &m.u.totals.files)) < 0 ||
	    (rc = parse_num(a[1], 0, UINT64_MAX, &m.u.totals.bytes)) < 0)
		return rc;
	return emit(s, &m);
}

static int do_file_begin(struct script *s, char **a, int n)
{
	uint64_t index, size;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, UINT32_MAX, &index)) < 0 ||
	    (rc = parse_num(a[1], 0, UINT64_MAX, &size)) < 0)
		return rc;
	if (!s->c)
		return 0;
	if (s->h)
		XXH3_freeState(s->h);
	s->h = hash_start(s->c);
	return send_file_begin(s->c, (uint32_t)index, size);
}

static int do_data(struct script *s, char **a, int n)
{
	static char fill[16384];
	uint64_t len;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, UINT64_MAX, &len)) < 0 || !s->c)
		return rc;
	memset(fill, 'A', sizeof fill);
	if ((rc = conn_send_len(s->c, MSG_DATA, len)) < 0)
		return rc;
	while (len && rc == 0) {
		size_t k = len < sizeof fill ? (size_t)len : sizeof fill;
		rc = chan_data_send(s->c->ch, fill, k);
		if (s->h)
			XXH3_128bits_update(s->h, fill, k);
		len -= k;
	}
	return rc;
}

static int do_file_end(struct script *s, char **a, int n)
{
	(void)a, (void)n;
	if (!s->c)
		return 0;
	int rc = send_file_end(s->c, s->h);
	if (s->h)
		XXH3_freeState(s->h);
	s->h = NULL;
	return rc;
}

/* ZDATA RAW_LEN ZLEN: the message and zlen bytes of 'A', no frame at all. */
static int do_zdata(struct script *s, char **a, int n)
{
	static uint8_t fill[1 << 16];
	uint64_t raw, zl;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, UINT32_MAX, &raw)) < 0 ||
	    (rc = parse_num(a[1], 0, UINT32_MAX, &zl)) < 0 || !s->c)
		return rc;
	struct msg m = { .type = MSG_ZDATA };
	m.u.zdata = (struct m_zdata){ .raw_len = (uint32_t)raw, .zlen = (uint32_t)zl };
	memset(fill, 'A', sizeof fill);
	if ((rc = conn_send(s->c, &m)) < 0)
		return rc;
	while (zl && rc == 0) {
		size_t k = zl < sizeof fill ? (size_t)zl : sizeof fill;
		rc = chan_data_send(s->c->ch, fill, k);
		zl -= k;
	}
	return rc;
}

/* ZFRAME RAW_LEN N [nocsize]: a real frame of N bytes of 'A' announced as
 * RAW_LEN bytes (hashed as N bytes of 'A' at protection none). */
static int do_zframe(struct script *s, char **a, int n)
{
	uint64_t raw, len;
	int rc;

	if ((rc = parse_num(a[0], 0, UINT32_MAX, &raw)) < 0 ||
	    (rc = parse_num(a[1], 0, 1u << 30, &len)) < 0)
		return rc;
	if (!len)
		return err_set(-EINVAL, "ZFRAME: at least one byte");
	if (n > 2 && strcmp(a[2], "nocsize"))
		return err_set(-EINVAL, "ZFRAME: the third argument can only be nocsize");
	if (!s->c)
		return 0;
	size_t cap = ZSTD_compressBound((size_t)len);
	uint8_t *src = malloc((size_t)len), *z = malloc(cap);
	if (!src || !z) {
		free(src);
		free(z);
		return err_set(-ENOMEM, "out of memory");
	}
	memset(src, 'A', (size_t)len);
	size_t zl = make_frame(z, cap, src, (size_t)len, n < 3);
	if (s->h)
		XXH3_128bits_update(s->h, src, (size_t)len);
	rc = zl ? send_zdata(s->c, (uint32_t)raw, z, zl) : err_set(-EIO, "zstd failed");
	free(src);
	free(z);
	return rc;
}

/* WANT_DELTA INDEX BLOCK SIZE: a receiver asking for a delta. */
static int do_want_delta(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_WANT_DELTA };
	uint64_t idx, block;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, UINT32_MAX, &idx)) < 0 ||
	    (rc = parse_num(a[1], 0, UINT32_MAX, &block)) < 0 ||
	    (rc = parse_num(a[2], 0, UINT64_MAX, &m.u.want_delta.size)) < 0)
		return rc;
	m.u.want_delta.index = (uint32_t)idx;
	m.u.want_delta.block = (uint32_t)block;
	return emit(s, &m);
}

/* SIG INDEX FIRST COUNT: COUNT made-up entries (weak = strong = block number). */
static int do_sig(struct script *s, char **a, int n)
{
	static uint8_t ent[SIG_MAX_BLOCKS * SIG_ENTRY_LEN];
	struct msg m = { .type = MSG_SIG };
	uint64_t idx, first, count;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, UINT32_MAX, &idx)) < 0 ||
	    (rc = parse_num(a[1], 0, UINT32_MAX, &first)) < 0 ||
	    (rc = parse_num(a[2], 0, SIG_MAX_BLOCKS, &count)) < 0)
		return rc;
	for (uint64_t i = 0; i < count; i++)
		for (int k = 0; k < 12; k++)
			ent[i * 12 + (uint64_t)k] = (uint8_t)((first + i) >> (8 * (k % 4)));
	m.u.sig = (struct m_sig){ .index = (uint32_t)idx, .first = (uint32_t)first,
				  .count = (uint16_t)count, .entries = ent };
	return emit(s, &m);
}

/* REFINE INDEX GROUP COUNT / REFINE_END INDEX: a sender asking a box for
 * the fine entries of a two-level signature. */
static int do_refine(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_REFINE };
	uint64_t idx, g = 0, count = 0;
	int rc;

	if ((rc = parse_num(a[0], 0, UINT32_MAX, &idx)) < 0)
		return rc;
	if (n == 1)
		return s->c ? conn_send_len(s->c, MSG_REFINE_END, idx) : 0;
	if ((rc = parse_num(a[1], 0, UINT32_MAX, &g)) < 0 ||
	    (rc = parse_num(a[2], 0, UINT32_MAX, &count)) < 0)
		return rc;
	m.u.need = (struct m_need){ .index = (uint32_t)idx, .block = (uint32_t)g,
				    .count = (uint32_t)count };
	return emit(s, &m);
}

/* COPY BLOCK COUNT: inside a file's data, blocks of the receiver's basis. */
static int do_copy(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_COPY };
	uint64_t block, count;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, UINT32_MAX, &block)) < 0 ||
	    (rc = parse_num(a[1], 0, UINT32_MAX, &count)) < 0)
		return rc;
	m.u.copy = (struct m_copy){ .block = (uint32_t)block, .count = (uint32_t)count };
	return emit(s, &m);
}

static int do_change(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_CHANGE };
	uint64_t kind;
	int rc;

	(void)n;
	if ((rc = change_kind(a[0], &kind)) < 0 ||
	    (rc = copy_str(m.u.change.path, sizeof m.u.change.path, a[1], "path")) < 0)
		return rc;
	m.u.change.kind = (uint8_t)kind;
	return emit(s, &m);
}

static int do_result(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_RESULT };
	uint64_t errors;
	int rc;

	if ((rc = parse_num(a[0], 0, UINT32_MAX, &errors)) < 0 ||
	    (rc = parse_num(a[1], 0, UINT64_MAX, &m.u.result.files)) < 0 ||
	    (rc = parse_num(a[2], 0, UINT64_MAX, &m.u.result.bytes)) < 0)
		return rc;
	m.u.result.errors = (uint32_t)errors;
	join(m.u.result.message, sizeof m.u.result.message, a + 3, n - 3);
	return emit(s, &m);
}

static int do_error(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_ERROR };
	uint64_t code;
	int rc;

	if ((rc = parse_num(a[0], 0, UINT16_MAX, &code)) < 0)
		return rc;
	m.u.refuse.code = (uint16_t)code;
	join(m.u.refuse.reason, sizeof m.u.refuse.reason, a + 1, n - 1);
	return emit(s, &m);
}

static int do_hold(struct script *s, char **a, int n)
{
	char *end;
	double secs = strtod(a[0], &end);
	int rc;

	(void)n;
	if (*end || !(secs >= 0 && secs < 3600))
		return err_set(-EINVAL, "HOLD '%s': seconds wanted", a[0]);
	if (!s->c)
		return 0;
	if ((rc = conn_flush(s->c)) < 0)
		return rc;
	struct timespec ts = { .tv_sec = (time_t)secs,
			       .tv_nsec = (long)((secs - (double)(time_t)secs) * 1e9) };
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return 0;
}


/* LINK <name> <first|to> <n>: a file ENTRY of a hard-link group (-H). */
static int do_link(struct script *s, char **a, int n)
{
	struct msg m = { .type = MSG_ENTRY };
	struct m_entry *e = &m.u.entry;
	uint64_t v;
	int rc;

	(void)n;
	if ((rc = parse_num(a[2], 0, 0xffffffffu, &v)) < 0)
		return rc;
	if (strcmp(a[1], "first") && strcmp(a[1], "to"))
		return err_set(-EINVAL, "LINK: first or to, not '%s'", a[1]);
	e->type = ENT_REG;
	e->flags = !strcmp(a[1], "first") ? ENT_LINK_FIRST : ENT_LINK_TO;
	e->link = (uint32_t)v;
	e->mode = 0644;
	e->size = EVIL_LEN;
	e->mtime_s = EVIL_MTIME;
	copy_str(e->name, sizeof e->name, a[0], "name");
	return emit(s, &m);
}

/* XMETA by hand, so that what the limits refuse can be sent. */
static int do_xmeta_owner(struct script *s, char **a, int n)
{
	static uint8_t buf[65000];
	uint64_t len;
	uint8_t *p = buf;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, 60000, &len)) < 0 || !s->c)
		return rc;
	*p++ = MSG_XMETA;
	*p++ = XM_OWNER;
	p = put(p, 0, 4);
	p = put(p, len, 2);
	memset(p, 'u', len);
	p += len;
	return chan_send(s->c->ch, buf, (size_t)(p - buf));
}

static int do_xmeta_xattrs(struct script *s, char **a, int n)
{
	static uint8_t buf[65519];
	uint64_t count, len;
	uint8_t *p = buf;
	int rc;

	(void)n;
	if ((rc = parse_num(a[0], 0, 65535, &count)) < 0 ||
	    (rc = parse_num(a[1], 0, 65535, &len)) < 0 || !s->c)
		return rc;
	*p++ = MSG_XMETA;
	*p++ = XM_XATTRS;
	p = put(p, count, 2);
	for (uint64_t i = 0; i < count; i++) {
		if ((size_t)(p - buf) + 14 + len > sizeof buf)
			return err_set(-EINVAL, "XMETA_XATTRS: more than one record holds");
		*p++ = 11;
		p += sprintf((char *)p, "user.a%05u", (unsigned)i);
		p = put(p, len, 2);
		memset(p, 'v', len);
		p += len;
	}
	return chan_send(s->c->ch, buf, (size_t)(p - buf));
}

static const struct {
	const char *name;
	int min, max;   /* arguments; max -1 = the rest of the line */
	cmd_fn fn;
} commands[] = {
	{ "DIR_BEGIN", 2, 2, do_dir_begin },
	{ "ENTRY", 2, 5, do_entry },
	{ "DIR_END", 0, 0, do_dir_end },
	{ "DIR_META", 2, 2, do_dir_meta },
	{ "TOTALS", 2, 2, do_totals },
	{ "END", 0, 0, do_end },
	{ "FILE_BEGIN", 2, 2, do_file_begin },
	{ "DATA", 1, 1, do_data },
	{ "FILE_END", 0, 0, do_file_end },
	{ "CHANGE", 2, 2, do_change },
	{ "RESULT", 3, -1, do_result },
	{ "ERROR", 1, -1, do_error },
	{ "HOLD", 1, 1, do_hold },
	{ "WANT_DELTA", 3, 3, do_want_delta },
	{ "SIG", 3, 3, do_sig },
	{ "COPY", 2, 2, do_copy },
	{ "REFINE", 3, 3, do_refine },
	{ "REFINE_END", 1, 1, do_refine },
	{ "ZDATA", 2, 2, do_zdata },
	{ "ZFRAME", 2, 3, do_zframe },
	{ "LINK", 3, 3, do_link },
	{ "XMETA_OWNER", 1, 1, do_xmeta_owner },
	{ "XMETA_XATTRS", 2, 2, do_xmeta_xattrs },
};

static int run_tokens(struct script *s, char *line)
{
	char *tok[MAX_TOKENS];
	int n = tokenize(line, tok), rc;

	if (n <= 0)
		return n;
	for (int i = 1; i < n; i++)
		if ((rc = unescape(tok[i])) < 0)
			return rc;
	for (size_t k = 0; k < sizeof commands / sizeof *commands; k++) {
		if (strcmp(tok[0], commands[k].name))
			continue;
		if (n - 1 < commands[k].min || (commands[k].max >= 0 && n - 1 > commands[k].max))
			return err_set(-EINVAL, "%s: wrong number of arguments", tok[0]);
		return commands[k].fn(s, tok + 1, n - 1);
	}
	return err_set(-EINVAL, "unknown command '%s'", tok[0]);
}

static int run_line(struct script *s, const char *line, int depth);

/* Copies body with every "%d" replaced by i. */
static char *substitute(const char *body, uint64_t i)
{
	char num[24];
	size_t cnt = 0, nl = (size_t)snprintf(num, sizeof num, "%llu", (unsigned long long)i);

	for (const char *p = body; (p = strstr(p, "%d")); p += 2)
		cnt++;
	char *out = malloc(strlen(body) + cnt * nl + 1), *o = out;
	if (!out)
		return NULL;
	for (const char *p = body; *p;) {
		if (p[0] == '%' && p[1] == 'd') {
			memcpy(o, num, nl);
			o += nl;
			p += 2;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return out;
}

/* REPEAT works on the raw text, so that "%d" can sit inside any token. While
 * the script is only checked, the body is checked once. */
static int run_repeat(struct script *s, const char *rest, int depth)
{
	char count[32];
	uint64_t n;
	int k = 0, rc = 0;

	while (*rest == ' ' || *rest == '\t')
		rest++;
	while (rest[k] && rest[k] != ' ' && rest[k] != '\t' && k < (int)sizeof count - 1)
		count[k] = rest[k], k++;
	count[k] = '\0';
	if ((rc = parse_num(count, 0, UINT32_MAX, &n)) < 0)
		return err_wrap(rc, "REPEAT");
	if (depth >= MAX_REPEAT_DEPTH)
		return err_set(-EINVAL, "REPEAT nested more than %d deep", MAX_REPEAT_DEPTH);
	for (uint64_t i = 0; rc == 0 && i < (s->c ? n : 1); i++) {
		char *body = substitute(rest + k, i);
		if (!body)
			return err_set(-ENOMEM, "out of memory");
		rc = run_line(s, body, depth + 1);
		free(body);
	}
	return rc;
}

static int run_line(struct script *s, const char *line, int depth)
{
	const char *p = line;

	while (*p == ' ' || *p == '\t')
		p++;
	if (!strncmp(p, "REPEAT", 6) && (p[6] == ' ' || p[6] == '\t'))
		return run_repeat(s, p + 6, depth);
	char *copy = strdup(p);
	if (!copy)
		return err_set(-ENOMEM, "out of memory");
	int rc = run_tokens(s, copy);
	free(copy);
	return rc;
}

/* Runs SCRIPT over c, or only checks it when c is NULL. Returns 0, or an
 * exit code with the failure printed. */
static int script_run(const char *file, struct conn *c)
{
	struct script s = { .c = c, .file = file };
	char *line = NULL;
	size_t cap = 0;
	ssize_t len;
	int rc = 0;
	FILE *f = fopen(file, "r");

	if (!f) {
		fprintf(stderr, "evil: %s: %s\n", file, strerror(errno));
		return EX_USAGE;
	}
	while (rc == 0 && (len = getline(&line, &cap, f)) >= 0) {
		s.line++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		rc = run_line(&s, line, 0);
	}
	free(line);
	fclose(f);
	if (s.h)
		XXH3_freeState(s.h);
	if (rc == 0 && c)
		rc = conn_flush(c);
	if (rc == 0)
		return 0;
	if (!c) {
		fprintf(stderr, "evil: %s:%u: %s\n", file, s.line, err_msg());
		return EX_USAGE;
	}
	say("SENDFAIL %s", err_msg());
	return EX_OTHER;
}

/* --- what the peer says ------------------------------------------------------ */

static const char *type_word(uint8_t t)
{
	return t == ENT_REG ? "file" : t == ENT_DIR ? "dir" : t == ENT_LNK ? "link" : "?";
}

static void print_msg(const struct msg *m)
{
	switch (m->type) {
	case MSG_WANT: say("WANT %u", m->u.index.index); break;
	case MSG_DECIDED: say("DECIDED %u", m->u.index.index); break;
	case MSG_CHANGE: say("CHANGE %u %s", m->u.change.kind, m->u.change.path); break;
	case MSG_RESULT:
		say("RESULT errors=%u files=%llu message=%s", m->u.result.errors,
		    (unsigned long long)m->u.result.files, m->u.result.message);
		break;
	case MSG_DIR_BEGIN: say("DIR_BEGIN 0x%02x %s", m->u.dir_begin.flags, m->u.dir_begin.path); break;
	case MSG_ENTRY: say("ENTRY %s %s", type_word(m->u.entry.type), m->u.entry.name); break;
	case MSG_DIR_META: say("DIR_META %o %s", m->u.dir_meta.mode, m->u.dir_meta.path); break;
	case MSG_TOTALS:
		say("TOTALS %llu %llu", (unsigned long long)m->u.totals.files,
		    (unsigned long long)m->u.totals.bytes);
		break;
	case MSG_FILE_BEGIN:
		say("FILE_BEGIN %u %llu", m->u.file_begin.index,
		    (unsigned long long)m->u.file_begin.size);
		break;
	case MSG_DATA: say("DATA %llu", (unsigned long long)m->u.len.len); break;
	case MSG_HOLE: say("HOLE %llu", (unsigned long long)m->u.len.len); break;
	case MSG_FILE_END: say("FILE_END %u", m->u.file_end.status); break;
	default: say("%s", msg_type_name(m->type));
	}
}

/* A failed receive as a line and an exit code; -EPIPE is a clean close. */
static int recv_failed(int rc, const struct msg *m)
{
	if (rc == -ECONNABORTED) {
		say("ERROR %s", m->u.refuse.reason);
		return EX_ERROR;
	}
	say("LOST %s", err_msg());
	return EX_OTHER;
}

/* After the script: answers WANTs and prints what comes until RESULT.
 * Returns the exit code. */
static int answer(struct conn *c)
{
	const char *nd = getenv("EVIL_NO_DATA");
	int no_data = nd && !strcmp(nd, "1");
	struct msg *m = calloc(1, sizeof *m);
	int rc;

	if (!m)
		return EX_OTHER;
	for (;;) {
		if ((rc = conn_recv(c, m)) < 0) {
			rc = recv_failed(rc, m);
			break;
		}
		if (m->type == MSG_WANT_DELTA || m->type == MSG_SIG)
			continue;   /* a script that sends REFINE reads the error after them */
		if (m->type != MSG_WANT && m->type != MSG_DECIDED && m->type != MSG_CHANGE &&
		    m->type != MSG_RESULT) {
			say("UNEXPECTED %s", msg_type_name(m->type));
			rc = EX_OTHER;
			break;
		}
		print_msg(m);
		if (m->type == MSG_RESULT) {
			rc = m->u.result.errors ? EX_RESULT_ERRORS : 0;
			break;
		}
		if (m->type == MSG_WANT && !no_data && (rc = send_file(c, m->u.index.index)) < 0) {
			say("SENDFAIL %s", err_msg());
			rc = EX_OTHER;
			break;
		}
	}
	free(m);
	return rc;
}

/* --- the client modes ------------------------------------------------------------- */

/* Handshake and REQUEST; 0 on ACCEPT (c ready), else an exit code. */
/* EVIL_FILTER=FILE: FILE's bytes as FILTER records after the REQUEST, as
 * they are (no check of the wire form); the total they announce is the
 * file's size, or EVIL_FILTER_TOTAL. */
static int send_raw_filter(struct conn *c, const char *file)
{
	static uint8_t buf[1u << 20];
	struct msg m = { .type = MSG_FILTER };
	FILE *f = fopen(file, "rb");
	size_t n = f ? fread(buf, 1, sizeof buf, f) : 0;
	const char *t = getenv("EVIL_FILTER_TOTAL");
	int rc = 0;

	if (f)
		fclose(f);
	for (size_t off = 0; rc == 0 && off < n;) {
		size_t k = n - off < FILTER_MAX_PIECE ? n - off : FILTER_MAX_PIECE;
		m.u.filter = (struct m_filter){ .total = t ? (uint32_t)strtoul(t, NULL, 0) : (uint32_t)n,
						.offset = (uint32_t)off, .len = (uint16_t)k,
						.bytes = buf + off };
		rc = conn_send(c, &m);
		off += k;
	}
	return rc;
}

static int open_session(const char *host, const char *port, const char *keyfile,
			const char *module, const char *path, int op, uint32_t flags,
			struct conn *c)
{
	struct keypair kp;
	struct chan_peer peer;
	struct channel *ch = NULL;
	struct hello h = { .version = PROTO_VERSION };
	uint8_t hello[128];
	struct msg *m;
	const char *penv = getenv("EVIL_PROTECTION");
	int prot = penv ? atoi(penv) : PROT_ENCRYPT;
	int fd, rc;

	if (keys_load(keyfile, &kp) < 0) {
		fprintf(stderr, "evil: %s\n", err_msg());
		return EX_OTHER;
	}
	if ((fd = dial(host, port)) < 0) {
		fprintf(stderr, "evil: cannot connect to %s:%s\n", host, port);
		return EX_OTHER;
	}
	snprintf(h.software, sizeof h.software, "ferry-evil");
	int hl = hello_encode(&h, hello, sizeof hello);
	struct chan_opts co = { .local = &kp, .payload = hello, .payload_len = (size_t)hl,
				.timeout_ms = 10000 };
	if (chan_client(fd, &co, &ch, &peer) < 0) {
		fprintf(stderr, "evil: handshake: %s\n", err_msg());
		keys_wipe(&kp);
		close(fd);
		return EX_OTHER;
	}
	keys_wipe(&kp);
	chan_set_timeout(ch, 15000);
	memset(c, 0, sizeof *c);
	c->ch = ch;
	if (!(m = calloc(1, sizeof *m))) {
		chan_free(ch);
		return EX_OTHER;
	}
	/* REQUEST by hand: the path goes out raw, even over MSG_MAX_PATH. */
	if (getenv("EVIL_FILTER"))
		flags |= REQ_FILTER;
	rc = send_raw_request(c, (uint8_t)op, (uint8_t)prot, flags, module, path);
	if (rc == 0 && getenv("EVIL_FILTER"))
		rc = send_raw_filter(c, getenv("EVIL_FILTER"));
	if (rc == 0)
		rc = conn_flush(c);
	if (rc == 0)
		rc = conn_recv(c, m);
	if (rc < 0) {
		printf("ERROR %s\n", err_msg());
		rc = rc == -ECONNABORTED ? EX_ERROR : EX_OTHER;
	} else if (m->type == MSG_REFUSE) {
		printf("REFUSE %u %s\n", m->u.refuse.code, m->u.refuse.reason);
		rc = EX_REFUSED;
	} else if (m->type != MSG_ACCEPT) {
		printf("UNEXPECTED %s\n", msg_type_name(m->type));
		rc = EX_OTHER;
	} else {
		printf("ACCEPT protection=%u\n", m->u.accept.protection);
		conn_set_protection(c, m->u.accept.protection, flags);
		rc = 0;
	}
	fflush(stdout);
	free(m);
	if (rc) {
		chan_free(ch);
		c->ch = NULL;
	}
	return rc;
}

static int parse_op(const char *s)
{
	if (!strcmp(s, "push"))
		return OP_PUSH;
	if (!strcmp(s, "pull"))
		return OP_PULL;
	if (!strcmp(s, "list"))
		return OP_LIST;
	return -1;
}

static int cmd_request_path(char **a)
{
	struct conn c;
	int op = parse_op(a[5]);

	if (op < 0) {
		fprintf(stderr, "evil: OP must be push, pull or list\n");
		return EX_USAGE;
	}
	int rc = open_session(a[0], a[1], a[2], a[3], a[4], op, 0, &c);
	if (rc == 0)
		chan_free(c.ch);
	return rc;
}

static int cmd_push_entry(int argc, char **a)
{
	struct msg m = { .type = MSG_DIR_BEGIN };
	struct conn c;
	int et = entry_type(a[6]), rc;

	if (et < 0 || (et == ENT_LNK && argc < 8)) {
		fprintf(stderr, "evil: TYPE must be file, dir or link TARGET\n");
		return EX_USAGE;
	}
	if ((rc = open_session(a[0], a[1], a[2], a[3], "", OP_PUSH, REQ_CHANGES, &c)) != 0)
		return rc;
	snprintf(m.u.dir_begin.path, sizeof m.u.dir_begin.path, "%s", a[4]);
	rc = conn_send(&c, &m);
	if (rc == 0)
		rc = send_raw_entry(&c, (uint8_t)et, et == ENT_DIR ? 0755 : 0644,
				    et == ENT_REG ? EVIL_LEN : 0, a[5], et == ENT_LNK ? a[7] : "");
	m.type = MSG_DIR_END;
	if (rc == 0)
		rc = conn_send(&c, &m);
	m.type = MSG_END;
	if (rc == 0)
		rc = conn_send(&c, &m);
	if (rc == 0)
		rc = conn_flush(&c);
	if (rc < 0) {
		say("SENDFAIL %s", err_msg());
		rc = EX_OTHER;
	} else {
		rc = answer(&c);
	}
	chan_free(c.ch);
	return rc;
}

static int cmd_push_script(int argc, char **a)
{
	uint64_t flags = REQ_CHANGES;
	struct conn c;
	int rc;

	if (argc > 6 && parse_num(a[6], 0, UINT32_MAX, &flags) < 0) {
		fprintf(stderr, "evil: FLAGS: %s\n", err_msg());
		return EX_USAGE;
	}
	if ((rc = script_run(a[5], NULL)) != 0)
		return rc;
	if ((rc = open_session(a[0], a[1], a[2], a[3], a[4], OP_PUSH, (uint32_t)flags, &c)) != 0)
		return rc;
	rc = script_run(a[5], &c);
	if (rc == 0)
		rc = answer(&c);
	chan_free(c.ch);
	return rc;
}

/* pull-script: a receiver that sends SCRIPT (e.g. WANT_DELTA) to a daemon's
 * sender as soon as it is accepted, then prints what comes until an ERROR,
 * the end or EOF. */
static int cmd_pull_script(char **a)
{
	struct conn c;
	struct msg *m;
	int rc;

	if ((rc = script_run(a[5], NULL)) != 0)
		return rc;
	if ((rc = open_session(a[0], a[1], a[2], a[3], a[4], OP_PULL, 0, &c)) != 0)
		return rc;
	rc = script_run(a[5], &c);
	if (rc == 0)
		rc = conn_flush(&c);
	if (!(m = calloc(1, sizeof *m))) {
		chan_free(c.ch);
		return EX_OTHER;
	}
	while (rc == 0) {
		rc = conn_recv(&c, m);
		if (rc == -ECONNABORTED) {
			printf("ERROR %s\n", err_msg());
			rc = EX_ERROR;
		} else if (rc < 0) {
			printf("LOST %s\n", err_msg());
			rc = EX_OTHER;
		} else {
			printf("%s\n", msg_type_name(m->type));
		}
	}
	fflush(stdout);
	free(m);
	chan_free(c.ch);
	return rc;
}

/* --- the server mode ----------------------------------------------------------- */

/* Accepts one connection and runs the server side of the handshake. */
static int serve_accept(int lfd, const struct keypair *kp, struct channel **ch)
{
	struct chan_peer *peer = calloc(1, sizeof *peer);
	struct hello h = { .version = PROTO_VERSION };
	uint8_t hello[128];
	int one = 1;

	snprintf(h.software, sizeof h.software, "ferry-evil");
	int hl = hello_encode(&h, hello, sizeof hello);
	struct chan_opts co = { .local = kp, .payload = hello, .payload_len = (size_t)hl,
				.timeout_ms = 10000 };
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0 || !peer) {
		free(peer);
		return err_sys(fd < 0 ? -errno : -ENOMEM, "accept");
	}
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	int rc = chan_server(fd, &co, ch, peer);
	free(peer);
	if (rc < 0) {
		close(fd);
		return err_wrap(rc, "handshake");
	}
	chan_set_timeout(*ch, 15000);
	return 0;
}

/* EVIL_REFUSE="CODE:REASON": the REFUSE to send instead of ACCEPT. */
static int refuse_from_env(struct msg *m)
{
	const char *env = getenv("EVIL_REFUSE");
	const char *colon = env ? strchr(env, ':') : NULL;
	char code[16];
	uint64_t v;

	if (!env)
		return 0;
	if (!colon || (size_t)(colon - env) >= sizeof code)
		return err_set(-EINVAL, "EVIL_REFUSE: CODE:REASON wanted");
	snprintf(code, sizeof code, "%.*s", (int)(colon - env), env);
	if (parse_num(code, 0, UINT16_MAX, &v) < 0 ||
	    copy_str(m->u.refuse.reason, sizeof m->u.refuse.reason, colon + 1, "reason") < 0 ||
	    unescape(m->u.refuse.reason) < 0)
		return err_wrap(-EINVAL, "EVIL_REFUSE");
	m->type = MSG_REFUSE;
	m->u.refuse.code = (uint16_t)v;
	return 1;
}

/* ACCEPT (or the REFUSE asked for). Returns 1 when refused, 0 accepted, <0. */
static int serve_answer(struct conn *c, const struct m_request *rq)
{
	struct msg m = { .type = MSG_ACCEPT };
	const char *ap = getenv("EVIL_ACCEPT_PROT");
	int rc = refuse_from_env(&m);

	if (rc != 0) {
		if (rc > 0 && (rc = conn_send(c, &m)) == 0 && (rc = conn_flush(c)) == 0)
			rc = 1;
		return rc;
	}
	const char *af = getenv("EVIL_ACCEPT_FLAGS");
	m.u.accept.protection = ap ? (uint8_t)atoi(ap) : rq->protection;
	m.u.accept.flags = af ? (uint32_t)strtoul(af, NULL, 0) : 0;
	snprintf(m.u.accept.comment, sizeof m.u.accept.comment, "evil");
	if ((rc = conn_send(c, &m)) < 0)
		return rc;
	conn_set_protection(c, m.u.accept.protection, rq->flags);
	return 0;
}

/* A push: prints what the client sends until its END; returns the number of
 * entries (for DECIDED), or an exit code as a negative number. */
static int64_t read_push(struct conn *c, struct msg *m)
{
	int64_t entries = 0;
	int rc;

	for (;;) {
		if ((rc = conn_recv(c, m)) < 0)
			return -recv_failed(rc, m);
		print_msg(m);
		if (m->type == MSG_END)
			return entries;
		entries += m->type == MSG_ENTRY;
		if (m->type == MSG_DATA && (rc = skip_data(c, m->u.len.len)) < 0)
			return -recv_failed(rc, m);
	}
}

/* After the script of a push: the client should close once it has RESULT. */
static int wait_close(struct conn *c, struct msg *m)
{
	int rc;

	chan_set_timeout(c->ch, 10000);
	while ((rc = conn_recv(c, m)) == 0)
		print_msg(m);
	if (rc == -EPIPE) {
		say("CLOSED");
		return 0;
	}
	return recv_failed(rc, m);
}

static int serve_push(struct conn *c, const char *script, struct msg *m)
{
	int64_t n = read_push(c, m);
	int rc;

	if (n < 0)
		return (int)-n;
	/* Everything decided, nothing wanted: the client's sender may finish. */
	if ((rc = conn_send_len(c, MSG_DECIDED, (uint64_t)n)) < 0) {
		say("SENDFAIL %s", err_msg());
		return EX_OTHER;
	}
	if ((rc = script_run(script, c)) != 0)
		return rc;
	return wait_close(c, m);
}

static int serve_session(struct channel *ch, const char *script)
{
	struct conn c = { .ch = ch };
	struct msg *m = calloc(1, sizeof *m);
	int rc;

	if (!m)
		return EX_OTHER;
	if ((rc = conn_recv(&c, m)) < 0 || m->type != MSG_REQUEST) {
		rc = rc < 0 ? recv_failed(rc, m) : (say("UNEXPECTED %s", msg_type_name(m->type)), EX_OTHER);
		free(m);
		return rc;
	}
	struct m_request rq = m->u.request;
	say("REQUEST op=%u module=%s path=%s flags=0x%x protection=%u", rq.op, rq.module, rq.path,
	    rq.flags, rq.protection);
	rc = serve_answer(&c, &rq);
	if (rc < 0) {
		say("SENDFAIL %s", err_msg());
		rc = EX_OTHER;
	} else if (rc == 1) {
		rc = 0;   /* nothing of the client is left unread: closing cannot reset the REFUSE away */
	} else if (rq.op == OP_PUSH) {
		rc = serve_push(&c, script, m);
	} else if ((rc = script_run(script, &c)) == 0) {
		rc = answer(&c);
	}
	free(m);
	return rc;
}

static int cmd_serve(char **a)
{
	struct channel *ch = NULL;
	struct keypair kp;
	unsigned port = 0;
	int lfd, rc;

	if ((rc = script_run(a[1], NULL)) != 0)
		return rc;
	if (keys_load(a[0], &kp) < 0 || (lfd = listen_local(&port)) < 0) {
		fprintf(stderr, "evil: %s\n", err_msg());
		keys_wipe(&kp);
		return EX_OTHER;
	}
	say("PORT %u", port);
	rc = serve_accept(lfd, &kp, &ch);
	keys_wipe(&kp);
	close(lfd);
	if (rc < 0) {
		say("LOST %s", err_msg());
		return EX_OTHER;
	}
	rc = serve_session(ch, a[1]);
	chan_free(ch);
	return rc;
}

/* ferry-evil bench-steps HOST PORT KEYFILE MODULE STEP:BYTES ... */
static int bench_answer(struct conn *c, struct msg *m)
{
	for (;;) {
		int rc = conn_recv(c, m);
		if (rc < 0) {
			printf("LOST %s\n", err_msg());
			return rc;
		}
		if (m->type == MSG_DATA) {   /* a download's bytes: read, not kept */
			for (uint64_t left = m->u.len.len; left;) {
				const uint8_t *p;
				size_t k;
				if ((rc = chan_data_recv(c->ch, left < (1u << 20) ? (size_t)left : 1u << 20,
							 &p, &k)) < 0)
					return rc;
				left -= k;
			}
			continue;
		}
		if (m->type == MSG_BENCH_STAGE)
			continue;
		if (m->type == MSG_BENCH_DONE) {
			printf("DONE %u %u %s\n", m->u.bench_done.step, m->u.bench_done.status,
			       m->u.bench_done.note);
			return 0;
		}
		printf("MSG %s\n", msg_type_name(m->type));
		return -EPROTO;
	}
}

static int cmd_bench_steps(int argc, char **a)
{
	static uint8_t buf[1 << 16];
	struct conn c;
	struct msg *m = calloc(1, sizeof *m);
	int rc = m ? open_session(a[0], a[1], a[2], a[3], "", OP_BENCH, 0, &c) : EX_OTHER;

	if (rc) {
		free(m);
		return rc;
	}
	for (int i = 4; rc == 0 && i < argc; i++) {
		unsigned step = 0;
		unsigned long long bytes = 0;
		sscanf(a[i], "%u:%llu", &step, &bytes);
		memset(m, 0, sizeof *m);
		m->type = MSG_BENCH;
		m->u.bench.step = (uint8_t)step;
		m->u.bench.bytes = bytes;
		if ((rc = conn_send(&c, m)) < 0 || (rc = conn_flush(&c)) < 0)
			break;
		if (step == BSTEP_NET_UP || step == BSTEP_E2E_UP) {
			for (uint64_t left = bytes; rc == 0 && left;) {
				size_t k = left < sizeof buf ? (size_t)left : sizeof buf;
				rc = send_data(&c, buf, k, NULL);
				left -= k;
			}
			if (rc == 0)
				rc = conn_flush(&c);
		}
		if (rc == 0)
			rc = bench_answer(&c, m);
		fflush(stdout);
	}
	chan_free(c.ch);
	free(m);
	return rc ? EX_OTHER : 0;
}

int main(int argc, char **argv)
{
	arm_timeout();
	if (argc >= 8 && !strcmp(argv[1], "request-path"))
		return cmd_request_path(argv + 2);
	if (argc >= 9 && !strcmp(argv[1], "push-entry"))
		return cmd_push_entry(argc - 2, argv + 2);
	if (argc >= 8 && !strcmp(argv[1], "push-script"))
		return cmd_push_script(argc - 2, argv + 2);
	if (argc >= 8 && !strcmp(argv[1], "pull-script"))
		return cmd_pull_script(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "serve"))
		return cmd_serve(argv + 2);
	if (argc >= 7 && !strcmp(argv[1], "bench-steps"))
		return cmd_bench_steps(argc - 2, argv + 2);
	fprintf(stderr,
		"usage: ferry-evil request-path HOST PORT KEYFILE MODULE PATH push|pull|list\n"
		"       ferry-evil push-entry HOST PORT KEYFILE MODULE DIRPATH NAME file|dir|link [TARGET]\n"
		"       ferry-evil push-script HOST PORT KEYFILE MODULE PATH SCRIPT [FLAGS]\n"
		"       ferry-evil pull-script HOST PORT KEYFILE MODULE PATH SCRIPT\n"
		"       ferry-evil bench-steps HOST PORT KEYFILE MODULE STEP:BYTES ...\n"
		"       ferry-evil serve KEYFILE SCRIPT\n");
	return EX_USAGE;
}
