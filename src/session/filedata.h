/* SPDX-License-Identifier: MIT */
/* One file's data on the wire: FILE_BEGIN, then DATA (followed by the bytes,
 * by the channel's protection level) and HOLE messages, then FILE_END with
 * the whole-file xxh3-128 the receiver checks before the rename. */
#ifndef FERRY_SESSION_FILEDATA_H
#define FERRY_SESSION_FILEDATA_H

#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include "fs/afile.h"
#include "session/basis.h"
#include "session/conn.h"
#include "session/xfer.h"

struct progress;

/* Sends the open regular file fd as entry `index`; `known` is the caller's
 * fstat of fd (NULL: it is taken here). Read errors become a FILE_END the
 * receiver discards (counted in st); only a failing connection is returned
 * as an error. */
int filedata_send(struct conn *c, int fd, const struct stat *known, uint32_t index,
		  const char *path, struct xfer_stats *st, struct progress *pg);
/* FILE_BEGIN + FILE_END(READ_ERROR) for a file that could not be opened. */
int filedata_send_failed(struct conn *c, uint32_t index);
/* The same for a file that could not be opened because of `err` (-errno):
 * FILE_VANISHED for -ENOENT when the receiver knows it (flags2). */
int filedata_send_unopened(struct conn *c, uint32_t index, int err, uint32_t flags2);
/* The pieces, for the delta sender: FILE_BEGIN of the file as sb says (NULL:
 * a file that could not be read) and FILE_END (hash NULL = none). */
int filedata_send_begin(struct conn *c, uint32_t index, int fd, const struct stat *sb);
int filedata_send_end(struct conn *c, uint8_t status, const uint8_t *hash);
/* A snapshot module's sender (c->check_stored): 1 and want = the hash fd's
 * file was stored with, or 0 (no record, or not asked). */
int filedata_stored(const struct conn *c, int fd, uint8_t want[MSG_HASH_LEN]);
/* What the receiver says of a FILE_END that is not FILE_OK. */
const char *filedata_end_reason(uint8_t status, const char *otherwise);
/* What the sender logs of a FILE_END that is not FILE_OK ("file shrank", ...). */
const char *filedata_status_word(uint8_t status);
/* The canonical (big-endian) bytes of an xxh3-128 state. */
struct XXH3_state_s;
void filedata_hash_out(struct XXH3_state_s *h, uint8_t out[MSG_HASH_LEN]);

/* Receives the data of a file announced by `fb` into f (which may be NULL to
 * discard it). Returns 1 when the data is complete and the hash matches, 0
 * when the file must be discarded (*why says why), <0 when the session fails. */
/* With a basis (a delta: laid out by blocks, as its signature said), COPY
 * messages are taken from it, and the whole file is verified at every
 * protection level. */
int filedata_recv(struct conn *c, const struct m_file_begin *fb, struct afile *f,
		  const struct basis *b, struct xfer_stats *st, struct progress *pg,
		  const char **why);

/* How much of the `left` bytes an extent still has one receive may ask for:
 * left itself, or SIZE_MAX where size_t cannot hold it. A 32-bit receiver
 * that cast the u64 asked for left mod 2^32: with 2^32 + k left (k smaller
 * than a record, as it is at some point of every extent of 4 GiB or more) it
 * refused the next record, or asked for 0 bytes (issue 9, F6). */
size_t filedata_piece(uint64_t left);

/* xxh3-128 of a whole file, canonical (big-endian) bytes; c (may be NULL)
 * gets its keepalives while it reads (conn_keepalive). */
int filedata_hash_fd(int fd, uint8_t out[MSG_HASH_LEN], struct conn *c);

#endif
