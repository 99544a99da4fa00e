/* SPDX-License-Identifier: MIT */
/* Noise test vectors (cacophony format, tests/vectors/noise.json): every
 * Noise_XX_25519_{ChaChaPoly,AESGCM}_BLAKE2b vector must reproduce byte for
 * byte, with each AEAD backend. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "channel/noise.h"

#define MAX_MSGS 16
#define MAX_HEX 1024

struct vector {
	char name[64];
	uint8_t prologue[256], init_static[32], init_eph[32], resp_static[32], resp_eph[32], hash[64];
	size_t prologue_len;
	size_t nmsgs;
	uint8_t payload[MAX_MSGS][MAX_HEX / 2], ct[MAX_MSGS][MAX_HEX / 2];
	size_t payload_len[MAX_MSGS], ct_len[MAX_MSGS];
};

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	assert_non_null(f);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The string value after "key": in [p, end), copied out; NULL if absent.
 * The file only holds plain ASCII strings, no escapes. */
static const char *json_str(const char *p, const char *end, const char *key, char *out, size_t cap)
{
	char pat[64];
	const char *k, *q, *e;

	snprintf(pat, sizeof pat, "\"%s\"", key);
	k = strstr(p, pat);
	if (!k || k >= end)
		return NULL;
	q = strchr(k + strlen(pat), '"');
	assert_non_null(q);
	e = strchr(q + 1, '"');
	assert_non_null(e);
	assert_true((size_t)(e - q - 1) < cap);
	memcpy(out, q + 1, (size_t)(e - q - 1));
	out[e - q - 1] = '\0';
	return e + 1;
}

static size_t hex(const char *p, const char *end, const char *key, uint8_t *out, size_t cap)
{
	char s[MAX_HEX + 1];
	size_t n = 0;

	assert_non_null(json_str(p, end, key, s, sizeof s));
	assert_int_equal(sodium_hex2bin(out, cap, s, strlen(s), NULL, &n, NULL), 0);
	return n;
}

/* Fills v from the vector object starting at p (up to end). */
static void parse_vector(const char *p, const char *end, struct vector *v)
{
	const char *m;

	memset(v, 0, sizeof *v);
	assert_non_null(json_str(p, end, "protocol_name", v->name, sizeof v->name));
	if (strncmp(v->name, "Noise_XX_25519_", 15) != 0)
		return;   /* other patterns lack some of the keys below */
	v->prologue_len = hex(p, end, "init_prologue", v->prologue, sizeof v->prologue);
	assert_int_equal(hex(p, end, "init_static", v->init_static, 32), 32);
	assert_int_equal(hex(p, end, "init_ephemeral", v->init_eph, 32), 32);
	assert_int_equal(hex(p, end, "resp_static", v->resp_static, 32), 32);
	assert_int_equal(hex(p, end, "resp_ephemeral", v->resp_eph, 32), 32);
	hex(p, end, "handshake_hash", v->hash, 64);   /* 32 bytes for SHA256 suites */
	m = strstr(p, "\"messages\"");
	assert_true(m && m < end);
	while ((m = strstr(m, "\"payload\"")) && m < end) {
		assert_true(v->nmsgs < MAX_MSGS);
		v->payload_len[v->nmsgs] = hex(m, end, "payload", v->payload[v->nmsgs], MAX_HEX / 2);
		v->ct_len[v->nmsgs] = hex(m, end, "ciphertext", v->ct[v->nmsgs], MAX_HEX / 2);
		v->nmsgs++;
		m++;
	}
}

static void keypair_from(struct keypair *kp, const uint8_t priv[32])
{
	memcpy(kp->priv, priv, 32);
	crypto_scalarmult_base(kp->pub, kp->priv);
}

static void run_vector(const struct vector *v, enum cipher_id cipher, enum aead_backend backend)
{
	struct noise_hs hi, hr;
	struct noise_cs i1, i2, r1, r2;
	struct keypair is, rs;
	uint8_t buf[MAX_HEX], hash_i[64], hash_r[64];
	const uint8_t *pl;
	size_t len, plen;

	keypair_from(&is, v->init_static);
	keypair_from(&rs, v->resp_static);
	assert_int_equal(noise_hs_init(&hi, backend, cipher, 1, v->prologue, v->prologue_len, &is, v->init_eph), 0);
	assert_int_equal(noise_hs_init(&hr, backend, cipher, 0, v->prologue, v->prologue_len, &rs, v->resp_eph), 0);
	assert_true(v->nmsgs >= 3);
	for (size_t i = 0; i < 3; i++) {
		struct noise_hs *w = i % 2 ? &hr : &hi, *r = i % 2 ? &hi : &hr;
		assert_int_equal(noise_hs_write(w, v->payload[i], v->payload_len[i], buf, sizeof buf, &len), 0);
		assert_int_equal(len, v->ct_len[i]);
		assert_memory_equal(buf, v->ct[i], len);
		assert_int_equal(noise_hs_read(r, buf, len, &pl, &plen), 0);
		assert_int_equal(plen, v->payload_len[i]);
		assert_memory_equal(pl, v->payload[i], plen);
	}
	memset(&i1, 0, sizeof i1); memset(&i2, 0, sizeof i2);
	memset(&r1, 0, sizeof r1); memset(&r2, 0, sizeof r2);
	assert_int_equal(noise_hs_split(&hi, &i1, &i2, hash_i), 0);
	assert_int_equal(noise_hs_split(&hr, &r1, &r2, hash_r), 0);
	assert_memory_equal(hash_i, v->hash, 64);
	assert_memory_equal(hash_r, v->hash, 64);
	assert_memory_equal(hi.rs, rs.pub, 32);
	assert_memory_equal(hr.rs, is.pub, 32);
	/* Transport: initiator sends with c1, responder with c2, alternating. */
	for (size_t i = 3; i < v->nmsgs; i++) {
		struct noise_cs *tx = i % 2 ? &r2 : &i1, *rx = i % 2 ? &i2 : &r1;
		size_t n = v->payload_len[i];
		memcpy(buf, v->payload[i], n);
		assert_int_equal(noise_cs_encrypt(tx, NULL, 0, buf, n, buf + n), 0);
		assert_int_equal(n + 16, v->ct_len[i]);
		assert_memory_equal(buf, v->ct[i], n + 16);
		assert_int_equal(noise_cs_decrypt(rx, NULL, 0, buf, n, buf + n), 0);
		assert_memory_equal(buf, v->payload[i], n);
	}
	noise_hs_wipe(&hi); noise_hs_wipe(&hr);
	noise_cs_wipe(&i1); noise_cs_wipe(&i2); noise_cs_wipe(&r1); noise_cs_wipe(&r2);
}

static void run_all(enum aead_backend backend)
{
	char *json = slurp(FERRY_VECTORS_DIR "/noise.json");
	const char *p = json, *next;
	struct vector *v = malloc(sizeof *v);
	int checked = 0;

	assert_non_null(v);
	while ((p = strstr(p, "\"protocol_name\""))) {
		next = strstr(p + 1, "\"protocol_name\"");
		parse_vector(p, next ? next : p + strlen(p), v);
		enum cipher_id c;
		if (strcmp(v->name, "Noise_XX_25519_ChaChaPoly_BLAKE2b") == 0)
			c = CIPHER_CHACHAPOLY;
		else if (strcmp(v->name, "Noise_XX_25519_AESGCM_BLAKE2b") == 0)
			c = CIPHER_AESGCM;
		else
			goto skip;
		if (!aead_usable(backend, c)) {
			fprintf(stderr, "  (skipping %s: not available with this backend here)\n", v->name);
			goto skip;
		}
		run_vector(v, c, backend);
		checked++;
skip:
		p++;
	}
	fprintf(stderr, "  %d XX vectors checked with %s\n", checked,
		backend == AEAD_OPENSSL ? "openssl" : "libsodium");
	assert_true(checked > 0);
	free(v);
	free(json);
}

static void test_vectors_sodium(void **state)
{
	(void)state;
	run_all(AEAD_SODIUM);
}

static void test_vectors_openssl(void **state)
{
	(void)state;
#ifdef FERRY_HAVE_OPENSSL
	run_all(AEAD_OPENSSL);
#else
	skip();
#endif
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vectors_sodium),
		cmocka_unit_test(test_vectors_openssl),
	};
	if (crypto_ready() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
