/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Trust groups' packets to and from ports' drivers, as the manager's
 * headers (port_headers.h). Hot; the workers' (and the drivers' gets and puts,
 * wherever they run).
 */

#include <errno.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "../core/mgr.h"
#include "owner_map.h"
#include "port_headers.h"
#include "../datapath/worker.h"

/* The header of buffer @p b of @p sh's group */
static inline struct rte_mbuf *
header_of(const struct zn_port_headers *sh, const struct rte_mbuf *b)
{
	return sh->hdr_of[((uintptr_t)b - sh->d->lo) >> sh->d->own_shift];
}

/* Header @p h as a fresh mbuf of a pool, carrying @p b (where the data
 * is: said again, on the same line as the rest) */
static inline void
fresh(const struct zn_owner_map *d, struct rte_mbuf *h,
      const struct rte_mbuf *b)
{
	char *buf = zn_owner_map_buf(d, b);

	h->buf_addr = buf;
	rte_mbuf_iova_set(h, zn_owner_map_iova(d, (uintptr_t)buf));
	h->buf_len = d->buf_len;
	h->data_off = zn_owner_map_headroom(d);
	rte_mbuf_refcnt_set(h, 1);
	h->nb_segs = 1;
	h->ol_flags = 0;
	h->data_len = 0;
	h->pkt_len = 0;
}

int
zn_port_headers_take(void *arg, void **objs, unsigned int n)
{
	const struct zn_port_headers *sh = arg;

	/* Buffers of the group (through the manager's header of its pool:
	 * each a buffer's start, checked as it left the ring), then their
	 * headers in their place */
	if (unlikely(rte_mempool_get_bulk(sh->d->mine, objs, n) != 0))
		return -ENOBUFS;
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *b = objs[i], *h = header_of(sh, b);

		fresh(sh->d, h, b);
		objs[i] = h;
	}
	return 0;
}

void
zn_port_headers_give(void *arg, void *const *objs, unsigned int n)
{
	const struct zn_port_headers *sh = arg;
	void *bufs[64];

	/* A driver is done with headers (sent, an error, a queue
	 * stopped): their buffers go back as they are (tidied when they
	 * were sent; never followed while free) */
	for (unsigned int done = 0, k; done < n; done += k) {
		k = RTE_MIN(n - done, (unsigned int)RTE_DIM(bufs));
		for (unsigned int i = 0; i < k; i++)
			bufs[i] = zn_port_headers_buf(objs[done + i]);
		rte_mempool_put_bulk(sh->d->mine, bufs, k);
	}
}

void
zn_port_headers_tx(struct zn_worker *w, struct rte_mbuf **pkts, unsigned int n)
{
	const struct zn_owner_map *maps = w->mgr->trust.owner_maps;

	for (unsigned int i = 0; i < n; i++) {
		const struct zn_owner_map *d =
			zn_owner_map_pool_at(maps, (uintptr_t)pkts[i]);
		struct rte_mbuf *segs[ZN_OWNER_MAP_MAX_SEGS], *h, *prev = NULL;
		const struct zn_port_headers *sh;
		unsigned int ns;
		uint32_t total = 0;

		/* The shared pool's (every NF writes the EAL's memory
		 * anyway: docs/security.md) or a driver's own */
		if (d == NULL || d == maps)
			continue;
		sh = w->mgr->trust.group[d - maps - 1].port_headers;
		ns = zn_owner_map_segs(d, pkts[i], segs);
		for (unsigned int k = 0; k < ns; k++) {
			struct rte_mbuf *s = segs[k];
			uint16_t len, off = zn_owner_map_span(d, s, &len);

			h = header_of(sh, s);
			fresh(d, h, s);
			if (k == 0) /* offloads, VLAN, hash: values */
				zn_owner_map_copy_meta(h, s);
			h->data_off = off;
			h->data_len = len;
			h->next = NULL;
			if (prev != NULL)
				prev->next = h;
			else
				pkts[i] = h;
			prev = h;
			total += len;
			/* back in the pool as DPDK's free leaves a buffer
			 * (zn_port_headers_give puts it as it is) */
			zn_owner_map_tidy(s);
		}
		pkts[i]->nb_segs = (uint16_t)ns;
		pkts[i]->pkt_len = total;
		w->shm->stats.shadowed++;
	}
}

void
zn_port_headers_rx(struct zn_worker *w, const struct zn_port_headers *ph,
		   struct rte_mbuf **pkts, unsigned int n)
{
	const struct zn_owner_map *d = ph->d;

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *h = pkts[i], *first = NULL, *prev = NULL;
		unsigned int ns = 0;
		uint32_t total = 0;

		while (h != NULL) {
			struct rte_mbuf *b = zn_port_headers_buf(h), *next = h->next;

			if (next != NULL)
				h->next = NULL; /* free again: its buffer */
			if (unlikely(ns == ZN_OWNER_MAP_MAX_SEGS)) {
				rte_mempool_put(d->mine, b); /* cut */
				h = next;
				continue;
			}
			zn_owner_map_restore(d, b);
			b->data_off = zn_owner_map_span(d, h, &b->data_len);
			total += b->data_len;
			if (prev != NULL) {
				prev->next = b;
			} else { /* offloads, hash, VLAN, port, timestamp:
				  * values the driver wrote in our header */
				first = b;
				zn_owner_map_copy_meta(b, h);
			}
			prev = b;
			ns++;
			h = next;
		}
		first->nb_segs = (uint16_t)ns;
		first->pkt_len = total;
		pkts[i] = first;
	}
	w->shm->stats.shadow_rx += n;
}
