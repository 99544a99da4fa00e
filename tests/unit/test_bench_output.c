/* SPDX-License-Identifier: MIT */
/* The writers on a made-up report: JSON (schema, keys, escaping, null for
 * what was not measured), SVG (every stage, XML escaping), the table (a
 * cached figure in parentheses, the cliff line), and --size parsing. The
 * e2e test parses real output with Python's json and xml modules. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "bench/bench.h"

static struct bench_report *disk_report(void)
{
	struct bench_report *r = calloc(1, sizeof *r);
	struct bench_stage *st;

	assert_non_null(r);
	r->kind = BENCH_DISK;
	snprintf(r->env.command, sizeof r->env.command, "ferry bench disk '/mnt/a \"b\" & <c>'");
	snprintf(r->env.version, sizeof r->env.version, "0.1.0");
	snprintf(r->env.kernel, sizeof r->env.kernel, "Linux 6.1.0 mips");
	snprintf(r->env.cpu, sizeof r->env.cpu, "MIPS 1004Kc V2.15\tx");
	r->env.cpus = 4;
	snprintf(r->target.path, sizeof r->target.path, "/mnt/a \"b\" & <c>");
	snprintf(r->target.fstype, sizeof r->target.fstype, "ext4");
	snprintf(r->target.device, sizeof r->target.device, "sda1");
	snprintf(r->target.usb, sizeof r->target.usb, "USB 480 Mb/s");
	r->target.has_dev = 1;
	r->target.size = 256u << 20;

	st = bench_stage_add(r, "seq_write", "sequential write", BENCH_MBPS);
	st->rate = 30e6;
	st->verdict = BENCH_DEVICE;
	st->dev_bytes = 268435456;
	st->cliff = (struct bench_cliff){ 1, 90e6, 21e6, 123456789, 1.5 };
	st->nsamples = 3;
	st->samples[0] = 90e6f, st->samples[1] = 21e6f, st->samples[2] = 20e6f;
	st = bench_stage_add(r, "seq_read", "sequential read", BENCH_MBPS);
	st->rate = 2000e6;
	st->verdict = BENCH_CACHED;
	snprintf(st->note, sizeof st->note, "CACHED: sda1 read 3 %% of it");
	st = bench_stage_add(r, "rand_write_4k", "4 KiB random write", BENCH_IOPS);
	st->rate = 812.4;
	st->verdict = BENCH_DEVICE;
	st = bench_stage_add(r, "small_files", "small files + fsync", BENCH_FILES);
	st->rate = 95.5;
	st->verdict = BENCH_UNVERIFIED;
	return r;
}

/* The writer's output as a string (the caller frees). */
static char *render(int (*fn)(FILE *, const struct bench_report *), const struct bench_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, r), 0);
	fclose(f);
	return buf;
}

static void test_json(void **state)
{
	struct bench_report *r = disk_report();
	char *j = render(bench_write_json, r);

	(void)state;
	assert_non_null(strstr(j, "\"schema\": \"ferry-bench/1\""));
	assert_non_null(strstr(j, "\"kind\": \"disk\""));
	assert_non_null(strstr(j, "\"path\": \"/mnt/a \\\"b\\\" & <c>\""));
	assert_non_null(strstr(j, "\"cpu\": \"MIPS 1004Kc V2.15\\tx\""));
	assert_non_null(strstr(j, "\"rate\": 30.000"));         /* MB/s, not bytes/s */
	assert_non_null(strstr(j, "\"rate\": 812.400"));        /* IOPS as they are */
	assert_non_null(strstr(j, "\"verdict\": \"cached\""));
	assert_non_null(strstr(j, "\"device_bytes\": 268435456"));
	assert_non_null(strstr(j, "\"device_bytes\": null"));   /* unverified: not measured */
	assert_non_null(strstr(j, "\"bytes\": 123456789"));
	assert_non_null(strstr(j, "\"samples\": [90.000, 21.000, 20.000]"));
	assert_non_null(strstr(j, "\"samples\": []"));
	assert_null(strstr(j, "nan"));
	assert_null(strstr(j, ",\n  }"));
	assert_null(strstr(j, "\"crypto\""));
	free(j);
	free(r);
}

static void test_json_crypto(void **state)
{
	struct bench_report *r = calloc(1, sizeof *r);
	struct bench_stage *st;
	char *j;

	(void)state;
	r->kind = BENCH_CRYPTO;
	r->crypto.record = 65519;
	snprintf(r->crypto.picks, sizeof r->crypto.picks, "ChaChaPoly");
	st = bench_stage_add(r, "chachapoly_libsodium_encrypt", "ChaCha20-Poly1305 encrypt", BENCH_MBPS);
	st->rate = 0.0 / 0.0;   /* never printed as nan */
	snprintf(st->backend, sizeof st->backend, "libsodium");
	j = render(bench_write_json, r);
	assert_non_null(strstr(j, "\"kind\": \"crypto\""));
	assert_non_null(strstr(j, "\"record_bytes\": 65519"));
	assert_non_null(strstr(j, "\"connection_cipher\": \"ChaChaPoly\""));
	assert_non_null(strstr(j, "\"rate\": null"));
	assert_non_null(strstr(j, "\"backend\": \"libsodium\""));
	assert_null(strstr(j, "\"target\""));
	assert_null(strstr(j, "\"cliff\""));
	free(j);
	free(r);
}

static void test_svg(void **state)
{
	struct bench_report *r = disk_report();
	char *s = render(bench_write_svg, r);

	(void)state;
	assert_true(strncmp(s, "<?xml", 5) == 0);
	assert_non_null(strstr(s, "</svg>\n"));
	for (uint32_t i = 0; i < r->nstages; i++) {
		char id[64];
		snprintf(id, sizeof id, "id=\"stage-%s\"", r->stages[i].name);
		assert_non_null(strstr(s, id));
	}
	assert_non_null(strstr(s, "/mnt/a &quot;b&quot; &amp; &lt;c&gt;"));
	assert_null(strstr(s, "& <"));
	assert_null(strstr(s, "\t"));                        /* control characters replaced */
	assert_non_null(strstr(s, "(cached)"));
	assert_non_null(strstr(s, ">IOPS</text>"));          /* each unit its own group */
	assert_non_null(strstr(s, ">files/s</text>"));
	free(s);
	free(r);
}

static void test_table(void **state)
{
	struct bench_report *r = disk_report();
	char *t = render(bench_write_table, r);

	(void)state;
	assert_non_null(strstr(t, "$ ferry bench disk"));
	assert_non_null(strstr(t, "ext4 on sda1, USB 480 Mb/s | 256 MiB test"));
	assert_non_null(strstr(t, "30.0 MB/s"));
	assert_non_null(strstr(t, "(2000 MB/s)"));            /* cached: never the disk's speed */
	assert_non_null(strstr(t, "cache cliff: 90.0 MB/s for the first 118 MiB (1.5 s), then 21.0"));
	assert_non_null(strstr(t, "812 IOPS"));
	assert_non_null(strstr(t, "95.5 files/s"));
	assert_null(strstr(t, " \n"));                        /* no trailing blanks */
	free(t);
	free(r);
}

static void test_parse_size(void **state)
{
	uint64_t v;

	(void)state;
	assert_int_equal(bench_parse_size("256M", &v), 0);
	assert_int_equal(v, 256ull << 20);
	assert_int_equal(bench_parse_size("1G", &v), 0);
	assert_int_equal(v, 1ull << 30);
	assert_int_equal(bench_parse_size("512KiB", &v), 0);
	assert_int_equal(v, 512ull << 10);
	assert_int_equal(bench_parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	static const char *const bad[] = { "", "-1", "M", "12X", "1.5G", "16777216T", "9MiBx", "10 M" };
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		assert_int_equal(bench_parse_size(bad[i], &v), -EINVAL);
}

static void test_stage_add_is_bounded(void **state)
{
	struct bench_report *r = calloc(1, sizeof *r);

	(void)state;
	for (unsigned i = 0; i < BENCH_MAX_STAGES; i++)
		assert_non_null(bench_stage_add(r, "x", "x", BENCH_MBPS));
	assert_null(bench_stage_add(r, "x", "x", BENCH_MBPS));
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_json_crypto),
		cmocka_unit_test(test_svg),
		cmocka_unit_test(test_table),
		cmocka_unit_test(test_parse_size),
		cmocka_unit_test(test_stage_add_is_bounded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
