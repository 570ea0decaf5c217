/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LEDGER_H
#define ZN_LEDGER_H

/**
 * @file
 * The ownership ledger: how the manager recovers every packet a dead NF
 * held, whatever instant it died at, and never frees one twice.
 *
 * An NF's RX ring has one consumer (the NF) and its TX ring one producer
 * (the NF). The consumer tail of the RX ring and the producer tail of the
 * TX ring are the commit points; the NF records around them, in shared
 * memory, what it holds (struct zn_ledger, zn_shm.h):
 *
 *   IDLE -> held[] peeked from RX (dequeue_start: pointers copied, the
 *           ring's tail unmoved), held_n, rx_expect = tail + n, phase RX
 *        -> dequeue_finish (tail = rx_expect: now the NF owns held[])
 *        -> phase OWN ... the handler sets actions ...
 *        -> tx_base = TX prod.tail, phase TX, enqueue (tail advances as
 *           packets are handed over)
 *        -> phase IDLE.
 *
 * After the NF died, zn_ledger_reclaim() decides from the phase and the two
 * tails exactly which of held[] the NF still owned:
 *   IDLE: none.  RX: all if RX cons.tail == rx_expect, else none (they are
 *   still in the ring).  OWN: all.  TX: held[TX prod.tail - tx_base ..].
 * It also undoes a half-done peek or enqueue (head != tail) so the rings
 * can be drained. Packets an NF allocated are safe once in held[] with
 * phase OWN; between its allocation and that store a crash leaks them
 * (zn_nf_send() keeps that window to two stores).
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_ring.h>
#include <rte_ring_peek.h>

#include "../shm/zn_shm.h"

enum zn_ledger_phase {
	ZN_LEDGER_IDLE = 0,
	ZN_LEDGER_RX = 1,
	ZN_LEDGER_OWN = 2,
	ZN_LEDGER_TX = 3,
};

static inline void
zn_ledger_set_phase(struct zn_ledger *l, uint32_t phase)
{
	__atomic_store_n(&l->phase, phase, __ATOMIC_RELEASE);
}

/**
 * NF side: take up to @p max packets from @p rx (single consumer) into
 * l->held. @return packets now owned by the NF (phase OWN), 0 if none.
 */
static inline unsigned int
zn_ledger_rx(struct zn_ledger *l, struct rte_ring *rx, unsigned int max)
{
	unsigned int n;

	n = rte_ring_dequeue_burst_start(rx, (void **)l->held, max, NULL);
	if (n == 0)
		return 0;
	l->held_n = n;
	l->rx_expect = rx->cons.tail + n;
	zn_ledger_set_phase(l, ZN_LEDGER_RX);
	rte_ring_dequeue_finish(rx, n);
	zn_ledger_set_phase(l, ZN_LEDGER_OWN);
	return n;
}

/** NF side: own @p n packets the NF made (they are copied to held[]). */
static inline void
zn_ledger_own(struct zn_ledger *l, struct rte_mbuf **pkts, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		l->held[i] = pkts[i];
	l->held_n = n;
	zn_ledger_set_phase(l, ZN_LEDGER_OWN);
}

/** NF side: begin handing held[] to @p tx (single producer). */
static inline void
zn_ledger_tx_begin(struct zn_ledger *l, struct rte_ring *tx)
{
	l->tx_base = tx->prod.tail;
	zn_ledger_set_phase(l, ZN_LEDGER_TX);
}

/** NF side: hand over what fits of held[sent..held_n).
 *  @return packets enqueued by this call. */
static inline unsigned int
zn_ledger_tx_some(struct zn_ledger *l, struct rte_ring *tx, unsigned int sent)
{
	return rte_ring_sp_enqueue_burst(tx, (void **)&l->held[sent],
					 l->held_n - sent, NULL);
}

/** NF side: every held packet was handed over. */
static inline void
zn_ledger_tx_done(struct zn_ledger *l)
{
	zn_ledger_set_phase(l, ZN_LEDGER_IDLE);
}

/**
 * Manager side, only once the NF's packet thread can no longer run (its
 * process is gone or it declared itself exited). Puts the packets the NF
 * owned in @p out (room for ZN_BURST) and resets the ledger. Also aborts a
 * half-done peek on @p rx and a half-done enqueue on @p tx.
 * @return number of packets in @p out; the caller frees them.
 */
unsigned int zn_ledger_reclaim(struct zn_ledger *l, struct rte_ring *rx,
			       struct rte_ring *tx, struct rte_mbuf **out);

#endif /* ZN_LEDGER_H */
