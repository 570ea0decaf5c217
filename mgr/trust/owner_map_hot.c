/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Descriptors that cannot lie, the data path's part (owner_map.c: the maps,
 * the options, the policing): the checks a worker runs on what it takes
 * from an NF's TX ring. Reads only the maps and the packets; writes only
 * the counters of the worker and the NF's slot (mstats, the worker's).
 */

#include <string.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

#include <zeronf/pkt.h>

#include "../core/mgr.h"
#include "owner_map.h"
#include "ring_guard.h"
#include "../../lib/common/zn_ledger.h"
#include "../datapath/worker.h"
#include "../nf/nf_rec.h"

/* The metadata's line (the mbuf's second: the worker reads it next; the
 * first is read only where a packet is checked whole) and its map entry,
 * for the whole burst at once (as the worker does without --validate):
 * only for an address inside the pool (a prefetch of any address is
 * harmless, but a hostile NF's pointers need not be asked for). */
static inline void
prefetch_map(const struct zn_owner_map *d, const struct rte_mbuf *mb)
{
	uintptr_t p = (uintptr_t)mb;

	if (p < d->lo || p >= d->hi)
		return;
	rte_prefetch0(RTE_PTR_ADD(mb, RTE_CACHE_LINE_SIZE));
	rte_prefetch0(zn_owner_map_own(d, p));
}

/* Is @p pkt among the live entries of @p g's ring, from @p from to the
 * producer's tail (cut to its capacity)? */
static bool
ring_has(const struct zn_rguard *g, uint32_t from, const void *pkt)
{
	void *const *slots = zn_rguard_slots(g->ring);
	uint32_t n = zn_rguard_span(g, from, __atomic_load_n(
		&g->ring->prod.tail, __ATOMIC_ACQUIRE));

	for (uint32_t i = 0; i < n; i++)
		if (slots[(from + i) & g->made.mask] == pkt)
			return true;
	return false;
}

/* Where the packets NF @p y may still hold begin in its held[] (to
 * held_n, zn_ledger_held_from): in a hand-off to a ring or a link, past
 * the earlier runs and what the current run's ring took already (its
 * producer tail moved past the position the ledger recorded: the NF is
 * its only producer). A packet an NF handed on early in a burst may be
 * back already (over a link to the NF that handed it out) while the
 * burst's later runs wait: it is not held. Read position then tail: the
 * tail only grows, and a newer position starts past what the older one's
 * ring took, so this never says more was handed on than was. Bounded by
 * held_n; an NF that wrote its position wrong only moves where its own
 * packets count as held. */
static uint32_t
live_from(const struct zn_mgr *m, unsigned int y, const struct zn_ledger *l)
{
	uint64_t pos = __atomic_load_n(&l->tx_pos, __ATOMIC_ACQUIRE);
	uint16_t id = (uint16_t)(pos >> 32);
	const struct rte_ring *r;
	uint32_t from;

	if (__atomic_load_n(&l->phase, __ATOMIC_ACQUIRE) != ZN_LEDGER_TX ||
	    id > ZN_MAX_LINKS)
		return zn_ledger_held_from(l);
	r = id == 0 ? m->nf[y].tx_guard.ring : m->rg_link[id - 1u].ring;
	if (r == NULL)
		return 0;
	from = (uint32_t)(pos >> 48) +
	       (__atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE) -
		(uint32_t)pos);
	return RTE_MIN(from, (uint32_t)ZN_BURST);
}

/* Did NF @p slot pass @p pkt on over one of its links, as far as can be
 * seen now: in a link out of it, in what its receiver holds (its
 * ledger) or hands back (its TX ring)? Asked of a packet the NF hands
 * back as new while the map says it has it: rare, so a walk of those
 * rings. The slot's list of links is the NF's to write: what it names
 * is read through the manager's guards, within their rings (a lie makes
 * its own packets refused, no one else's). */
static bool
passed_on(const struct zn_mgr *m, unsigned int slot, const void *pkt)
{
	const struct zn_nf_slot *s = zn_slot(m, slot);

	if (!__atomic_load_n(&m->nf[slot].linked_out, __ATOMIC_RELAXED))
		return false; /* a re-circulating source: no walk */
	for (unsigned int r = 0; r < ZN_MAX_NFS; r++) {
		uint32_t o = __atomic_load_n(&s->links.out[r], __ATOMIC_RELAXED);
		const struct zn_nf_slot *rs = zn_slot(m, r);
		const struct zn_rguard *g;
		uint32_t held;

		if (o == 0 || ZN_LINK_OUT_ID(o) >= ZN_MAX_LINKS)
			continue;
		g = &m->rg_link[ZN_LINK_OUT_ID(o)];
		if (g->ring != NULL && ring_has(g, g->ring->cons.head, pkt))
			return true;
		/* held[] names packets only in a burst (zn_ledger.h) */
		held = RTE_MIN(__atomic_load_n(&rs->ledger.held_n,
					       __ATOMIC_RELAXED),
			       (uint32_t)ZN_BURST);
		for (uint32_t i = live_from(m, r, &rs->ledger); i < held;
		     i++)
			if (rs->ledger.held[i] == pkt)
				return true;
		g = &m->nf[r].tx_guard;
		if (g->ring != NULL && ring_has(g, g->head, pkt))
			return true;
	}
	return false;
}

/* Does NF @p y hold @p pkt, as far as can be seen now: in its RX ring, its
 * burst (ledger), its TX ring, or passed on over its links? Asked of a
 * packet another NF hands back as new while the map says y has it: y may
 * have freed it itself (sent it on a TX queue of its own, dropped it) and
 * the other NF's PMD taken it from the pool since (an NF owning a port's
 * RX queue, lib/nf/nf_port.c), which leaves the map's entry stale. Once
 * per such buffer (the entry is cleared when taken back): a walk. */
static bool
held_by(const struct zn_mgr *m, unsigned int y, const void *pkt)
{
	const struct zn_nf_slot *s = zn_slot(m, y);
	const struct zn_rguard *g = &m->nf[y].rx_guard;
	uint32_t held;

	if (zn_nf_state(m, y) == ZN_NF_FREE)
		return false;
	if (g->ring != NULL && ring_has(g, __atomic_load_n(
			&g->ring->cons.tail, __ATOMIC_ACQUIRE), pkt))
		return true;
	held = RTE_MIN(__atomic_load_n(&s->ledger.held_n, __ATOMIC_RELAXED),
		       (uint32_t)ZN_BURST);
	for (uint32_t i = live_from(m, y, &s->ledger); i < held; i++)
		if (s->ledger.held[i] == pkt)
			return true;
	g = &m->nf[y].tx_guard;
	if (g->ring != NULL && ring_has(g, g->head, pkt))
		return true;
	return passed_on(m, y, pkt);
}

/* The owner map (owner_map.h): is @p mb a buffer of the pool (from its start)
 * that NF @p slot may hand back? Yes, once per time a worker handed it
 * out: to this NF, or to any NF if others may pass it packets over links
 * (@p linked); or once for a packet the NF made (zn_nf_send marks it new,
 * as an NF marks what it received from a port's RX queue it owns; the
 * mark is cleared here), a buffer no NF holds as the workers saw it (or
 * an NF the map names does not hold it any more: held_by).
 * It is the manager's from now on. *@p hops: the NF hops it has taken as
 * the map counted them; 0 for a packet the NF made (a source's packet
 * starts a count of its own, in a buffer it was given too: a generator
 * sends what it receives again, and an NF could make the same packet in
 * a fresh buffer all the same: what it makes is counted, `created`).
 * Reads the map's entry, then the metadata line (the routing reads it
 * next). */
static inline bool
take_back(const struct zn_mgr *m, const struct zn_owner_map *d,
	  struct rte_mbuf *mb, unsigned int slot, bool linked, uint8_t *hops)
{
	struct zn_own *e = zn_owner_map_own_at(d, (uintptr_t)mb);
	struct zn_pkt_meta *meta;

	if (unlikely(e == NULL))
		return false; /* not ours: never read, never freed */
	meta = zn_pkt_meta(mb);
	if (unlikely((meta->flags & ZN_PKT_F_NEW) != 0)) {
		/* Made by the NF: no NF holds it as the workers saw it. A
		 * buffer a worker handed out is no new packet: a stale
		 * pointer, or one the NF passed on to an NF that holds it
		 * now, and would be charged for it when it hands it back.
		 * Refused then, the mark taken off (atomically: its holder
		 * may be setting flags). The mark on a packet the NF holds
		 * (it may write its packets' flags) is no lie; nor on one
		 * that came over a link (the sender's). */
		if (likely(e->owner == 0)) {
			meta->flags &= ~ZN_PKT_F_NEW;
			goto made;
		}
		if ((e->owner == slot + 1 &&
		     passed_on(m, slot, mb)) ||
		    (e->owner != slot + 1 && !linked &&
		     (e->owner > ZN_MAX_NFS ||
		      held_by(m, e->owner - 1u, mb)))) {
			__atomic_fetch_and(&meta->flags, ~ZN_PKT_F_NEW,
					   __ATOMIC_RELAXED);
			return false;
		}
		meta->flags &= ~ZN_PKT_F_NEW;
made:
		e->owner = 0;
		*hops = 0;
		return true;
	}
	if (unlikely(e->owner != slot + 1) && (!linked || e->owner == 0))
		return false;
	e->owner = 0;
	*hops = e->hops;
	return true;
}

/* May routing read an NF's packet past its metadata under snapshot @p rt
 * (a flow hash to compute for a service of several replicas, or the
 * naive mode's classifying again)? Then zn_owner_map_filter checks whole what
 * has no valid hash. Worked out once per snapshot. */
static inline bool
route_may_parse(struct zn_worker *w, const struct zn_route *rt)
{
	if (likely(w->parse_rt == rt))
		return w->parse_may;
	w->parse_rt = rt;
	w->parse_may = rt->rehash_every_hop;
	for (unsigned int s = 0; s < ZN_MAX_SERVICES && !w->parse_may; s++)
		w->parse_may = rt->svc[s].n > 1;
	return w->parse_may;
}

unsigned int
zn_owner_map_filter(struct zn_worker *w, unsigned int slot,
	       struct rte_mbuf **pkts, uint8_t *hops, unsigned int n,
	       const struct zn_route *rt)
{
	bool may_parse = route_may_parse(w, rt);
	struct zn_mgr *m = w->mgr;
	struct zn_nf_slot *ns = zn_slot(m, slot);
	const struct zn_owner_map *d = zn_owner_map_of_nf(m, slot);
	struct rte_mbuf *freed[ZN_BURST];
	unsigned int k = 0, n_freed = 0;
	bool linked = __atomic_load_n(&m->nf[slot].linked_in,
				      __ATOMIC_RELAXED);

	if (unlikely(n > ZN_BURST))
		n = ZN_BURST; /* never: the worker dequeues at most that */
	for (unsigned int i = 0; i < n; i++)
		prefetch_map(d, pkts[i]);
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];
		uint8_t h;

		if (unlikely(!take_back(m, d, mb, slot, linked, &h)))
			continue; /* not handed out: not the NF's to give */
		/* Routing parses a packet without a valid flow hash (to
		 * pick a replica): that reads through buf_addr. */
		if (unlikely(may_parse) &&
		    (zn_pkt_meta(mb)->flags & ZN_PKT_F_HASH_VALID) == 0 &&
		    !zn_owner_map_ok(d, mb)) {
			freed[n_freed++] = zn_owner_map_restore(d, mb);
			continue; /* taken back once: in neither list */
		}
		hops[k] = h;
		pkts[k++] = mb;
	}
	if (n_freed != 0)
		rte_mempool_put_bulk(d->mine,
				     (void **)freed, n_freed);
	if (unlikely(k != n)) {
		ns->mstats.drops[ZN_DROP_BAD_DESC] += n - k;
		w->shm->stats.drops[ZN_DROP_BAD_DESC] += n - k;
	}
	return k;
}

unsigned int
zn_owner_map_deep(const struct zn_owner_map *d, const struct zn_owner_map *made,
	     struct rte_mbuf **pkts, unsigned int n)
{
	struct rte_mbuf *bad[ZN_STAGE_SZ], *back[ZN_STAGE_SZ];
	unsigned int nbad = 0, k = 0, n_back = 0;

	if (unlikely(n > ZN_STAGE_SZ))
		n = ZN_STAGE_SZ; /* never: a run is part of one stage */
	/* No buffer is here twice: zn_owner_map_filter took each back once. */
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];

		if (unlikely(made != NULL) && zn_owner_map_real(made, mb)) {
			pkts[k++] = mb;
			continue;
		}
		if (unlikely(!zn_owner_map_ok(d, mb))) {
			bad[nbad++] = mb;
			if (zn_owner_map_real(d, mb))
				back[n_back++] = zn_owner_map_restore(d, mb);
			continue;
		}
		pkts[k++] = mb;
	}
	if (likely(nbad == 0))
		return 0;
	memmove(pkts + nbad, pkts, k * sizeof(*pkts));
	memcpy(pkts, bad, nbad * sizeof(*pkts));
	if (n_back != 0)
		rte_mempool_put_bulk(d->mine,
				     (void **)back, n_back);
	return nbad;
}

void
zn_owner_map_put(const struct zn_owner_map *maps, struct rte_mbuf **pkts,
	    unsigned int n)
{
	struct zn_owner_map_batch put = { .d = NULL, .n = 0 };
	struct rte_mbuf *segs[ZN_OWNER_MAP_MAX_SEGS];

	for (unsigned int i = 0; i < n; i++) {
		const struct zn_owner_map *d =
			zn_owner_map_pool_at(maps, (uintptr_t)pkts[i]);

		if (unlikely(d == NULL)) {
			/* A PMD's own pool (net_af_xdp's, ...): no NF's. */
			rte_pktmbuf_free(pkts[i]);
			continue;
		}
		if (unlikely(!zn_owner_map_real(d, pkts[i])))
			continue; /* never: zn_owner_map_filter kept starts only */
		zn_owner_map_batch_add(&put, d, segs,
				  zn_owner_map_segs(d, pkts[i], segs));
	}
	zn_owner_map_batch_flush(&put);
}
