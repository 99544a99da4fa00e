/* SPDX-License-Identifier: MIT */
/* Internal: the FERRY/1 opening lines that negotiate the Noise protocol.
 * Pure functions on memory buffers, so the fuzzers can call them. */
#ifndef FERRY_CHANNEL_OPENING_H
#define FERRY_CHANNEL_OPENING_H

#include <stddef.h>

#include "channel/channel.h"

#define OPENING_MAX 255u          /* bytes, the '\n' included */
#define OPENING_MAGIC "FERRY/1 "

/* Client line for the offered ciphers, AESGCM first: length written to out
 * (no NUL counted), 0 if nothing is offered. */
size_t opening_client_line(unsigned offered, char out[OPENING_MAX + 1]);
size_t opening_server_line(enum cipher_id chosen, char out[OPENING_MAX + 1]);
/* "FERRY/1 ERROR <reason>\n" with the reason made printable and cut to fit. */
size_t opening_error_line(const char *reason, char out[OPENING_MAX + 1]);

/* A whole client line (its '\n' included). *offered gets the mask of the
 * names we know; unknown names are skipped (other implementations may offer
 * more). 0, or -EPROTO with err_msg() set. */
int opening_parse_client(const char *line, size_t len, unsigned *offered);
/* A whole server line. 0 with *chosen; -ECONNREFUSED for "ERROR <reason>"
 * ("server refused: <reason>"); -EPROTO if malformed or not one of `offered`. */
int opening_parse_server(const char *line, size_t len, unsigned offered, enum cipher_id *chosen);
/* The server's choice: AESGCM when offered, accepted and hw_aes, else
 * ChaChaPoly if common, else AESGCM if common and usable; -1 if none. */
int opening_choose(unsigned offered, unsigned accepted, int hw_aes);

/* Line accumulator for a reader that gets one byte at a time: 1 when the
 * line is complete, 0 for more, -EPROTO past OPENING_MAX bytes. */
int opening_feed(char *line, size_t *len, char ch);

#endif
