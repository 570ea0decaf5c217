/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_MGR_H
#define ZN_MGR_H

/*
 * The manager: process-local state (shared state is in zn_shm.h). Each
 * module declares its functions and types in its own header, in its
 * subsystem's folder (mgr/<subsystem>/<module>.h; docs/architecture.md,
 * "The manager's tree"); this header holds only the struct they all hang
 * off, each member with its one writer.
 *
 * Threads:
 * - the control thread (EAL main lcore): runs the event loop (loop.h)
 *   that every control module registers its fds, timers and wake hooks
 *   with; sleeps in epoll.
 * - workers (EAL lcores 1..n): the data path (worker.h), reading the
 *   routing snapshot (route.h).
 */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../../lib/shm/zn_shm.h"
#include "args.h"
#include "instance.h"
#include "../datapath/worker.h"
#include "../flow/route.h"
#include "../port/port.h"
#include "../trust/group.h"
#include "../trust/private_heap.h"

struct rte_mempool;
struct rte_ring;
struct zn_fdir;
struct zn_lb;
struct zn_registry;
struct zn_loop;
struct zn_rguard;
struct zn_tenants;
struct zn_oft;
struct zn_fabric;
struct zn_ofp;
struct zn_nf_rec;
struct zn_links;
struct zn_acct;

/* Each subsystem's state, with its writers (the headers named). */
struct zn_mgr {
	/* core: the options (args.c), the instance (instance.h), the
	 * control loop (loop.h, main.c runs it), the shared memory, pool
	 * and message ring (main.c, at start; read by everyone) */
	struct zn_mgr_cfg cfg;
	struct zn_instance inst;
	struct zn_loop *loop;
	bool shutdown_requested;      /* signal or the shutdown command */
	uint64_t ctl_requests;        /* ctl.c */
	uint64_t ctl_errors;          /* ctl.c */
	struct zn_shm *shm;
	struct rte_mempool *pool;
	const char *pool_ops;         /* the pools' mempool driver */
	struct rte_ring *msgq;
	struct zn_private_heap priv;  /* private_heap.h */

	/* ports (port.h) and the workers (worker.h) */
	struct zn_port ports[ZN_MAX_PORTS];
	uint16_t n_ports;
	struct zn_datapath dp;

	/* NFs: the manager's record of each slot ([ZN_MAX_NFS], nf_rec.h,
	 * the registry's), the registry's control state (registry.h),
	 * NF -> NF links (link.h) and each link's ring where it is now
	 * (group_home.c, link.c: what workers use, never the pointer NFs are told)
	 * with our side of it (ring_guard.h, [ZN_MAX_LINKS]), what NFs took
	 * from each pool (pool_acct.h; [0]: the shared one's, [g + 1]: group
	 * g's) */
	struct zn_nf_rec *nf;
	struct zn_registry *registry;
	struct zn_links *links;
	struct rte_ring *link_ring[ZN_MAX_LINKS];
	struct zn_rguard *rg_link;
	struct zn_acct *acct;

	/* trust groups and the checks on what NFs hand back (group.h) */
	struct zn_trust trust;

	/* where packets go: the routing snapshots (route.h), the flow
	 * director (fdir.h), balancing (lb.h), tenants (tenant.h; NULL:
	 * none) */
	struct zn_routing route;
	struct zn_fdir *fdir;
	struct zn_lb *lb;
	struct zn_tenants *tn;
	/* the OpenFlow table an SDN controller programs (mgr/sdn/oft.h) and
	 * the endpoint it speaks to (mgr/sdn/ofp_pvt.h) */
	struct zn_oft *oft;
	struct zn_ofp *ofp;
	/* chains across hosts: this host's fabric and peers (fabric.h) */
	struct zn_fabric *fabric;
};

#endif /* ZN_MGR_H */
