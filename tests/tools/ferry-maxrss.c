/* SPDX-License-Identifier: MIT */
/* ferry-maxrss OUTFILE CMD ARGS...: runs CMD, writes its peak resident set
 * (ru_maxrss, KiB) to OUTFILE, and exits as CMD did (128 + the signal when
 * it was killed), so a test can bound a command's memory without GNU time. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static int write_rss(const char *path, long kib)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "%ld\n", kib);
	return fclose(f) == 0 ? 0 : -errno;
}

static volatile pid_t child = -1;

/* A test stops the daemon through this wrapper: pass the signal on, so the
 * child exits its own way and is still waited for. */
static void forward(int sig)
{
	if (child > 0)
		kill(child, sig);
}

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid, w;

	if (argc < 3) {
		fprintf(stderr, "usage: ferry-maxrss OUTFILE CMD [ARGS...]\n");
		return 1;
	}
	if ((pid = fork()) < 0) {
		fprintf(stderr, "ferry-maxrss: fork: %s\n", strerror(errno));
		return 1;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		fprintf(stderr, "ferry-maxrss: %s: %s\n", argv[2], strerror(errno));
		_exit(127);   /* the shell's "command not found" */
	}
	child = pid;
	struct sigaction sa = { .sa_handler = forward };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	while ((w = wait4(pid, &status, 0, &ru)) < 0 && errno == EINTR)
		;
	if (w < 0) {
		fprintf(stderr, "ferry-maxrss: wait4: %s\n", strerror(errno));
		return 1;
	}
	int rc = write_rss(argv[1], ru.ru_maxrss);
	if (rc < 0) {
		fprintf(stderr, "ferry-maxrss: %s: %s\n", argv[1], strerror(-rc));
		return 1;
	}
	return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : WEXITSTATUS(status);
}
