/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The packet pools' mempool driver, "zn_ring" (lib/common/zn_pool_ops.h):
 * DPDK's ring_mp_mc driver, called through its ops (this process's), with
 * a check of what dequeue takes out. Why a driver and not a check where
 * packets are allocated: the PMDs allocate (rte_mbuf_raw_alloc, bulk
 * refills of the lcore's cache) and write the buffers at once; a cache
 * refill is the one place every allocation passes first. Objects that
 * fail the check are dropped (they are no buffer of the pool: nothing to
 * give back) and counted by the checker; the dequeue takes more from the
 * ring in their place, or fails as an empty pool does.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "nf_pvt.h"
#include "../common/zn_pool_ops.h"

#define REFILL 64

static zn_pool_check_fn check;
static const struct rte_mempool_ops *ring_ops;

/* DPDK's ring driver as registered in this process (by name: its index
 * is not ours to assume). */
ZN_API const struct rte_mempool_ops *
zn_pool_ops_ring(void)
{
	const struct rte_mempool_ops *o = ring_ops;

	if (likely(o != NULL))
		return o;
	for (unsigned int i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name,
			   "ring_mp_mc") == 0)
			o = &rte_mempool_ops_table.ops[i];
	ring_ops = o; /* the same value from any thread */
	return o;
}

/* The free ring, as DPDK's ring driver makes it (same size and flags:
 * its enqueue and dequeue run on it), in a memzone of the pool's own
 * socket or heap, but not listed among DPDK's rings: a trust group's pool
 * is in the group's file (mgr/group.c), and a process that looks up or
 * makes a ring walks that list reading each ring's name, which an NF of
 * another group does not map. */
static int
zr_alloc(struct rte_mempool *mp)
{
	uint32_t count = rte_align32pow2(mp->size + 1);
	char name[RTE_MEMZONE_NAMESIZE];
	const struct rte_memzone *mz;
	ssize_t len = rte_ring_get_memsize(count);
	int rc;

	if (zn_pool_ops_ring() == NULL)
		return -ENOTSUP;
	if (len < 0)
		return (int)len;
	if ((size_t)snprintf(name, sizeof(name), ZN_POOL_RING_FMT, mp->name) >=
	    RTE_RING_NAMESIZE)
		return -ENAMETOOLONG;
	mz = rte_memzone_reserve_aligned(name, (size_t)len, mp->socket_id, 0,
					 RTE_CACHE_LINE_SIZE);
	if (mz == NULL)
		return -rte_errno;
	rc = rte_ring_init(mz->addr, name, count, 0);
	if (rc < 0) {
		rte_memzone_free(mz);
		return rc;
	}
	((struct rte_ring *)mz->addr)->memzone = mz;
	mp->pool_data = mz->addr;
	return 0;
}

/* By its name, not the ring's memzone pointer: NFs write the ring. */
static void
zr_free(struct rte_mempool *mp)
{
	char name[RTE_MEMZONE_NAMESIZE];

	snprintf(name, sizeof(name), ZN_POOL_RING_FMT, mp->name);
	rte_memzone_free(rte_memzone_lookup(name));
}

static int
zr_enqueue(struct rte_mempool *mp, void *const *objs, unsigned int n)
{
	return zn_pool_ops_ring()->enqueue(mp, objs, n);
}

/* Keep the objects @p check passes, in order; how many. */
static unsigned int
keep_good(const struct rte_mempool *mp, zn_pool_check_fn fn, void **objs,
	  unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++)
		if (likely(fn(mp, objs[i])))
			objs[k++] = objs[i];
	return k;
}

static int
zr_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	zn_pool_check_fn fn = check;
	unsigned int k;

	if (zn_pool_ops_ring()->dequeue(mp, objs, n) < 0)
		return -ENOBUFS;
	if (fn == NULL)
		return 0;
	k = keep_good(mp, fn, objs, n);
	while (unlikely(k < n)) {
		void *more[REFILL];
		unsigned int want = RTE_MIN(n - k, (unsigned int)REFILL);

		if (zn_pool_ops_ring()->dequeue(mp, more, want) < 0) {
			/* all or nothing */
			zn_pool_ops_ring()->enqueue(mp, objs, k);
			return -ENOBUFS;
		}
		want = keep_good(mp, fn, more, want);
		memcpy(objs + k, more, want * sizeof(*more));
		k += want;
	}
	return 0;
}

static unsigned int
zr_get_count(const struct rte_mempool *mp)
{
	return zn_pool_ops_ring()->get_count(mp);
}

static const struct rte_mempool_ops zn_ring_ops = {
	.name = ZN_POOL_OPS,
	.alloc = zr_alloc,
	.free = zr_free,
	.enqueue = zr_enqueue,
	.dequeue = zr_dequeue,
	.get_count = zr_get_count,
};

RTE_MEMPOOL_REGISTER_OPS(zn_ring_ops);

void ZN_API
zn_pool_ops_set_check(zn_pool_check_fn fn)
{
	check = fn;
}
