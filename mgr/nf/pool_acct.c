/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The packet pools' allocation tags (pool_acct.h): made here, read when
 * an NF is gone. The tags are the NFs' to write (the shared pool's in the
 * EAL's memory, a trust group's in the group's file); which buffer a tag
 * stands for is this process's own table (made from the pool before any
 * NF existed), so a garbage tag puts back a buffer of the pool at worst,
 * never writes anywhere else.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_mempool.h>

#include "../core/mgr.h"
#include "../trust/owner_map.h"
#include "../core/event.h"
#include "pool_acct.h"
#include "../trust/pool_header.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_util.h"
#include "nf_rec.h"
#include "../core/subsys.h"

#define TAGS_NAME "zn_acct_tags"
#define MAX_TAGS (1u << 24) /* 16 MB of tags: a pool spread wider is not
			     * accounted (logged) */

/* One pool's: [0] the shared one, [g + 1] trust group g's */
struct zn_acct {
	struct rte_mempool *mp;   /* its header, as its NFs see it */
	struct rte_mempool *put;  /* what the manager puts with (its twin) */
	const struct rte_memzone *mz; /* the shared pool's tags, or NULL */
	uint8_t *tags;       /* the NFs write them */
	uint16_t *starts;    /* after them: read by the NFs */
	uintptr_t lo, hi;
	uint32_t n;          /* 0: not accounted */
	uint8_t shift;
	uint32_t n_mbufs;
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

/* The geometry of @p a's pool: 0, or -E2BIG (not accounted). */
static int
geometry(struct zn_acct *a)
{
	uint32_t elt = a->mp->header_size + a->mp->elt_size +
		       a->mp->trailer_size;

	rte_mempool_mem_iter(a->mp, span, a);
	/* a buffer's whole size down to a power of two: one start a tag */
	a->shift = (uint8_t)(31 - __builtin_clz(elt));
	if (a->hi <= a->lo || ((a->hi - a->lo) >> a->shift) >= MAX_TAGS ||
	    a->shift > 15 /* a start in 16 bits, below 0xffff */)
		return -E2BIG;
	a->n = (uint32_t)((a->hi - a->lo) >> a->shift) + 1;
	return 0;
}

uint64_t
zn_pool_acct_bytes(uint64_t span, uint32_t elt)
{
	uint32_t shift = 31 - (uint32_t)__builtin_clz(elt);

	return ((span >> shift) + 2) * 3 + 128;
}

/* @p a's tags at @p mem (zeroed; its starts after them) and its table
 * of buffers; the manager's puts untag (zn_pool_ops_account). */
static int
tags_at(struct zn_acct *a, void *mem)
{
	a->buf = calloc(a->n, sizeof(*a->buf));
	if (a->buf == NULL)
		return -ENOMEM;
	a->tags = mem;
	memset(a->tags, 0, a->n);
	a->starts = (uint16_t *)RTE_PTR_ALIGN(a->tags + a->n, 64);
	rte_mempool_obj_iter(a->mp, mark, a);
	for (uint32_t i = 0; i < a->n; i++)
		a->starts[i] = a->buf[i] == 0 ? 0xffff : (uint16_t)
			(a->buf[i] - a->lo - ((uintptr_t)i << a->shift));
	return zn_pool_ops_account(&(struct zn_pool_acct){
		.mp = a->mp, .twin = a->put != a->mp ? a->put : NULL,
		.tags = a->tags, .starts = a->starts, .lo = a->lo,
		.n = a->n, .shift = a->shift, .me = 0 });
}

static int
shared_init(struct zn_mgr *m, struct zn_acct *a)
{
	a->mp = a->put = m->pool;
	a->n_mbufs = m->pool->size;
	if (geometry(a) < 0) {
		ZN_LOG(NOTICE, "the shared pool spans too much memory to tag "
		       "its buffers: what NFs allocate is not accounted");
		a->n = 0;
		return 0;
	}
	a->mz = rte_memzone_reserve_aligned(TAGS_NAME, a->n * 3 + 64,
					    m->pool->socket_id, 0,
					    RTE_CACHE_LINE_SIZE);
	if (a->mz == NULL)
		return -ENOMEM;
	return tags_at(a, a->mz->addr);
}

/* Group @p g's: in its file, where group.c left room (its file's acct). */
static int
group_init(struct zn_mgr *m, unsigned int g, struct zn_acct *a)
{
	uint64_t room = m->trust.group[g].file.acct;
	void *mem = room != 0 ? RTE_PTR_ADD(zn_group_home_at(g),
					    m->trust.group[g].file.acct_off) : NULL;

	a->mp = m->trust.group[g].pool;
	a->put = m->trust.group[g].pool_mgr != NULL ? m->trust.group[g].pool_mgr : m->trust.group[g].pool;
	a->n_mbufs = a->mp->size;
	if (geometry(a) < 0 || mem == NULL || a->n * 3 + 64 > room) {
		ZN_LOG(NOTICE, "trust group %u: its pool's buffers cannot be "
		       "tagged: what its NFs allocate is not accounted", g);
		a->n = 0;
		return 0;
	}
	return tags_at(a, mem);
}

static void zn_pool_acct_fini(struct zn_mgr *m);

/* Make the tags of the shared pool and of each trust group's (in the room
 * group.c left in its file: its file's acct) and publish the shared
 * pool's (hdr.acct_*; group_home.c publishes a group's in its view). After the
 * groups' pools, before NFs may register. @return 0, or -errno. */
static int
zn_pool_acct_init(struct zn_mgr *m)
{
	struct zn_acct *acct;
	struct zn_shm_hdr *h = &m->shm->hdr;
	int rc;

	if (strcmp(m->pool_ops, ZN_POOL_OPS) != 0) {
		ZN_LOG(NOTICE, "pool driver '%s': what NFs allocate from the "
		       "pools is neither bounded (--nf-pool-quota) nor "
		       "returned when they are gone", m->pool_ops);
		return 0;
	}
	acct = calloc(1 + ZN_MAX_GROUPS, sizeof(*acct));
	if (acct == NULL)
		return -ENOMEM;
	m->acct = acct;
	rc = shared_init(m, &acct[0]);
	for (unsigned int g = 0; g < ZN_MAX_GROUPS && rc == 0; g++)
		if (m->trust.group[g].pool != NULL) {
			m->trust.group[g].acct = &acct[g + 1];
			rc = group_init(m, g, &acct[g + 1]);
		}
	if (rc < 0) {
		zn_pool_acct_fini(m);
		return rc;
	}
	zn_pool_acct_view(m, 0, h);
	return 0;
}

void
zn_pool_acct_view(const struct zn_mgr *m, unsigned int pool,
		  struct zn_shm_hdr *h)
{
	const struct zn_acct *a = m->acct != NULL ? &m->acct[pool] : NULL;

	if (a == NULL || a->n == 0) {
		h->acct_tags = h->acct_starts = h->acct_lo = 0;
		h->acct_n = h->acct_shift = 0;
		return;
	}
	h->acct_tags = (uint64_t)(uintptr_t)a->tags;
	h->acct_starts = (uint64_t)(uintptr_t)a->starts;
	h->acct_lo = a->lo;
	h->acct_n = a->n;
	h->acct_shift = a->shift;
}

static void
zn_pool_acct_fini(struct zn_mgr *m)
{
	struct zn_acct *acct = m->acct;

	if (acct == NULL)
		return;
	zn_pool_ops_account(NULL);
	m->shm->hdr.acct_tags = 0;
	for (unsigned int i = 0; i <= ZN_MAX_GROUPS; i++) {
		rte_memzone_free(acct[i].mz);
		free(acct[i].buf);
	}
	free(acct);
	m->acct = NULL;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++)
		m->trust.group[g].acct = NULL;
}

uint32_t
zn_pool_acct_quota(const struct zn_mgr *m, unsigned int pool)
{
	const struct zn_acct *a = m->acct != NULL && pool <= ZN_MAX_GROUPS ?
				  &m->acct[pool] : NULL;

	if (a == NULL || a->n == 0 || m->cfg.nf_pool_quota == 0)
		return 0;
	return m->cfg.nf_pool_quota != UINT_MAX ?
	       RTE_MIN(m->cfg.nf_pool_quota, a->n_mbufs) :
	       RTE_MAX(a->n_mbufs / 4, 1u);
}

/* The tag of the buffer that starts at @p p, or NULL: none does. */
static uint8_t *
tag_at(const struct zn_acct *a, uintptr_t p)
{
	uintptr_t i = (p - a->lo) >> a->shift;

	return p - a->lo < a->hi - a->lo && a->buf[i] == p ? &a->tags[i] :
	       NULL;
}

/* The account of the pool the NF in @p slot allocates from, or NULL */
static const struct zn_acct *
acct_of_slot(const struct zn_mgr *m, unsigned int slot)
{
	const struct zn_acct *a;

	if (m->acct == NULL || slot >= ZN_MAX_NFS)
		return NULL;
	a = m->nf[slot].group != NULL ? m->nf[slot].group->acct : &m->acct[0];
	return a->n != 0 ? a : NULL;
}

bool
zn_pool_acct_is_buf(const struct zn_mgr *m, unsigned int slot, const void *obj)
{
	const struct zn_acct *a = acct_of_slot(m, slot);
	uintptr_t p = (uintptr_t)obj, i;

	if (a == NULL)
		return obj != NULL; /* no map of the pool: its word */
	i = (p - a->lo) >> a->shift;
	return p >= a->lo && i < a->n && a->buf[i] == p;
}

void
zn_pool_acct_forget(struct zn_mgr *m, unsigned int slot,
		    struct rte_mbuf *const *pkts, unsigned int n)
{
	const struct zn_acct *a = acct_of_slot(m, slot);

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

/* Put back @p mb, a buffer of @p a's pool (pool index @p pool) that a
 * gone NF kept: its header as the pool made it (the NF's work). */
static void
put_back(struct zn_mgr *m, const struct zn_acct *a, unsigned int pool,
	 struct rte_mbuf *mb)
{
	if (m->trust.owner_maps != NULL) {
		const struct zn_owner_map *d = &m->trust.owner_maps[pool];

		zn_owner_map_own(d, (uintptr_t)mb)->owner = 0;
		rte_mempool_put(d->mine, zn_owner_map_restore(d, mb));
		return;
	}
	rte_pktmbuf_init(a->put, NULL, mb, 0);
	mb->pool = a->mp;
	rte_mempool_put(a->put, mb);
}

void
zn_pool_acct_nf_caches(struct zn_mgr *m, unsigned int slot)
{
	const unsigned int lcore = ZN_NF_LCORE_BASE + slot;

	rte_mempool_cache_flush(rte_mempool_default_cache(m->pool, lcore),
				m->pool);
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++)
		if (m->trust.group[g].pool != NULL)
			zn_pool_header_take_nf_cache(m, g, lcore);
}

unsigned int
zn_pool_acct_sweep(struct zn_mgr *m, unsigned int slot)
{
	const struct zn_acct *a = acct_of_slot(m, slot);
	unsigned int back = 0, pool;
	bool kept = false;

	if (a == NULL)
		return 0;
	pool = (unsigned int)(a - m->acct); /* the slot's group's, or 0 */
	for (uint32_t i = 0; i < a->n && !kept; i++)
		kept = __atomic_load_n(&a->tags[i], __ATOMIC_RELAXED) ==
		       slot + 1;
	if (!kept)
		return 0; /* its caches: flushed with its slot (registry.c) */
	/* What sits in its lcore's caches is free (the ledger's reclaim
	 * has read the shared pool's): back to the rings now (untagged on
	 * the way, not put back twice below). */
	zn_pool_acct_nf_caches(m, slot);
	for (uint32_t i = 0; i < a->n; i++) {
		if (__atomic_load_n(&a->tags[i], __ATOMIC_RELAXED) != slot + 1)
			continue;
		a->tags[i] = 0;
		if (a->buf[i] == 0)
			continue; /* a tag no buffer has: garbage */
		put_back(m, a, pool, (struct rte_mbuf *)a->buf[i]);
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

static const struct zn_subsys subsys = {
	.name = "pool_accounts", .order = ZN_SUBSYS_POOL_ACCT,
	.init = zn_pool_acct_init, .fini = zn_pool_acct_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static void
acct_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->nf_pool_quota = UINT_MAX; /* a quarter of the pool */
}

static const struct zn_opt acct_opt[] = {
	{ "nf-pool-quota", 0, "N", "buffers one NF may allocate from its pool "
	  "(the\nshared one, its group's) and keep; default a quarter\nof that "
	  "pool; 0 = none", ZN_OPT_UINT,
	  ZN_CFG(nf_pool_quota), 0, 16u << 20, NULL },
};

static const struct zn_opts acct_opts = {
	.order = ZN_SUBSYS_POOL_ACCT, .opt = acct_opt, .n = RTE_DIM(acct_opt),
	.defaults = acct_defaults,
};
ZN_OPTIONS_REGISTER(acct_opts)
