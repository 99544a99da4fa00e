/* SPDX-License-Identifier: MIT */
#include "session/zpolicy.h"

#include <string.h>

void zpolicy_init(struct zpolicy *p, enum zp_mode mode)
{
	memset(p, 0, sizeof *p);
	p->mode = mode;
	p->backoff = 1;
	p->win_t = -1;
	/* auto starts raw, with a try at once so that C is known early */
	p->since_probe = ZP_PROBE_EVERY;
}

void zpolicy_file(struct zpolicy *p)
{
	p->backoff = 1;
	p->skip = 0;
}

static uint32_t min_u32(uint32_t a, uint32_t b)
{
	return a < b ? a : b;
}

uint32_t zpolicy_next(const struct zpolicy *p)
{
	if (p->skip)
		return min_u32(p->skip, ZP_RAW_RUN_MAX);
	if (p->mode == ZP_AUTO && !p->on && p->since_probe < ZP_PROBE_EVERY)
		return min_u32(ZP_PROBE_EVERY - p->since_probe, ZP_RAW_RUN_MAX);
	return 0;
}

void zpolicy_skipped(struct zpolicy *p, uint32_t k)
{
	p->skip -= min_u32(p->skip, k);
	p->since_probe += k;
}

void zpolicy_tried(struct zpolicy *p, uint64_t raw, uint64_t zlen, double secs)
{
	p->c_bytes += (double)raw;
	p->c_secs += secs;
	p->since_probe = 0;
	if (zlen) {
		p->backoff = 1;
		return;
	}
	p->skip = p->backoff;
	if (p->backoff < ZP_BACKOFF_MAX)
		p->backoff *= 2;
}

double zpolicy_speed(const struct zpolicy *p)
{
	return p->c_secs > 0 ? p->c_bytes / p->c_secs : 0;
}

/* The end of a window: what the link did, and the decision. */
static void decide(struct zpolicy *p, double wall, double wire, double blocked)
{
	double c = zpolicy_speed(p);
	int was = p->on;

	if (blocked * 100 >= wall * ZP_BLOCKED_PCT) {
		p->link = wire / wall;   /* the link set the pace: this is its speed */
		p->idle = 0;
	} else if (p->on && ++p->idle >= ZP_IDLE_WINDOWS) {
		p->link = 0;             /* the compressor is the bottleneck: measure raw */
		p->idle = 0;
	} else if (!p->on) {
		p->link = 0;             /* raw and never blocked: the link is not the limit */
	}
	if (p->link > 0 && c > 0)
		p->on = p->link < c / 2;
	else if (!p->link)
		p->on = 0;
	p->flips += p->on != was;
}

void zpolicy_link(struct zpolicy *p, double now, uint64_t wire_out, double blocked)
{
	if (p->mode != ZP_AUTO)
		return;
	if (p->win_t < 0 || now < p->win_t) {
		p->win_t = now;
		p->win_wire = wire_out;
		p->win_blocked = blocked;
		return;
	}
	double wall = now - p->win_t;
	if (wall < ZP_WINDOW_SECS)
		return;
	decide(p, wall, (double)(wire_out - p->win_wire), blocked - p->win_blocked);
	p->win_t = now;
	p->win_wire = wire_out;
	p->win_blocked = blocked;
}
