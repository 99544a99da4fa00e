/* SPDX-License-Identifier: MIT */
#include "bench/jsonw.h"

#include <inttypes.h>
#include <math.h>

void jw_init(struct jsonw *w, FILE *f)
{
	w->f = f;
	w->depth = 0;
	w->count[0] = 0;
	w->after_key = 0;
}

static void indent(struct jsonw *w)
{
	fputc('\n', w->f);
	for (int i = 0; i < w->depth; i++)
		fputs("  ", w->f);
}

static void put_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);   /* UTF-8 passes through; paths are bytes, mostly UTF-8 */
	}
	fputc('"', f);
}

/* The comma, the line break and the key before a value. */
static void member(struct jsonw *w, const char *key)
{
	if (w->depth > 0) {
		if (w->count[w->depth]++)
			fputc(',', w->f);
		indent(w);
	}
	if (key) {
		put_string(w->f, key);
		fputs(": ", w->f);
	}
}

void jw_open(struct jsonw *w, const char *key, char bracket)
{
	member(w, key);
	fputc(bracket, w->f);
	if (w->depth + 1 < JSONW_DEPTH)
		w->count[++w->depth] = 0;
}

void jw_close(struct jsonw *w, char bracket)
{
	int had = w->count[w->depth];

	if (w->depth > 0)
		w->depth--;
	if (had)
		indent(w);
	fputc(bracket, w->f);
	if (w->depth == 0)
		fputc('\n', w->f);
}

void jw_str(struct jsonw *w, const char *key, const char *v)
{
	member(w, key);
	put_string(w->f, v ? v : "");
}

void jw_num(struct jsonw *w, const char *key, double v, int decimals)
{
	member(w, key);
	if (isfinite(v))
		fprintf(w->f, "%.*f", decimals, v);
	else
		fputs("null", w->f);
}

void jw_u64(struct jsonw *w, const char *key, uint64_t v)
{
	member(w, key);
	fprintf(w->f, "%" PRIu64, v);
}

void jw_bool(struct jsonw *w, const char *key, int v)
{
	member(w, key);
	fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jsonw *w, const char *key)
{
	member(w, key);
	fputs("null", w->f);
}

void jw_floats(struct jsonw *w, const char *key, const float *v, uint32_t n, int decimals)
{
	member(w, key);
	fputc('[', w->f);
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			fputs(", ", w->f);
		if (isfinite(v[i]))
			fprintf(w->f, "%.*f", decimals, (double)v[i]);
		else
			fputs("null", w->f);
	}
	fputc(']', w->f);
}
