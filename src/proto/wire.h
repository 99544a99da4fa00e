/* SPDX-License-Identifier: MIT */
/* Bounds-checked encoding of protocol fields: big-endian integers and
 * u16-length-prefixed strings. The reader is the only code that looks at
 * bytes a peer sent; every get_* checks the remaining length first and, once
 * anything failed, every later call fails too, so a decoder checks rd.err
 * once at the end. */
#ifndef FERRY_PROTO_WIRE_H
#define FERRY_PROTO_WIRE_H

#include <stddef.h>
#include <stdint.h>

struct rd {
	const uint8_t *p;
	size_t left;
	int err;            /* 0, or -EBADMSG after the first failed get */
};

struct wr {
	uint8_t *p;         /* caller's buffer */
	size_t cap, len;
	int err;            /* 0, or -EMSGSIZE when a put did not fit */
};

static inline void rd_init(struct rd *r, const uint8_t *p, size_t n)
{
	r->p = p;
	r->left = n;
	r->err = 0;
}

static inline void wr_init(struct wr *w, uint8_t *p, size_t cap)
{
	w->p = p;
	w->cap = cap;
	w->len = 0;
	w->err = 0;
}

uint8_t rd_u8(struct rd *r);
uint16_t rd_u16(struct rd *r);
uint32_t rd_u32(struct rd *r);
uint64_t rd_u64(struct rd *r);
/* Copies exactly n bytes into out. */
void rd_bytes(struct rd *r, void *out, size_t n);
/* A u16-length-prefixed string of at most max bytes, without NUL bytes,
 * copied NUL-terminated into out (which has room for max + 1). */
void rd_str(struct rd *r, char *out, size_t max);
/* Steps over n bytes the caller reads in place (a SIG's entries). */
void rd_skip(struct rd *r, size_t n);
/* Fails unless every byte was consumed (trailing garbage is an error). */
int rd_end(struct rd *r);

void wr_u8(struct wr *w, uint8_t v);
void wr_u16(struct wr *w, uint16_t v);
void wr_u32(struct wr *w, uint32_t v);
void wr_u64(struct wr *w, uint64_t v);
void wr_bytes(struct wr *w, const void *p, size_t n);
void wr_str(struct wr *w, const char *s);   /* strlen(s) must fit in u16 */

#endif
