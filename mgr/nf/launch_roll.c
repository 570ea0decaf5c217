/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Rolling restarts of a launched NF (nf.restart): its service never
 * lacks a replica. One extra replica (the surge, the next index) starts
 * first; once it runs (registered, past its init), each replica in turn
 * is stopped (the registry stops routing to it, it drains, and its flows
 * move to the others as a replica's death moves them) and started again,
 * the next one only once the last runs again; then the surge is stopped.
 * What was stopped is what the spec says now: a restart after the spec
 * changed (nf.restart with new parameters) is a rolling replacement.
 *
 * A replica that fails to come back (its back-off, or given up) stops
 * the roll there (event nf.roll_stopped): the surge keeps serving, and
 * the replicas not yet restarted are left as they are. Driven by the
 * launcher's tick (launch.c), control thread only.
 */

#include <limits.h>

#include "../core/event.h"
#include "launch_pvt.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "registry.h"
#include "../../lib/common/zn_util.h"
#include "nf_rec.h"

#define ROLL_STEP_NS (60ULL * 1000 * 1000 * 1000) /* one replica's turn */

enum { ROLL_SURGE = 1, ROLL_RESTART, ROLL_SURGE_DOWN };

/* Has replica @p i run since the roll's current step began: its process
 * started then and registered, past its init? */
static bool
runs_again(const struct launch *l, unsigned int i)
{
	const struct replica *r = &l->r[i];
	char name[ZN_NAME_LEN];
	int slot;

	if (r->state != R_RUNNING || r->started_ns < l->roll.step_ns)
		return false;
	launch_replica_name(l, i, name, sizeof(name));
	slot = zn_registry_find(L.m, name);
	return slot >= 0 && zn_nf_state(L.m, (unsigned int)slot) ==
			    ZN_NF_RUNNING;
}

static void
step(struct launch *l, uint8_t phase)
{
	l->roll.phase = phase;
	l->roll.step_ns = zn_now_ns();
}

static void
stop_roll(struct launch *l, const char *why)
{
	zn_event("nf.roll_stopped", "%s: rolling restart stopped at replica "
		 "%u of %u: %s", l->name, l->roll.next, l->replicas, why);
	l->roll.phase = 0;
}

static void roll_tick(struct launch *l);

static void
tick_all(void *arg)
{
	(void)arg;
	for (unsigned int k = 0; k < LAUNCH_MAX; k++)
		if (L.l[k].used && L.l[k].roll.phase != 0)
			roll_tick(&L.l[k]);
}

int
launch_roll_start(struct launch *l)
{
	static bool timer;
	unsigned int s = l->replicas;

	if (l->roll.phase != 0)
		return -EBUSY;
	if (!timer && zn_loop_every(L.m->loop, TICK_MS, tick_all, NULL) < 0)
		return -ENOSPC;
	timer = true;
	if (s >= ZN_MAX_REPLICAS || l->r[s].state != R_DOWN)
		return -ENOSPC; /* no index for the surge */
	l->roll.surge = s;
	l->roll.next = 0;
	step(l, ROLL_SURGE);
	zn_event("nf.roll", "%s: rolling restart of %u replica(s)", l->name,
		 l->replicas);
	l->r[s].fails = 0;
	launch_start_replica(l, s);
	return 0;
}

void
launch_roll_cancel(struct launch *l, const char *why)
{
	if (l->roll.phase != 0)
		stop_roll(l, why);
}

static void
roll_tick(struct launch *l)
{
	const struct replica *r;
	unsigned int i;

	if (l->roll.phase == 0 || L.stopping || l->removing) {
		l->roll.phase = 0;
		return;
	}
	i = l->roll.phase == ROLL_RESTART ? l->roll.next : l->roll.surge;
	r = &l->r[i];
	if (l->roll.phase != ROLL_SURGE_DOWN &&
	    (r->state == R_BACKOFF || r->state == R_FAILED ||
	     (r->state == R_DOWN && r->started_ns >= l->roll.step_ns) ||
	     zn_now_ns() - l->roll.step_ns > ROLL_STEP_NS)) {
		stop_roll(l, r->state == R_FAILED ? "it failed" :
			  r->state == R_RUNNING || r->state == R_STOPPING ?
			  "it did not run again within 60 s" : "it exited");
		return;
	}
	switch (l->roll.phase) {
	case ROLL_SURGE:
	case ROLL_RESTART:
		if (!runs_again(l, i))
			return;
		if (l->roll.phase == ROLL_RESTART)
			l->roll.next++;
		if (l->roll.next < l->replicas) {
			/* the next one: stopped, started again on its exit */
			step(l, ROLL_RESTART);
			l->r[l->roll.next].fails = 0;
			if (l->r[l->roll.next].state == R_RUNNING) {
				launch_stop_replica(l, l->roll.next);
				l->r[l->roll.next].restart_asked = true;
			} else {
				launch_start_replica(l, l->roll.next);
			}
			return;
		}
		step(l, ROLL_SURGE_DOWN);
		launch_stop_replica(l, l->roll.surge);
		return;
	case ROLL_SURGE_DOWN:
		if (r->state != R_DOWN)
			return;
		zn_event("nf.rolled", "%s: every replica restarted", l->name);
		l->roll.phase = 0;
		return;
	default:
		l->roll.phase = 0;
	}
}
