/* SPDX-License-Identifier: MIT */
#include "session/basis.h"

#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

void basis_init(struct basis *b)
{
	*b = (struct basis){ .fd = { -1, -1 } };
}

int basis_any(const struct basis *b)
{
	return b->fd[0] >= 0 || b->fd[1] >= 0;
}

uint64_t basis_layout_blocks(struct basis *b, uint32_t block)
{
	uint64_t n0 = b->size[0] / block, n1 = b->size[1] / block;

	b->block = block;
	b->split = n0 * block;
	b->nblocks = (uint32_t)(n0 + n1);
	return (n0 + n1) * block;
}

uint64_t basis_layout_bytes(struct basis *b)
{
	b->block = 0;
	b->nblocks = 0;
	b->split = b->size[0];
	return b->size[0] + b->size[1];
}

int basis_read(const struct basis *b, uint8_t *buf, size_t n, uint64_t off)
{
	int piece = off >= b->split;
	uint64_t at = piece ? off - b->split : off;
	uint64_t end = piece ? b->size[1] : b->split;

	if (b->fd[piece] < 0 || at > end || n > end - at)
		return -ERANGE;
	return basis_pread_all(b->fd[piece], buf, n, at);
}

int basis_pread_all(int fd, uint8_t *buf, size_t n, uint64_t off)
{
	while (n) {
		ssize_t k = pread(fd, buf, n, (off_t)off);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? -errno : -ENODATA;
		buf += k;
		n -= (size_t)k;
		off += (uint64_t)k;
	}
	return 0;
}

int basis_unchanged(const struct basis *b)
{
	for (int i = 0; i < 2; i++) {
		struct stat st;
		if (b->fd[i] >= 0 && (fstat(b->fd[i], &st) < 0 || (uint64_t)st.st_size != b->size[i]))
			return 0;
	}
	return 1;
}

void basis_close(struct basis *b)
{
	for (int i = 0; i < 2; i++) {
		if (b->fd[i] >= 0)
			close(b->fd[i]);
		b->fd[i] = -1;
	}
}
