/* SPDX-License-Identifier: MIT */
/* CPace (draft-irtf-cfrg-cpace, suite CPACE-RISTR255-SHA512), a balanced
 * PAKE built from libsodium's ristretto255 and SHA-512 (docs/CRYPTO.md,
 * "Pairing"): both sides know a short one-time code and end with the same
 * key only if their codes match. Someone in the middle gets one guess per
 * run, and a passive observer learns nothing about the code. ferry runs it
 * inside a Noise session with that session's handshake hash as CPace's sid,
 * so a man in the middle who terminated Noise on both sides (two different
 * hashes) fails even with the right code.
 *
 * Initiator (the client) and responder (the box): each sends its share;
 * pake_finish takes the peer's and derives ISK; then the tags (the explicit
 * key confirmation of the draft): the initiator's first. ADa and ADb are
 * empty. Also here: the one-time code itself (its alphabet and the reading
 * of what a person typed). */
#ifndef FERRY_CHANNEL_PAKE_H
#define FERRY_CHANNEL_PAKE_H

#include <stddef.h>
#include <stdint.h>

#define PAKE_SHARE_LEN 32u
#define PAKE_TAG_LEN 64u
#define PAKE_ISK_LEN 64u
#define PAKE_MAX_SID 64u
#define PAKE_MAX_PRS 64u
#define PAKE_MAX_CI 64u
#define PAKE_CODE_SYMBOLS 8u          /* 40 bits, "XXXX-XXXX" */
#define PAKE_CODE_BUF 16u

struct pake {
	int initiator;
	uint8_t y[32];                    /* this side's scalar; pake_wipe */
	uint8_t mine[PAKE_SHARE_LEN];     /* what this side sends */
	uint8_t peer[PAKE_SHARE_LEN];
	uint8_t sid[PAKE_MAX_SID];
	size_t sid_len;
	uint8_t isk[PAKE_ISK_LEN];
	uint8_t mac_key[64];
	int done;
	/* ADa, ADb: empty in ferry (zeroed by pake_start); the unit test sets
	 * them for the draft's vectors before pake_finish */
	const uint8_t *ad[2];
	size_t ad_len[2];
};

/* 0 when this build has no pairing (a libsodium built --enable-minimal,
 * as OpenWrt's default, has no ristretto255); pake_start says so. */
int pake_available(void);

/* Computes the generator from prs (the code), ci and sid and this side's
 * share (p->mine). y fixes the scalar (test vectors only); NULL = random.
 * -EINVAL on sizes beyond the limits above. */
int pake_start(struct pake *p, int initiator, const uint8_t *prs, size_t prs_len,
	       const uint8_t *ci, size_t ci_len, const uint8_t *sid, size_t sid_len,
	       const uint8_t *y);
/* Takes the peer's share: -EBADMSG when it is not a valid encoding or the
 * result is the identity (a share that would force the key). */
int pake_finish(struct pake *p, const uint8_t peer[PAKE_SHARE_LEN]);
/* This side's confirmation tag, and the check of the peer's (constant time;
 * 0 or -EACCES). Only after pake_finish. */
void pake_tag(const struct pake *p, uint8_t tag[PAKE_TAG_LEN]);
int pake_check(const struct pake *p, const uint8_t tag[PAKE_TAG_LEN]);
void pake_wipe(struct pake *p);

/* The draft's generator string (tests): written to out (cap bytes), its
 * length returned, or 0 when it does not fit. */
size_t pake_generator_string(const uint8_t *prs, size_t prs_len, const uint8_t *ci, size_t ci_len,
			     const uint8_t *sid, size_t sid_len, uint8_t *out, size_t cap);

/* A fresh one-time code, "XXXX-XXXX" from Crockford's base32 alphabet (no
 * I, L, O, U): 40 bits from libsodium's RNG. */
void pake_code_new(char out[PAKE_CODE_BUF]);
/* What a person typed, as the 8 symbols the PAKE uses: case, '-' and
 * blanks ignored, O read as 0 and I, L as 1. -EINVAL (message set) when
 * it is not a code. */
int pake_code_read(const char *typed, char out[PAKE_CODE_SYMBOLS + 1]);

#endif
