/* SPDX-License-Identifier: MIT */
/* ferry bench: what this box's disk and CPU can do, measured the way ferry
 * uses them (docs/BENCH.md). A run fills one struct bench_report. It holds
 * no pointers, only fixed-size fields, so that `ferry serve` can later run
 * the same disk code on a module (bench_disk_run_at on the jail's root fd)
 * and send the struct back field by field; the writers (table, JSON, SVG)
 * then run on the client, whoever measured. */
#ifndef FERRY_BENCH_BENCH_H
#define FERRY_BENCH_BENCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_SCHEMA "ferry-bench/1"
#define BENCH_MAX_STAGES 24u
#define BENCH_MAX_SAMPLES 160u     /* of BENCH_SAMPLE_S each: 80 s of one stage */
#define BENCH_SAMPLE_S 0.5
#define BENCH_CACHED_BELOW 0.95    /* device bytes / bytes done under this: "cached" */

enum bench_kind { BENCH_DISK = 0, BENCH_CRYPTO = 1, BENCH_REMOTE = 2 };
/* A stage's rate is bytes/s (shown as MB/s, 10^6), operations/s or files/s. */
enum bench_unit { BENCH_MBPS = 0, BENCH_IOPS = 1, BENCH_FILES = 2 };

enum bench_verdict {
	BENCH_DEVICE = 0,      /* the block device did at least 95 % of it */
	BENCH_CACHED = 1,      /* it did less: a cache absorbed the rest, not the disk's speed */
	BENCH_MEMORY = 2,      /* tmpfs, ramfs, zram: the "device" is memory */
	BENCH_UNVERIFIED = 3,  /* no block device in /proc/diskstats to check against */
	BENCH_CPU = 4,         /* crypto: no device involved */
	BENCH_NETWORK = 5,     /* a remote run's network or end-to-end stage: see its CPU figures */
};

/* A cache cliff found in the BENCH_SAMPLE_S samples (series.c). */
struct bench_cliff {
	int found;
	double burst;          /* median rate before the cliff (stage's unit) */
	double sustained;      /* median rate after it (or the whole stage's, if none) */
	uint64_t bytes;        /* bytes done before the cliff */
	double at_s;           /* seconds into the stage */
};

struct bench_stage {
	char name[32];         /* JSON key: "seq_write", "aesgcm_openssl_integrity", ... */
	char label[40];        /* for people: "sequential write" */
	enum bench_unit unit;
	enum bench_verdict verdict;
	char method[48];       /* "O_DIRECT", "buffered+fdatasync", "fadvise DONTNEED", ... */
	char note[128];        /* one short remark ("device wrote 12 %"), may be "" */
	double rate;           /* over the whole timed window, fdatasync included */
	double seconds;        /* the timed window */
	double sync_s;         /* of which the final fdatasync (what the device still owed) */
	uint64_t bytes;        /* payload bytes done in the window */
	uint64_t ops;          /* writes, reads, files or records */
	uint64_t dev_bytes;    /* what the block device did meanwhile (DEVICE/CACHED only) */
	struct bench_cliff cliff;
	uint32_t nsamples;
	float sample_s;        /* the samples' interval: BENCH_SAMPLE_S, or a crypto round's slice */
	float samples[BENCH_MAX_SAMPLES];   /* rate of each interval, stage's unit */
	char cipher[24], backend[16], mode[16];   /* crypto stages only */
	/* ferry bench HOST:MODULE's network and end-to-end stages: each side's
	 * CPU as a fraction of one core over the stage, the server's share of it
	 * in the kernel, and the sender's TCP_INFO: the fraction of its busy
	 * time the receive window or the send buffer limited it (-1: unknown) */
	float srv_cpu, cli_cpu, srv_sys_share;
	float srv_wait;        /* the server's time waiting for a CPU it wanted (quota, others) */
	float rwnd_frac, sndbuf_frac;
	float retrans_frac;    /* the sender's bytes sent again over those sent (-1: unknown) */
	uint32_t rcv_buf, snd_buf;   /* the receiver's SO_RCVBUF, the sender's SO_SNDBUF (0: ?) */
};

/* The verdict of a remote run, for one direction. */
struct bench_verdict_line {
	char stage[48];        /* "network", "server CPU (cipher)", "server disk", ... */
	char figures[240];     /* the figures that show it */
	char suggest[400];     /* what to change */
};

struct bench_remote_info {
	char server[300];      /* HOST:MODULE as given */
	char server_env[240];  /* "ferry 0.1.0 | Linux 6.6.73 mips | MIPS 24KEc V5.5 (1 CPU)" */
	char server_disk[200]; /* the module's file system and device, as the server says */
	char level[12];        /* the protection of the disk and end-to-end stages */
	char local[256];       /* where the client's test file was */
	double rtt_ms;         /* median of the pings */
	struct bench_verdict_line up, down;
};

struct bench_env {
	char command[256];     /* the command line as typed (shown in the header) */
	char version[24];
	char kernel[96];       /* "Linux 6.1.0-18-arm64 aarch64" */
	char cpu[160];         /* model name, and the board's model where the kernel says it */
	int cpus;
	char link[128];        /* "eth0 1000 Mb/s, wlan0 ?" or "" */
};

struct bench_target {      /* the disk run's directory */
	char path[256];
	char fstype[32];
	char device[32];       /* "sda1", "loop0", "" when none */
	char model[96];        /* "SanDisk Ultra Fit", "SD SL16G", "backing file /x.img", or "" */
	char usb[48];          /* "USB 480 Mb/s" when the device sits on USB, else "" */
	int memory;            /* tmpfs/ramfs/zram */
	int has_dev;           /* found in /proc/diskstats */
	uint64_t free_bytes;
	uint64_t size;         /* the test size */
};

struct bench_crypto_info {
	uint32_t record;       /* plaintext bytes per record (CHAN_MAX_PLAIN) */
	int hw_aes;            /* chan_have_hw_aes() */
	char backend[16];      /* the backend connections use */
	char picks[16];        /* the cipher a connection from here would get */
	char picks_why[96];
};

struct bench_report {
	enum bench_kind kind;
	struct bench_env env;
	struct bench_target target;
	struct bench_crypto_info crypto;
	struct bench_remote_info remote;
	double seconds_limit;
	double elapsed;
	uint32_t nstages;
	struct bench_stage stages[BENCH_MAX_STAGES];
};

/* What a running stage reports every BENCH_SAMPLE_S (for the progress line). */
struct bench_progress {
	const char *label;
	enum bench_unit unit;
	uint64_t done, goal;   /* units (bytes, ops, files) */
	double rate;           /* the last interval's, stage's unit */
	double elapsed;        /* seconds into the stage */
};
typedef void bench_progress_fn(void *ctx, const struct bench_progress *p);

struct bench_opts {
	uint64_t size;                   /* disk: test size in bytes; 0 = default */
	double seconds;                  /* the whole run's limit; 0 = default */
	volatile sig_atomic_t *stop;     /* set (by a signal handler) to stop early */
	bench_progress_fn *progress;     /* may be NULL */
	void *ctx;
};

#define BENCH_DEFAULT_SIZE (256ull << 20)
#define BENCH_DISK_SECONDS 60.0
#define BENCH_CRYPTO_SECONDS 8.0
#define BENCH_CRYPTO_ROUNDS 5      /* each cipher gets its time in this many slices */

/* Fills the header fields every report has (version, kernel, CPU, link). */
void bench_env_collect(struct bench_env *e, int argc, char **argv);

/* The disk stages in a temporary directory below dir (removed again, with
 * every file in it). 0, -EINTR when stopped, or <0 with err_msg() set. */
int bench_disk_run(const char *path, const struct bench_opts *o, struct bench_report *r);
/* The same below an open directory (a server's module root); `shown` names
 * it in the report. */
int bench_disk_run_at(int dirfd, const char *shown, const struct bench_opts *o,
		      struct bench_report *r);
/* A read-only module's disk: the sequential read alone, of the largest
 * file found (a bounded walk below dirfd, skipping ferry's own .ferry-*
 * names), up to o->size (default BENCH_DEFAULT_SIZE), page cache bypassed.
 * Nothing is written. -ENOENT (message set) when no file of 1 MiB or more
 * is there. */
int bench_disk_read_existing_at(int dirfd, const char *shown, const struct bench_opts *o,
				struct bench_report *r);
/* Every cipher x backend x protection level ferry can use here, one record
 * size, one core. 0, -EINTR or <0. */
int bench_crypto_run(const struct bench_opts *o, struct bench_report *r);

/* The remote run's verdicts (verdict.c): which stage limits each
 * direction's end-to-end rate, from the stages named net_{up,down}_LEVEL,
 * e2e_{up,down}, server_seq_{write,read} and client_{read,write}. */
void bench_verdict(struct bench_report *r);
/* The stage named `name`, or NULL. */
const struct bench_stage *bench_stage_find(const struct bench_report *r, const char *name);

/* Writers. 0, or <0 with err_msg() set when the stream fails. */
int bench_write_table(FILE *f, const struct bench_report *r);
int bench_write_json(FILE *f, const struct bench_report *r);
int bench_write_svg(FILE *f, const struct bench_report *r);

/* Helpers shared by the writers and the command line. */
const char *bench_unit_name(enum bench_unit u);        /* "MB/s", "IOPS", "files/s" */
const char *bench_verdict_name(enum bench_verdict v);  /* "device", "cached", ... */
/* A rate in the stage's unit as people read it: MB/s from bytes/s. */
double bench_shown_rate(enum bench_unit u, double rate);
/* "256M", "1G", "4096", "512K": bytes (K/M/G/T = powers of 1024). 0 or -EINVAL. */
int bench_parse_size(const char *s, uint64_t *out);
/* A new stage at the end of r (zeroed, name and label set); NULL when full. */
struct bench_stage *bench_stage_add(struct bench_report *r, const char *name, const char *label,
				    enum bench_unit unit);

#endif
