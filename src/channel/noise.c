/* SPDX-License-Identifier: MIT */
/* Noise revision 34: Noise_XX_25519_{ChaChaPoly,AESGCM}_BLAKE2b.
 * Written from the specification's pseudo-code; section numbers refer to it. */
#include "channel/noise.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "util/err.h"

const char *noise_protocol_name(enum cipher_id cipher)
{
	return cipher == CIPHER_AESGCM ? "Noise_XX_25519_AESGCM_BLAKE2b"
				       : "Noise_XX_25519_ChaChaPoly_BLAKE2b";
}

/* HASH(a || b) with BLAKE2b-512, unkeyed. */
static void hash2(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen,
		  uint8_t out[NOISE_HASHLEN])
{
	crypto_generichash_state st;

	crypto_generichash_init(&st, NULL, 0, NOISE_HASHLEN);
	crypto_generichash_update(&st, a, alen);
	if (blen)
		crypto_generichash_update(&st, b, blen);
	crypto_generichash_final(&st, out, NOISE_HASHLEN);
	sodium_memzero(&st, sizeof st);
}

/* HMAC-HASH (RFC 2104) over data1 || data2, built from plain BLAKE2b as the
 * spec requires: BLAKE2b's own keyed mode would give different bytes. */
static void hmac2(const uint8_t *key, size_t keylen, const uint8_t *d1, size_t l1,
		  const uint8_t *d2, size_t l2, uint8_t out[NOISE_HASHLEN])
{
	uint8_t k[NOISE_BLOCKLEN] = {0}, pad[NOISE_BLOCKLEN], inner[NOISE_HASHLEN];
	crypto_generichash_state st;

	if (keylen > NOISE_BLOCKLEN)
		hash2(key, keylen, NULL, 0, k);
	else
		memcpy(k, key, keylen);

	for (size_t i = 0; i < NOISE_BLOCKLEN; i++)
		pad[i] = k[i] ^ 0x36;
	crypto_generichash_init(&st, NULL, 0, NOISE_HASHLEN);
	crypto_generichash_update(&st, pad, sizeof pad);
	if (l1)
		crypto_generichash_update(&st, d1, l1);
	if (l2)
		crypto_generichash_update(&st, d2, l2);
	crypto_generichash_final(&st, inner, sizeof inner);

	for (size_t i = 0; i < NOISE_BLOCKLEN; i++)
		pad[i] = k[i] ^ 0x5c;
	hash2(pad, sizeof pad, inner, sizeof inner, out);

	sodium_memzero(k, sizeof k);
	sodium_memzero(pad, sizeof pad);
	sodium_memzero(inner, sizeof inner);
	sodium_memzero(&st, sizeof st);
}

void noise_hmac(const uint8_t *key, size_t keylen, const uint8_t *data, size_t len,
		uint8_t out[NOISE_HASHLEN])
{
	hmac2(key, keylen, data, len, NULL, 0, out);
}

/* Section 4.3: temp_key = HMAC(ck, ikm); output1 = HMAC(temp_key, 0x01);
 * output2 = HMAC(temp_key, output1 || 0x02); output3 = HMAC(temp_key, output2 || 0x03). */
void noise_hkdf(const uint8_t ck[NOISE_HASHLEN], const uint8_t *ikm, size_t ikmlen,
		uint8_t out1[NOISE_HASHLEN], uint8_t out2[NOISE_HASHLEN], uint8_t *out3)
{
	uint8_t temp[NOISE_HASHLEN];
	const uint8_t one = 1, two = 2, three = 3;

	hmac2(ck, NOISE_HASHLEN, ikm, ikmlen, NULL, 0, temp);
	hmac2(temp, sizeof temp, &one, 1, NULL, 0, out1);
	hmac2(temp, sizeof temp, out1, NOISE_HASHLEN, &two, 1, out2);
	if (out3)
		hmac2(temp, sizeof temp, out2, NOISE_HASHLEN, &three, 1, out3);
	sodium_memzero(temp, sizeof temp);
}

/* ---- CipherState (section 5.1) ---- */

int noise_cs_init(struct noise_cs *cs, enum aead_backend backend, enum cipher_id cipher,
		  const uint8_t *k)
{
	noise_cs_wipe(cs);
	cs->cipher = cipher;
	cs->backend = backend;
	if (!k)
		return 0;
	memcpy(cs->k, k, AEAD_KEY_LEN);
	cs->has_key = 1;
	return aead_init_backend(&cs->aead, backend, cipher, k);
}

int noise_cs_encrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
		     uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN])
{
	int rc;

	if (!cs->has_key)
		return 0;
	/* 2^64-1 is reserved for Rekey(); reaching it ends the session. */
	if (cs->n == NOISE_NONCE_MAX)
		return err_set(-EOVERFLOW, "channel: nonces exhausted");
	if ((rc = aead_encrypt(&cs->aead, cs->n, ad, adlen, buf, len, tag)) < 0)
		return rc;
	cs->n++;
	return 0;
}

int noise_cs_decrypt(struct noise_cs *cs, const uint8_t *ad, size_t adlen,
		     uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN])
{
	int rc;

	if (!cs->has_key)
		return 0;
	if (cs->n == NOISE_NONCE_MAX)
		return err_set(-EOVERFLOW, "channel: nonces exhausted");
	/* n only advances on success, as the spec says for DecryptWithAd. */
	if ((rc = aead_decrypt(&cs->aead, cs->n, ad, adlen, buf, len, tag)) < 0)
		return rc;
	cs->n++;
	return 0;
}

int noise_cs_rekey(struct noise_cs *cs)
{
	uint8_t k[AEAD_KEY_LEN] = {0}, tag[AEAD_TAG_LEN];
	uint64_t n = cs->n;
	int rc;

	if (!cs->has_key)
		return err_set(-EINVAL, "rekey without a key");
	rc = aead_encrypt(&cs->aead, NOISE_NONCE_MAX, NULL, 0, k, sizeof k, tag);
	if (rc == 0)
		rc = noise_cs_init(cs, cs->backend, cs->cipher, k);
	cs->n = n;
	sodium_memzero(k, sizeof k);
	return rc;
}

void noise_cs_wipe(struct noise_cs *cs)
{
	aead_wipe(&cs->aead);
	sodium_memzero(cs, sizeof *cs);
}

/* ---- SymmetricState (section 5.2) ---- */

static void mix_hash(struct noise_hs *hs, const uint8_t *data, size_t len)
{
	hash2(hs->h, NOISE_HASHLEN, data, len, hs->h);
}

static int mix_key(struct noise_hs *hs, const uint8_t *ikm, size_t len)
{
	uint8_t tk[NOISE_HASHLEN];
	int rc;

	noise_hkdf(hs->ck, ikm, len, hs->ck, tk, NULL);
	/* HASHLEN 64: temp_k is truncated to the 32-byte cipher key. */
	rc = noise_cs_init(&hs->cs, hs->backend, hs->cipher, tk);
	sodium_memzero(tk, sizeof tk);
	return rc;
}

/* EncryptAndHash on buf[0..len) in place; the tag (if any) goes at buf+len.
 * Returns the ciphertext length. */
static int encrypt_and_hash(struct noise_hs *hs, uint8_t *buf, size_t len, size_t *outlen)
{
	int rc = noise_cs_encrypt(&hs->cs, hs->h, NOISE_HASHLEN, buf, len, buf + len);

	if (rc < 0)
		return rc;
	*outlen = len + (hs->cs.has_key ? AEAD_TAG_LEN : 0);
	mix_hash(hs, buf, *outlen);
	return 0;
}

/* DecryptAndHash on buf[0..len), len including the tag when there is a key. */
static int decrypt_and_hash(struct noise_hs *hs, uint8_t *buf, size_t len, size_t *plen)
{
	uint8_t next_h[NOISE_HASHLEN];
	size_t tl = hs->cs.has_key ? AEAD_TAG_LEN : 0;
	int rc;

	if (len < tl)
		return -EPROTO;
	/* h must absorb the ciphertext, which the in-place decryption destroys. */
	hash2(hs->h, NOISE_HASHLEN, buf, len, next_h);
	rc = noise_cs_decrypt(&hs->cs, hs->h, NOISE_HASHLEN, buf, len - tl, buf + len - tl);
	if (rc < 0)
		return rc;
	memcpy(hs->h, next_h, NOISE_HASHLEN);
	*plen = len - tl;
	return 0;
}

/* ---- HandshakeState (section 5.3) for XX ---- */

static int dh(struct noise_hs *hs, const uint8_t priv[NOISE_DHLEN], const uint8_t pub[NOISE_DHLEN])
{
	uint8_t out[NOISE_DHLEN];
	int rc = 0;

	/* libsodium refuses an all-zero result (a low-order peer point). */
	if (crypto_scalarmult(out, priv, pub) != 0)
		rc = err_set(-EPROTO, "handshake: the peer sent an invalid key");
	else
		rc = mix_key(hs, out, sizeof out);
	sodium_memzero(out, sizeof out);
	return rc;
}

int noise_hs_init(struct noise_hs *hs, enum aead_backend backend, enum cipher_id cipher,
		  int initiator, const uint8_t *prologue, size_t prologue_len,
		  const struct keypair *s, const uint8_t *e_priv)
{
	const char *name = noise_protocol_name(cipher);
	int rc;

	memset(hs, 0, sizeof *hs);
	if ((rc = crypto_ready()) < 0)
		return rc;
	hs->cipher = cipher;
	hs->backend = backend;
	hs->initiator = initiator;
	/* InitializeSymmetric: the name fits in HASHLEN, so h = name zero-padded. */
	memcpy(hs->h, name, strlen(name));
	memcpy(hs->ck, hs->h, NOISE_HASHLEN);
	noise_cs_init(&hs->cs, backend, cipher, NULL);
	mix_hash(hs, prologue, prologue_len);
	hs->s = *s;
	if (e_priv)
		memcpy(hs->e.priv, e_priv, NOISE_DHLEN);
	else
		randombytes_buf(hs->e.priv, NOISE_DHLEN);
	crypto_scalarmult_base(hs->e.pub, hs->e.priv);
	return 0;
}

size_t noise_xx_msg_len(int step, size_t plen)
{
	switch (step) {
	case 0:  return NOISE_DHLEN + plen;                                       /* e */
	case 1:  return NOISE_DHLEN + NOISE_DHLEN + AEAD_TAG_LEN + plen + AEAD_TAG_LEN; /* e, ee, s, es */
	default: return NOISE_DHLEN + AEAD_TAG_LEN + plen + AEAD_TAG_LEN;         /* s, se */
	}
}

static int my_turn(const struct noise_hs *hs, int writing)
{
	int initiator_writes = hs->step % 2 == 0;

	return hs->step < 3 && (initiator_writes == !!hs->initiator) == !!writing;
}

int noise_hs_write(struct noise_hs *hs, const uint8_t *payload, size_t plen,
		   uint8_t *out, size_t cap, size_t *outlen)
{
	size_t off = 0, n = 0;
	int rc;

	if (!my_turn(hs, 1))
		return err_set(-EINVAL, "handshake: not our turn to write");
	if (noise_xx_msg_len(hs->step, plen) > cap)
		return err_set(-EMSGSIZE, "handshake: message too long");

	switch (hs->step) {
	case 0:   /* -> e */
		memcpy(out, hs->e.pub, NOISE_DHLEN);
		mix_hash(hs, hs->e.pub, NOISE_DHLEN);
		off = NOISE_DHLEN;
		break;
	case 1:   /* <- e, ee, s, es */
		memcpy(out, hs->e.pub, NOISE_DHLEN);
		mix_hash(hs, hs->e.pub, NOISE_DHLEN);
		off = NOISE_DHLEN;
		if ((rc = dh(hs, hs->e.priv, hs->re)) < 0)
			return rc;
		memcpy(out + off, hs->s.pub, NOISE_DHLEN);
		if ((rc = encrypt_and_hash(hs, out + off, NOISE_DHLEN, &n)) < 0)
			return rc;
		off += n;
		if ((rc = dh(hs, hs->s.priv, hs->re)) < 0)
			return rc;
		break;
	case 2:   /* -> s, se */
		memcpy(out, hs->s.pub, NOISE_DHLEN);
		if ((rc = encrypt_and_hash(hs, out, NOISE_DHLEN, &n)) < 0)
			return rc;
		off = n;
		if ((rc = dh(hs, hs->s.priv, hs->re)) < 0)
			return rc;
		break;
	}
	if (plen)
		memmove(out + off, payload, plen);
	if ((rc = encrypt_and_hash(hs, out + off, plen, &n)) < 0)
		return rc;
	*outlen = off + n;
	hs->step++;
	return 0;
}

int noise_hs_read(struct noise_hs *hs, uint8_t *msg, size_t len,
		  const uint8_t **payload, size_t *plen)
{
	size_t off = 0, n = 0, slen;
	int rc;

	if (!my_turn(hs, 0))
		return err_set(-EINVAL, "handshake: not our turn to read");
	if (len < noise_xx_msg_len(hs->step, 0))
		return err_set(-EPROTO, "handshake: message %d is too short (%zu bytes)",
			       hs->step + 1, len);

	switch (hs->step) {
	case 0:   /* -> e */
		memcpy(hs->re, msg, NOISE_DHLEN);
		mix_hash(hs, hs->re, NOISE_DHLEN);
		off = NOISE_DHLEN;
		break;
	case 1:   /* <- e, ee, s, es */
		memcpy(hs->re, msg, NOISE_DHLEN);
		mix_hash(hs, hs->re, NOISE_DHLEN);
		off = NOISE_DHLEN;
		if ((rc = dh(hs, hs->e.priv, hs->re)) < 0)
			return rc;
		slen = NOISE_DHLEN + AEAD_TAG_LEN;
		if ((rc = decrypt_and_hash(hs, msg + off, slen, &n)) < 0)
			goto bad;
		memcpy(hs->rs, msg + off, NOISE_DHLEN);
		off += slen;
		if ((rc = dh(hs, hs->e.priv, hs->rs)) < 0)
			return rc;
		break;
	case 2:   /* -> s, se */
		slen = NOISE_DHLEN + AEAD_TAG_LEN;
		if ((rc = decrypt_and_hash(hs, msg, slen, &n)) < 0)
			goto bad;
		memcpy(hs->rs, msg, NOISE_DHLEN);
		off = slen;
		if ((rc = dh(hs, hs->e.priv, hs->rs)) < 0)
			return rc;
		break;
	}
	if ((rc = decrypt_and_hash(hs, msg + off, len - off, &n)) < 0)
		goto bad;
	*payload = msg + off;
	*plen = n;
	hs->step++;
	return 0;
bad:
	if (rc == -EBADMSG)
		return err_set(rc, "handshake: decryption failed (wrong key or tampered message)");
	return rc;
}

int noise_hs_done(const struct noise_hs *hs)
{
	return hs->step == 3;
}

int noise_hs_split(struct noise_hs *hs, struct noise_cs *c1, struct noise_cs *c2,
		   uint8_t hash[NOISE_HASHLEN])
{
	uint8_t k1[NOISE_HASHLEN], k2[NOISE_HASHLEN];
	int rc;

	if (!noise_hs_done(hs))
		return err_set(-EINVAL, "handshake: split before the last message");
	noise_hkdf(hs->ck, NULL, 0, k1, k2, NULL);
	memset(c1, 0, sizeof *c1);
	memset(c2, 0, sizeof *c2);
	rc = noise_cs_init(c1, hs->backend, hs->cipher, k1);
	if (rc == 0)
		rc = noise_cs_init(c2, hs->backend, hs->cipher, k2);
	if (rc < 0) {
		noise_cs_wipe(c1);
		noise_cs_wipe(c2);
	}
	if (hash)
		memcpy(hash, hs->h, NOISE_HASHLEN);
	sodium_memzero(k1, sizeof k1);
	sodium_memzero(k2, sizeof k2);
	return rc;
}

void noise_hs_wipe(struct noise_hs *hs)
{
	noise_cs_wipe(&hs->cs);
	sodium_memzero(hs, sizeof *hs);
}
