/* SPDX-License-Identifier: MIT */
/* X25519 identities on disk and in text: key files, base64, fingerprints,
 * authorized-keys and known-hosts files. */
#include "channel/keys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "channel/aead.h"
#include "util/err.h"

#define PRIV_HEADER "FERRY PRIVATE KEY\n"
#define B64_VARIANT sodium_base64_VARIANT_ORIGINAL

int keys_generate(struct keypair *kp)
{
	int rc;

	if ((rc = crypto_ready()) < 0)
		return rc;
	randombytes_buf(kp->priv, KEY_LEN);
	/* Clamping happens inside scalarmult, so any 32 random bytes will do. */
	if (crypto_scalarmult_base(kp->pub, kp->priv) != 0)
		return err_set(-EIO, "could not derive a public key");
	return 0;
}

void keys_wipe(struct keypair *kp)
{
	sodium_memzero(kp->priv, KEY_LEN);
}

void key_to_base64(const uint8_t pub[KEY_LEN], char out[KEY_B64_LEN + 1])
{
	sodium_bin2base64(out, KEY_B64_LEN + 1, pub, KEY_LEN, B64_VARIANT);
}

int key_from_base64(const char *s, size_t len, uint8_t pub[KEY_LEN])
{
	uint8_t tmp[KEY_LEN];
	size_t binlen = 0;
	const char *end = NULL;

	if (crypto_ready() < 0 || len < KEY_B64_LEN)
		return -EINVAL;
	/* Exactly one key: whatever follows must be a separator. */
	if (len > KEY_B64_LEN && s[KEY_B64_LEN] != ' ' && s[KEY_B64_LEN] != '\t' &&
	    s[KEY_B64_LEN] != '\n' && s[KEY_B64_LEN] != '\r' && s[KEY_B64_LEN] != '\0')
		return -EINVAL;
	/* libsodium also refuses non-canonical padding bits, so each key has
	 * exactly one text form. */
	if (sodium_base642bin(tmp, sizeof tmp, s, KEY_B64_LEN, NULL, &binlen, &end, B64_VARIANT) != 0 ||
	    binlen != KEY_LEN || end != s + KEY_B64_LEN)
		return -EINVAL;
	memcpy(pub, tmp, KEY_LEN);
	return 0;
}

void key_fingerprint(const uint8_t pub[KEY_LEN], char out[KEY_FPR_LEN])
{
	uint8_t h[16];

	crypto_generichash(h, sizeof h, pub, KEY_LEN, NULL, 0);
	memcpy(out, "BLAKE2b:", 8);
	sodium_bin2base64(out + 8, KEY_FPR_LEN - 8, h, sizeof h,
			  sodium_base64_VARIANT_ORIGINAL_NO_PADDING);
}

static int write_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

int keys_save(const char *path, const struct keypair *kp, const char *comment, int overwrite)
{
	char b64[KEY_B64_LEN + 1], pubpath[PATH_MAX];
	char buf[sizeof PRIV_HEADER + KEY_B64_LEN + 2];
	int fd = -1, rc;
	size_t n;

	if (comment && strpbrk(comment, "\r\n"))
		return err_set(-EINVAL, "key comment must be a single line");
	if ((size_t)snprintf(pubpath, sizeof pubpath, "%s.pub", path) >= sizeof pubpath)
		return err_set(-ENAMETOOLONG, "key path %s is too long", path);

	fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | (overwrite ? O_TRUNC : O_EXCL), 0600);
	if (fd < 0) {
		rc = -errno;
		if (rc == -EEXIST)
			return err_set(rc, "private key %s already exists (not overwritten)", path);
		return err_sys(rc, "cannot create private key %s", path);
	}
	/* An overwritten file keeps its old mode; a private key must be 0600. */
	if (fchmod(fd, 0600) < 0) {
		rc = err_sys(-errno, "chmod %s", path);
		goto out;
	}
	key_to_base64(kp->priv, b64);
	n = (size_t)snprintf(buf, sizeof buf, "%s%s\n", PRIV_HEADER, b64);
	rc = write_all(fd, buf, n);
	sodium_memzero(buf, sizeof buf);
	sodium_memzero(b64, sizeof b64);
	if (rc < 0) {
		err_sys(rc, "write %s", path);
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		rc = err_sys(-errno, "close %s", path);
		goto out;
	}

	fd = open(pubpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		rc = err_sys(-errno, "cannot create public key %s", pubpath);
		goto out;
	}
	key_to_base64(kp->pub, b64);
	if (comment && *comment)
		n = (size_t)snprintf(buf, sizeof buf, "%s ", b64);
	else
		n = (size_t)snprintf(buf, sizeof buf, "%s\n", b64);
	if ((rc = write_all(fd, buf, n)) == 0 && comment && *comment) {
		if ((rc = write_all(fd, comment, strlen(comment))) == 0)
			rc = write_all(fd, "\n", 1);
	}
	if (rc < 0) {
		err_sys(rc, "write %s", pubpath);
		goto out;
	}
	rc = close(fd) < 0 ? err_sys(-errno, "close %s", pubpath) : 0;
	fd = -1;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int keys_load(const char *path, struct keypair *kp)
{
	char buf[256];
	const size_t hl = sizeof PRIV_HEADER - 1;
	struct stat st;
	ssize_t n = 0, r;
	size_t len;
	int fd = -1, rc;

	if ((rc = crypto_ready()) < 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return err_sys(-errno, "cannot open private key %s", path);
	if (fstat(fd, &st) < 0) {
		rc = err_sys(-errno, "stat %s", path);
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		rc = err_set(-EINVAL, "private key %s is not a regular file", path);
		goto out;
	}
	while ((size_t)n < sizeof buf && (r = read(fd, buf + n, sizeof buf - (size_t)n)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = err_sys(-errno, "read %s", path);
			goto out;
		}
		n += r;
	}
	len = (size_t)n;
	/* Header, 44 base64 characters, one optional newline, nothing else. */
	if (len < hl + KEY_B64_LEN || memcmp(buf, PRIV_HEADER, hl) != 0 ||
	    (len != hl + KEY_B64_LEN && !(len == hl + KEY_B64_LEN + 1 && buf[len - 1] == '\n')) ||
	    key_from_base64(buf + hl, len - hl, kp->priv) < 0) {
		size_t pl = strlen(path);
		/* what the file is comes first: "chmod 600" of a public key helps nobody */
		if (pl > 4 && !strcmp(path + pl - 4, ".pub"))
			rc = err_set(-EINVAL, "%s is a public key; the private key is %.*s",
				     path, (int)(pl - 4), path);
		else
			rc = err_set(-EINVAL, "%s is not a ferry private key file", path);
		goto out;
	}
	/* after the content (what the file is comes first), before any use */
	if (st.st_mode & 0077) {
		sodium_memzero(kp->priv, sizeof kp->priv);
		rc = err_set(-EPERM, "private key %s is %s by group or others (mode %04o): chmod 600 it",
			     path, (st.st_mode & 0044) ? "readable" : "accessible",
			     (unsigned)(st.st_mode & 07777));
		goto out;
	}
	crypto_scalarmult_base(kp->pub, kp->priv);
	rc = 0;
out:
	sodium_memzero(buf, sizeof buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Splits the next whitespace-separated field off *p; returns its length. */
static size_t next_field(char **p, char **field)
{
	char *s = *p;
	size_t n = 0;

	while (*s == ' ' || *s == '\t')
		s++;
	*field = s;
	while (s[n] && s[n] != ' ' && s[n] != '\t')
		n++;
	*p = s + n;
	return n;
}

/* Reads the next line of f into *line without its end of line; 1, 0 at EOF, <0. */
static int next_line(FILE *f, char **line, size_t *cap, const char *path)
{
	ssize_t n = getline(line, cap, f);

	if (n < 0)
		return ferror(f) ? err_sys(-EIO, "read %s", path) : 0;
	while (n > 0 && ((*line)[n - 1] == '\n' || (*line)[n - 1] == '\r'))
		(*line)[--n] = '\0';
	if (strlen(*line) != (size_t)n)
		return err_set(-EINVAL, "%s: contains a NUL byte", path);
	return 1;
}

int keys_authorized(const char *path, const uint8_t pub[KEY_LEN])
{
	FILE *f = NULL;
	char *line = NULL, *p, *field;
	size_t cap = 0, flen;
	unsigned lineno = 0;
	uint8_t key[KEY_LEN];
	int rc, found = 0;

	f = fopen(path, "re");
	if (!f)
		return err_sys(-errno, "cannot open authorized keys %s", path);
	/* The whole file is checked, so a bad line is reported whether or not
	 * the key appears before it. */
	while ((rc = next_line(f, &line, &cap, path)) > 0) {
		lineno++;
		p = line;
		flen = next_field(&p, &field);
		if (flen == 0 || field[0] == '#')
			continue;
		if (flen != KEY_B64_LEN || key_from_base64(field, flen, key) < 0) {
			rc = err_set(-EINVAL, "%s:%u: not a public key (expected 44 characters of base64)",
				     path, lineno);
			goto out;
		}
		if (sodium_memcmp(key, pub, KEY_LEN) == 0)
			found = 1;
	}
	if (rc == 0)
		rc = found;
out:
	free(line);
	fclose(f);
	return rc;
}

int known_hosts_check(const char *path, const char *host, const uint8_t pub[KEY_LEN])
{
	FILE *f = NULL;
	char *line = NULL, *p, *field;
	size_t cap = 0, flen;
	unsigned lineno = 0;
	uint8_t key[KEY_LEN];
	int rc, seen = 0, match = 0;

	f = fopen(path, "re");
	if (!f) {
		if (errno == ENOENT)
			return KNOWN_HOST_UNKNOWN;
		return err_sys(-errno, "cannot open known hosts %s", path);
	}
	while ((rc = next_line(f, &line, &cap, path)) > 0) {
		lineno++;
		p = line;
		flen = next_field(&p, &field);
		if (flen == 0 || field[0] == '#')
			continue;
		int host_match = flen == strlen(host) && memcmp(field, host, flen) == 0;
		flen = next_field(&p, &field);
		if (flen != KEY_B64_LEN || key_from_base64(field, flen, key) < 0) {
			rc = err_set(-EINVAL, "%s:%u: expected \"HOST KEY [comment]\" with a 44-character base64 key",
				     path, lineno);
			goto out;
		}
		if (host_match) {
			seen = 1;
			if (sodium_memcmp(key, pub, KEY_LEN) == 0)
				match = 1;
		}
	}
	if (rc == 0)
		rc = match ? KNOWN_HOST_OK : seen ? KNOWN_HOST_CHANGED : KNOWN_HOST_UNKNOWN;
out:
	free(line);
	fclose(f);
	return rc;
}

/* mkdir -p for the directory part of path, new directories 0700. */
static int make_parent(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	if (strlen(path) >= sizeof dir)
		return err_set(-ENAMETOOLONG, "path %s is too long", path);
	strcpy(dir, path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	for (char *p = dir + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(dir, 0700) < 0 && errno != EEXIST)
			return err_sys(-errno, "mkdir %s", dir);
		*p = '/';
	}
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_sys(-errno, "mkdir %s", dir);
	return 0;
}

/* Copies the lines of `in` that are not for `host` into `out`. */
static int copy_except(FILE *in, FILE *out, const char *host, const char *path)
{
	char *line = NULL, *p, *field;
	size_t cap = 0;
	int rc, removed = 0;

	while ((rc = next_line(in, &line, &cap, path)) > 0) {
		p = line;
		size_t flen = next_field(&p, &field);
		if (flen && field[0] != '#' && flen == strlen(host) && !memcmp(field, host, flen)) {
			removed++;
			continue;
		}
		if (fprintf(out, "%s\n", line) < 0) {
			rc = err_sys(-EIO, "write %s", path);
			break;
		}
	}
	free(line);
	return rc < 0 ? rc : removed;
}

int known_hosts_remove(const char *path, const char *host)
{
	char tmp[4200];
	FILE *in = fopen(path, "re"), *out = NULL;
	int rc, fd;

	if (!in)
		return errno == ENOENT ? 0 : err_sys(-errno, "cannot open known hosts %s", path);
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.new-XXXXXX", path) >= sizeof tmp) {
		fclose(in);
		return err_set(-ENAMETOOLONG, "%s: path too long", path);
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0 || !(out = fdopen(fd, "w"))) {
		rc = err_sys(-errno, "cannot create %s", tmp);
		if (fd >= 0)
			close(fd);
		fclose(in);
		return rc;
	}
	fchmod(fd, 0644);
	rc = copy_except(in, out, host, path);
	fclose(in);
	if (fclose(out) != 0 && rc >= 0)
		rc = err_sys(-errno, "write %s", tmp);
	if (rc > 0 && rename(tmp, path) < 0)
		rc = err_sys(-errno, "rename %s to %s", tmp, path);
	if (rc <= 0 || access(tmp, F_OK) == 0)
		unlink(tmp);
	return rc;
}

/* Ends the file's last line if it is not ended; 0 or <0. */
static int ends_line(int fd, const char *path)
{
	struct stat st;
	char last = '\n';

	if (fstat(fd, &st) < 0)
		return err_sys(-errno, "stat %s", path);
	if (st.st_size > 0 && pread(fd, &last, 1, st.st_size - 1) != 1)
		return err_sys(-errno, "read %s", path);
	if (last == '\n')
		return 0;
	int rc = write_all(fd, "\n", 1);
	return rc < 0 ? err_sys(rc, "write %s", path) : 0;
}

int known_hosts_add(const char *path, const char *host, const uint8_t pub[KEY_LEN])
{
	char b64[KEY_B64_LEN + 1];
	char line[512];
	int fd = -1, rc;
	size_t n;

	if (!*host || strpbrk(host, " \t\r\n#"))
		return err_set(-EINVAL, "host name \"%s\" cannot go into a known-hosts file", host);
	key_to_base64(pub, b64);
	n = (size_t)snprintf(line, sizeof line, "%s %s\n", host, b64);
	if (n >= sizeof line)
		return err_set(-ENAMETOOLONG, "host name %s is too long", host);
	if ((rc = make_parent(path)) < 0)
		return rc;
	fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return err_sys(-errno, "cannot open known hosts %s", path);
	/* a file edited by hand may lack its last '\n': the new line would
	 * become that line's comment, and the host would never be known */
	if ((rc = ends_line(fd, path)) == 0 && (rc = write_all(fd, line, n)) < 0)
		err_sys(rc, "write %s", path);
	if (close(fd) < 0 && rc == 0)
		rc = err_sys(-errno, "close %s", path);
	return rc;
}

/* The old file's bytes, then the new line (a missing final '\n' added). */
static int copy_then_add(int in, int out, const char *line, const char *path)
{
	char buf[8192];
	ssize_t n = 0;
	char last = '\n';
	int rc = 0;

	while (in >= 0 && (n = read(in, buf, sizeof buf)) > 0) {
		if ((rc = write_all(out, buf, (size_t)n)) < 0)
			return err_sys(rc, "write %s", path);
		last = buf[n - 1];
	}
	if (in >= 0 && n < 0)
		return err_sys(-errno, "read %s", path);
	if (last != '\n' && (rc = write_all(out, "\n", 1)) < 0)
		return err_sys(rc, "write %s", path);
	if ((rc = write_all(out, line, strlen(line))) < 0)
		return err_sys(rc, "write %s", path);
	return fsync(out) == 0 ? 0 : err_sys(-errno, "fsync %s", path);
}

int keys_authorize_add(const char *path, const uint8_t pub[KEY_LEN], const char *comment)
{
	char b64[KEY_B64_LEN + 1], line[600], tmp[4200];
	struct stat st = { .st_mode = 0644 };
	int rc = keys_authorized(path, pub);

	if (rc == -ENOENT || (rc < 0 && access(path, F_OK) != 0))
		rc = 0;   /* a file not made yet is an empty list */
	if (rc != 0)
		return rc;   /* 1: listed already */
	if (strpbrk(comment, "\r\n"))
		return err_set(-EINVAL, "a key's comment is one line");
	key_to_base64(pub, b64);
	snprintf(line, sizeof line, "%s %.500s\n", b64, comment);
	if ((size_t)snprintf(tmp, sizeof tmp, "%s.new-XXXXXX", path) >= sizeof tmp)
		return err_set(-ENAMETOOLONG, "%s: path too long", path);
	int in = open(path, O_RDONLY | O_CLOEXEC);
	if (in < 0 && errno != ENOENT)
		return err_sys(-errno, "cannot open %s", path);
	if (in >= 0 && fstat(in, &st) < 0) {
		rc = err_sys(-errno, "stat %s", path);
		close(in);
		return rc;
	}
	int out = mkostemp(tmp, O_CLOEXEC);
	if (out < 0) {
		rc = err_sys(-errno, "cannot create %s", tmp);
		if (in >= 0)
			close(in);
		return rc;
	}
	/* the same mode and owner as the list it replaces: the daemon reads it */
	if (fchmod(out, st.st_mode & 07777) < 0 ||
	    (in >= 0 && fchown(out, st.st_uid, st.st_gid) < 0 && errno != EPERM))
		rc = err_sys(-errno, "cannot give %s the mode and owner of %s", tmp, path);
	if (rc == 0)
		rc = copy_then_add(in, out, line, path);
	if (in >= 0)
		close(in);
	if (close(out) < 0 && rc == 0)
		rc = err_sys(-errno, "close %s", tmp);
	if (rc == 0 && rename(tmp, path) < 0)
		rc = err_sys(-errno, "rename %s to %s", tmp, path);
	if (rc < 0)
		unlink(tmp);
	return rc;
}
