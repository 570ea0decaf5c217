/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_ROUTE_HOT_H
#define ZN_ROUTE_HOT_H

/**
 * @file
 * Where a packet goes next, from the routing snapshot (struct zn_route,
 * zn_shm.h): the one implementation that the manager's workers and
 * libzeronf's packet threads (NF -> NF hand-off) both run. Header-only so
 * that both inline it into their burst loops. The caller is an RCU reader
 * (ZN_READER_*) online while it reads @p rt.
 */

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <rte_branch_prediction.h>
#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <zeronf/pkt.h>

#include "../shm/zn_shm.h"

/* Where a packet goes, decided once and kept while it waits in a stage.
 * Applying it to the packet's metadata is idempotent, so a delivery that
 * only partly succeeds can be retried. */
enum zn_res_type {
	ZN_RES_WORKER = 0, /* an NF's: a worker resolves it (its TX ring) */
	ZN_RES_NF = 1,
	ZN_RES_PORT = 2,
	ZN_RES_DROP = 3,
	ZN_RES_REMOTE = 4, /* to another host (mgr/fabric): a worker
			    * encapsulates it for host `id` */
};

struct zn_res {
	uint8_t type;  /* enum zn_res_type */
	uint8_t pos;   /* NF: chain position the packet is at there;
			* REMOTE: the hop the next host runs */
	uint8_t hops;  /* NF: hop count the packet will have there */
	uint8_t reason; /* DROP: enum zn_drop_reason */
	uint16_t svc;  /* NF: service (to re-pick an instance); REMOTE:
			* the chain (its service path) */
	uint16_t id;   /* NF: instance; PORT: port; REMOTE: host */
};

/* Where one NF slot is for a reader and its RX ring there
 * (mgr/trust/group_home.c; never the pointers in zn_shm, which NFs can write). */
struct zn_peer {
	struct zn_nf_slot *slot;
	struct rte_ring *rx;
};

/* A reader's private balancing state (process-private). */
struct zn_rctx {
	const uint32_t *lb_epoch; /* zn_shm.rt.lb_epoch, or a group's copy */
	/* Where each slot, its RX ring and each link's ring are for this
	 * reader (mgr/trust/group_home.c; never the pointers in zn_shm, which NFs can
	 * write), and the only trust group whose slots it may read (group +
	 * 1, 0: none; -1: all, a worker): an NF does not map another
	 * group's. */
	const struct zn_peer *peer; /* slot s's: at peer + s * peer_stride */
	size_t peer_stride;         /* bytes: its reader's record of a slot */
	struct rte_ring *const *link;
	int32_t group;
	uint64_t now;            /* tsc, set by the reader once per loop */
	uint64_t *lb_moved;      /* its count of flows moved off a replica */
	unsigned int reader;     /* its ZN_READER_* id: pins->w[reader] */
	unsigned int lb_rr;      /* LEAST_LOADED tie-breaking */
	/* LEAST_LOADED: flows this reader pinned to each slot lately, halved
	 * every lb_decay_cycles; each counts as one queued packet. */
	uint64_t lb_decay_cycles;
	uint64_t lb_decay_at;
	uint32_t lb_fresh[ZN_MAX_NFS];
};

static inline void
zn_rctx_init(struct zn_rctx *c, const uint32_t *lb_epoch,
	     const struct zn_peer *peer, size_t peer_stride,
	     struct rte_ring *const *link, int32_t group,
	     unsigned int reader, uint64_t *lb_moved)
{
	memset(c, 0, sizeof(*c));
	c->lb_epoch = lb_epoch;
	c->peer = peer;
	c->peer_stride = peer_stride;
	c->link = link;
	c->group = group;
	c->reader = reader;
	c->lb_moved = lb_moved;
	c->lb_decay_cycles = rte_get_tsc_hz() / 1000;
}

static inline struct zn_res
zn_res_drop(enum zn_drop_reason reason)
{
	return (struct zn_res){ .type = ZN_RES_DROP, .reason = (uint8_t)reason };
}

/** Packets waiting for the NF of slot @p s (where it lives in this
 *  process), RX ring @p rx: that ring and the links into it, whose rings
 *  are @p link (by link id). Reads only memory that is never freed while
 *  the manager runs. */
static inline unsigned int
zn_slot_backlog(const struct zn_nf_slot *s, const struct rte_ring *rx,
		struct rte_ring *const *link)
{
	unsigned int n = rte_ring_count(rx);
	unsigned int n_in = RTE_MIN(__atomic_load_n(&s->links.n_in,
						    __ATOMIC_ACQUIRE),
				    (uint16_t)ZN_MAX_LINKS_IN);

	for (unsigned int i = 0; i < n_in; i++) {
		uint16_t l = s->links.in[i];

		if (l < ZN_MAX_LINKS && link[l] != NULL)
			n += rte_ring_count(link[l]);
	}
	return n;
}

/* What an NF of another trust group counts as (its rings are not mapped
 * here): more than any backlog, so that a reader prefers replicas it can
 * see; all unseen, ties go round-robin. */
#define ZN_BACKLOG_UNSEEN (1u << 24)

/** The backlog of replica @p slot as reader @p c sees it. */
static inline unsigned int
zn_nf_backlog(const struct zn_rctx *c, const struct zn_route *rt,
	      unsigned int slot)
{
	const struct zn_peer *p = (const void *)((const char *)c->peer +
						 slot * c->peer_stride);

	if (c->group >= 0 && rt->nf_group[slot] != c->group)
		return ZN_BACKLOG_UNSEEN;
	return zn_slot_backlog(p->slot, p->rx, c->link);
}

/* Halve the recent-pin counts once per lb_decay_cycles (1 ms). */
static inline void
zn_lb_decay(struct zn_rctx *c)
{
	if (likely(c->now < c->lb_decay_at))
		return;
	for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
		c->lb_fresh[i] >>= 1;
	c->lb_decay_at = c->now + c->lb_decay_cycles;
}

/* LEAST_LOADED: the flow's pinned replica, or the replica with the
 * shortest backlog for a new flow (then pinned; see struct zn_lb_pins).
 * A flow pinned in the last millisecond or so counts as one packet in its
 * replica's backlog: the rings alone say nothing about flows that have
 * just been given, so a burst of new flows arriving while one replica is
 * off its core would all pin to the other for good (seen on 2 cores: 1000
 * flows to one replica, none to the other). */
static inline uint16_t
zn_pick_pinned(struct zn_rctx *c, const struct zn_route *rt,
	       const struct zn_svc_entry *e, uint16_t svc, uint32_t hash)
{
	uint32_t *pin = &e->pins->pin[hash >> (32 - ZN_LB_PIN_BITS)];
	uint32_t epoch = __atomic_load_n(c->lb_epoch,
					 __ATOMIC_RELAXED) & 0xffff;
	uint32_t old = __atomic_load_n(pin, __ATOMIC_RELAXED);
	unsigned int best = UINT32_MAX;
	uint16_t slot = (uint16_t)((old & 0xffff) - 1u), pick = e->inst[0];
	bool fresh = old != 0 &&
		     ((epoch - (old >> 16)) & 0xffff) <= rt->lb_epoch_idle;

	if (fresh && slot < ZN_MAX_NFS && rt->nf_svc[slot] == svc) {
		if ((old >> 16) != epoch) /* once per epoch: keep it fresh */
			__atomic_store_n(pin, epoch << 16 | (old & 0xffff),
					 __ATOMIC_RELAXED);
		return slot;
	}
	/* Ties (empty rings, typical when a burst brings many new flows
	 * at once) go round-robin, not all to the first replica. */
	zn_lb_decay(c);
	for (unsigned int k = 0, i = c->lb_rr++ % e->n; k < e->n;
	     k++, i = i + 1 == e->n ? 0 : i + 1) {
		unsigned int n = zn_nf_backlog(c, rt, e->inst[i]) +
				 c->lb_fresh[e->inst[i]];

		if (n < best) {
			best = n;
			pick = e->inst[i];
		}
	}
	/* Another reader may pin the flow at the same time: its choice wins,
	 * so both directions keep one replica. */
	if (!__atomic_compare_exchange_n(pin, &old,
					 epoch << 16 | (uint32_t)(pick + 1),
					 false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		slot = (uint16_t)((old & 0xffff) - 1u);
		if (slot < ZN_MAX_NFS && rt->nf_svc[slot] == svc)
			return slot;
	} else if (fresh) {
		e->pins->w[c->reader].moved++; /* its replica left */
		if (c->lb_moved != NULL)
			(*c->lb_moved)++;
	}
	c->lb_fresh[pick]++;
	return pick;
}

/** An instance of service @p svc for packet @p m. @p c may be NULL
 *  (tests): LEAST_LOADED services then balance by hash. */
static inline struct zn_res
zn_pick_instance(struct zn_rctx *c, const struct zn_route *rt, uint16_t svc,
		 struct rte_mbuf *m, uint8_t pos, uint8_t hops)
{
	const struct zn_svc_entry *e = &rt->svc[svc];
	uint16_t id = e->inst[0];

	if (e->n == 0)
		return zn_res_drop(ZN_DROP_NO_INSTANCE);
	/* The flow hash is only needed (and computed) to choose a replica.
	 * Buckets use its high bits. */
	if (e->n > 1) {
		uint32_t hash = zn_pkt_flow_hash(m);

		if (e->mode == ZN_LB_LEAST_LOADED && e->pins != NULL &&
		    c != NULL)
			id = zn_pick_pinned(c, rt, e, svc, hash);
		else if (e->mode == ZN_LB_LEAST_LOADED && c != NULL &&
			 c->group > 0)
			/* An NF of a trust group reads no pins (they are in
			 * the EAL's memory, mgr/flow/route.c): a worker decides,
			 * with the pins, as for every other packet of the
			 * flow. */
			return (struct zn_res){ .type = ZN_RES_WORKER };
		else
			id = e->bucket[hash >> 24];
	}
	return (struct zn_res){ .type = ZN_RES_NF, .pos = pos, .hops = hops,
				.svc = svc, .id = id };
}

/** Decide where a packet goes, @p prev_hops NF hops taken so far (the
 *  loop guard's count: the manager's own, from its owner map, for a
 *  packet an NF hands back; mgr/trust/owner_map.h). Does not change the packet; may
 *  pin its flow to a replica (LEAST_LOADED). */
static inline struct zn_res
zn_route_resolve_at(struct zn_rctx *c, const struct zn_route *rt,
		    struct rte_mbuf *m, uint8_t prev_hops)
{
	const struct zn_pkt_meta *meta = zn_pkt_meta(m);
	const struct zn_chain *chain = &rt->chains[meta->chain];
	unsigned int hops = prev_hops + 1u;
	unsigned int pos;
	const struct zn_step *step;

	switch (meta->action) {
	case ZN_ACT_NEXT:
		pos = meta->chain_pos == ZN_CHAIN_POS_START ?
			      0 : meta->chain_pos + 1u;
		if (pos >= chain->len)
			return zn_res_drop(ZN_DROP_CHAIN_END);
		step = &chain->steps[pos];
		if (unlikely(step->host != 0)) /* the path goes on elsewhere */
			return (struct zn_res){ .type = ZN_RES_REMOTE,
						.pos = (uint8_t)pos,
						.svc = meta->chain,
						.id = step->host };
		if (step->type == ZN_STEP_PORT)
			return step->id < rt->n_ports ?
				(struct zn_res){ .type = ZN_RES_PORT,
						 .id = step->id } :
				zn_res_drop(ZN_DROP_BAD_ACTION);
		if (step->type != ZN_STEP_SERVICE)
			return zn_res_drop(ZN_DROP_CHAIN);
		if (hops > ZN_HOP_LIMIT)
			return zn_res_drop(ZN_DROP_HOP_LIMIT);
		return zn_pick_instance(c, rt, step->id, m, (uint8_t)pos,
					(uint8_t)hops);
	case ZN_ACT_TO_SERVICE:
		if (meta->dest == 0 || meta->dest >= ZN_MAX_SERVICES)
			return zn_res_drop(ZN_DROP_BAD_ACTION);
		if (hops > ZN_HOP_LIMIT)
			return zn_res_drop(ZN_DROP_HOP_LIMIT);
		return zn_pick_instance(c, rt, meta->dest, m, meta->chain_pos,
					(uint8_t)hops);
	case ZN_ACT_OUT:
		if (meta->dest >= rt->n_ports)
			return zn_res_drop(ZN_DROP_BAD_ACTION);
		return (struct zn_res){ .type = ZN_RES_PORT, .id = meta->dest };
	case ZN_ACT_DROP:
		return zn_res_drop(ZN_DROP_NF);
	default:
		return zn_res_drop(ZN_DROP_BAD_ACTION);
	}
}

/** zn_route_resolve_at() with the hop count the packet's metadata says
 *  (what the NF that holds it wrote: libzeronf's own hand-off, tests). */
static inline struct zn_res
zn_route_resolve(struct zn_rctx *c, const struct zn_route *rt,
		 struct rte_mbuf *m)
{
	return zn_route_resolve_at(c, rt, m, zn_pkt_meta(m)->hops);
}

/* The routing fields of @p m (action, chain, position, hops, dest: the
 * first 6 bytes of its meta), the hop count replaced by @p hops[i] if
 * @p hops is not NULL. */
static inline uint64_t
zn_route_key(struct rte_mbuf *m, const uint8_t *hops, unsigned int i)
{
	uint64_t key;

	memcpy(&key, zn_pkt_meta(m), sizeof(key));
	key &= 0x0000ffffffffffffULL;
	if (hops != NULL)
		key = (key & ~(0xffULL << 24)) | ((uint64_t)hops[i] << 24);
	return key;
}

/**
 * Resolve a burst. Packets of a burst mostly share their routing fields
 * (zn_route_key); such a packet reuses the previous decision unless that
 * decision depends on the flow hash (a service with several replicas).
 * @p hops: each packet's hop count so far, if not NULL (the manager's,
 * not the one in the metadata: zn_route_resolve_at). Counts the actions
 * into @p act (if not NULL). @return true if one decision, res[0],
 * applies to the whole burst (then res[1..] are not written).
 */
static inline bool
zn_resolve_burst(struct zn_rctx *c, const struct zn_route *rt,
		 struct rte_mbuf **pkts, const uint8_t *hops,
		 struct zn_res *res, unsigned int n, uint64_t *act)
{
	uint64_t key0, key;
	unsigned int i, j;
	bool reuse;

	key0 = zn_route_key(pkts[0], hops, 0);
	res[0] = zn_route_resolve_at(c, rt, pkts[0],
				     (uint8_t)(key0 >> 24));
	reuse = res[0].type != ZN_RES_NF || rt->svc[res[0].svc].n <= 1;
	for (i = 1; i < n; i++) {
		key = zn_route_key(pkts[i], hops, i);
		if (key != key0)
			break;
	}
	if (reuse && i == n) {
		if (act != NULL)
			act[RTE_MIN((unsigned int)(key0 & 0xff),
				    (unsigned int)ZN_ACT_MAX)] += n;
		return true;
	}
	/* Mixed burst: one decision per run of equal keys. The key is
	 * loaded once: what is resolved is what was compared (an NF may be
	 * rewriting the metadata meanwhile). */
	for (j = 0; j < n; j++) {
		key = zn_route_key(pkts[j], hops, j);
		if (act != NULL)
			act[RTE_MIN((unsigned int)(key & 0xff),
				    (unsigned int)ZN_ACT_MAX)]++;
		if (j > 0 && reuse && key == key0) {
			res[j] = res[j - 1];
			continue;
		}
		res[j] = zn_route_resolve_at(c, rt, pkts[j],
					     (uint8_t)(key >> 24));
		key0 = key;
		reuse = res[j].type != ZN_RES_NF || rt->svc[res[j].svc].n <= 1;
	}
	return false;
}

/** The service of chain @p chain's first hop, if that hop is a service
 *  of this host; 0 otherwise (a port, drop, another host, no hop): who
 *  may take what enters with that chain (mgr/port/port_nfrx.c). */
static inline uint16_t
zn_chain_first_service(const struct zn_route *rt, uint8_t chain)
{
	const struct zn_chain *c = &rt->chains[chain];

	if (c->len == 0 || c->steps[0].type != ZN_STEP_SERVICE ||
	    c->steps[0].host != 0 || c->steps[0].id >= ZN_MAX_SERVICES)
		return 0;
	return c->steps[0].id;
}

/** What a packet entering from port @p port starts with (a worker's RX,
 *  or an NF's that owns the queue: then at its first hop already): at
 *  the start of the default chain, no flow hash yet. */
static inline struct zn_pkt_meta
zn_ingress_tmpl(uint16_t port)
{
	return (struct zn_pkt_meta){
		.action = ZN_ACT_NEXT,
		.chain_pos = ZN_CHAIN_POS_START,
		.in_port = port,
	};
}

/** Packet @p m enters with metadata @p t, and the NIC's RSS hash
 *  (symmetric key, mgr/port/port.c) for flow hash if it has one;
 *  otherwise that is computed in software when first needed. One store
 *  of the metadata in the common case. */
static inline void
zn_ingress_meta(struct rte_mbuf *m, const struct zn_pkt_meta *t)
{
	struct zn_pkt_meta *meta = zn_pkt_meta(m);
	uint64_t w[2];

	/* two 8-byte stores (a struct copy may be made of many small ones) */
	RTE_BUILD_BUG_ON(sizeof(*meta) != sizeof(w));
	memcpy(w, t, sizeof(w));
	memcpy(meta, w, sizeof(w));
	if (unlikely((m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0)) {
		meta->flow_hash = m->hash.rss;
		meta->flags |= ZN_PKT_F_HASH_VALID | ZN_PKT_F_HASH_RSS;
	}
}

static inline bool
zn_res_same(const struct zn_res *a, const struct zn_res *b)
{
	uint64_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x == y;
}

/** Set what the receiving NF sees: the packet is at hop r->pos. */
static inline void
zn_res_apply(const struct zn_res *r, struct rte_mbuf **pkts, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct zn_pkt_meta *meta = zn_pkt_meta(pkts[i]);

		meta->chain_pos = r->pos;
		meta->hops = r->hops;
		meta->action = ZN_ACT_NEXT;
	}
}

#endif /* ZN_ROUTE_HOT_H */
