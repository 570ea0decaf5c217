/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include "zn_ledger.h"

/* In the dead NF's cache: its PMD freed it there (ZN_LEDGER_PORT_CACHE). */
static bool
in_cache(const struct rte_mempool_cache *c, const struct rte_mbuf *m)
{
	uint32_t len = c != NULL ? RTE_MIN(c->len, (uint32_t)RTE_DIM(c->objs))
				 : 0;

	for (uint32_t i = 0; i < len; i++)
		if (c->objs[i] == m)
			return true;
	return false;
}

unsigned int
zn_ledger_reclaim(struct zn_ledger *l,
		  struct rte_ring *(*ring_of)(uint16_t id, bool tx, void *arg),
		  void *arg, const struct rte_mempool_cache *cache,
		  struct rte_mbuf **out, unsigned int *sent,
		  unsigned int *sent_out)
{
	uint32_t phase = __atomic_load_n(&l->phase, __ATOMIC_ACQUIRE);
	uint32_t n = l->held_n, first = 0, i, k = 0;
	uint64_t pos = __atomic_load_n(&l->tx_pos, __ATOMIC_ACQUIRE);
	uint16_t tx_id = (uint16_t)(pos >> 32);
	bool port = tx_id == ZN_LEDGER_PORT || tx_id == ZN_LEDGER_PORT_CACHE;
	bool cached = tx_id == ZN_LEDGER_PORT_CACHE;
	uint32_t port_end = 0;
	struct rte_ring *rx = ring_of(l->rx_ring, false, arg);
	struct rte_ring *tx = port ? NULL : ring_of(tx_id, true, arg);

	if (n > ZN_BURST)
		n = 0; /* corrupt ledger: trust only the rings */
	switch (phase) {
	case ZN_LEDGER_RX:
		if (rx == NULL || rx->cons.tail != l->rx_expect)
			n = 0; /* not committed: still in the ring */
		break;
	case ZN_LEDGER_OWN:
		break;
	case ZN_LEDGER_TX:
		if (port) { /* held[first, port_end): see zn_ledger.h */
			first = RTE_MIN((uint32_t)(pos >> 48), n);
			port_end = RTE_MIN((uint32_t)pos, n);
			break;
		}
		if (tx == NULL) {
			n = 0;
			break;
		}
		first = (uint32_t)(pos >> 48) +
			(tx->prod.tail - (uint32_t)pos);
		if (first > n)
			first = n;
		break;
	default:
		n = 0;
		break;
	}
	*sent = 0;
	for (i = first; i < port_end; i++) { /* the port's first */
		struct rte_mbuf *m = l->held[i];

		if (m == NULL)
			continue;
		if (cached ? in_cache(cache, m) :
			     rte_mbuf_refcnt_read(m) == 1) {
			if (!cached) /* our reference is the last */
				out[k++] = m;
			(*sent)++;
			l->held[i] = NULL;
		}
	}
	*sent_out = k;
	for (i = first; i < n; i++) {
		struct rte_mbuf *m = l->held[i];

		if (m == NULL)
			continue;
		if (i < port_end && !cached) /* ours alone now, whatever */
			zn_ledger_refs(m, 1);  /* the PMD did with it */
		out[k++] = m;
	}

	/* Undo what the dead NF left half done: it was the only consumer of
	 * the ring it read and the only producer of the ring it wrote. */
	if (rx != NULL)
		rx->cons.head = rx->cons.tail;
	if (tx != NULL)
		tx->prod.head = tx->prod.tail;
	l->held_n = 0;
	zn_ledger_set_phase(l, ZN_LEDGER_IDLE);
	return k;
}
