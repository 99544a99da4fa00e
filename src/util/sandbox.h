/* SPDX-License-Identifier: MIT */
/* A daemon session's confinement once it knows its module: no new
 * privileges (no setuid program can give any back), Landlock limiting the
 * file system to the module's tree (read-only for a session that only
 * reads) and no TCP connect or bind, and a seccomp allow-list of the system
 * calls a transfer makes. Each part is used where the kernel (and the
 * build) has it and reported once at start where it does not. */
#ifndef FERRY_UTIL_SANDBOX_H
#define FERRY_UTIL_SANDBOX_H

struct sandbox_caps {
	int landlock_abi;   /* 0: the kernel has no Landlock */
	int seccomp;        /* 1: built with libseccomp and the kernel has filters */
};

/* What this kernel and build offer. */
void sandbox_probe(struct sandbox_caps *c);
/* One line for the log: what a session gets. */
void sandbox_describe(const struct sandbox_caps *c, char *out, unsigned cap);
/* What a session may do to its tree. */
enum sandbox_tree {
	SANDBOX_READ,           /* read it */
	SANDBOX_READ_SCRATCH,   /* read it and remove what is in it (a snapshot
				 * view: its session's own links, fs/snapview.h) */
	SANDBOX_WRITE,          /* change it */
};

/* Confines the calling process for good: module_fd is the module's
 * directory (O_PATH is enough), `tree` what it may do there,
 * devices whether it may create device nodes (a root receiver asked for -D
 * without fake super; otherwise only FIFOs, sockets and files).
 * Nothing outside the tree can be opened afterwards, so whatever the
 * session still needs from outside (the user database, syslog's socket)
 * must be open or read before; sysinfo: ferry bench, which also reads
 * /proc/diskstats, the mount table, /sys, /proc/cpuinfo and the device tree. 0, or <0 with
 * err_msg() when a part the kernel offers could not be set up (the caller
 * must not go on then). */
int sandbox_enter(const struct sandbox_caps *c, int module_fd, enum sandbox_tree tree, int devices,
		  int sysinfo);

#ifdef FERRY_TEST_HOOKS
/* Test builds only: tries to escape in the named way ("open": reads
 * /etc/passwd, "create": makes a file in /tmp, "connect": a TCP connection
 * to 127.0.0.1:PORT given as "connect:PORT", "exec": runs /bin/true,
 * "module": makes a file in the module, which only a receiving session may,
 * "mknod": makes a character device in it, which only a root session
 * receiving -D may: any other dies, mknod of a device being outside its list)
 * and logs what happened. "exec" is not in the allow-list: the session dies. */
void sandbox_test_escape(const char *how, int module_fd);
#endif

#endif
