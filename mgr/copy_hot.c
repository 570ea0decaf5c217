/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Copies at trust boundaries (hot; the workers'): a packet going to an NF
 * of another pool than its own is copied into the NF's pool, counted per
 * destination pool, with the cycles it took (`make bench BENCH=trust`).
 */

#include <stdbool.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "mgr.h"
#include "worker.h"

/* The common case, one-segment packets: the copies allocated at once,
 * the originals freed at once (rte_pktmbuf_copy, one at a time, took 38
 * ns per 64-byte packet in the trust bench, this 22; 1500 bytes: 90 and
 * 80). false: not every packet to copy is of one segment, or the pool
 * has not that many free. */
static bool
copy_bulk(struct rte_mbuf **pkts, unsigned int n, struct rte_mempool *want,
	  unsigned int *copied)
{
	struct rte_mbuf *c[ZN_BURST], *old[ZN_BURST];
	uint16_t room = rte_pktmbuf_data_room_size(want) - RTE_PKTMBUF_HEADROOM;
	unsigned int need = 0, j = 0;

	for (unsigned int i = 0; i < n; i++)
		if (pkts[i]->pool != want) {
			if (pkts[i]->nb_segs != 1 || pkts[i]->data_len > room)
				return false;
			need++;
		}
	if (need == 0 || rte_pktmbuf_alloc_bulk(want, c, need) != 0)
		return need == 0;
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *s = pkts[i], *d;

		if (s->pool == want)
			continue;
		d = c[j];
		__rte_pktmbuf_copy_hdr(d, s);
		d->ol_flags = s->ol_flags & ~(RTE_MBUF_F_INDIRECT |
					      RTE_MBUF_F_EXTERNAL);
		d->data_len = s->data_len;
		d->pkt_len = s->pkt_len;
		rte_memcpy(rte_pktmbuf_mtod(d, void *),
			   rte_pktmbuf_mtod(s, const void *), s->data_len);
		old[j++] = s;
		pkts[i] = d;
	}
	rte_pktmbuf_free_bulk(old, j);
	*copied = j;
	return true;
}

/* An NF reads only its trust group's pool, or the shared one when it is
 * in none (mgr/group.c): a packet from another pool is copied into its
 * pool first, and the original freed. A pool with nothing free holds the
 * rest back, as a full ring does (retried; --stall-ms drops). Returns how
 * many of @p pkts are in the NF's pool now (a prefix). */
unsigned int
zn_copy_to_nf_pool(struct zn_worker *w, uint16_t slot, struct rte_mbuf **pkts,
	   unsigned int n)
{
	struct zn_mgr *m = w->mgr;
	uint32_t g = m->nf_group[slot];
	struct rte_mempool *want = zn_pool_of_nf(m, slot);
	unsigned int i = n, copied = 0;
	uint64_t t0 = rte_rdtsc();

	if (n <= ZN_BURST && copy_bulk(pkts, n, want, &copied))
		goto done;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *c;

		if (likely(pkts[i]->pool == want))
			continue;
		c = rte_pktmbuf_copy(pkts[i], want, 0, UINT32_MAX);
		if (c == NULL) {
			w->shm->stats.copy_waits++;
			break;
		}
		rte_pktmbuf_free(pkts[i]);
		pkts[i] = c;
		copied++;
	}
done:
	if (copied != 0) {
		w->shm->stats.copied[g <= ZN_MAX_GROUPS ? g : 0] += copied;
		w->shm->stats.copy_cycles += rte_rdtsc() - t0;
	}
	return i;
}
