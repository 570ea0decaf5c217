/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * A trust group's packet about to go to a port's driver, as headers of
 * the manager's (shadow.h). Hot; the workers'.
 */

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "mgr.h"
#include "desc.h"
#include "shadow.h"
#include "worker.h"

/* The pools' maps, for the drivers' frees (process memory, set before
 * the ports start: shadow.c) */
static const struct zn_desc_pool *maps;

void
zn_shadow_set_maps(const struct zn_desc_pool *desc)
{
	maps = desc;
}

/* A driver is done with a header of ours: the segment it carried goes
 * back to its pool, through the manager's header of it, as DPDK's free
 * leaves a buffer (desc.h zn_desc_tidy). Any thread that frees one: a
 * worker in tx_burst, the control thread stopping a port. */
static void
give_back(void *addr, void *opaque)
{
	struct rte_mbuf *s = opaque;
	const struct zn_desc_pool *d = zn_desc_pool_at(maps, (uintptr_t)s);

	(void)addr;
	if (likely(d != NULL))
		rte_mempool_put(d->mine, zn_desc_tidy(s));
}

/* Headers @p h[0, ns) for segments @p segs[0, ns) of a packet of @p d's
 * pool: each with its segment's buffer attached, where the manager's
 * map says it is, at its offset and for its length, each loaded once
 * and cut to the buffer; the packet's header fields (offloads, VLAN,
 * hash) from its first segment, values only. */
static struct rte_mbuf *
shadow_of(const struct zn_desc_pool *d, struct rte_mbuf *const *segs,
	  struct rte_mbuf **h, unsigned int ns)
{
	uint32_t total = 0;

	__rte_pktmbuf_copy_hdr(h[0], segs[0]);
	h[0]->ol_flags &= ~(RTE_MBUF_F_INDIRECT | RTE_MBUF_F_EXTERNAL);
	for (unsigned int k = 0; k < ns; k++) {
		struct rte_mbuf *s = segs[k];
		struct rte_mbuf_ext_shared_info *si = rte_mbuf_to_priv(h[k]);
		char *buf = zn_desc_buf(d, s);
		uint16_t off = __atomic_load_n(&s->data_off, __ATOMIC_RELAXED);
		uint16_t len = __atomic_load_n(&s->data_len, __ATOMIC_RELAXED);

		if (off > d->buf_len)
			off = d->buf_len;
		if (len > d->buf_len - off)
			len = (uint16_t)(d->buf_len - off);
		si->free_cb = give_back;
		si->fcb_opaque = s;
		rte_mbuf_ext_refcnt_set(si, 1);
		rte_pktmbuf_attach_extbuf(h[k], buf,
					  zn_desc_iova(d, (uintptr_t)buf),
					  d->buf_len, si);
		h[k]->data_off = off;
		h[k]->data_len = len;
		h[k]->next = k + 1 < ns ? h[k + 1] : NULL;
		total += len;
	}
	h[0]->nb_segs = (uint16_t)ns;
	h[0]->pkt_len = total;
	return h[0];
}

unsigned int
zn_shadow_swap(struct zn_worker *w, struct rte_mbuf **pkts, unsigned int n)
{
	const struct zn_desc_pool *desc = w->mgr->desc;
	struct rte_mempool *sp = w->mgr->shadow_mp;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct zn_desc_pool *d =
			zn_desc_pool_at(desc, (uintptr_t)pkts[i]);
		struct rte_mbuf *segs[ZN_DESC_MAX_SEGS], *h[ZN_DESC_MAX_SEGS];
		unsigned int ns;

		/* The shared pool's (every NF writes the EAL's memory
		 * anyway: docs/security.md) or a driver's own */
		if (d == NULL || d == desc)
			continue;
		ns = zn_desc_segs(d, pkts[i], segs);
		if (unlikely(rte_mempool_get_bulk(sp, (void **)h, ns) != 0)) {
			w->shm->stats.shadow_waits++;
			break;
		}
		pkts[i] = shadow_of(d, segs, h, ns);
		w->shm->stats.shadowed++;
	}
	return i;
}
