/* SPDX-License-Identifier: MIT */
/* ferry bench HOST:MODULE's one verdict per direction: of the stages an
 * end-to-end transfer goes through (the client's disk, the network at the
 * chosen protection, the server's disk), the slowest limits it; where that
 * is the network stage, the CPU figures and TCP_INFO say whether the wire
 * or one end (its cipher, its system calls) or a window was the limit. */
#include "bench/bench.h"

#include <stdio.h>
#include <string.h>

/* One end is "the limit" above this share of a core. */
#define CPU_BOUND 0.85
/* The cipher costs the rate when protection none moves this much more. */
#define CIPHER_GAIN 1.3
/* The window or buffer limited the sender this share of its busy time. */
#define WINDOW_BOUND 0.2
/* ... and its buffers allow less than this times the rate measured; with
 * buffers that tight, a tenth of its busy time is enough (the 4 KiB-buffer
 * test bed gave 13-70 % from one run to the next: a sender busy with tiny
 * segments is "busy" more than it is "limited"). */
#define WINDOW_SLACK 2.0
#define WINDOW_TIGHT_BOUND 0.1
/* ... and where they allow no more than the rate measured (at the round
 * trip of the pings, which an idle box answers), any real wait on the
 * window is enough: a fiftieth of the busy time. The sender's CPU then is
 * the tiny segments' cost, not a limit (an ASan client on the 4 KiB test
 * bed was 85-90 % busy and waited on the window only 8-12 % of it) --
 * unless protection none moved CIPHER_GAIN times more over the same
 * buffers: then they were not what held this level back. */
#define WINDOW_AT_CAP_BOUND 0.02
/* The sender sent this share of its bytes again: packets are lost on the
 * way, and that comes first: a receiver holding out-of-order data offers a
 * small window, and a busy end is busy whatever the link does, but neither
 * makes a sender resend. What else resends a little, in the test bed: a
 * full queue (TCP's congestion signal) 0.00 % through an 80 Mbit tbf, 0.02-
 * 0.2 % with no bottleneck; a box held to 5 % of a core once 0.99 %. 3 %
 * random loss resends 2.5-3.5 %. */
#define LOSS_BOUND 0.015
/* ... unless one end wanted a whole core meanwhile: a receiver held to a
 * share of one drops what overflows its queues while it waits for the CPU,
 * and its sender resends that (the test bed's box at 5 % of a core, with
 * both cores loaded by other tests, resent 2 %; its link dropping 3 % gave
 * 2.5-3.7 % with both ends under a quarter of a core). Then only a resend
 * this large is the link's. */
#define LOSS_BUSY_BOUND 0.05

const struct bench_stage *bench_stage_find(const struct bench_report *r, const char *name)
{
	for (uint32_t i = 0; i < r->nstages && i < BENCH_MAX_STAGES; i++)
		if (!strcmp(r->stages[i].name, name))
			return &r->stages[i];
	return NULL;
}

/* What a disk keeps up: after a cache cliff, the sustained rate. */
static double lasting(const struct bench_stage *s)
{
	return s->cliff.found ? s->cliff.sustained : s->rate;
}

static double mbs(double bytes_per_s)
{
	return bytes_per_s / 1e6;
}

struct dir {
	const char *e2e, *net, *srv, *cli;   /* stage names */
	const char *srv_what, *cli_what;     /* "writes", "reads" */
};

/* What the socket buffers allow: half of what Linux reports is window (the
 * rest its bookkeeping), one window a round trip; 0 when unknown. */
static double window_rate(const struct bench_report *r, const struct bench_stage *net)
{
	uint32_t b = net->rcv_buf && (!net->snd_buf || net->rcv_buf < net->snd_buf) ? net->rcv_buf :
		     net->snd_buf;

	return b && r->remote.rtt_ms > 0 ? (double)b / 2 / (r->remote.rtt_ms / 1e3) : 0;
}

/* The window came first: the sender waited on it and the buffers allow
 * little more than the rate measured. A receiver that cannot keep up
 * shrinks the window too, but leaves its buffer large; this one is small,
 * and its CPU (many tiny segments) a consequence, not the cause. */
static int window_bound(const struct bench_report *r, const struct bench_stage *net,
			const struct bench_stage *none)
{
	double cap = window_rate(r, net), waited = net->rwnd_frac + net->sndbuf_frac;
	int faster_bare = none && none != net && none->rate >= CIPHER_GAIN * net->rate;

	if (net->rwnd_frac < 0 || cap <= 0)
		return 0;
	return (waited >= WINDOW_TIGHT_BOUND && cap < WINDOW_SLACK * net->rate) ||
	       (waited >= WINDOW_AT_CAP_BOUND && cap <= net->rate && !faster_bare);
}

/* The network stage was the slowest: the wire, or one end's CPU (its
 * cipher, or the box held to a share of a core: CPU time plus the time it
 * waited for a CPU it wanted), or a window. */
static void network_side(const struct bench_report *r, const struct bench_stage *net,
			 const struct bench_stage *none, const struct bench_stage *integ,
			 struct bench_verdict_line *v)
{
	const char *lvl = r->remote.level;
	double want = net->srv_cpu + net->srv_wait;
	char held[120] = "";

	if (net->retrans_frac >= (want >= CPU_BOUND || net->cli_cpu >= CPU_BOUND ? LOSS_BUSY_BOUND :
								    LOSS_BOUND)) {
		snprintf(v->stage, sizeof v->stage, "network (loss)");
		snprintf(v->suggest, sizeof v->suggest,
			 "the sender sent %.1f %% of its bytes again: packets are lost on the way "
			 "(a bad cable or Wi-Fi link, a full queue upstream), and TCP slows down at each "
			 "loss (server %.0f %%, client %.0f %% of a core meanwhile): fix the link first; "
			 "ferry's settings do not help", 100 * net->retrans_frac, 100 * want,
			 100 * net->cli_cpu);
		return;
	}
	if (window_bound(r, net, none)) {
		snprintf(v->stage, sizeof v->stage, "window/buffer");
		snprintf(v->suggest, sizeof v->suggest,
			 "the sender waited on the receive window %.0f %% and on its send buffer %.0f %% "
			 "of the time; %u and %u byte buffers allow about %.1f MB/s at a %.2f ms round "
			 "trip%s: raise net.ipv4.tcp_rmem (receiver) and tcp_wmem (sender)",
			 100 * net->rwnd_frac, 100 * net->sndbuf_frac, net->rcv_buf, net->snd_buf,
			 mbs(window_rate(r, net)), r->remote.rtt_ms,
			 window_rate(r, net) <= net->rate ? ", no more than the rate measured" : "");
		return;
	}
	if (net->srv_wait >= 0.2)
		snprintf(held, sizeof held, " and waits %.0f %% of the time for more (a CPU quota, "
			 "or other tasks on the box)", 100 * net->srv_wait);
	if (want >= CPU_BOUND && strcmp(lvl, "none") && none &&
	    none->rate >= CIPHER_GAIN * net->rate) {
		char alt[64] = "";
		if (integ && integ != net && integ->rate >= CIPHER_GAIN * net->rate)
			snprintf(alt, sizeof alt, "%.1f MB/s at integrity and ", mbs(integ->rate));
		snprintf(v->stage, sizeof v->stage, "server CPU (cipher)");
		snprintf(v->suggest, sizeof v->suggest,
			 "the server gets %.0f %% of one core at protection %s%s, and moves %s%.1f MB/s "
			 "at none: `protection = integrity` (or none on a trusted LAN) raises the rate",
			 100 * net->srv_cpu, lvl, held, alt, mbs(none->rate));
	} else if (want >= CPU_BOUND) {
		snprintf(v->stage, sizeof v->stage, "server CPU (%s)",
			 net->srv_sys_share >= 0.5 ? "system calls and copies" : "ferry's own work");
		snprintf(v->suggest, sizeof v->suggest,
			 "the server gets %.0f %% of one core (%.0f %% of it in the kernel)%s, whatever "
			 "the protection: more CPU for it", 100 * net->srv_cpu,
			 100 * net->srv_sys_share, held);
	} else if (net->cli_cpu >= CPU_BOUND) {
		snprintf(v->stage, sizeof v->stage, "client CPU");
		snprintf(v->suggest, sizeof v->suggest,
			 "this machine spends %.0f %% of one core: the box is not the limit",
			 100 * net->cli_cpu);
	} else if (net->rwnd_frac >= 0 && net->rwnd_frac + net->sndbuf_frac >= WINDOW_BOUND) {
		/* limited by a window whose size is unknown or not small */
		snprintf(v->stage, sizeof v->stage, "window/buffer");
		snprintf(v->suggest, sizeof v->suggest,
			 "the sender waited on the receive window %.0f %% and on its send buffer %.0f %% "
			 "of the time: raise net.ipv4.tcp_rmem (receiver) and tcp_wmem (sender)",
			 100 * net->rwnd_frac, 100 * net->sndbuf_frac);
	} else {
		snprintf(v->stage, sizeof v->stage, "network");
		snprintf(v->suggest, sizeof v->suggest,
			 "both ends had CPU to spare (server %.0f %%, client %.0f %% of a core): the link "
			 "is the limit%s%s", 100 * want, 100 * net->cli_cpu,
			 r->env.link[0] ? "; this side's: " : "", r->env.link);
	}
}

/* Two stages within CLOSE_CALL of each other: either may be the limit,
 * and the figures say so (the machines are noisy; a verdict is not a race). */
#define CLOSE_CALL 1.1

static void close_call(struct bench_verdict_line *v, double net, double srv, double cli)
{
	struct { const char *name; double rate; } c[3] = {
		{ "the network", net }, { "the server's disk", srv }, { "this machine's disk", cli },
	};
	int lo = 0, next = -1;

	for (int i = 1; i < 3; i++)
		if (c[i].rate > 0 && c[i].rate < c[lo].rate)
			lo = i;
	for (int i = 0; i < 3; i++)
		if (i != lo && c[i].rate > 0 && (next < 0 || c[i].rate < c[next].rate))
			next = i;
	if (next >= 0 && c[next].rate < CLOSE_CALL * c[lo].rate) {
		size_t n = strlen(v->figures);
		snprintf(v->figures + n, sizeof v->figures - n, " (%s and %s within 10 %%)",
			 c[lo].name, c[next].name);
	}
}

static void judge(const struct bench_report *r, const struct dir *d, struct bench_verdict_line *v)
{
	char name[40];
	const struct bench_stage *e2e = bench_stage_find(r, d->e2e);
	snprintf(name, sizeof name, "%s%s", d->net, r->remote.level);
	const struct bench_stage *net = bench_stage_find(r, name);
	snprintf(name, sizeof name, "%snone", d->net);
	const struct bench_stage *none = bench_stage_find(r, name);
	snprintf(name, sizeof name, "%sintegrity", d->net);
	const struct bench_stage *integ = bench_stage_find(r, name);
	const struct bench_stage *srv = bench_stage_find(r, d->srv);
	const struct bench_stage *cli = bench_stage_find(r, d->cli);

	memset(v, 0, sizeof *v);
	if (!e2e || !net || e2e->rate <= 0 || net->rate <= 0) {
		snprintf(v->stage, sizeof v->stage, "unknown");
		snprintf(v->figures, sizeof v->figures, "the end-to-end or network stage did not run");
		return;
	}
	double s = srv && srv->rate > 0 ? lasting(srv) : 0, c = cli && cli->rate > 0 ? cli->rate : 0;
	char sd[24] = "?", cd[24] = "?";
	if (s > 0)
		snprintf(sd, sizeof sd, "%.1f", mbs(s));
	if (c > 0)
		snprintf(cd, sizeof cd, "%.1f", mbs(c));
	snprintf(v->figures, sizeof v->figures,
		 "end to end %.1f MB/s; network %.1f MB/s at %s; server disk %s %s MB/s; "
		 "client disk %s %s MB/s; server CPU %.0f %% (+%.0f %% waiting), client %.0f %%",
		 mbs(e2e->rate), mbs(net->rate), r->remote.level, d->srv_what, sd, d->cli_what, cd,
		 100 * net->srv_cpu, 100 * net->srv_wait, 100 * net->cli_cpu);
	close_call(v, net->rate, s, c);
	/* the slowest stage of the three limits the transfer; a server disk
	 * measured while the box wanted more CPU than it got is its CPU's */
	if (s > 0 && s < net->rate && (c <= 0 || s <= c) &&
	    srv->srv_cpu + srv->srv_wait >= CPU_BOUND && srv->srv_wait >= 0.2) {
		snprintf(v->stage, sizeof v->stage, "server CPU");
		snprintf(v->suggest, sizeof v->suggest,
			 "the module's disk %s %.1f MB/s while the server got %.0f %% of a core and "
			 "waited %.0f %% of the time for more (a CPU quota, or other tasks on the box): "
			 "more CPU for it", d->srv_what, mbs(s), 100 * srv->srv_cpu,
			 100 * srv->srv_wait);
	} else if (s > 0 && s < net->rate && (c <= 0 || s <= c)) {
		snprintf(v->stage, sizeof v->stage, "server disk");
		if (srv->cliff.found)
			snprintf(v->suggest, sizeof v->suggest,
				 "the module's disk %s %.1f MB/s after a cache of %.0f MB (%.1f MB/s "
				 "before): the link is not the limit", d->srv_what, mbs(s),
				 (double)srv->cliff.bytes / 1e6, mbs(srv->cliff.burst));
		else
			snprintf(v->suggest, sizeof v->suggest,
				 "the module's disk %s %.1f MB/s, the network carries %.1f: the link is "
				 "not the limit, a faster disk is", d->srv_what, mbs(s), mbs(net->rate));
	} else if (c > 0 && c < net->rate) {
		snprintf(v->stage, sizeof v->stage, "client disk");
		snprintf(v->suggest, sizeof v->suggest,
			 "this machine's disk %s %.1f MB/s, the network carries %.1f: the box is not "
			 "the limit", d->cli_what, mbs(c), mbs(net->rate));
	} else {
		network_side(r, net, none, integ, v);
	}
}

void bench_verdict(struct bench_report *r)
{
	static const struct dir up = { "e2e_up", "net_up_", "server_seq_write", "client_read",
				       "writes", "reads" };
	static const struct dir down = { "e2e_down", "net_down_", "server_seq_read",
					 "client_write", "reads", "writes" };

	judge(r, &up, &r->remote.up);
	judge(r, &down, &r->remote.down);
}
