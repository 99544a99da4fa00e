/* SPDX-License-Identifier: MIT */
/* Transport record decoder. Byte 0 picks the level and mode:
 *   bit 0-1: PROT_ENCRYPT / PROT_INTEGRITY;
 *   bit 2:   raw mode decodes the input as received records as is; sealed
 *            mode first seals the input as records (lengths from the data)
 *            and then flips the byte named by bytes 1-2, to reach the
 *            code after a good tag as well. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "channel/transport.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void keys(struct noise_cs *tx, struct noise_cs *rx)
{
	static const uint8_t k[32] = { 42 };

	memset(tx, 0, sizeof *tx);
	memset(rx, 0, sizeof *rx);
	noise_cs_init(tx, aead_default_backend(), CIPHER_CHACHAPOLY, k);
	noise_cs_init(rx, aead_default_backend(), CIPHER_CHACHAPOLY, k);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct noise_cs tx, rx;
	enum protection prot;
	uint8_t *buf, *plain;
	size_t cap, len = 0, used, plen, off = 0;

	if (size < 3 || crypto_ready() < 0)
		return 0;
	prot = (data[0] & 1) ? PROT_INTEGRITY : PROT_ENCRYPT;
	keys(&tx, &rx);
	cap = 20 * size + 64;   /* a 0-byte record per input byte costs 18 bytes */
	buf = malloc(cap);
	if (!buf)
		return 0;
	if (data[0] & 4) {
		size_t flip = (size_t)data[1] << 8 | data[2], i = 3;
		while (i < size) {
			size_t n = data[i++] % 64;
			if (n > size - i)
				n = size - i;
			memcpy(buf + len + 2, data + i, n);
			size_t reclen;
			if (rec_seal(&tx, prot, buf + len, n, &reclen) < 0)
				break;
			len += reclen;
			i += n;
		}
		if (len)
			buf[flip % len] ^= (uint8_t)(data[0] >> 3);
	} else {
		memcpy(buf, data + 1, size - 1);
		len = size - 1;
	}
	/* Each record is handed over exactly as much as the channel would have. */
	while (off < len) {
		int rc = rec_open(&rx, prot, buf + off, len - off, &used, &plain, &plen);
		if (rc <= 0)
			break;
		if (plen > CHAN_MAX_PLAIN || plain + plen > buf + len)
			abort();
		/* As a control record: its messages stay inside it. */
		const uint8_t *q = plain, *m;
		size_t left = plen, mlen;
		while (left && rec_next_msg(&q, &left, &m, &mlen) == 0)
			if (m < plain || m + mlen > plain + plen)
				abort();
		off += used;
	}
	free(buf);
	noise_cs_wipe(&tx);
	noise_cs_wipe(&rx);
	return 0;
}
