/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include "zn_ledger.h"

unsigned int
zn_ledger_reclaim(struct zn_ledger *l, struct rte_ring *rx,
		  struct rte_ring *tx, struct rte_mbuf **out)
{
	uint32_t phase = __atomic_load_n(&l->phase, __ATOMIC_ACQUIRE);
	uint32_t n = l->held_n, first = 0, i, k = 0;

	if (n > ZN_BURST)
		n = 0; /* corrupt ledger: trust only the rings */
	switch (phase) {
	case ZN_LEDGER_RX:
		if (rx->cons.tail != l->rx_expect)
			n = 0; /* not committed: still in the RX ring */
		break;
	case ZN_LEDGER_OWN:
		break;
	case ZN_LEDGER_TX:
		first = tx->prod.tail - l->tx_base;
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

	/* Undo what the dead NF left half done: the RX ring's consumer and the
	 * TX ring's producer were only that NF. */
	rx->cons.head = rx->cons.tail;
	tx->prod.head = tx->prod.tail;
	l->held_n = 0;
	zn_ledger_set_phase(l, ZN_LEDGER_IDLE);
	return k;
}
