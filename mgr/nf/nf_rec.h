/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NF_REC_H
#define ZN_NF_REC_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/common/zn_route_hot.h" /* struct zn_peer */
#include "../core/mgr.h"
#include "../trust/ring_guard.h"

/*
 * The manager's record of one NF slot (m->nf[slot]): everything it keeps
 * of the slot in its own memory, where no NF can write, one record per
 * slot (struct zn_nf_slot, in shared memory, is what the NF and the
 * manager say to each other). The registry owns the records (its module,
 * registry.c, fills them; nf_rec.c makes them before anything reads
 * them); each field names its writer. Apart from the registry, so that
 * what reads a slot's record (the workers, the trust modules) does not
 * depend on what the registry calls.
 * Workers read them; the control thread writes a field only while the
 * slot is FREE, or with a grace period (zn_route_sync) before the
 * workers may see the change matter, as each writer says.
 */
struct zn_nf_rec {
	/* Where the slot lives now, in zn_shm.nfs or in its NF's trust
	 * group's file, and its RX ring there (group_home.c, while the slot is
	 * FREE): what workers use, never the pointers NFs are told. First:
	 * the workers' routing reads it as a struct zn_peer (zn_rctx). */
	struct zn_peer where;
	struct rte_ring *tx;     /* its TX ring there (group_home.c, as `where`) */
	/* The registry's, as it checked the NF's registration: its state
	 * (enum zn_nf_state; ctl.state repeats it to the NF) and
	 * registration generation (ctl.gen), its trust group (NULL: none;
	 * ctl.group says its id to the NF, in memory NFs can write: never
	 * read back) and the worker draining its TX ring (ctl.worker). */
	uint32_t state;
	uint32_t gen;
	struct zn_group *group;
	uint16_t worker;
	/* Has a link into the slot been given since its NF registered? Then
	 * another NF may hand it packets directly: the owner map takes back
	 * from it any packet handed to an NF (owner_map.h). Has a link out
	 * of it been given? Else nothing it holds can be in another NF's
	 * hands by a link (owner_map_hot.c). The registry clears both at
	 * registration, link.c sets them. */
	bool linked_in;
	bool linked_out;
	/* Our side of its RX and TX rings (ring_guard.h), copied from its
	 * home's guards as made when it moves (group_home.c); their heads are the
	 * workers'. */
	struct zn_rguard rx_guard;
	struct zn_rguard tx_guard;
};

/** The registry's state of NF slot @p slot (enum zn_nf_state). */
static inline uint32_t
zn_nf_state(const struct zn_mgr *m, unsigned int slot)
{
	return __atomic_load_n(&m->nf[slot].state, __ATOMIC_ACQUIRE);
}

/** NF slot @p s, where it lives now (group_home.c). */
static inline struct zn_nf_slot *
zn_slot(const struct zn_mgr *m, unsigned int s)
{
	return m->nf[s].where.slot;
}

/** The pool NF @p slot reads: its trust group's, or the shared one. */
static inline struct rte_mempool *
zn_pool_of_nf(const struct zn_mgr *m, uint16_t slot)
{
	const struct zn_group *g = m->nf[slot].group;

	return g != NULL ? g->pool : m->pool;
}

/** The header the manager gets and puts NF @p slot's pool's buffers
 *  with: the shared pool's, or its own of the group's (pool_header.c). */
static inline struct rte_mempool *
zn_pool_mgr_of_nf(const struct zn_mgr *m, uint16_t slot)
{
	const struct zn_group *g = m->nf[slot].group;

	return g != NULL ? g->pool_mgr : m->pool;
}

/** Packets in NF @p slot's TX ring, as our side of it says. */
static inline uint32_t
zn_nf_tx_count(const struct zn_mgr *m, unsigned int slot)
{
	return zn_rguard_count(&m->nf[slot].tx_guard);
}

/** The owner map of the pool NF @p slot hands back (its group's, or the
 *  shared one's). */
static inline struct zn_owner_map *
zn_owner_map_of_nf(const struct zn_mgr *m, uint16_t slot)
{
	const struct zn_group *g = m->nf[slot].group;

	return g != NULL ? g->owners : m->trust.owner_maps;
}


#endif /* ZN_NF_REC_H */
