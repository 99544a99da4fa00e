/* SPDX-License-Identifier: MIT */
/* FERRY/1 opening lines: building, parsing, choosing the cipher. */
#include "channel/opening.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "channel/noise.h"
#include "util/err.h"

#define MAGIC_LEN (sizeof OPENING_MAGIC - 1)

size_t opening_client_line(unsigned offered, char out[OPENING_MAX + 1])
{
	/* AESGCM first: the order states the client's preference. */
	static const enum cipher_id order[] = { CIPHER_AESGCM, CIPHER_CHACHAPOLY };
	size_t n = 0;

	memcpy(out, OPENING_MAGIC, MAGIC_LEN);
	n = MAGIC_LEN - 1;   /* each name brings its leading space */
	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		if (!(offered & (1u << order[i])))
			continue;
		n += (size_t)snprintf(out + n, OPENING_MAX + 1 - n, " %s", noise_protocol_name(order[i]));
	}
	if (n == MAGIC_LEN - 1)
		return 0;
	out[n++] = '\n';
	out[n] = '\0';
	return n;
}

size_t opening_server_line(enum cipher_id chosen, char out[OPENING_MAX + 1])
{
	return (size_t)snprintf(out, OPENING_MAX + 1, "%s%s\n", OPENING_MAGIC, noise_protocol_name(chosen));
}

size_t opening_error_line(const char *reason, char out[OPENING_MAX + 1])
{
	size_t n = (size_t)snprintf(out, OPENING_MAX + 1, "%sERROR ", OPENING_MAGIC);

	for (; reason && *reason && n < OPENING_MAX - 1; reason++)
		out[n++] = (*reason >= 0x20 && *reason < 0x7f) ? *reason : '?';
	if (n == MAGIC_LEN + 6)
		out[n++] = '?';   /* a reason is never empty on the wire */
	out[n++] = '\n';
	out[n] = '\0';
	return n;
}

static int name_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
	       c == '_' || c == '-' || c == '.' || c == '/' || c == '+';
}

static int name_to_cipher(const char *name, size_t len)
{
	for (int id = CIPHER_CHACHAPOLY; id <= CIPHER_AESGCM; id++) {
		const char *known = noise_protocol_name((enum cipher_id)id);
		if (strlen(known) == len && memcmp(known, name, len) == 0)
			return id;
	}
	return -1;
}

/* Common checks: a bounded line that starts with the magic and ends in one '\n'.
 * Returns the length of the text after the magic, without the '\n'. */
static int check_frame(const char *line, size_t len, size_t *body)
{
	if (len < MAGIC_LEN + 1 || len > OPENING_MAX || line[len - 1] != '\n' ||
	    memcmp(line, OPENING_MAGIC, MAGIC_LEN) != 0)
		return -EPROTO;
	*body = len - MAGIC_LEN - 1;
	return 0;
}

int opening_parse_client(const char *line, size_t len, unsigned *offered)
{
	const char *bad = "handshake: client's opening line is malformed";
	size_t body, i, start;
	int id;

	*offered = 0;
	if (len >= 6 && memcmp(line, "FERRY/", 6) == 0 && (len < MAGIC_LEN || memcmp(line, OPENING_MAGIC, MAGIC_LEN) != 0))
		return err_set(-EPROTO, "handshake: client speaks another protocol version");
	if (check_frame(line, len, &body) < 0 || body == 0)
		return err_set(-EPROTO, "%s", bad);
	line += MAGIC_LEN;
	/* Names separated by single spaces; no empty names. */
	for (i = 0, start = 0; i <= body; i++) {
		if (i < body && name_char(line[i]))
			continue;
		if (i < body && line[i] != ' ')
			return err_set(-EPROTO, "%s", bad);
		if (i == start)
			return err_set(-EPROTO, "%s", bad);
		if ((id = name_to_cipher(line + start, i - start)) >= 0)
			*offered |= 1u << id;
		start = i + 1;
	}
	return 0;
}

int opening_parse_server(const char *line, size_t len, unsigned offered, enum cipher_id *chosen)
{
	const char *bad = "handshake: server's opening line is malformed";
	char reason[OPENING_MAX + 1];
	size_t body, n = 0;
	int id;

	if (check_frame(line, len, &body) < 0 || body == 0)
		return err_set(-EPROTO, "%s", bad);
	line += MAGIC_LEN;
	if (body >= 6 && memcmp(line, "ERROR ", 6) == 0) {
		for (size_t i = 6; i < body; i++)
			reason[n++] = (line[i] >= 0x20 && line[i] < 0x7f) ? line[i] : '?';
		reason[n] = '\0';
		return err_set(-ECONNREFUSED, "server refused: %s", reason);
	}
	for (size_t i = 0; i < body; i++)
		if (!name_char(line[i]))
			return err_set(-EPROTO, "%s", bad);
	id = name_to_cipher(line, body);
	if (id < 0 || !(offered & (1u << id)))
		return err_set(-EPROTO, "handshake: server chose a protocol we did not offer (%.*s)",
			       (int)body, line);
	*chosen = (enum cipher_id)id;
	return 0;
}

int opening_choose(unsigned offered, unsigned accepted, int hw_aes)
{
	unsigned common = offered & accepted;

	if ((common & (1u << CIPHER_AESGCM)) && hw_aes)
		return CIPHER_AESGCM;
	if (common & (1u << CIPHER_CHACHAPOLY))
		return CIPHER_CHACHAPOLY;
	/* A client that offers only AESGCM still gets it where the backend has
	 * it in software: slower, but better than refusing. */
	if (common & (1u << CIPHER_AESGCM))
		return CIPHER_AESGCM;
	return -1;
}

int opening_feed(char *line, size_t *len, char ch)
{
	if (*len >= OPENING_MAX)
		return -EPROTO;
	line[(*len)++] = ch;
	line[*len] = '\0';
	return ch == '\n';
}
