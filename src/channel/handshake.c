/* SPDX-License-Identifier: MIT */
/* The opening lines and the Noise XX handshake on a connected socket:
 *   client: line ->, <- line, -> e, <- e ee s es, -> s se
 * Every read asks for exactly what is needed next, so nothing after the
 * handshake is consumed here (the next bytes belong to the transport). */
#include "channel/channel.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include <sodium.h>

#include "channel/io.h"
#include "channel/noise.h"
#include "channel/opening.h"
#include "channel/transport.h"
#include "util/err.h"

#define HS_MSG_MAX (NOISE_DHLEN * 2 + 2 * AEAD_TAG_LEN + CHAN_MAX_HS_PAYLOAD)

/* Reads one opening line byte by byte: the handshake follows it directly. */
static int read_line(int fd, char line[OPENING_MAX + 1], size_t *len, int64_t deadline,
		     const char *whose)
{
	char ch;
	int rc;

	*len = 0;
	for (;;) {
		if ((rc = io_read_exact(fd, &ch, 1, deadline, "handshake")) < 0) {
			if (rc == -EPIPE)   /* stays EPIPE: the link broke, nothing was malformed */
				return err_set(-EPIPE, "handshake: connection closed during the %s opening line",
					       whose);
			return rc;
		}
		rc = opening_feed(line, len, ch);
		if (rc < 0)
			return err_set(-EPROTO, "handshake: %s opening line is longer than %u bytes",
				       whose, OPENING_MAX);
		if (rc == 1)
			return 0;
	}
}

static int send_msg(int fd, const uint8_t *msg, size_t len, int64_t deadline)
{
	uint8_t buf[2 + HS_MSG_MAX];

	buf[0] = (uint8_t)(len >> 8);
	buf[1] = (uint8_t)len;
	memcpy(buf + 2, msg, len);
	return io_write_all(fd, buf, 2 + len, deadline, "handshake");
}

/* Reads one length-prefixed handshake message of at most `max` bytes. */
static int recv_msg(int fd, uint8_t *msg, size_t max, size_t *len, int64_t deadline)
{
	uint8_t hdr[2];
	int rc;

	if ((rc = io_read_exact(fd, hdr, 2, deadline, "handshake")) < 0)
		goto out;
	*len = (size_t)hdr[0] << 8 | hdr[1];
	if (*len > max)
		return err_set(-EPROTO, "handshake: message of %zu bytes is too long", *len);
	rc = io_read_exact(fd, msg, *len, deadline, "handshake");
out:
	if (rc == -EPIPE)
		return err_set(-EPIPE, "handshake: connection closed by the peer during the handshake");
	return rc;
}

/* Reads a handshake message, processes it, and copies its payload to peer. */
static int recv_step(int fd, struct noise_hs *hs, size_t max, int64_t deadline,
		     struct chan_peer *peer)
{
	uint8_t msg[HS_MSG_MAX];
	const uint8_t *pl;
	size_t len = 0, plen = 0;
	int rc;

	if ((rc = recv_msg(fd, msg, max, &len, deadline)) < 0)
		return rc;
	if ((rc = noise_hs_read(hs, msg, len, &pl, &plen)) < 0)
		return rc;
	if (peer && plen) {
		memcpy(peer->payload, pl, plen);   /* max keeps plen <= CHAN_MAX_HS_PAYLOAD */
		peer->payload_len = plen;
	}
	sodium_memzero(msg, sizeof msg);
	return 0;
}

static int send_step(int fd, struct noise_hs *hs, const struct chan_opts *o, int64_t deadline)
{
	uint8_t msg[HS_MSG_MAX];
	size_t len = 0;
	int rc;

	rc = noise_hs_write(hs, o ? o->payload : NULL, o ? o->payload_len : 0, msg, sizeof msg, &len);
	if (rc == 0)
		rc = send_msg(fd, msg, len, deadline);
	return rc;
}

/* Split, build the channel. Initiator sends with c1, responder with c2. */
static int finish(int fd, struct noise_hs *hs, struct channel **out, struct chan_peer *peer)
{
	struct noise_cs c1 = {0}, c2 = {0};
	uint8_t hash[NOISE_HASHLEN];
	int rc;

	if ((rc = noise_hs_split(hs, &c1, &c2, hash)) < 0)
		return rc;
	if (hs->initiator)
		rc = chan_new(fd, hs->cipher, &c1, &c2, hash, out);
	else
		rc = chan_new(fd, hs->cipher, &c2, &c1, hash, out);
	if (rc < 0) {
		noise_cs_wipe(&c1);
		noise_cs_wipe(&c2);
		return rc;
	}
	memcpy(peer->pub, hs->rs, KEY_LEN);
	peer->cipher = hs->cipher;
	return 0;
}

static unsigned usable_mask(unsigned mask)
{
	enum aead_backend b = aead_default_backend();
	unsigned usable = 0;

	for (int id = CIPHER_CHACHAPOLY; id <= CIPHER_AESGCM; id++)
		if (aead_usable(b, (enum cipher_id)id))
			usable |= 1u << id;
	return (mask ? mask : CIPHER_MASK_ALL) & usable;
}

static int check_opts(const struct chan_opts *o, struct chan_peer *peer)
{
	int rc;

	if ((rc = crypto_ready()) < 0)
		return rc;
	if (!o || !o->local || !peer || o->payload_len > CHAN_MAX_HS_PAYLOAD ||
	    (o->payload_len && !o->payload))
		return err_set(-EINVAL, "handshake: bad options");
	memset(peer, 0, sizeof *peer);
	return 0;
}

int chan_client(int fd, const struct chan_opts *o, struct channel **out, struct chan_peer *peer)
{
	char prologue[2 * (OPENING_MAX + 1)];
	size_t clen, slen;
	unsigned offered;
	enum cipher_id cipher;
	struct noise_hs hs;
	int64_t deadline;
	int rc;

	if ((rc = check_opts(o, peer)) < 0)
		return rc;
	memset(&hs, 0, sizeof hs);
	deadline = io_deadline(o->timeout_ms);
	offered = usable_mask(o->cipher_mask);
	/* AESGCM is chosen only when both ends have AES instructions: without
	 * them this end does not offer it unless asked to (--cipher aesgcm). */
	if (!o->cipher_mask && !chan_have_hw_aes())
		offered &= ~(1u << CIPHER_AESGCM);
	if (!(clen = opening_client_line(offered, prologue)))
		return err_set(-ENOTSUP, "handshake: none of the requested ciphers is available here");
	if ((rc = io_write_all(fd, prologue, clen, deadline, "handshake")) < 0)
		goto out;
	if ((rc = read_line(fd, prologue + clen, &slen, deadline, "server's")) < 0)
		goto out;
	if ((rc = opening_parse_server(prologue + clen, slen, offered, &cipher)) < 0)
		goto out;

	rc = noise_hs_init(&hs, aead_default_backend(), cipher, 1, (uint8_t *)prologue,
			   clen + slen, o->local, NULL);
	if (rc < 0 || (rc = send_step(fd, &hs, NULL, deadline)) < 0)
		goto out;
	rc = recv_step(fd, &hs, noise_xx_msg_len(1, CHAN_MAX_HS_PAYLOAD), deadline, peer);
	if (rc < 0 || (rc = send_step(fd, &hs, o, deadline)) < 0)
		goto out;
	rc = finish(fd, &hs, out, peer);
out:
	noise_hs_wipe(&hs);
	return rc;
}

int chan_server(int fd, const struct chan_opts *o, struct channel **out, struct chan_peer *peer)
{
	char prologue[2 * (OPENING_MAX + 1)];
	size_t clen, slen;
	unsigned offered = 0;
	struct noise_hs hs;
	int64_t deadline;
	int rc, choice;

	if ((rc = check_opts(o, peer)) < 0)
		return rc;
	memset(&hs, 0, sizeof hs);
	deadline = io_deadline(o->timeout_ms);
	if ((rc = read_line(fd, prologue, &clen, deadline, "client's")) < 0 ||
	    (rc = opening_parse_client(prologue, clen, &offered)) < 0) {
		if (rc == -EPROTO)
			chan_refuse(fd, "malformed opening line (expected FERRY/1 and Noise protocol names)");
		goto out;
	}
	choice = opening_choose(offered, usable_mask(o->cipher_mask), chan_have_hw_aes());
	if (choice < 0) {
		chan_refuse(fd, (usable_mask(o->cipher_mask) & (1u << CIPHER_AESGCM)) ?
			    "no common cipher; this server speaks Noise_XX_25519_ChaChaPoly_BLAKE2b"
			    " and Noise_XX_25519_AESGCM_BLAKE2b" :
			    "no common cipher; this server speaks Noise_XX_25519_ChaChaPoly_BLAKE2b");
		rc = err_set(-EPROTO, "handshake: the client offered no protocol we speak");
		goto out;
	}
	slen = opening_server_line((enum cipher_id)choice, prologue + clen);
	if ((rc = io_write_all(fd, prologue + clen, slen, deadline, "handshake")) < 0)
		goto out;

	rc = noise_hs_init(&hs, aead_default_backend(), (enum cipher_id)choice, 0,
			   (uint8_t *)prologue, clen + slen, o->local, NULL);
	if (rc < 0)
		goto out;
	/* Message 1 carries only e: its payload is empty by definition. */
	rc = recv_step(fd, &hs, noise_xx_msg_len(0, 0), deadline, NULL);
	if (rc < 0 || (rc = send_step(fd, &hs, o, deadline)) < 0)
		goto out;
	rc = recv_step(fd, &hs, noise_xx_msg_len(2, CHAN_MAX_HS_PAYLOAD), deadline, peer);
	if (rc < 0)
		goto out;
	rc = finish(fd, &hs, out, peer);
out:
	noise_hs_wipe(&hs);
	return rc;
}

void chan_refuse(int fd, const char *reason)
{
	char line[OPENING_MAX + 1];
	size_t n = opening_error_line(reason, line);

	/* Best effort: the connection is being dropped anyway. */
	(void)!send(fd, line, n, MSG_DONTWAIT | MSG_NOSIGNAL);
}
