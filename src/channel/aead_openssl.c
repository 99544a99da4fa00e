/* SPDX-License-Identifier: MIT */
/* OpenSSL libcrypto AEAD backend (compiled only with FERRY_HAVE_OPENSSL).
 * One EVP_CIPHER_CTX per key: the key schedule is set up once, and every
 * message only re-initialises the nonce. */
#include "channel/aead.h"

#include <errno.h>
#include <limits.h>

#include <openssl/evp.h>

#include "util/err.h"

int aead_openssl_init(struct aead *a, const uint8_t key[AEAD_KEY_LEN])
{
	const EVP_CIPHER *cipher = a->cipher == CIPHER_AESGCM ? EVP_aes_256_gcm()
							      : EVP_chacha20_poly1305();
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (!ctx)
		return err_set(-ENOMEM, "out of memory for a cipher context");
	if (EVP_CipherInit_ex(ctx, cipher, NULL, NULL, NULL, 1) != 1 ||
	    EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, AEAD_NONCE_LEN, NULL) != 1 ||
	    EVP_CipherInit_ex(ctx, NULL, NULL, key, NULL, 1) != 1) {
		EVP_CIPHER_CTX_free(ctx);
		return err_set(-EIO, "OpenSSL %s key setup failed", chan_cipher_name(a->cipher));
	}
	a->evp = ctx;
	return 0;
}

/* Runs one message through the context in direction `enc`. */
static int evp_run(struct aead *a, int enc, const uint8_t nonce[AEAD_NONCE_LEN],
		   const uint8_t *ad, size_t adlen, uint8_t *buf, size_t len)
{
	EVP_CIPHER_CTX *ctx = a->evp;
	int outl = 0;

	if (len > INT_MAX || adlen > INT_MAX)
		return -EMSGSIZE;
	if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, nonce, enc) != 1)
		return -EIO;
	if (adlen && EVP_CipherUpdate(ctx, NULL, &outl, ad, (int)adlen) != 1)
		return -EIO;
	if (len && EVP_CipherUpdate(ctx, buf, &outl, buf, (int)len) != 1)
		return -EIO;
	return 0;
}

int aead_openssl_seal(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		      size_t adlen, uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN])
{
	int outl = 0;

	if (evp_run(a, 1, nonce, ad, adlen, buf, len) < 0 ||
	    EVP_CipherFinal_ex(a->evp, buf + len, &outl) != 1 ||
	    EVP_CIPHER_CTX_ctrl(a->evp, EVP_CTRL_AEAD_GET_TAG, AEAD_TAG_LEN, tag) != 1)
		return err_set(-EIO, "OpenSSL encryption failed");
	return 0;
}

int aead_openssl_open(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		      size_t adlen, uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN])
{
	int outl = 0;

	if (evp_run(a, 0, nonce, ad, adlen, buf, len) < 0)
		return err_set(-EIO, "OpenSSL decryption failed");
	/* OpenSSL wants a non-const tag pointer but only reads it. */
	if (EVP_CIPHER_CTX_ctrl(a->evp, EVP_CTRL_AEAD_SET_TAG, AEAD_TAG_LEN, (void *)tag) != 1)
		return err_set(-EIO, "OpenSSL decryption failed");
	if (EVP_CipherFinal_ex(a->evp, buf + len, &outl) != 1)
		return -EBADMSG;
	return 0;
}

void aead_openssl_free(struct aead *a)
{
	EVP_CIPHER_CTX_free(a->evp);   /* clears the key schedule */
	a->evp = NULL;
}
