/* SPDX-License-Identifier: MIT */
/* rsync's --safe-links: whether a symlink could point outside the transfer.
 * As rsync 3.5 judges it (its oracle test is e2e/test_safe_links): an empty
 * or absolute target is unsafe; leading ".." components may climb no higher
 * than the directories the link's own path has below the transfer root;
 * and a ".." after any other component (even "."), or a last ".." after
 * anything at all, is unsafe, whatever it would resolve to (rsync's
 * stricter rules since CVE-2024-12088). tests/e2e/test_safe_links checks
 * 1,020 targets at four depths against the real rsync. */
#ifndef FERRY_UTIL_SAFELINK_H
#define FERRY_UTIL_SAFELINK_H

/* 1 when the link at `path` (relative to the transfer root, '/'-separated,
 * no "." or ".." in it) with this target is unsafe, else 0. */
int safelink_unsafe(const char *target, const char *path);

#endif
