/* SPDX-License-Identifier: MIT */
/* --json: the report as schema "ferry-bench/1" (docs/BENCH.md lists every
 * key). Additions keep the schema name; a change of meaning gets a new one. */
#include "bench/bench.h"

#include <errno.h>
#include <string.h>

#include "bench/jsonw.h"
#include "util/err.h"

static void host(struct jsonw *w, const struct bench_env *e)
{
	jw_open(w, "host", '{');
	jw_str(w, "kernel", e->kernel);
	jw_str(w, "cpu", e->cpu);
	jw_u64(w, "cpus", (uint64_t)e->cpus);
	jw_str(w, "link", e->link);
	jw_close(w, '}');
}

static void target(struct jsonw *w, const struct bench_target *t)
{
	jw_open(w, "target", '{');
	jw_str(w, "path", t->path);
	jw_str(w, "fstype", t->fstype);
	jw_str(w, "device", t->device);
	jw_str(w, "model", t->model);
	jw_str(w, "usb", t->usb);
	jw_bool(w, "memory", t->memory);
	jw_bool(w, "block_device", t->has_dev);
	jw_u64(w, "free_bytes", t->free_bytes);
	jw_u64(w, "size_bytes", t->size);
	jw_close(w, '}');
}

static void crypto(struct jsonw *w, const struct bench_crypto_info *c)
{
	jw_open(w, "crypto", '{');
	jw_u64(w, "record_bytes", c->record);
	jw_bool(w, "hw_aes", c->hw_aes);
	jw_str(w, "backend", c->backend);
	jw_str(w, "connection_cipher", c->picks);
	jw_str(w, "connection_note", c->picks_why);
	jw_close(w, '}');
}

static void verdict(struct jsonw *w, const char *key, const struct bench_verdict_line *v)
{
	jw_open(w, key, '{');
	jw_str(w, "limit", v->stage);
	jw_str(w, "figures", v->figures);
	jw_str(w, "suggestion", v->suggest);
	jw_close(w, '}');
}

static void remote(struct jsonw *w, const struct bench_remote_info *m)
{
	jw_open(w, "remote", '{');
	jw_str(w, "server", m->server);
	jw_str(w, "server_host", m->server_env);
	jw_str(w, "server_disk", m->server_disk);
	jw_str(w, "protection", m->level);
	jw_str(w, "local_dir", m->local);
	jw_num(w, "rtt_ms", m->rtt_ms, 3);
	verdict(w, "upload", &m->up);
	verdict(w, "download", &m->down);
	jw_close(w, '}');
}

static void cliff(struct jsonw *w, const struct bench_stage *st)
{
	const struct bench_cliff *c = &st->cliff;

	jw_open(w, "cliff", '{');
	jw_bool(w, "found", c->found);
	jw_num(w, "burst", bench_shown_rate(st->unit, c->burst), 3);
	jw_num(w, "sustained", bench_shown_rate(st->unit, c->sustained), 3);
	if (c->found) {
		jw_u64(w, "bytes", c->bytes);
		jw_num(w, "at_s", c->at_s, 2);
	} else {
		jw_null(w, "bytes");
		jw_null(w, "at_s");
	}
	jw_close(w, '}');
}

static void samples(struct jsonw *w, const struct bench_stage *st)
{
	float v[BENCH_MAX_SAMPLES];
	uint32_t n = st->nsamples < BENCH_MAX_SAMPLES ? st->nsamples : BENCH_MAX_SAMPLES;

	for (uint32_t i = 0; i < n; i++)
		v[i] = (float)bench_shown_rate(st->unit, st->samples[i]);
	jw_num(w, "sample_interval_s", st->sample_s, 3);
	jw_floats(w, "samples", v, n, 3);
}

static void stage(struct jsonw *w, enum bench_kind kind, const struct bench_stage *st)
{
	jw_open(w, NULL, '{');
	jw_str(w, "name", st->name);
	jw_str(w, "label", st->label);
	jw_str(w, "unit", bench_unit_name(st->unit));
	jw_num(w, "rate", bench_shown_rate(st->unit, st->rate), 3);
	jw_num(w, "seconds", st->seconds, 3);
	if (kind == BENCH_DISK)
		jw_num(w, "sync_s", st->sync_s, 3);
	jw_u64(w, "bytes", st->bytes);
	jw_u64(w, "ops", st->ops);
	jw_str(w, "method", st->method);
	jw_str(w, "verdict", bench_verdict_name(st->verdict));
	jw_str(w, "note", st->note);
	if (kind == BENCH_REMOTE && !strncmp(st->name, "server_", 7)) {
		cliff(w, st);
	} else if (kind == BENCH_REMOTE) {
		jw_num(w, "server_cpu", st->srv_cpu, 3);
		jw_num(w, "server_cpu_wait", st->srv_wait, 3);
		jw_num(w, "client_cpu", st->cli_cpu, 3);
		jw_num(w, "server_cpu_kernel_share", st->srv_sys_share, 3);
		jw_u64(w, "receiver_rcvbuf", st->rcv_buf);
		jw_u64(w, "sender_sndbuf", st->snd_buf);
		if (st->rwnd_frac >= 0) {
			jw_num(w, "rwnd_limited", st->rwnd_frac, 3);
			jw_num(w, "sndbuf_limited", st->sndbuf_frac, 3);
		} else {
			jw_null(w, "rwnd_limited");
			jw_null(w, "sndbuf_limited");
		}
		if (st->retrans_frac >= 0)
			jw_num(w, "retransmitted", st->retrans_frac, 4);
		else
			jw_null(w, "retransmitted");
	} else if (kind == BENCH_DISK) {
		if (st->verdict == BENCH_DEVICE || st->verdict == BENCH_CACHED)
			jw_u64(w, "device_bytes", st->dev_bytes);
		else
			jw_null(w, "device_bytes");
		cliff(w, st);
	} else {
		jw_str(w, "cipher", st->cipher);
		jw_str(w, "backend", st->backend);
		jw_str(w, "mode", st->mode);
	}
	samples(w, st);
	jw_close(w, '}');
}

int bench_write_json(FILE *f, const struct bench_report *r)
{
	struct jsonw w;

	jw_init(&w, f);
	jw_open(&w, NULL, '{');
	jw_str(&w, "schema", BENCH_SCHEMA);
	jw_str(&w, "kind", r->kind == BENCH_DISK ? "disk" : r->kind == BENCH_CRYPTO ? "crypto" :
			   "remote");
	jw_str(&w, "command", r->env.command);
	jw_str(&w, "ferry_version", r->env.version);
	host(&w, &r->env);
	if (r->kind == BENCH_DISK)
		target(&w, &r->target);
	else if (r->kind == BENCH_CRYPTO)
		crypto(&w, &r->crypto);
	else
		remote(&w, &r->remote);
	jw_num(&w, "seconds_limit", r->seconds_limit, 1);
	jw_num(&w, "elapsed_s", r->elapsed, 3);
	jw_open(&w, "stages", '[');
	for (uint32_t i = 0; i < r->nstages && i < BENCH_MAX_STAGES; i++)
		stage(&w, r->kind, &r->stages[i]);
	jw_close(&w, ']');
	jw_close(&w, '}');
	if (fflush(f) != 0 || ferror(f))
		return err_sys(-EIO, "writing the JSON report");
	return 0;
}
