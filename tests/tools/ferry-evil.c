/* SPDX-License-Identifier: MIT */
/* ferry-evil: a misbehaving client for the e2e tests. It performs a real
 * handshake (the server's host key is NOT checked: a test tool) and then
 * sends crafted protocol messages the normal client never would.
 *
 *   ferry-evil request-path HOST PORT KEYFILE MODULE PATH OP
 *       OP = push | pull | list. Sends REQUEST with PATH as given (raw) and
 *       prints the answer: "ACCEPT" (exit 0) or "REFUSE <code> <reason>"
 *       (exit 5). Other failures exit 7.
 *
 *   ferry-evil push-entry HOST PORT KEYFILE MODULE DIRPATH NAME TYPE [TARGET]
 *       TYPE = file | dir | link (TARGET: the link's target). NAME is sent raw
 *       (ENTRY is encoded by hand: even a name over 255 bytes). Requests a push
 *       to the module's root, then sends DIR_BEGIN(DIRPATH) + ENTRY(NAME,
 *       TYPE) + DIR_END + END, answers a WANT with FILE_BEGIN/DATA/FILE_END
 *       carrying "evil data\n", and prints what the server said:
 *         "RESULT errors=<n> files=<n> message=<text>"  exit 0 if errors=0, else 4
 *         "ERROR <reason>"                               exit 6 (session ended by the server)
 *         "REFUSE <code> <reason>"                       exit 5
 *         anything else (connection lost, ...)           exit 7
 *       Every WANT and CHANGE is printed as it comes ("WANT <index>").
 *   Environment: EVIL_PROTECTION=0|1|2 (default 2) for the REQUEST.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "channel/channel.h"
#include "channel/keys.h"
#include "proto/msg.h"
#include "session/conn.h"
#include "util/err.h"

#define EX_REFUSED 5
#define EX_ERROR 6
#define EX_OTHER 7

static const char evil_data[] = "evil data\n";

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
	return chan_send(c->ch, buf, (size_t)(p - buf));
}

/* Handshake and REQUEST; 0 on ACCEPT (c ready), else an exit code. */
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
	rc = send_raw_request(c, (uint8_t)op, (uint8_t)prot, flags, module, path);
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
		chan_set_data_protection(ch, m->u.accept.protection);
		c->prot = m->u.accept.protection;
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
		return 1;
	}
	int rc = open_session(a[0], a[1], a[2], a[3], a[4], op, 0, &c);
	if (rc == 0)
		chan_free(c.ch);
	return rc;
}

static int send_file(struct conn *c, uint32_t index)
{
	struct msg m = { .type = MSG_FILE_BEGIN };
	int rc;

	m.u.file_begin.index = index;
	m.u.file_begin.size = sizeof evil_data - 1;
	m.u.file_begin.mode = 0644;
	m.u.file_begin.mtime_s = 1000000000;
	if ((rc = conn_send(c, &m)) < 0)
		return rc;
	if ((rc = conn_send_len(c, MSG_DATA, sizeof evil_data - 1)) < 0)
		return rc;
	if ((rc = chan_data_send(c->ch, evil_data, sizeof evil_data - 1)) < 0)
		return rc;
	memset(&m, 0, sizeof m);
	m.type = MSG_FILE_END;
	m.u.file_end.status = FILE_OK;
	m.u.file_end.has_hash = 0;
	if ((rc = conn_send(c, &m)) < 0)
		return rc;
	return conn_flush(c);
}

static int send_raw_entry(struct conn *c, uint8_t et, const char *name, const char *target)
{
	static uint8_t buf[2 * 4096 + 64];
	size_t nl = strlen(name), tl = strlen(target);
	uint8_t *p = buf;

	if (nl > 4096 || tl > 4096)
		return err_set(-EINVAL, "name or target too long for this tool");
	*p++ = MSG_ENTRY;
	*p++ = et;
	*p++ = 0;                                         /* flags */
	p = put(p, et == ENT_DIR ? 0755 : 0644, 4);       /* mode */
	p = put(p, et == ENT_REG ? sizeof evil_data - 1 : 0, 8);
	p = put(p, 1000000000, 8);                        /* mtime_s */
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

static int cmd_push_entry(int argc, char **a)
{
	struct conn c;
	struct msg *m;
	int rc;

	const char *type = a[6];
	uint8_t et = !strcmp(type, "file") ? ENT_REG : !strcmp(type, "dir") ? ENT_DIR :
		     !strcmp(type, "link") ? ENT_LNK : 0;
	if (!et || (et == ENT_LNK && argc < 8)) {
		fprintf(stderr, "evil: TYPE must be file, dir or link TARGET\n");
		return 1;
	}
	if ((rc = open_session(a[0], a[1], a[2], a[3], "", OP_PUSH, REQ_CHANGES, &c)) != 0)
		return rc;
	if (!(m = calloc(1, sizeof *m))) {
		chan_free(c.ch);
		return EX_OTHER;
	}

	memset(m, 0, sizeof *m);
	m->type = MSG_DIR_BEGIN;
	snprintf(m->u.dir_begin.path, sizeof m->u.dir_begin.path, "%s", a[4]);
	rc = conn_send(&c, m);

	/* ENTRY by hand, so that a NAME longer than MSG_MAX_NAME can be sent. */
	if (rc == 0)
		rc = send_raw_entry(&c, et, a[5], et == ENT_LNK ? a[7] : "");
	memset(m, 0, sizeof *m);
	m->type = MSG_DIR_END;
	if (rc == 0)
		rc = conn_send(&c, m);
	m->type = MSG_END;
	if (rc == 0)
		rc = conn_send(&c, m);
	if (rc == 0)
		rc = conn_flush(&c);
	if (rc < 0) {
		printf("SENDFAIL %s\n", err_msg());
		rc = EX_OTHER;
		goto out;
	}
	for (;;) {
		rc = conn_recv(&c, m);
		if (rc == -ECONNABORTED) {
			printf("ERROR %s\n", err_msg());
			rc = EX_ERROR;
			break;
		}
		if (rc < 0) {
			printf("LOST %s\n", err_msg());
			rc = EX_OTHER;
			break;
		}
		if (m->type == MSG_WANT) {
			printf("WANT %u\n", m->u.index.index);
			if ((rc = send_file(&c, m->u.index.index)) < 0) {
				printf("SENDFAIL %s\n", err_msg());
				rc = EX_OTHER;
				break;
			}
		} else if (m->type == MSG_DECIDED) {
			continue;
		} else if (m->type == MSG_CHANGE) {
			printf("CHANGE %u %s\n", m->u.change.kind, m->u.change.path);
		} else if (m->type == MSG_RESULT) {
			printf("RESULT errors=%u files=%llu message=%s\n", m->u.result.errors,
			       (unsigned long long)m->u.result.files, m->u.result.message);
			rc = m->u.result.errors ? 4 : 0;
			break;
		} else {
			printf("UNEXPECTED %s\n", msg_type_name(m->type));
			rc = EX_OTHER;
			break;
		}
	}
out:
	fflush(stdout);
	chan_free(c.ch);
	free(m);
	return rc;
}

int main(int argc, char **argv)
{
	if (argc >= 8 && !strcmp(argv[1], "request-path"))
		return cmd_request_path(argv + 2);
	if (argc >= 9 && !strcmp(argv[1], "push-entry"))
		return cmd_push_entry(argc - 2, argv + 2);
	fprintf(stderr,
		"usage: ferry-evil request-path HOST PORT KEYFILE MODULE PATH push|pull|list\n"
		"       ferry-evil push-entry HOST PORT KEYFILE MODULE DIRPATH NAME file|dir|link [TARGET]\n");
	return 1;
}
