/* SPDX-License-Identifier: MIT */
/* Internal: the Noise framework, revision 34, for exactly what ferry speaks:
 * Noise_XX_25519_{ChaChaPoly,AESGCM}_BLAKE2b (HASHLEN 64, BLOCKLEN 128).
 * CipherState, SymmetricState and HandshakeState follow the specification's
 * names so the code can be checked against it line by line. */
#ifndef FERRY_CHANNEL_NOISE_H
#define FERRY_CHANNEL_NOISE_H

#include <stddef.h>
#include <stdint.h>

#include "channel/aead.h"
#include "channel/keys.h"

#define NOISE_HASHLEN 64u
#define NOISE_BLOCKLEN 128u
#define NOISE_DHLEN 32u
#define NOISE_NONCE_MAX UINT64_MAX   /* reserved for Rekey(), never used for a message */

struct noise_cs {
	struct aead aead;
	uint8_t k[AEAD_KEY_LEN];
	uint64_t n;
	int has_key;
	enum cipher_id cipher;
	enum aead_backend backend;
};

struct noise_hs {
	enum cipher_id cipher;
	enum aead_backend backend;
	int initiator;
	int step;                         /* messages processed so far (0..3) */
	uint8_t h[NOISE_HASHLEN];
	uint8_t ck[NOISE_HASHLEN];
	struct noise_cs cs;
	struct keypair s, e;
	uint8_t rs[NOISE_DHLEN], re[NOISE_DHLEN];
};

/* Protocol name for a cipher ("Noise_XX_25519_AESGCM_BLAKE2b"). */
const char *noise_protocol_name(enum cipher_id cipher);

/* HMAC-BLAKE2b and HKDF exactly as section 4.3 of the spec defines them
 * (exported for the unit tests). out1/out2/out3 are HASHLEN bytes; out3 may
 * be NULL for two outputs. */
void noise_hmac(const uint8_t *key, size_t keylen, const uint8_t *data, size_t len,
		uint8_t out[NOISE_HASHLEN]);
void noise_hkdf(const uint8_t ck[NOISE_HASHLEN], const uint8_t *ikm, size_t ikmlen,
		uint8_t out1[NOISE_HASHLEN], uint8_t out2[NOISE_HASHLEN], uint8_t *out3);

/* CipherState. encrypt/decrypt work in place with a detached tag and
 * increment n; with no key they pass the bytes through (handshake only). */
int noise_cs_init(struct noise_cs *cs, enum aead_backend backend, enum cipher_id cipher,
		  const uint8_t *k);
int noise_cs_encrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
		     uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN]);
int noise_cs_decrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
		     uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN]);
/* Rekey(): k = first 32 bytes of ENCRYPT(k, 2^64-1, "", 32 zero bytes); n is kept. */
int noise_cs_rekey(struct noise_cs *cs);
void noise_cs_wipe(struct noise_cs *cs);

/* HandshakeState for XX. `s` is the local static key pair; `e_priv`, when
 * not NULL, fixes the ephemeral private key (test vectors only). */
int noise_hs_init(struct noise_hs *hs, enum aead_backend backend, enum cipher_id cipher,
		  int initiator, const uint8_t *prologue, size_t prologue_len,
		  const struct keypair *s, const uint8_t *e_priv);
/* WriteMessage: the next handshake message with `payload` into out (cap
 * bytes), *outlen set. 0 or <0. */
int noise_hs_write(struct noise_hs *hs, const uint8_t *payload, size_t plen,
		   uint8_t *out, size_t cap, size_t *outlen);
/* ReadMessage: processes msg (modified in place), *payload points into msg.
 * -EBADMSG on an authentication failure, -EPROTO on a malformed message. */
int noise_hs_read(struct noise_hs *hs, uint8_t *msg, size_t len,
		  const uint8_t **payload, size_t *plen);
/* 1 once all three messages went through. */
int noise_hs_done(const struct noise_hs *hs);
/* Split(): the two transport cipher states (c1 initiator->responder, c2 the
 * other way) and the handshake hash. Wipes nothing; call noise_hs_wipe. */
int noise_hs_split(struct noise_hs *hs, struct noise_cs *c1, struct noise_cs *c2,
		   uint8_t hash[NOISE_HASHLEN]);
void noise_hs_wipe(struct noise_hs *hs);

/* The length of message `step` (0..2) of XX with a payload of plen bytes. */
size_t noise_xx_msg_len(int step, size_t plen);

#endif
