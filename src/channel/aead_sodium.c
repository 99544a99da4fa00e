/* SPDX-License-Identifier: MIT */
/* libsodium AEAD backend: IETF ChaCha20-Poly1305 everywhere, AES-256-GCM only
 * where libsodium has it (AES-NI + PCLMUL). Detached mode, in place. */
#include "channel/aead.h"

#include <errno.h>
#include <string.h>

#include <sodium.h>

#include "util/err.h"

int aead_sodium_init(struct aead *a, const uint8_t key[AEAD_KEY_LEN])
{
	if (a->cipher == CIPHER_AESGCM) {
		/* Expand the AES key schedule once per key, not per message. */
		if (crypto_aead_aes256gcm_beforenm(&a->s.gcm, key) != 0)
			return err_set(-EIO, "AES-256-GCM key setup failed");
		return 0;
	}
	memcpy(a->s.key, key, AEAD_KEY_LEN);
	return 0;
}

int aead_sodium_seal(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		     size_t adlen, uint8_t *buf, size_t len, uint8_t tag[AEAD_TAG_LEN])
{
	unsigned long long taglen = 0;
	int rc;

	if (a->cipher == CIPHER_AESGCM)
		rc = crypto_aead_aes256gcm_encrypt_detached_afternm(buf, tag, &taglen, buf, len,
								    ad, adlen, NULL, nonce, &a->s.gcm);
	else
		rc = crypto_aead_chacha20poly1305_ietf_encrypt_detached(buf, tag, &taglen, buf, len,
									ad, adlen, NULL, nonce, a->s.key);
	if (rc != 0)
		return err_set(-EIO, "encryption failed");
	return 0;
}

int aead_sodium_open(struct aead *a, const uint8_t nonce[AEAD_NONCE_LEN], const uint8_t *ad,
		     size_t adlen, uint8_t *buf, size_t len, const uint8_t tag[AEAD_TAG_LEN])
{
	int rc;

	if (a->cipher == CIPHER_AESGCM)
		rc = crypto_aead_aes256gcm_decrypt_detached_afternm(buf, NULL, buf, len, tag,
								    ad, adlen, nonce, &a->s.gcm);
	else
		rc = crypto_aead_chacha20poly1305_ietf_decrypt_detached(buf, NULL, buf, len, tag,
									ad, adlen, nonce, a->s.key);
	return rc == 0 ? 0 : -EBADMSG;
}
