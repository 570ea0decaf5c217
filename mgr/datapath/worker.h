/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_WORKER_H
#define ZN_WORKER_H

/* The data path: workers (worker.c) and the flow director's classifier
 * (fdir_hot.c). Each worker is one EAL lcore; RX and TX work can share a
 * worker or be split (--rx-threads / --tx-threads). */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "../../lib/shm/zn_shm.h"
#include "../../lib/common/zn_yield.h"
#include "../flow/route.h"

struct zn_mgr;
struct zn_fabric_view;
struct zn_owner_map;
struct zn_worker;

/** The workers (m->dp): made at start (main.c), then theirs. */
struct zn_datapath {
	struct zn_worker *workers[ZN_MAX_WORKERS];
	unsigned int n_workers;
	/* Port RX: 0 while paused and during shutdown. Written by the control
	 * thread (rx.set, --rx-when-ready, shutdown), read by workers. */
	volatile int rx_enabled;
	bool rx_waiting;   /* --rx-when-ready, not yet enabled */
	volatile int quit; /* main.c: workers exit */
};

#define ZN_STAGE_SZ (2 * ZN_BURST)
#define ZN_TXBUF_SZ (2 * ZN_BURST)
#define ZN_MAX_RXQ_PER_WORKER 64

/* Packets taken from one source (an NF's TX ring or a port queue), in
 * order, not yet delivered: head-of-line order keeps flows in order. */
struct zn_stage {
	uint16_t head;
	uint16_t tail;
	bool uniform;           /* res[0] applies to every packet */
	uint16_t wait_nf;       /* slot + 1 of the NF whose full RX ring
				 * stopped the last flush, 0: none */
	uint64_t blocked_since; /* tsc of the first failed delivery, or 0 */
	/* An NF's stage under --validate: its packets passed zn_owner_map_filter
	 * only, all buffers of this pool; anything reading past their
	 * metadata checks them whole first (owner_map.h). NULL: a port's. */
	const struct zn_owner_map *dp;
	/* An NF's stage: its tenant + 1 (0: none), where its packets may
	 * go (mgr/tenant/tenant.c). A port's: */
	uint8_t tenant;
	bool no_wait;  /* a sliced port: what a tenant's first hop cannot
			* take now drops (ingress_full), others go on */
	struct rte_mbuf *pkts[ZN_STAGE_SZ];
	struct zn_res res[ZN_STAGE_SZ];
};

struct zn_txbuf {
	uint16_t n;
	uint64_t blocked_since;
	struct rte_mbuf *pkts[ZN_TXBUF_SZ];
};

struct zn_rxq {
	uint16_t port;
	uint16_t queue;
	/* its port's trust group's port headers, where it receives into
	 * them (port_headers.h), else NULL; the owner map of the pool it
	 * receives into (NULL: no --validate) */
	const struct zn_port_headers *headers;
	const struct zn_owner_map *owners;
	struct zn_stage stage;
};

struct zn_mgr;

struct zn_worker {
	unsigned int id;
	unsigned int lcore;
	struct zn_yield yld;  /* its idle yields (lib/common/zn_yield.h) */
	bool rx_role;
	bool tx_role;
	struct zn_mgr *mgr;
	struct zn_worker_shm *shm;
	unsigned int n_rxq;
	struct zn_rxq rxq[ZN_MAX_RXQ_PER_WORKER];
	uint16_t txq[ZN_MAX_PORTS];           /* TX queue id per port */
	struct zn_txbuf txbuf[ZN_MAX_PORTS];
	struct zn_stage nf_stage[ZN_MAX_NFS]; /* per drained NF */
	uint64_t stall_cycles; /* 0: never drop stalled packets */
	/* NFs whose packets this worker dropped as stalled and that have
	 * taken none since: what comes for them is dropped at once, not
	 * after another stall_cycles each (a hung replica would slow its
	 * whole port to a burst per --stall-ms) */
	bool nf_stalled[ZN_MAX_NFS];
	uint64_t now_ns;       /* wall clock, set when the fdir needs it */
	struct zn_rctx rc;     /* routing: balancing state, reader id, and
				* rc.now: the tsc at the top of the loop */
	const struct zn_route *parse_rt; /* the snapshot parse_may is of */
	bool parse_may;        /* routing an NF's packet may parse it */
	/* A pool audit's question (group_audit.c): the control thread sets
	 * the pool and its memory, then bumps audit_req (release) and rings
	 * the worker; the worker flushes its cache of that pool, counts the
	 * pool's buffers it holds (audit_held), then sets audit_done to
	 * audit_req (release): group_audit_hot.c. */
	struct rte_mempool *audit_mp;
	const struct rte_mempool *audit_hdrs; /* its port headers' (port_headers.h) */
	uintptr_t audit_lo, audit_hi;
	uint32_t audit_req, audit_done, audit_held;
	/* Where it sleeps: its doorbell, then its doorbell in each trust
	 * group's file (rung by the group's NFs, which map nothing else of
	 * the manager's) */
	struct zn_doorbell *db[1 + ZN_MAX_GROUPS];
	unsigned int n_db;
	/* Packet-outs of the OpenFlow table (mgr/sdn/oft_io.c) for this
	 * worker to send, NULL: not this one's job; where they wait to */
	/* the fabric's liveness probes (worker.c fabric_probe): the view
	 * probed last and when next */
	const struct zn_fabric_view *probe_view;
	uint64_t probe_at;
	struct rte_ring *inject;
	struct zn_stage inject_stage;
	uint64_t inject_drops[ZN_DROP_MAX]; /* (also in stats.drops) */
};

int zn_worker_main(void *arg);

/** Answer a pool audit's question if one waits (group_audit_hot.c): the top of
 *  the worker's loop. */
void zn_audit_answer(struct zn_worker *w);

static inline bool
zn_audit_pending(const struct zn_worker *w)
{
	return __atomic_load_n(&w->audit_req, __ATOMIC_ACQUIRE) !=
	       w->audit_done;
}

/** Copy what of @p pkts is not of NF @p slot's pool into it (copy_hot.c).
 *  @return how many are in its pool now (a prefix). */
unsigned int zn_copy_to_nf_pool(struct zn_worker *w, uint16_t slot,
				struct rte_mbuf **pkts, unsigned int n);

/** Classify packets entering from a port: set each one's chain id.
 *  @p tenant: each packet's tenant + 1 (a sliced port's), or NULL: a
 *  tenant's rules then match none of them. */
void zn_fdir_classify(struct zn_worker *w, const struct zn_route *rt,
		      struct rte_mbuf **pkts, unsigned int n,
		      const uint8_t *tenant);

/** The OpenFlow table's classification of packets entering from port
 *  @p port (mgr/sdn/oft_hot.c), while rt->oft is set: each packet's chain
 *  set (or the flow director's), or it is punted to the controller or
 *  dropped, counted. @return how many stay, in order, at the front. */
unsigned int zn_oft_classify(struct zn_worker *w, const struct zn_route *rt,
			     uint16_t port, struct rte_mbuf **pkts,
			     unsigned int n);
/** Take up to @p max packet-outs from ring @p r (oft_hot.c): their chain
 *  set, or classified by the flow director. @return how many. */
struct rte_ring;
unsigned int zn_oft_inject_take(struct zn_worker *w, const struct zn_route *rt,
				struct rte_ring *r, struct rte_mbuf **pkts,
				unsigned int max);

#endif /* ZN_WORKER_H */
