/* SPDX-License-Identifier: MIT */
#include "util/privdrop.h"

#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <unistd.h>

#include "util/err.h"

/* "1000" -> 1000; anything else (a name) -> -1. */
static long as_number(const char *s)
{
	char *end;
	long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < 0 || v >= (long)INT_MAX)
		return -1;
	return v;
}

int priv_user(const char *s, uid_t *uid, gid_t *gid)
{
	long n = as_number(s);
	struct passwd *pw;

	errno = 0;
	pw = n >= 0 ? getpwuid((uid_t)n) : getpwnam(s);
	if (pw) {
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
		return 0;
	}
	if (n < 0)
		return err_set(-ENOENT, "no user '%.64s' on this system", s);
	*uid = (uid_t)n;
	*gid = (gid_t)-1;
	return 0;
}

int priv_group(const char *s, gid_t *gid)
{
	long n = as_number(s);
	struct group *gr;

	if (n >= 0) {
		*gid = (gid_t)n;
		return 0;
	}
	errno = 0;
	if (!(gr = getgrnam(s)))
		return err_set(-ENOENT, "no group '%.64s' on this system", s);
	*gid = gr->gr_gid;
	return 0;
}

static int already(uid_t uid, gid_t gid)
{
	uid_t r, e, s;
	gid_t rg, eg, sg;

	if (getresuid(&r, &e, &s) < 0 || getresgid(&rg, &eg, &sg) < 0)
		return 0;
	return r == uid && e == uid && s == uid && rg == gid && eg == gid && sg == gid;
}

int priv_drop(uid_t uid, gid_t gid)
{
	if (geteuid() != 0) {
		if (already(uid, gid))
			return 0;   /* its supplementary groups stay: only root can drop them */
		return err_set(-EPERM, "cannot become uid %u gid %u: running as uid %u, not root",
			       (unsigned)uid, (unsigned)gid, (unsigned)geteuid());
	}
	/* groups first: after setuid there is no right to change them */
	if (setgroups(0, NULL) < 0)
		return err_sys(-errno, "setgroups");
	if (setresgid(gid, gid, gid) < 0)
		return err_sys(-errno, "setgid %u", (unsigned)gid);
	if (setresuid(uid, uid, uid) < 0)
		return err_sys(-errno, "setuid %u", (unsigned)uid);
	if (!already(uid, gid) || (uid != 0 && setuid(0) == 0))
		return err_set(-EPERM, "dropping privileges to uid %u gid %u did not hold",
			       (unsigned)uid, (unsigned)gid);
	return 0;
}
