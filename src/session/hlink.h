/* SPDX-License-Identifier: MIT */
/* -H: the hard-link groups of a transfer that are still open (a member may
 * still come). The sender keys them by inode, the receiver by the first
 * member's entry index; both count the same groups and path bytes, so the
 * limits (PROTO_LINK_GROUPS, PROTO_LINK_PATH_BYTES) are a protocol rule, and
 * memory follows the open groups, never all linked files. A group closes when
 * its last link has been seen; one whose other links are outside the
 * transfer stays open to the end. */
#ifndef FERRY_SESSION_HLINK_H
#define FERRY_SESSION_HLINK_H

#include <stddef.h>
#include <stdint.h>

struct hlink_group {
	uint64_t k1, k2;        /* (dev, inode) on the sender, (0, index) on the receiver */
	uint32_t first;         /* the first member's entry index */
	uint32_t left;          /* links still to come; 0 = a free slot */
	uint32_t path_len;      /* counted against PROTO_LINK_PATH_BYTES */
	char *path;             /* the receiver's: the first member's local path (owned) */
	int kept;               /* the receiver's: the first was left as it was (-u,
				   --existing, --ignore-existing) and is not the sender's
				   (the quick check): its other names may not link to it */
	int rewritten;          /* the receiver's: the first's data is asked for */
};

struct hlinks {
	struct hlink_group *slot;   /* owned, HLINK_SLOTS, open addressing */
	size_t n, path_bytes;
};

int hlinks_init(struct hlinks *h);
void hlinks_free(struct hlinks *h);
/* 1 when a group of `path_len` bytes more would still fit. */
int hlinks_room(const struct hlinks *h, size_t path_len);
struct hlink_group *hlinks_find(struct hlinks *h, uint64_t k1, uint64_t k2);
/* Opens a group (the caller checked hlinks_room); path may be NULL. */
int hlinks_add(struct hlinks *h, uint64_t k1, uint64_t k2, uint32_t first, uint32_t left,
	       uint32_t path_len, const char *path);
/* One more member seen: the group closes (and its slot is freed) at the last. */
void hlinks_seen(struct hlinks *h, struct hlink_group *g);

#endif
