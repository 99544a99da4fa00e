/* SPDX-License-Identifier: MIT */
/* ferry bench crypto: one core's throughput of each AEAD ferry can
 * negotiate, through ferry's own interface (channel/aead.h, so the figures
 * are ferry's, backend quirks included), at ferry's record size:
 *   encrypt    PROT_ENCRYPT: AEAD(k, n, ad = "", data), in place
 *   integrity  PROT_INTEGRITY: AEAD(k, n, ad = data, "") - the tag only
 * Wall clock, one record after the other, as a session seals them. The
 * stages take turns in BENCH_CRYPTO_ROUNDS slices each, so that a busy
 * spell of the machine (a compile, a cron job) spreads over all of them
 * instead of sinking one. */
#include "bench/bench.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/series.h"
#include "channel/aead.h"
#include "channel/channel.h"
#include "channel/opening.h"
#include "util/err.h"

struct crypto_stage {
	struct aead key;
	int integrity;
	struct bench_stage *st;
	uint64_t n;                  /* the nonce counter */
};

struct crypto_run {
	const struct bench_opts *o;
	double slice;                /* seconds per stage and round */
	uint8_t *buf;                /* CHAN_MAX_PLAIN bytes */
	unsigned count;
	struct crypto_stage stages[BENCH_MAX_STAGES];
};

static const char *const cipher_label[] = { "ChaCha20-Poly1305", "AES-256-GCM" };
static const char *const cipher_key[] = { "chachapoly", "aesgcm" };
static const char *const backend_key[] = { "libsodium", "openssl" };

static int stopped(const struct crypto_run *cr)
{
	return cr->o->stop && *cr->o->stop;
}

static void progress(const struct crypto_run *cr, const struct bench_stage *st, double rate)
{
	struct bench_progress p = {
		.label = st->label, .unit = st->unit, .done = st->bytes, .goal = 0,
		.rate = rate, .elapsed = st->seconds,
	};

	if (cr->o->progress)
		cr->o->progress(cr->o->ctx, &p);
}

static int seal(struct crypto_run *cr, struct crypto_stage *cs)
{
	uint8_t tag[AEAD_TAG_LEN], empty[1] = { 0 };

	if (cs->integrity)
		return aead_encrypt(&cs->key, cs->n++, cr->buf, CHAN_MAX_PLAIN, empty, 0, tag);
	return aead_encrypt(&cs->key, cs->n++, NULL, 0, cr->buf, CHAN_MAX_PLAIN, tag);
}

/* One slice: seals records for cr->slice seconds, the clock read every 8
 * records (one takes tens of microseconds even on a fast core). */
static int slice(struct crypto_run *cr, struct crypto_stage *cs)
{
	struct bench_stage *st = cs->st;
	uint64_t bytes = 0;
	double t0 = bench_now(), now = t0;
	int rc;

	while (now - t0 < cr->slice && !stopped(cr)) {
		for (int i = 0; i < 8; i++) {
			if ((rc = seal(cr, cs)) < 0)
				return rc;
			bytes += CHAN_MAX_PLAIN;
		}
		now = bench_now();
	}
	st->seconds += now - t0;
	st->bytes += bytes;
	st->ops += bytes / CHAN_MAX_PLAIN;
	double rate = now > t0 ? (double)bytes / (now - t0) : 0;
	if (st->nsamples < BENCH_MAX_SAMPLES)
		st->samples[st->nsamples++] = (float)rate;
	progress(cr, st, rate);
	return stopped(cr) ? -EINTR : 0;
}

static void describe(struct bench_stage *st, enum aead_backend b, enum cipher_id id, int integrity)
{
	st->verdict = BENCH_CPU;
	snprintf(st->cipher, sizeof st->cipher, "%s", cipher_label[id]);
	snprintf(st->backend, sizeof st->backend, "%s", backend_key[b]);
	snprintf(st->mode, sizeof st->mode, "%s", integrity ? "integrity" : "encrypt");
	snprintf(st->method, sizeof st->method, "%s", backend_key[b]);
}

/* A stage with its key; 50 ms of records first (page faults and the CPU's
 * clock ramp are not the cipher). */
static int add_stage(struct crypto_run *cr, struct bench_report *r, enum aead_backend b,
		     enum cipher_id id, int integrity)
{
	struct crypto_stage *cs = &cr->stages[cr->count];
	uint8_t key[AEAD_KEY_LEN];
	char name[32], label[40];
	int rc;

	snprintf(name, sizeof name, "%s_%s_%s", cipher_key[id], backend_key[b],
		 integrity ? "integrity" : "encrypt");
	snprintf(label, sizeof label, "%s %s", cipher_label[id], integrity ? "integrity" : "encrypt");
	if (cr->count >= BENCH_MAX_STAGES || !(cs->st = bench_stage_add(r, name, label, BENCH_MBPS)))
		return err_set(-ENOBUFS, "too many stages");
	describe(cs->st, b, id, integrity);
	for (size_t i = 0; i < sizeof key; i++)
		key[i] = (uint8_t)(i * 7 + 1);   /* any key: the speed does not depend on it */
	if ((rc = aead_init_backend(&cs->key, b, id, key)) < 0)
		return rc;
	cr->count++;
	cs->integrity = integrity;
	/* aead.c sends messages under AEAD_SMALL through libsodium even on an
	 * OpenSSL key; an integrity tag's message is empty, so on an OpenSSL
	 * key it is libsodium's work whenever libsodium has the cipher. */
	if (b == AEAD_OPENSSL && integrity && cs->key.small_sodium)
		snprintf(cs->st->note, sizeof cs->st->note,
			 "computed by libsodium, which ferry uses for messages under %u bytes",
			 AEAD_SMALL);
	for (double t0 = bench_now(); bench_now() - t0 < 0.05;)
		if ((rc = seal(cr, cs)) < 0)
			return rc;
	return 0;
}

/* libsodium always; OpenSSL when compiled in (enum aead_backend's order). */
static int backend_count(void)
{
#ifdef FERRY_HAVE_OPENSSL
	return 2;
#else
	return 1;
#endif
}

static int add_all(struct crypto_run *cr, struct bench_report *r)
{
	int rc;

	for (int b = 0; b < backend_count(); b++)
		for (int id = CIPHER_CHACHAPOLY; id <= CIPHER_AESGCM; id++) {
			if (!aead_usable((enum aead_backend)b, (enum cipher_id)id))
				continue;
			for (int integrity = 0; integrity <= 1; integrity++)
				if ((rc = add_stage(cr, r, (enum aead_backend)b, (enum cipher_id)id,
						    integrity)) < 0)
					return rc;
		}
	return 0;
}

static int run_rounds(struct crypto_run *cr)
{
	int rc;

	for (int round = 0; round < BENCH_CRYPTO_ROUNDS; round++)
		for (unsigned i = 0; i < cr->count; i++)
			if ((rc = slice(cr, &cr->stages[i])) < 0)
				return rc;
	for (unsigned i = 0; i < cr->count; i++) {
		struct bench_stage *st = cr->stages[i].st;
		st->rate = st->seconds > 0 ? (double)st->bytes / st->seconds : 0;
		st->cliff.burst = st->cliff.sustained = st->rate;
		st->sample_s = (float)cr->slice;
	}
	return 0;
}

/* What a connection from this machine gets: the client offers AESGCM only
 * when it has AES instructions (handshake.c), and a server picks it only
 * when it has them too (opening_choose). */
static void connection_cipher(struct bench_crypto_info *ci)
{
	unsigned offered = 1u << CIPHER_CHACHAPOLY;

	ci->record = CHAN_MAX_PLAIN;
	ci->hw_aes = chan_have_hw_aes();
	snprintf(ci->backend, sizeof ci->backend, "%s", chan_backend_name());
	if (ci->hw_aes)
		offered |= 1u << CIPHER_AESGCM;
	int pick = opening_choose(offered, CIPHER_MASK_ALL, 1);
	snprintf(ci->picks, sizeof ci->picks, "%s", chan_cipher_name((enum cipher_id)pick));
	snprintf(ci->picks_why, sizeof ci->picks_why, "%s",
		 ci->hw_aes ? "this CPU has AES instructions; ChaChaPoly to a server without them"
			    : "no AES instructions here, so AESGCM is not offered");
}

int bench_crypto_run(const struct bench_opts *o, struct bench_report *r)
{
	struct crypto_run *cr = calloc(1, sizeof *cr);
	double start = bench_now();
	int rc;

	if (!cr)
		return err_set(-ENOMEM, "out of memory");
	cr->o = o;
	r->kind = BENCH_CRYPTO;
	r->seconds_limit = o->seconds > 0 ? o->seconds : BENCH_CRYPTO_SECONDS;
	if ((rc = crypto_ready()) == 0 && !(cr->buf = calloc(1, CHAN_MAX_PLAIN)))
		rc = err_set(-ENOMEM, "out of memory");
	if (rc == 0) {
		connection_cipher(&r->crypto);
		rc = add_all(cr, r);
	}
	if (rc == 0) {
		cr->slice = r->seconds_limit / BENCH_CRYPTO_ROUNDS / (cr->count ? cr->count : 1);
		rc = run_rounds(cr);
	}
	for (unsigned i = 0; i < cr->count; i++)
		aead_wipe(&cr->stages[i].key);
	free(cr->buf);
	free(cr);
	r->elapsed = bench_now() - start;
	return rc;
}
