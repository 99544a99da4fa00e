/* SPDX-License-Identifier: MIT */
/* CPace over ristretto255 with SHA-512: every step named as the draft
 * names it, so that it can be read against the draft and its test vectors
 * (tests/unit/test_channel_pake.c). The group and the hash are libsodium's. */
#include "channel/pake.h"

#include <errno.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "util/err.h"

static const char DSI[] = "CPaceRistretto255";
static const char DSI_ISK[] = "CPaceRistretto255_ISK";
static const char MAC_LABEL[] = "CPaceMac";
#define S_IN_BYTES 128u   /* SHA-512's block */

/* A buffer that lv_cat appends to; `bad` once anything did not fit. */
struct lv { uint8_t *p; size_t n, cap; int bad; };

static void put(struct lv *b, const void *data, size_t len)
{
	if (b->bad || len > b->cap - b->n) {
		b->bad = 1;
		return;
	}
	if (len)   /* an empty item may come as NULL */
		memcpy(b->p + b->n, data, len);
	b->n += len;
}

/* prepend_len: the length as LEB128, then the bytes. */
static void prepend_len(struct lv *b, const void *data, size_t len)
{
	size_t l = len;

	do {
		uint8_t byte = l & 0x7f;
		l >>= 7;
		if (l)
			byte |= 0x80;
		put(b, &byte, 1);
	} while (l);
	put(b, data, len);
}

static size_t leb_len(size_t len)
{
	size_t n = 1;

	while (len >>= 7)
		n++;
	return n;
}

size_t pake_generator_string(const uint8_t *prs, size_t prs_len, const uint8_t *ci, size_t ci_len,
			     const uint8_t *sid, size_t sid_len, uint8_t *out, size_t cap)
{
	static const uint8_t zeros[S_IN_BYTES];
	struct lv b = { .p = out, .cap = cap };
	size_t dsi_len = sizeof DSI - 1;
	size_t used = 1 + leb_len(prs_len) + prs_len + leb_len(dsi_len) + dsi_len;
	size_t zpad = used < S_IN_BYTES ? S_IN_BYTES - used : 0;

	/* lv_cat(DSI, PRS, zero_bytes(len_zpad), CI, sid) */
	prepend_len(&b, DSI, dsi_len);
	prepend_len(&b, prs, prs_len);
	prepend_len(&b, zeros, zpad);
	prepend_len(&b, ci, ci_len);
	prepend_len(&b, sid, sid_len);
	return b.bad ? 0 : b.n;
}

#ifndef FERRY_HAVE_PAKE
/* libsodium --enable-minimal has no ristretto255: pairing is built out. */
static int no_ristretto(unsigned char *out, const unsigned char *a, const unsigned char *b)
{
	(void)a;
	(void)b;
	memset(out, 0, 32);
	return -1;
}
#define crypto_core_ristretto255_from_hash(g, h) no_ristretto((g), (h), NULL)
#define crypto_core_ristretto255_scalar_random(y) no_ristretto((y), NULL, NULL)
#define crypto_scalarmult_ristretto255(q, n, p) no_ristretto((q), (n), (p))
#endif

int pake_available(void)
{
#ifdef FERRY_HAVE_PAKE
	return 1;
#else
	return 0;
#endif
}

int pake_start(struct pake *p, int initiator, const uint8_t *prs, size_t prs_len,
	       const uint8_t *ci, size_t ci_len, const uint8_t *sid, size_t sid_len,
	       const uint8_t *y)
{
	uint8_t gs[3 * S_IN_BYTES + PAKE_MAX_CI + PAKE_MAX_SID], h[64], g[32];

	if (!pake_available())
		return err_set(-ENOTSUP, "this ferry was built without pairing: its libsodium is a "
			       "minimal build, without ristretto255");
	if (sodium_init() < 0)
		return err_set(-EIO, "libsodium cannot be initialized");
	if (prs_len > PAKE_MAX_PRS || ci_len > PAKE_MAX_CI || sid_len > PAKE_MAX_SID)
		return err_set(-EINVAL, "pairing: code, channel or session id too long");
	memset(p, 0, sizeof *p);
	p->initiator = initiator;
	memcpy(p->sid, sid, sid_len);
	p->sid_len = sid_len;
	size_t n = pake_generator_string(prs, prs_len, ci, ci_len, sid, sid_len, gs, sizeof gs);
	if (!n)
		return err_set(-EINVAL, "pairing: generator string too long");
	/* calculate_generator: the one-way map of SHA-512(generator string) */
	crypto_hash_sha512(h, gs, n);
	crypto_core_ristretto255_from_hash(g, h);
	sodium_memzero(gs, sizeof gs);
	sodium_memzero(h, sizeof h);
	if (y)
		memcpy(p->y, y, sizeof p->y);
	else
		crypto_core_ristretto255_scalar_random(p->y);
	int rc = crypto_scalarmult_ristretto255(p->mine, p->y, g);
	sodium_memzero(g, sizeof g);
	return rc == 0 ? 0 : err_set(-EINVAL, "pairing: the scalar gave no share");
}

/* lv_cat(Ya, ADa) || lv_cat(Yb, ADb) */
static void transcript_ir(struct lv *b, const struct pake *p, const uint8_t ya[32],
			  const uint8_t yb[32])
{
	prepend_len(b, ya, 32);
	prepend_len(b, p->ad[0] ? p->ad[0] : (const uint8_t *)"", p->ad_len[0]);
	prepend_len(b, yb, 32);
	prepend_len(b, p->ad[1] ? p->ad[1] : (const uint8_t *)"", p->ad_len[1]);
}

int pake_finish(struct pake *p, const uint8_t peer[PAKE_SHARE_LEN])
{
	uint8_t k[32], buf[256];
	struct lv b = { .p = buf, .cap = sizeof buf };

	/* scalar_mult_vfy: a bad encoding or the identity fails */
	if (crypto_scalarmult_ristretto255(k, p->y, peer) != 0)
		return err_set(-EBADMSG, "pairing: the peer's share is not valid");
	memcpy(p->peer, peer, PAKE_SHARE_LEN);
	prepend_len(&b, DSI_ISK, sizeof DSI_ISK - 1);
	prepend_len(&b, p->sid, p->sid_len);
	prepend_len(&b, k, sizeof k);
	transcript_ir(&b, p, p->initiator ? p->mine : peer, p->initiator ? peer : p->mine);
	sodium_memzero(k, sizeof k);
	if (b.bad)
		return err_set(-EINVAL, "pairing: transcript too long");
	crypto_hash_sha512(p->isk, buf, b.n);
	sodium_memzero(buf, sizeof buf);
	/* mac_key = H("CPaceMac" || sid || ISK) */
	crypto_hash_sha512_state st;
	crypto_hash_sha512_init(&st);
	crypto_hash_sha512_update(&st, (const uint8_t *)MAC_LABEL, sizeof MAC_LABEL - 1);
	crypto_hash_sha512_update(&st, p->sid, p->sid_len);
	crypto_hash_sha512_update(&st, p->isk, sizeof p->isk);
	crypto_hash_sha512_final(&st, p->mac_key);
	p->done = 1;
	return 0;
}

/* The tag of one side (the draft's section 10.4 with HMAC-SHA512):
 * HMAC(mac_key, lv_cat(Y, AD)) of the share that side sent; side 0 is the
 * initiator. */
static void tag_of(const struct pake *p, int side, const uint8_t y[32], uint8_t tag[PAKE_TAG_LEN])
{
	uint8_t buf[256];
	struct lv b = { .p = buf, .cap = sizeof buf };
	crypto_auth_hmacsha512_state st;

	prepend_len(&b, y, 32);
	prepend_len(&b, p->ad[side] ? p->ad[side] : (const uint8_t *)"", p->ad_len[side]);
	crypto_auth_hmacsha512_init(&st, p->mac_key, sizeof p->mac_key);
	crypto_auth_hmacsha512_update(&st, buf, b.n);
	crypto_auth_hmacsha512_final(&st, tag);
	sodium_memzero(&st, sizeof st);
}

void pake_tag(const struct pake *p, uint8_t tag[PAKE_TAG_LEN])
{
	tag_of(p, !p->initiator, p->mine, tag);
}

int pake_check(const struct pake *p, const uint8_t tag[PAKE_TAG_LEN])
{
	uint8_t want[PAKE_TAG_LEN];

	if (!p->done)
		return -EACCES;
	tag_of(p, p->initiator, p->peer, want);
	int ok = sodium_memcmp(want, tag, sizeof want) == 0;
	sodium_memzero(want, sizeof want);
	return ok ? 0 : -EACCES;
}

void pake_wipe(struct pake *p)
{
	sodium_memzero(p, sizeof *p);
}

static const char ALPHABET[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

void pake_code_new(char out[PAKE_CODE_BUF])
{
	size_t o = 0;

	if (sodium_init() < 0)
		abort();   /* no randomness: no code, and nothing sensible to return */
	for (unsigned i = 0; i < PAKE_CODE_SYMBOLS; i++) {
		if (i == PAKE_CODE_SYMBOLS / 2)
			out[o++] = '-';
		out[o++] = ALPHABET[randombytes_uniform(32)];
	}
	out[o] = '\0';
}

int pake_code_read(const char *typed, char out[PAKE_CODE_SYMBOLS + 1])
{
	size_t n = 0;
	const char *s = typed;

	for (; *s; s++) {
		int c = toupper((unsigned char)*s);
		if (c == '-' || c == ' ' || c == '\t')
			continue;
		if (c == 'O')
			c = '0';
		else if (c == 'I' || c == 'L')
			c = '1';
		if (!strchr(ALPHABET, c) || n == PAKE_CODE_SYMBOLS)
			break;   /* not a symbol, or one too many */
		out[n++] = (char)c;
	}
	if (*s || n != PAKE_CODE_SYMBOLS)
		return err_set(-EINVAL, "'%.40s' is not a pairing code (%u letters and digits, "
			       "as 'ferry pair MODULE' shows it on the box)", typed, PAKE_CODE_SYMBOLS);
	out[n] = '\0';
	return 0;
}
