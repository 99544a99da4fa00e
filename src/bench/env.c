/* SPDX-License-Identifier: MIT */
/* The report's header: what a reader of a forum post needs to compare two
 * boxes (ferry's version, kernel, CPU, the network links' speed). */
#include "bench/bench.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "bench/sysfs.h"

/* The value of the first "key : value" line of /proc/cpuinfo with this key. */
static int cpuinfo(const char *text, const char *key, char *out, size_t cap)
{
	size_t klen = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (strncmp(p, key, klen) != 0 || (p[klen] != ' ' && p[klen] != '\t' && p[klen] != ':'))
			continue;
		const char *v = strchr(p, ':'), *nl = strchr(p, '\n');
		if (!v || (nl && v > nl))
			continue;
		for (v++; *v == ' ' || *v == '\t'; v++)
			;
		size_t n = nl ? (size_t)(nl - v) : strlen(v);
		snprintf(out, cap, "%.*s", (int)n, v);
		return out[0] ? 0 : -1;
	}
	return -1;
}

/* x86 and some ARM kernels say "model name"; 32-bit ARM "Hardware"; MIPS
 * "cpu model" and, for the SoC, "system type". The board (a Raspberry Pi's
 * revision) comes from the device tree. */
static void cpu_model(char *out, size_t cap)
{
	char a[96] = "", b[96] = "", board[96] = "";
	size_t len;
	char *text = sysfs_slurp("/proc/cpuinfo", 1u << 20, &len);

	if (text) {
		if (cpuinfo(text, "model name", a, sizeof a) < 0 && cpuinfo(text, "cpu model", a, sizeof a) < 0)
			cpuinfo(text, "Hardware", a, sizeof a);
		cpuinfo(text, "system type", b, sizeof b);
	}
	if (sysfs_read(board, sizeof board, "/proc/device-tree/model") < 0)
		sysfs_read(board, sizeof board, "/sys/firmware/devicetree/base/model");
	snprintf(out, cap, "%.64s%s%.40s%s%.48s", a[0] ? a : "unknown CPU", b[0] ? ", " : "", b,
		 board[0] ? ", " : "", board);
	free(text);
}

/* Interfaces that are up and say their speed: "eth0 1000 Mb/s, eth1 100 Mb/s". */
static void link_speeds(char *out, size_t cap)
{
	char state[16], speed[16];
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir("/sys/class/net");

	out[0] = '\0';
	if (!d)
		return;
	while ((de = readdir(d)) && n + 1 < cap) {
		if (de->d_name[0] == '.' || strcmp(de->d_name, "lo") == 0)
			continue;
		if (sysfs_read(state, sizeof state, "/sys/class/net/%s/operstate", de->d_name) < 0 ||
		    strcmp(state, "up") != 0)
			continue;
		/* Virtual links (bridges, tunnels, virtio) refuse to say, or say -1. */
		if (sysfs_read(speed, sizeof speed, "/sys/class/net/%s/speed", de->d_name) < 0 ||
		    speed[0] == '-' || strcmp(speed, "0") == 0)
			speed[0] = '\0';
		int w = snprintf(out + n, cap - n, "%s%s %s%s", n ? ", " : "", de->d_name,
				 speed[0] ? speed : "(speed not reported)", speed[0] ? " Mb/s" : "");
		if (w < 0 || (size_t)w >= cap - n)
			break;
		n += (size_t)w;
	}
	closedir(d);
}

/* The command line, quoted where a shell would need it. */
static void command_line(char *out, size_t cap, int argc, char **argv)
{
	size_t n = (size_t)snprintf(out, cap, "ferry");

	for (int i = 0; i < argc && n < cap; i++) {
		const char *a = argv[i];
		int plain = a[0] && strspn(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					       "0123456789-_./:=,+@%") == strlen(a);
		int w = snprintf(out + n, cap - n, plain ? " %s" : " '%s'", a);
		if (w < 0)
			break;
		n += (size_t)w;
	}
}

void bench_env_collect(struct bench_env *e, int argc, char **argv)
{
	struct utsname u;

	memset(e, 0, sizeof *e);
	command_line(e->command, sizeof e->command, argc, argv);
	snprintf(e->version, sizeof e->version, "%s", FERRY_VERSION);
	if (uname(&u) == 0)
		snprintf(e->kernel, sizeof e->kernel, "%.16s %.60s %.16s", u.sysname, u.release, u.machine);
	cpu_model(e->cpu, sizeof e->cpu);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	e->cpus = n > 0 ? (int)n : 1;
	link_speeds(e->link, sizeof e->link);
}
