/* SPDX-License-Identifier: MIT */
/* What a delta is built from on the receiver: the old version of the file
 * and the partial an interrupted transfer of it left (resume), read as one
 * sequence of bytes: the first `split` bytes from fd[0], the rest from fd[1].
 * A push signs whole blocks of both (split = the old version's whole
 * blocks); a pull rolls over each (split = the old version's size). A read
 * never spans the two. */
#ifndef FERRY_SESSION_BASIS_H
#define FERRY_SESSION_BASIS_H

#include <stddef.h>
#include <stdint.h>

struct basis {
	int fd[2];              /* the old version, the partial; -1 = none; owned */
	uint64_t size[2];       /* their sizes when opened (0 = none); the layout's */
	uint64_t split;         /* virtual bytes taken from fd[0] */
	uint32_t block;         /* a push's signature block, else 0 */
	uint32_t nblocks;       /* a push: whole blocks signed, both together */
};

void basis_init(struct basis *b);
/* 1 if there is anything to build from. */
int basis_any(const struct basis *b);
/* A push's layout for block size `block`: every whole block of fd[0], then
 * every whole block of fd[1]; returns the virtual size (nblocks * block). */
uint64_t basis_layout_blocks(struct basis *b, uint32_t block);
/* A pull's layout: fd[0] whole, then fd[1]. Returns the virtual size. */
uint64_t basis_layout_bytes(struct basis *b);
/* Exactly n bytes at virtual offset off; <0 if they are not there (the
 * basis shrank, or the range is past or across the pieces). */
int basis_read(const struct basis *b, uint8_t *buf, size_t n, uint64_t off);
/* 1 if both pieces still have the sizes they were opened with. */
int basis_unchanged(const struct basis *b);
void basis_close(struct basis *b);
/* Exactly n bytes of fd at off (pread until done); <0 if they are not there. */
int basis_pread_all(int fd, uint8_t *buf, size_t n, uint64_t off);

#endif
