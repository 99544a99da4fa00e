/* SPDX-License-Identifier: MIT */
/* Handshake message processing. The first byte picks the role:
 *   even: responder fed msg1 (rest, up to a split point) and then msg3;
 *   odd:  initiator fed msg2.
 * Messages are as the socket layer would hand them over (any length up to
 * the limit it enforces). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "channel/noise.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MSG_MAX (2 * NOISE_DHLEN + 2 * AEAD_TAG_LEN + CHAN_MAX_HS_PAYLOAD)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t prologue[] = "FERRY/1 Noise_XX_25519_ChaChaPoly_BLAKE2b\n";
	struct keypair s = { .priv = { 1, 2, 3 } };
	uint8_t e[32] = { 9 }, msg[MSG_MAX], out[MSG_MAX];
	const uint8_t *pl;
	size_t plen, olen, split;
	struct noise_hs hs;
	enum cipher_id cipher;

	if (size < 2 || crypto_ready() < 0)
		return 0;
	cipher = (data[0] & 2) ? CIPHER_AESGCM : CIPHER_CHACHAPOLY;
	if (!aead_usable(aead_default_backend(), cipher))
		cipher = CIPHER_CHACHAPOLY;
	crypto_scalarmult_base(s.pub, s.priv);
	noise_hs_init(&hs, aead_default_backend(), cipher, data[0] & 1, prologue, sizeof prologue - 1, &s, e);
	data++;
	size--;
	if (hs.initiator) {
		noise_hs_write(&hs, NULL, 0, out, sizeof out, &olen);
		if (size > MSG_MAX)
			size = MSG_MAX;
		memcpy(msg, data, size);
		noise_hs_read(&hs, msg, size, &pl, &plen);
	} else {
		split = data[0] % 64;
		data++;
		size--;
		if (split > size)
			split = size;
		memcpy(msg, data, split);
		if (noise_hs_read(&hs, msg, split, &pl, &plen) == 0 &&
		    noise_hs_write(&hs, NULL, 0, out, sizeof out, &olen) == 0) {
			size -= split;
			if (size > MSG_MAX)
				size = MSG_MAX;
			memcpy(msg, data + split, size);
			noise_hs_read(&hs, msg, size, &pl, &plen);
		}
	}
	noise_hs_wipe(&hs);
	return 0;
}
