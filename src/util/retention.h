/* SPDX-License-Identifier: MIT */
/* Which snapshots a module keeps: the rules restic's `forget`, borg's
 * `prune` and Proxmox Backup Server share (keep last / hourly / daily /
 * weekly / monthly / yearly / within), plus `protect within`. Pure: times in,
 * decisions out; the daemon and `ferry admin` apply them (docs/DESIGN.md,
 * "Snapshots"). Rules combine as restic's do: a snapshot is kept if any rule
 * keeps it. Buckets are UTC hours, days, ISO weeks, months and years of the
 * server's own receive times; in each of the newest N buckets that hold a
 * snapshot, the newest snapshot is kept. */
#ifndef FERRY_UTIL_RETENTION_H
#define FERRY_UTIL_RETENTION_H

#include <stddef.h>
#include <stdint.h>

enum {
	KEEP_LATEST = 1 << 0,    /* the newest is the module's tree: always kept */
	KEEP_LAST = 1 << 1,
	KEEP_HOURLY = 1 << 2,
	KEEP_DAILY = 1 << 3,
	KEEP_WEEKLY = 1 << 4,
	KEEP_MONTHLY = 1 << 5,
	KEEP_YEARLY = 1 << 6,
	KEEP_WITHIN = 1 << 7,    /* younger than `within` (from now) */
	KEEP_PROTECTED = 1 << 8, /* younger than `protect within`: never pruned */
	KEEP_NO_RULES = 1 << 9,  /* no rule is set: nothing is pruned */
};

struct retention {
	unsigned last, hourly, daily, weekly, monthly, yearly;
	int64_t within, protect_within;   /* seconds; 0 = not set */
};

/* "keep daily" etc. from a config key (without "keep "/"protect ") and
 * value: 1 if key is a retention key (then 0 or -EINVAL with a message in
 * err_msg()), 0 if not one. */
int retention_set(struct retention *r, const char *key, const char *val);
/* A duration: "90d", "12h", "2w", "6m" (30 days), "1y" (365 days), or
 * several ("1y6m"). 0 or -EINVAL. */
int retention_duration(const char *s, int64_t *secs);
/* 1 if any count or within rule is set (protect within alone prunes nothing). */
int retention_any(const struct retention *r);

/* For n snapshots taken at times[] (oldest first, seconds), sets why[i] to
 * the KEEP_* reasons snapshot i is kept, 0 if it goes. */
void retention_apply(const struct retention *r, const int64_t *times, size_t n, int64_t now,
		     unsigned *why);
/* "daily,within" for a reasons mask, into buf. */
const char *retention_reasons(unsigned why, char *buf, size_t cap);

#endif
