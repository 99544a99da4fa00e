/* qemu-insncount.c -- qemu TCG plugin: guest instructions executed by one qemu-user process.
 *
 * Build (bench/insns.sh does this; qemu-plugin.h comes from Debian's qemu source package):
 *   cc -O2 -shared -fPIC -I DIR_WITH_QEMU_PLUGIN_H -o libinsncount.so qemu-insncount.c
 * Use:
 *   qemu-mipsel -plugin ./libinsncount.so,out=PREFIX -L SYSROOT ./prog ...
 * Every process keeps one line "insns=N pid=P ppid=Q" in the file PREFIX.PID (stderr at exit
 * without out=). The line is rewritten at every system call the guest makes and at exit, so a
 * daemon killed by a signal (qemu runs no exit callbacks then) still leaves its count as of
 * its last system call, which for an idle server is the count up to where it blocked.
 * A forked child starts again from 0 with its own file, so a forking daemon's listener and
 * each per-connection child report only their own instructions; sum the files of the tree.
 * Counts are of whole translated blocks (inline add of the block's length when it starts),
 * user space only: system calls run natively in the host kernel and are not counted. */
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

static uint64_t insns;
static char out_prefix[4000];
static int out_fd = -1;
static uint64_t last_written = UINT64_MAX;

static void save(void)
{
    char line[128];
    int n;

    if (!out_prefix[0] || insns == last_written)
        return;
    if (out_fd < 0) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", out_prefix, (int)getpid());
        out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (out_fd < 0)
            return;
    }
    /* fixed width, so that a shorter number never leaves a stale tail */
    n = snprintf(line, sizeof line, "insns=%020" PRIu64 " pid=%d ppid=%d\n", insns,
                 (int)getpid(), (int)getppid());
    if (pwrite(out_fd, line, (size_t)n, 0) == n)
        last_written = insns;
}

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1,
                       uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                       uint64_t a7, uint64_t a8)
{
    (void)id; (void)vcpu; (void)num; (void)a1; (void)a2; (void)a3; (void)a4; (void)a5;
    (void)a6; (void)a7; (void)a8;
    save();
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insns,
                                             qemu_plugin_tb_n_insns(tb));
}

static void in_forked_child(void)
{
    insns = 0;
    out_fd = -1;                 /* the parent's file stays the parent's */
    last_written = UINT64_MAX;
}

static void on_exit_report(qemu_plugin_id_t id, void *unused)
{
    (void)id;
    (void)unused;
    if (out_prefix[0])
        save();
    else
        fprintf(stderr, "insns=%" PRIu64 " pid=%d ppid=%d\n", insns, (int)getpid(),
                (int)getppid());
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    (void)info;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0)
            snprintf(out_prefix, sizeof out_prefix, "%s", argv[i] + 4);
        else {
            fprintf(stderr, "insncount: unknown argument %s\n", argv[i]);
            return -1;
        }
    }
    pthread_atfork(NULL, NULL, in_forked_child);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
    qemu_plugin_register_atexit_cb(id, on_exit_report, NULL);
    return 0;
}
