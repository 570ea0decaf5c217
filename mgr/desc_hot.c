/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Descriptors that cannot lie, the data path's part (desc.c: the maps,
 * the options, the policing): the checks a worker runs on what it takes
 * from an NF's TX ring. Reads only the maps and the packets; writes only
 * the counters of the worker and the NF's slot (mstats, the worker's).
 */

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_prefetch.h>

#include <zeronf/pkt.h>

#include "mgr.h"
#include "desc.h"
#include "worker.h"

#define ZN_DESC_MAX_SEGS 64 /* 128 KB of 2 KB buffers; bounds the walk */

static inline rte_iova_t
iova_of(const struct zn_desc_pool *d, uintptr_t p)
{
	rte_iova_t base = d->page_iova[(p - d->pg_lo) >> d->pg_shift];

	return base == RTE_BAD_IOVA ? RTE_BAD_IOVA :
	       base + ((p - d->pg_lo) & (d->pg - 1));
}

/* Where one of the pool's buffers starts? */
static inline bool
real_buffer(const struct zn_desc_pool *d, const struct rte_mbuf *s)
{
	uintptr_t p = (uintptr_t)s, line;

	if (p < d->lo || p >= d->hi || (p & (RTE_CACHE_LINE_SIZE - 1)) != 0)
		return false;
	line = (p - d->lo) / RTE_CACHE_LINE_SIZE;
	return ((d->bits[line / 64] >> (line % 64)) & 1) != 0;
}

static inline bool
seg_ok(const struct zn_desc_pool *d, const struct rte_mbuf *s)
{
	const char *buf = (const char *)s + sizeof(*s) + d->priv;

	if (!real_buffer(d, s))
		return false;
	return s->pool == d->mp && s->buf_addr == buf &&
	       rte_mbuf_iova_get(s) == iova_of(d, (uintptr_t)buf) &&
	       s->buf_len == d->buf_len &&
	       (uint32_t)s->data_off + s->data_len <= s->buf_len &&
	       (s->ol_flags & (RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL)) ==
	       0 && rte_mbuf_refcnt_read(s) != 0;
}

static inline bool
desc_ok(const struct zn_desc_pool *d, const struct rte_mbuf *mb)
{
	const struct rte_mbuf *s;
	unsigned int segs = 0;
	uint32_t len = 0;

	if (!seg_ok(d, mb) || mb->nb_segs == 0 ||
	    mb->nb_segs > ZN_DESC_MAX_SEGS)
		return false;
	for (s = mb; s != NULL; s = s->next) {
		if (++segs > mb->nb_segs || (s != mb && !seg_ok(d, s)))
			return false;
		len += s->data_len;
	}
	return segs == mb->nb_segs && len == mb->pkt_len;
}

/* A mangled buffer of @p d's pool, its fields as the pool made them. */
static struct rte_mbuf *
restore(const struct zn_desc_pool *d, struct rte_mbuf *mb)
{
	char *buf = (char *)mb + sizeof(*mb) + d->priv;

	mb->pool = (struct rte_mempool *)(uintptr_t)d->mp;
	mb->buf_addr = buf;
	rte_mbuf_iova_set(mb, iova_of(d, (uintptr_t)buf));
	mb->buf_len = d->buf_len;
	mb->priv_size = d->priv;
	mb->ol_flags = 0;
	mb->next = NULL;
	mb->nb_segs = 1;
	mb->data_len = 0;
	mb->pkt_len = 0;
	mb->data_off = RTE_MIN((uint16_t)RTE_PKTMBUF_HEADROOM, d->buf_len);
	rte_mbuf_refcnt_set(mb, 1);
	return mb;
}

static inline bool
in(struct rte_mbuf *const *a, unsigned int n, const struct rte_mbuf *mb)
{
	for (unsigned int i = 0; i < n; i++)
		if (a[i] == mb)
			return true;
	return false;
}

/* Both lines of the mbuf (the second holds the chain and the metadata,
 * which the worker reads next) and the map's word: only for an address
 * inside the pool (a prefetch of any address is harmless, but a hostile
 * NF's pointers need not be asked for). */
#define PREFETCH_AHEAD 8u

static inline void
prefetch_desc(const struct zn_desc_pool *d, const struct rte_mbuf *mb)
{
	uintptr_t p = (uintptr_t)mb;

	if (p < d->lo || p >= d->hi)
		return;
	rte_prefetch0(mb);
	rte_prefetch0(RTE_PTR_ADD(mb, RTE_CACHE_LINE_SIZE));
	rte_prefetch0(&d->bits[(p - d->lo) / RTE_CACHE_LINE_SIZE / 64]);
}

unsigned int
zn_desc_filter(struct zn_worker *w, unsigned int slot,
	       struct rte_mbuf **pkts, unsigned int n)
{
	struct zn_mgr *m = w->mgr;
	struct zn_nf_slot *ns = &m->shm->nfs[slot];
	uint32_t g = ns->ctl.group;
	const struct zn_desc_pool *d = &m->desc[g <= ZN_MAX_GROUPS ? g : 0];
	struct rte_mbuf *freed[ZN_BURST];
	unsigned int k = 0, n_freed = 0;
	struct zn_pkt_meta *meta;

	if (unlikely(n > ZN_BURST))
		n = ZN_BURST; /* never: the worker dequeues at most that */
	for (unsigned int i = 0; i < RTE_MIN(n, PREFETCH_AHEAD); i++)
		prefetch_desc(d, pkts[i]);
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];

		if (i + PREFETCH_AHEAD < n)
			prefetch_desc(d, pkts[i + PREFETCH_AHEAD]);
		if (unlikely(!desc_ok(d, mb))) {
			/* One of the pool's buffers, mangled: it goes back
			 * to the pool as the pool made it (its first segment:
			 * the rest cannot be trusted), once. */
			if (real_buffer(d, mb) && !in(pkts, k, mb) &&
			    !in(freed, n_freed, mb))
				freed[n_freed++] = restore(d, mb);
			continue;
		}
		/* Twice in a burst (or given back above): the mark in its
		 * metadata (its line is read next anyway), set here and
		 * cleared below; one the NF set itself is no duplicate. A
		 * packet with more than one reference may go on more than
		 * once. */
		meta = zn_pkt_meta(mb);
		if (unlikely(((meta->flags & ZN_PKT_F_SEEN) != 0 &&
			      in(pkts, k, mb)) ||
			     (n_freed != 0 && in(freed, n_freed, mb))))
			continue;
		if (likely(rte_mbuf_refcnt_read(mb) == 1))
			meta->flags |= ZN_PKT_F_SEEN;
		pkts[k++] = mb;
	}
	for (unsigned int i = 0; i < k; i++)
		zn_pkt_meta(pkts[i])->flags &= ~ZN_PKT_F_SEEN;
	if (n_freed != 0)
		rte_mempool_put_bulk(freed[0]->pool, (void **)freed, n_freed);
	if (unlikely(k != n)) {
		ns->mstats.drops[ZN_DROP_BAD_DESC] += n - k;
		w->shm->stats.drops[ZN_DROP_BAD_DESC] += n - k;
	}
	return k;
}

