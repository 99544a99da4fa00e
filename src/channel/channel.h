/* SPDX-License-Identifier: MIT */
/* The secure channel: the FERRY/1 opening lines, the Noise XX handshake and
 * the transport records, over a connected stream socket. The only layer that
 * calls a cryptographic library (everything lives in src/channel/).
 *
 * Wire (see docs/PROTOCOL.md):
 *   client: "FERRY/1 <name> [<name>...]\n"     server: "FERRY/1 <name>\n" | "FERRY/1 ERROR <reason>\n"
 *   prologue = both lines; then Noise XX, every message as u16be length + message.
 *   transport: control messages are always Noise transport messages (AEAD).
 *   File data, announced by a control message that gives its length, travels
 *   by the channel's data protection level:
 *     PROT_ENCRYPT:   u16be len + AEAD(k, n, ad="", data)          (ordinary transport message)
 *     PROT_INTEGRITY: u16be len + data + AEAD(k, n, ad=data, "")   (16-byte tag; data in clear)
 *     PROT_NONE:      the raw bytes, no framing, nonce not used.
 *   Both sides rekey (Noise Rekey()) each cipher state after every
 *   CHAN_REKEY_INTERVAL records sent with it.
 */
#ifndef FERRY_CHANNEL_CHANNEL_H
#define FERRY_CHANNEL_CHANNEL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "channel/keys.h"

#define CHAN_MAX_MSG 65535u                 /* a Noise message, ciphertext included */
#define CHAN_TAG_LEN 16u
#define CHAN_MAX_PLAIN (CHAN_MAX_MSG - CHAN_TAG_LEN)   /* 65519 */
#define CHAN_MAX_CTRL (CHAN_MAX_PLAIN - 2)   /* a control message, after its length */
#define CHAN_MAX_HS_PAYLOAD 1024u           /* our hello payloads stay below this */
#define CHAN_REKEY_INTERVAL 65536u          /* records per cipher key (<= 4 GiB) */

enum protection { PROT_NONE = 0, PROT_INTEGRITY = 1, PROT_ENCRYPT = 2 };
enum cipher_id { CIPHER_CHACHAPOLY = 0, CIPHER_AESGCM = 1 };
#define CIPHER_MASK_ALL ((1u << CIPHER_CHACHAPOLY) | (1u << CIPHER_AESGCM))

struct channel;

struct chan_opts {
	const struct keypair *local;   /* this side's static key */
	unsigned cipher_mask;          /* client: ciphers offered; server: accepted. 0 = all usable */
	const uint8_t *payload;        /* our hello: message 3 payload (client) or 2 (server) */
	size_t payload_len;            /* <= CHAN_MAX_HS_PAYLOAD */
	int timeout_ms;                /* deadline for the whole opening + handshake; 0 = none */
};

struct chan_peer {
	uint8_t pub[KEY_LEN];                /* the peer's static key, authenticated by the handshake */
	uint8_t payload[CHAN_MAX_HS_PAYLOAD];/* the peer's hello payload */
	size_t payload_len;
	enum cipher_id cipher;               /* what was negotiated */
};

/* Runs the opening and the handshake on a connected socket. On success *out
 * owns fd (chan_free closes it). On failure fd is left open, nothing is
 * allocated, and err_msg() says what went wrong in plain words (for the
 * client: including a server's "FERRY/1 ERROR <reason>"). -EPIPE when the
 * peer closed the connection midway, -ECONNREFUSED for a "FERRY/1 ERROR",
 * -ETIMEDOUT past the deadline, -EPROTO/-EBADMSG for what was malformed. */
int chan_client(int fd, const struct chan_opts *o, struct channel **out, struct chan_peer *peer);
int chan_server(int fd, const struct chan_opts *o, struct channel **out, struct chan_peer *peer);
/* Server side, before the handshake: refuse a connection with "FERRY/1 ERROR <reason>\n". */
void chan_refuse(int fd, const char *reason);

void chan_free(struct channel *c);
int chan_fd(const struct channel *c);
const char *chan_cipher_name(enum cipher_id id);   /* "ChaChaPoly" / "AESGCM" */
const char *chan_backend_name(void);               /* "libsodium" / "openssl" */
/* 1 when this CPU has AES instructions the selected backend can use. */
int chan_have_hw_aes(void);

/* The Noise handshake hash (64 bytes), the same on both ends of this one
 * session and on no other: pairing binds its PAKE to it (channel/pake.h). */
const uint8_t *chan_handshake_hash(const struct channel *c);

/* Default: PROT_ENCRYPT. Both sides must agree; set after the hellos. */
void chan_set_data_protection(struct channel *c, enum protection p);
/* I/O timeout for every later wait; 0 = none. It is not an idle timer that
 * any byte restarts: a record being received, a unit of up to 64 KiB of raw
 * file data, and each 64 KiB of a flush must arrive or leave whole within
 * it (so the slowest peer that is never cut moves 64 KiB per timeout). */
void chan_set_timeout(struct channel *c, int timeout_ms);

/* Control messages, len <= CHAN_MAX_CTRL. Consecutive ones share a transport
 * record (each with a u16be length before it) until data is sent, the output
 * is flushed or the record is full. Sends are buffered; chan_flush writes
 * them out. */
int chan_send(struct channel *c, const void *msg, size_t len);
/* Next control message: *msg points into the channel's buffer, valid until the
 * next call. Returns 0, or -EPIPE at a clean EOF between records, or <0. */
int chan_recv(struct channel *c, const uint8_t **msg, size_t *len);

/* File data (the level set by chan_set_data_protection). Zero-copy sending:
 * chan_data_buf gives room for up to *cap (<= CHAN_MAX_PLAIN) bytes; the caller
 * fills n of them and chan_data_commit seals them in place (one record). */
uint8_t *chan_data_buf(struct channel *c, size_t *cap);
int chan_data_commit(struct channel *c, size_t n);
/* Convenience: sends len bytes as data records (copies into chan_data_buf). */
int chan_data_send(struct channel *c, const void *p, size_t len);
/* Receiving: up to `max` bytes of file data. *p points into the channel's
 * buffer (decrypted/verified in place), *n > 0 on success. The caller asks
 * only for as many bytes as the control message announced; a record that
 * would run past `max` is a protocol error. */
int chan_data_recv(struct channel *c, size_t max, const uint8_t **p, size_t *n);
/* PROT_NONE only: sends len bytes from file fd at *off with sendfile(2) after
 * flushing; receives len bytes into fd at off with splice(2) (after handing
 * over what is already buffered). Fall back to the buffer path otherwise. */
int chan_data_sendfile(struct channel *c, int fd, off_t *off, size_t len);
/* PROT_NONE only: moves up to max bytes of file data from the stream into fd
 * at its current offset (buffered bytes first, then splice(2) through a
 * pipe, never through user space); *moved > 0 on success. */
int chan_data_splice(struct channel *c, int fd, size_t max, size_t *moved);

int chan_flush(struct channel *c);
/* While a write waits for the socket, incoming bytes are buffered (up to
 * CHAN_INBUF bytes) so that two peers writing at once never deadlock. */
/* 1 if a whole record (or raw data) is already buffered for reading. */
int chan_readable(struct channel *c);

/* Counters for -v and the benchmark. */
struct chan_stats {
	uint64_t bytes_in, bytes_out, records_in, records_out, rekeys;
	uint64_t wait_out_ns;   /* time spent waiting for the socket to take output (the
				 * link's pace, for compression's auto rule) */
};
void chan_get_stats(const struct channel *c, struct chan_stats *st);

#endif
