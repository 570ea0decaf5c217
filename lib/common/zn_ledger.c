/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include "zn_ledger.h"

unsigned int
zn_ledger_reclaim(struct zn_ledger *l,
		  struct rte_ring *(*ring_of)(uint16_t id, bool tx, void *arg),
		  void *arg, struct rte_mbuf **out)
{
	uint32_t phase = __atomic_load_n(&l->phase, __ATOMIC_ACQUIRE);
	uint32_t n = l->held_n, first = 0, i, k = 0;
	uint64_t pos = __atomic_load_n(&l->tx_pos, __ATOMIC_ACQUIRE);
	struct rte_ring *rx = ring_of(l->rx_ring, false, arg);
	struct rte_ring *tx = ring_of((uint16_t)(pos >> 32), true, arg);

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
	for (i = first; i < n; i++)
		if (l->held[i] != NULL)
			out[k++] = l->held[i];

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
