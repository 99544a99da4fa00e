/* SPDX-License-Identifier: MIT */
#include "bench/diskstats.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "util/err.h"

/* A line: major minor name reads merged sectors ms writes merged sectors ...
 * (kernels since 4.18 and 5.5 append discard and flush fields: ignored). */
static int parse_line(const char *line, unsigned major, unsigned minor, struct diskstat *out)
{
	unsigned ma, mi;
	uint64_t f[7];
	char name[32];
	int n;

	n = sscanf(line, " %u %u %31s %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		   " %" SCNu64 " %" SCNu64, &ma, &mi, name, &f[0], &f[1], &f[2], &f[3], &f[4],
		   &f[5], &f[6]);
	if (n < 2 || ma != major || mi != minor)
		return -ENOENT;
	if (n < 10)
		return -EINVAL;
	memset(out, 0, sizeof *out);
	snprintf(out->name, sizeof out->name, "%s", name);
	out->reads = f[0];
	out->sectors_read = f[2];
	out->writes = f[4];
	out->sectors_written = f[6];
	return 0;
}

int diskstats_parse(const char *text, size_t len, unsigned major, unsigned minor,
		    struct diskstat *out)
{
	char line[512];
	size_t i = 0;

	while (i < len) {
		size_t j = i;
		while (j < len && text[j] != '\n')
			j++;
		size_t n = j - i < sizeof line - 1 ? j - i : sizeof line - 1;
		memcpy(line, text + i, n);
		line[n] = '\0';
		int rc = parse_line(line, major, minor, out);
		if (rc != -ENOENT)
			return rc;
		i = j + 1;
	}
	return -ENOENT;
}

int diskstats_read(const char *file, unsigned major, unsigned minor, struct diskstat *out)
{
	char line[512];
	int rc = -ENOENT;
	FILE *f = fopen(file, "re");

	if (!f)
		return err_sys(-errno, "%s", file);
	while (rc == -ENOENT && fgets(line, sizeof line, f))
		rc = parse_line(line, major, minor, out);
	fclose(f);
	if (rc == -EINVAL)
		return err_set(rc, "%s: malformed line for device %u:%u", file, major, minor);
	if (rc < 0)
		return err_set(rc, "%s: no device %u:%u", file, major, minor);
	return 0;
}
