/* SPDX-License-Identifier: MIT */
/* Key files, base64, fingerprints, authorized keys, known hosts. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "channel/keys.h"
#include "util/err.h"

static char dir[64];

static int setup(void **state)
{
	(void)state;
	strcpy(dir, "/tmp/ferry-keys-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];
	(void)state;
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

static void path(char *out, const char *name)
{
	snprintf(out, 256, "%s/%s", dir, name);
}

static void write_file(const char *p, const char *text, mode_t mode)
{
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
}

static void test_save_load(void **state)
{
	struct keypair kp, back;
	char p[256], pub[300], line[200], b64[KEY_B64_LEN + 1];
	struct stat st;
	FILE *f;

	(void)state;
	path(p, "id");
	assert_int_equal(keys_generate(&kp), 0);
	assert_int_equal(keys_save(p, &kp, "me@host", 0), 0);
	assert_int_equal(stat(p, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(keys_load(p, &back), 0);
	assert_memory_equal(back.priv, kp.priv, KEY_LEN);
	assert_memory_equal(back.pub, kp.pub, KEY_LEN);
	/* The public file: "<b64> comment\n". */
	snprintf(pub, sizeof pub, "%s.pub", p);
	f = fopen(pub, "r");
	assert_non_null(f);
	assert_non_null(fgets(line, sizeof line, f));
	fclose(f);
	key_to_base64(kp.pub, b64);
	assert_int_equal(strncmp(line, b64, KEY_B64_LEN), 0);
	assert_string_equal(line + KEY_B64_LEN, " me@host\n");
	/* Existing file: refused unless overwrite. */
	assert_int_equal(keys_save(p, &kp, NULL, 0), -EEXIST);
	assert_int_equal(keys_save(p, &kp, NULL, 1), 0);
	keys_wipe(&back);
	for (int i = 0; i < KEY_LEN; i++)
		assert_int_equal(back.priv[i], 0);
}

static void test_perm_refused(void **state)
{
	struct keypair kp;
	char p[256];

	(void)state;
	path(p, "loose");
	assert_int_equal(keys_generate(&kp), 0);
	assert_int_equal(keys_save(p, &kp, NULL, 0), 0);
	chmod(p, 0640);
	assert_int_equal(keys_load(p, &kp), -EPERM);
	assert_non_null(strstr(err_msg(), "readable by group or others (mode 0640): chmod 600"));
	for (size_t i = 0; i < sizeof kp.priv; i++)   /* nothing of it left behind */
		assert_int_equal(kp.priv[i], 0);
	chmod(p, 0600);
	assert_int_equal(keys_load(p, &kp), 0);
	/* a public key given as the private one is named as what it is, even
	 * with its usual mode 0644 (not "chmod 600 it") */
	char pub[300];
	snprintf(pub, sizeof pub, "%s.pub", p);
	struct stat st;   /* keys_save wrote it beside the private key */
	assert_int_equal(stat(pub, &st), 0);
	assert_int_equal(keys_load(pub, &kp), -EINVAL);
	assert_non_null(strstr(err_msg(), ".pub is a public key; the private key is "));
	assert_non_null(strstr(err_msg(), "loose"));
}

static void test_bad_private(void **state)
{
	struct keypair kp;
	char p[256];

	(void)state;
	path(p, "bad");
	write_file(p, "FERRY PRIVATE KEY\nnot base64 at all, sorry, not at all!!!!!!\n", 0600);
	assert_int_equal(keys_load(p, &kp), -EINVAL);
	write_file(p, "SOMETHING ELSE\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", 0600);
	assert_int_equal(keys_load(p, &kp), -EINVAL);
	write_file(p, "FERRY PRIVATE KEY\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n", 0600);
	assert_int_equal(keys_load(p, &kp), 0);
	path(p, "missing");
	assert_true(keys_load(p, &kp) == -ENOENT);
}

static void test_base64(void **state)
{
	uint8_t k[KEY_LEN], back[KEY_LEN];
	char b64[KEY_B64_LEN + 1], fpr[KEY_FPR_LEN], s[64];

	(void)state;
	for (int i = 0; i < KEY_LEN; i++)
		k[i] = (uint8_t)(i * 37 + 1);
	key_to_base64(k, b64);
	assert_int_equal(strlen(b64), KEY_B64_LEN);
	assert_int_equal(b64[43], '=');
	assert_int_equal(key_from_base64(b64, strlen(b64), back), 0);
	assert_memory_equal(k, back, KEY_LEN);
	snprintf(s, sizeof s, "%s comment", b64);
	assert_int_equal(key_from_base64(s, strlen(s), back), 0);
	/* Too short, junk after it, bad characters, non-canonical last char. */
	assert_int_equal(key_from_base64(b64, 43, back), -EINVAL);
	snprintf(s, sizeof s, "%sx", b64);
	assert_int_equal(key_from_base64(s, strlen(s), back), -EINVAL);
	memcpy(s, b64, sizeof b64);
	s[10] = '*';
	assert_int_equal(key_from_base64(s, KEY_B64_LEN, back), -EINVAL);
	memcpy(s, b64, sizeof b64);
	s[42] = s[42] == 'B' ? 'C' : 'B';   /* non-zero padding bits or a different key */
	int rc = key_from_base64(s, KEY_B64_LEN, back);
	assert_true(rc == -EINVAL || memcmp(back, k, KEY_LEN) != 0);
	key_fingerprint(k, fpr);
	assert_int_equal(strncmp(fpr, "BLAKE2b:", 8), 0);
	assert_int_equal(strlen(fpr), 8 + 22);
	assert_null(strchr(fpr, '='));
}

static void test_authorized(void **state)
{
	struct keypair a, b;
	char p[256], text[512], ba[KEY_B64_LEN + 1];

	(void)state;
	keys_generate(&a);
	keys_generate(&b);
	key_to_base64(a.pub, ba);
	path(p, "authorized");
	snprintf(text, sizeof text, "# ferry keys\n\n  %s alice@laptop\n", ba);
	write_file(p, text, 0644);
	assert_int_equal(keys_authorized(p, a.pub), 1);
	assert_int_equal(keys_authorized(p, b.pub), 0);
	snprintf(text, sizeof text, "%s\nnot-a-key here\n", ba);
	write_file(p, text, 0644);
	assert_int_equal(keys_authorized(p, a.pub), -EINVAL);
	assert_non_null(strstr(err_msg(), "authorized:2:"));
	path(p, "nonexistent");
	assert_true(keys_authorized(p, a.pub) < 0);
}

static void test_known_hosts(void **state)
{
	struct keypair a, b;
	char p[256], text[256];

	(void)state;
	keys_generate(&a);
	keys_generate(&b);
	path(p, "sub/dir/known_hosts");
	assert_int_equal(known_hosts_check(p, "nas", a.pub), KNOWN_HOST_UNKNOWN);
	assert_int_equal(known_hosts_add(p, "nas", a.pub), 0);
	assert_int_equal(known_hosts_add(p, "nas:9000", b.pub), 0);
	assert_int_equal(known_hosts_check(p, "nas", a.pub), KNOWN_HOST_OK);
	assert_int_equal(known_hosts_check(p, "nas", b.pub), KNOWN_HOST_CHANGED);
	assert_int_equal(known_hosts_check(p, "nas:9000", b.pub), KNOWN_HOST_OK);
	assert_int_equal(known_hosts_check(p, "other", a.pub), KNOWN_HOST_UNKNOWN);
	assert_int_equal(known_hosts_add(p, "bad host", a.pub), -EINVAL);
	snprintf(text, sizeof text, "%s/sub/dir", dir);
	struct stat st;
	assert_int_equal(stat(text, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	path(p, "kh_bad");
	write_file(p, "# comment\nnas AAAA\n", 0644);
	assert_int_equal(known_hosts_check(p, "nas", a.pub), -EINVAL);
	assert_non_null(strstr(err_msg(), "kh_bad:2:"));
	/* a hand-edited file without its last newline: the added host is its
	 * own line, not the last line's comment (found by fuzz_channel_keys) */
	path(p, "kh_noeol");
	key_to_base64(b.pub, text);
	char noeol[300];
	snprintf(noeol, sizeof noeol, "old %s a comment", text);
	write_file(p, noeol, 0644);
	assert_int_equal(known_hosts_add(p, "nas", a.pub), 0);
	assert_int_equal(known_hosts_check(p, "nas", a.pub), KNOWN_HOST_OK);
	assert_int_equal(known_hosts_check(p, "old", b.pub), KNOWN_HOST_OK);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_save_load),
		cmocka_unit_test(test_perm_refused),
		cmocka_unit_test(test_bad_private),
		cmocka_unit_test(test_base64),
		cmocka_unit_test(test_authorized),
		cmocka_unit_test(test_known_hosts),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
