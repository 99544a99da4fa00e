/* SPDX-License-Identifier: MIT */
/* libFuzzer harness for the key files a peer's identity is checked against
 * (channel/keys.h): the input as a private key file, as an authorized-keys
 * list and as a known-hosts file. Whatever is in them gives an answer or
 * one error, never a crash; and what ferry writes into such a file is found
 * there afterwards: a key it authorizes is authorized, a host it forgets is
 * unknown, a host it adds is known (when the file was readable before). */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "channel/aead.h"
#include "channel/keys.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *dir_once(void)
{
	static char dir[] = "/tmp/ferry-fuzz-keys-XXXXXX";
	static int made;

	if (!made && mkdtemp(dir))
		made = 1;
	return made ? dir : NULL;
}

static int put(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -1;
	int ok = write(fd, data, size) == (ssize_t)size;
	fchmod(fd, 0600);
	close(fd);
	return ok ? 0 : -1;
}

static void authorized(const char *path, const uint8_t k[KEY_LEN])
{
	int before = keys_authorized(path, k);
	int added = keys_authorize_add(path, k, "fuzz");

	if (before == 1 && added != 1)
		abort();   /* listed already: nothing to add */
	if (added == 0 && keys_authorized(path, k) != 1)
		abort();   /* added, yet not authorized */
}

static void known(const char *path, const uint8_t k[KEY_LEN])
{
	int before = known_hosts_check(path, "fuzz.example", k);

	if (before < 0)
		return;    /* one error line; the caller stops there */
	if (known_hosts_remove(path, "fuzz.example") < 0)
		abort();   /* it was read once: it can be read again */
	if (known_hosts_check(path, "fuzz.example", k) != KNOWN_HOST_UNKNOWN)
		abort();
	if (known_hosts_add(path, "fuzz.example", k) == 0 &&
	    known_hosts_check(path, "fuzz.example", k) != KNOWN_HOST_OK)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *dir = dir_once();
	char path[256];
	struct keypair kp;
	uint8_t k[KEY_LEN];

	if (!dir || crypto_ready() < 0)
		return 0;
	memset(k, 0x5a, sizeof k);
	snprintf(path, sizeof path, "%s/id", dir);
	if (put(path, data, size) == 0 && keys_load(path, &kp) == 0)
		keys_wipe(&kp);
	snprintf(path, sizeof path, "%s/authorized_keys", dir);
	if (put(path, data, size) == 0)
		authorized(path, k);
	snprintf(path, sizeof path, "%s/known_hosts", dir);
	if (put(path, data, size) == 0)
		known(path, k);
	return 0;
}
