/* SPDX-License-Identifier: MIT */
#include "session/hlink.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg.h"
#include "util/err.h"

/* twice the groups that may be open: probes stay short */
#define HLINK_SLOTS (2 * PROTO_LINK_GROUPS)

static size_t slot_of(uint64_t k1, uint64_t k2)
{
	uint64_t x = k1 * 0x9e3779b97f4a7c15ull ^ k2 * 0xc2b2ae3d27d4eb4full;
	return (size_t)((x ^ (x >> 29)) & (HLINK_SLOTS - 1));
}

int hlinks_init(struct hlinks *h)
{
	memset(h, 0, sizeof *h);
	h->slot = calloc(HLINK_SLOTS, sizeof *h->slot);
	return h->slot ? 0 : err_set(-ENOMEM, "out of memory for hard-link groups");
}

void hlinks_free(struct hlinks *h)
{
	if (h->slot)
		for (size_t i = 0; i < HLINK_SLOTS; i++)
			free(h->slot[i].path);
	free(h->slot);
	memset(h, 0, sizeof *h);
}

int hlinks_room(const struct hlinks *h, size_t path_len)
{
	return h->n < PROTO_LINK_GROUPS && h->path_bytes + path_len <= PROTO_LINK_PATH_BYTES;
}

struct hlink_group *hlinks_find(struct hlinks *h, uint64_t k1, uint64_t k2)
{
	for (size_t i = slot_of(k1, k2);; i = (i + 1) & (HLINK_SLOTS - 1)) {
		struct hlink_group *g = &h->slot[i];
		if (!g->left)
			return NULL;
		if (g->k1 == k1 && g->k2 == k2)
			return g;
	}
}

int hlinks_add(struct hlinks *h, uint64_t k1, uint64_t k2, uint32_t first, uint32_t left,
	       uint32_t path_len, const char *path)
{
	size_t i = slot_of(k1, k2);
	char *copy = NULL;

	if (!left || !hlinks_room(h, path_len))
		return err_set(-ENOSPC, "too many hard-link groups open");
	if (path && !(copy = strdup(path)))
		return err_set(-ENOMEM, "out of memory");
	while (h->slot[i].left)
		i = (i + 1) & (HLINK_SLOTS - 1);
	h->slot[i] = (struct hlink_group){ .k1 = k1, .k2 = k2, .first = first, .left = left,
					   .path_len = path_len, .path = copy };
	h->n++;
	h->path_bytes += path_len;
	return 0;
}

/* Linear probing's deletion: later members of the probe run move back so
 * that no lookup stops early at the hole. */
static void remove_at(struct hlinks *h, size_t i)
{
	size_t j = i;

	free(h->slot[i].path);
	h->path_bytes -= h->slot[i].path_len;
	h->n--;
	for (;;) {
		h->slot[i].left = 0;
		h->slot[i].path = NULL;
		for (;;) {
			j = (j + 1) & (HLINK_SLOTS - 1);
			if (!h->slot[j].left)
				return;
			size_t home = slot_of(h->slot[j].k1, h->slot[j].k2);
			/* j may move to i if its home is not in (i, j] cyclically */
			if (i <= j ? (home <= i || home > j) : (home <= i && home > j))
				break;
		}
		h->slot[i] = h->slot[j];
		i = j;
	}
}

void hlinks_seen(struct hlinks *h, struct hlink_group *g)
{
	if (--g->left == 0) {
		g->left = 1;   /* remove_at expects a live slot */
		remove_at(h, (size_t)(g - h->slot));
	}
}
