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

#include "../core/mgr.h"
#include "owner_map.h"
#include "../datapath/worker.h"
#include "../nf/nf_rec.h"

/* The common case, one-segment packets: the copies allocated at once,
 * the originals freed at once (rte_pktmbuf_copy, one at a time, took 38
 * ns per 64-byte packet in the trust bench, this 22; 1500 bytes: 90 and
 * 80). false: not every packet to copy is of one segment, or the pool
 * has not that many free. Without --validate (the NFs are trusted). */
static bool
copy_bulk(struct rte_mbuf **pkts, unsigned int n, const struct rte_mempool *want,
	  struct rte_mempool *mine, unsigned int *copied)
{
	struct rte_mbuf *c[ZN_BURST], *old[ZN_BURST];
	uint16_t room = rte_pktmbuf_data_room_size(mine) - RTE_PKTMBUF_HEADROOM;
	unsigned int need = 0, j = 0;

	for (unsigned int i = 0; i < n; i++)
		if (pkts[i]->pool != want) {
			if (pkts[i]->nb_segs != 1 || pkts[i]->data_len > room)
				return false;
			need++;
		}
	if (need == 0 || rte_pktmbuf_alloc_bulk(mine, c, need) != 0)
		return need == 0;
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *s = pkts[i], *d;

		if (s->pool == want)
			continue;
		d = c[j];
		zn_owner_map_copy_meta(d, s);
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

/* Copy @p s (a buffer of pool @p sd) into new buffers of @p dd's pool
 * (--validate: every pool an NF maps, so every packet's header, is
 * written by NFs while the worker works). Nothing of the source is read
 * through a pointer it holds: its segments as zn_owner_map_segs() found them,
 * each one's offset and length loaded once and cut to its buffer, its
 * data where the pool keeps it; nothing of the new buffers either: each
 * is reset as its pool made it (an NF of @p dd's group may have written
 * the header of a free buffer: its buf_addr is not where the copy
 * writes) and written where the pool keeps its data. What another NF
 * makes of a chain meanwhile changes what is copied, not where. The
 * source's segments are left in @p segs, @p *nsegs. NULL: @p dd's pool
 * had not enough free. */
static struct rte_mbuf *
copy_checked(const struct zn_owner_map *sd, const struct zn_owner_map *dd,
	     struct rte_mbuf *s, struct rte_mbuf **segs, unsigned int *nsegs)
{
	struct rte_mempool *want = dd->mine;
	uint16_t off[ZN_OWNER_MAP_MAX_SEGS], len[ZN_OWNER_MAP_MAX_SEGS];
	struct rte_mbuf *c[ZN_OWNER_MAP_MAX_SEGS];
	const uint32_t room = dd->buf_len - zn_owner_map_headroom(dd);
	unsigned int ns = zn_owner_map_segs(sd, s, segs), nc, si = 0;
	uint32_t total = 0, done = 0, at = 0;

	for (unsigned int i = 0; i < ns; i++) {
		off[i] = zn_owner_map_span(sd, segs[i], &len[i]);
		total += len[i];
	}
	*nsegs = ns;
	if (room == 0)
		return NULL;
	nc = RTE_MAX(1u, (total + room - 1) / room);
	if (nc > ZN_OWNER_MAP_MAX_SEGS) { /* what the egress check allows */
		nc = ZN_OWNER_MAP_MAX_SEGS;
		total = nc * room;
	}
	if (rte_mempool_get_bulk(want, (void **)c, nc) != 0)
		return NULL;
	for (unsigned int k = 0; k < nc; k++) {
		struct rte_mbuf *d = zn_owner_map_restore(dd, c[k]);
		char *dst = zn_owner_map_data(dd, d); /* not d->data_off */
		uint32_t fill = RTE_MIN(room, total - done);

		d->data_len = (uint16_t)fill;
		while (fill > 0) { /* from the source's segments, in order */
			uint32_t take = RTE_MIN(fill, (uint32_t)len[si] - at);

			rte_memcpy(dst, zn_owner_map_buf(sd, segs[si]) + off[si] + at,
				   take);
			dst += take;
			fill -= take;
			done += take;
			at += take;
			if (at == len[si]) {
				si++;
				at = 0;
			}
		}
		if (k > 0)
			c[k - 1]->next = d;
	}
	zn_owner_map_copy_meta(c[0], s);
	c[0]->nb_segs = (uint16_t)nc;
	c[0]->pkt_len = total;
	return c[0];
}

/* One-segment packets of @p sd's pool (as copy_checked, with their
 * offset and length loaded and checked by the caller) into @p c (fresh
 * buffers of @p dd's pool). */
static inline void
copy_one_seg(const struct zn_owner_map *sd, const struct zn_owner_map *dd,
	     struct rte_mbuf *s, struct rte_mbuf *c, uint16_t off, uint16_t len)
{
	struct rte_mbuf *d = c; /* zn_owner_map_restore'd */

	zn_owner_map_copy_meta(d, s);
	d->data_len = len;
	d->pkt_len = len;
	rte_memcpy(zn_owner_map_data(dd, d), zn_owner_map_buf(sd, s) + off, len);
}

/* The copies of @p pkts[0, n) not in @p dd's pool (by address): those of
 * one segment that fit a buffer in bulk (copy_one_seg), the others with
 * copy_checked(); the originals given back to the pools the maps name
 * (not through their pointers either). Returns how many of @p pkts are in
 * @p dd's pool now (a prefix). */
static unsigned int
copy_all_checked(const struct zn_owner_map *maps,
		 const struct zn_owner_map *dd, struct rte_mbuf **pkts,
		 unsigned int n, unsigned int *copied)
{
	struct rte_mbuf *c[ZN_BURST], *segs[ZN_OWNER_MAP_MAX_SEGS];
	const uint32_t room = dd->buf_len - zn_owner_map_headroom(dd);
	struct zn_owner_map_batch put = { .d = NULL, .n = 0 };
	unsigned int need = 0, j = 0, i;

	n = RTE_MIN(n, (unsigned int)ZN_BURST); /* the caller's runs */
	for (i = 0; i < n; i++)
		need += (uintptr_t)pkts[i] - dd->lo >= dd->hi - dd->lo;
	if (need != 0 && rte_mempool_get_bulk(
		dd->mine, (void **)c, need) != 0)
		need = 0; /* one at a time, up to what the pool has */
	for (i = 0; i < need; i++) /* all at once: their lines in flight */
		zn_owner_map_restore(dd, c[i]);
	for (i = 0; i < n; i++) {
		struct rte_mbuf *s = pkts[i], *d;
		const struct zn_owner_map *sd;
		unsigned int ns;
		uint16_t off, len;

		if (likely((uintptr_t)s - dd->lo < dd->hi - dd->lo))
			continue; /* in the NF's pool already */
		sd = zn_owner_map_pool_at(maps, (uintptr_t)s);
		if (likely(sd != NULL) && j < need) {
			off = __atomic_load_n(&s->data_off, __ATOMIC_RELAXED);
			len = __atomic_load_n(&s->data_len, __ATOMIC_RELAXED);
			if (likely(__atomic_load_n(&s->next, __ATOMIC_RELAXED) ==
				   NULL && off <= sd->buf_len &&
				   len <= sd->buf_len - off && len <= room)) {
				copy_one_seg(sd, dd, s, c[j++], off, len);
				pkts[i] = c[j - 1];
				segs[0] = s;
				zn_owner_map_batch_add(&put, sd, segs, 1);
				(*copied)++;
				continue;
			}
		}
		if (unlikely(sd == NULL)) { /* a PMD's own pool: no NF's */
			d = rte_pktmbuf_copy(s, dd->mine, 0, UINT32_MAX);
			if (d == NULL)
				break;
			rte_pktmbuf_free(s);
		} else {
			d = copy_checked(sd, dd, s, segs, &ns);
			if (d == NULL)
				break;
			zn_owner_map_batch_add(&put, sd, segs, ns);
		}
		pkts[i] = d;
		(*copied)++;
	}
	zn_owner_map_batch_flush(&put);
	if (j < need) /* stopped early: the rest go back */
		rte_mempool_put_bulk(dd->mine,
				     (void **)&c[j], need - j);
	return i;
}

/* An NF reads only its trust group's pool, or the shared one when it is
 * in none (mgr/trust/group.c): a packet from another pool is copied into its
 * pool first, and the original freed. A pool with nothing free holds the
 * rest back, as a full ring does (retried; --stall-ms drops). Returns how
 * many of @p pkts are in the NF's pool now (a prefix). */
unsigned int
zn_copy_to_nf_pool(struct zn_worker *w, uint16_t slot, struct rte_mbuf **pkts,
	   unsigned int n)
{
	struct zn_mgr *m = w->mgr;
	/* the pool's index among the maps and counters, 0: the shared one */
	unsigned int g = zn_group_id(m->nf[slot].group);
	const struct rte_mempool *want = zn_pool_of_nf(m, slot);
	struct rte_mempool *mine = zn_pool_mgr_of_nf(m, slot);
	unsigned int i = n, copied = 0;
	uint64_t t0 = rte_rdtsc();

	if (m->trust.owner_maps != NULL) {
		for (i = 0; i < n;) {
			unsigned int run = RTE_MIN(n - i, (unsigned int)ZN_BURST);
			unsigned int k = copy_all_checked(
				m->trust.owner_maps, zn_owner_map_of_nf(m, slot),
				pkts + i, run, &copied);

			i += k;
			if (k < run) {
				w->shm->stats.copy_waits++;
				break;
			}
		}
		goto done;
	}
	if (n <= ZN_BURST && copy_bulk(pkts, n, want, mine, &copied))
		goto done;
	for (i = 0; i < n; i++) {
		struct rte_mbuf *c;

		if (likely(pkts[i]->pool == want))
			continue;
		c = rte_pktmbuf_copy(pkts[i], mine, 0, UINT32_MAX);
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
		w->shm->stats.copied[g] += copied;
		w->shm->stats.copy_cycles += rte_rdtsc() - t0;
	}
	return i;
}
