/* SPDX-License-Identifier: MIT */
/* /proc/self/mountinfo lines:
 *   36 35 98:0 /mnt1 /mnt/parent rw,noatime master:1 - ext3 /dev/root rw
 * id, parent, major:minor, root, mount point, options, optional fields up
 * to "-", then the type, the source and the super block's options. Paths
 * have space, tab, newline and backslash as octal escapes (\040). */
#include "bench/blkdev.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Copies the next space-separated field of *p into out, undoing the octal
 * escapes; 0, or -EINVAL when the line has ended. */
static int field(const char **p, const char *end, char *out, size_t cap)
{
	const char *s = *p;
	size_t n = 0;

	while (s < end && *s == ' ')
		s++;
	if (s >= end)
		return -EINVAL;
	while (s < end && *s != ' ') {
		char c = *s++;
		if (c == '\\' && end - s >= 3 && s[0] >= '0' && s[0] <= '3') {
			c = (char)((s[0] - '0') << 6 | (s[1] - '0') << 3 | (s[2] - '0'));
			s += 3;
		}
		if (n + 1 < cap)
			out[n++] = c;
	}
	out[n] = '\0';
	*p = s;
	return 0;
}

static int parse_entry(const char *s, const char *end, struct mount_entry *m)
{
	char tmp[256];

	memset(m, 0, sizeof *m);
	if (field(&s, end, tmp, sizeof tmp) < 0 || field(&s, end, tmp, sizeof tmp) < 0 ||
	    field(&s, end, tmp, sizeof tmp) < 0 ||
	    sscanf(tmp, "%u:%u", &m->major, &m->minor) != 2 ||
	    field(&s, end, tmp, sizeof tmp) < 0 ||                       /* root */
	    field(&s, end, m->point, sizeof m->point) < 0)
		return -EINVAL;
	do {                                                              /* options, optional fields */
		if (field(&s, end, tmp, sizeof tmp) < 0)
			return -EINVAL;
	} while (strcmp(tmp, "-") != 0);
	if (field(&s, end, m->fstype, sizeof m->fstype) < 0 ||
	    field(&s, end, m->source, sizeof m->source) < 0)
		return -EINVAL;
	return 0;
}

/* Mount point `point` contains path (equal, or a prefix followed by '/'). */
static size_t covers(const char *point, const char *path)
{
	size_t n = strlen(point);

	if (n == 1 && point[0] == '/')
		return path[0] == '/' ? 1 : 0;
	if (strncmp(point, path, n) != 0 || (path[n] != '\0' && path[n] != '/'))
		return 0;
	return n;
}

int mountinfo_find(const char *text, size_t len, unsigned major, unsigned minor,
		   const char *path, struct mount_entry *out)
{
	const char *p = text, *end = text + len;
	struct mount_entry m;
	size_t best = 0;
	int found = 0;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		if (parse_entry(p, eol, &m) == 0) {
			/* The last matching line wins: later mounts shadow earlier ones. */
			if (m.major == major && m.minor == minor) {
				*out = m;
				found = 2;
			} else if (found < 2 && path) {
				size_t n = covers(m.point, path);
				if (n && n >= best) {
					best = n;
					*out = m;
					found = 1;
				}
			}
		}
		p = eol + 1;
	}
	return found ? 0 : -ENOENT;
}
