/* SPDX-License-Identifier: MIT */
#include "util/idmap.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proto/msg.h"

#define SLOTS 8

struct slot { int used, known; uint32_t id; char name[XMETA_MAX_IDNAME + 1]; };
/* [0] user, [1] group; by id and by name */
static struct slot by_id[2][SLOTS], by_name[2][SLOTS];
static unsigned next_id[2], next_name[2];

/* After idmap_freeze: the databases as they were, and nothing else. */
struct ent { uint32_t id; char name[XMETA_MAX_IDNAME + 1]; };
static struct ent *snap[2];
static size_t nsnap[2];
static int frozen;

static int snap_add(int grp, uint32_t id, const char *name)
{
	static size_t cap[2];

	if (strlen(name) > XMETA_MAX_IDNAME || nsnap[grp] >= IDMAP_FREEZE_MAX)
		return 0;
	if (nsnap[grp] == cap[grp]) {
		size_t nc = cap[grp] ? cap[grp] * 2 : 32;
		struct ent *n = realloc(snap[grp], nc * sizeof *n);
		if (!n)
			return -ENOMEM;
		snap[grp] = n;
		cap[grp] = nc;
	}
	snap[grp][nsnap[grp]].id = id;
	snprintf(snap[grp][nsnap[grp]++].name, XMETA_MAX_IDNAME + 1, "%s", name);
	return 0;
}

int idmap_freeze(void)
{
	int rc = 0;

	if (frozen)
		return 0;
	setpwent();
	for (struct passwd *p; rc == 0 && nsnap[0] < IDMAP_FREEZE_MAX && (p = getpwent());)
		rc = snap_add(0, p->pw_uid, p->pw_name);
	endpwent();
	setgrent();
	for (struct group *g; rc == 0 && nsnap[1] < IDMAP_FREEZE_MAX && (g = getgrent());)
		rc = snap_add(1, g->gr_gid, g->gr_name);
	endgrent();
	frozen = 1;
	return rc;
}

static const char *snap_name(int grp, uint32_t id)
{
	for (size_t i = 0; i < nsnap[grp]; i++)
		if (snap[grp][i].id == id)
			return snap[grp][i].name;
	return NULL;
}

static int snap_id(int grp, const char *name, uint32_t *id)
{
	for (size_t i = 0; i < nsnap[grp]; i++)
		if (!strcmp(snap[grp][i].name, name))
			return *id = snap[grp][i].id, 1;
	return 0;
}

/* The database's answer, or known = 0. A name longer than XMETA allows is
 * not sent (the receiver then uses the id). */
static void look_id(int grp, uint32_t id, struct slot *s)
{
	char buf[4096];
	const char *name = NULL;

	if (frozen) {
		name = snap_name(grp, id);
	} else if (grp) {
		struct group g, *res = NULL;
		if (getgrgid_r((gid_t)id, &g, buf, sizeof buf, &res) == 0 && res)
			name = res->gr_name;
	} else {
		struct passwd p, *res = NULL;
		if (getpwuid_r((uid_t)id, &p, buf, sizeof buf, &res) == 0 && res)
			name = res->pw_name;
	}
	s->id = id;
	s->known = name && strlen(name) <= XMETA_MAX_IDNAME;
	snprintf(s->name, sizeof s->name, "%s", s->known ? name : "");
}

static void look_name(int grp, const char *name, struct slot *s)
{
	char buf[4096];

	s->known = 0;
	if (frozen) {
		s->known = snap_id(grp, name, &s->id);
	} else if (grp) {
		struct group g, *res = NULL;
		if (getgrnam_r(name, &g, buf, sizeof buf, &res) == 0 && res)
			s->id = res->gr_gid, s->known = 1;
	} else {
		struct passwd p, *res = NULL;
		if (getpwnam_r(name, &p, buf, sizeof buf, &res) == 0 && res)
			s->id = res->pw_uid, s->known = 1;
	}
	snprintf(s->name, sizeof s->name, "%s", name);
}

static const char *name_of(int grp, uint32_t id)
{
	for (int i = 0; i < SLOTS; i++)
		if (by_id[grp][i].used && by_id[grp][i].id == id)
			return by_id[grp][i].name;
	struct slot *s = &by_id[grp][next_id[grp]++ % SLOTS];
	look_id(grp, id, s);
	s->used = 1;
	return s->name;
}

static uint32_t id_of(int grp, const char *name, uint32_t id)
{
	if (!name[0])
		return id;
	for (int i = 0; i < SLOTS; i++)
		if (by_name[grp][i].used && !strcmp(by_name[grp][i].name, name))
			return by_name[grp][i].known ? by_name[grp][i].id : id;
	struct slot *s = &by_name[grp][next_name[grp]++ % SLOTS];
	look_name(grp, name, s);
	s->used = 1;
	return s->known ? s->id : id;
}

const char *idmap_user_name(uint32_t uid) { return name_of(0, uid); }
const char *idmap_group_name(uint32_t gid) { return name_of(1, gid); }
uint32_t idmap_uid(const char *name, uint32_t id) { return id_of(0, name, id); }
uint32_t idmap_gid(const char *name, uint32_t id) { return id_of(1, name, id); }
