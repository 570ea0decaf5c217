/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The trust police, with --validate: every POLICE_MS on the control loop,
 * what NFs may have rewritten of the manager's structures in memory they
 * write is written back (pools' free rings, lib/common/zn_pool_ops.h;
 * trust groups' pool headers, pool_header.c), and an NF past
 * --bad-desc-limit bad descriptors (owner_map.c counts them) is killed;
 * the registry then reclaims what it held as for any dead NF.
 */

#include <inttypes.h>
#include <signal.h>

#include "../core/event.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../nf/nf_rec.h"
#include "../nf/registry.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_util.h"
#include "police.h"
#include "pool_header.h"
#include "../core/subsys.h"

#define POLICE_MS 50

static uint32_t killed_gen[ZN_MAX_NFS]; /* slot's gen + 1 once killed */

bool
zn_police_lied(struct zn_mgr *m, unsigned int slot)
{
	return slot < ZN_MAX_NFS &&
	       (killed_gen[slot] == m->nf[slot].gen + 1 ||
		zn_slot(m, slot)->mstats.drops[ZN_DROP_BAD_DESC] != 0);
}

/* Kill the NFs past --bad-desc-limit, each once a registration. */
static void
police_nfs(struct zn_mgr *m)
{
	if (m->cfg.bad_desc_limit == 0)
		return;
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++) {
		struct zn_nf_slot *s = zn_slot(m, slot);
		uint32_t st = zn_nf_state(m, slot);
		uint64_t bad = s->mstats.drops[ZN_DROP_BAD_DESC];

		if ((st != ZN_NF_RUNNING && st != ZN_NF_STARTING &&
		     st != ZN_NF_STOPPING) || bad < m->cfg.bad_desc_limit ||
		    killed_gen[slot] == m->nf[slot].gen + 1)
			continue;
		killed_gen[slot] = m->nf[slot].gen + 1;
		ZN_LOG(ERR, "NF '%s' (pid %u, instance %u) handed back %" PRIu64
		       " bad descriptors (--bad-desc-limit %u): killed",
		       s->ctl.name, (unsigned int)zn_registry_pid(m, slot),
		       slot, bad, m->cfg.bad_desc_limit);
		zn_event("nf.killed", "NF '%s' (instance %u): %" PRIu64
			 " bad descriptors", s->ctl.name, slot, bad);
		zn_registry_kill(m, slot, SIGKILL);
	}
}

/* Pools' free rings whose geometry an NF rewrote, written back (control
 * thread; nf_pool_ops.c). */
static uint64_t ring_repairs;
static bool hdr_logged;

void
zn_police_ring_stats(uint64_t *repairs, uint64_t *cut)
{
	*repairs = ring_repairs;
	*cut = zn_pool_ops_waits_cut();
}

static void
police_cb(void *arg)
{
	unsigned int n = zn_pool_ops_repair();

	police_nfs(arg);
	if (zn_pool_header_repair(arg) != 0 && !hdr_logged) {
		ZN_LOG(ERR, "an NF rewrote its trust group's pool header; "
		       "written back (group.list pool.header_repairs)");
		hdr_logged = true;
	}
	if (n == 0)
		return;
	if (ring_repairs == 0)
		ZN_LOG(ERR, "an NF rewrote the geometry of a pool's free ring; "
		       "written back (group.list ring_repairs counts them)");
	ring_repairs += n;
}

/* Police every 50 ms on the control loop (m->loop). 0 or -errno. */
static int
zn_police_start(struct zn_mgr *m)
{
	if (!m->cfg.validate)
		return 0;
	return zn_loop_every(m->loop, POLICE_MS, police_cb, m);
}

static const struct zn_subsys subsys = {
	.name = "police", .order = ZN_SUBSYS_POLICE,
	.init = zn_police_start,
};
ZN_SUBSYS_REGISTER(subsys)
