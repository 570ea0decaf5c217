/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * What an NF of no group takes from the shared pool and keeps
 * (mgr/nf/pool_acct.h): its pool driver tags what it takes from the ring
 * and untags what goes back (nf_pool_ops.c); this file covers the NF's
 * lcore cache, which serves gets and puts without the driver. A buffer
 * libzeronf frees into that cache (what a port's driver frees after our
 * tx_burst, a stalled run dropped, our second references dropped) is no
 * longer tagged (it left as a packet), and the NF's next allocation may
 * be served with it: so once the NF allocates at all, what was freed into
 * the cache is claimed (tagged as ours) before the NF's code runs again.
 * Until then, nothing is claimed: a forwarder that never allocates pays
 * nothing. The NF is found to allocate at its first take from the ring
 * (a new NF's cache is empty, so its first allocation takes from the
 * ring), or when the cache is found shorter than libzeronf left it (its
 * code took from it): what it allocated from the cache before that is
 * not counted, at most one cache's worth.
 */

#include <string.h>

#include <rte_lcore.h>
#include <rte_mempool.h>

#include "nf_pvt.h"
#include "../common/zn_pool_ops.h"

void
zn_nf_acct_attach(struct zn_nf *nf)
{
	/* the shared pool's, or in its group's file its group's */
	const struct zn_shm_hdr *h = nf->hdr;

	/* A bundle's later member (nf_bundle.c): the process's account is
	 * its first member's, whose lcore this thread is; this NF's gets
	 * and frees are charged to it, and its hand-offs keep its state. */
	if (nf->acct != NULL && nf->acct != &nf->acct_own)
		return;
	nf->acct = &nf->acct_own;
	nf->acct->cache = NULL;
	if (h->acct_tags == 0)
		return;
	/* what an NF of this slot before us left, the manager finished */
	memset(nf->s->pool_op, 0, sizeof(nf->s->pool_op));
	nf->acct_owner = zn_pool_ops_account(&(struct zn_pool_acct){
		.mp = nf->pool, .tags = (uint8_t *)(uintptr_t)h->acct_tags,
		.starts = (const uint16_t *)(uintptr_t)h->acct_starts,
		.lo = (uintptr_t)h->acct_lo, .n = h->acct_n,
		.shift = (uint8_t)h->acct_shift, .me = (uint8_t)(nf->slot + 1),
		.held = &nf->s->alloc.held, .refused = &nf->s->alloc.refused,
		.quota = &nf->s->ctl.pool_quota,
		.ops = nf->s->pool_op,
		.lcore = ZN_NF_LCORE_BASE + (unsigned int)nf->slot }) == 0;
	/* Our lcore's cache, seen from this thread (the packet thread's:
	 * zn_nf_run runs where zn_nf_init did); another thread of the NF has
	 * no cache (its frees and gets pass the driver). */
	if (rte_lcore_id() == ZN_NF_LCORE_BASE + (unsigned int)nf->slot)
		nf->acct->cache = rte_mempool_default_cache(nf->pool,
							    rte_lcore_id());
	nf->acct->seen = nf->acct->cache != NULL ? nf->acct->cache->len : 0;
	nf->acct->allocates = false;
}

void
zn_nf_acct_room(struct zn_nf *nf, struct rte_mempool_cache *c,
		unsigned int n)
{
	if (c == NULL || c->len + n <= c->flushthresh)
		return;
	rte_mempool_cache_flush(c, nf->pool);
	if (c == nf->acct->cache)
		nf->acct->seen = 0;
}

/* What lies in the cache from acct->seen up is ours from now on. */
static void
claim(struct zn_nf *nf)
{
	struct rte_mempool_cache *c = nf->acct->cache;
	uint32_t len = c->len;

	if (nf->acct->allocates && len > nf->acct->seen)
		zn_pool_ops_claim(&c->objs[nf->acct->seen],
				  len - nf->acct->seen);
	nf->acct->seen = len;
}

/* Since libzeronf last looked, only the NF's code ran: its gets took
 * from the top, its frees (of buffers it allocated: tagged) went on top.
 * Below the lowest point, nothing changed. */
void
zn_nf_acct_begin(struct zn_nf *nf)
{
	struct rte_mempool_cache *c = nf->acct->cache;

	if (c == NULL)
		return;
	if (!nf->acct->allocates && (c->len < nf->acct->seen ||
			       zn_pool_ops_took())) {
		nf->acct->allocates = true;
		nf->acct->seen = 0; /* all of it, once */
	} else if (c->len < nf->acct->seen) {
		nf->acct->seen = c->len;
	}
}

void
zn_nf_acct_end(struct zn_nf *nf)
{
	if (nf->acct->cache != NULL)
		claim(nf);
}

void
zn_nf_acct_check(struct zn_nf *nf)
{
	zn_nf_acct_begin(nf);
	zn_nf_acct_end(nf);
}

/* A port's PMD allocates in our rx_burst from this cache (an NF owning
 * RX queues, nf_port.c): everything in it must be known ours before the
 * first call, so that a crash inside one leaves nothing untagged. */
void
zn_nf_acct_allocating(struct zn_nf *nf)
{
	if (nf->acct->cache == NULL || nf->acct->allocates)
		return;
	nf->acct->allocates = true;
	nf->acct->seen = 0;
	claim(nf);
}

void
zn_nf_acct_sent_ours(struct zn_nf *nf, const struct rte_mempool_cache *c,
		     uint32_t len0, unsigned int k)
{
	if (c == nf->acct->cache && c != NULL && nf->acct->allocates &&
	    nf->acct->seen == len0 && c->len == len0 + k)
		nf->acct->seen = c->len;
}
