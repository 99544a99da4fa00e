/* SPDX-License-Identifier: MIT */
/* AEAD backends: identical bytes from libsodium and OpenSSL, the Noise
 * nonce encodings, Rekey(), HMAC-BLAKE2b against an independent HMAC, and a
 * rough speed figure per backend and cipher. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <sodium.h>
#ifdef FERRY_HAVE_OPENSSL
#include <openssl/evp.h>
#include <openssl/hmac.h>
#endif

#include "channel/aead.h"
#include "channel/noise.h"

static void test_nonce_encoding(void **state)
{
	uint8_t n[12];
	const uint8_t le[12] = { 0, 0, 0, 0, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01 };
	const uint8_t be[12] = { 0, 0, 0, 0, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08 };

	(void)state;
	aead_nonce(CIPHER_CHACHAPOLY, 0x0102030405060708ull, n);
	assert_memory_equal(n, le, 12);
	aead_nonce(CIPHER_AESGCM, 0x0102030405060708ull, n);
	assert_memory_equal(n, be, 12);
}

/* Against libsodium's one-shot API with a nonce built by hand. */
static void test_chacha_reference(void **state)
{
	uint8_t key[32], ad[7] = "abcdefg", msg[100], buf[100], tag[16], ref[116], nonce[12] = {0};
	unsigned long long clen;
	struct aead a;

	(void)state;
	randombytes_buf(key, sizeof key);
	randombytes_buf(msg, sizeof msg);
	nonce[4] = 0x2a;   /* n = 42, little-endian after 4 zero bytes */
	crypto_aead_chacha20poly1305_ietf_encrypt(ref, &clen, msg, sizeof msg, ad, sizeof ad, NULL, nonce, key);
	assert_int_equal(aead_init_backend(&a, AEAD_SODIUM, CIPHER_CHACHAPOLY, key), 0);
	memcpy(buf, msg, sizeof msg);
	assert_int_equal(aead_encrypt(&a, 42, ad, sizeof ad, buf, sizeof buf, tag), 0);
	assert_memory_equal(buf, ref, sizeof buf);
	assert_memory_equal(tag, ref + 100, 16);
	aead_wipe(&a);
}

static void cross_check(enum cipher_id cipher)
{
#ifdef FERRY_HAVE_OPENSSL
	static uint8_t a_buf[70000], b_buf[70000], c_buf[70000];
	static const size_t lens[] = { 0, 1, 15, 16, 17, 255, AEAD_SMALL - 1, AEAD_SMALL,
				       AEAD_SMALL + 1, 4096, 65519 };
	uint8_t key[32], ad[64], ta[16], tb[16];
	struct aead a, b;

	if (!aead_usable(AEAD_SODIUM, cipher)) {
		skip();
		return;
	}
	randombytes_buf(key, sizeof key);
	assert_int_equal(aead_init_backend(&a, AEAD_SODIUM, cipher, key), 0);
	assert_int_equal(aead_init_backend(&b, AEAD_OPENSSL, cipher, key), 0);
	/* An OpenSSL key hands small messages to libsodium: check it does, then
	 * run every size through OpenSSL alone, then through the mix. */
	assert_int_equal(b.small_sodium, 1);
	for (size_t k = 0; k < 2 * sizeof lens / sizeof lens[0]; k++) {
		size_t i = k % (sizeof lens / sizeof lens[0]);
		b.small_sodium = k >= sizeof lens / sizeof lens[0];
		uint64_t n = i == 3 ? UINT64_MAX - 1 : 0x0102030405060708ull * i;
		size_t adlen = i * 7 % sizeof ad;
		randombytes_buf(ad, sizeof ad);
		randombytes_buf(a_buf, lens[i]);
		memcpy(b_buf, a_buf, lens[i]);
		assert_int_equal(aead_encrypt(&a, n, ad, adlen, a_buf, lens[i], ta), 0);
		assert_int_equal(aead_encrypt(&b, n, ad, adlen, b_buf, lens[i], tb), 0);
		assert_memory_equal(a_buf, b_buf, lens[i]);
		assert_memory_equal(ta, tb, 16);
		/* Each decrypts the other's output; a flipped bit is refused by both. */
		assert_int_equal(aead_decrypt(&b, n, ad, adlen, a_buf, lens[i], ta), 0);
		/* A failed in-place decryption may wipe the buffer (libsodium
		 * does), so the good attempt works on a fresh copy. */
		memcpy(c_buf, b_buf, lens[i]);
		tb[5] ^= 1;
		assert_int_equal(aead_decrypt(&a, n, ad, adlen, c_buf, lens[i], tb), -EBADMSG);
		tb[5] ^= 1;
		assert_int_equal(aead_decrypt(&a, n, ad, adlen, b_buf, lens[i], tb), 0);
		assert_memory_equal(a_buf, b_buf, lens[i]);
		/* Wrong nonce: refused. */
		assert_int_equal(aead_encrypt(&a, n, ad, adlen, a_buf, lens[i], ta), 0);
		assert_int_equal(aead_decrypt(&b, n + 1, ad, adlen, a_buf, lens[i], ta), -EBADMSG);
	}
	aead_wipe(&a);
	aead_wipe(&b);
#else
	(void)cipher;
	skip();
#endif
}

static void test_cross_chacha(void **state)
{
	(void)state;
	cross_check(CIPHER_CHACHAPOLY);
}

static void test_cross_aesgcm(void **state)
{
	(void)state;
	cross_check(CIPHER_AESGCM);
}

/* Rekey(): k' = first 32 bytes of ENCRYPT(k, 2^64-1, "", zeros); n unchanged. */
static void test_rekey(void **state)
{
	uint8_t key[32], zeros[32] = {0}, tag[16], m1[10] = "0123456789", m2[10], t2[16];
	struct noise_cs cs = {0}, ref = {0};
	struct aead a;

	(void)state;
	for (int c = CIPHER_CHACHAPOLY; c <= CIPHER_AESGCM; c++) {
		enum aead_backend b = aead_default_backend();
		if (!aead_usable(b, (enum cipher_id)c))
			continue;
		randombytes_buf(key, sizeof key);
		assert_int_equal(noise_cs_init(&cs, b, (enum cipher_id)c, key), 0);
		cs.n = 77;
		assert_int_equal(noise_cs_rekey(&cs), 0);
		assert_int_equal(cs.n, 77);
		assert_int_equal(aead_init_backend(&a, b, (enum cipher_id)c, key), 0);
		memset(zeros, 0, sizeof zeros);
		assert_int_equal(aead_encrypt(&a, UINT64_MAX, NULL, 0, zeros, 32, tag), 0);
		assert_memory_equal(cs.k, zeros, 32);
		assert_int_equal(noise_cs_init(&ref, b, (enum cipher_id)c, zeros), 0);
		ref.n = 77;
		memcpy(m2, m1, sizeof m1);
		assert_int_equal(noise_cs_encrypt(&cs, NULL, 0, m1, sizeof m1, tag), 0);
		assert_int_equal(noise_cs_encrypt(&ref, NULL, 0, m2, sizeof m2, t2), 0);
		assert_memory_equal(m1, m2, sizeof m1);
		assert_memory_equal(tag, t2, 16);
		aead_wipe(&a);
		noise_cs_wipe(&cs);
		noise_cs_wipe(&ref);
	}
}

static void test_hmac(void **state)
{
#ifdef FERRY_HAVE_OPENSSL
	uint8_t key[200], data[300], ours[64], theirs[64];
	unsigned len = 0;
	static const size_t klens[] = { 0, 32, 64, 128, 129, 200 };

	(void)state;
	randombytes_buf(key, sizeof key);
	randombytes_buf(data, sizeof data);
	for (size_t i = 0; i < sizeof klens / sizeof klens[0]; i++) {
		noise_hmac(key, klens[i], data, 37 * i, ours);
		assert_non_null(HMAC(EVP_blake2b512(), key, (int)klens[i], data, 37 * i, theirs, &len));
		assert_int_equal(len, 64);
		assert_memory_equal(ours, theirs, 64);
	}
#else
	(void)state;
	skip();
#endif
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Not a pass/fail test: prints MB/s for 64 KiB records, ~0.2 s each. */
static void test_speed(void **state)
{
	static uint8_t buf[65519];
	uint8_t key[32] = {1}, tag[16];
	struct aead a;

	(void)state;
	for (int b = AEAD_SODIUM; b <= AEAD_OPENSSL; b++) {
#ifndef FERRY_HAVE_OPENSSL
		if (b == AEAD_OPENSSL)
			break;
#endif
		for (int c = CIPHER_CHACHAPOLY; c <= CIPHER_AESGCM; c++) {
			if (!aead_usable((enum aead_backend)b, (enum cipher_id)c))
				continue;
			assert_int_equal(aead_init_backend(&a, (enum aead_backend)b, (enum cipher_id)c, key), 0);
			double t0 = now_s(), t;
			uint64_t n = 0;
			do {
				for (int i = 0; i < 16; i++)
					assert_int_equal(aead_encrypt(&a, n++, NULL, 0, buf, sizeof buf, tag), 0);
				t = now_s() - t0;
			} while (t < 0.2);
			fprintf(stderr, "  %-9s %-10s %7.0f MB/s (64 KiB records)\n",
				b == AEAD_OPENSSL ? "openssl" : "libsodium", chan_cipher_name((enum cipher_id)c),
				(double)n * sizeof buf / t / 1e6);
			aead_wipe(&a);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_nonce_encoding),
		cmocka_unit_test(test_chacha_reference),
		cmocka_unit_test(test_cross_chacha),
		cmocka_unit_test(test_cross_aesgcm),
		cmocka_unit_test(test_rekey),
		cmocka_unit_test(test_hmac),
		cmocka_unit_test(test_speed),
	};
	if (crypto_ready() < 0)
		return 1;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
