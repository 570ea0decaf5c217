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
#include "../trust/group.h"
#include "../port/port.h"

struct rte_mempool;
struct rte_ring;
struct rte_rcu_qsbr;
struct zn_route;
struct zn_fdir;
struct zn_lb;
struct zn_registry;
struct zn_worker;
struct zn_loop;
struct zn_rguard;
struct zn_tenants;
struct zn_nf_rec;

struct zn_mgr {
	/* Set at start (main.c, args.c), then read-only. */
	struct zn_mgr_cfg cfg;
	pid_t pid;
	uint64_t start_ns;
	char rundir[PATH_MAX];
	char huge_dir[PATH_MAX];
	int lock_fd;             /* instance lock (instance.c) */

	/* Shared memory and rings (main.c), read by everyone. */
	struct zn_shm *shm;
	struct rte_mempool *pool;
	struct zn_group group[ZN_MAX_GROUPS]; /* trust groups (group.h) */
	bool shadowed; /* some have port headers: drivers see groups'
			* packets in them (port_headers.c) */
	const char *pool_ops; /* their mempool driver (main.c) */
	/* Each pool's owner map (owner_map.c) and tags (pool_acct.c), [0]:
	 * the shared pool's, [g + 1]: group g's (its `owners`, `acct`) */
	struct zn_owner_map *owner_maps;
	struct zn_acct *acct;
	/* The manager's record of each NF slot ([ZN_MAX_NFS], registry.h):
	 * the registry's, made before anything reads it. */
	struct zn_nf_rec *nf;
	/* The guards of the EAL's home's rings as made (a group's are its
	 * home_rg), copied to a record's when its slot moves (home.c). */
	struct zn_rguard *home_rg;
	struct rte_ring *msgq;
	/* Each link's ring, where it is now (home.c, link.c): what workers
	 * use, never the pointer NFs are told; our side of it (ring_guard.h,
	 * [ZN_MAX_LINKS], process memory). */
	struct rte_ring *link_ring[ZN_MAX_LINKS];
	struct zn_rguard *rg_link;

	struct zn_port ports[ZN_MAX_PORTS]; /* port.c, at start */
	uint16_t n_ports;

	/* Routing: the live snapshot is shm->rt.route (route.c publishes;
	 * workers and NFs read); the control-thread state it is built from. */
	struct zn_route *route_spare; /* the next to publish (route.c) */
	struct zn_route *route_live;  /* the one published: what workers
				       * read, in private memory (private_heap.c);
				       * shm->rt.route is the NFs' copy */
	struct zn_route *nf_route_spare; /* the NFs' next copy (shared) */
	struct rte_rcu_qsbr *qsbr;    /* the workers' (private memory) */
	/* The RCU variable's token of the NFs of no group (a group's is its
	 * qtoken): kept here, the variable being in memory NFs write
	 * (route.c sync_nfs) */
	uint64_t nf_qtoken;
	/* The private heap (private_heap.c): its socket id for DPDK allocations,
	 * its memory. */
	int priv_socket;
	void *priv_raw, *priv_va;
	size_t priv_len;
	uint64_t route_version;       /* route.c */
	struct zn_fdir *fdir;         /* rules and chains (fdir.c) */
	struct zn_lb *lb;             /* per-service balancing (lb.c) */
	struct zn_links *links;       /* NF -> NF links (link.c) */
	struct zn_tenants *tn;        /* tenant.c, at start; NULL: none */

	struct zn_worker *workers[ZN_MAX_WORKERS];
	unsigned int n_workers;
	/* Port RX: 0 while paused and during shutdown. Written by the control
	 * thread (rx.set, --rx-when-ready, shutdown), read by workers. */
	volatile int rx_enabled;
	bool rx_waiting;              /* --rx-when-ready, not yet enabled */
	volatile int quit;            /* main.c: workers exit */

	struct zn_registry *registry; /* NF slots' control state */

	/* Control thread (main.c runs the loop; modules register with it). */
	struct zn_loop *loop;
	bool shutdown_requested;      /* signal or the shutdown command */
	uint64_t ctl_requests;        /* ctl.c */
	uint64_t ctl_errors;          /* ctl.c */
};

#endif /* ZN_MGR_H */
