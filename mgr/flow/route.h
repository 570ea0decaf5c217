/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_ROUTE_H
#define ZN_ROUTE_H

/*
 * The routing snapshot (struct zn_route, zn_shm.h; route.c): what workers
 * and NF packet threads read to decide where a packet goes. Immutable once
 * published: the control thread builds the next one from the NF slots
 * and the sources registered with it (the flow director, fdir.h; load
 * balancing, lb.h: each fills its own part, and publishes after a change
 * by calling this module, which knows none of them), publishes it with
 * one store and reuses the old one once every reader passed an RCU
 * quiescent state (a worker reports one between bursts and goes offline
 * while it sleeps; an NF is online only while it resolves and hands over a
 * burst). A reader that died online is found by its process and put
 * offline, so it never blocks a routing change.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include <zeronf/step.h>

#include "../../lib/shm/zn_shm.h"
#include "../../lib/common/zn_route_hot.h" /* struct zn_res */

struct zn_mgr;
struct zn_route;
struct rte_rcu_qsbr;

/** The routing snapshots (m->route; route.c). The live snapshot NFs read
 *  is shm->rt.route; the workers read `live`. */
struct zn_routing {
	struct zn_route *spare;    /* the next to publish */
	struct zn_route *live;     /* the one published: what workers read,
				    * in private memory (private_heap.c) */
	struct zn_route *nf_spare; /* the NFs' next copy (shared) */
	struct rte_rcu_qsbr *qsbr; /* the workers' (private memory) */
	/* The RCU variable's token of the NFs of no group (a group's is its
	 * qtoken): kept here, the variable being in memory NFs write
	 * (sync_nfs) */
	uint64_t nf_qtoken;
	uint64_t version;
};


/** A source's part of snapshot @p rt, filled after the NF slots' part
 *  (services' instances, what each worker drains) and the sources
 *  registered before it. */
typedef void zn_route_fill_fn(struct zn_mgr *m, struct zn_route *rt);
/** Have @p fill called for every snapshot from now on, in registration
 *  order (at start, each source's init). 0 or -ENOSPC. */
int zn_route_add_source(struct zn_mgr *m, zn_route_fill_fn *fill);
/** Rebuild the snapshot from the NF slots and the sources, publish it and
 *  wait until no worker can see the old one. Control thread only. Modules
 *  that change what a snapshot holds call it after the change. */
void zn_route_publish(struct zn_mgr *m);
/** Wait until every reader (workers and NF packet threads) passed a
 *  quiescent state; an NF that died online is put offline, one stuck
 *  online for 2 s is killed. Control thread only. */
void zn_route_sync(struct zn_mgr *m);
/** The NF in @p slot reads snapshots from now on (registration) / no
 *  more (its process is gone: reclaim). */
void zn_route_reader_add(struct zn_mgr *m, unsigned int slot);
void zn_route_reader_del(struct zn_mgr *m, unsigned int slot);

#endif /* ZN_ROUTE_H */
