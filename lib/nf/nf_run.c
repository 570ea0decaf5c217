/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* libzeronf packet loop (hot path). One thread: take a burst from the RX
 * ring, a link from another NF or a port RX queue it owns (nf_port.c),
 * call ops->burst, hand the burst on
 * (nf_tx.c: to the next NF, or to the TX ring for a worker). When idle it
 * spins briefly, yields, then sleeps on its doorbell, which workers and
 * sending NFs ring when they enqueue packets. */

#include <errno.h>
#include <sched.h>

#include <rte_cycles.h>
#include <rte_prefetch.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "nf_pvt.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_ledger.h"
#include "../common/zn_util.h"

/* Idle policy: ZN_IDLE_SPIN, ZN_IDLE_YIELD (nf_pvt.h), then sleep. */
#define SLEEP_US 100000 /* also the manager-liveness period when idle */
#define POLL_SPIN_US 50 /* a generator's turn nearer than this: no sleep */

bool
zn_nf_rx_ready(void *arg)
{
	struct zn_nf *nf = arg;

	return zn_slot_backlog(nf->s, nf->rx, nf->link_ring) > 0 || nf->stop_req ||
	       __atomic_load_n(&nf->s->ctl.stop, __ATOMIC_ACQUIRE) ||
	       zn_nf_cmd_open(nf);
}

/* We took packets from our RX ring, which was at least half full: a
 * worker may be holding ingress back for room in it (backpressure) and
 * sleeping. Nothing else wakes it when this NF sends everything itself
 * (to NFs, to ports): it would wait for its timeout while we run dry. */
static void
rx_room(struct zn_nf *nf, unsigned int n)
{
	if (n == 0 || rte_ring_count(nf->rx) + n < rte_ring_get_size(nf->rx) / 2)
		return;
	for (uint32_t w = 0; w < RTE_MIN(nf->hdr->n_workers,
					 (uint32_t)ZN_MAX_WORKERS); w++)
		zn_nf_ring(nf, zn_nf_worker_db(nf, w));
}

/* Take a burst into the ledger: from the RX ring (packets from ports and
 * workers) or a link (from another NF), in turn, so that no sender waits
 * behind another. The list of links is read as an RCU reader: a link
 * taken out of it may be given to another pair after a grace period. */
static unsigned int
rx_rings(struct zn_nf *nf)
{
	struct zn_nf_slot *s = nf->s;
	struct zn_ledger *l = &s->ledger;
	unsigned int n = 0, n_in;

	if (likely(__atomic_load_n(&s->links.n_in, __ATOMIC_RELAXED) == 0)) {
		n = zn_ledger_rx(l, nf->rx, 0, ZN_BURST);
		rx_room(nf, n);
		return n;
	}
	rte_rcu_qsbr_thread_online(nf->qsbr, nf->slot);
	n_in = RTE_MIN(__atomic_load_n(&s->links.n_in, __ATOMIC_ACQUIRE),
		       (uint16_t)ZN_MAX_LINKS_IN);
	for (unsigned int k = 0; k <= n_in; k++) {
		unsigned int i = (nf->rx_next + k) % (n_in + 1);
		const struct zn_link *lk;
		struct rte_ring *ring;
		uint16_t id;

		if (i == n_in) { /* the RX ring's turn */
			n = zn_ledger_rx(l, nf->rx, 0, ZN_BURST);
			rx_room(nf, n);
			if (n > 0) {
				nf->rx_next = (uint16_t)(i + 1);
				break;
			}
			continue;
		}
		id = s->links.in[i];
		if (id >= ZN_MAX_LINKS)
			continue;
		lk = &nf->links[id];
		ring = nf->link_ring[id];
		/* Not before what the worker put in our RX ring for this
		 * sender earlier (struct zn_link_mark). The mark is written
		 * before the link's first packet: read it after seeing one. */
		if (__atomic_load_n(&ring->prod.tail, __ATOMIC_ACQUIRE) ==
		    ring->cons.tail ||
		    (int32_t)(nf->rx->cons.tail -
			      nf->link_mark[id].rx_mark) < 0)
			continue;
		n = zn_ledger_rx(l, ring, (uint16_t)(id + 1), ZN_BURST);
		if (n > 0) {
			nf->rx_next = (uint16_t)(i + 1);
			s->hstats.link_rx += n;
			/* The sender may wait for room. */
			if (lk->from < ZN_MAX_NFS)
				zn_nf_ring(nf, &nf->peer[lk->from].slot->db);
			break;
		}
	}
	rte_rcu_qsbr_thread_offline(nf->qsbr, nf->slot);
	return n;
}

/* A burst from the rings and links, or from the port RX queues this NF
 * owns (nf_port.c), each first in turn. */
static unsigned int
rx_burst(struct zn_nf *nf)
{
	unsigned int n;

	nf->rx_pass = false;
	nf->burst_tagged = false;
	if (likely(nf->n_prx == 0))
		return rx_rings(nf);
	nf->prx_turn = !nf->prx_turn;
	if (nf->prx_turn) {
		n = zn_nf_ports_rx(nf);
		return n != 0 ? n : rx_rings(nf);
	}
	n = rx_rings(nf);
	return n != 0 ? n : zn_nf_ports_rx(nf);
}

/* Batching on a shared core. Switching between NF processes costs more
 * than a burst of forwarding (~1.5 us on the 2-core VM), so NFs that take
 * turns on one core must not take turns per handful of packets: once a
 * yield showed that another thread runs on our core (it took longer than
 * SHARED_YIELD_NS), an NF whose ring holds less than COALESCE_MIN packets
 * yields again, for at most COALESCE_NS, before taking them. Measured: 2
 * replicas on one core 14 -> 20 Mpps, chain of 4 on 2 cores 13 -> 15 Mpps.
 * An NF with a core of its own never sees a slow yield: no added delay. */
#define SHARED_YIELD_NS 2000
#define SHARED_HOLD_NS 100000000 /* sharing seen: coalesce for 100 ms */
#define COALESCE_MIN (ZN_BURST / 2)
#define COALESCE_NS 16000

/* An empty poll: spin, yield (noting whether that let another thread
 * run), then sleep until woken or a generator's next turn (ops->poll).
 * Returns false when the long idle sleep timed out. */
static bool
idle_wait(struct zn_nf *nf, struct zn_nf_loop *st)
{
	uint64_t t0, took, us = SLEEP_US;

	st->idle++;
	if (st->due != 0) { /* a generator's next turn bounds the sleep */
		t0 = rte_rdtsc();
		if (st->due <= t0)
			return true;
		us = RTE_MIN(us, (st->due - t0) / st->tsc_us);
		if (us < POLL_SPIN_US) {
			if (!zn_nf_yield(nf, NULL))
				rte_pause();
			return true;
		}
	}
	if (st->idle < ZN_IDLE_SPIN) {
		rte_pause();
		return true;
	}
	if (st->idle < ZN_IDLE_YIELD && zn_nf_yield(nf, &took)) {
		if (took > st->shared_yield)
			st->shared_until = rte_rdtsc() + st->hold;
		return true;
	}
	/* Port RX queues ring no doorbell: polled again after a sleep that
	 * grows from ZN_PRX_SLEEP_MIN_US to ZN_PRX_SLEEP_MAX_US, as a worker's. */
	if (nf->prx_owned) {
		us = RTE_MIN(us, (uint64_t)nf->prx_sleep_us);
		nf->prx_sleep_us = RTE_MIN(nf->prx_sleep_us * 2,
					   (uint32_t)ZN_PRX_SLEEP_MAX_US);
	}
	/* A sleep cut short for a generator's turn is not the long idle
	 * timeout that prompts the periodic checks. */
	return zn_nf_wait(nf, &nf->s->db, zn_nf_rx_ready, nf, us) || us < SLEEP_US;
}

/* True when the NF should let its ring fill some more first (and has
 * yielded to do so). */
static bool
coalesce(struct zn_nf *nf, struct zn_nf_loop *st)
{
	unsigned int c;
	uint64_t t;

	if (st->shared_until == 0)
		return false;
	c = zn_slot_backlog(nf->s, nf->rx, nf->link_ring);
	if (c == 0 || c >= COALESCE_MIN)
		goto take;
	t = rte_rdtsc();
	if (t >= st->shared_until)
		goto take;
	if (st->wait_start == 0)
		st->wait_start = t;
	if (t - st->wait_start >= st->coalesce)
		goto take;
	if (!zn_nf_yield(nf, NULL))
		goto take; /* not to a thread that keeps the core */
	return true;
take:
	st->wait_start = 0;
	return false;
}

int ZN_API
zn_nf_send(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint16_t done = 0;

	/* Sending from init: what we send may come back to our service. */
	if (!nf->joined) {
		int rc = zn_nf_join(nf);

		if (rc < 0)
			return rc;
	}
	/* held[] is a pending hand-off's until it is done (zn_nf_turn) */
	if (unlikely(nf->tx_pending != 0)) {
		int rc = zn_nf_tx_resume(nf, false);

		if (rc < 0)
			return rc;
	}
	while (done < n) {
		unsigned int k = RTE_MIN((unsigned int)(n - done), ZN_BURST);
		int rc;

		/* New: the manager takes these back without having handed
		 * them out (mgr/trust/owner_map_hot.c), once; a TTL from
		 * another host (the buffer's last use) is not theirs. */
		for (unsigned int i = 0; i < k; i++) {
			struct zn_pkt_meta *meta = zn_pkt_meta(pkts[done + i]);

			meta->flags = zn_pkt_flags_new(meta->flags);
		}
		zn_ledger_own(&nf->s->ledger, pkts + done, k);
		rc = zn_nf_tx_held(nf, k);
		if (rc < 0)
			return rc;
		nf->s->stats.created += k;
		done += k;
	}
	return n;
}

/* Periodic work: manager liveness, stop requests, ops->tick.
 * Returns 0 to go on, 1 to stop now (clean), or -errno. */
static int
periodic(struct zn_nf *nf, uint64_t now)
{
	if (!zn_nf_mgr_alive(nf))
		return -ENOTCONN;
	if (nf->stop_req && !nf->leave_sent)
		zn_nf_send_leave(nf);
	if (nf->leave_sent && now > nf->leave_deadline)
		return -ETIMEDOUT;
	if (nf->ops.tick != NULL)
		nf->ops.tick(nf, now);
	zn_nf_acct_check(nf); /* what it freed into its cache since */
	return 0;
}

void
zn_nf_loop_init(struct zn_nf *nf, struct zn_nf_loop *lp)
{
	const uint64_t tsc_us = rte_get_tsc_hz() / 1000000;

	*lp = (struct zn_nf_loop){
		.shared_yield = tsc_us * SHARED_YIELD_NS / 1000,
		.hold = tsc_us * (SHARED_HOLD_NS / 1000),
		.coalesce = tsc_us * COALESCE_NS / 1000,
		.tsc_us = tsc_us,
		.check_cycles = rte_get_tsc_hz() / 10,
	};
	lp->next_check = rte_rdtsc() + lp->check_cycles;
	zn_nf_ports_thread(nf);
	nf->prx_sleep_us = ZN_PRX_SLEEP_MIN_US;
}

int
zn_nf_turn(struct zn_nf *nf, struct zn_nf_loop *lp, unsigned int *got)
{
	struct zn_nf_slot *s = nf->s;
	struct zn_ledger *l = &s->ledger;
	unsigned int n;
	int rc = 0;

	nf->busy = true;
	*got = 0;
	/* A hand-off a turn left pending (in a bundle: it waited for a
	 * member that could not run before it returned) goes on before
	 * anything more is taken; still pending, the turn takes nothing,
	 * and its ring is not drained (no stop yet). */
	if (unlikely(nf->tx_pending != 0)) {
		unsigned int h0 = nf->tx_head;

		rc = zn_nf_tx_resume(nf, true);
		*got = nf->tx_head - h0; /* what went on (all when done) */
		if (rc < 0)
			goto out;
		if (rc == ZN_TX_PENDING) {
			rc = 0;
			goto serve;
		}
	}
	n = rx_burst(nf);
	*got += n;
	if (n > 0) {
		lp->idle = 0;
		nf->prx_sleep_us = ZN_PRX_SLEEP_MIN_US;
		s->stats.rx += n;
		s->stats.bursts++;
		/* An NF that transmits on a port itself reads every packet's
		 * metadata and header line after the handler (to route, then
		 * the extra reference): written on the worker's core, they are
		 * on their way while the handler runs (from our own port RX
		 * queue: written here just now). */
		if (nf->n_ptxq != 0 && !nf->burst_tagged)
			for (unsigned int i = 0; i < n; i++) {
				rte_prefetch0(l->held[i]);
				rte_prefetch0(zn_pkt_meta(l->held[i]));
			}
		/* not for our handler: entered from a port whose first hop is
		 * another service now (nf_port.c) */
		if (likely(!nf->rx_pass))
			nf->ops.burst(nf, l->held, (uint16_t)n);
		rc = zn_nf_tx_turn(nf, n);
		if (rc < 0)
			goto out;
		rc = 0; /* or left pending (ZN_TX_PENDING) */
	} else {
		/* The manager sets ctl.stop only after it stopped routing to
		 * us: an empty ring then means drained. */
		if (__atomic_load_n(&s->ctl.stop, __ATOMIC_ACQUIRE)) {
			rc = 1;
			goto out;
		}
		if (nf->stop_req && !nf->leave_sent)
			zn_nf_send_leave(nf);
	}
serve:
	/* One load of a line the manager writes once per command. */
	if (unlikely(zn_nf_cmd_open(nf)))
		zn_nf_cmd_serve(nf);
	if (rte_rdtsc() >= lp->next_check) {
		rc = periodic(nf, zn_now_ns());
		lp->next_check = rte_rdtsc() + lp->check_cycles;
	}
out:
	nf->busy = false;
	return rc;
}

int ZN_API
zn_nf_run(struct zn_nf *nf)
{
	struct zn_nf_loop lp;

	zn_nf_loop_init(nf, &lp);
	for (;;) {
		unsigned int n;
		int rc;

		if (nf->ops.poll != NULL)
			lp.due = nf->ops.poll(nf, rte_rdtsc());
		if (coalesce(nf, &lp))
			continue;
		rc = zn_nf_turn(nf, &lp, &n);
		if (rc != 0)
			return rc < 0 ? rc : 0;
		if (n == 0 && !idle_wait(nf, &lp))
			lp.next_check = 0; /* slept and timed out: check now */
	}
}
