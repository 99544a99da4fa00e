/* SPDX-License-Identifier: MIT */
/* bench_verdict() on made-up remote reports: the slowest of the server's
 * disk, the client's disk and the network limits a direction; where the
 * network is the slowest, the CPU figures (the cipher, ferry's own work,
 * the kernel, a CPU quota, the client) and TCP_INFO's window fractions say
 * which end or the link it was; without the stages, "unknown". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/bench.h"

/* The report's stage named `name`, to change (the test's own lookup:
 * bench_stage_find gives a const one). */
static struct bench_stage *stage(struct bench_report *r, const char *name)
{
	for (uint32_t i = 0; i < r->nstages; i++)
		if (!strcmp(r->stages[i].name, name))
			return &r->stages[i];
	fail_msg("no stage %s", name);
	return NULL;
}

static void net_stage(struct bench_report *r, const char *name, double rate)
{
	struct bench_stage *st = bench_stage_add(r, name, name, BENCH_MBPS);

	assert_non_null(st);
	st->rate = rate;
	st->srv_cpu = 0.3f;
	st->cli_cpu = 0.2f;
	st->srv_wait = 0;
	st->srv_sys_share = 0.1f;
	st->rwnd_frac = 0;
	st->sndbuf_frac = 0;
}

static void disk_stage(struct bench_report *r, const char *name, double rate)
{
	struct bench_stage *st = bench_stage_add(r, name, name, BENCH_MBPS);

	assert_non_null(st);
	st->rate = rate;
	st->cliff.sustained = rate;
}

/* Both directions limited by the link: the network at encrypt moves
 * 100 MB/s (200 at none), both ends at a third of a core or less, no
 * window waits, both disks at 500 MB/s, end to end 90 MB/s. */
static struct bench_report *remote_report(void)
{
	struct bench_report *r = calloc(1, sizeof *r);

	assert_non_null(r);
	r->kind = BENCH_REMOTE;
	snprintf(r->remote.level, sizeof r->remote.level, "encrypt");
	snprintf(r->remote.server, sizeof r->remote.server, "box:data");
	net_stage(r, "net_up_none", 200e6);
	net_stage(r, "net_up_encrypt", 100e6);
	net_stage(r, "net_down_none", 200e6);
	net_stage(r, "net_down_encrypt", 100e6);
	disk_stage(r, "server_seq_write", 500e6);
	disk_stage(r, "server_seq_read", 500e6);
	disk_stage(r, "client_read", 500e6);
	disk_stage(r, "client_write", 500e6);
	net_stage(r, "e2e_up", 90e6);
	net_stage(r, "e2e_down", 90e6);
	return r;
}

static void assert_has(const char *text, const char *part)
{
	if (!strstr(text, part))
		fail_msg("\"%s\" not in \"%s\"", part, text);
}

static void assert_lacks(const char *text, const char *part)
{
	if (strstr(text, part))
		fail_msg("\"%s\" in \"%s\"", part, text);
}

static void test_stage_find(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	assert_null(bench_stage_find(r, "net_up_integrity"));
	assert_null(bench_stage_find(r, ""));
	assert_null(bench_stage_find(r, "e2e"));
	const struct bench_stage *s = bench_stage_find(r, "e2e_down");
	assert_non_null(s);
	assert_ptr_equal(s, &r->stages[9]);
	assert_string_equal(s->name, "e2e_down");
	/* only the first nstages count */
	r->nstages = 9;
	assert_null(bench_stage_find(r, "e2e_down"));
	free(r);
}

static void test_network(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	assert_string_equal(r->remote.down.stage, "network");
	assert_string_equal(r->remote.up.figures,
			    "end to end 90.0 MB/s; network 100.0 MB/s at encrypt; server disk "
			    "writes 500.0 MB/s; client disk reads 500.0 MB/s; server CPU 30 % "
			    "(+0 % waiting), client 20 %");
	assert_has(r->remote.down.figures, "server disk reads 500.0 MB/s; client disk writes "
					   "500.0 MB/s");
	assert_has(r->remote.up.suggest, "server 30 %, client 20 % of a core");
	assert_has(r->remote.up.suggest, "the link is the limit");
	assert_lacks(r->remote.up.suggest, "this side's");

	/* the link this side has is named */
	snprintf(r->env.link, sizeof r->env.link, "eth0 1000 Mb/s");
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	assert_has(r->remote.up.suggest, "the link is the limit; this side's: eth0 1000 Mb/s");

	/* a window fraction the kernel did not say is no window verdict */
	stage(r, "net_up_encrypt")->rwnd_frac = -1;
	stage(r, "net_up_encrypt")->sndbuf_frac = 0.5f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	free(r);
}

/* The sender sent a share of its bytes again: lost on the way. */
static void test_loss(void **state)
{
	struct bench_report *r = remote_report();
	struct bench_stage *enc = stage(r, "net_up_encrypt");

	(void)state;
	enc->retrans_frac = 0.025f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network (loss)");
	assert_string_equal(r->remote.down.stage, "network");
	assert_has(r->remote.up.suggest, "the sender sent 2.5 % of its bytes again");
	assert_has(r->remote.up.suggest, "server 30 %, client 20 % of a core");

	/* what a full queue or a starved box resends, or a kernel that does
	 * not say, is no loss verdict */
	enc->retrans_frac = 0.005f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	enc->retrans_frac = 0.0099f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	enc->retrans_frac = -1;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");

	/* a box held to a share of a core drops what overflows while it waits:
	 * a small resend then is the box's, a large one still the link's */
	enc->srv_cpu = 0.04f;
	enc->srv_wait = 0.96f;
	enc->retrans_frac = 0.02f;
	bench_verdict(r);
	assert_int_equal(strncmp(r->remote.up.stage, "server CPU", 10), 0);
	enc->retrans_frac = 0.06f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network (loss)");
	/* the same with the client the busy end */
	enc->srv_cpu = 0.3f;
	enc->srv_wait = 0;
	enc->cli_cpu = 0.95f;
	enc->retrans_frac = 0.02f;
	bench_verdict(r);
	assert_string_not_equal(r->remote.up.stage, "network (loss)");
	enc->retrans_frac = 0.06f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network (loss)");
	enc->cli_cpu = 0.2f;

	/* loss comes before a window: a receiver holding out-of-order data
	 * offers a small one (the 3 % test bed's sender waited on it 12-27 %
	 * of the time, with buffers that looked tight at a loaded round trip) */
	enc->retrans_frac = 0;
	enc->rwnd_frac = 0.4f;
	enc->rcv_buf = enc->snd_buf = 4096;
	r->remote.rtt_ms = 0.05;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "window/buffer");
	enc->retrans_frac = 0.025f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network (loss)");

	/* ... and before a busy end, whose figures it names, once the resend
	 * is more than a held receiver's own drops */
	enc->rwnd_frac = 0;
	enc->cli_cpu = 0.95f;
	enc->retrans_frac = 0.055f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network (loss)");
	assert_has(r->remote.up.suggest, "client 95 % of a core meanwhile");
	free(r);
}

static void test_server_disk(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	stage(r, "server_seq_write")->rate = 40e6;
	stage(r, "client_read")->rate = 60e6;   /* slower than the link, faster than the server */
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server disk");
	assert_has(r->remote.up.figures, "server disk writes 40.0 MB/s");
	assert_has(r->remote.up.suggest, "the module's disk writes 40.0 MB/s, the network "
					 "carries 100.0");
	assert_has(r->remote.up.suggest, "a faster disk");
	assert_string_equal(r->remote.down.stage, "network");

	/* a tie with the client's disk: the server's */
	stage(r, "client_read")->rate = 40e6;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server disk");

	/* a disk as fast as the link is not slower than it */
	stage(r, "server_seq_write")->rate = 100e6;
	stage(r, "client_read")->rate = 500e6;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	free(r);
}

static void test_server_disk_cliff(void **state)
{
	struct bench_report *r = remote_report();
	struct bench_stage *w;

	(void)state;
	/* 150 MB/s over the run, faster than the link, but 20 MB/s once the
	 * cache of 2 GB was full: what lasts counts */
	w = stage(r, "server_seq_write");
	w->rate = 150e6;
	w->cliff = (struct bench_cliff){ .found = 1, .burst = 400e6, .sustained = 20e6,
					 .bytes = 2000000000u, .at_s = 5 };
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server disk");
	assert_has(r->remote.up.figures, "server disk writes 20.0 MB/s");
	assert_string_equal(r->remote.up.suggest,
			    "the module's disk writes 20.0 MB/s after a cache of 2000 MB (400.0 "
			    "MB/s before): the link is not the limit");

	/* without the cliff the same rate is faster than the link */
	w->cliff.found = 0;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	assert_has(r->remote.up.figures, "server disk writes 150.0 MB/s");
	free(r);
}

static void test_server_disk_down(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	stage(r, "server_seq_read")->rate = 30e6;
	bench_verdict(r);
	assert_string_equal(r->remote.down.stage, "server disk");
	assert_has(r->remote.down.figures, "server disk reads 30.0 MB/s");
	assert_has(r->remote.down.suggest, "the module's disk reads 30.0 MB/s");
	assert_string_equal(r->remote.up.stage, "network");
	free(r);
}

static void test_client_disk(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	stage(r, "client_read")->rate = 50e6;
	stage(r, "server_seq_write")->rate = 80e6;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "client disk");
	assert_has(r->remote.up.figures, "client disk reads 50.0 MB/s");
	assert_string_equal(r->remote.up.suggest,
			    "this machine's disk reads 50.0 MB/s, the network carries 100.0: the box "
			    "is not the limit");
	assert_string_equal(r->remote.down.stage, "network");

	/* download: the client writes */
	stage(r, "client_write")->rate = 20e6;
	bench_verdict(r);
	assert_string_equal(r->remote.down.stage, "client disk");
	assert_has(r->remote.down.suggest, "this machine's disk writes 20.0 MB/s");
	free(r);
}

static void test_disk_unmeasured(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	/* a disk stage that did not run (rate 0) is shown as "?" and limits nothing */
	stage(r, "server_seq_write")->rate = 0;
	stage(r, "client_read")->rate = 0;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	assert_has(r->remote.up.figures, "server disk writes ? MB/s; client disk reads ? MB/s");
	free(r);
}

static void test_server_cpu_cipher(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	stage(r, "net_up_encrypt")->srv_cpu = 0.95f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (cipher)");
	assert_has(r->remote.up.figures, "server CPU 95 % (+0 % waiting)");
	assert_has(r->remote.up.suggest, "the server gets 95 % of one core at protection encrypt");
	assert_has(r->remote.up.suggest, "moves 200.0 MB/s at none");
	assert_has(r->remote.up.suggest, "protection = integrity");
	assert_lacks(r->remote.up.suggest, "quota");
	assert_string_equal(r->remote.down.stage, "network");

	/* download, too */
	stage(r, "net_down_encrypt")->srv_cpu = 0.9f;
	bench_verdict(r);
	assert_string_equal(r->remote.down.stage, "server CPU (cipher)");
	assert_has(r->remote.down.suggest, "moves 200.0 MB/s at none");
	free(r);
}

static void test_server_cpu_own(void **state)
{
	struct bench_report *r = remote_report();
	struct bench_stage *enc;

	(void)state;
	/* none is not (1.3 times) faster: the cipher is not the cost */
	enc = stage(r, "net_up_encrypt");
	enc->srv_cpu = 0.95f;
	enc->srv_sys_share = 0.25f;
	stage(r, "net_up_none")->rate = 110e6;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (ferry's own work)");
	assert_has(r->remote.up.suggest, "the server gets 95 % of one core (25 % of it in the "
					 "kernel), whatever the protection: more CPU for it");

	/* most of it in the kernel */
	enc->srv_sys_share = 0.5f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (system calls and copies)");
	assert_has(r->remote.up.suggest, "(50 % of it in the kernel)");

	/* no net_up_none stage at all: not the cipher either */
	stage(r, "net_up_none")->rate = 500e6;
	snprintf(stage(r, "net_up_none")->name, sizeof r->stages[0].name, "net_up_gone");
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (system calls and copies)");
	free(r);
}

static void test_server_cpu_at_none(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	/* at protection none, the network stage is the none stage: no cipher to blame */
	snprintf(r->remote.level, sizeof r->remote.level, "none");
	stage(r, "net_up_none")->srv_cpu = 0.95f;
	stage(r, "net_down_none")->srv_cpu = 0.95f;
	stage(r, "net_down_none")->srv_sys_share = 0.7f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (ferry's own work)");
	assert_has(r->remote.up.figures, "network 200.0 MB/s at none");
	assert_string_equal(r->remote.down.stage, "server CPU (system calls and copies)");
	free(r);
}

static void test_server_cpu_quota(void **state)
{
	struct bench_report *r = remote_report();
	struct bench_stage *enc;

	(void)state;
	/* 10 % of a core, and 85 % of the time waiting for more: held to a share */
	enc = stage(r, "net_up_encrypt");
	enc->srv_cpu = 0.10f;
	enc->srv_wait = 0.85f;
	enc->srv_sys_share = 0.05f;
	stage(r, "net_up_none")->rate = 100e6;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (ferry's own work)");
	assert_int_equal(strncmp(r->remote.up.stage, "server CPU", 10), 0);
	assert_has(r->remote.up.figures, "server CPU 10 % (+85 % waiting)");
	assert_has(r->remote.up.suggest, "the server gets 10 % of one core");
	assert_has(r->remote.up.suggest, "waits 85 % of the time for more (a CPU quota");
	assert_has(r->remote.up.suggest, "quota");

	/* with none twice as fast, the cipher: still the quota named */
	stage(r, "net_up_none")->rate = 200e6;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (cipher)");
	assert_has(r->remote.up.suggest, "quota");

	/* a short wait is no quota, but the CPU it had still limits */
	enc->srv_cpu = 0.7f;
	enc->srv_wait = 0.19f;
	stage(r, "net_up_none")->rate = 100e6;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (ferry's own work)");
	assert_lacks(r->remote.up.suggest, "quota");

	/* the wait alone, with little CPU, is not enough */
	enc->srv_cpu = 0.10f;
	enc->srv_wait = 0.5f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");
	free(r);
}

static void test_client_cpu(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	stage(r, "net_up_encrypt")->cli_cpu = 0.9f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "client CPU");
	assert_has(r->remote.up.figures, "client 90 %");
	assert_string_equal(r->remote.up.suggest,
			    "this machine spends 90 % of one core: the box is not the limit");

	/* the server's CPU comes first */
	stage(r, "net_up_encrypt")->srv_cpu = 0.9f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (cipher)");

	stage(r, "net_down_encrypt")->cli_cpu = 0.86f;
	bench_verdict(r);
	assert_string_equal(r->remote.down.stage, "client CPU");
	free(r);
}

static void test_window(void **state)
{
	struct bench_report *r = remote_report();
	struct bench_stage *enc;

	(void)state;
	enc = stage(r, "net_up_encrypt");
	enc->rwnd_frac = 0.5f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "window/buffer");
	assert_has(r->remote.up.suggest, "the sender waited on the receive window 50 % and on "
					 "its send buffer 0 % of the time");
	assert_has(r->remote.up.suggest, "tcp_rmem");

	/* the two together */
	enc->rwnd_frac = 0.125f;
	enc->sndbuf_frac = 0.25f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "window/buffer");
	assert_has(r->remote.up.suggest, "send buffer 25 %");

	/* too little of either */
	enc->rwnd_frac = 0.0625f;
	enc->sndbuf_frac = 0.0625f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "network");

	/* a client CPU limit comes first */
	enc->rwnd_frac = 0.5f;
	enc->cli_cpu = 0.9f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "client CPU");

	/* ... unless the buffers are what allows little more than the rate:
	 * 12 KiB (6 KiB of window) a 0.05 ms round trip is 123 MB/s, and the
	 * receiver's CPU, busy with tiny segments, is the consequence */
	enc->srv_cpu = 0.9f;
	enc->cli_cpu = 0.2f;
	enc->rcv_buf = 12288;
	enc->snd_buf = 1u << 20;
	r->remote.rtt_ms = 0.05;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "window/buffer");
	assert_has(r->remote.up.suggest, "12288 and 1048576 byte buffers allow about 122.9 MB/s "
					 "at a 0.05 ms round trip: raise");
	/* with buffers that tight, a tenth of the busy time is enough */
	enc->rwnd_frac = 0.125f;
	enc->sndbuf_frac = 0;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "window/buffer");
	enc->rwnd_frac = 0.0625f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (cipher)");
	/* buffers that allow no more than the rate (8 KiB: 82 MB/s, 100
	 * measured), while none moved twice as much over them: the cipher */
	enc->rcv_buf = 8192;
	enc->rwnd_frac = 0.0625f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (cipher)");
	/* ... and with none no faster: any real wait on the window, even beside
	 * a busy client (an ASan client on the 4 KiB test bed waited 8-12 % at
	 * 85-90 %) */
	stage(r, "net_up_none")->rate = 110e6;
	enc->srv_cpu = 0.5f;
	enc->cli_cpu = 0.9f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "window/buffer");
	assert_has(r->remote.up.suggest, "8192 and 1048576 byte buffers allow about 81.9 MB/s at "
					 "a 0.05 ms round trip, no more than the rate measured: raise");
	enc->rwnd_frac = 0.03125f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "window/buffer");
	/* ... but a sender that never waited on it was not held by it */
	enc->rwnd_frac = 0.01f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "client CPU");
	stage(r, "net_up_none")->rate = 200e6;
	enc->srv_cpu = 0.9f;
	enc->cli_cpu = 0.2f;
	enc->rwnd_frac = 0.5f;
	/* large buffers: the CPU it is */
	enc->rcv_buf = 4u << 20;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU (cipher)");
	free(r);
}

static void test_unknown(void **state)
{
	struct bench_report *r = remote_report();

	(void)state;
	/* no e2e_up stage */
	snprintf(stage(r, "e2e_up")->name, sizeof r->stages[0].name, "e2e_up_gone");
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "unknown");
	assert_string_equal(r->remote.up.figures, "the end-to-end or network stage did not run");
	assert_string_equal(r->remote.up.suggest, "");
	assert_string_equal(r->remote.down.stage, "network");
	free(r);

	/* an end-to-end stage that moved nothing */
	r = remote_report();
	stage(r, "e2e_down")->rate = 0;
	bench_verdict(r);
	assert_string_equal(r->remote.down.stage, "unknown");
	assert_string_equal(r->remote.up.stage, "network");
	free(r);

	/* no network stage at the level the run used */
	r = remote_report();
	snprintf(r->remote.level, sizeof r->remote.level, "integrity");
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "unknown");
	assert_string_equal(r->remote.down.stage, "unknown");
	free(r);

	/* an empty report */
	r = calloc(1, sizeof *r);
	assert_non_null(r);
	r->kind = BENCH_REMOTE;
	snprintf(r->remote.level, sizeof r->remote.level, "encrypt");
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "unknown");
	assert_string_equal(r->remote.down.stage, "unknown");
	free(r);
}

/* A server disk figure made while the box was held to a share of a core is
 * the CPU's, not the disk's. */
static void test_starved_disk(void **state)
{
	struct bench_report *r = remote_report();
	struct bench_stage *sd = stage(r, "server_seq_write");

	(void)state;
	sd->rate = sd->cliff.sustained = 50e6;
	sd->srv_cpu = 0.05f;
	sd->srv_wait = 0.9f;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server CPU");
	assert_has(r->remote.up.suggest, "waited 90 % of the time for more");
	sd->srv_wait = 0;
	bench_verdict(r);
	assert_string_equal(r->remote.up.stage, "server disk");
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stage_find),
		cmocka_unit_test(test_network),
		cmocka_unit_test(test_server_disk),
		cmocka_unit_test(test_server_disk_cliff),
		cmocka_unit_test(test_server_disk_down),
		cmocka_unit_test(test_client_disk),
		cmocka_unit_test(test_disk_unmeasured),
		cmocka_unit_test(test_server_cpu_cipher),
		cmocka_unit_test(test_server_cpu_own),
		cmocka_unit_test(test_server_cpu_at_none),
		cmocka_unit_test(test_server_cpu_quota),
		cmocka_unit_test(test_client_cpu),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_starved_disk),
		cmocka_unit_test(test_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
