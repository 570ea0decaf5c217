/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The ownership ledger: kill the NF (stop its steps) at every point of its
 * data path and check that reclaim plus draining the rings returns every
 * packet exactly once: no leak, no double free. Long: one fixture and one
 * check for every path a burst takes (rings, links, ports out and in),
 * each stopped at each step. */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "zn_test.h"
#include "../../lib/common/zn_ledger.h"

#define IN_RING 12
#define BURST 8

struct fx {
	struct rte_mempool *mp;
	struct rte_ring *rx, *tx, *lk; /* lk: a link (ledger ring id 1) */
	struct zn_ledger l;
	struct rte_mempool_cache *cache; /* the dead NF's (port runs) */
	unsigned int sent;               /* what reclaim found the port took */
	unsigned int sent_out;           /* of those, in out[] */
	struct rte_mbuf *pkts[IN_RING + 2 * BURST];
	unsigned int n_pkts;
};

static int fx_seq;

/* The ledger calls of a port run, port 0, counter at 0. */
#define zn_ledger_tx_port_t(l, off, end) zn_ledger_tx_port(l, off, end, 0, 0)
#define zn_ledger_tx_port_cached_t(l, off, end) \
	zn_ledger_tx_port_cached(l, off, end, 0, 0)

static void
fx_init(struct fx *f)
{
	char name[32];

	memset(f, 0, sizeof(*f));
	snprintf(name, sizeof(name), "lp%d", fx_seq);
	f->mp = rte_pktmbuf_pool_create(name, 255, 0, 0, 256, 0);
	snprintf(name, sizeof(name), "lrx%d", fx_seq);
	f->rx = rte_ring_create(name, 64, 0, RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "ltx%d", fx_seq);
	f->tx = rte_ring_create(name, 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	snprintf(name, sizeof(name), "llk%d", fx_seq++);
	f->lk = rte_ring_create(name, 64, 0, RING_F_SP_ENQ | RING_F_SC_DEQ);
	ZT_CHECK(f->mp && f->rx && f->tx && f->lk);
	ZT_EQ(rte_pktmbuf_alloc_bulk(f->mp, f->pkts, IN_RING), 0);
	f->n_pkts = IN_RING;
	ZT_EQ(rte_ring_enqueue_burst(f->rx, (void **)f->pkts, IN_RING, NULL),
	      IN_RING);
}

/* The manager's view: ring 0 is the NF's RX or TX ring, 1 the link. */
static struct rte_ring *
fx_ring(uint16_t id, bool tx, void *arg)
{
	struct fx *f = arg;

	if (id == 0)
		return tx ? f->tx : f->rx;
	return id == 1 ? f->lk : NULL;
}

/* Reclaim, drain the rings, and check every packet comes back once. */
static void
fx_check(struct fx *f, unsigned int want_reclaimed)
{
	struct rte_mbuf *got[64], *out[ZN_BURST];
	unsigned int n = 0, k;

	k = zn_ledger_reclaim(&f->l, fx_ring, f, f->cache, out, &f->sent,
			      &f->sent_out);
	ZT_EQ(k, want_reclaimed);
	memcpy(got, out, k * sizeof(*out));
	n = k;
	ZT_EQ(f->rx->cons.head, f->rx->cons.tail);
	ZT_EQ(f->tx->prod.head, f->tx->prod.tail);
	while ((k = rte_ring_dequeue_burst(f->rx, (void **)&got[n], 8, NULL)))
		n += k;
	while ((k = rte_ring_dequeue_burst(f->tx, (void **)&got[n], 8, NULL)))
		n += k;
	while ((k = rte_ring_dequeue_burst(f->lk, (void **)&got[n], 8, NULL)))
		n += k;
	ZT_EQ(n, f->n_pkts);
	for (unsigned int i = 0; i < f->n_pkts; i++) {
		unsigned int seen = 0;

		for (unsigned int j = 0; j < n; j++)
			seen += got[j] == f->pkts[i];
		ZT_EQ(seen, 1);
	}
	rte_pktmbuf_free_bulk(got, n);
	if (f->cache != NULL) { /* as the manager does when the slot is free */
		rte_mempool_cache_flush(f->cache, f->mp);
		rte_mempool_cache_free(f->cache);
	}
	ZT_EQ(rte_mempool_avail_count(f->mp), 255);
	ZT_EQ(f->l.phase, ZN_LEDGER_IDLE);
	rte_ring_free(f->rx);
	rte_ring_free(f->tx);
	rte_ring_free(f->lk);
	rte_mempool_free(f->mp);
}

/* The steps of zn_ledger_rx(), to stop between any two. */
static unsigned int
rx_steps(struct fx *f, int stop_after)
{
	unsigned int n = rte_ring_dequeue_burst_start(f->rx, (void **)f->l.held,
						      BURST, NULL);
	if (stop_after == 1)
		return n;
	f->l.held_n = n;
	f->l.rx_expect = f->rx->cons.tail + n;
	zn_ledger_set_phase(&f->l, ZN_LEDGER_RX);
	if (stop_after == 2)
		return n;
	rte_ring_dequeue_finish(f->rx, n);
	if (stop_after == 3)
		return n;
	zn_ledger_set_phase(&f->l, ZN_LEDGER_OWN);
	return n;
}

ZN_TEST(ledger_idle)
{
	struct fx f;

	fx_init(&f);
	fx_check(&f, 0);
}

ZN_TEST(ledger_died_after_peek)
{
	struct fx f;

	fx_init(&f);
	rx_steps(&f, 1); /* pointers copied, ring head moved, no record */
	fx_check(&f, 0);
}

ZN_TEST(ledger_died_before_commit)
{
	struct fx f;

	fx_init(&f);
	rx_steps(&f, 2); /* recorded, but the ring tail is unmoved */
	fx_check(&f, 0);
}

ZN_TEST(ledger_died_after_commit)
{
	struct fx f;

	fx_init(&f);
	rx_steps(&f, 3); /* committed, phase still RX */
	fx_check(&f, BURST);
}

ZN_TEST(ledger_died_in_handler)
{
	struct fx f;

	fx_init(&f);
	ZT_EQ(zn_ledger_rx(&f.l, f.rx, 0, BURST), BURST);
	fx_check(&f, BURST);
}

ZN_TEST(ledger_died_sending)
{
	for (unsigned int sent = 0; sent <= BURST; sent++) {
		struct fx f;

		fx_init(&f);
		zn_ledger_rx(&f.l, f.rx, 0, BURST);
		zn_ledger_tx_begin(&f.l, f.tx);
		if (sent > 0)
			ZT_EQ(rte_ring_sp_enqueue_burst(f.tx,
							(void **)f.l.held, sent,
							NULL), sent);
		fx_check(&f, BURST - sent);
	}
}

ZN_TEST(ledger_died_mid_enqueue)
{
	struct fx f;

	fx_init(&f);
	zn_ledger_rx(&f.l, f.rx, 0, BURST);
	zn_ledger_tx_begin(&f.l, f.tx);
	ZT_EQ(rte_ring_sp_enqueue_burst(f.tx, (void **)f.l.held, 3, NULL), 3);
	/* An enqueue of two more got as far as moving the head. */
	f.tx->prod.head += 2;
	fx_check(&f, BURST - 3);
}

ZN_TEST(ledger_died_after_send)
{
	struct fx f;

	fx_init(&f);
	zn_ledger_rx(&f.l, f.rx, 0, BURST);
	zn_ledger_tx_begin(&f.l, f.tx);
	ZT_EQ(rte_ring_sp_enqueue_burst(f.tx, (void **)f.l.held, BURST, NULL),
	      BURST);
	fx_check(&f, 0); /* phase TX, all handed over */
}

ZN_TEST(ledger_clean_cycle)
{
	struct fx f;

	fx_init(&f);
	zn_ledger_rx(&f.l, f.rx, 0, BURST);
	zn_ledger_tx_begin(&f.l, f.tx);
	rte_ring_sp_enqueue_burst(f.tx, (void **)f.l.held, BURST, NULL);
	zn_ledger_tx_done(&f.l);
	fx_check(&f, 0);
}

ZN_TEST(ledger_owned_injected)
{
	struct fx f;
	struct rte_mbuf *made[5];

	fx_init(&f);
	ZT_EQ(rte_pktmbuf_alloc_bulk(f.mp, made, 5), 0);
	memcpy(&f.pkts[f.n_pkts], made, sizeof(made));
	f.n_pkts += 5;
	zn_ledger_own(&f.l, made, 5);
	fx_check(&f, 5);
}

ZN_TEST(ledger_corrupt)
{
	struct fx f;

	fx_init(&f);
	f.l.held_n = 1000; /* garbage from a broken NF: trust the rings */
	f.l.phase = ZN_LEDGER_OWN;
	fx_check(&f, 0);
}

/* A burst handed on in runs to two rings (the TX ring, then a link to the
 * next NF): killed at every point, every packet comes back once. */
ZN_TEST(ledger_died_between_rings)
{
	for (unsigned int to_link = 0; to_link <= BURST - 3; to_link++) {
		for (int switched = 0; switched < 2; switched++) {
			struct fx f;

			fx_init(&f);
			zn_ledger_rx(&f.l, f.rx, 0, BURST);
			zn_ledger_tx_begin(&f.l, f.tx);
			ZT_EQ(rte_ring_sp_enqueue_burst(f.tx,
							(void **)f.l.held, 3,
							NULL), 3);
			if (!switched) { /* died before naming the link */
				fx_check(&f, BURST - 3);
				continue;
			}
			zn_ledger_tx_ring(&f.l, f.lk, 1, 3);
			if (to_link > 0)
				ZT_EQ(rte_ring_sp_enqueue_burst(f.lk,
					(void **)&f.l.held[3], to_link, NULL),
				      to_link);
			fx_check(&f, BURST - 3 - to_link);
		}
	}
}

/* Read from a link (ledger ring id 1) and died holding the burst. */
ZN_TEST(ledger_died_holding_link_burst)
{
	struct fx f;
	void *p[BURST];

	fx_init(&f);
	ZT_EQ(rte_ring_dequeue_burst(f.rx, p, BURST, NULL), BURST);
	ZT_EQ(rte_ring_enqueue_burst(f.lk, p, BURST, NULL), BURST);
	ZT_EQ(zn_ledger_rx(&f.l, f.lk, 1, BURST), BURST);
	fx_check(&f, BURST);
}

/* Packets the NF dropped itself (stalled) leave held[] before they are
 * freed: reclaim skips them. */
ZN_TEST(ledger_died_after_own_drop)
{
	struct fx f;

	fx_init(&f);
	zn_ledger_rx(&f.l, f.rx, 0, BURST);
	zn_ledger_tx_begin(&f.l, f.tx);
	ZT_EQ(rte_ring_sp_enqueue_burst(f.tx, (void **)f.l.held, 2, NULL), 2);
	for (unsigned int i = 2; i < 4; i++) { /* dropped, as nf_tx.c does */
		struct rte_mbuf *m = f.l.held[i];

		f.l.held[i] = NULL;
		for (unsigned int j = 0; j < f.n_pkts; j++)
			if (f.pkts[j] == m)
				f.pkts[j] = f.pkts[--f.n_pkts];
		rte_pktmbuf_free(m);
	}
	zn_ledger_tx_ring(&f.l, f.lk, 1, 4);
	ZT_EQ(rte_ring_sp_enqueue_burst(f.lk, (void **)&f.l.held[4], 1, NULL),
	      1);
	fx_check(&f, BURST - 5);
}

/* A ledger naming a ring that is not the NF's frees nothing (a leak the
 * manager logs is better than a double free). */
ZN_TEST(ledger_foreign_ring)
{
	struct fx f;
	struct rte_mbuf *out[ZN_BURST];

	fx_init(&f);
	zn_ledger_rx(&f.l, f.rx, 0, BURST);
	zn_ledger_tx_begin(&f.l, f.tx);
	f.l.tx_pos = zn_ledger_pos(0, 7, 0);
	ZT_EQ(zn_ledger_reclaim(&f.l, fx_ring, &f, NULL, out, &f.sent,
				&f.sent_out), 0u);
	/* Give them back by hand so the fixture's count holds. */
	ZT_EQ(rte_ring_sp_enqueue_burst(f.tx, (void **)f.l.held, BURST, NULL),
	      BURST);
	fx_check(&f, 0);
}

/* NF -> port: a synchronous PMD (net_null, net_tap) frees what it takes
 * before tx_burst returns. The NF may die anywhere in that call. */
static void
fx_forget(struct fx *f, const struct rte_mbuf *m)
{
	for (unsigned int j = 0; j < f->n_pkts; j++)
		if (f->pkts[j] == m) {
			f->pkts[j] = f->pkts[--f->n_pkts];
			return;
		}
	ZT_CHECK(false);
}

/* An NF that took a burst and starts handing it on (port tests); with
 * @p cached, the lcore cache its PMD frees into. */
static void
port_fx(struct fx *f, bool cached)
{
	fx_init(f);
	if (cached) {
		f->cache = rte_mempool_cache_create(64, 0);
		ZT_CHECK(f->cache != NULL);
	}
	zn_ledger_rx(&f->l, f->rx, 0, BURST);
	zn_ledger_tx_begin(&f->l, f->tx);
}

/* The PMD: takes (frees) the first @p take of @p pkts. */
static void
pmd_takes(struct fx *f, struct rte_mbuf **pkts, unsigned int take)
{
	for (unsigned int i = 0; i < take; i++)
		rte_pktmbuf_free(pkts[i]);
	(void)f;
}

ZN_TEST(ledger_port_died_before_the_pmd)
{
	struct fx f;

	port_fx(&f, false);
	zn_ledger_tx_port_t(&f.l, 0, BURST);
	ZT_EQ(rte_mbuf_refcnt_read(f.l.held[0]), 2);
	fx_check(&f, BURST);
}

/* Died inside tx_burst, 5 packets freed by the PMD (they are not back in
 * the pool: the NF's reference), 3 not taken: all 8 come back, once. */
ZN_TEST(ledger_port_died_inside_the_pmd)
{
	struct fx f;

	port_fx(&f, false);
	zn_ledger_tx_port_t(&f.l, 0, BURST);
	pmd_takes(&f, f.l.held, 5);
	ZT_EQ(rte_mempool_avail_count(f.mp), 255 - IN_RING);
	fx_check(&f, BURST);
	ZT_EQ(f.sent, 5u); /* out[0, 5): sent, freed, not lost */
	ZT_EQ(f.sent_out, 5u);
}

/* A port run of which tx_burst took 5: those are gone to the pool, 3
 * wait for a retry with their second reference. */
static void
port_partial(struct fx *f)
{
	port_fx(f, false);
	zn_ledger_tx_port_t(&f->l, 0, BURST);
	for (unsigned int i = 0; i < 5; i++)
		fx_forget(f, f->l.held[i]);
	pmd_takes(f, f->l.held, 5);
	zn_ledger_tx_port_done(&f->l, 0, 5);
}

/* Died waiting for the retry: none of the 3 is taken for sent. */
ZN_TEST(ledger_port_partial_died_waiting)
{
	struct fx f;

	port_partial(&f);
	ZT_CHECK(f.l.held[4] == NULL && f.l.held[5] != NULL);
	ZT_EQ(rte_mbuf_refcnt_read(f.l.held[5]), 2);
	fx_check(&f, BURST - 5);
	ZT_EQ(f.sent, 0u);
}

/* The same, then a second try of the rest, and death inside it. */
ZN_TEST(ledger_port_partial_then_died)
{
	struct fx f;

	port_partial(&f);
	zn_ledger_tx_port_t(&f.l, 5, BURST);
	ZT_EQ(rte_mbuf_refcnt_read(f.l.held[5]), 2); /* set, not added */
	pmd_takes(&f, &f.l.held[5], 1);
	fx_check(&f, BURST - 5);
	ZT_EQ(f.sent, 1u);
}

/* After a port run the next run goes to a ring: the ledger says so. */
ZN_TEST(ledger_port_then_ring)
{
	struct fx f;

	port_fx(&f, false);
	zn_ledger_tx_port_t(&f.l, 0, 3);
	for (unsigned int i = 0; i < 3; i++)
		fx_forget(&f, f.l.held[i]);
	pmd_takes(&f, f.l.held, 3);
	zn_ledger_tx_port_done(&f.l, 0, 3);
	zn_ledger_tx_ring(&f.l, f.tx, 0, 3);
	ZT_EQ(rte_ring_sp_enqueue_burst(f.tx, (void **)&f.l.held[3], 2, NULL),
	      2);
	fx_check(&f, BURST - 5);
}

/* A packet of two segments: the NF's reference is on both (a PMD's
 * rte_pktmbuf_free frees segment by segment). */
ZN_TEST(ledger_port_multi_segment)
{
	struct fx f;
	struct rte_mbuf *seg;

	fx_init(&f);
	zn_ledger_rx(&f.l, f.rx, 0, BURST);
	seg = rte_pktmbuf_alloc(f.mp);
	ZT_CHECK(seg != NULL);
	ZT_EQ(rte_pktmbuf_chain(f.l.held[0], seg), 0);
	zn_ledger_tx_begin(&f.l, f.tx);
	zn_ledger_tx_port_t(&f.l, 0, BURST);
	ZT_EQ(rte_mbuf_refcnt_read(seg), 2);
	pmd_takes(&f, f.l.held, 2);
	ZT_EQ(rte_mbuf_refcnt_read(seg), 1);
	ZT_EQ(rte_mempool_avail_count(f.mp), 255 - IN_RING - 1);
	fx_check(&f, BURST);
}

/* The PMD of an NF with a pool cache: frees into the NF's cache (what
 * rte_pktmbuf_free does on the NF's lcore). */
static void
pmd_takes_cached(struct fx *f, struct rte_mbuf **pkts, unsigned int take)
{
	for (unsigned int i = 0; i < take; i++) {
		fx_forget(f, pkts[i]); /* back in the pool after the flush */
		rte_mempool_generic_put(f->mp, (void **)&pkts[i], 1, f->cache);
	}
}

/* Died inside tx_burst: 5 freed into the cache (sent), 3 not taken: the
 * 3 come back, the 5 are not freed twice. */
ZN_TEST(ledger_port_cached_died_inside_the_pmd)
{
	struct fx f;

	port_fx(&f, true);
	zn_ledger_tx_port_cached_t(&f.l, 0, BURST);
	ZT_EQ(rte_mbuf_refcnt_read(f.l.held[0]), 1); /* untouched */
	pmd_takes_cached(&f, f.l.held, 5);
	fx_check(&f, BURST - 5);
	ZT_EQ(f.sent, 5u); /* in the cache: sent */
	ZT_EQ(f.sent_out, 0u);
}

/* tx_burst returned 5 (out of held[]), then a second run of the rest;
 * died before the PMD freed any of it. */
ZN_TEST(ledger_port_cached_second_try)
{
	struct fx f;

	port_fx(&f, true);
	zn_ledger_tx_port_cached_t(&f.l, 0, BURST);
	pmd_takes_cached(&f, f.l.held, 5);
	zn_ledger_tx_port_cached_done(&f.l, 0, BURST, 5);
	ZT_EQ(zn_ledger_held_from(&f.l), 5u); /* the run starts after them */
	zn_ledger_tx_port_cached_t(&f.l, 5, BURST);
	pmd_takes_cached(&f, &f.l.held[5], 1);
	fx_check(&f, BURST - 6);
}

/* The cache holds other buffers the NF freed before (its own drops):
 * they are not packets of the run, nothing of the run is mistaken. */
ZN_TEST(ledger_port_cached_with_other_buffers)
{
	struct fx f;
	struct rte_mbuf *own[4];

	fx_init(&f);
	f.cache = rte_mempool_cache_create(64, 0);
	ZT_EQ(rte_pktmbuf_alloc_bulk(f.mp, own, 4), 0);
	rte_mempool_generic_put(f.mp, (void **)own, 4, f.cache);
	zn_ledger_rx(&f.l, f.rx, 0, BURST);
	zn_ledger_tx_begin(&f.l, f.tx);
	/* held[0, 2) go to the TX ring first, the rest to the port. */
	ZT_EQ(rte_ring_sp_enqueue_burst(f.tx, (void **)f.l.held, 2, NULL), 2);
	zn_ledger_tx_port_cached_t(&f.l, 2, BURST);
	pmd_takes_cached(&f, &f.l.held[2], 3);
	fx_check(&f, BURST - 5);
}

/* A burst from a port's RX queue the NF owns (zn_ledger_rx_port): the
 * PMD took BURST buffers from the pool in rx_burst and wrote held[]. */
static unsigned int
port_rx(struct fx *f, uint64_t rx0)
{
	ZT_EQ(rte_pktmbuf_alloc_bulk(f->mp, f->l.held, BURST), 0);
	memcpy(&f->pkts[f->n_pkts], f->l.held, BURST * sizeof(void *));
	f->n_pkts += BURST;
	zn_ledger_rx_port(&f->l, 3, rx0, BURST);
	return BURST;
}

ZN_TEST(ledger_port_rx_died_before_counting)
{
	struct fx f;

	fx_init(&f);
	port_rx(&f, 41);
	/* owned, not yet in ptx[3].rx (still 41): the manager counts them */
	ZT_EQ(f.l.port, 3);
	ZT_EQ(zn_ledger_rx_uncounted(&f.l, 41), BURST);
	fx_check(&f, BURST);
}

ZN_TEST(ledger_port_rx_died_after_counting)
{
	struct fx f;

	fx_init(&f);
	port_rx(&f, 41);
	ZT_EQ(zn_ledger_rx_uncounted(&f.l, 41 + BURST), 0);
	fx_check(&f, BURST); /* still the NF's: given back, counted once */
}

ZN_TEST(ledger_port_rx_handed_on)
{
	struct fx f;

	fx_init(&f);
	port_rx(&f, 0);
	zn_ledger_tx_begin(&f.l, f.tx);
	ZT_EQ(rte_ring_sp_enqueue_burst(f.tx, (void **)f.l.held, BURST, NULL),
	      BURST);
	zn_ledger_tx_done(&f.l);
	ZT_EQ(zn_ledger_rx_uncounted(&f.l, 0), 0); /* IDLE: none */
	/* a burst it makes next is no port's, whatever rx_ring said */
	ZT_EQ(rte_pktmbuf_alloc_bulk(f.mp, &f.pkts[f.n_pkts], 2), 0);
	zn_ledger_own(&f.l, &f.pkts[f.n_pkts], 2);
	f.n_pkts += 2;
	ZT_EQ(zn_ledger_rx_uncounted(&f.l, 0), 0);
	fx_check(&f, 2);
}

ZN_TEST(ledger_port_rx_died_inside_the_pmd)
{
	struct fx f;
	struct rte_mbuf *taken[BURST];

	fx_init(&f);
	/* the PMD took them, the call had not returned: not the ledger's
	 * (IDLE); the pool account's sweep gives them back (pool_acct.h) */
	ZT_EQ(rte_pktmbuf_alloc_bulk(f.mp, taken, BURST), 0);
	memcpy(f.l.held, taken, sizeof(taken));
	f.l.held_n = BURST;
	ZT_EQ(zn_ledger_rx_uncounted(&f.l, 0), 0);
	rte_pktmbuf_free_bulk(taken, BURST); /* the sweep */
	fx_check(&f, 0);
}

/* A ring-backed port RX queue (net_ring: zn_ledger_port_rx_begin): the
 * driver dequeues into held[]; the manager finishes the dead NF's step
 * (zn_ledger_port_rx_finish) before the queue has another poller. The
 * fixture's RX ring stands for the port's. */
static void
ring_rx_begin(struct fx *f)
{
	zn_ledger_port_rx_begin(&f->l, 3, 1, f->rx->cons.tail);
	ZT_EQ(zn_ledger_held_from(&f->l), (uint32_t)ZN_BURST); /* none yet */
}

ZN_TEST(ledger_ring_rx_died_before_the_dequeue)
{
	struct fx f;

	fx_init(&f);
	ring_rx_begin(&f);
	ZT_EQ(zn_ledger_port_rx_finish(&f.l, f.rx, 7), 0);
	ZT_EQ(f.l.phase, ZN_LEDGER_IDLE);
	fx_check(&f, 0); /* all still in the ring */
}

ZN_TEST(ledger_ring_rx_died_inside_the_dequeue)
{
	struct fx f;

	fx_init(&f);
	ring_rx_begin(&f);
	/* head moved, pointers copied, tail not: nothing taken */
	ZT_EQ(rte_ring_dequeue_burst_start(f.rx, (void **)f.l.held, 5, NULL),
	      5);
	ZT_CHECK(f.rx->cons.head != f.rx->cons.tail);
	ZT_EQ(zn_ledger_port_rx_finish(&f.l, f.rx, 7), 0);
	ZT_EQ(f.rx->cons.head, f.rx->cons.tail); /* undone: readable again */
	fx_check(&f, 0);
}

ZN_TEST(ledger_ring_rx_died_after_the_dequeue)
{
	struct fx f;

	fx_init(&f);
	ring_rx_begin(&f);
	ZT_EQ(rte_ring_dequeue_burst(f.rx, (void **)f.l.held, 5, NULL), 5);
	/* the tail moved past 5: they are the NF's, not counted yet */
	ZT_EQ(zn_ledger_port_rx_finish(&f.l, f.rx, 7), 5);
	ZT_EQ(f.l.phase, ZN_LEDGER_OWN);
	ZT_EQ(zn_ledger_rx_uncounted(&f.l, 7), 5);
	fx_check(&f, 5);
}

ZN_TEST(ledger_ring_rx_corrupt)
{
	struct fx f;

	fx_init(&f);
	ring_rx_begin(&f);
	f.l.rx_expect -= 1000; /* a tail far behind: nothing is taken */
	ZT_EQ(zn_ledger_port_rx_finish(&f.l, f.rx, 0), 0);
	fx_check(&f, 0);
}
