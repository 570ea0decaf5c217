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
 * Every ring an NF reads has one consumer (the NF: its RX ring, the links
 * into it) and every ring it writes one producer (the NF: its TX ring,
 * the links out of it). The consumer tail of the ring read and the
 * producer tail of the ring written are the commit points; the NF records
 * around them, in shared memory, what it holds (struct zn_ledger,
 * zn_shm.h):
 *
 *   IDLE -> held[] peeked from a ring (dequeue_start: pointers copied, the
 *           ring's tail unmoved), held_n, rx_ring, rx_expect = tail + n,
 *           phase RX
 *        -> dequeue_finish (tail = rx_expect: now the NF owns held[])
 *        -> phase OWN ... the handler sets actions ...
 *        -> phase TX: held[] handed on in order, runs of one destination
 *           at a time, each to one ring (TX ring or a link). tx_pos, one
 *           64-bit store, says: held[0, off) are handed over, and so are
 *           the (producer tail - base) packets after them in `ring`.
 *           It is rewritten (off = packets handed over so far, the new
 *           ring and its tail) before each run that goes to another ring
 *        -> phase IDLE.
 *
 *   A run to a port (the NF transmits on a TX queue of its own) has no
 *   ring: the PMD's tx_burst takes packets and frees them before it
 *   returns (only such PMDs are used, mgr/port/port_nftx.c), so whether a
 *   packet was sent is not visible in the packet. Two ways to know it,
 *   the ledger says which (tx_pos: ring, off = run start, base = run end):
 *   - ZN_LEDGER_PORT_CACHE (plain packets: one segment, of the pool the
 *     NF's lcore has a cache of): the PMD frees into that cache, in this
 *     process's shared memory, and the NF first makes room there for the
 *     whole run, so no free during the call goes further. Reclaim skips
 *     the run's packets found in the dead NF's cache (sent; the cache is
 *     flushed afterwards) and gives back the others. Nothing is written
 *     to the packets (a cache line less to move between cores).
 *   - ZN_LEDGER_PORT (other packets): each gets a second reference before
 *     the call; a packet sent is then not back in the pool until the NF
 *     drops that reference, after taking it out of held[] (NULL).
 *     Reclaim gives every packet of the run still in held[] back whole:
 *     not sent, sent and freed by the PMD (one reference left), or being
 *     sent when the NF died (its PMD code died with it).
 *   Packets the port took leave held[] once tx_burst returns (NULL; a
 *   cached run's start moves past them instead: one store).
 *
 *   A burst from a port's RX queue the NF owns (mgr/port/port_nfrx.c) has
 *   no ring either: the PMD's rx_burst writes held[] and returns, and
 *   only PMDs that take the buffers from the pool in that call and keep
 *   none between calls are used (net_null). What the PMD takes is taken
 *   through the NF's pool account (mgr/nf/pool_acct.h: tagged as the
 *   NF's, its lcore cache claimed before the first poll), so a crash
 *   inside the call leaves them to the manager's sweep; once rx_burst
 *   returned, zn_ledger_rx_port() makes the ledger own them (phase OWN,
 *   rx_ring ZN_LEDGER_RX_PORT, rx_expect the low half of the port's
 *   ptx[port].rx before them), then the NF counts them: reclaim counts
 *   them received if the NF died before it did (as port_tx0 for TX).
 *   A driver whose RX queue is a single-consumer rte_ring (net_ring)
 *   takes no buffer: it dequeues pointers into held[] and moves the
 *   ring's consumer tail. Before the call the NF records the queue and
 *   that tail (phase PORT_RX, rx_expect); a dead NF's burst is then
 *   what the tail moved past (zn_ledger_port_rx_finish, run by the
 *   manager before the queue has another poller, which also undoes a
 *   half-done dequeue: head back to tail).
 *
 * After the NF died, zn_ledger_reclaim() decides from the phase and the
 * tails exactly which of held[] the NF still owned:
 *   IDLE: none.  RX: all if the ring's cons.tail == rx_expect, else none
 *   (they are still in the ring).  OWN: all.  TX: held[off + tail - base
 *   ..]. It also undoes a half-done peek or enqueue (head != tail) so the
 *   rings can be drained. Packets an NF allocated are safe once in held[]
 *   with phase OWN; between its allocation and that store a crash leaks
 *   them (zn_nf_send() keeps that window to two stores). A packet the NF
 *   drops itself (stalled) leaves held[] (NULL) before it is freed: a
 *   crash between the two leaks it, never frees it twice.
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
	ZN_LEDGER_PORT_RX = 4, /* inside rx_burst of a ring-backed port RX
				* queue (zn_ledger_port_rx_begin) */
};

static inline void
zn_ledger_set_phase(struct zn_ledger *l, uint32_t phase)
{
	__atomic_store_n(&l->phase, phase, __ATOMIC_RELEASE);
}

/* tx_pos rings of a run to a port (no ring: see above). */
#define ZN_LEDGER_PORT 0xfffe
#define ZN_LEDGER_PORT_CACHE 0xfffd
/* rx_ring of a burst from a port's RX queue (see above). */
#define ZN_LEDGER_RX_PORT 0xfffc

/* tx_pos: see struct zn_ledger. */
static inline uint64_t
zn_ledger_pos(uint32_t base, uint16_t ring, uint16_t off)
{
	return (uint64_t)base | (uint64_t)ring << 32 | (uint64_t)off << 48;
}

/**
 * NF side: take up to @p max packets from @p rx (single consumer; @p id:
 * 0 for the RX ring, l + 1 for link l) into l->held.
 * @return packets now owned by the NF (phase OWN), 0 if none.
 */
static inline unsigned int
zn_ledger_rx(struct zn_ledger *l, struct rte_ring *rx, uint16_t id,
	     unsigned int max)
{
	unsigned int n;

	n = rte_ring_dequeue_burst_start(rx, (void **)l->held, max, NULL);
	if (n == 0)
		return 0;
	l->held_n = n;
	l->rx_ring = id;
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
	l->rx_ring = 0; /* not a port's burst (zn_ledger_rx_port) */
	zn_ledger_set_phase(l, ZN_LEDGER_OWN);
}

/** NF side: held[0, n) were just written by a port's rx_burst (port
 *  @p port; @p rx0 its ptx[port].rx, which the caller adds n to next):
 *  the NF owns them now. */
static inline void
zn_ledger_rx_port(struct zn_ledger *l, uint16_t port, uint64_t rx0,
		  unsigned int n)
{
	l->held_n = n;
	l->port = port;
	l->rx_expect = (uint32_t)rx0;
	l->rx_ring = ZN_LEDGER_RX_PORT;
	zn_ledger_set_phase(l, ZN_LEDGER_OWN);
}

/** NF side: rx_burst of port @p port's queue @p queue, a ring whose
 *  consumer tail is @p tail0 now, begins (writes held[]). Then
 *  zn_ledger_rx_port() if it returned packets, else IDLE again. */
static inline void
zn_ledger_port_rx_begin(struct zn_ledger *l, uint16_t port, uint16_t queue,
			uint32_t tail0)
{
	l->port = port;
	l->rx_queue = queue;
	l->rx_expect = tail0;
	l->held_n = 0;
	l->rx_ring = ZN_LEDGER_RX_PORT;
	zn_ledger_set_phase(l, ZN_LEDGER_PORT_RX);
}

/** Manager side, once the NF is dead and before its RX queue @p ring
 *  (the ledger's port and rx_queue: the caller looked it up) has
 *  another poller: a burst it was taking becomes one it owned (what the
 *  ring's tail moved past; @p rx_now: its ptx[port].rx, which did not
 *  count it), and a half-done dequeue is undone. @return its packets. */
static inline unsigned int
zn_ledger_port_rx_finish(struct zn_ledger *l, struct rte_ring *ring,
			 uint64_t rx_now)
{
	uint32_t n;

	if (__atomic_load_n(&l->phase, __ATOMIC_ACQUIRE) != ZN_LEDGER_PORT_RX)
		return 0;
	n = ring != NULL ? ring->cons.tail - l->rx_expect : 0;
	if (n > ZN_BURST)
		n = 0; /* a corrupt ledger: nothing is freed, never twice */
	if (ring != NULL)
		ring->cons.head = ring->cons.tail;
	l->held_n = n;
	l->rx_expect = (uint32_t)rx_now;
	zn_ledger_set_phase(l, n != 0 ? ZN_LEDGER_OWN : ZN_LEDGER_IDLE);
	return n;
}

/** Manager side, before zn_ledger_reclaim(): of a burst the dead NF took
 *  from an RX queue of port l->port, how many it had not counted in that
 *  port's ptx[].rx (@p rx_now, read now) yet: 0 for any other burst. */
static inline unsigned int
zn_ledger_rx_uncounted(const struct zn_ledger *l, uint64_t rx_now)
{
	if (__atomic_load_n(&l->phase, __ATOMIC_ACQUIRE) != ZN_LEDGER_OWN ||
	    l->rx_ring != ZN_LEDGER_RX_PORT || (uint32_t)rx_now != l->rx_expect)
		return 0;
	return l->held_n <= ZN_BURST ? l->held_n : 0;
}

/** NF side: begin handing held[] on; nothing handed over yet. */
static inline void
zn_ledger_tx_begin(struct zn_ledger *l, struct rte_ring *tx)
{
	l->tx_pos = zn_ledger_pos(tx->prod.tail, 0, 0);
	zn_ledger_set_phase(l, ZN_LEDGER_TX);
}

/** NF side: held[0, off) are handed over; what follows goes to @p ring
 *  (@p id: 0 the TX ring, l + 1 link l; the NF its only producer). */
static inline void
zn_ledger_tx_ring(struct zn_ledger *l, const struct rte_ring *ring,
		  uint16_t id, unsigned int off)
{
	__atomic_store_n(&l->tx_pos,
			 zn_ledger_pos(ring->prod.tail, id, (uint16_t)off),
			 __ATOMIC_RELEASE);
}

/* Reference count @p refs on every segment of @p m: the NF (or, once it
 * died, the manager) holds it alone, so a plain store will do. */
static inline void
zn_ledger_refs(struct rte_mbuf *m, uint16_t refs)
{
	for (; m != NULL; m = m->next)
		rte_mbuf_refcnt_set(m, refs);
}

/** NF side: held[off, end) go to a port now; each gets the reference
 *  reclaim counts on, on every segment (the NF owns them alone: a plain
 *  store will do; a retry of the same run sets it again). */
static inline void
zn_ledger_tx_port(struct zn_ledger *l, unsigned int off, unsigned int end,
		  uint16_t port, uint64_t tx0)
{
	l->port = port;
	l->port_tx0 = tx0;
	__atomic_store_n(&l->tx_pos,
			 zn_ledger_pos(end, ZN_LEDGER_PORT, (uint16_t)off),
			 __ATOMIC_RELEASE);
	for (unsigned int i = off; i < end; i++)
		zn_ledger_refs(l->held[i], 2);
}

/** NF side: the port took held[off, off + k): out of held[] (reclaim
 *  skips NULL), then our references dropped (a crash in between leaks
 *  them, never frees them twice). The rest keep their second reference
 *  while the run waits to be tried again: to reclaim, one reference left
 *  means sent. */
static inline void
zn_ledger_tx_port_done(struct zn_ledger *l, unsigned int off, unsigned int k)
{
	struct rte_mbuf *sent[ZN_BURST];

	for (unsigned int i = 0; i < k; i++) {
		sent[i] = l->held[off + i];
		__atomic_store_n(&l->held[off + i], NULL, __ATOMIC_RELEASE);
	}
	rte_pktmbuf_free_bulk(sent, k);
}

/** NF side: a run to a port given up (dropped): if it carried the second
 *  references, held[off, end) are ours alone again (the caller frees). */
static inline void
zn_ledger_tx_port_abandon(struct zn_ledger *l, unsigned int off,
			  unsigned int end)
{
	if ((uint16_t)(l->tx_pos >> 32) != ZN_LEDGER_PORT)
		return;
	for (unsigned int i = off; i < end; i++)
		zn_ledger_refs(l->held[i], 1);
}

/** NF side: held[off, end) go to a port now, the PMD freeing what it
 *  sends into @p cache, which has room for all of them (the caller made
 *  sure): nothing to do to the packets. */
static inline void
zn_ledger_tx_port_cached(struct zn_ledger *l, unsigned int off,
			 unsigned int end, uint16_t port, uint64_t tx0)
{
	l->port = port;
	l->port_tx0 = tx0;
	__atomic_store_n(&l->tx_pos,
			 zn_ledger_pos(end, ZN_LEDGER_PORT_CACHE, (uint16_t)off),
			 __ATOMIC_RELEASE);
}

/** NF side: the port took held[off, off + k) of the run [off, end): they
 *  are its (freed into the cache). One store: the run starts after them
 *  now (until then reclaim finds them in the cache: sent). */
static inline void
zn_ledger_tx_port_cached_done(struct zn_ledger *l, unsigned int off,
			      unsigned int end, unsigned int k)
{
	__atomic_store_n(&l->tx_pos,
			 zn_ledger_pos(end, ZN_LEDGER_PORT_CACHE,
				       (uint16_t)(off + k)), __ATOMIC_RELEASE);
}

/** Where the packets the NF may still hold begin in held[] (to held_n):
 *  past the part of a cached port run the port took already; held_n
 *  (none) when idle. A hint for the manager's checks of live NFs
 *  (mgr/trust/owner_map_hot.c), read while the NF runs. */
static inline uint32_t
zn_ledger_held_from(const struct zn_ledger *l)
{
	uint32_t phase = __atomic_load_n(&l->phase, __ATOMIC_ACQUIRE);
	uint64_t pos = __atomic_load_n(&l->tx_pos, __ATOMIC_ACQUIRE);

	if (phase == ZN_LEDGER_IDLE || phase == ZN_LEDGER_PORT_RX)
		return ZN_BURST;
	if (phase == ZN_LEDGER_TX &&
	    (uint16_t)(pos >> 32) == ZN_LEDGER_PORT_CACHE)
		return (uint32_t)(pos >> 48);
	return 0;
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
 * half-done peek on the ring it read and a half-done enqueue on the ring
 * it wrote. @p ring_of(id, arg) gives the ring of a ledger ring id (0: the
 * NF's RX or TX ring, l + 1: link l) or NULL if the id is not one of this
 * NF's (a corrupt ledger: then nothing is freed, never twice). @p cache:
 * the NF's lcore cache of the pool (ZN_LEDGER_PORT_CACHE), flushed by the
 * caller afterwards; NULL: none. @p sent: packets of a run to a port
 * that the port took (in @p cache, or with one reference left); the NF
 * counted them in its ptx[l->port].tx only if that moved from
 * l->port_tx0 (read both before the call). Those with a reference left
 * are out[0, *sent_out), to be freed but not counted as lost.
 * @return number of packets in @p out; the caller frees them.
 */
unsigned int zn_ledger_reclaim(struct zn_ledger *l,
			       struct rte_ring *(*ring_of)(uint16_t id,
							   bool tx, void *arg),
			       void *arg, const struct rte_mempool_cache *cache,
			       struct rte_mbuf **out, unsigned int *sent,
			       unsigned int *sent_out);

#endif /* ZN_LEDGER_H */
