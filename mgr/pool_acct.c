/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The shared pool's allocation tags (pool_acct.h): made here, read when
 * an NF is gone. The tags are the NFs' to write; which buffer a tag
 * stands for is this process's own table (made from the pool before any
 * NF existed), so a garbage tag puts back a buffer of the pool at worst,
 * never writes anywhere else.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_mempool.h>

#include "mgr.h"
#include "desc.h"
#include "event.h"
#include "pool_acct.h"
#include "../lib/common/zn_pool_ops.h"
#include "../lib/common/zn_util.h"

#define TAGS_NAME "zn_acct_tags"
#define MAX_TAGS (1u << 24) /* 16 MB of tags: a pool spread wider is not
			     * accounted (logged) */

struct zn_acct {
	const struct rte_memzone *mz;
	uint8_t *tags;       /* in mz: the NFs write them */
	uint16_t *starts;    /* in mz after them: read by the NFs */
	uintptr_t lo, hi;
	uint32_t n;
	uint8_t shift;
	uintptr_t *buf;      /* tag i's buffer, 0: none (private) */
};

static void
span(struct rte_mempool *mp, void *arg, struct rte_mempool_memhdr *mh,
     unsigned int idx)
{
	struct zn_acct *a = arg;
	uintptr_t lo = (uintptr_t)mh->addr;

	(void)mp, (void)idx;
	if (a->lo == 0 || lo < a->lo)
		a->lo = lo;
	if (lo + mh->len > a->hi)
		a->hi = lo + mh->len;
}

static void
mark(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct zn_acct *a = arg;

	(void)mp, (void)idx;
	a->buf[((uintptr_t)obj - a->lo) >> a->shift] = (uintptr_t)obj;
}


int
zn_pool_acct_init(struct zn_mgr *m)
{
	struct zn_acct *a;
	struct zn_shm_hdr *h = &m->shm->hdr;
	uint32_t elt;

	if (strcmp(m->pool_ops, ZN_POOL_OPS) != 0) {
		ZN_LOG(NOTICE, "pool driver '%s': what NFs allocate from the "
		       "shared pool is neither bounded (--nf-pool-quota) nor "
		       "returned when they are gone", m->pool_ops);
		return 0;
	}
	a = calloc(1, sizeof(*a));
	if (a == NULL)
		return -ENOMEM;
	rte_mempool_mem_iter(m->pool, span, a);
	elt = m->pool->header_size + m->pool->elt_size +
	      m->pool->trailer_size;
	/* a buffer's whole size down to a power of two: one start a tag */
	a->shift = (uint8_t)(31 - __builtin_clz(elt));
	if (a->hi <= a->lo || ((a->hi - a->lo) >> a->shift) >= MAX_TAGS ||
	    a->shift > 15 /* a start in 16 bits, below 0xffff */) {
		ZN_LOG(NOTICE, "the shared pool spans too much memory to tag "
		       "its buffers: what NFs allocate is not accounted");
		free(a);
		return 0;
	}
	a->n = (uint32_t)((a->hi - a->lo) >> a->shift) + 1;
	a->buf = calloc(a->n, sizeof(*a->buf));
	a->mz = rte_memzone_reserve_aligned(TAGS_NAME, a->n * 3 + 64,
					    m->pool->socket_id, 0,
					    RTE_CACHE_LINE_SIZE);
	if (a->buf == NULL || a->mz == NULL) {
		rte_memzone_free(a->mz);
		free(a->buf);
		free(a);
		return -ENOMEM;
	}
	a->tags = a->mz->addr;
	memset(a->tags, 0, a->n);
	a->starts = (uint16_t *)RTE_PTR_ALIGN(a->tags + a->n, 64);
	rte_mempool_obj_iter(m->pool, mark, a);
	for (uint32_t i = 0; i < a->n; i++)
		a->starts[i] = a->buf[i] == 0 ? 0xffff : (uint16_t)
			(a->buf[i] - a->lo - ((uintptr_t)i << a->shift));
	m->acct = a;
	zn_pool_ops_account(&(struct zn_pool_acct){
		.mp = m->pool, .tags = a->tags, .starts = a->starts,
		.lo = a->lo, .n = a->n,
		.shift = a->shift, .me = 0 });
	h->acct_tags = (uint64_t)(uintptr_t)a->tags;
	h->acct_starts = (uint64_t)(uintptr_t)a->starts;
	h->acct_lo = a->lo;
	h->acct_n = a->n;
	h->acct_shift = a->shift;
	return 0;
}

void
zn_pool_acct_fini(struct zn_mgr *m)
{
	struct zn_acct *a = m->acct;

	if (a == NULL)
		return;
	zn_pool_ops_account(NULL);
	m->shm->hdr.acct_tags = 0;
	rte_memzone_free(a->mz);
	free(a->buf);
	free(a);
	m->acct = NULL;
}

uint32_t
zn_pool_acct_quota(const struct zn_mgr *m)
{
	if (m->acct == NULL || m->cfg.nf_pool_quota == 0)
		return 0;
	return m->cfg.nf_pool_quota != UINT_MAX ? m->cfg.nf_pool_quota :
	       RTE_MAX(m->cfg.pool_size / 4, 1u);
}

/* The tag of the buffer that starts at @p p, or NULL: none does. */
static uint8_t *
tag_at(const struct zn_acct *a, uintptr_t p)
{
	uintptr_t i = (p - a->lo) >> a->shift;

	return p - a->lo < a->hi - a->lo && a->buf[i] == p ? &a->tags[i] :
	       NULL;
}

void
zn_pool_acct_forget(struct zn_mgr *m, unsigned int slot,
		    struct rte_mbuf *const *pkts, unsigned int n)
{
	const struct zn_acct *a = m->acct;

	if (a == NULL)
		return;
	for (unsigned int i = 0; i < n; i++) {
		const struct rte_mbuf *s = pkts[i];
		uint8_t *t;

		/* each segment checked before it is read: the chain is
		 * the NF's to write */
		for (unsigned int k = 0; k < 64 && s != NULL &&
		     (t = tag_at(a, (uintptr_t)s)) != NULL; k++, s = s->next)
			if (*t == slot + 1)
				*t = 0;
	}
}

unsigned int
zn_pool_acct_sweep(struct zn_mgr *m, unsigned int slot)
{
	const struct zn_acct *a = m->acct;
	unsigned int back = 0;

	/* What sits in its lcore's cache is free (the ledger's reclaim has
	 * read it): back to the ring (untagged on the way, not put back
	 * twice below); the next NF in the slot has the same lcore id. */
	rte_mempool_cache_flush(rte_mempool_default_cache(m->pool,
							  ZN_NF_LCORE_BASE + slot),
				m->pool);
	if (a == NULL)
		return 0;
	for (uint32_t i = 0; i < a->n; i++) {
		struct rte_mbuf *mb;

		if (__atomic_load_n(&a->tags[i], __ATOMIC_RELAXED) != slot + 1)
			continue;
		a->tags[i] = 0;
		if (a->buf[i] == 0)
			continue; /* a tag no buffer has: garbage */
		mb = (struct rte_mbuf *)a->buf[i];
		/* Its header is the NF's work: as the pool made it */
		if (m->desc != NULL) {
			zn_desc_own(&m->desc[0], (uintptr_t)mb)->owner = 0;
			rte_mempool_put(m->desc[0].mine,
					zn_desc_restore(&m->desc[0], mb));
		} else {
			rte_pktmbuf_init(m->pool, NULL, mb, 0);
			rte_mempool_put(m->pool, mb);
		}
		back++;
	}
	if (back != 0) {
		m->shm->mgr.allocs_reclaimed += back;
		m->shm->mgr.reclaimed += back;
		zn_event("nf.allocs_returned", "NF '%s' (instance %u) kept %u "
			 "buffers it had allocated: back in the pool",
			 zn_slot(m, slot)->ctl.name, slot, back);
	}
	return back;
}
