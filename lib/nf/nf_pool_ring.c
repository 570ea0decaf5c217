/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * A pool's free ring as several processes share it (the manager's
 * threads, NFs): DPDK's multi-producer, multi-consumer algorithm
 * (rte_ring_c11_pvt.h: claim a range by moving the side's head, copy,
 * then move the side's tail once the earlier claims are committed), but
 * with every claim recorded (struct zn_pool_op, zn_shm.h) where the
 * manager can read it, so that a process that dies between a claim and
 * its commit does not jam the ring for ever, nor leave half a range of
 * stale entries in it: the manager finishes its operation
 * (mgr/nf/pool_repair.c). Not DPDK's ring code, which waits for an earlier
 * claim's commit for ever and records nothing. Used by the pools'
 * mempool driver (nf_pool_ops.c).
 *
 * A wait for earlier claims ends when the tail reaches our claim, or
 * passes it (someone committed over it: ours are in, nothing to store),
 * or after @p wait_polls (then we store ours anyway, counted: the stuck
 * range before ours becomes readable as it is).
 */

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_pause.h>

#include "nf_pvt.h"
#include "../common/zn_pool_ops.h"

static uint64_t waits_cut; /* waits for an earlier claim given up (atomic) */

ZN_API uint64_t
zn_pool_ops_waits_cut(void)
{
	return __atomic_load_n(&waits_cut, __ATOMIC_RELAXED);
}

/* Fault injection, for the tests that kill an NF inside an operation
 * (tests/system/test_pool_ring_death.py): ZN_TEST_POOL_OP_DEATH =
 * "put:STEP" (a put of its whole cache) or "get:STEP" (any get), STEP
 * one of cas (claimed, not yet recorded so), claimed, copied,
 * committed: SIGKILL there, in the first such operation. */
enum { AT_CAS = 1, AT_CLAIMED, AT_COPIED, AT_COMMITTED };
static int die_put = -1, die_at; /* -1: not read yet */

static void
death_point(bool put, int at)
{
	static const char *const names[] = { "", "cas", "claimed", "copied",
					     "committed" };
	const char *e;

	if (likely(die_put == 0 && die_at == 0))
		return;
	if (die_put < 0) {
		e = getenv("ZN_TEST_POOL_OP_DEATH");
		die_put = die_at = 0;
		if (e == NULL || (strncmp(e, "put:", 4) != 0 &&
				  strncmp(e, "get:", 4) != 0))
			return;
		for (int i = AT_CAS; i <= AT_COMMITTED; i++)
			if (strcmp(e + 4, names[i]) == 0)
				die_at = i;
		die_put = e[0] == 'p' ? 1 : 2;
	}
	if (die_at == at && (die_put == 1) == put)
		raise(SIGKILL);
}

/* The record of this process's claim on a free ring (struct zn_pool_op):
 * an NF's, on its own pool, in its slot (zn_pool_ops_account): [0] for
 * its lcore's thread, [1] for any other, one at a time; any other
 * process's (the manager), or an NF's on another pool, one per thread
 * here (zn_pool_ops_claims reads them), the last shared. */
#define OWN_OPS 64
static struct zn_pool_op own_ops[OWN_OPS];
static unsigned int n_own_ops;
static __thread struct zn_pool_op *own_op;
static pthread_mutex_t op_lock = PTHREAD_MUTEX_INITIALIZER;

struct zn_pool_op *
zn_pool_ring_op(const struct zn_pool_acct *a, bool *locked)
{
	unsigned int i;

	*locked = false;
	if (a != NULL && a->ops != NULL) {
		if (rte_lcore_id() == a->lcore)
			return &a->ops[0];
		pthread_mutex_lock(&op_lock);
		*locked = true;
		return &a->ops[1];
	}
	if (likely(own_op != NULL))
		return own_op;
	i = __atomic_fetch_add(&n_own_ops, 1, __ATOMIC_RELAXED);
	if (i < OWN_OPS - 1)
		return own_op = &own_ops[i];
	pthread_mutex_lock(&op_lock);
	*locked = true;
	return &own_ops[OWN_OPS - 1];
}

void
zn_pool_ring_op_end(bool locked)
{
	if (locked)
		pthread_mutex_unlock(&op_lock);
}

ZN_API const struct zn_pool_op *
zn_pool_ops_claims(unsigned int *n)
{
	*n = RTE_MIN(__atomic_load_n(&n_own_ops, __ATOMIC_ACQUIRE),
		     (unsigned int)OWN_OPS);
	return own_ops;
}

/* Claim [*head, *head + n) of side @p ht, recording each try in @p op:
 * the head it tries from is written before the try. */
static int
claim(const struct zn_ring_geo *g, struct zn_pool_op *op,
      struct rte_ring_headtail *ht, const volatile uint32_t *other_tail,
      uint32_t base, unsigned int n, uint32_t *head)
{
	uint32_t room;

	*head = __atomic_load_n(&ht->head, __ATOMIC_RELAXED);
	for (;;) {
		__atomic_store_n(&op->head, *head, __ATOMIC_RELAXED);
		__atomic_store_n(&op->step, ZN_POOL_OP_INTENT,
				 __ATOMIC_RELEASE);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		room = base + __atomic_load_n(other_tail, __ATOMIC_ACQUIRE) -
		       *head;
		if (room > g->capacity || n > room) {
			__atomic_store_n(&op->step, ZN_POOL_OP_IDLE,
					 __ATOMIC_RELEASE);
			return -ENOBUFS; /* full / empty, or garbage */
		}
		if (__atomic_compare_exchange_n(&ht->head, head, *head + n, 0,
						__ATOMIC_SEQ_CST,
						__ATOMIC_RELAXED))
			break;
	}
	if (!op->put || op->cache != 0)
		death_point(op->put != 0, AT_CAS);
	__atomic_store_n(&op->step, ZN_POOL_OP_CLAIMED, __ATOMIC_RELEASE);
	if (!op->put || op->cache != 0)
		death_point(op->put != 0, AT_CLAIMED);
	return 0;
}

int
zn_pool_ring_put(const struct zn_ring_geo *g, struct zn_pool_op *op,
		 void *const *objs, unsigned int n,
		 struct rte_mempool_cache *cache, uint32_t wait_polls,
		 bool may_sleep)
{
	struct rte_ring *r = g->r;
	void **slots = (void **)&r[1];
	uint32_t head, len = 0;
	bool whole;

	if (n == 0)
		return 0;
	/* The cache's whole content (DPDK's flush, or its put that
	 * overflows): recorded as the cache and its length, and that
	 * length dropped at the commit, not after we return (a death in
	 * between would leave the cache listing what the ring has). */
	whole = cache != NULL && objs == (void *const *)cache->objs &&
		n == cache->len;
	if (!whole && n > ZN_POOL_OP_MAX) {
		for (unsigned int done = 0; done < n;) {
			unsigned int k = RTE_MIN(n - done,
						 (unsigned int)ZN_POOL_OP_MAX);
			int rc = zn_pool_ring_put(g, op, objs + done, k, NULL,
						  wait_polls, may_sleep);

			if (rc < 0)
				return rc; /* the first part is in */
			done += k;
		}
		return 0;
	}
	op->put = 1;
	op->n = n;
	op->ring = (uint64_t)(uintptr_t)r;
	if (whole) {
		len = cache->len;
		op->cache = (uint64_t)(uintptr_t)cache;
		op->len = len;
	} else {
		op->cache = 0;
		for (unsigned int i = 0; i < n; i++)
			op->objs[i] = (uint64_t)(uintptr_t)objs[i];
	}
	if (claim(g, op, &r->prod, &r->cons.tail, g->capacity, n, &head) < 0)
		return -ENOBUFS;
	for (unsigned int i = 0; i < n; i++)
		slots[(head + i) & g->mask] = objs[i];
	if (whole)
		death_point(true, AT_COPIED);
	if (!zn_pool_ring_commit(&r->prod.tail, head, head + n, wait_polls,
				 may_sleep))
		__atomic_fetch_add(&waits_cut, 1, __ATOMIC_RELAXED);
	if (whole)
		death_point(true, AT_COMMITTED);
	if (whole)
		__atomic_store_n(&cache->len, len - n, __ATOMIC_RELEASE);
	__atomic_store_n(&op->step, ZN_POOL_OP_IDLE, __ATOMIC_RELEASE);
	return 0;
}

int
zn_pool_ring_get(const struct zn_ring_geo *g, struct zn_pool_op *op,
		 void **objs, unsigned int n,
		 void (*take)(void *arg, void **objs, unsigned int n),
		 void *arg, uint32_t wait_polls, bool may_sleep)
{
	struct rte_ring *r = g->r;
	void *const *slots = (void *const *)&r[1];
	uint32_t head;

	if (n == 0)
		return 0;
	op->put = 0;
	op->n = n;
	op->ring = (uint64_t)(uintptr_t)r;
	op->cache = 0;
	if (claim(g, op, &r->cons, &r->prod.tail, 0, n, &head) < 0)
		return -ENOBUFS;
	for (unsigned int i = 0; i < n; i++)
		objs[i] = slots[(head + i) & g->mask];
	/* Ours before the range is released to the producers: a death
	 * after the commit leaves them tagged as ours (the manager puts
	 * them back), one before it leaves them in the ring. */
	if (take != NULL)
		take(arg, objs, n);
	death_point(false, AT_COPIED);
	if (!zn_pool_ring_commit(&r->cons.tail, head, head + n, wait_polls,
				 may_sleep))
		__atomic_fetch_add(&waits_cut, 1, __ATOMIC_RELAXED);
	death_point(false, AT_COMMITTED);
	__atomic_store_n(&op->step, ZN_POOL_OP_IDLE, __ATOMIC_RELEASE);
	return 0;
}
