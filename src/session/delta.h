/* SPDX-License-Identifier: MIT */
/* Delta transfer, rsync's way round (docs/PROTOCOL.md, 4.3): the receiver
 * streams the signature of its old version (the basis) as it reads it and
 * holds none of it; the sender rolls over the new file, finds the basis's
 * blocks in it and sends COPY for those and DATA for the rest. Only a client
 * sender rolls: the box is never asked to (a box sender refuses WANT_DELTA).
 * The receiver verifies the whole reconstructed file with xxh3-128 at every
 * protection level, since a block match can be a collision. */
#ifndef FERRY_SESSION_DELTA_H
#define FERRY_SESSION_DELTA_H

#include <stddef.h>
#include <stdint.h>

#include "session/conn.h"
#include "fs/afile.h"
#include "session/basis.h"
#include "session/xfer.h"

struct progress;

/* Files smaller than this go whole: a signature would cost more than it saves. */
#define DELTA_MIN_FILE (64u << 10)
/* The most signature blocks a sender holds (12 bytes each: 96 MiB, a 1 TiB
 * basis at the largest block); a receiver asks bigger files whole. */
#define DELTA_MAX_BLOCKS (1u << 23)

/* Block size for a basis of `size` bytes: about its square root, as rsync,
 * a multiple of 64, within DELTA_MIN_BLOCK .. DELTA_MAX_BLOCK. */
uint32_t delta_block_size(uint64_t size);

/* Two-level signatures (PROTOCOL.md 4.3): a basis of at least
 * DELTA_TWO_LEVEL_BLOCKS blocks first sends one entry per group of blocks;
 * the sender scans with those, asks (REFINE) for the blocks of the groups it
 * did not find, and scans what is left with them. Below that size the round
 * trip costs more than the signature saves (4,096 blocks are 48 KiB of
 * signature: 20 ms at 20 Mbit, half a 40 ms round trip). Returns the group
 * (blocks per coarse entry), or 0 for one level. */
#define DELTA_TWO_LEVEL_BLOCKS 4096u
#define DELTA_GROUP 16u
uint32_t delta_group(uint32_t block, uint32_t nblocks);

/* The 32-bit rolling sum of a block (sums of unsigned bytes, mod 2^16 each
 * half), so that both ends agree whatever the CPU's char signedness. */
struct roll {
	uint32_t a, b, len;
};
void roll_init(struct roll *r, const uint8_t *p, uint32_t len);
static inline void roll_rotate(struct roll *r, uint8_t out, uint8_t in)
{
	r->a += (uint32_t)in - (uint32_t)out;
	r->b += r->a - r->len * (uint32_t)out;
}
static inline uint32_t roll_sum(const struct roll *r)
{
	return (r->a & 0xffffu) | (r->b << 16);
}
uint64_t delta_strong(const uint8_t *p, size_t len);

/* Receiver: WANT_DELTA for entry `index`, then the signature of the basis
 * (laid out by basis_layout_blocks: the old version's whole blocks, then the
 * partial's) in SIG records, read as it goes; with group (delta_group) one
 * entry per group of that many blocks. */
int delta_sig_send(struct conn *c, const struct basis *b, uint32_t index, uint32_t group);
/* Receiver: REFINE's answer, the fine entries of groups first .. first +
 * count - 1 (the last one may be short: the blocks after the whole groups). */
int delta_refine_send(struct conn *c, const struct basis *b, uint32_t index, uint32_t group,
		      uint32_t first, uint32_t count);

/* Sender of a pull (the box), the inverted flow: FILE_SIG and the signature
 * of its new file (size bytes), and that file's whole xxh3-128 from the same
 * read (what FILE_END will carry). */
int delta_file_sig_send(struct conn *c, int fd, uint32_t index, uint64_t size,
			uint8_t hash[MSG_HASH_LEN]);

/* Sender: a signature as it arrives. */
struct delta_coarse_match {
	uint64_t pos;              /* in the new file */
	uint32_t group;
};
struct delta_sig {
	uint32_t index, block;
	uint64_t size;
	uint32_t n, have;          /* whole blocks announced; entries received (coarse ones
				      while two-level and not refining) */
	uint32_t *weak;            /* owned, n each */
	uint64_t *strong;
	/* two levels (group > 1): the coarse entries, what pass one found and
	 * which fine entries came */
	uint32_t group, ng;        /* blocks per group, whole groups */
	uint32_t *cweak;           /* owned, ng each */
	uint64_t *cstrong;
	uint8_t *asked;            /* owned: a bit per group (ng + 1), REFINE sent */
	uint8_t *known;            /* owned: a bit per block, its fine entry came */
	int refining;
	uint32_t fine_next, fine_left;
	struct delta_coarse_match *cm;   /* owned, in file order */
	size_t ncm, cmcap;
};
int delta_sig_init(struct delta_sig *s, const struct m_want_delta *w);
/* Appends one SIG; -EBADMSG unless it is the next part of this signature
 * (or, refining, a run of fine entries that were asked and not sent yet). */
int delta_sig_add(struct delta_sig *s, const struct m_sig *m);
/* Everything the first scan needs is here (the whole one-level signature,
 * or all coarse entries); delta_sig_ready: and every fine entry asked. */
int delta_sig_coarse_done(const struct delta_sig *s);
int delta_sig_ready(const struct delta_sig *s);
void delta_sig_free(struct delta_sig *s);

/* Sender, two levels: scans fd with the coarse entries, remembers where
 * they are, and sends REFINE for every group it did not find (and the short
 * one after the whole groups), then REFINE_END. */
int delta_refine(struct conn *c, int fd, struct delta_sig *s);

/* Sender: the open regular file fd as entry `index` against a complete sig:
 * FILE_BEGIN, DATA and COPY in file order, FILE_END with the whole-file hash.
 * Read errors end in a FILE_END the receiver discards; <0 only when the
 * connection fails. bytes_matched gets what COPY saved sending. */
int delta_send(struct conn *c, int fd, uint32_t index, const char *path,
	       const struct delta_sig *sig, struct xfer_stats *st, struct progress *pg);

/* --- the inverted flow, for a pull (PROTOCOL.md 4.3) --- */

#define DELTA_NO_MATCH UINT64_MAX

/* Receiver (the PC): where in its basis (laid out by basis_layout_bytes:
 * the old version, then the partial) each block of the sender's signature s
 * is: match[k] a virtual offset, or DELTA_NO_MATCH. */
int delta_find_blocks(const struct basis *b, const struct delta_sig *s, uint64_t *match);

/* Receiver: how the file is put together: a block from the basis where
 * match[k] says, the rest (and the tail) from the stream's DATA. */
struct delta_plan {
	const struct basis *b;
	uint32_t block, n;
	const uint64_t *match;     /* n offsets */
};
int delta_recv_assembled(struct conn *c, const struct m_file_begin *fb, struct afile *f,
			 const struct delta_plan *pl, struct xfer_stats *st, struct progress *pg,
			 const char **why);

/* Sender (the box): the blocks the receiver NEEDed, then the tail, as DATA;
 * FILE_END with the hash its signature pass made. bits: one per block. */
struct delta_need {
	const char *path;
	uint64_t size;
	uint32_t block, n;
	const uint8_t *bits;
	const uint8_t *hash;
	int damaged;            /* the hash differs from the one stored with the file */
};
int delta_send_needed(struct conn *c, int fd, uint32_t index, const struct delta_need *d,
		      struct xfer_stats *st, struct progress *pg);

#endif
