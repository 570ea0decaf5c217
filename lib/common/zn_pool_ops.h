/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_POOL_OPS_H
#define ZN_POOL_OPS_H

/*
 * The packet pools' mempool driver (lib/nf/nf_pool_ops.c, registered by
 * libzeronf in every process that loads it: the manager and each NF, in
 * the same order, so the pool's ops index means the same everywhere; an
 * NF refuses a manager whose pool ops differ, lib/nf/nf.c). DPDK's
 * multi-producer/consumer ring, and what is taken out of it checked by
 * the process that takes it, if that process set a check: the manager
 * does (its map of where the pool's buffers start, mgr/trust/owner_map.h). A pointer
 * that is no buffer of the pool (an NF freed garbage, or wrote it into
 * the pool's ring, which it maps) is then dropped, never handed to a PMD
 * or a worker, which would write through it.
 */

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include <rte_branch_prediction.h>
#include <rte_pause.h>

struct zn_pool_op; /* lib/shm/zn_shm.h */
struct rte_ring;

/** Has a ring side's @p tail passed @p pos (positions wrap at 2^32)? */
static inline bool
zn_pool_ring_passed(uint32_t tail, uint32_t pos)
{
	return (int32_t)(tail - pos) > 0;
}

/**
 * Commit a claim of a pool's free ring: the side's tail from @p old to
 * @p new, once the earlier claims moved it to @p old (the NFs' driver,
 * lib/nf/nf_pool_ring.c, and the manager finishing a dead NF's claim,
 * mgr/nf/pool_repair.c). Waits @p wait_polls polls at most (pauses, then,
 * with @p may_sleep, yields and 100 us sleeps), then commits over the
 * earlier claim. @return false if the wait was cut.
 */
static inline bool
zn_pool_ring_commit(volatile uint32_t *tail, uint32_t old, uint32_t new,
		    uint32_t wait_polls, bool may_sleep)
{
	uint32_t t;

	for (uint32_t i = 0;; i++) {
		t = __atomic_load_n(tail, __ATOMIC_ACQUIRE);
		if (t == old)
			break;
		if (zn_pool_ring_passed(t, old))
			return true; /* committed over us */
		if (unlikely(i >= wait_polls)) {
			__atomic_store_n(tail, new, __ATOMIC_RELEASE);
			return false;
		}
		if (i < 256 || !may_sleep)
			rte_pause();
		else if (i < 4096)
			sched_yield();
		else
			usleep(100);
	}
	__atomic_store_n(tail, new, __ATOMIC_RELEASE);
	return true;
}

/** A pool's free ring and its geometry, as the process using it trusts
 *  it (the manager: as it made it; an NF: its header's). */
struct zn_ring_geo {
	struct rte_ring *r;
	uint32_t mask, capacity;
};

struct rte_mbuf;
struct rte_mempool;
struct rte_mempool_ops;

#define ZN_POOL_OPS "zn_ring"
/* Its free ring's memzone and ring name (mempool name) */
#define ZN_POOL_RING_FMT "ZR_%s"

/* Is @p obj a buffer of @p mp? Called for every object taken out of the
 * ring (a cache refill: in bulk, not per packet). */
typedef bool (*zn_pool_check_fn)(const struct rte_mempool *mp,
				 const void *obj);

/** This process checks what it takes out of ZN_POOL_OPS pools with
 *  @p fn (NULL: nothing). The manager, before its workers start. */
void zn_pool_ops_set_check(zn_pool_check_fn fn);

/** The pools this process made: their free rings' geometry (size, mask,
 *  capacity) written back as made where an NF changed it (the process
 *  itself uses its own copy: lib/nf/nf_pool_ops.c; the NFs' DPDK ring
 *  code reads the header). @return how many rings were repaired. */
unsigned int zn_pool_ops_repair(void);

/* A pool of this process's own memory whose gets and puts it serves
 * itself (the manager's port headers, mgr/trust/port_headers.h): @p take fills
 * objs[0, n) (0) or nothing (< 0); @p give takes objs[0, n) back. */
typedef int (*zn_pool_take_fn)(void *arg, void **objs, unsigned int n);
typedef void (*zn_pool_give_fn)(void *arg, void *const *objs,
				unsigned int n);

/** Pool @p mp, made by this process (the manager, with its check set),
 *  gets from @p take and puts to @p give (@p arg), not its ring; NULL
 *  both: its ring again. @return 0, -ENOENT, -EINVAL. */
int zn_pool_ops_set_source(const struct rte_mempool *mp, zn_pool_take_fn take,
			   zn_pool_give_fn give, void *arg);

/** @p twin, a copy of pool @p mp's header in this process's private
 *  memory (the manager's: mgr/trust/group.c), is served as @p mp: the same
 *  free ring, with @p mp's guard. @return 0, -ENOENT: not a pool this
 *  process made. */
int zn_pool_ops_twin(const struct rte_mempool *mp,
		     const struct rte_mempool *twin);

/** How many waits for another process's operation on a pool's free ring
 *  this process gave up so far (it went on after a bound). */
uint64_t zn_pool_ops_waits_cut(void);

/* Who took which buffer of one pool (the shared pool: mgr/nf/pool_acct.h).
 * tags: a byte per 2^shift bytes of the pool's memory from lo (n of
 * them; 2^shift <= a buffer's size: one buffer per byte at most), the
 * slot + 1 of the NF that took the buffer out of the pool's ring and
 * still keeps it, 0 for any other. */
#define ZN_POOL_ACCTS 17 /* the shared pool and 16 trust groups' */
struct zn_pool_acct {
	const struct rte_mempool *mp;
	/* this process's own header for it (the manager's of a group's
	 * pool, mgr/trust/pool_header.c), or NULL */
	const struct rte_mempool *twin;
	uint8_t *tags;
	const uint16_t *starts; /* where in window i a buffer starts */
	uintptr_t lo;
	uint32_t n;
	uint8_t shift;
	/* This process: what its takes tag (0: none, the manager), counted
	 * in *held (atomic), refused once *held would pass *quota (0: no
	 * bound; refusals counted in *refused). */
	uint8_t me;
	uint64_t *held, *refused;
	const uint32_t *quota;
	/* An NF: the records of its claims on the pool's free ring (two:
	 * struct zn_nf_slot pool_op), the first for lcore @p lcore's
	 * thread; NULL: DPDK's ring code, nothing recorded. */
	struct zn_pool_op *ops;
	unsigned int lcore;
};

/** From now on, this process's puts to @p a->mp (or its twin) untag;
 *  with a->me != 0 (one account at most: the pool an NF allocates
 *  from), its takes tag and count what they take, and
 *  zn_pool_ops_handed() and zn_pool_ops_claim() work on it. A pool's
 *  lcore cache of this process's lcore serves gets and puts no driver
 *  sees: what is freed into it must be claimed before it can be served.
 *  NULL: no account any more. Before the first take, from one thread.
 *  @return 0, -EINVAL, -ENOSPC (ZN_POOL_ACCTS). */
int zn_pool_ops_account(const struct zn_pool_acct *a);

/** @p objs[0, n), buffers of the pool this process tags for, now in its
 *  lcore cache (freed there, so served by its next gets without the
 *  driver), tagged as this process's and counted. */
void zn_pool_ops_claim(void *const *objs, unsigned int n);

/** Has this process taken from the pool it tags for (through the driver)
 *  since zn_pool_ops_account()? */
bool zn_pool_ops_took(void);

/** @p mp's free ring as this process made it (the manager), into @p geo:
 *  0, or -ENOENT (not one it made). */
int zn_pool_ops_ring_geo(const struct rte_mempool *mp, struct zn_ring_geo *geo);

/** The records of this process's own threads' claims on free rings (the
 *  manager's: mgr/nf/pool_repair.c reads them), @p n of them. */
const struct zn_pool_op *zn_pool_ops_claims(unsigned int *n);

/** @p pkts[0, n) (and their segments) leave this process's hands as
 *  packets (an NF's TX, zn_nf_tx_held: the ledger answers for them from
 *  now on): untagged, no longer counted as kept. */
void zn_pool_ops_handed(struct rte_mbuf *const *pkts, unsigned int n);

/** DPDK's ring driver, which ZN_POOL_OPS runs over, as this process
 *  registered it (NULL: not loaded). */
const struct rte_mempool_ops *zn_pool_ops_ring(void);

#endif /* ZN_POOL_OPS_H */
