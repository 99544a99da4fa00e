/* SPDX-License-Identifier: MIT */
/* CPace against the draft's own test vectors (draft-irtf-cfrg-cpace-21,
 * appendix B.3: ristretto255, SHA-512; the same in -19 and -20), its two
 * shares that must abort (B.3.11), a full run of both sides, and the
 * one-time code's reading. The draft has no vectors for the confirmation
 * tags; those are checked by agreement and by a wrong code failing. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "channel/pake.h"

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = strlen(h) / 2;
	for (size_t i = 0; i < n; i++) {
		unsigned v;
		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

static void assert_hex(const uint8_t *got, size_t n, const char *want)
{
	uint8_t w[256];
	assert_int_equal(unhex(want, w), n);
	assert_memory_equal(got, w, n);
}

/* B.3 inputs */
static const char PRS[] = "Password";
static const char CI_HEX[] = "0b415f696e69746961746f720b425f726573706f6e646572";
static const char SID_HEX[] = "7e4b4791d6a8ef019b936c79fb7f2c57";
static const char YA_HEX[] = "da3d23700a9e5699258aef94dc060dfda5ebb61f02a5ea77fad53f4ff0976d08";
static const char YB_HEX[] = "d2316b454718c35362d83d69df6320f38578ed5984651435e2949762d900b80d";

static void vectors_generator_string(void **state)
{
	uint8_t ci[64], sid[64], out[512];
	size_t cl = unhex(CI_HEX, ci), sl = unhex(SID_HEX, sid);
	(void)state;

	size_t n = pake_generator_string((const uint8_t *)PRS, 8, ci, cl, sid, sl, out, sizeof out);
	assert_int_equal(n, 170);
	assert_hex(out, n,
		   "11435061636552697374726574746f3235350850617373776f726464"
		   "0000000000000000000000000000000000000000000000000000000000000000"
		   "0000000000000000000000000000000000000000000000000000000000000000"
		   "0000000000000000000000000000000000000000000000000000000000000000"
		   "00000000180b415f696e69746961746f720b425f726573706f6e646572107e4b"
		   "4791d6a8ef019b936c79fb7f2c57");
	/* too small a buffer: 0, nothing claimed */
	assert_int_equal(pake_generator_string((const uint8_t *)PRS, 8, ci, cl, sid, sl, out, 169), 0);
}

static void vectors_shares_and_isk(void **state)
{
	uint8_t ci[64], sid[64], ya[32], yb[32];
	size_t cl = unhex(CI_HEX, ci), sl = unhex(SID_HEX, sid);
	struct pake a, b;
	(void)state;

	unhex(YA_HEX, ya);
	unhex(YB_HEX, yb);
	assert_int_equal(pake_start(&a, 1, (const uint8_t *)PRS, 8, ci, cl, sid, sl, ya), 0);
	assert_int_equal(pake_start(&b, 0, (const uint8_t *)PRS, 8, ci, cl, sid, sl, yb), 0);
	assert_hex(a.mine, 32, "d6bac480f2c386c394efc7c47adb9925dcd2630b64f240c50f8d0eec482b9157");
	assert_hex(b.mine, 32, "3ea7e0b19560d7c0b0f5734f63b955286dfa8232b5ebe63324e2d9e7433f7258");
	a.ad[0] = b.ad[0] = (const uint8_t *)"ADa";
	a.ad[1] = b.ad[1] = (const uint8_t *)"ADb";
	a.ad_len[0] = a.ad_len[1] = b.ad_len[0] = b.ad_len[1] = 3;
	assert_int_equal(pake_finish(&a, b.mine), 0);
	assert_int_equal(pake_finish(&b, a.mine), 0);
	static const char ISK_IR[] =
		"b69effbf61b51d56401c0f65601abe428de8206feaaf0e32198896dcae7b35cd"
		"2b38950a39dfd5d4a79164614c2984f7daa460b588c1e80c3fa2068af7900447";
	assert_hex(a.isk, 64, ISK_IR);
	assert_hex(b.isk, 64, ISK_IR);
	/* section 10.4's confirmation with HMAC-SHA512: each accepts the other's tag */
	uint8_t ta[PAKE_TAG_LEN], tb[PAKE_TAG_LEN];
	pake_tag(&a, ta);
	pake_tag(&b, tb);
	/* computed apart from this code with libsodium from the draft's recipe
	 * (mac_key = SHA-512("CPaceMac" || sid || ISK), HMAC-SHA512 of lv_cat(Y, AD)) */
	assert_hex(ta, 64, "30478d28d83ae3b214295e91f4a3eb62999a8ed94575075db4a7d3bc3e4d26f1"
			   "6c51adba12dc7771372637a46b5134e0937cddd7d820bfdd83be335e339eb57a");
	assert_hex(tb, 64, "e927a7da291676f8878caae9cb70407d2f14117e6f9ff9adcfda797c4bcf2bd2"
			   "fefd2ca3f2ddcce81b7386996c895b2f359010cc92069d5ff4ad49a977de79a6");
	assert_int_equal(pake_check(&b, ta), 0);
	assert_int_equal(pake_check(&a, tb), 0);
	/* a side's own tag is not the peer's */
	assert_int_equal(pake_check(&a, ta), -EACCES);
	pake_wipe(&a);
	pake_wipe(&b);
}

/* B.3.11: a share that does not decode, and the identity, abort. */
static void vectors_invalid_shares(void **state)
{
	static const char *bad[] = {
		"2b3c6b8c4f3800e7aef6864025b4ed79bd599117e427c41bd47d93d654b4a51c",
		"0000000000000000000000000000000000000000000000000000000000000000",
	};
	uint8_t y[32], sid[16] = { 1 };
	struct pake p;
	(void)state;

	unhex("7cd0e075fa7955ba52c02759a6c90dbbfc10e6d40aea8d283e407d88cf538a05", y);
	for (size_t i = 0; i < 2; i++) {
		uint8_t share[32];
		unhex(bad[i], share);
		assert_int_equal(pake_start(&p, 0, (const uint8_t *)"x", 1, NULL, 0, sid, 16, y), 0);
		assert_int_equal(pake_finish(&p, share), -EBADMSG);
		uint8_t t[PAKE_TAG_LEN] = { 0 };
		assert_int_equal(pake_check(&p, t), -EACCES);   /* nothing to confirm */
	}
}

/* Random scalars, as ferry runs it: the same code agrees, another code,
 * another session id (a man in the middle's two Noise sessions) do not. */
static void run(const char *code_a, const char *code_b, int sid_differs, int *agree)
{
	uint8_t sid_a[64], sid_b[64], ta[PAKE_TAG_LEN], tb[PAKE_TAG_LEN];
	struct pake a, b;

	memset(sid_a, 7, sizeof sid_a);
	memcpy(sid_b, sid_a, sizeof sid_b);
	sid_b[63] ^= (uint8_t)sid_differs;
	assert_int_equal(pake_start(&a, 1, (const uint8_t *)code_a, strlen(code_a),
				    (const uint8_t *)"ferry", 5, sid_a, 64, NULL), 0);
	assert_int_equal(pake_start(&b, 0, (const uint8_t *)code_b, strlen(code_b),
				    (const uint8_t *)"ferry", 5, sid_b, 64, NULL), 0);
	assert_int_equal(pake_finish(&a, b.mine), 0);
	assert_int_equal(pake_finish(&b, a.mine), 0);
	pake_tag(&a, ta);
	pake_tag(&b, tb);
	*agree = pake_check(&b, ta) == 0;
	assert_int_equal(*agree, pake_check(&a, tb) == 0);
	assert_int_equal(*agree, memcmp(a.isk, b.isk, 64) == 0);
}

static void random_runs(void **state)
{
	int agree;
	(void)state;

	run("7K3QM9XA", "7K3QM9XA", 0, &agree);
	assert_true(agree);
	run("7K3QM9XA", "7K3QM9XB", 0, &agree);
	assert_false(agree);
	run("7K3QM9XA", "7K3QM9XA", 1, &agree);
	assert_false(agree);
}

static void code_reading(void **state)
{
	char code[PAKE_CODE_BUF], out[PAKE_CODE_SYMBOLS + 1];
	(void)state;

	for (int i = 0; i < 100; i++) {
		pake_code_new(code);
		assert_int_equal(strlen(code), 9);
		assert_int_equal(code[4], '-');
		assert_int_equal(pake_code_read(code, out), 0);
		assert_int_equal(strlen(out), 8);
		assert_null(strpbrk(out, "ILOU-"));
	}
	assert_int_equal(pake_code_read("ab0c-d1ef", out), 0);
	assert_string_equal(out, "AB0CD1EF");
	assert_int_equal(pake_code_read(" abOc dlEf ", out), 0);   /* O as 0, l as 1 */
	assert_string_equal(out, "AB0CD1EF");
	assert_int_equal(pake_code_read("ABCD-EFG", out), -EINVAL);     /* short */
	assert_int_equal(pake_code_read("ABCD-EFGHJ", out), -EINVAL);   /* long */
	assert_int_equal(pake_code_read("ABCD-EFGU", out), -EINVAL);    /* U is not a symbol */
	assert_int_equal(pake_code_read("ABCD_EFGH", out), -EINVAL);
}

int main(void)
{
	if (!pake_available()) {
		puts("no ristretto255 in this libsodium (a minimal build): pairing is built out");
		return 77;
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(vectors_generator_string),
		cmocka_unit_test(vectors_shares_and_isk),
		cmocka_unit_test(vectors_invalid_shares),
		cmocka_unit_test(random_runs),
		cmocka_unit_test(code_reading),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
