/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The manager's own header of each trust group's pool (struct zn_group's
 * pool_mgr, group.h).
 *
 * A group's pool header (struct rte_mempool, its lcore caches, its
 * private area) is in the group's file, which the group's NFs map
 * read-write: their DPDK calls use it (mbufs' `pool` field points at it).
 * DPDK's mempool code follows what the header says: a cache's length
 * and objects, the caches' address, the ops index (RTE_VERIFY panics on
 * one out of range, a garbage one in range calls any function), the free
 * ring's address. So the manager never calls DPDK with that header: it
 * calls it with a copy made as the pool was made, in its private heap
 * (private_heap.c), over the same free ring (served with the guard the
 * manager keeps of the ring, lib/nf/nf_pool_ops.c) and buffers, with
 * lcore caches of its own. Every get and put of the manager's (workers'
 * copies and drops, the ports' refills, audits) goes through the copy.
 *
 * What this does not cover (docs/security.md): a PMD freeing a packet it
 * sent follows the packet's `pool` field, the NFs' header.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal_memconfig.h>
#include <rte_malloc.h>
#include <rte_mempool.h>
#include <rte_tailq.h>

#include "../core/mgr.h"
#include "owner_map.h"
#include "pool_header.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_util.h"

/* Out of DPDK's list of pools (rte_mempool_free does not need it there):
 * a process looking a pool up by name, or walking the list, reads each
 * pool's header, and an NF that does not map it would fault (an NF
 * checking whether a pool of its own exists is enough). A group's NFs
 * find their pool in the file's home; the manager keeps it. */
void
zn_pool_unlist(struct rte_mempool *mp)
{
	struct rte_tailq_entry_head *list =
		RTE_TAILQ_LOOKUP("RTE_MEMPOOL", rte_tailq_entry_head);
	struct rte_tailq_entry *te;

	if (list == NULL)
		return;
	rte_mcfg_tailq_write_lock();
	RTE_TAILQ_FOREACH(te, list, next)
		if (te->data == mp)
			break;
	if (te != NULL)
		TAILQ_REMOVE(list, te, next);
	rte_mcfg_tailq_write_unlock();
	rte_free(te);
}

/* Where @p mp's lcore caches are as rte_mempool_create_empty made them
 * (right after the header), not where its local_cache says */
static inline struct rte_mempool_cache *
caches_of(const struct rte_mempool *mp)
{
	return (struct rte_mempool_cache *)RTE_PTR_ADD(mp, sizeof(*mp));
}

/* Group @p g's NFs' header as it was made: the manager's copy, but with
 * the NFs' header's own caches and memzone */
static void
as_made(const struct zn_mgr *m, unsigned int g, struct rte_mempool *want)
{
	const struct rte_mempool *t = m->trust.group[g].pool_mgr;

	*want = *t;
	want->mz = m->trust.group[g].header.mz;
	want->local_cache = t->cache_size != 0 ? caches_of(m->trust.group[g].pool) : NULL;
}

size_t
zn_pool_header_bytes(void)
{
	/* header, an lcore cache each, the mbuf pool's private area */
	return sizeof(struct rte_mempool) +
	       RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) +
	       sizeof(struct rte_pktmbuf_pool_private) + RTE_CACHE_LINE_SIZE;
}

int
zn_pool_header_make(struct zn_mgr *m, unsigned int g)
{
	struct rte_mempool *mp = m->trust.group[g].pool, *t;
	struct zn_pool_header *tw = &m->trust.group[g].header;
	size_t len = RTE_MEMPOOL_HEADER_SIZE(mp, mp->cache_size) +
		     mp->private_data_size;
	struct rte_mempool_memhdr *hdr;
	unsigned int i = 0;
	int rc;

	if (len > zn_pool_header_bytes())
		return -E2BIG;
	t = rte_malloc_socket("zn_pool_mgr", len, RTE_CACHE_LINE_SIZE,
			      m->priv.socket);
	tw->chunks = calloc(mp->nb_mem_chunks, sizeof(*tw->chunks));
	if (t == NULL || tw->chunks == NULL) {
		rte_free(t);
		free(tw->chunks);
		tw->chunks = NULL;
		return -ENOMEM;
	}
	/* Header, caches (empty: nothing ran yet) and private area are one
	 * block (rte_mempool_create_empty), as no NF has written them. */
	memcpy(t, mp, len);
	t->mz = NULL; /* never freed as a mempool: zn_pool_header_free */
	t->local_cache = mp->cache_size != 0 ? caches_of(t) : NULL;
	/* What the NFs' header's teardown needs, kept as made */
	tw->mz = mp->mz;
	STAILQ_FOREACH(hdr, &mp->mem_list, next)
		if (i < mp->nb_mem_chunks)
			tw->chunks[i++] = hdr;
	tw->n_chunks = i;
	rc = zn_pool_ops_twin(mp, t);
	if (rc < 0) {
		rte_free(t);
		free(tw->chunks);
		tw->chunks = NULL;
		return rc;
	}
	m->trust.group[g].pool_mgr = t;
	return 0;
}

void
zn_pool_header_free(struct zn_mgr *m, unsigned int g)
{
	struct rte_mempool *mp = m->trust.group[g].pool, *t = m->trust.group[g].pool_mgr;
	struct zn_pool_header *tw = &m->trust.group[g].header;

	if (mp == NULL || t == NULL)
		return;
	zn_pool_header_flush_lcore(m, g, rte_lcore_id());
	/* The NFs' header as made, for rte_mempool_free to follow (an NF
	 * may have written anything there): the manager's header for the
	 * fields, the header's own caches, its memory chunks relinked from
	 * the list taken when it was made, no object list (it runs through
	 * the buffers' headers, which NFs write; freeing needs none). */
	as_made(m, g, mp);
	STAILQ_INIT(&mp->elt_list);
	STAILQ_INIT(&mp->mem_list);
	for (unsigned int i = 0; i < tw->n_chunks; i++) {
		tw->chunks[i]->mp = mp;
		tw->chunks[i]->free_cb = NULL;
		STAILQ_INSERT_TAIL(&mp->mem_list, tw->chunks[i], next);
	}
	mp->nb_mem_chunks = tw->n_chunks;
	rte_mempool_free(mp);
	m->trust.group[g].pool = NULL;
	m->trust.group[g].pool_mgr = NULL;
	rte_free(t);
	free(tw->chunks);
	*tw = (struct zn_pool_header){ 0 };
}

unsigned int
zn_pool_header_avail(const struct zn_mgr *m, unsigned int g)
{
	const struct rte_mempool *t = m->trust.group[g].pool_mgr;
	const struct rte_mempool_cache *c = caches_of(m->trust.group[g].pool);
	/* The free ring (through the guard) and the manager's caches */
	uint64_t n = rte_mempool_avail_count(t);

	/* and the NFs' caches as their lengths say, each cut to what DPDK
	 * lets one hold (where the caches were made, not where the header
	 * says) */
	for (unsigned int i = 0; t->cache_size != 0 && i < RTE_MAX_LCORE; i++)
		n += RTE_MIN(__atomic_load_n(&c[i].len, __ATOMIC_RELAXED),
			     t->local_cache[i].flushthresh);
	return (unsigned int)RTE_MIN(n, (uint64_t)t->size);
}

void
zn_pool_header_flush_lcore(struct zn_mgr *m, unsigned int g, unsigned int lcore)
{
	struct rte_mempool *t = m->trust.group[g].pool_mgr;
	struct rte_mempool_cache *c;

	if (t == NULL)
		return;
	c = rte_mempool_default_cache(t, lcore);
	if (c != NULL)
		rte_mempool_cache_flush(c, t);
}

unsigned int
zn_pool_header_take_nf_cache(struct zn_mgr *m, unsigned int g, unsigned int lcore)
{
	struct rte_mempool *mp = m->trust.group[g].pool, *t = m->trust.group[g].pool_mgr;
	const struct zn_owner_map *d = m->trust.owner_maps != NULL ? &m->trust.owner_maps[g + 1] :
				       NULL;
	struct rte_mempool_cache *c;
	void *objs[RTE_DIM(c->objs)];
	uint32_t len;
	unsigned int k = 0;

	if (mp == NULL || t == NULL || t->cache_size == 0 ||
	    lcore >= RTE_MAX_LCORE)
		return 0;
	/* Where the cache is as made, not where the header says; its
	 * length cut to its array; with --validate, only buffers of the
	 * pool, each once (garbage left there is not the pool's). */
	c = caches_of(mp) + lcore;
	len = RTE_MIN(__atomic_load_n(&c->len, __ATOMIC_RELAXED),
		      (uint32_t)RTE_DIM(c->objs));
	for (uint32_t i = 0; i < len; i++) {
		void *o = __atomic_load_n(&c->objs[i], __ATOMIC_RELAXED);
		bool dup = false;

		if (d != NULL && !zn_owner_map_real(d, o))
			continue;
		for (unsigned int j = 0; j < k && !dup; j++)
			dup = objs[j] == o;
		if (!dup)
			objs[k++] = o;
	}
	__atomic_store_n(&c->len, 0, __ATOMIC_RELAXED);
	if (k != 0)
		rte_mempool_ops_enqueue_bulk(t, objs, k);
	return k;
}

unsigned int
zn_pool_header_repair(struct zn_mgr *m)
{
	unsigned int n = 0;

	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		struct rte_mempool *mp = m->trust.group[g].pool, *t = m->trust.group[g].pool_mgr;
		struct rte_mempool_cache *c;
		struct rte_mempool want;
		void *priv;
		bool bad;

		if (mp == NULL || t == NULL)
			continue;
		as_made(m, g, &want);
		bad = memcmp(mp, &want, sizeof(want)) != 0;
		if (bad)
			memcpy(mp, &want, sizeof(want));
		priv = RTE_PTR_ADD(mp, RTE_MEMPOOL_HEADER_SIZE(t,
							       t->cache_size));
		if (memcmp(priv, rte_mempool_get_priv(t),
			   t->private_data_size) != 0) {
			memcpy(priv, rte_mempool_get_priv(t),
			       t->private_data_size);
			bad = true;
		}
		/* Each cache's size as made; a length past what DPDK lets it
		 * reach is garbage: emptied (what it held, if anything,
		 * group.audit finds) */
		c = caches_of(mp);
		for (unsigned int i = 0; t->cache_size != 0 &&
		     i < RTE_MAX_LCORE; i++) {
			const struct rte_mempool_cache *tc = &t->local_cache[i];

			if (c[i].size == tc->size &&
			    c[i].flushthresh == tc->flushthresh &&
			    c[i].len <= tc->flushthresh)
				continue;
			c[i].size = tc->size;
			c[i].flushthresh = tc->flushthresh;
			if (c[i].len > tc->flushthresh)
				c[i].len = 0;
			bad = true;
		}
		if (bad) {
			m->trust.group[g].header.repairs++;
			n++;
		}
	}
	return n;
}
