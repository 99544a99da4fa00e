/* SPDX-License-Identifier: MIT */
#include "session/prune.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void prune_init(struct prune *p, prune_list_fn list, void *ctx)
{
	memset(p, 0, sizeof *p);
	p->list = list;
	p->ctx = ctx;
}

void prune_forget(struct prune *p)
{
	for (size_t i = 0; i < PRUNE_EMPTY_KEPT; i++) {
		free(p->empty[i]);
		p->empty[i] = NULL;
	}
	for (size_t i = 0; i < PRUNE_FOUND_KEPT; i++) {
		free(p->found[i]);
		p->found[i] = NULL;
	}
	free(p->deepest);
	p->deepest = NULL;
}

void prune_free(struct prune *p)
{
	prune_forget(p);
	memset(p, 0, sizeof *p);
}

/* a is b, or a directory above it */
static int at_or_above(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/' || n == 0);
}

/* A directory above an entry found holds something. */
static int known_full(const struct prune *p, const char *wpath)
{
	if (p->deepest && at_or_above(wpath, p->deepest) && strcmp(wpath, p->deepest))
		return 1;
	for (size_t i = 0; i < PRUNE_FOUND_KEPT; i++)
		if (p->found[i] && at_or_above(wpath, p->found[i]) && strcmp(wpath, p->found[i]))
			return 1;
	return 0;
}

static int known_empty(const struct prune *p, const char *wpath)
{
	for (size_t i = 0; i < PRUNE_EMPTY_KEPT; i++)
		if (p->empty[i] && at_or_above(p->empty[i], wpath))
			return 1;
	return 0;
}

/* Into a ring (only what is remembered is lost when out of memory). */
static void ring_put(char **ring, size_t n, size_t *next, const char *path)
{
	char *c = strdup(path);

	if (!c)
		return;
	free(ring[*next]);
	ring[*next] = c;
	*next = (*next + 1) % n;
}

static void keep_found(struct prune *p, const char *path)
{
	ring_put(p->found, PRUNE_FOUND_KEPT, &p->next_found, path);
	if (!p->deepest || strlen(path) > strlen(p->deepest)) {
		char *c = strdup(path);
		if (c) {
			free(p->deepest);
			p->deepest = c;
		}
	}
}

/* Something in l is not a directory: remembered as found. */
static int holds_file(struct prune *p, const char *wpath, const struct dirlist *l)
{
	char path[PATH_MAX_WIRE + 1];

	for (size_t i = 0; i < l->n; i++)
		if (!S_ISDIR(l->ents[i].st.st_mode)) {
			snprintf(path, sizeof path, "%s%s%s", wpath, wpath[0] ? "/" : "",
				 l->ents[i].name);
			keep_found(p, path);
			return 1;
		}
	return 0;
}

int prune_has_file(struct prune *p, const char *wpath, const struct stat *parent)
{
	struct dirstack d;
	struct dirlist l = { 0 };
	struct stat st;
	int rc = 1;

	if (known_full(p, wpath))
		return 1;
	if (known_empty(p, wpath))
		return 0;
	if (dirstack_init(&d, wpath) < 0)
		return 1;
	if (p->list(p->ctx, wpath, parent, &l, &st) < 0 || holds_file(p, wpath, &l) ||
	    dirstack_push(&d, &l, &st) < 0)
		goto out;
	rc = 0;
	while (rc == 0 && d.n) {
		if (!dirstack_next_dir(&d)) {   /* the deepest one holds nothing */
			ring_put(p->empty, PRUNE_EMPTY_KEPT, &p->next_empty, d.path);
			dirstack_pop(&d);
			continue;
		}
		if (known_full(p, d.path)) {
			rc = 1;
			break;
		}
		if (known_empty(p, d.path))
			continue;
		const struct stat *up = &dirstack_top(&d)->st;
		if (p->list(p->ctx, d.path, up, &l, &st) < 0 || holds_file(p, d.path, &l) ||
		    dirstack_find(&d, st.st_dev, st.st_ino) || dirstack_push(&d, &l, &st) < 0)
			rc = 1;   /* a loop (-L, -k) too: the walk says it */
	}
out:
	dirlist_free(&l);
	dirstack_free(&d);
	return rc;
}
