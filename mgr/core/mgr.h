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
#include "../trust/pool_header.h"
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
	struct rte_mempool *gpool[ZN_MAX_GROUPS]; /* trust groups (group.c) */
	/* the manager's own header of each (pool_header.c): what it calls
	 * DPDK's mempool code with; gpool[g] is what NFs and packets name */
	struct rte_mempool *gpool_mgr[ZN_MAX_GROUPS];
	struct zn_pool_header twin[ZN_MAX_GROUPS];
	/* the manager's port headers of each group's buffers (port_headers.c) */
	struct zn_port_headers *shadow[ZN_MAX_GROUPS];
	bool shadowed; /* there are: drivers see groups' packets in them */
	struct zn_group_mem {   /* their files, as made (group.c): bytes, */
		uint64_t len;   /* of which the NFs' homes, then the pool's */
		uint64_t home;  /* heap, then its buffers */
		uint64_t heap;
		/* the end of its homes: its pool's tags from here, as many
		 * bytes as acct (pool_acct.h), before the heap */
		uint64_t acct_off, acct;
		char path[ZN_GROUP_PATH_LEN];
		char heap_name[ZN_NAME_LEN]; /* its rte_malloc heap, */
		int socket;                  /* and that heap's socket id */
		/* in its heap: the NFs' routing snapshot copies (the live
		 * one is in the file's home) and their RCU variable */
		struct zn_route *rt_spare, *rt_live;
		struct rte_rcu_qsbr *qsbr;
		/* its heap as it was once made (the rte_malloc elements'
		 * headers among it), for the frees at exit (group.c) */
		void *heap_as_made;
	} gmem[ZN_MAX_GROUPS];
	const char *pool_ops; /* their mempool driver (main.c) */
	struct zn_owner_map *desc; /* [0]: pool, [g + 1]: gpool[g] (owner_map.c) */
	struct zn_acct *acct; /* the pools' tags: [0] the shared one's,
			       * [g + 1] group g's (pool_acct.c) */
	/* Each slot's trust group (index + 1, 0: none), as the registry
	 * checked it: what the data path and the checks trust. The slot's
	 * ctl.group says the same to the NF, in memory NFs can write. */
	uint8_t nf_group[ZN_MAX_NFS];
	uint16_t nf_worker[ZN_MAX_NFS]; /* the worker draining its TX ring
					 * (ctl.worker, as nf_group) */
	/* Has a link into the slot been given since its NF registered?
	 * Then another NF may hand it packets directly: the owner map takes
	 * back from it any packet handed to an NF (owner_map.h). Registry clears,
	 * link.c sets. */
	bool nf_linked_in[ZN_MAX_NFS];
	/* Has a link out of it been given (the same writers)? Else nothing
	 * it holds can be in another NF's hands by a link (owner_map_hot.c). */
	bool nf_linked_out[ZN_MAX_NFS];
	/* Each slot's state and registration generation: the registry's
	 * (its only writer); ctl.state and ctl.gen repeat them to the NF. */
	uint32_t nf_state[ZN_MAX_NFS];
	uint32_t nf_gen[ZN_MAX_NFS];
	/* Where each slot lives now (home.c): in zn_shm.nfs, or in the
	 * trust group's file of the NF that registered in it last. Set by
	 * the registry while the slot is FREE and no worker reads it. */
	struct zn_nf_slot *slot[ZN_MAX_NFS];
	/* The guards of every home's rings as made ([g + 1]: group g's
	 * file, [0]: the EAL's), copied to rg_rx/rg_tx when a slot moves. */
	struct zn_rguard *home_rg[ZN_MAX_GROUPS + 1];
	struct rte_ring *msgq;
	/* Each slot's rings and each link's, where they are now (home.c,
	 * link.c): what workers use, never the pointers NFs are told */
	struct rte_ring *nf_rx[ZN_MAX_NFS];
	struct rte_ring *nf_tx[ZN_MAX_NFS];
	struct rte_ring *link_ring[ZN_MAX_LINKS];
	/* Our side of every ring an NF writes (ring_guard.h): [ZN_MAX_NFS]
	 * RX and TX rings, [ZN_MAX_LINKS] links. Process memory. */
	struct zn_rguard *rg_rx, *rg_tx, *rg_link;

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
	/* The NFs' RCU variables' tokens ([0]: NFs of no group, [g + 1]:
	 * group g's): kept here, the variables being in memory NFs write
	 * (route.c sync_nfs) */
	uint64_t nf_qtoken[ZN_MAX_GROUPS + 1];
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

/** The registry's state of NF slot @p slot (enum zn_nf_state). */
static inline uint32_t
zn_nf_state(const struct zn_mgr *m, unsigned int slot)
{
	return __atomic_load_n(&m->nf_state[slot], __ATOMIC_ACQUIRE);
}

/** NF slot @p s, where it lives now (home.c). */
static inline struct zn_nf_slot *
zn_slot(const struct zn_mgr *m, unsigned int s)
{
	return m->slot[s];
}

/* The pool NF @p slot reads: its trust group's, or the shared one. */
static inline struct rte_mempool *
zn_pool_of_nf(const struct zn_mgr *m, uint16_t slot)
{
	uint32_t g = m->nf_group[slot];

	return g != 0 && g <= ZN_MAX_GROUPS ? m->gpool[g - 1] : m->pool;
}

/* The header the manager gets and puts NF @p slot's pool's buffers
 * with: the shared pool's, or its own of the group's (pool_header.c). */
static inline struct rte_mempool *
zn_pool_mgr_of_nf(const struct zn_mgr *m, uint16_t slot)
{
	uint32_t g = m->nf_group[slot];

	return g != 0 && g <= ZN_MAX_GROUPS ? m->gpool_mgr[g - 1] : m->pool;
}

#endif /* ZN_MGR_H */
