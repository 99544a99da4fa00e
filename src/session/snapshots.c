/* SPDX-License-Identifier: MIT */
#include "session/snapshots.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs/quote.h"
#include "fs/snapstore.h"
#include "fs/snapview.h"
#include "util/err.h"

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

int snap_open(struct jail *j, const char *sel, const char *path)
{
	struct snapinfo *list = NULL;
	struct jail view;
	size_t n = 0;
	int hist, snaps, rc;

	if ((rc = snapstore_open(j->root_fd, 0, &hist, &snaps)) < 0)
		return rc == -ENOENT ? err_set(-ENOENT, "the module has no snapshots yet") : rc;
	int lock = snapstore_lock(hist, 0);
	rc = lock < 0 ? lock : snapstore_list(snaps, &list, &n);
	int k = rc < 0 ? rc : snapstore_select(list, n, sel);
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
