/* SPDX-License-Identifier: MIT */
/* Internal: one AEAD key (ChaCha20-Poly1305 or AES-256-GCM) behind two
 * interchangeable backends, libsodium and OpenSSL libcrypto. Everything works
 * in place; the 64-bit counter n becomes the 96-bit nonce Noise prescribes
 * (4 zero bytes, then n little-endian for ChaChaPoly, big-endian for AESGCM). */
#ifndef FERRY_CHANNEL_AEAD_H
#define FERRY_CHANNEL_AEAD_H

#include <stddef.h>
#include <stdint.h>

#include <sodium.h>

#include "channel/channel.h"

#define AEAD_KEY_LEN 32u
#define AEAD_TAG_LEN 16u
#define AEAD_NONCE_LEN 12u

enum aead_backend { AEAD_SODIUM = 0, AEAD_OPENSSL = 1 };

struct aead {
	enum cipher_id cipher;
	enum aead_backend backend;
	int ready;
	/* libsodium: the raw key (ChaChaPoly) or the expanded AES-GCM state,
	 * which libsodium wants 16-byte aligned. */
	union {
		uint8_t key[AEAD_KEY_LEN];
		crypto_aead_aes256gcm_state gcm;
	} s;
	void *evp;            /* OpenSSL: one EVP_CIPHER_CTX for the key's lifetime */
	int small_sodium;     /* OpenSSL keys: libsodium's state above is set up too,
			       * for messages under AEAD_SMALL bytes */
};

/* Below this many bytes a message goes through libsodium even when the key's
 * backend is OpenSSL: OpenSSL 3 spends 200-500 ns per message on its
 * parameter plumbing (a string lookup per control call), more than the whole
 * of libsodium's work on a control message or a small file (measured on x86
 * with AES-NI, 2026-12-01: AES-GCM 16 B 193 vs 399 ns, 1 KiB 842 vs 677 ns).
 * Both compute the same AEAD, so the two ends need not agree on this. */
#define AEAD_SMALL 512u

/* Calls sodium_init() once; <0 if libsodium cannot start. */
int crypto_ready(void);

/* The backend new keys use: FERRY_AEAD=sodium|openssl if set, else OpenSSL
 * when compiled in, else libsodium. */
enum aead_backend aead_default_backend(void);
/* 1 if `backend` can run `cipher` on this machine. */
int aead_usable(enum aead_backend backend, enum cipher_id cipher);

/* Sets up a key with the default backend / an explicit one. 0 or <0. */
int aead_init(struct aead *a, enum cipher_id cipher, const uint8_t key[AEAD_KEY_LEN]);
int aead_init_backend(struct aead *a, enum aead_backend backend, enum cipher_id cipher,
		      const uint8_t key[AEAD_KEY_LEN]);
/* Encrypts buf[0..len) in place and writes the tag. 0 or <0. */
int aead_encrypt(struct aead *a, uint64_t n, const uint8_t *ad, size_t adlen,
		 uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN]);
/* Verifies the tag and decrypts in place; -EBADMSG when it does not verify
 * (buf is then left unspecified; callers drop it). */
int aead_decrypt(struct aead *a, uint64_t n, const uint8_t *ad, size_t adlen,
		 uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN]);
void aead_wipe(struct aead *a);

/* The 12-byte nonce for counter n under `cipher`. */
void aead_nonce(enum cipher_id cipher, uint64_t n, uint8_t out[AEAD_NONCE_LEN]);

/* Backend entry points (aead_sodium.c, aead_openssl.c). */
int aead_sodium_init(struct aead *a, const uint8_t key[AEAD_KEY_LEN]);
int aead_sodium_seal(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		     size_t adlen, uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN]);
int aead_sodium_open(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		     size_t adlen, uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN]);
#ifdef FERRY_HAVE_OPENSSL
int aead_openssl_init(struct aead *a, const uint8_t key[AEAD_KEY_LEN]);
int aead_openssl_seal(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		      size_t adlen, uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN]);
int aead_openssl_open(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		      size_t adlen, uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN]);
void aead_openssl_free(struct aead *a);
#endif

#endif
