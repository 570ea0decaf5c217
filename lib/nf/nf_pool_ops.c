/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The packet pools' mempool driver, "zn_ring" (lib/common/zn_pool_ops.h;
 * Long: every op of one driver together):
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
#include <rte_mbuf.h>
#include <rte_pause.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "nf_pvt.h"
#include "../common/zn_pool_ops.h"

#define REFILL 64
/* A guarded call waits this many polls at most for another process's
 * earlier enqueue or dequeue on the ring to finish (DPDK waits for
 * ever): a stuck or hostile NF costs a worker this much, not its life. */
#define WAIT_POLLS (1u << 22)
/* An NF waits longer, sleeping (about 1 s): an earlier claim that does
 * not commit is a dead NF's, which the manager finishes (mgr/
 * pool_repair.c) within its next loop. */
#define NF_WAIT_POLLS 14000u

static zn_pool_check_fn check;
static const struct rte_mempool_ops *ring_ops;

/* The process that makes a pool (the manager) keeps its free ring's
 * geometry in its own memory and, once it checks what it takes out (the
 * manager does), uses the ring with it: the ring's header is in the
 * pool's memory, which its NFs write, and DPDK's ring code follows its
 * mask and size wherever they point. Positions are the ring's (the NFs
 * share them): garbage there can empty or jam the pool, not make this
 * process read or write outside the ring. */
#define GUARDS 64
static struct guard {
	const struct rte_mempool *mp;
	const struct rte_mempool *twin; /* this process's own header */
	/* where this process's gets and puts go instead of the ring (a
	 * pool of its own memory: the manager's), or NULL */
	zn_pool_take_fn take;
	zn_pool_give_fn give;
	void *src_arg;
	struct rte_ring *r;
	uint32_t size, mask, capacity;
} guards[GUARDS];

/* zn_pool_ops_account: set before the first take, read-only after:
 * this process's accounts (the manager's: the shared pool and each
 * trust group's, untagging only; an NF's: its pool's), and the one it
 * tags for (an NF's) */
static struct zn_pool_acct accts[ZN_POOL_ACCTS];
static unsigned int n_accts;
static struct zn_pool_acct *mine;
static bool took; /* a take tagged since */

int
zn_pool_ops_index(const char *name)
{
	for (unsigned int i = 0; i < rte_mempool_ops_table.num_ops; i++)
		if (strcmp(rte_mempool_ops_table.ops[i].name, name) == 0)
			return (int)i;
	return -1;
}

/* DPDK's ring driver as registered in this process (by name: its index
 * is not ours to assume). */
ZN_API const struct rte_mempool_ops *
zn_pool_ops_ring(void)
{
	const struct rte_mempool_ops *o = ring_ops;
	int i;

	if (likely(o != NULL))
		return o;
	i = zn_pool_ops_index("ring_mp_mc");
	o = i >= 0 ? &rte_mempool_ops_table.ops[i] : NULL;
	ring_ops = o; /* the same value from any thread */
	return o;
}

/* The free ring, as DPDK's ring driver makes it (same size and flags:
 * its enqueue and dequeue run on it), in a memzone of the pool's own
 * socket or heap, but not listed among DPDK's rings: a trust group's pool
 * is in the group's file (mgr/trust/group.c), and a process that looks up or
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
	for (unsigned int i = 0; i < GUARDS; i++)
		if (guards[i].mp == NULL) {
			const struct rte_ring *r = mz->addr;

			guards[i] = (struct guard){
				.mp = mp, .r = mz->addr, .size = r->size,
				.mask = r->mask, .capacity = r->capacity };
			break;
		}
	return 0;
}

/* @p mp's guard, where this process made the pool (the manager), else
 * NULL. */
static const struct guard *
guard_made(const struct rte_mempool *mp)
{
	for (unsigned int i = 0; i < GUARDS; i++)
		if (mp != NULL && (guards[i].mp == mp || guards[i].twin == mp))
			return &guards[i];
	return NULL;
}

/* @p mp's guard, where this process keeps one and checks what it takes
 * out (the manager); else NULL: DPDK's ring driver serves. */
static const struct guard *
guard_of(const struct rte_mempool *mp)
{
	return check != NULL ? guard_made(mp) : NULL;
}

ZN_API int
zn_pool_ops_set_source(const struct rte_mempool *mp, zn_pool_take_fn take,
		       zn_pool_give_fn give, void *arg)
{
	if ((take == NULL) != (give == NULL))
		return -EINVAL;
	for (unsigned int i = 0; i < GUARDS; i++)
		if (guards[i].mp == mp && mp != NULL) {
			guards[i].src_arg = arg;
			guards[i].give = give;
			guards[i].take = take;
			return 0;
		}
	return -ENOENT;
}

ZN_API int
zn_pool_ops_twin(const struct rte_mempool *mp, const struct rte_mempool *twin)
{
	for (unsigned int i = 0; i < GUARDS; i++)
		if (guards[i].mp == mp && mp != NULL) {
			guards[i].twin = twin;
			return 0;
		}
	return -ENOENT;
}

ZN_API unsigned int
zn_pool_ops_repair(void)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < GUARDS; i++) {
		const struct guard *g = &guards[i];

		if (g->mp == NULL || (g->r->size == g->size &&
				      g->r->mask == g->mask &&
				      g->r->capacity == g->capacity))
			continue;
		g->r->size = g->size;
		g->r->mask = g->mask;
		g->r->capacity = g->capacity;
		n++;
	}
	return n;
}

/* The geometry of @p mp's ring: the guard's (the manager keeps it in its
 * own memory), else its header's (an NF trusts the pool it shares). */
static inline struct zn_ring_geo
geo_of(const struct rte_mempool *mp, const struct guard *g)
{
	struct rte_ring *r = mp->pool_data;

	if (g != NULL)
		return (struct zn_ring_geo){ .r = g->r, .mask = g->mask,
					     .capacity = g->capacity };
	return (struct zn_ring_geo){ .r = r, .mask = r->mask,
				     .capacity = r->capacity };
}

ZN_API int
zn_pool_ops_ring_geo(const struct rte_mempool *mp, struct zn_ring_geo *geo)
{
	const struct guard *g = guard_made(mp);

	if (g == NULL)
		return -ENOENT;
	*geo = geo_of(mp, g);
	return 0;
}

static int
recorded_put(struct rte_mempool *mp, const struct guard *g,
	     const struct zn_pool_acct *a, void *const *objs, unsigned int n)
{
	struct zn_ring_geo geo = geo_of(mp, g);
	bool locked;
	struct zn_pool_op *op = zn_pool_ring_op(a, &locked);
	unsigned int lc = rte_lcore_id();
	int rc;

	rc = zn_pool_ring_put(&geo, op, objs, n,
			      lc < RTE_MAX_LCORE && mp->cache_size != 0 ?
			      &mp->local_cache[lc] : NULL,
			      g != NULL ? WAIT_POLLS : NF_WAIT_POLLS,
			      g == NULL);
	zn_pool_ring_op_end(locked);
	return rc;
}

static int
recorded_get(struct rte_mempool *mp, const struct guard *g,
	     const struct zn_pool_acct *a, void **objs, unsigned int n,
	     void (*take)(void *arg, void **objs, unsigned int n))
{
	struct zn_ring_geo geo = geo_of(mp, g);
	bool locked;
	struct zn_pool_op *op = zn_pool_ring_op(a, &locked);
	int rc;

	rc = zn_pool_ring_get(&geo, op, objs, n, take, (void *)(uintptr_t)a,
			      g != NULL ? WAIT_POLLS : NF_WAIT_POLLS,
			      g == NULL);
	zn_pool_ring_op_end(locked);
	return rc;
}

/* Through @p mp's guard @p g where this process keeps one and checks
 * (the manager: guard_of), else DPDK's ring driver. */
static inline int
ring_enqueue(struct rte_mempool *mp, const struct guard *g, void *const *objs,
	     unsigned int n)
{
	return g != NULL ? recorded_put(mp, g, NULL, objs, n) :
	       zn_pool_ops_ring()->enqueue(mp, objs, n);
}

static inline int
ring_dequeue(struct rte_mempool *mp, const struct guard *g, void **objs,
	     unsigned int n)
{
	return g != NULL ? recorded_get(mp, g, NULL, objs, n, NULL) :
	       zn_pool_ops_ring()->dequeue(mp, objs, n);
}

/* By its name, not the ring's memzone pointer: NFs write the ring. */
static void
zr_free(struct rte_mempool *mp)
{
	char name[RTE_MEMZONE_NAMESIZE];

	snprintf(name, sizeof(name), ZN_POOL_RING_FMT, mp->name);
	rte_memzone_free(rte_memzone_lookup(name));
	for (unsigned int i = 0; i < GUARDS; i++)
		if (guards[i].mp == mp)
			guards[i] = (struct guard){ .mp = NULL };
}

/* ---- Who took what (zn_pool_ops_account) */

/* Is @p a the account of @p mp (its header, or the twin this process
 * uses for it)? */
static inline bool
acct_is(const struct zn_pool_acct *a, const struct rte_mempool *mp)
{
	return a->mp == mp || (a->twin != NULL && a->twin == mp);
}

static inline struct zn_pool_acct *
acct_of(const struct rte_mempool *mp)
{
	for (unsigned int i = 0; i < n_accts; i++)
		if (acct_is(&accts[i], mp))
			return &accts[i];
	return NULL;
}

/* Does a buffer of @p a's pool start at @p p? (Then it may be read.) */
static inline bool
is_buf(const struct zn_pool_acct *a, const void *p)
{
	uintptr_t off = (uintptr_t)p - a->lo, i = off >> a->shift;

	return i < a->n && a->starts[i] == (off & ((1u << a->shift) - 1));
}

/* The tag of the buffer that starts at @p obj, or NULL: none does (a
 * pointer into a buffer names no buffer, not even that one). */
static inline uint8_t *
tag_of(const struct zn_pool_acct *a, const void *obj)
{
	return likely(is_buf(a, obj)) ?
	       &a->tags[((uintptr_t)obj - a->lo) >> a->shift] : NULL;
}

/* Untag @p obj: 1 if it was this process's. */
static inline unsigned int
untag(const struct zn_pool_acct *a, const void *obj)
{
	uint8_t *t = tag_of(a, obj);
	uint8_t was;

	if (unlikely(t == NULL))
		return 0;
	was = __atomic_load_n(t, __ATOMIC_RELAXED);
	if (was != 0)
		__atomic_store_n(t, 0, __ATOMIC_RELAXED);
	return was == a->me && was != 0;
}

static void
untag_all(const struct zn_pool_acct *a, void *const *objs, unsigned int n)
{
	unsigned int ours = 0;

	for (unsigned int i = 0; i < n; i++)
		ours += untag(a, objs[i]);
	if (ours != 0 && a->held != NULL)
		__atomic_fetch_sub(a->held, ours, __ATOMIC_RELAXED);
}

/* Room under @p a's quota for @p n more, counted as held: true. */
static bool
reserve(const struct zn_pool_acct *a, unsigned int n)
{
	uint32_t q = __atomic_load_n(a->quota, __ATOMIC_RELAXED);
	uint64_t now = __atomic_add_fetch(a->held, n, __ATOMIC_RELAXED);

	if (likely(q == 0 || now <= q))
		return true;
	__atomic_fetch_sub(a->held, n, __ATOMIC_RELAXED);
	__atomic_fetch_add(a->refused, 1, __ATOMIC_RELAXED);
	return false;
}

ZN_API int
zn_pool_ops_account(const struct zn_pool_acct *a)
{
	struct zn_pool_acct *e;

	if (a == NULL) {
		n_accts = 0;
		mine = NULL;
		took = false;
		return 0;
	}
	if (a->mp == NULL || a->tags == NULL || a->starts == NULL ||
	    (a->me != 0 && (a->held == NULL || a->refused == NULL ||
			    a->quota == NULL || mine != NULL)))
		return -EINVAL;
	e = acct_of(a->mp);
	if (e == NULL) {
		if (n_accts == ZN_POOL_ACCTS)
			return -ENOSPC;
		e = &accts[n_accts++];
	}
	*e = *a;
	if (a->me != 0) {
		mine = e;
		took = false;
	}
	return 0;
}

ZN_API bool
zn_pool_ops_took(void)
{
	return __atomic_load_n(&took, __ATOMIC_RELAXED);
}

ZN_API void
zn_pool_ops_claim(void *const *objs, unsigned int n)
{
	const struct zn_pool_acct *a = mine;
	unsigned int got = 0;

	if (a == NULL)
		return;
	for (unsigned int i = 0; i < n; i++) {
		uint8_t *t = tag_of(a, objs[i]);

		if (t != NULL && __atomic_load_n(t, __ATOMIC_RELAXED) != a->me) {
			__atomic_store_n(t, a->me, __ATOMIC_RELAXED);
			got++;
		}
	}
	if (got != 0)
		__atomic_fetch_add(a->held, got, __ATOMIC_RELAXED);
}

ZN_API void
zn_pool_ops_handed(struct rte_mbuf *const *pkts, unsigned int n)
{
	const struct zn_pool_acct *a = mine;
	unsigned int ours = 0;

	if (a == NULL || __atomic_load_n(a->held, __ATOMIC_RELAXED) == 0)
		return;
	for (unsigned int i = 0; i < n; i++) {
		const struct rte_mbuf *s = pkts[i];

		/* What the NF calls packets may be anything: a buffer of
		 * the pool is read, nothing else (nor past 64 segments) */
		if (unlikely(!is_buf(a, s)))
			continue;
		ours += untag(a, s);
		if (likely(s->nb_segs == 1))
			continue;
		s = s->next;
		for (unsigned int k = 1; k < 64 && is_buf(a, s); k++, s = s->next)
			ours += untag(a, s);
	}
	if (ours != 0)
		__atomic_fetch_sub(a->held, ours, __ATOMIC_RELAXED);
}

static int
zr_enqueue(struct rte_mempool *mp, void *const *objs, unsigned int n)
{
	const struct guard *g = guard_of(mp);

	const struct zn_pool_acct *a = acct_of(mp);

	/* What goes back to the pool is nobody's: untagged first (a crash
	 * in between leaks it, never frees it twice) */
	if (a != NULL)
		untag_all(a, objs, n);

	if (unlikely(g != NULL && g->give != NULL)) {
		g->give(g->src_arg, objs, n);
		return 0;
	}
	if (g == NULL && a != NULL && a == mine && a->ops != NULL)
		return recorded_put(mp, NULL, a, objs, n);
	return ring_enqueue(mp, g, objs, n);
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

/* What is taken out, checked (the manager) */
static int
take_checked(struct rte_mempool *mp, const struct guard *g, void **objs,
	     unsigned int n)
{
	zn_pool_check_fn fn = check;
	unsigned int k;

	if (ring_dequeue(mp, g, objs, n) < 0)
		return -ENOBUFS;
	if (fn == NULL)
		return 0;
	k = keep_good(mp, fn, objs, n);
	while (unlikely(k < n)) {
		void *more[REFILL];
		unsigned int want = RTE_MIN(n - k, (unsigned int)REFILL);

		if (ring_dequeue(mp, g, more, want) < 0) {
			/* all or nothing */
			ring_enqueue(mp, g, objs, k);
			return -ENOBUFS;
		}
		want = keep_good(mp, fn, more, want);
		memcpy(objs + k, more, want * sizeof(*more));
		k += want;
	}
	return 0;
}

/* What this process took is its own (the account it tags for) */
static void
tag_taken(void *arg, void **objs, unsigned int n)
{
	const struct zn_pool_acct *a = arg;

	for (unsigned int i = 0; i < n; i++) {
		uint8_t *t = tag_of(a, objs[i]);

		if (likely(t != NULL))
			__atomic_store_n(t, a->me, __ATOMIC_RELAXED);
	}
}

static int
zr_dequeue(struct rte_mempool *mp, void **objs, unsigned int n)
{
	const struct guard *g = guard_of(mp);
	const struct zn_pool_acct *a = mine;
	int rc;

	if (unlikely(g != NULL && g->take != NULL))
		return g->take(g->src_arg, objs, n) == 0 ? 0 : -ENOBUFS;
	if (a == NULL || !acct_is(a, mp))
		return take_checked(mp, g, objs, n);
	if (!reserve(a, n))
		return -ENOBUFS;
	if (g == NULL && a->ops != NULL) {
		rc = recorded_get(mp, NULL, a, objs, n, tag_taken);
	} else {
		rc = take_checked(mp, g, objs, n);
		if (rc == 0)
			tag_taken((void *)(uintptr_t)a, objs, n);
	}
	if (rc < 0) {
		__atomic_fetch_sub(a->held, n, __ATOMIC_RELAXED);
		return rc;
	}
	if (unlikely(!took))
		__atomic_store_n(&took, true, __ATOMIC_RELAXED);
	return 0;
}

static unsigned int
zr_get_count(const struct rte_mempool *mp)
{
	const struct guard *g = guard_of(mp);
	uint32_t n;

	if (g == NULL)
		return zn_pool_ops_ring()->get_count(mp);
	n = __atomic_load_n(&g->r->prod.tail, __ATOMIC_ACQUIRE) -
	    __atomic_load_n(&g->r->cons.tail, __ATOMIC_ACQUIRE);
	return n <= g->capacity ? n : 0;
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
