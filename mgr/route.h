/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_ROUTE_H
#define ZN_ROUTE_H

/*
 * The routing snapshot (route.c): what workers read to decide where a
 * packet goes. Immutable once published: the control thread builds the
 * next one from the flow director (fdir.h), load balancing (lb.h) and the
 * NF slots, publishes it with one store and reclaims the old one with
 * DPDK's QSBR RCU (a worker reports a quiescent state between bursts and
 * goes offline while it sleeps).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include <zeronf/step.h>

#include "../lib/shm/zn_shm.h"
#include "lb.h" /* struct zn_svc_entry */

struct zn_mgr;

struct zn_chain {
	uint16_t len; /* 0: unused id */
	struct zn_step hops[ZN_MAX_CHAIN_HOPS];
};

struct zn_ft;
struct rte_acl_ctx;

/* The snapshot. Written by the control thread before it is published,
 * then read-only (LEAST_LOADED pins aside: workers CAS them). */
struct zn_route {
	uint64_t version;
	uint16_t n_ports;
	/* Flow director: chains by id (0: the default chain), wildcard rules
	 * (rte_acl, IPv4 and IPv6, rebuilt and republished on change) and
	 * the exact flow table (concurrent rte_hash, changed in place). */
	struct zn_chain chains[ZN_MAX_CHAINS];
	struct rte_acl_ctx *acl[2];     /* [0] IPv4, [1] IPv6; NULL: none */
	struct zn_ft *exact;
	bool rehash_every_hop;          /* naive mode (benchmark baseline) */
	uint16_t lb_epoch_idle;         /* LEAST_LOADED pin idle epochs */
	struct zn_svc_entry svc[ZN_MAX_SERVICES];
	uint16_t nf_svc[ZN_MAX_NFS];    /* service of a running NF, else 0 */
	uint16_t n_drain[ZN_MAX_WORKERS];
	uint16_t drain[ZN_MAX_WORKERS][ZN_MAX_NFS]; /* TX rings to drain */
};

/* Where a packet goes, decided once and kept while it waits in a stage.
 * Applying it to the packet's metadata is idempotent, so a delivery that
 * only partly succeeds can be retried. */
enum zn_res_type {
	ZN_RES_NF = 1,
	ZN_RES_PORT = 2,
	ZN_RES_DROP = 3,
};

struct zn_res {
	uint8_t type;  /* enum zn_res_type */
	uint8_t pos;   /* NF: chain position the packet is at there */
	uint8_t hops;  /* NF: hop count the packet will have there */
	uint8_t reason; /* DROP: enum zn_drop_reason */
	uint16_t svc;  /* NF: service (to re-pick an instance) */
	uint16_t id;   /* NF: instance; PORT: port */
};

/** Make the snapshots and the RCU state; build the flow director and load
 *  balancing (fdir.h, lb.h) and publish a first snapshot. 0 or -errno. */
int zn_route_init(struct zn_mgr *m);
/** Rebuild the snapshot from the NF slots, flow director and balancing,
 *  publish it and wait until no worker can see the old one. Control thread
 *  only. Modules that change what a snapshot holds call it after the
 *  change (fdir and lb through the hook route.c gives them). */
void zn_route_publish(struct zn_mgr *m);
void zn_route_fini(struct zn_mgr *m);

#endif /* ZN_ROUTE_H */
