/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_RING_GUARD_H
#define ZN_RING_GUARD_H

/*
 * The manager's side of a ring an NF maps read-write (its RX and TX rings,
 * the links between NFs), used without trusting anything the NF can write
 * there. rte_ring keeps its geometry (size, mask, capacity) and both
 * sides' positions in the ring's own memory, and its functions index the
 * slot array with that mask: an NF writing garbage into the header would
 * turn the manager's next dequeue into a read anywhere (docs/security.md).
 * DPDK has no ring API with the geometry kept elsewhere, so these do what
 * rte_ring_{sc_dequeue,mp_enqueue}_burst do on rte_ring's layout (slots
 * of 8 bytes after the header; the NF's library keeps using rte_ring), with
 * the geometry and the manager's own positions in manager memory and the
 * NF's position only bounding how many slots are read or written: garbage
 * there moves wrong pointers (checked by owner_map.c before use) or loses the
 * NF's own packets, never reads or writes outside the ring.
 *
 * Writers: a guard's `head`/`tail` are the manager's side: the worker
 * draining a TX ring (consumer), the workers enqueueing to an RX ring
 * (producers: head by CAS, tail in order, as rte_ring's MP mode), the
 * control thread for a ring whose NF is gone.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_common.h>
#include <rte_pause.h>
#include <rte_ring.h>

struct zn_rguard {
	struct rte_ring made; /* the header as rte_ring_create made it */
	struct rte_ring *ring; /* the ring: its address as made, kept here */
	uint32_t head __rte_cache_aligned; /* the manager's side */
	uint32_t tail;
};

static inline void *const *
zn_rguard_slots(const struct rte_ring *r)
{
	return (void *const *)&r[1];
}

/** Take the ring's geometry while nobody else can have written it. */
static inline void
zn_rguard_init(struct zn_rguard *g, struct rte_ring *r)
{
	g->ring = r;
	memcpy(&g->made, r, sizeof(g->made));
	g->made.prod.head = g->made.prod.tail = 0;
	g->made.cons.head = g->made.cons.tail = 0;
	g->head = g->tail = 0;
}

/** Make the ring as it was made, empty (nobody may be using it): what an
 *  NF wrote into its header is gone. */
static inline void
zn_rguard_reset(struct zn_rguard *g)
{
	memcpy(g->ring, &g->made, sizeof(*g->ring));
	g->head = g->tail = 0;
}

/* How many of the NF's @p from..@p to can be real: at most the capacity,
 * else none (its positions are garbage). */
static inline uint32_t
zn_rguard_span(const struct zn_rguard *g, uint32_t from, uint32_t to)
{
	uint32_t n = to - from;

	return n <= g->made.capacity ? n : 0;
}

/** Entries of a ring we consume (an NF's TX ring), as its producer says. */
static inline uint32_t
zn_rguard_count(const struct zn_rguard *g)
{
	return zn_rguard_span(g, g->head, __atomic_load_n(&g->ring->prod.tail,
							  __ATOMIC_ACQUIRE));
}

/** Entries of a ring between two NFs (a link), as both say. */
static inline uint32_t
zn_rguard_nf_count(const struct zn_rguard *g)
{
	return zn_rguard_span(g, g->ring->cons.tail, g->ring->prod.tail);
}


/** rte_ring_sc_dequeue_burst on a ring whose producer is an NF. */
static inline unsigned int
zn_rguard_sc_dequeue(struct zn_rguard *g, void **objs, unsigned int n)
{
	struct rte_ring *r = g->ring;
	uint32_t head = g->head;
	void *const *slots = zn_rguard_slots(r);

	n = RTE_MIN(n, zn_rguard_count(g));
	for (unsigned int i = 0; i < n; i++)
		objs[i] = slots[(head + i) & g->made.mask];
	g->head = head + n;
	__atomic_store_n(&r->cons.head, head + n, __ATOMIC_RELAXED);
	/* Release: the slots are read before the NF may reuse them. */
	__atomic_store_n(&r->cons.tail, head + n, __ATOMIC_RELEASE);
	return n;
}

/** rte_ring_mp_enqueue_burst (the workers are the producers) on a ring
 *  whose consumer is an NF. Waits only for other workers. */
static inline unsigned int
zn_rguard_mp_enqueue(struct zn_rguard *g, void *const *objs, unsigned int n)
{
	struct rte_ring *r = g->ring;
	uint32_t head = __atomic_load_n(&g->head, __ATOMIC_RELAXED), next;
	void **slots = (void **)(uintptr_t)zn_rguard_slots(r);
	unsigned int k;

	do {
		/* Acquire: the NF read the slots it says it consumed. */
		uint32_t cons = __atomic_load_n(&r->cons.tail,
						__ATOMIC_ACQUIRE);
		uint32_t free = g->made.capacity + cons - head;

		if (free > g->made.capacity)
			free = 0; /* garbage: as if full, lose nothing */
		k = RTE_MIN(n, free);
		if (k == 0)
			return 0;
		next = head + k;
	} while (!__atomic_compare_exchange_n(&g->head, &head, next, false,
					      __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	for (unsigned int i = 0; i < k; i++)
		slots[(head + i) & g->made.mask] = objs[i];
	while (__atomic_load_n(&g->tail, __ATOMIC_ACQUIRE) != head)
		rte_pause(); /* an earlier worker's enqueue: ours alone */
	__atomic_store_n(&r->prod.head, next, __ATOMIC_RELAXED);
	__atomic_store_n(&r->prod.tail, next, __ATOMIC_RELEASE);
	__atomic_store_n(&g->tail, next, __ATOMIC_RELEASE);
	return k;
}

/**
 * Take what is left in a ring whose NF side is gone (control thread):
 * from our head if @p ours_consume (a TX ring), else from the consumer
 * tail the NF left; up to our tail if @p our_prod (an RX ring), else up
 * to the producer tail it left (a link: both sides were NFs'). Garbage
 * positions give nothing: a leak, never a pointer read twice.
 */
static inline unsigned int
zn_rguard_drain(struct zn_rguard *g, bool ours_consume, bool our_prod,
		void **objs, unsigned int n)
{
	struct rte_ring *r = g->ring;
	void *const *slots;
	uint32_t from, to;

	if (r == NULL)
		return 0;
	from = ours_consume ? g->head : r->cons.tail;
	to = our_prod ? g->tail : r->prod.tail;
	slots = zn_rguard_slots(r);
	n = RTE_MIN(n, zn_rguard_span(g, from, to));
	for (unsigned int i = 0; i < n; i++)
		objs[i] = slots[(from + i) & g->made.mask];
	if (ours_consume)
		g->head = from + n;
	r->cons.head = r->cons.tail = from + n;
	return n;
}

struct zn_mgr;

/** Guards of every NF ring and link (ring_guard.c), once they exist. */
/** @p n zeroed guards (free()), NULL: no memory. */
struct zn_rguard *zn_rguard_alloc(unsigned int n);

#endif /* ZN_RING_GUARD_H */
