/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Where an NF's slot and rings live (struct zn_group_home, zn_shm.h). An
 * NF of no trust group has them in the EAL's memory (zn_shm.nfs, rings
 * made by the registry and link.c), which every NF maps; an NF of group g
 * has them at the start of g's file, which only g's NFs map: an NF of
 * another group cannot stop it (ctl.stop), rewrite its ledger or
 * counters, or put anything on its rings or links. Every slot index has a home in each group; when
 * an NF registers, the registry moves the slot to its group's home (the
 * slot is FREE then, and no worker reads it past a grace period).
 *
 * The rings of a home are made here once, with the group's file, and
 * their guards (ring_guard.h) kept as made: an NF of the group could have
 * rewritten a ring's header since, so the guard is copied, not retaken.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ring.h>

#include "../core/mgr.h"
#include "group_home.h"
#include "../nf/pool_acct.h"
#include "ring_guard.h"
#include "../flow/route.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"
#include "../core/subsys.h"

struct zn_nf_slot *
zn_group_home_slot(const struct zn_mgr *m, const struct zn_group *g,
	     unsigned int slot)
{
	if (slot >= ZN_MAX_NFS)
		return NULL;
	if (g == NULL)
		return &m->shm->nfs[slot];
	return g->home_rg != NULL ? &zn_group_home_at(g->idx)->nfs[slot] : NULL;
}

static int
group_rings(struct zn_mgr *m, unsigned int g)
{
	uint64_t mem = rte_ring_get_memsize(m->cfg.ring_size);
	char *base = (char *)zn_group_home_at(g);
	char name[RTE_RING_NAMESIZE];
	struct zn_rguard *rg = zn_rguard_alloc(ZN_HOME_RINGS);

	if (rg == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < ZN_HOME_RINGS; i++) {
		struct rte_ring *r = (void *)(base + zn_home_ring_off(i, mem));
		/* Flags as the registry's and link.c's: workers enqueue to
		 * an RX ring (MP), an NF alone to the rest */
		unsigned int flags = RING_F_SC_DEQ;
		int rc;

		/* Not in DPDK's ring list, which every NF walks by name */
		zn_home_ring_name(name, sizeof(name), g, i);
		if (i % 2 == 1 || i >= ZN_HOME_LINK(0))
			flags |= RING_F_SP_ENQ;
		rc = rte_ring_init(r, name, m->cfg.ring_size, flags);
		if (rc < 0) {
			free(rg);
			return rc;
		}
		zn_rguard_init(&rg[i], r);
	}
	m->trust.group[g].home_rg = rg;
	return 0;
}

/* What the group's NFs read of the manager's state, in their file
 * (struct zn_group_home view): as zn_shm says it now. */
static void
view_init(struct zn_mgr *m, unsigned int g)
{
	struct zn_group_home *h = zn_group_home_at(g);

	h->view.hdr = m->shm->hdr;
	zn_pool_acct_view(m, g + 1, &h->view.hdr); /* its pool's tags */
	h->view.group = m->shm->groups[g];
	h->view.stopping = m->shm->mgr.stopping;
	h->view.lb_epoch = m->shm->rt.lb_epoch;
	for (unsigned int l = 0; l < ZN_MAX_LINKS; l++)
		h->view.links[l] = (struct zn_link){ .gen = m->shm->links[l].gen };
	memset(h->wdb, 0, sizeof(h->wdb));
}

void
zn_group_home_view_stopping(struct zn_mgr *m)
{
	m->shm->mgr.stopping = 1;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++)
		if (m->trust.group[g].home_rg != NULL)
			__atomic_store_n(&zn_group_home_at(g)->view.stopping,
					 1, __ATOMIC_RELEASE);
}

void
zn_group_home_view_link(struct zn_mgr *m, unsigned int l,
		  const struct zn_group *grp, const struct zn_link *lk)
{
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		struct zn_link *v;

		if (m->trust.group[g].home_rg == NULL)
			continue;
		v = &zn_group_home_at(g)->view.links[l];
		/* The pair's group sees the link; every other group sees
		 * it unused (a link taken back: whichever group had it). */
		if (&m->trust.group[g] == grp && lk->used)
			*v = *lk;
		else
			__atomic_store_n(&v->used, 0, __ATOMIC_RELEASE);
	}
}

/* Make the homes' rings and keep their guards (after the groups, the
 *  registry's rings and their guards). 0 or -errno. */
static int
zn_group_home_setup(struct zn_mgr *m)
{
	struct zn_rguard *rg = zn_rguard_alloc(ZN_HOME_RINGS);

	if (rg == NULL)
		return -ENOMEM;
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		rg[ZN_HOME_RX(s)] = m->nf[s].rx_guard;
		rg[ZN_HOME_TX(s)] = m->nf[s].tx_guard;
	}
	for (unsigned int l = 0; l < ZN_MAX_LINKS; l++)
		rg[ZN_HOME_LINK(l)] = m->rg_link[l];
	m->trust.home_rg = rg;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		int rc;

		if (m->trust.group[g].pool == NULL)
			continue;
		rc = group_rings(m, g);
		if (rc < 0) {
			ZN_LOG(ERR, "trust group %u: cannot make its NFs' "
			       "rings: %s", g, strerror(-rc));
			return rc;
		}
		view_init(m, g);
	}
	return 0;
}

static void
zn_group_home_teardown(struct zn_mgr *m)
{
	free(m->trust.home_rg);
	m->trust.home_rg = NULL;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		free(m->trust.group[g].home_rg);
		m->trust.group[g].home_rg = NULL;
	}
}

void
zn_group_home_move(struct zn_mgr *m, unsigned int slot, const struct zn_group *g)
{
	struct zn_nf_slot *to = zn_group_home_slot(m, g, slot);
	const struct zn_rguard *rg = g != NULL ? g->home_rg : m->trust.home_rg;
	struct zn_nf_rec *r = &m->nf[slot];

	if (to == NULL || r->where.slot == to)
		return;
	/* Workers of an older snapshot may still poll the slot's rings
	 * (empty: it is FREE): past this, none does. */
	zn_route_sync(m);
	r->where.slot = to;
	r->rx_guard = rg[ZN_HOME_RX(slot)];
	r->tx_guard = rg[ZN_HOME_TX(slot)];
	r->where.rx = r->rx_guard.ring;
	r->tx = r->tx_guard.ring;
	m->shm->rt.nf_rx[slot] = r->where.rx;
	m->shm->rt.nf_tx[slot] = r->tx;
}

void
zn_group_home_link(struct zn_mgr *m, unsigned int l, const struct zn_group *g)
{
	m->rg_link[l] = (g != NULL ? g->home_rg : m->trust.home_rg)[ZN_HOME_LINK(l)];
	m->link_ring[l] = m->rg_link[l].ring;
}

static const struct zn_subsys subsys = {
	.name = "homes", .order = ZN_SUBSYS_HOMES,
	.init = zn_group_home_setup, .fini = zn_group_home_teardown,
};
ZN_SUBSYS_REGISTER(subsys)
