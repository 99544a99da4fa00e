/* SPDX-License-Identifier: MIT */
/* Internal: the channel object shared by handshake.c and channel.c, the
 * record codec (pure, for the fuzzers) and the hooks the unit tests use. */
#ifndef FERRY_CHANNEL_TRANSPORT_H
#define FERRY_CHANNEL_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "channel/channel.h"
#include "channel/noise.h"

#define CHAN_REC_MAX (2u + CHAN_MAX_MSG)          /* the largest record on the wire */
/* Output is flushed once 256 KiB are queued; the headroom keeps one more
 * whole record so chan_data_buf can always offer CHAN_MAX_PLAIN. */
#define CHAN_OUTBUF (256u * 1024 + CHAN_REC_MAX)
/* Input must hold what the peer may flush at us while we flush ourselves
 * (a full output buffer) next to a partial record and the record last
 * handed to the caller, which must stay in place. */
#define CHAN_INBUF (CHAN_OUTBUF + 2 * CHAN_REC_MAX)
/* Control messages queued together fill one record up to about this many
 * plaintext bytes: one seal and one open per batch instead of per message
 * (1,000,000 ENTRY messages of a no-op were 7 % of the client's CPU as
 * records of their own). A larger message gets a record of its own. */
#define CHAN_BATCH 16384u

struct channel {
	int fd;
	enum cipher_id cipher;
	enum protection prot;
	int timeout_ms;
	int error;                      /* sticky: after a bad record nothing more is read */
	int eof;                        /* the peer closed its side */
	int live;                       /* a pointer into `in` was handed out... */
	size_t live_lo;                 /* ...pointing at in[live_lo..]: keep it in place */
	uint64_t rekey_interval;
	struct noise_cs tx, rx;
	uint8_t hash[NOISE_HASHLEN];
	uint8_t *out;
	size_t out_len, out_off;        /* queued bytes, bytes of them already written */
	uint8_t *in;
	size_t in_r, in_w;              /* unread bytes are in[in_r..in_w) */
	size_t in_lim;                  /* reads stop here (live_lo after a move under a live record) */
	int pipe[2];                    /* for chan_data_splice, made on first use; -1 until then */
	int batch_open;                 /* a control record is being filled at out[batch_at..] */
	size_t batch_at, batch_len;     /* its offset, and the plaintext bytes it holds */
	const uint8_t *sub;             /* control messages left in the live record... */
	size_t sub_left;                /* ...and their bytes */
	struct chan_stats st;
};

/* Builds a channel from the two transport cipher states (moved in: the
 * sources are zeroed). 0 or -ENOMEM. */
int chan_new(int fd, enum cipher_id cipher, struct noise_cs *tx, struct noise_cs *rx,
	     const uint8_t hash[NOISE_HASHLEN], struct channel **out);

/* Seals the control messages queued so far into their record (chan_flush
 * and data do it; the test tools that drip a record byte by byte call it). */
int chan_batch_seal(struct channel *c);

/* Record codec. rec_seal: the plaintext is at rec+2 (n bytes, room for the
 * tag after it); writes the length prefix and tag, *reclen = wire size.
 * rec_open: looks at buf[0..avail): 0 when more bytes are needed (*used =
 * the whole record's size if known, else 2), 1 when a record was opened in
 * place (*plain, *plen, *used = its wire size), <0 (err_msg set) when bad. */
int rec_seal(struct noise_cs *tx, enum protection prot, uint8_t *rec, size_t n, size_t *reclen);
int rec_open(struct noise_cs *rx, enum protection prot, uint8_t *buf, size_t avail,
	     size_t *used, uint8_t **plain, size_t *plen);
/* The next message of a control record's plaintext (*p, *left bytes: u16be
 * length, then the message), advancing past it. 0, or -EPROTO when the
 * length runs past the record. */
int rec_next_msg(const uint8_t **p, size_t *left, const uint8_t **msg, size_t *len);
/* Wire size of the record whose header starts buf (avail >= 2). */
size_t rec_size(enum protection prot, const uint8_t *buf);

/* Tests only: rekey every n messages in channels created afterwards (0 =
 * CHAN_REKEY_INTERVAL). Both ends must use the same value. */
void chan_test_set_rekey_interval(uint64_t n);

#endif
