/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_OWNER_MAP_H
#define ZN_OWNER_MAP_H

/*
 * Descriptors that cannot lie (owner_map.c): what an NF hands back on its TX
 * ring is checked before a worker touches it. The maps live in the
 * manager's own memory: no NF can change what they say.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

#include "../../lib/shm/zn_shm.h" /* ZN_MAX_GROUPS */

struct zn_mgr;
struct zn_route;
struct zn_worker;

/* One pool: where its buffers start (a bit per cache line of its memory)
 * and what a buffer of it looks like. */
struct zn_owner_map {
	const struct rte_mempool *mp; /* what its buffers' `pool` field says */
	/* what the manager gets and puts with: the same for the shared
	 * pool, the manager's own header for a group's (pool_header.c) */
	struct rte_mempool *mine;
	uintptr_t lo, hi;   /* the pool's memory (all its chunks) */
	uint64_t *bits;     /* bit (p - lo) / 64: a buffer starts at p */
	/* Each buffer's entry (index (p - lo) >> own_shift: 2^own_shift <=
	 * a buffer's whole size, so two buffers never share an entry, and
	 * the map is small enough to stay cached, 4 bytes a buffer):
	 * - start: where in its 2^own_shift window the buffer starts (a
	 *   pointer is a buffer's start iff its entry says so: one load
	 *   answers both questions below), ZN_OWN_NONE: no buffer starts
	 *   in that window;
	 * - owner: who holds it as the workers saw it, the NF's slot + 1
	 *   from the moment a worker hands it to that NF until the first
	 *   time it comes back, 0 otherwise. Each hand-out is taken back
	 *   once: a second copy, a copy on another ring, a stale pointer to
	 *   a buffer the manager already sent on or gave another NF, are
	 *   refused (owner_map_hot.c);
	 * - hops: the NF hops the packet in it has taken (the loop guard,
	 *   lib/common/zn_route_hot.h), as the workers counted them: set
	 *   when a worker hands it to an NF, 0 when a port receives into it;
	 *   a packet an NF hands back marked as made by it (ZN_PKT_F_NEW)
	 *   counts from 0 (owner_map_hot.c take_back); what an NF writes into
	 *   the metadata's `hops` is not read back. */
	struct zn_own {
		uint8_t owner;
		uint8_t hops;
		uint16_t start;
	} *own;
	uint8_t own_shift;
	uint64_t foreign;   /* no buffer of it, taken out of its ring and
			     * dropped (owner_map.c pool_check; atomic) */
	uint16_t priv;      /* mbuf private area: buf_addr = mb + 128 + priv */
	uint16_t buf_len;
	uint64_t pg;        /* page size of the pool's memory */
	uint8_t pg_shift;
	uintptr_t pg_lo;    /* lo, down to a page */
	rte_iova_t *page_iova; /* IOVA of each page from pg_lo: buf_iova */
};

/* ---- The checks (inline: the workers and the control path share them) */

#define ZN_OWN_NONE 0xffff /* > any start: own_shift <= 15 (owner_map.c) */

/* The entry of the buffer around @p p, an address inside the pool
 * ([lo, hi)). */
static inline struct zn_own *
zn_owner_map_own(const struct zn_owner_map *d, uintptr_t p)
{
	return &d->own[(p - d->lo) >> d->own_shift];
}

/* The entry of the buffer that starts at @p p, or NULL: not one of the
 * pool's buffers. Reads only the entry (as zn_owner_map_real, another way). */
static inline struct zn_own *
zn_owner_map_own_at(const struct zn_owner_map *d, uintptr_t p)
{
	uintptr_t off = p - d->lo;
	struct zn_own *e;

	if (unlikely(off >= d->hi - d->lo))
		return NULL;
	e = &d->own[off >> d->own_shift];
	return likely(e->start == (off & ((1u << d->own_shift) - 1))) ?
	       e : NULL;
}

/* An owner is a slot + 1 */
_Static_assert(ZN_MAX_NFS < UINT8_MAX, "zn_own.owner is 8 bits");
/** Record that @p pkts[0, n) (buffers of @p d's pool or not: others are
 *  skipped) are now held by the NF in slot @p v - 1, or by the manager
 *  (@p v 0), having taken @p hops NF hops. A worker only: the one
 *  handing them out or taking them in. */
static inline void
zn_owner_map_hold(const struct zn_owner_map *d, struct rte_mbuf *const *pkts,
	     unsigned int n, uint8_t v, uint8_t hops)
{
	const uintptr_t lo = d->lo, span = d->hi - d->lo;
	const unsigned int shift = d->own_shift;
	struct zn_own *own = d->own;

	for (unsigned int i = 0; i < n; i++) {
		uintptr_t off = (uintptr_t)pkts[i] - lo;

		if (likely(off < span)) {
			own[off >> shift].owner = v;
			own[off >> shift].hops = hops;
		}
	}
}

#define ZN_OWNER_MAP_MAX_SEGS 64 /* 128 KB of 2 KB buffers; bounds the walk */

static inline rte_iova_t
zn_owner_map_iova(const struct zn_owner_map *d, uintptr_t p)
{
	rte_iova_t base = d->page_iova[(p - d->pg_lo) >> d->pg_shift];

	return base == RTE_BAD_IOVA ? RTE_BAD_IOVA :
	       base + ((p - d->pg_lo) & (d->pg - 1));
}

/** Does one of @p d's buffers start at @p s? Reads only the map. */
static inline bool
zn_owner_map_real(const struct zn_owner_map *d, const struct rte_mbuf *s)
{
	uintptr_t p = (uintptr_t)s, line;

	if (p < d->lo || p >= d->hi || (p & (RTE_CACHE_LINE_SIZE - 1)) != 0)
		return false;
	line = (p - d->lo) / RTE_CACHE_LINE_SIZE;
	return ((d->bits[line / 64] >> (line % 64)) & 1) != 0;
}

/** Where buffer @p s of pool @p d keeps its data (what its buf_addr
 *  should say: not read from it). */
static inline char *
zn_owner_map_buf(const struct zn_owner_map *d, const struct rte_mbuf *s)
{
	return (char *)(uintptr_t)s + sizeof(*s) + d->priv;
}

/** The headroom a buffer of @p d's pool starts with, as the pool made it
 *  (rte_pktmbuf_reset's). */
static inline uint16_t
zn_owner_map_headroom(const struct zn_owner_map *d)
{
	return RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, d->buf_len);
}

/** Where buffer @p s of @p d's pool has its data (returned: the offset)
 *  and how much (@p *len), data_off and data_len each loaded once and
 *  cut to the buffer: an NF that rewrites them meanwhile changes what is
 *  read, never where. */
static inline uint16_t
zn_owner_map_span(const struct zn_owner_map *d, const struct rte_mbuf *s,
	     uint16_t *len)
{
	uint16_t off = RTE_MIN(__atomic_load_n(&s->data_off, __ATOMIC_RELAXED),
			       d->buf_len);

	*len = RTE_MIN(__atomic_load_n(&s->data_len, __ATOMIC_RELAXED),
		       (uint16_t)(d->buf_len - off));
	return off;
}

/** What of packet @p s's header a header @p d made for it keeps (a copy,
 *  the manager's port headers): DPDK's copy of the fields, values only,
 *  and its offload flags but for an attachment (@p d is direct). */
static inline void
zn_owner_map_copy_meta(struct rte_mbuf *d, const struct rte_mbuf *s)
{
	__rte_pktmbuf_copy_hdr(d, s);
	d->ol_flags = __atomic_load_n(&s->ol_flags, __ATOMIC_RELAXED) &
		      ~(RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL);
}

/** Where zn_owner_map_restore() starts the data of buffer @p s of @p d (its
 *  data_off, which an NF of the pool may rewrite the moment after). */
static inline char *
zn_owner_map_data(const struct zn_owner_map *d, const struct rte_mbuf *s)
{
	return zn_owner_map_buf(d, s) + zn_owner_map_headroom(d);
}

/* One segment: a buffer of the pool, from its start, as the pool made it
 * (direct, its data inside its own buffer). Reads @p s only once its
 * address is known to be a buffer's. */
static inline bool
zn_owner_map_seg_ok(const struct zn_owner_map *d, const struct rte_mbuf *s)
{
	const char *buf = zn_owner_map_buf(d, s);

	if (!zn_owner_map_real(d, s))
		return false;
	return s->pool == d->mp && s->buf_addr == buf &&
	       rte_mbuf_iova_get(s) == zn_owner_map_iova(d, (uintptr_t)buf) &&
	       s->buf_len == d->buf_len &&
	       (uint32_t)s->data_off + s->data_len <= s->buf_len &&
	       (s->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL)) ==
	       0 && rte_mbuf_refcnt_read(s) != 0;
}

/** A whole packet: every segment passes, their lengths add up. */
static inline bool
zn_owner_map_ok(const struct zn_owner_map *d, const struct rte_mbuf *mb)
{
	const struct rte_mbuf *s;
	unsigned int segs = 0;
	uint32_t len = 0;

	if (!zn_owner_map_seg_ok(d, mb) || mb->nb_segs == 0 ||
	    mb->nb_segs > ZN_OWNER_MAP_MAX_SEGS)
		return false;
	for (s = mb; s != NULL; s = s->next) {
		if (++segs > mb->nb_segs || (s != mb && !zn_owner_map_seg_ok(d, s)))
			return false;
		len += s->data_len;
	}
	return segs == mb->nb_segs && len == mb->pkt_len;
}

/** A mangled buffer of @p d's pool, its fields as the pool made them (its
 *  first segment only: the rest of its chain cannot be trusted). */
static inline struct rte_mbuf *
zn_owner_map_restore(const struct zn_owner_map *d, struct rte_mbuf *mb)
{
	char *buf = zn_owner_map_buf(d, mb);

	mb->pool = (struct rte_mempool *)(uintptr_t)d->mp;
	mb->buf_addr = buf;
	rte_mbuf_iova_set(mb, zn_owner_map_iova(d, (uintptr_t)buf));
	mb->buf_len = d->buf_len;
	mb->priv_size = d->priv;
	mb->ol_flags = 0;
	mb->next = NULL;
	mb->nb_segs = 1;
	mb->data_len = 0;
	mb->pkt_len = 0;
	mb->data_off = zn_owner_map_headroom(d);
	rte_mbuf_refcnt_set(mb, 1);
	return mb;
}

/** The pool (of the maps @p maps, [0, ZN_MAX_GROUPS]) whose memory
 *  holds @p p, or NULL: from the manager's own memory, never from what
 *  the buffer's `pool` field says. */
static inline const struct zn_owner_map *
zn_owner_map_pool_at(const struct zn_owner_map *maps, uintptr_t p)
{
	for (unsigned int g = 0; g <= ZN_MAX_GROUPS; g++)
		if (p - maps[g].lo < maps[g].hi - maps[g].lo) /* unused: 0 */
			return &maps[g];
	return NULL;
}

/** Segment @p s of a pool, ready to go back to it as DPDK's free leaves
 *  a buffer (alone, one reference, direct): each field written only if
 *  it is not so already (an honest packet is: nothing written, its lines
 *  stay shared with the NF that wrote them last). Where its data is
 *  (buf_addr, ...) is not reset: the manager never follows a free
 *  buffer's header (copies reset it as they take one, copy_hot.c). */
static inline struct rte_mbuf *
zn_owner_map_tidy(struct rte_mbuf *s)
{
	if (unlikely(s->next != NULL))
		s->next = NULL;
	if (unlikely(s->nb_segs != 1))
		s->nb_segs = 1;
	if (unlikely(rte_mbuf_refcnt_read(s) != 1))
		rte_mbuf_refcnt_set(s, 1);
	if (unlikely((s->ol_flags & (RTE_MBUF_F_INDIRECT |
				     RTE_MBUF_F_EXTERNAL)) != 0))
		s->ol_flags = 0;
	return s;
}

/**
 * The data of packet @p mb's first segment as the manager reads it: with
 * the maps @p maps (--validate), from where its pool (found by address)
 * keeps the buffer's data, at its data_off and for its data_len, each
 * loaded once and cut to the buffer: an NF that rewrites the header
 * meanwhile changes what is read, never where. NULL (*@p len 0): inside
 * a pool but no buffer's start (never: filtered). A packet of no pool of
 * the maps (a PMD's own), or @p maps NULL: as DPDK reads it.
 */
static inline const uint8_t *
zn_owner_map_pkt_data(const struct zn_owner_map *maps, const struct rte_mbuf *mb,
		 uint32_t *len)
{
	const struct zn_owner_map *d = maps != NULL ?
		zn_owner_map_pool_at(maps, (uintptr_t)mb) : NULL;
	uint16_t off, dl;

	if (d == NULL) {
		*len = rte_pktmbuf_data_len(mb);
		return rte_pktmbuf_mtod(mb, const uint8_t *);
	}
	*len = 0;
	if (unlikely(!zn_owner_map_real(d, mb)))
		return NULL;
	off = zn_owner_map_span(d, mb, &dl);
	*len = dl;
	return (const uint8_t *)zn_owner_map_buf(d, mb) + off;
}

/**
 * The segments of @p mb (a buffer of @p d's pool, from its start) into
 * @p segs (ZN_OWNER_MAP_MAX_SEGS), each `next` loaded once and kept only if
 * it is a buffer of the same pool not already in the list: what the
 * manager then reads or frees is what it checked, whatever an NF writes
 * into the chain meanwhile (a check earlier is not a check now: the NF
 * writes the packet while the worker holds it). Stops at the first that
 * is not. Reads only the `next` fields and the map. @return how many
 * (>= 1).
 */
static inline unsigned int
zn_owner_map_segs(const struct zn_owner_map *d, struct rte_mbuf *mb,
	     struct rte_mbuf **segs)
{
	unsigned int n = 1;

	segs[0] = mb;
	while (n < ZN_OWNER_MAP_MAX_SEGS) {
		struct rte_mbuf *nx = __atomic_load_n(&segs[n - 1]->next,
						      __ATOMIC_RELAXED);
		bool dup = false;

		if (likely(nx == NULL) || !zn_owner_map_real(d, nx))
			break;
		for (unsigned int j = 0; j < n && !dup; j++)
			dup = segs[j] == nx;
		if (dup)
			break;
		segs[n++] = nx;
	}
	return n;
}

/** Buffers going back to a pool of the maps, put in bulk while they are
 *  of one pool (workers: zn_owner_map_put, copies' originals). */
struct zn_owner_map_batch {
	const struct zn_owner_map *d;
	unsigned int n;
	void *objs[ZN_BURST];
};

static inline void
zn_owner_map_batch_flush(struct zn_owner_map_batch *b)
{
	if (b->n != 0)
		rte_mempool_put_bulk(b->d->mine, b->objs, b->n);
	b->n = 0;
}

/** Segments @p segs[0, ns) (ZN_OWNER_MAP_MAX_SEGS at most) of @p d's pool,
 *  tidied (zn_owner_map_tidy), into @p b. */
static inline void
zn_owner_map_batch_add(struct zn_owner_map_batch *b, const struct zn_owner_map *d,
		  struct rte_mbuf *const *segs, unsigned int ns)
{
	if (b->d != d || b->n + ns > RTE_DIM(b->objs)) {
		zn_owner_map_batch_flush(b);
		b->d = d;
	}
	for (unsigned int k = 0; k < ns; k++)
		b->objs[b->n++] = zn_owner_map_tidy(segs[k]);
}

/**
 * Give @p pkts[0, n) back to their pools (workers, --validate): each
 * pool found by address in @p maps, each segment as zn_owner_map_segs() found
 * it, tidied (zn_owner_map_tidy) and put into the pool the manager knows (not
 * the one its `pool` field names, nor through `next`; a reference count
 * an NF raised keeps nothing). A packet of no pool of the maps (a
 * PMD's own pool, which no NF hands back) is freed as DPDK does.
 * owner_map_hot.c.
 */
void zn_owner_map_put(const struct zn_owner_map *maps, struct rte_mbuf **pkts,
		 unsigned int n);

/** Free packets a worker holds: zn_owner_map_put() with the maps @p maps,
 *  or without --validate (@p maps NULL: the NFs are trusted) as DPDK
 *  does. */
static inline void
zn_owner_map_drop(const struct zn_owner_map *maps, struct rte_mbuf **pkts,
	     unsigned int n)
{
	if (maps != NULL)
		zn_owner_map_put(maps, pkts, n);
	else
		rte_pktmbuf_free_bulk(pkts, n);
}


/**
 * First look at @p pkts[0, n), dequeued from slot @p slot's TX ring: keep,
 * in order, the buffers of the NF's own pool (from a buffer's start) that
 * the owner map says it may hand back (each hand-out taken back once: the
 * kept ones are the manager's from now on); count the others as
 * bad_descriptor drops of the NF, never reading them. Reads of the kept
 * ones only the metadata line (the worker routes by it next), unless
 * routing under @p rt may parse the packet (and it has no valid hash):
 * then the whole descriptor is checked here. What reads more of a kept
 * packet (a port, a free, a copy) calls zn_owner_map_deep() first. @p hops[i]:
 * the NF hops kept packet i has taken, from the map (struct zn_own).
 * Returns how many are kept.
 */
unsigned int zn_owner_map_filter(struct zn_worker *w, unsigned int slot,
			    struct rte_mbuf **pkts, uint8_t *hops,
			    unsigned int n, const struct zn_route *rt);

/**
 * The whole descriptor of @p pkts[0, n) (buffers zn_owner_map_filter kept from
 * an NF of pool @p d), before anything reads past their metadata: the bad
 * ones are moved to the front, in no order (the good ones keep theirs),
 * never read further (a mangled buffer of the pool goes back to it, as
 * the pool made it). Buffers of @p made (if not NULL) pass: the worker's
 * own copies into that pool, left in the stage by a partial delivery.
 * Returns how many are bad; the caller counts them.
 */
unsigned int zn_owner_map_deep(const struct zn_owner_map *d,
			  const struct zn_owner_map *made,
			  struct rte_mbuf **pkts, unsigned int n);

/**
 * Free what an NF left where only it wrote (its rings, its links, its
 * ledger), after the same checks: packets of any of the pools are freed,
 * mangled buffers of a pool given back as the pool made them, anything
 * else left alone and logged under @p who. Each pointer once per call.
 * Control path (reclaim, shutdown). Returns the buffers given back.
 */
unsigned int zn_owner_map_free(struct zn_mgr *m, struct rte_mbuf **pkts,
			  unsigned int n, const char *who);


#endif /* ZN_OWNER_MAP_H */
