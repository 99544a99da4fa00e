/* SPDX-License-Identifier: MIT */
#include "util/sandbox.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifdef FERRY_HAVE_SECCOMP
#include <seccomp.h>
#endif

#include "util/err.h"
#include "util/log.h"

/* Landlock's ABI, spelled out here: Debian 12's and older OpenWrt kernel
 * headers lack the newer fields, and the kernel takes the larger struct as
 * long as what it does not know is zero. */
struct ll_ruleset_attr {
	uint64_t handled_fs;
	uint64_t handled_net;
	uint64_t scoped;
};
struct ll_path_beneath {
	uint64_t allowed;
	int32_t parent_fd;
} __attribute__((packed));

#define LL_VERSION 1u              /* LANDLOCK_CREATE_RULESET_VERSION */
#define LL_RULE_PATH_BENEATH 1
#define LL_FS_EXECUTE (1ull << 0)
#define LL_FS_READ_FILE (1ull << 2)
#define LL_FS_READ_DIR (1ull << 3)
#define LL_FS_REMOVE_DIR (1ull << 4)
#define LL_FS_REMOVE_FILE (1ull << 5)
#define LL_NET_BIND_TCP (1ull << 0)
#define LL_NET_CONNECT_TCP (1ull << 1)
#define LL_SCOPE_ABSTRACT_UNIX (1ull << 0)
#define LL_SCOPE_SIGNAL (1ull << 1)

#ifdef SYS_landlock_create_ruleset
static long ll_create(const struct ll_ruleset_attr *a, size_t size, uint32_t flags)
{
	return syscall(SYS_landlock_create_ruleset, a, size, flags);
}
#endif

void sandbox_probe(struct sandbox_caps *c)
{
	memset(c, 0, sizeof *c);
#ifdef SYS_landlock_create_ruleset
	long abi = ll_create(NULL, 0, LL_VERSION);
	c->landlock_abi = abi > 0 ? (int)abi : 0;
#endif
#ifdef FERRY_HAVE_SECCOMP
	/* filters need the kernel's CONFIG_SECCOMP_FILTER; qemu-user refuses them */
	c->seccomp = prctl(PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 && seccomp_api_get() >= 1;
#endif
}

void sandbox_describe(const struct sandbox_caps *c, char *out, unsigned cap)
{
	char ll[160];

	if (c->landlock_abi)
		snprintf(ll, sizeof ll, "Landlock ABI %d (the module's tree only%s%s)", c->landlock_abi,
			 c->landlock_abi >= 4 ? ", no TCP connect or bind" : "",
			 c->landlock_abi == 1 ? "; not for pushes: ABI 1 refuses renames across directories" : "");
	else
		snprintf(ll, sizeof ll, "no Landlock (this kernel has none)");
	snprintf(out, cap, "sandbox per session: no new privileges, %s, %s", ll,
#ifdef FERRY_HAVE_SECCOMP
		 c->seccomp ? "a seccomp allow-list" : "no seccomp (this kernel has no filters)"
#else
		 "no seccomp (built without libseccomp)"
#endif
	);
}

/* Every access right this ABI knows, for the ruleset to handle. */
static uint64_t fs_rights(int abi)
{
	uint64_t r = (1ull << 13) - 1;   /* ABI 1: execute .. make_sym */

	if (abi >= 2)
		r |= 1ull << 13;   /* refer: renames and links across directories */
	if (abi >= 3)
		r |= 1ull << 14;   /* truncate */
	if (abi >= 5)
		r |= 1ull << 15;   /* ioctl on devices */
	return r;
}

#define LL_FS_MAKE_CHAR (1ull << 6)
#define LL_FS_MAKE_BLOCK (1ull << 11)

#ifdef SYS_landlock_create_ruleset
/* ferry bench's disk stage names the device and checks what it really
 * wrote, and its header names the box: it reads /proc/diskstats, the mount
 * table, /sys, /proc/cpuinfo and the device tree's model, read-only. */
static int allow_sysinfo(int rs)
{
	static const char *const paths[] = { "/proc/diskstats", "/proc/self/mountinfo", "/sys",
					     "/proc/cpuinfo", "/proc/device-tree" };
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < sizeof paths / sizeof *paths; i++) {
		struct stat st;
		int fd = open(paths[i], O_PATH | O_CLOEXEC);
		if (fd < 0)
			continue;   /* not there: that figure is "unverified" */
		struct ll_path_beneath pb = { .parent_fd = fd, .allowed = LL_FS_READ_FILE };
		if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
			pb.allowed |= LL_FS_READ_DIR;
		if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
			rc = err_sys(-errno, "sandbox: landlock_add_rule for %s", paths[i]);
		close(fd);
	}
	return rc;
}
#endif

static int landlock(int abi, int module_fd, enum sandbox_tree tree, int devices, int sysinfo)
{
#ifdef SYS_landlock_create_ruleset
	struct ll_ruleset_attr a = { .handled_fs = fs_rights(abi) };
	struct ll_path_beneath pb = { .parent_fd = module_fd };
	int rs, rc = 0;

	if (abi >= 4)
		a.handled_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;   /* and no rule allows them */
	if (abi >= 6)
		a.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	pb.allowed = tree == SANDBOX_WRITE ? a.handled_fs & ~LL_FS_EXECUTE : LL_FS_READ_FILE | LL_FS_READ_DIR;
	if (tree == SANDBOX_READ_SCRATCH)
		pb.allowed |= LL_FS_REMOVE_DIR | LL_FS_REMOVE_FILE;
	if (!devices)
		pb.allowed &= ~(LL_FS_MAKE_CHAR | LL_FS_MAKE_BLOCK);
	if ((rs = (int)ll_create(&a, sizeof a, 0)) < 0)
		return err_sys(-errno, "sandbox: landlock_create_ruleset");
	if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		rc = err_sys(-errno, "sandbox: landlock_add_rule for the module");
	else if (sysinfo && (rc = allow_sysinfo(rs)) < 0)
		;
	else if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		rc = err_sys(-errno, "sandbox: landlock_restrict_self");
	close(rs);
	return rc;
#else
	(void)abi;
	(void)module_fd;
	(void)tree;
	(void)devices;
	(void)sysinfo;
	return 0;
#endif
}

#ifdef FERRY_HAVE_SECCOMP
/* What a transfer calls (the libc's spellings of it on every architecture:
 * names this one does not have are skipped). */
static const char *const allowed[] = {
	"read", "write", "readv", "writev", "pread64", "pwrite64", "preadv", "pwritev",
	"lseek", "_llseek", "close", "open", "openat", "openat2", "fstat", "fstat64", "stat",
	"stat64", "lstat", "lstat64", "newfstatat", "fstatat64", "statx", "fstatfs", "fstatfs64",
	"statfs", "statfs64", "getdents", "getdents64", "dup", "dup2", "dup3",
	"mkdir", "mkdirat", "unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat", "readlink", "readlinkat",
	"chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "fchownat", "lchown",
	"chown32", "fchown32", "lchown32", "utimensat", "utimensat_time64", "futimesat",
	"setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr", "fgetxattr",
	"listxattr", "llistxattr", "flistxattr", "removexattr", "lremovexattr", "fremovexattr",
	"ftruncate", "ftruncate64", "fallocate", "fsync", "fdatasync", "syncfs", "sync_file_range",
	"sync_file_range2", "flock", "fadvise64", "fadvise64_64", "arm_fadvise64_64", "readahead",
	"copy_file_range", "sendfile", "sendfile64", "splice", "tee", "pipe", "pipe2",
	"poll", "ppoll", "ppoll_time64", "select", "_newselect", "pselect6", "pselect6_time64",
	"recvfrom", "sendto", "recvmsg", "sendmsg", "recv", "send", "shutdown", "getsockopt",
	"setsockopt", "getsockname", "getpeername",
	"mmap", "mmap2", "munmap", "mremap", "mprotect", "brk", "madvise",
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "sigreturn", "sigaltstack",
	"clock_gettime", "clock_gettime64", "clock_getres", "clock_nanosleep",
	"clock_nanosleep_time64", "nanosleep", "gettimeofday", "time",
	"getpid", "gettid", "getppid", "getuid", "geteuid", "getgid", "getegid", "getuid32",
	"geteuid32", "getgid32", "getegid32", "getresuid", "getresgid", "getresuid32",
	"getresgid32", "getgroups", "getgroups32", "getrlimit", "ugetrlimit",
	"getrusage", "sysinfo", "umask", "uname", "sched_yield", "getrandom", "futex", "futex_time64",
	"set_robust_list", "rseq", "restart_syscall", "exit", "exit_group",
#ifdef FERRY_SANITIZE_BUILD
	/* the sanitizers' runtime (test builds) */
	"prctl", "sched_getaffinity",
#endif
};

/* A trapped call ends the session with a line saying which (the daemon
 * then logs the signal). Only async-signal-safe calls here. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
	char msg[96] = "ferry: sandbox: system call ";
	char num[16];
	int n = si->si_syscall, i = 0;
	size_t l = strlen(msg);

	(void)uc;
	do {
		num[i++] = (char)('0' + n % 10);
		n /= 10;
	} while (n && i < (int)sizeof num);
	while (i)
		msg[l++] = num[--i];
	memcpy(msg + l, " is not allowed: session ended\n", 31);
	l += 31;
	if (write(2, msg, l) < 0) {
		/* nothing left to tell */
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static int seccomp_filter(int devices)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);

	if (ctx && seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0) < 0) {   /* set by sandbox_enter */
		seccomp_release(ctx);
		return err_set(-EINVAL, "sandbox: seccomp attribute");
	}
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	int rc = 0, nr;

	if (!ctx)
		return err_set(-ENOMEM, "sandbox: seccomp_init failed");
	for (size_t i = 0; rc == 0 && i < sizeof allowed / sizeof *allowed; i++)
		if ((nr = seccomp_syscall_resolve_name(allowed[i])) != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	/* A socket or connection refused, not fatal: libc's syslog tries to
	 * reconnect when syslogd restarts (the message is lost, the session goes on). */
	/* (libseccomp maps these onto socketcall where the architecture has it) */
	static const char *const refused[] = { "socket", "connect", "bind", "listen", "accept",
					       "accept4" };
	for (size_t i = 0; rc == 0 && i < sizeof refused / sizeof *refused; i++)
		if ((nr = seccomp_syscall_resolve_name(refused[i])) != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0);
	/* signals to itself only (abort, raise) */
	static const char *const self_only[] = { "kill", "tgkill", "tkill" };
	/* spelled out: clang's -Wmissing-field-initializers objects to SCMP_A0 */
	const struct scmp_arg_cmp self = { .arg = 0, .op = SCMP_CMP_EQ,
					   .datum_a = (scmp_datum_t)getpid(), .datum_b = 0 };
	for (size_t i = 0; rc == 0 && i < sizeof self_only / sizeof *self_only; i++)
		if ((nr = seccomp_syscall_resolve_name(self_only[i])) != __NR_SCMP_ERROR)
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &self);
	/* fcntl: what ferry and libc use; not F_SETOWN or F_SETSIG, which would let
	 * the session signal other processes through its socket */
	static const int fcntl_cmds[] = { F_GETFD, F_SETFD, F_GETFL, F_SETFL, F_DUPFD,
					  F_DUPFD_CLOEXEC, F_GETPIPE_SZ, F_SETPIPE_SZ, F_GETLK, F_SETLK,
					  F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW };
	static const char *const fcntls[] = { "fcntl", "fcntl64" };
	for (size_t i = 0; rc == 0 && i < sizeof fcntls / sizeof *fcntls; i++) {
		if ((nr = seccomp_syscall_resolve_name(fcntls[i])) == __NR_SCMP_ERROR)
			continue;
		for (size_t k = 0; rc == 0 && k < sizeof fcntl_cmds / sizeof *fcntl_cmds; k++) {
			const struct scmp_arg_cmp cmd = { .arg = 1, .op = SCMP_CMP_EQ,
							  .datum_a = (scmp_datum_t)fcntl_cmds[k], .datum_b = 0 };
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &cmd);
		}
	}
	/* limits of itself only (pid 0) */
	const struct scmp_arg_cmp pid0 = { .arg = 0, .op = SCMP_CMP_EQ, .datum_a = 0, .datum_b = 0 };
	if (rc == 0 && (nr = seccomp_syscall_resolve_name("prlimit64")) != __NR_SCMP_ERROR)
		rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &pid0);
	/* its own CPU and I/O priority only (who = 0): a prune after a push
	 * lowers them (session/snapshots.c) */
	const struct scmp_arg_cmp who0 = { .arg = 1, .op = SCMP_CMP_EQ, .datum_a = 0, .datum_b = 0 };
	static const char *const prio[] = { "setpriority", "ioprio_set" };
	for (size_t i = 0; rc == 0 && i < sizeof prio / sizeof *prio; i++)
		if ((nr = seccomp_syscall_resolve_name(prio[i])) != __NR_SCMP_ERROR)
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &who0);
	/* mknod: FIFOs, sockets and regular files; devices only when the session
	 * may make them (a root daemon receiving -D without fake super) */
	static const unsigned node_types[] = { S_IFIFO, S_IFSOCK, S_IFREG, S_IFCHR, S_IFBLK };
	static const struct { const char *name; unsigned arg; } mknods[] = { { "mknod", 1 },
									  { "mknodat", 2 } };
	for (size_t i = 0; rc == 0 && i < sizeof mknods / sizeof *mknods; i++) {
		if ((nr = seccomp_syscall_resolve_name(mknods[i].name)) == __NR_SCMP_ERROR)
			continue;
		for (size_t k = 0; rc == 0 && k < (devices ? 5u : 3u); k++) {
			const struct scmp_arg_cmp type = { .arg = mknods[i].arg, .op = SCMP_CMP_MASKED_EQ,
							   .datum_a = S_IFMT, .datum_b = node_types[k] };
			rc = seccomp_rule_add_array(ctx, SCMP_ACT_ALLOW, nr, 1, &type);
		}
	}
	if (rc == 0 && sigaction(SIGSYS, &sa, NULL) < 0)
		rc = -errno;
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc < 0 ? err_set(rc, "sandbox: seccomp filter: %s", strerror(-rc)) : 0;
}
#endif

int sandbox_enter(const struct sandbox_caps *c, int module_fd, enum sandbox_tree tree, int devices,
		  int sysinfo)
{
	int rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(-errno, "sandbox: no_new_privs");
	/* no core file with the session's keys and data in it (SIGSYS dumps) */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return err_sys(-errno, "sandbox: not dumpable");
	/* ABI 1 refuses every rename and link across directories (EXDEV), which
	 * --backup-dir and -H need: a receiving session goes without Landlock there */
	if (c->landlock_abi && !(c->landlock_abi == 1 && tree == SANDBOX_WRITE) &&
	    (rc = landlock(c->landlock_abi, module_fd, tree, devices, sysinfo)) < 0)
		return rc;
#ifdef FERRY_HAVE_SECCOMP
	if (c->seccomp && (rc = seccomp_filter(devices)) < 0)
		return rc;
#else
	(void)devices;
#endif
	return 0;
}

#ifdef FERRY_TEST_HOOKS
static int sandbox_test_connect(const char *port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), rc;

	if (fd < 0)
		return -1;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
	int e = errno;
	close(fd);
	errno = e;
	return rc;
}

void sandbox_test_escape(const char *how, int module_fd)
{
	int fd;

	if (!how || !*how)
		return;
	if (!strcmp(how, "mknod")) {
		log_warn("escape test: mknod a character device in the module");
		int r = mknodat(module_fd, ".ferry-escape-dev", S_IFCHR | 0600, makedev(1, 3));
		log_warn("escape test: mknod a character device in the module: %s",
			 r == 0 ? "created" : strerror(errno));
		if (r == 0)
			unlinkat(module_fd, ".ferry-escape-dev", 0);
		fd = -1;
	} else if (!strcmp(how, "module")) {
		fd = openat(module_fd, ".ferry-escape-test", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		log_warn("escape test: create .ferry-escape-test in the module: %s",
			 fd >= 0 ? "created" : strerror(errno));
		if (fd >= 0)
			unlinkat(module_fd, ".ferry-escape-test", 0);
	} else if (!strcmp(how, "open")) {
		fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
		log_warn("escape test: open /etc/passwd: %s", fd >= 0 ? "opened" : strerror(errno));
	} else if (!strcmp(how, "create")) {
		fd = open("/tmp/ferry-escape-test", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
		log_warn("escape test: create /tmp/ferry-escape-test: %s",
			 fd >= 0 ? "created" : strerror(errno));
	} else if (!strncmp(how, "connect:", 8)) {
		log_warn("escape test: connect to 127.0.0.1:%s: %s", how + 8,
			 sandbox_test_connect(how + 8) == 0 ? "connected" : strerror(errno));
		fd = -1;
	} else if (!strcmp(how, "exec")) {
		log_warn("escape test: exec /bin/true");
		char *const argv[] = { "true", NULL };
		execv("/bin/true", argv);
		log_warn("escape test: exec /bin/true: %s", strerror(errno));
		fd = -1;
	} else {
		log_warn("escape test: unknown kind '%s'", how);
		fd = -1;
	}
	if (fd >= 0)
		close(fd);
}
#endif
