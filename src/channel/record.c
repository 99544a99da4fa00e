/* SPDX-License-Identifier: MIT */
/* Transport records:
 *   PROT_ENCRYPT:   u16be len | AEAD(k, n, "", data) (len = data + 16)
 *   PROT_INTEGRITY: u16be len | data | AEAD(k, n, data, "") (len = data, tag after)
 * Both use the cipher state's nonce sequence. A control record's data is
 * one or more messages, each as u16be len | message. */
#include "channel/transport.h"

#include <errno.h>

#include "util/err.h"

size_t rec_size(enum protection prot, const uint8_t *buf)
{
	size_t len = (size_t)buf[0] << 8 | buf[1];

	return 2 + len + (prot == PROT_INTEGRITY ? CHAN_TAG_LEN : 0);
}

int rec_seal(struct noise_cs *tx, enum protection prot, uint8_t *rec, size_t n, size_t *reclen)
{
	uint8_t *data = rec + 2;
	size_t len = prot == PROT_INTEGRITY ? n : n + CHAN_TAG_LEN;
	int rc;

	if (n > CHAN_MAX_PLAIN)
		return err_set(-EMSGSIZE, "channel: record of %zu bytes is too large", n);
	rec[0] = (uint8_t)(len >> 8);
	rec[1] = (uint8_t)len;
	if (prot == PROT_INTEGRITY)
		rc = noise_cs_encrypt(tx, data, n, data + n, 0, data + n);
	else
		rc = noise_cs_encrypt(tx, NULL, 0, data, n, data + n);
	if (rc < 0)
		return rc;
	*reclen = 2 + n + CHAN_TAG_LEN;
	return 0;
}

int rec_open(struct noise_cs *rx, enum protection prot, uint8_t *buf, size_t avail,
	     size_t *used, uint8_t **plain, size_t *plen)
{
	size_t len, n, total;
	uint8_t *data = buf + 2;
	int rc;

	if (avail < 2) {
		*used = 2;
		return 0;
	}
	len = (size_t)buf[0] << 8 | buf[1];
	if (prot == PROT_INTEGRITY) {
		if (len > CHAN_MAX_PLAIN)
			return err_set(-EPROTO, "channel: data record of %zu bytes is oversized", len);
		n = len;
	} else {
		if (len < CHAN_TAG_LEN)
			return err_set(-EPROTO, "channel: record of %zu bytes is shorter than its tag", len);
		n = len - CHAN_TAG_LEN;
	}
	total = 2 + n + CHAN_TAG_LEN;
	*used = total;
	if (avail < total)
		return 0;
	if (prot == PROT_INTEGRITY)
		rc = noise_cs_decrypt(rx, data, n, data + n, 0, data + n);
	else
		rc = noise_cs_decrypt(rx, NULL, 0, data, n, data + n);
	if (rc == -EBADMSG)
		return err_set(rc, prot == PROT_INTEGRITY
			       ? "channel: data record failed its integrity check (tampered or corrupted)"
			       : "channel: decryption failed (tampered or corrupted record)");
	if (rc < 0)
		return rc;
	*plain = data;
	*plen = n;
	return 1;
}

int rec_next_msg(const uint8_t **p, size_t *left, const uint8_t **msg, size_t *len)
{
	size_t n;

	if (*left < 2 || (n = (size_t)(*p)[0] << 8 | (*p)[1]) > *left - 2)
		return err_set(-EPROTO, "channel: malformed message framing in a control record");
	*msg = *p + 2;
	*len = n;
	*p += 2 + n;
	*left -= 2 + n;
	return 0;
}
