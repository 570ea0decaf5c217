/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * A dead NF's operation on its pool's free ring, finished (pool_repair.h).
 *
 * Its record (struct zn_pool_op) is its word, read once it is gone; what
 * it is trusted for: which range of the ring is its (checked against
 * what the ring and the other claims say) and what it was putting there
 * (each a buffer of the pool as this process's own map says, else the
 * entry is left NULL, which a checked dequeue drops). Which range:
 *   CLAIMED at h: [h, h + n) is its;
 *   INTENT at h: it was about to claim from h, or did: its claim if the
 *   side's head moved past h and no other record (another NF's, one of
 *   this process's threads') claims h; a live one still trying from h is
 *   waited for.
 * Committed: the side's tail passed h. A put's range not committed is
 * written and committed in turn (after the earlier claims: waited for, as
 * any producer waits); a get's is committed and what it holds put back
 * (the NF took it off nowhere). A put from its cache drops the cache's
 * length as the NF would have at its commit; a get that committed tagged
 * what it took as the NF's (zn_pool_acct_sweep puts that back).
 *
 * Not covered: two NFs dying with claims on the same side at once (the
 * first's wait for the second's commit gives up after a while and
 * commits over it); a death inside DPDK's own put into the cache, between
 * its length and its copy (lib/nf/nf_pool_ring.c).
 */

#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include "../core/mgr.h"
#include "../core/event.h"
#include "pool_acct.h"
#include "pool_repair.h"
#include "registry.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_util.h"
#include "nf_rec.h"

/* How long a live NF trying to claim from the same head, or an earlier
 * claim's commit, is waited for. */
#define WAIT_NS (1000ULL * 1000 * 1000)

static inline bool
same_claim(const struct zn_pool_op *o, const struct zn_pool_op *d,
	   uint32_t step)
{
	return __atomic_load_n(&o->step, __ATOMIC_ACQUIRE) == step &&
	       o->ring == d->ring && o->put == d->put && o->head == d->head;
}

/* Does anyone else claim @p d->head? 1: yes; 0: no; -EAGAIN: a live NF
 * is trying from there (ask again). */
static int
claimed_by_other(struct zn_mgr *m, unsigned int slot,
		 const struct zn_pool_op *d)
{
	unsigned int n_own;
	const struct zn_pool_op *own = zn_pool_ops_claims(&n_own);

	for (unsigned int i = 0; i < n_own; i++)
		if (same_claim(&own[i], d, ZN_POOL_OP_CLAIMED))
			return 1;
		else if (same_claim(&own[i], d, ZN_POOL_OP_INTENT))
			return -EAGAIN; /* one of ours, alive */
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		const struct zn_nf_slot *o = zn_slot(m, s);

		if (s == slot || zn_nf_state(m, s) == ZN_NF_FREE)
			continue;
		for (unsigned int k = 0; k < RTE_DIM(o->pool_op); k++) {
			if (same_claim(&o->pool_op[k], d, ZN_POOL_OP_CLAIMED))
				return 1;
			if (same_claim(&o->pool_op[k], d, ZN_POOL_OP_INTENT) &&
			    zn_proc_alive(zn_registry_pid(m, s),
					  o->ctl.start_time))
				return -EAGAIN;
		}
	}
	return 0;
}

/* Was @p d's INTENT a claim? */
static bool
intent_claimed(struct zn_mgr *m, unsigned int slot, const struct zn_pool_op *d,
	       const struct rte_ring_headtail *ht)
{
	uint64_t t0 = zn_now_ns();
	int rc;

	if (__atomic_load_n(&ht->head, __ATOMIC_ACQUIRE) == d->head)
		return false; /* nobody claimed from there yet */
	while ((rc = claimed_by_other(m, slot, d)) == -EAGAIN &&
	       zn_now_ns() - t0 < WAIT_NS)
		sched_yield();
	return rc == 0;
}

/* The side's tail from @p h to @p h + @p n, after the earlier claims:
 * waited for about WAIT_NS (4096 short waits, then 100 us sleeps), then
 * committed over. */
#define COMMIT_WAIT_POLLS (4096 + (uint32_t)(WAIT_NS / 100000))

static void
commit(struct rte_ring_headtail *ht, uint32_t h, uint32_t n)
{
	if (!zn_pool_ring_commit(&ht->tail, h, h + n, COMMIT_WAIT_POLLS, true))
		ZN_LOG(WARNING, "pool ring: a claim before a dead NF's is not "
		       "committed after 1 s: committing over it");
}

/* Its lcore's cache of @p mp, as the pool was made (right after the
 * header), if @p addr is that; else NULL. */
static struct rte_mempool_cache *
its_cache(const struct rte_mempool *mp, unsigned int slot, uint64_t addr)
{
	struct rte_mempool_cache *c = (struct rte_mempool_cache *)
		RTE_PTR_ADD(mp, sizeof(*mp));

	if (mp->cache_size == 0 || addr == 0)
		return NULL;
	c += ZN_NF_LCORE_BASE + slot;
	return (uint64_t)(uintptr_t)c == addr ? c : NULL;
}

static void
finish_put(struct zn_mgr *m, unsigned int slot, const struct zn_ring_geo *g,
	   const struct zn_pool_op *d, struct rte_mempool_cache *c,
	   bool committed)
{
	struct rte_ring *r = g->r;
	void **slots = (void **)&r[1];
	uint32_t len = d->len;

	if (!committed) {
		for (uint32_t i = 0; i < d->n; i++) {
			void *o = c != NULL ? c->objs[len - d->n + i] :
				  (void *)(uintptr_t)d->objs[i];

			if (!zn_pool_acct_is_buf(m, slot, o))
				o = NULL; /* not the pool's: dropped on the
					   * way out */
			slots[(d->head + i) & g->mask] = o;
		}
		commit(&r->prod, d->head, d->n);
	}
	if (c != NULL && __atomic_load_n(&c->len, __ATOMIC_ACQUIRE) == len)
		__atomic_store_n(&c->len, len - d->n, __ATOMIC_RELEASE);
}

static void
finish_get(struct zn_mgr *m, unsigned int slot, const struct zn_ring_geo *g,
	   const struct zn_pool_op *d, bool committed)
{
	struct rte_ring *r = g->r;
	void *const *slots = (void *const *)&r[1];
	void **objs;
	uint32_t k = 0;

	if (committed)
		return; /* what it took is tagged as its own */
	/* Still the ring's: read before the commit lets producers write
	 * there, then given back (untagged: it may have tagged some) */
	objs = malloc(d->n * sizeof(*objs));
	for (uint32_t i = 0; objs != NULL && i < d->n; i++) {
		void *o = slots[(d->head + i) & g->mask];

		if (zn_pool_acct_is_buf(m, slot, o))
			objs[k++] = o;
	}
	commit(&r->cons, d->head, d->n);
	if (objs == NULL) {
		ZN_LOG(ERR, "out of memory: %u buffers of a dead NF's get "
		       "lost", d->n);
		return;
	}
	zn_pool_acct_forget(m, slot, (struct rte_mbuf *const *)objs, k);
	rte_mempool_put_bulk(zn_pool_mgr_of_nf(m, (uint16_t)slot), objs, k);
	free(objs);
}

unsigned int
zn_pool_repair_nf(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	const struct rte_mempool *mp = zn_pool_of_nf(m, (uint16_t)slot);
	struct zn_ring_geo g;
	unsigned int done = 0;

	if (zn_pool_ops_ring_geo(mp, &g) < 0)
		return 0;
	for (unsigned int k = 0; k < RTE_DIM(s->pool_op); k++) {
		struct zn_pool_op *op = &s->pool_op[k];
		struct zn_pool_op d;
		struct rte_ring_headtail *ht;
		struct rte_mempool_cache *c;
		bool committed;

		d.step = __atomic_load_n(&op->step, __ATOMIC_ACQUIRE);
		if (d.step == ZN_POOL_OP_IDLE)
			continue;
		d.put = op->put != 0;
		d.head = op->head;
		d.n = op->n;
		d.ring = op->ring;
		d.cache = op->cache;
		d.len = op->len;
		memcpy(d.objs, op->objs, sizeof(d.objs));
		__atomic_store_n(&op->step, ZN_POOL_OP_IDLE, __ATOMIC_RELEASE);
		ht = d.put ? &g.r->prod : &g.r->cons;
		c = d.put ? its_cache(mp, slot, d.cache) : NULL;
		/* Its word, checked: its pool's ring, a range the ring can
		 * have, the objects where it says they are */
		if (d.ring != (uint64_t)(uintptr_t)g.r || d.n == 0 ||
		    d.n > g.capacity ||
		    (d.put && c == NULL && d.n > ZN_POOL_OP_MAX) ||
		    (c != NULL && (d.len > RTE_DIM(c->objs) || d.n > d.len)) ||
		    (d.step != ZN_POOL_OP_CLAIMED &&
		     (d.step != ZN_POOL_OP_INTENT ||
		      !intent_claimed(m, slot, &d, ht))))
			continue;
		committed = zn_pool_ring_passed(
			__atomic_load_n(&ht->tail, __ATOMIC_ACQUIRE), d.head);
		if (d.put)
			finish_put(m, slot, &g, &d, c, committed);
		else
			finish_get(m, slot, &g, &d, committed);
		done++;
		ZN_LOG(INFO, "NF '%s' (instance %u) died in a %s of %u buffers "
		       "on its pool's ring: %s", s->ctl.name, slot,
		       d.put ? "put" : "get", d.n,
		       committed ? "it was in" : "finished");
	}
	if (done != 0)
		m->shm->mgr.pool_ops_finished += done;
	return done;
}
