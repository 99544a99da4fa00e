/* SPDX-License-Identifier: MIT */
/* X25519 identities: key files, the base64 text form, fingerprints, and the
 * authorized-keys / known-hosts files (ssh's habits, one key per line). */
#ifndef FERRY_CHANNEL_KEYS_H
#define FERRY_CHANNEL_KEYS_H

#include <stddef.h>
#include <stdint.h>

#define KEY_LEN 32
#define KEY_B64_LEN 44          /* standard base64 of 32 bytes, with one '=' */
#define KEY_FPR_LEN 64          /* buffer size for key_fingerprint() */

struct keypair {
	uint8_t pub[KEY_LEN];
	uint8_t priv[KEY_LEN];
};

/* A fresh X25519 key pair from libsodium's RNG. */
int keys_generate(struct keypair *kp);
/* Wipes the private half (sodium_memzero). */
void keys_wipe(struct keypair *kp);

/* Writes the private key to `path` (created 0600, refused if it exists unless
 * overwrite) and the public line "BASE64 comment\n" to `path`.pub (0644).
 * Private file format: "FERRY PRIVATE KEY\n" then base64 of priv, then "\n". */
int keys_save(const char *path, const struct keypair *kp, const char *comment, int overwrite);
/* Loads a private key file written by keys_save and derives the public half.
 * Refused (-EPERM, with a clear message) when group- or world-readable. */
int keys_load(const char *path, struct keypair *kp);

/* base64 text form, NUL-terminated: out needs KEY_B64_LEN + 1 bytes. */
void key_to_base64(const uint8_t pub[KEY_LEN], char out[KEY_B64_LEN + 1]);
/* Parses exactly one base64 key (44 chars) at the start of s; 0 or -EINVAL. */
int key_from_base64(const char *s, size_t len, uint8_t pub[KEY_LEN]);
/* Short human form, "BLAKE2b:" + unpadded base64 of a 16-byte BLAKE2b of the key. */
void key_fingerprint(const uint8_t pub[KEY_LEN], char out[KEY_FPR_LEN]);

/* authorized-keys file: one "BASE64 [comment]" per line, '#' comments and blank
 * lines allowed. Returns 1 if `pub` is listed, 0 if not, <0 on error (a bad
 * line is an error naming file:line). */
int keys_authorized(const char *path, const uint8_t pub[KEY_LEN]);

/* Adds "BASE64 comment" to an authorized-keys file (ferry pair): the file
 * is written again under a temporary name, synced and renamed, with its
 * mode and owner, so a crash leaves the old list or the new one. Returns 0
 * when added, 1 when the key was listed already, <0 on error. */
int keys_authorize_add(const char *path, const uint8_t pub[KEY_LEN], const char *comment);

enum known_host { KNOWN_HOST_OK = 0, KNOWN_HOST_UNKNOWN = 1, KNOWN_HOST_CHANGED = 2 };
/* known-hosts file: one "HOST BASE64 [comment]" per line (HOST as the user
 * typed it, with ":PORT" when not the default port). A missing file means
 * UNKNOWN. Returns an enum known_host value or <0 on error. */
int known_hosts_check(const char *path, const char *host, const uint8_t pub[KEY_LEN]);
/* Appends "HOST BASE64\n", creating the file (0644) and its directory (0700). */
int known_hosts_add(const char *path, const char *host, const uint8_t pub[KEY_LEN]);
/* Removes every line for `host` (ssh-keygen -R): the file is rewritten under
 * a temporary name and renamed, so a crash leaves the old file or the new.
 * Returns how many lines were removed (0 if none or no file), or <0. */
int known_hosts_remove(const char *path, const char *host);

#endif
