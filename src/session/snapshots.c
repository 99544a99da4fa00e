/* SPDX-License-Identifier: MIT */
#include "session/snapshots.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs/quote.h"
#include "fs/snapprune.h"
#include "fs/snapinc.h"
#include "fs/snapstore.h"
#include "fs/snapview.h"
#include "util/err.h"
#include "util/retention.h"

int snap_split(char *module, char *sel)
{
	char *at = strchr(module, '@');
	char q[FS_QUOTE_BUF];

	sel[0] = '\0';
	if (!at)
		return 0;
	*at = '\0';
	const char *s = at + 1;
	size_t n = strlen(s);
	if (n >= SNAP_NAME_MAX)
		return err_set(-EINVAL, "snapshot %s: too long", fs_quote(q, s, n));
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("-_:T.Z", s[i]))
			return err_set(-EINVAL, "snapshot %s: not a snapshot's name, latest, -N or "
				       "a date", fs_quote(q, s, n));
	if (strstr(s, ".."))
		return err_set(-EINVAL, "snapshot %s: not a snapshot's name", fs_quote(q, s, n));
	memcpy(sel, s, n + 1);
	return 1;
}

void snap_client_of(const char *fingerprint, char out[SNAP_CLIENT_MAX + 1])
{
	const char *p = strchr(fingerprint, ':');
	size_t n = 0;

	for (p = p ? p + 1 : fingerprint; *p && n < 8; p++)
		out[n++] = isalnum((unsigned char)*p) ? *p : *p == '+' ? '-' : '_';
	out[n] = '\0';
}

/* snapstore_select among the chain's snapshots (the hidden left out): the
 * chain index of the one sel means. */
static int select_in_chain(const struct snapinfo *chain, size_t n, const char *sel)
{
	struct snapinfo *vis = malloc((n ? n : 1) * sizeof *vis);
	size_t *at = malloc((n ? n : 1) * sizeof *at), nv = 0;
	int k = -ENOMEM;

	if (vis && at) {
		for (size_t i = 0; i < n; i++)
			if (!chain[i].hidden) {
				vis[nv] = chain[i];
				at[nv++] = i;
			}
		k = snapstore_select(vis, nv, sel);
		if (k >= 0)
			k = (int)at[k];
	} else {
		err_set(-ENOMEM, "out of memory");
	}
	free(vis);
	free(at);
	return k;
}

int snap_open(struct jail *j, const char *sel, const char *path)
{
	struct snapinfo *list = NULL;
	struct jail view;
	size_t n = 0;
	int hist, snaps, rc;

	if ((rc = snapstore_open(j->root_fd, 0, &hist, &snaps)) < 0)
		return rc == -ENOENT ? err_set(-ENOENT, "the module has no snapshots yet") : rc;
	/* exclusive: a deletion cut short is finished first (fs/snapprune.h),
	 * and a push that did not finish is undone (fs/snapinc.h) */
	int lock = snapstore_lock(hist, 1);
	rc = lock < 0 ? lock : snapprune_settle(j, snaps);
	if (rc >= 0)
		rc = snapinc_settle(j, snaps);
	if (rc >= 0)
		rc = snapstore_chain(snaps, &list, &n);
	int k = rc < 0 ? rc : select_in_chain(list, n, sel);
	if (k < 0) {
		rc = k;
	} else if ((size_t)k + 1 < n) {
		rc = snapview_make(j, hist, snaps, list, n, (size_t)k, path, &view);
		if (rc == 0) {
			jail_close(j);
			*j = view;
		}
	}
	/* the latest snapshot is the module's tree itself */
	free(list);
	if (lock >= 0)
		close(lock);
	close(snaps);
	close(hist);
	return rc;
}

int snap_list_send(struct conn *c, const struct jail *mod)
{
	struct snapinfo *list = NULL;
	struct msg *m = calloc(1, sizeof *m);
	size_t n = 0;
	int hist = -1, snaps = -1, lock = -1, rc;

	if (!m)
		return err_set(-ENOMEM, "out of memory");
	rc = snapstore_open(mod->root_fd, 0, &hist, &snaps);
	if (rc == -ENOENT)
		rc = 0;   /* no snapshot yet: an empty list */
	else if (rc == 0 && (rc = lock = snapstore_lock(hist, 0)) >= 0)
		rc = snapstore_list(snaps, &list, &n);
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		memset(m, 0, sizeof *m);
		m->type = MSG_SNAP;
		m->u.snap.time = list[i].time;
		m->u.snap.files = list[i].files;
		m->u.snap.bytes = list[i].bytes;
		m->u.snap.failed = list[i].failed;
		snprintf(m->u.snap.name, sizeof m->u.snap.name, "%s", list[i].name);
		snprintf(m->u.snap.client, sizeof m->u.snap.client, "%s", list[i].client);
		rc = conn_send(c, m);
	}
	free(list);
	if (lock >= 0)
		close(lock);
	if (snaps >= 0)
		close(snaps);
	if (hist >= 0)
		close(hist);
	if (rc >= 0) {
		memset(m, 0, sizeof *m);
		m->type = MSG_END;
		rc = conn_send(c, m);
	}
	if (rc >= 0)
		rc = conn_flush(c);
	/* the client's DECIDED, then its RESULT */
	while (rc >= 0 && (rc = conn_recv(c, m)) == 0 && m->type != MSG_RESULT)
		if (m->type != MSG_DECIDED)
			rc = err_set(-EBADMSG, "protocol: %s after a snapshot list",
				     msg_type_name(m->type));
	free(m);
	return rc < 0 ? rc : 0;
}

/* The history, open and locked exclusively, settled. */
static int open_locked(const struct jail *mod, int *hist, int *snaps, int *lock)
{
	int rc = snapstore_open(mod->root_fd, 0, hist, snaps);

	*lock = -1;
	if (rc < 0)
		return rc == -ENOENT ? err_set(-ENOENT, "the module has no snapshots yet") : rc;
	if ((rc = *lock = snapstore_lock(*hist, 1)) >= 0)
		rc = snapprune_settle(mod, *snaps);
	if (rc >= 0)
		rc = snapinc_settle(mod, *snaps);
	if (rc < 0) {
		if (*lock >= 0)
			close(*lock);
		close(*snaps);
		close(*hist);
	}
	return rc < 0 ? rc : 0;
}

static void close_locked(int hist, int snaps, int lock)
{
	close(lock);
	close(snaps);
	close(hist);
}

int snap_list(const struct jail *mod, struct snapinfo **list, size_t *n)
{
	int hist, snaps, lock;
	int rc = open_locked(mod, &hist, &snaps, &lock);

	*list = NULL;
	*n = 0;
	if (rc < 0)
		return rc;
	rc = snapstore_list(snaps, list, n);
	close_locked(hist, snaps, lock);
	return rc;
}

int snap_delete(const struct jail *mod, const char *name)
{
	int hist, snaps, lock;
	int rc = open_locked(mod, &hist, &snaps, &lock);

	if (rc < 0)
		return rc;
	rc = snapprune_delete(mod, snaps, name);
	close_locked(hist, snaps, lock);
	return rc;
}

int snap_prune(const struct jail *mod, const struct retention *r, int dry, snap_report_fn fn,
	       void *ctx)
{
	struct snapinfo *list = NULL;
	size_t n = 0;
	int rc = snap_list(mod, &list, &n), deleted = 0;

	if (rc < 0)
		return rc;
	int64_t *times = malloc((n ? n : 1) * sizeof *times);
	unsigned *why = malloc((n ? n : 1) * sizeof *why);
	if (!times || !why) {
		rc = err_set(-ENOMEM, "out of memory");
		n = 0;
	}
	for (size_t i = 0; i < n; i++)
		times[i] = list[i].time;
	retention_apply(r, times, n, (int64_t)time(NULL), why);
	for (size_t i = 0; i < n; i++)
		if (fn)
			fn(ctx, &list[i], why[i]);
	for (size_t i = 0; !dry && rc >= 0 && i < n; i++) {
		if (why[i])
			continue;
		/* listed without the lock: a prune that overlapped this one (the
		 * daemon's after two pushes in a row) may have deleted it first */
		if ((rc = snap_delete(mod, list[i].name)) == 0)
			deleted++;
		else if (rc == -ENOENT)
			rc = 0;
	}
	free(times);
	free(why);
	free(list);
	return rc < 0 ? rc : deleted;
}
