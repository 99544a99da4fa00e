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

void prune_free(struct prune *p)
{
	for (size_t i = 0; i < PRUNE_EMPTY_KEPT; i++)
		free(p->empty[i]);
	memset(p, 0, sizeof *p);
}

/* a is b, or a directory above it */
static int at_or_above(const char *a, const char *b)
{
	size_t n = strlen(a);

	return !strncmp(a, b, n) && (b[n] == '\0' || b[n] == '/' || n == 0);
}

static int known_empty(const struct prune *p, const char *wpath)
{
	for (size_t i = 0; i < PRUNE_EMPTY_KEPT; i++)
		if (p->empty[i] && at_or_above(p->empty[i], wpath))
			return 1;
	return 0;
}

static void keep_empty(struct prune *p, const char *wpath)
{
	char *c = strdup(wpath);

	if (!c)
		return;   /* only what is remembered is lost */
	free(p->empty[p->next]);
	p->empty[p->next] = c;
	p->next = (p->next + 1) % PRUNE_EMPTY_KEPT;
}

/* Something in l is not a directory: remembered as found. */
static int holds_file(struct prune *p, const char *wpath, const struct dirlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		if (!S_ISDIR(l->ents[i].st.st_mode)) {
			snprintf(p->found, sizeof p->found, "%s%s%s", wpath, wpath[0] ? "/" : "",
				 l->ents[i].name);
			return 1;
		}
	return 0;
}

int prune_has_file(struct prune *p, const char *wpath)
{
	struct dirstack d;
	struct dirlist l = { 0 };
	struct stat st;
	int rc = 1;

	if (p->found[0] && at_or_above(wpath, p->found) && strcmp(wpath, p->found))
		return 1;
	if (known_empty(p, wpath))
		return 0;
	if (dirstack_init(&d, wpath) < 0)
		return 1;
	if (p->list(p->ctx, wpath, &l, &st) < 0 || holds_file(p, wpath, &l) ||
	    dirstack_push(&d, &l, &st) < 0)
		goto out;
	rc = 0;
	while (rc == 0 && d.n) {
		if (!dirstack_next_dir(&d)) {   /* the deepest one holds nothing */
			keep_empty(p, d.path);
			dirstack_pop(&d);
			continue;
		}
		if (known_empty(p, d.path))
			continue;
		if (p->list(p->ctx, d.path, &l, &st) < 0 || holds_file(p, d.path, &l)) {
			rc = 1;
		} else if (dirstack_find(&d, st.st_dev, st.st_ino)) {
			dirlist_free(&l);   /* -L: a loop back up holds nothing new */
		} else if (dirstack_push(&d, &l, &st) < 0) {
			rc = 1;
		}
	}
out:
	dirlist_free(&l);
	dirstack_free(&d);
	return rc;
}
