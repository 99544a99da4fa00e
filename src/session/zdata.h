/* SPDX-License-Identifier: MIT */
/* File data as ZDATA (docs/PROTOCOL.md 4.5): the sender's chunks, each one
 * independent zstd frame of at most ZDATA_MAX_RAW bytes of one file, or
 * plain DATA where compressing does not pay (session/zpolicy.h decides);
 * the receiver's strict decoding. Negotiated per session (REQ_COMPRESS,
 * ACC_COMPRESS): without it c->z is NULL and a ZDATA is a protocol error. */
#ifndef FERRY_SESSION_ZDATA_H
#define FERRY_SESSION_ZDATA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fs/afile.h"
#include "session/conn.h"
#include "session/xfer.h"
#include "session/zpolicy.h"

struct progress;
struct XXH3_state_s;
struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;

struct zdata {
	int send;                  /* this side sends file data (and may compress it) */
	int level;
	struct zpolicy pol;
	struct ZSTD_CCtx_s *cc;    /* made at the first chunk sent, */
	struct ZSTD_DCtx_s *dc;    /* or received */
	uint8_t *raw;              /* ZDATA_MAX_RAW: a chunk before compression / after decoding */
	uint8_t *zbuf;             /* ZDATA_MAX_ZLEN: its frame */
};

/* After ACCEPT, on both ends: acc_flags are ACCEPT's flags; `sending` says
 * whether this side is the session's sender; level is the compressor's
 * (ZCHUNK_LEVEL_DEFAULT when 0). Without ACC_COMPRESS c->z stays NULL. */
int zdata_setup(struct conn *c, uint32_t acc_flags, int sending, int level);
void zdata_free(struct conn *c);
/* 1 when this side compresses what it sends. */
int zdata_sending(const struct conn *c);
/* A new file begins (its own back-off; frames never span files anyway). */
void zdata_file(struct conn *c);

/* Sender: len bytes of fd from off, as ZDATA and DATA chunks, hashed into h
 * (may be NULL); a file that shrank or failed is padded and marked in
 * *status, as filedata's own loop does. st gets the compression counts. */
int zdata_send_extent(struct conn *c, int fd, off_t off, uint64_t len, struct XXH3_state_s *h,
		      uint8_t *status, struct progress *pg, struct xfer_stats *st);
/* Sender: n bytes from memory (a delta's literal), as ZDATA and DATA, or as
 * one DATA when this side does not compress; rate-limited by wire bytes. */
int zdata_send_buf(struct conn *c, const uint8_t *p, size_t n, struct xfer_stats *st);

/* Receiver: the frame announced by z, checked and decoded; room is how many
 * bytes the file still has. *out (z->raw_len bytes) is valid until the next
 * call. -EBADMSG for a ZDATA not negotiated, past the file, or not exactly
 * its raw_len once decoded. st gets the compression counts. */
int zdata_recv(struct conn *c, const struct m_zdata *z, uint64_t room, const uint8_t **out,
	       struct xfer_stats *st);
/* Receiver: the same, written to f (NULL: discarded) and hashed into h;
 * a write failure clears *ok with why, as filedata's DATA does. */
int zdata_recv_file(struct conn *c, const struct m_zdata *z, uint64_t room, struct afile *f,
		    struct XXH3_state_s *h, int *ok, char *why, size_t whylen,
		    struct progress *pg, struct xfer_stats *st);

#endif
