/* SPDX-License-Identifier: MIT */
#include "util/sandbox.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/socket.h>
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
	char ll[96];

	if (c->landlock_abi)
		snprintf(ll, sizeof ll, "Landlock ABI %d (the module's tree only%s)", c->landlock_abi,
			 c->landlock_abi >= 4 ? ", no TCP connect or bind" : "");
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

static int landlock(int abi, int module_fd, int writable)
{
#ifdef SYS_landlock_create_ruleset
	struct ll_ruleset_attr a = { .handled_fs = fs_rights(abi) };
	struct ll_path_beneath pb = { .parent_fd = module_fd };
	int rs, rc = 0;

	if (abi >= 4)
		a.handled_net = LL_NET_BIND_TCP | LL_NET_CONNECT_TCP;   /* and no rule allows them */
	if (abi >= 6)
		a.scoped = LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL;
	pb.allowed = writable ? a.handled_fs & ~LL_FS_EXECUTE : LL_FS_READ_FILE | LL_FS_READ_DIR;
	if ((rs = (int)ll_create(&a, sizeof a, 0)) < 0)
		return err_sys(-errno, "sandbox: landlock_create_ruleset");
	if (syscall(SYS_landlock_add_rule, rs, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
		rc = err_sys(-errno, "sandbox: landlock_add_rule for the module");
	else if (syscall(SYS_landlock_restrict_self, rs, 0) < 0)
		rc = err_sys(-errno, "sandbox: landlock_restrict_self");
	close(rs);
	return rc;
#else
	(void)abi;
	(void)module_fd;
	(void)writable;
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
	"statfs", "statfs64", "getdents", "getdents64", "fcntl", "fcntl64", "dup", "dup2", "dup3",
	"mkdir", "mkdirat", "unlink", "unlinkat", "rmdir", "rename", "renameat", "renameat2",
	"link", "linkat", "symlink", "symlinkat", "readlink", "readlinkat", "mknod", "mknodat",
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
	"getresgid32", "getgroups", "getgroups32", "getrlimit", "ugetrlimit", "prlimit64",
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

static int seccomp_filter(void)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_TRAP);
	struct sigaction sa = { .sa_sigaction = on_sigsys, .sa_flags = SA_SIGINFO };
	int rc = 0, nr;

	if (!ctx)
		return err_set(-ENOMEM, "sandbox: seccomp_init failed");
	for (size_t i = 0; rc == 0 && i < sizeof allowed / sizeof *allowed; i++)
		if ((nr = seccomp_syscall_resolve_name(allowed[i])) != __NR_SCMP_ERROR)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	/* A socket or connection refused, not fatal: libc's syslog tries to
	 * reconnect when syslogd restarts (the message is lost, the session goes on). */
	static const char *const refused[] = { "socket", "socketcall", "connect", "bind", "listen",
					       "accept", "accept4" };
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
	if (rc == 0 && sigaction(SIGSYS, &sa, NULL) < 0)
		rc = -errno;
	if (rc == 0)
		rc = seccomp_load(ctx);
	seccomp_release(ctx);
	return rc < 0 ? err_set(rc, "sandbox: seccomp filter: %s", strerror(-rc)) : 0;
}
#endif

int sandbox_enter(const struct sandbox_caps *c, int module_fd, int writable)
{
	int rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return err_sys(-errno, "sandbox: no_new_privs");
	if (c->landlock_abi && (rc = landlock(c->landlock_abi, module_fd, writable)) < 0)
		return rc;
#ifdef FERRY_HAVE_SECCOMP
	if (c->seccomp && (rc = seccomp_filter()) < 0)
		return rc;
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
	if (!strcmp(how, "module")) {
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
