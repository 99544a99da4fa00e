/* SPDX-License-Identifier: MIT */
/* Backend choice, Noise nonce encoding and the dispatch to aead_sodium.c /
 * aead_openssl.c. */
#include "channel/aead.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#if defined(__aarch64__) || defined(__arm__)
#include <sys/auxv.h>
#endif

#include <sodium.h>

#include "util/err.h"

int crypto_ready(void)
{
	/* sodium_init() is idempotent and thread-safe; 1 means "already done". */
	if (sodium_init() < 0)
		return err_set(-EIO, "libsodium could not be initialised");
	return 0;
}

enum aead_backend aead_default_backend(void)
{
	const char *env = getenv("FERRY_AEAD");

	if (env && strcmp(env, "sodium") == 0)
		return AEAD_SODIUM;
#ifdef FERRY_HAVE_OPENSSL
	(void)env;
	return AEAD_OPENSSL;
#else
	return AEAD_SODIUM;
#endif
}

/* Hardware AES + carry-less multiply, as AES-GCM needs to be fast and
 * constant-time. libsodium itself only offers AES-GCM with these. */
static int cpu_has_aes(void)
{
	if (crypto_ready() < 0)
		return 0;
#if defined(__x86_64__) || defined(__i386__)
	return sodium_runtime_has_aesni() && sodium_runtime_has_pclmul();
#elif defined(__aarch64__)
	return (getauxval(AT_HWCAP) & (1ul << 3)) && (getauxval(AT_HWCAP) & (1ul << 4)); /* AES, PMULL */
#else
	return 0;
#endif
}

int aead_usable(enum aead_backend backend, enum cipher_id cipher)
{
	if (crypto_ready() < 0)
		return 0;
	if (cipher == CIPHER_CHACHAPOLY)
		return 1;
	if (cipher != CIPHER_AESGCM)
		return 0;
	if (backend == AEAD_SODIUM)
		return crypto_aead_aes256gcm_is_available();
#ifdef FERRY_HAVE_OPENSSL
	return 1;   /* OpenSSL has a (slower) software AES-GCM everywhere */
#else
	return 0;
#endif
}

int chan_have_hw_aes(void)
{
	return cpu_has_aes() && aead_usable(aead_default_backend(), CIPHER_AESGCM);
}

const char *chan_backend_name(void)
{
	return aead_default_backend() == AEAD_OPENSSL ? "openssl" : "libsodium";
}

void aead_nonce(enum cipher_id cipher, uint64_t n, uint8_t out[AEAD_NONCE_LEN])
{
	memset(out, 0, 4);
	for (int i = 0; i < 8; i++) {
		uint8_t b = (uint8_t)(n >> (8 * i));
		if (cipher == CIPHER_AESGCM)
			out[11 - i] = b;   /* big-endian */
		else
			out[4 + i] = b;    /* little-endian */
	}
}

int aead_init_backend(struct aead *a, enum aead_backend backend, enum cipher_id cipher,
		      const uint8_t key[AEAD_KEY_LEN])
{
	int rc;

	memset(a, 0, sizeof *a);
	if ((rc = crypto_ready()) < 0)
		return rc;
	if (!aead_usable(backend, cipher))
		return err_set(-ENOTSUP, "%s is not available with the %s backend on this machine",
			       chan_cipher_name(cipher), backend == AEAD_OPENSSL ? "openssl" : "libsodium");
	a->cipher = cipher;
	a->backend = backend;
#ifdef FERRY_HAVE_OPENSSL
	if (backend == AEAD_OPENSSL) {
		rc = aead_openssl_init(a, key);
		if (rc == 0 && aead_usable(AEAD_SODIUM, cipher) && aead_sodium_init(a, key) == 0)
			a->small_sodium = 1;
	} else
#endif
		rc = aead_sodium_init(a, key);
	if (rc < 0) {
		aead_wipe(a);
		return rc;
	}
	a->ready = 1;
	return 0;
}

int aead_init(struct aead *a, enum cipher_id cipher, const uint8_t key[AEAD_KEY_LEN])
{
	return aead_init_backend(a, aead_default_backend(), cipher, key);
}

int aead_encrypt(struct aead *a, uint64_t n, const uint8_t *ad, size_t adlen,
		 uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN])
{
	uint8_t nonce[AEAD_NONCE_LEN];

	if (!a->ready)
		return err_set(-EINVAL, "AEAD used without a key");
	aead_nonce(a->cipher, n, nonce);
#ifdef FERRY_HAVE_OPENSSL
	if (a->backend == AEAD_OPENSSL && !(a->small_sodium && len < AEAD_SMALL))
		return aead_openssl_seal(a, nonce, ad, adlen, buf, len, tag);
#endif
	return aead_sodium_seal(a, nonce, ad, adlen, buf, len, tag);
}

int aead_decrypt(struct aead *a, uint64_t n, const uint8_t *ad, size_t adlen,
		 uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN])
{
	uint8_t nonce[AEAD_NONCE_LEN];

	if (!a->ready)
		return err_set(-EINVAL, "AEAD used without a key");
	aead_nonce(a->cipher, n, nonce);
#ifdef FERRY_HAVE_OPENSSL
	if (a->backend == AEAD_OPENSSL && !(a->small_sodium && len < AEAD_SMALL))
		return aead_openssl_open(a, nonce, ad, adlen, buf, len, tag);
#endif
	return aead_sodium_open(a, nonce, ad, adlen, buf, len, tag);
}

void aead_wipe(struct aead *a)
{
#ifdef FERRY_HAVE_OPENSSL
	if (a->evp)
		aead_openssl_free(a);
#endif
	sodium_memzero(a, sizeof *a);
}
