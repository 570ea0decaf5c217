/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * A pool audit, the worker's part (group_audit.c asks): only the worker
 * may touch its lcore's cache of a pool and knows what its stages and
 * port buffers hold, so it empties that cache into the pool and counts
 * the pool's buffers it still holds. Runs at the top of the worker's
 * loop, between bursts.
 */

#include <rte_mempool.h>

#include "../core/mgr.h"
#include "port_headers.h"
#include "../datapath/worker.h"

static inline bool
in_pool(const struct zn_worker *w, const void *p)
{
	return (uintptr_t)p - w->audit_lo < w->audit_hi - w->audit_lo;
}

/* A port's buffer may hold the manager's headers of a group's packet
 * (port_headers.h): the buffers they carry. */
static unsigned int
held_in(const struct zn_worker *w, struct rte_mbuf *const *pkts,
	unsigned int n)
{
	unsigned int k = 0;

	for (unsigned int i = 0; i < n; i++) {
		if (w->audit_hdrs == NULL || pkts[i]->pool != w->audit_hdrs) {
			k += in_pool(w, pkts[i]);
			continue;
		}
		for (const struct rte_mbuf *h = pkts[i]; h != NULL;
		     h = h->next)
			k += in_pool(w, zn_port_headers_buf(h));
	}
	return k;
}

static unsigned int
held_in_stage(const struct zn_worker *w, const struct zn_stage *st)
{
	return st->tail > st->head ?
	       held_in(w, &st->pkts[st->head], st->tail - st->head) : 0;
}

void
zn_audit_answer(struct zn_worker *w)
{
	uint32_t req = __atomic_load_n(&w->audit_req, __ATOMIC_ACQUIRE);
	struct rte_mempool_cache *c =
		rte_mempool_default_cache(w->audit_mp, rte_lcore_id());
	unsigned int held = 0;

	if (c != NULL)
		rte_mempool_cache_flush(c, w->audit_mp);
	for (unsigned int q = 0; q < w->n_rxq; q++)
		held += held_in_stage(w, &w->rxq[q].stage);
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		held += held_in_stage(w, &w->nf_stage[s]);
	for (unsigned int p = 0; p < ZN_MAX_PORTS; p++)
		held += held_in(w, w->txbuf[p].pkts, w->txbuf[p].n);
	w->audit_held = held;
	__atomic_store_n(&w->audit_done, req, __ATOMIC_RELEASE);
}
