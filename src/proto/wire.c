/* SPDX-License-Identifier: MIT */
#include "proto/wire.h"

#include <errno.h>
#include <string.h>

static int take(struct rd *r, size_t n)
{
	if (r->err || r->left < n) {
		r->err = -EBADMSG;
		return 0;
	}
	return 1;
}

uint8_t rd_u8(struct rd *r)
{
	if (!take(r, 1))
		return 0;
	uint8_t v = r->p[0];
	r->p++;
	r->left--;
	return v;
}

uint16_t rd_u16(struct rd *r)
{
	if (!take(r, 2))
		return 0;
	uint16_t v = (uint16_t)((r->p[0] << 8) | r->p[1]);
	r->p += 2;
	r->left -= 2;
	return v;
}

uint32_t rd_u32(struct rd *r)
{
	if (!take(r, 4))
		return 0;
	uint32_t v = ((uint32_t)r->p[0] << 24) | ((uint32_t)r->p[1] << 16) |
		     ((uint32_t)r->p[2] << 8) | r->p[3];
	r->p += 4;
	r->left -= 4;
	return v;
}

uint64_t rd_u64(struct rd *r)
{
	uint64_t hi = rd_u32(r);
	return (hi << 32) | rd_u32(r);
}

void rd_bytes(struct rd *r, void *out, size_t n)
{
	if (!take(r, n)) {
		memset(out, 0, n);
		return;
	}
	memcpy(out, r->p, n);
	r->p += n;
	r->left -= n;
}

void rd_skip(struct rd *r, size_t n)
{
	if (!take(r, n))
		return;
	r->p += n;
	r->left -= n;
}

void rd_str(struct rd *r, char *out, size_t max)
{
	size_t n = rd_u16(r);
	out[0] = '\0';
	if (r->err)
		return;
	if (n > max || !take(r, n) || memchr(r->p, '\0', n)) {
		r->err = -EBADMSG;
		return;
	}
	memcpy(out, r->p, n);
	out[n] = '\0';
	r->p += n;
	r->left -= n;
}

int rd_end(struct rd *r)
{
	if (!r->err && r->left)
		r->err = -EBADMSG;
	return r->err;
}

static uint8_t *room(struct wr *w, size_t n)
{
	if (w->err || w->cap - w->len < n) {
		w->err = -EMSGSIZE;
		return NULL;
	}
	uint8_t *p = w->p + w->len;
	w->len += n;
	return p;
}

void wr_u8(struct wr *w, uint8_t v)
{
	uint8_t *p = room(w, 1);
	if (p)
		p[0] = v;
}

void wr_u16(struct wr *w, uint16_t v)
{
	uint8_t *p = room(w, 2);
	if (p) {
		p[0] = (uint8_t)(v >> 8);
		p[1] = (uint8_t)v;
	}
}

void wr_u32(struct wr *w, uint32_t v)
{
	uint8_t *p = room(w, 4);
	if (p) {
		p[0] = (uint8_t)(v >> 24);
		p[1] = (uint8_t)(v >> 16);
		p[2] = (uint8_t)(v >> 8);
		p[3] = (uint8_t)v;
	}
}

void wr_u64(struct wr *w, uint64_t v)
{
	wr_u32(w, (uint32_t)(v >> 32));
	wr_u32(w, (uint32_t)v);
}

void wr_bytes(struct wr *w, const void *src, size_t n)
{
	uint8_t *p = room(w, n);
	if (p && n)
		memcpy(p, src, n);
}

void wr_str(struct wr *w, const char *s)
{
	size_t n = strlen(s);
	if (n > 0xffff) {
		w->err = -EMSGSIZE;
		return;
	}
	wr_u16(w, (uint16_t)n);
	wr_bytes(w, s, n);
}
