/* SPDX-License-Identifier: MIT */
/* Internal: a minimal streaming JSON writer (objects, arrays, strings,
 * numbers), enough for the report and always valid JSON: commas and
 * nesting are tracked, strings escaped, non-finite numbers written as null. */
#ifndef FERRY_BENCH_JSONW_H
#define FERRY_BENCH_JSONW_H

#include <stdint.h>
#include <stdio.h>

#define JSONW_DEPTH 8

struct jsonw {
	FILE *f;
	int depth;
	int count[JSONW_DEPTH];   /* members written at each level */
	int after_key;            /* a key was written; its value comes next */
};

void jw_init(struct jsonw *w, FILE *f);
void jw_open(struct jsonw *w, const char *key, char bracket);   /* '{' or '[' */
void jw_close(struct jsonw *w, char bracket);                   /* '}' or ']' */
/* key is NULL inside arrays. */
void jw_str(struct jsonw *w, const char *key, const char *v);
void jw_num(struct jsonw *w, const char *key, double v, int decimals);
void jw_u64(struct jsonw *w, const char *key, uint64_t v);
void jw_bool(struct jsonw *w, const char *key, int v);
void jw_null(struct jsonw *w, const char *key);
/* A whole array of numbers on one line. */
void jw_floats(struct jsonw *w, const char *key, const float *v, uint32_t n, int decimals);

#endif
