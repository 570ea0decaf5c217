/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Long: one concern, a burst handed on, its paths (links, ports, the TX
 * ring) and their ledger steps kept together so the hot path reads top
 * to bottom.
 *
 * libzeronf hand-off (hot path): where the packets of a burst go once the
 * handler set their actions. The NF resolves them itself with the
 * manager's routing snapshot (zn_route_hot.h, the workers' own code) and
 * puts those bound for another NF straight on a link to it (a ring with
 * this NF as its only producer, mgr/nf/link.h), ringing the receiver's
 * doorbell; packets for a port, drops and whatever has no link yet go to
 * the NF's TX ring, for a worker. With the manager's --handoff worker, or
 * its --fdir-rehash baseline, everything goes to the TX ring.
 *
 * Guarantees, as the worker gives them:
 *   - no drop inside a chain: runs of one destination go in order; the
 *     first that does not fit stops the flush, and the NF reads nothing
 *     new until it is gone (backpressure, back to ingress). A run that
 *     makes no progress for --stall-ms is dropped, counted "stalled", so
 *     that a hung NF or a chain that loops back onto a full NF cannot stop
 *     everything for good;
 *   - order per flow: a sender switches to a new link only once the
 *     worker holds none of its packets (mstats.delivered; until then the
 *     worker path goes on: nothing waits, so no loop of NFs can wait for
 *     itself), and the receiver reads the link only once it took from its
 *     RX ring everything the worker had put there by then (link_mark); it
 *     never goes back to the worker for that receiver while the link
 *     lasts;
 *   - a routing change seen whole: one snapshot per flush, read while an
 *     RCU reader online; the NF is online only inside a flush (no waiting
 *     there), so a slow or stopped NF does not hold routing changes;
 *   - nothing lost on kill -9: the ledger's tx_pos names the ring and tail
 *     at which each run started (zn_ledger.h).
 */

#include <errno.h>
#include <sched.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "nf_pvt.h"
#include "../common/zn_pool_ops.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_ledger.h"
#include "../common/zn_util.h"

#define RING_NONE 0xffff
#define ASK_EVERY_MS 100 /* a link asked for and not given: ask again */
#define LOOP_WAIT_US 1000 /* in_loop() */

void
zn_nf_tx_init(struct zn_nf *nf)
{
	/* Our group's copy of the NFs' snapshot and its RCU variable, in
	 * its file (mgr/trust/group.c), or the one of NFs of no group */
	if (nf->gva != NULL) {
		struct zn_group_home *h = nf->gva;

		nf->qsbr = h->hdr.qsbr;
		nf->rt_route = &h->hdr.route;
		nf->rt_version = &h->hdr.version;
	} else {
		nf->qsbr = nf->shm->rt.qsbr;
		nf->rt_route = &nf->shm->rt.route;
		nf->rt_version = &nf->shm->rt.version;
	}
	zn_rctx_init(&nf->rc, nf->lb_epoch, nf->peer, sizeof(nf->peer[0]),
		     nf->link_ring, (int32_t)nf->group, ZN_READER_NF(nf->slot),
		     &nf->s->hstats.lb_moved);
	nf->stall_cycles = (uint64_t)nf->hdr->stall_ms *
			   (rte_get_tsc_hz() / 1000);
	nf->cycle_cycles = LOOP_WAIT_US * (rte_get_tsc_hz() / 1000000);
	memset(nf->lk, 0, sizeof(nf->lk));
	nf->links_in_use = 0;
	nf->fast_ok = false;
	nf->rx_next = 0;
}

static void
ask_link(struct zn_nf *nf, unsigned int to)
{
	struct zn_nf_link *pl = &nf->lk[to];
	uint64_t *w = &nf->s->hstats.want[to / 64];
	uint64_t bit = 1ULL << (to % 64);

	if (pl->asked != 0 && nf->rc.now - pl->asked <
	    ASK_EVERY_MS * (rte_get_tsc_hz() / 1000))
		return;
	pl->asked = nf->rc.now;
	__atomic_store_n(w, *w | bit, __ATOMIC_RELEASE);
	/* A full message ring: asked again later. */
	(void)zn_nf_post_msg(nf, ZN_MSG_LINK);
}

/* link_to()'s answer when a link was given but the worker still holds
 * packets of ours: they must arrive first. */
#define LINK_PENDING ((struct rte_ring *)1)

/*
 * The link to the NF in slot @p to, if packets may go on it now; NULL:
 * use the TX ring (no link yet); LINK_PENDING: a link is given but the
 * worker still holds packets of ours, which must arrive first: the run
 * waits (flush() retries it as a blocked one) rather than going to the
 * worker too, or a receiver that is never drained (the one that needs
 * the link most) would keep the worker holding ours, and the link would
 * never be used. Never waits itself: an NF waiting here for another to
 * make room could wait for itself around a loop (flush() breaks those).
 */
static struct rte_ring *
link_to(struct zn_nf *nf, const struct zn_route *rt, uint16_t to,
	uint16_t *id)
{
	uint32_t o = __atomic_load_n(&nf->s->links.out[to], __ATOMIC_ACQUIRE);
	struct zn_nf_link *pl = &nf->lk[to];
	unsigned int l;

	/* Never given (mgr/nf/link.c): to itself, or to another trust group's
	 * NF (the worker copies into its pool). */
	if (to == nf->slot || rt->nf_group[to] != nf->group)
		return NULL;
	if (o == 0 || ZN_LINK_OUT_ID(o) >= ZN_MAX_LINKS) {
		if (pl->in_use) { /* taken back: its receiver left */
			pl->in_use = false;
			pl->out = 0;
			nf->links_in_use--;
		}
		ask_link(nf, to);
		return NULL;
	}
	l = ZN_LINK_OUT_ID(o);
	if (pl->out != o) { /* a new link (or to a new NF in that slot) */
		if (pl->in_use)
			nf->links_in_use--;
		pl->out = o;
		pl->in_use = false;
	}
	if (unlikely(!pl->in_use)) {
		/* The worker holds none of ours: all we sent that way are
		 * in the receiver's RX ring, below its producer tail now. */
		if (__atomic_load_n(&nf->s->mstats.delivered,
				    __ATOMIC_ACQUIRE) != nf->s->hstats.tx_ring_in)
			return LINK_PENDING;
		/* The receiver reads the link only past that point; the
		 * ring's tail store (release) publishes the mark with our
		 * first packet. */
		nf->link_mark[l].rx_mark = __atomic_load_n(
			&nf->peer[to].rx->prod.tail, __ATOMIC_ACQUIRE);
		pl->in_use = true;
		nf->links_in_use++;
	}
	*id = (uint16_t)(l + 1);
	return nf->link_ring[l];
}

/* Drop a run that made no progress for stall_ms: out of held[] first
 * (reclaim skips NULL), then freed; the ledger's next run starts anew. */
static void
drop_stalled(struct zn_nf *nf, unsigned int head, unsigned int run)
{
	struct zn_ledger *l = &nf->s->ledger;
	struct rte_mbuf *pkts[ZN_BURST];

	zn_ledger_tx_port_abandon(l, head, head + run);
	zn_nf_acct_room(nf, nf->acct->cache, run);
	for (unsigned int i = 0; i < run; i++) {
		pkts[i] = l->held[head + i];
		__atomic_store_n(&l->held[head + i], NULL, __ATOMIC_RELEASE);
	}
	rte_pktmbuf_free_bulk(pkts, run);
	nf->s->hstats.drops[ZN_DROP_STALLED] += run;
	nf->tx_ring_id = RING_NONE;
}

/* The bursts of an NF whose packets all leave through ports (the last
 * hop of a chain, p2p) need no resolving here: the worker does it, and
 * reading every packet's metadata on this core costs the worker a cache
 * miss when it reuses the buffer. So once a resolved burst had no packet
 * for an NF, and no link of ours is in use (nothing to keep in order with
 * the worker path), the next bursts go straight to the TX ring, until the
 * snapshot changes or every FAST_CHECK bursts, when one is resolved again
 * (to find traffic for NFs that appeared since). */
#define FAST_CHECK 32

static bool
fast_path(struct zn_nf *nf)
{
	if (!nf->fast_ok || nf->links_in_use != 0 ||
	    ++nf->fast_n >= FAST_CHECK ||
	    __atomic_load_n(nf->rt_version, __ATOMIC_ACQUIRE) !=
		    nf->fast_ver)
		return false;
	return true;
}

/* A destination this NF hands packets to itself: another NF (it never
 * gets a link to itself) or a port it has a TX queue of. */
static inline bool
own_dest(const struct zn_nf *nf, const struct zn_res *r)
{
	return (r->type == ZN_RES_NF && r->id != nf->slot) ||
	       (r->type == ZN_RES_PORT && r->id < ZN_MAX_PORTS &&
		nf->ptxq[r->id] != 0);
}

static void
fast_learn(struct zn_nf *nf, const struct zn_route *rt, unsigned int n)
{
	bool own = false;

	for (unsigned int i = 0; i < (nf->uniform ? 1 : n) && !own; i++)
		own = own_dest(nf, &nf->res[i]);
	/* An NF with a port queue never skips resolving: a port it has a
	 * queue of is always reached directly, never through the worker,
	 * so the packets of a flow cannot overtake each other there. */
	nf->fast_ok = rt->direct && !own && nf->n_ptxq == 0;
	nf->fast_ver = rt->version;
	nf->fast_n = 0;
}

/* A run goes on a link: the receiver sees it at hop r->pos (metadata
 * set before the enqueue publishes it), and its actions are counted here
 * (the worker counts those of the TX ring), once per packet. */
static void
to_link(struct zn_nf *nf, const struct zn_res *r, unsigned int head,
	unsigned int run)
{
	struct rte_mbuf **held = nf->s->ledger.held;
	uint64_t *act = nf->s->hstats.act;
	unsigned int from = RTE_MAX(head, (unsigned int)nf->applied);

	if (from >= head + run)
		return;
	for (unsigned int i = from; i < head + run; i++) {
		struct zn_pkt_meta *meta = zn_pkt_meta(held[i]);

		nf->act0[i] = meta->action;
		act[RTE_MIN((unsigned int)meta->action,
			    (unsigned int)ZN_ACT_MAX)]++;
		meta->dest = r->svc; /* for to_worker_again() */
	}
	zn_res_apply(r, &held[from], head + run - from);
	nf->applied = (uint16_t)(head + run);
}

/* held[head, head + run) leave for another process (a ring, a link, a
 * port's PMD that keeps them): not buffers this NF keeps any more
 * (mgr/nf/pool_acct.h), if they were (a port's burst, burst_tagged). */
static inline void
untag_run(struct zn_nf *nf, unsigned int head, unsigned int run)
{
	unsigned int from = RTE_MAX(head, (unsigned int)nf->untag_to);

	if (likely(from >= head + run))
		return;
	zn_pool_ops_handed(&nf->s->ledger.held[from], head + run - from);
	nf->untag_to = (uint16_t)(head + run);
}

/* Can the ledger follow this run through our pool cache (zn_ledger.h,
 * ZN_LEDGER_PORT_CACHE)? Packets of one segment from the pool our lcore
 * caches, and room in the cache for all of them: whatever the PMD frees
 * in the call then stays in the cache. Reads only the header line the
 * PMD's free reads anyway. */
static bool
plain_run(struct zn_nf *nf, struct rte_mbuf **pkts, unsigned int run)
{
	struct rte_mempool_cache *c = nf->cache;

	if (c == NULL)
		return false;
	const struct rte_mempool *mp = nf->pool;
	bool other = false;

	/* no early exit: the loop runs without branches (nearly always
	 * true) */
	for (unsigned int i = 0; i < run; i++)
		other |= (pkts[i]->pool != mp) | (pkts[i]->nb_segs != 1);
	if (other)
		return false;
	zn_nf_acct_room(nf, c, run);
	return true;
}

/* A run goes out of a port on our own TX queue (mgr/port/port_nftx.c): the
 * worker never sees these packets, so their actions are counted here,
 * once however many tries the run takes. The ledger covers the call
 * (zn_ledger_tx_port). @return packets the port took. */
static unsigned int
to_port(struct zn_nf *nf, uint16_t port, unsigned int head, unsigned int run)
{
	struct zn_ledger *l = &nf->s->ledger;
	struct zn_nf_ptx *ps = &nf->s->ptx[port];
	uint64_t *act = nf->s->hstats.act;
	unsigned int k;
	uint32_t len0 = 0;
	bool cached;

	unsigned int from = RTE_MAX(head, (unsigned int)nf->applied);

	/* A uniform burst's packets share their routing fields, the action
	 * among them (zn_resolve_burst): one read */
	if (nf->uniform && from < head + run)
		act[RTE_MIN((unsigned int)zn_pkt_meta(l->held[from])->action,
			    (unsigned int)ZN_ACT_MAX)] += head + run - from;
	else
		for (unsigned int i = from; i < head + run; i++)
			act[RTE_MIN((unsigned int)zn_pkt_meta(
					    l->held[i])->action,
				    (unsigned int)ZN_ACT_MAX)]++;
	if (nf->applied < head + run)
		nf->applied = (uint16_t)(head + run);
	cached = plain_run(nf, &l->held[head], run);
	if (cached) {
		len0 = nf->cache->len;
		zn_ledger_tx_port_cached(l, head, head + run, port, ps->tx);
	} else {
		untag_run(nf, head, run);
		zn_ledger_tx_port(l, head, head + run, port, ps->tx);
	}
	k = rte_eth_tx_burst(nf->ptx_pid[port], (uint16_t)(nf->ptxq[port] - 1),
			     &l->held[head], (uint16_t)run);
	/* ours still, now in our cache: nothing to claim again */
	if (cached && nf->untag_to <= head)
		zn_nf_acct_sent_ours(nf, nf->cache, len0, k);
	/* Counted (one store) before the packets leave held[]: reclaim
	 * counts those it finds sent only if this did not happen. */
	__atomic_store_n(&ps->tx, ps->tx + k, __ATOMIC_RELEASE);
	if (cached) {
		zn_ledger_tx_port_cached_done(l, head, head + run, k);
	} else {
		zn_nf_acct_room(nf, nf->acct->cache, k);
		zn_ledger_tx_port_done(l, head, k);
	}
	nf->tx_ring_id = RING_NONE; /* the next ring run says where it starts */
	if (k < run)
		ps->tx_retry++;
	return k;
}

/* Packets set up for a link go to the worker after all (their NF left
 * and its replacement has no link yet, or the service has no instance):
 * their metadata says "at hop pos, go NEXT", which the worker would take
 * one hop too far. Say instead what was decided: to that service (dest,
 * set with them), arriving at hop pos (TO_SERVICE keeps the position and
 * adds the hop again); and give their action count back (the worker
 * counts them). */
static void
to_worker_again(struct zn_nf *nf, unsigned int head, unsigned int run)
{
	struct rte_mbuf **held = nf->s->ledger.held;
	unsigned int end = RTE_MIN(head + run, (unsigned int)nf->applied);

	for (unsigned int i = head; i < end; i++) {
		struct zn_pkt_meta *meta = zn_pkt_meta(held[i]);

		nf->s->hstats.act[RTE_MIN((unsigned int)nf->act0[i],
					  (unsigned int)ZN_ACT_MAX)]--;
		meta->action = ZN_ACT_TO_SERVICE;
		meta->hops = (uint8_t)(meta->hops - 1);
	}
}

/* A loop of NFs each waiting for room in the next (a chain that visits
 * NFs twice, or changing while packets are between hops): no one reads,
 * so no one will ever make room, and waiting for --stall-ms would stop
 * them all for that long. Each NF says what it waits on
 * (hstats.blocked_on): a link to an NF, or its TX ring, where the worker
 * says for which NF's RX ring its packets wait (mstats.blocked_on; a
 * chain that loops back onto an NF before it has links, or with
 * --handoff worker, waits through the worker). One that has waited
 * LOOP_WAIT_US and finds the waits lead back to itself drops its run as
 * stalled, which frees the loop. Racy reads: a wait just ended makes no
 * loop (it is looked at again at the next retry). @p to: the NF we wait
 * for. */
static bool
in_loop(struct zn_nf *nf, uint16_t to)
{
	unsigned int cur = to;

	for (unsigned int i = 0; i < ZN_MAX_NFS; i++) {
		const struct zn_nf_slot *c;
		uint32_t b;

		if (cur == nf->slot) {
			nf->s->hstats.cycles_broken++;
			return true;
		}
		/* Our group's home of that slot (nf->peer): an NF of another
		 * group (we wait for it through the worker) is not there,
		 * and a home not in use says FREE, waiting for no one
		 * (registry.c clears it). */
		c = nf->peer[cur].slot;
		if (__atomic_load_n(&c->ctl.state, __ATOMIC_RELAXED) ==
		    ZN_NF_FREE)
			return false;
		b = __atomic_load_n(&c->hstats.blocked_on, __ATOMIC_RELAXED);
		if (b == ZN_WAIT_TX_RING)
			b = __atomic_load_n(&c->mstats.blocked_on,
					    __ATOMIC_RELAXED);
		if (b == 0 || b > ZN_MAX_NFS)
			return false;
		cur = b - 1;
	}
	return false;
}

/* Whom a run blocked in a ring waits for (slot + 1; 0: no NF). */
static uint32_t
waits_for(const struct zn_nf *nf, bool link, uint16_t to)
{
	uint32_t b;

	if (link)
		return to + 1u;
	b = __atomic_load_n(&nf->s->mstats.blocked_on, __ATOMIC_RELAXED);
	return b <= ZN_MAX_NFS ? b : 0;
}

/* Deliver held[tx_head, n) in order, runs of one destination at a time,
 * until done or a destination cannot take more. @return true when done. */
static bool
flush(struct zn_nf *nf, unsigned int n)
{
	struct zn_nf_slot *s = nf->s;
	struct zn_ledger *l = &s->ledger;
	struct rte_mbuf **held = l->held;
	const struct zn_route *rt;
	bool to_worker = false;
	unsigned int k;

	nf->rc.now = rte_rdtsc();
	if (!nf->resolved && fast_path(nf)) {
		/* Not one packet read: the worker resolves them all. */
		untag_run(nf, 0, n);
		k = rte_ring_sp_enqueue_burst(nf->tx, (void **)held, n, NULL);
		s->hstats.tx_ring_in += k;
		nf->tx_head = (uint16_t)k;
		if (k > 0)
			zn_nf_ring(nf, nf->wdb);
		if (k == n)
			return true;
		nf->res[0] = (struct zn_res){ .type = 0 };
		nf->uniform = true;
		nf->resolved = true;
		nf->blk_ring = nf->tx;
		s->stats.tx_full++;
		return false;
	}
	rte_rcu_qsbr_thread_online(nf->qsbr, nf->slot);
	rt = __atomic_load_n(nf->rt_route, __ATOMIC_ACQUIRE);
	if (!nf->resolved) {
		if (rt->direct) {
			nf->uniform = zn_resolve_burst(&nf->rc, rt, held,
						       NULL, nf->res, n, NULL);
		} else { /* the worker decides everything */
			nf->res[0] = (struct zn_res){ .type = 0 };
			nf->uniform = true;
		}
		nf->resolved = true;
		fast_learn(nf, rt, n);
	}
	nf->blk_ring = NULL;
	while (nf->tx_head < n) {
		unsigned int head = nf->tx_head, run = 1;
		struct zn_res *r = &nf->res[nf->uniform ? 0 : head];
		struct rte_ring *ring = NULL;
		uint16_t id = 0;
		uint32_t wf;
		bool link;

		/* The chosen instance may have left since: pick again. */
		if (r->type == ZN_RES_NF && rt->nf_svc[r->id] != r->svc) {
			if (nf->uniform) {
				for (unsigned int i = head; i < n; i++)
					nf->res[i] = *r;
				nf->uniform = false;
				r = &nf->res[head];
			}
			*r = zn_pick_instance(&nf->rc, rt, r->svc, held[head],
					      r->pos, r->hops);
		}
		if (nf->uniform)
			run = n - head;
		else
			while (head + run < n &&
			       zn_res_same(&nf->res[head + run], r))
				run++;
		if (r->type == ZN_RES_PORT && rt->direct && own_dest(nf, r)) {
			id = ZN_LEDGER_PORT;
			k = to_port(nf, r->id, head, run);
			goto sent;
		}
		if (r->type == ZN_RES_NF && rt->direct)
			ring = link_to(nf, rt, r->id, &id);
		if (ring == LINK_PENDING) {
			/* As a full TX ring (the worker is what we wait
			 * for), retried after a while (no ring to watch). */
			ring = NULL;
			id = 0;
			k = 0;
			goto sent;
		}
		if (ring == NULL) {
			ring = nf->tx;
			id = 0;
		}
		untag_run(nf, head, run); /* to another process now */
		if (id != nf->tx_ring_id) {
			zn_ledger_tx_ring(l, ring, id, head);
			nf->tx_ring_id = id;
		}
		if (id != 0)
			to_link(nf, r, head, run);
		else if (head < nf->applied)
			to_worker_again(nf, head, run);
		k = rte_ring_sp_enqueue_burst(ring, (void **)&held[head], run,
					      NULL);
		if (id != 0) {
			s->hstats.link_tx += k;
			if (k > 0)
				zn_nf_ring(nf, &nf->peer[r->id].slot->db);
		} else {
			s->hstats.tx_ring_in += k;
			to_worker |= k > 0;
		}
sent:
		nf->tx_head = (uint16_t)(head + k);
		if (k == run) {
			nf->blocked_since = 0;
			continue;
		}
		link = id != 0 && id != ZN_LEDGER_PORT;
		/* Blocked: since when, and for too long? */
		if (k > 0 || nf->blocked_since == 0) {
			nf->blocked_since = nf->rc.now;
		} else if ((nf->stall_cycles != 0 &&
			    nf->rc.now - nf->blocked_since > nf->stall_cycles) ||
			   (id != ZN_LEDGER_PORT &&
			    nf->rc.now - nf->blocked_since > nf->cycle_cycles &&
			    (wf = waits_for(nf, link, r->id)) != 0 &&
			    in_loop(nf, (uint16_t)(wf - 1)))) {
			if (id == ZN_LEDGER_PORT) /* a dead link, as the worker */
				s->ptx[r->id].stalled += run - k;
			drop_stalled(nf, head + k, run - k);
			nf->tx_head = (uint16_t)(head + run);
			nf->blocked_since = 0;
			continue;
		}
		wf = link ? r->id + 1u : id == 0 ? ZN_WAIT_TX_RING : 0;
		if (s->hstats.blocked_on != wf)
			__atomic_store_n(&s->hstats.blocked_on, wf,
					 __ATOMIC_RELAXED);
		/* NULL: a port or a link pending; tried again in a while */
		nf->blk_ring = ring;
		if (id == 0 && ring != NULL)
			s->stats.tx_full++;
		s->hstats.blocked++;
		break;
	}
	if (nf->tx_head >= n && s->hstats.blocked_on != 0)
		__atomic_store_n(&s->hstats.blocked_on, 0, __ATOMIC_RELAXED);
	rte_rcu_qsbr_thread_offline(nf->qsbr, nf->slot);
	if (to_worker)
		zn_nf_ring(nf, nf->wdb);
	return nf->tx_head >= n;
}

static bool
tx_room(void *arg)
{
	struct zn_nf *nf = arg;

	/* A port says nothing when it has room: the wait's timeout. */
	return nf->stop_req ||
	       (nf->blk_ring != NULL && rte_ring_free_count(nf->blk_ring) > 0);
}

/* Until held[0, n) is all handed on: flush, and while a destination is
 * full, wait (as when idle: spin, yield, sleep), in a bundle running the
 * others' turns meanwhile. @p may_pend: a bundle's packet turn, which
 * ends with the hand-off pending (ZN_TX_PENDING) when what it waits for
 * is a member that runs only once this turn returns (nf_bundle.c assist:
 * -EDEADLK). */
static int
tx_wait(struct zn_nf *nf, unsigned int n, bool may_pend)
{
	struct zn_ledger *l = &nf->s->ledger;
	unsigned int idle = 0;
	bool busy = nf->busy;
	int a;

	nf->busy = true;
	while (!flush(nf, n)) {
		/* The worker or the next NF is draining: room comes soon,
		 * so spin and yield before sleeping, as when idle. */
		if (nf->blk_ring == nf->tx)
			zn_nf_ring(nf, nf->wdb);
		/* In a bundle the next NF may be one of ours, which runs
		 * only in this thread: its turn now (nf_bundle.c). */
		a = nf->assist != NULL ? nf->assist(nf) : 0;
		if (a > 0) {
			idle = 0;
			continue;
		}
		if (a == -EDEADLK && may_pend) {
			nf->busy = busy;
			nf->tx_pending = n;
			return ZN_TX_PENDING;
		}
		if (++idle < ZN_IDLE_SPIN) {
			rte_pause();
		} else if (idle < ZN_IDLE_YIELD && zn_nf_yield(nf, NULL)) {
			continue;
		} else if (!zn_nf_wait(nf, &nf->s->db, tx_room, nf, ZN_TX_SLEEP_US) &&
			   !zn_nf_mgr_alive(nf)) {
			nf->busy = busy;
			return -ENOTCONN;
		}
	}
	nf->busy = busy;
	nf->tx_pending = 0;
	zn_ledger_tx_done(l);
	zn_nf_acct_end(nf);
	nf->s->stats.tx += n;
	return 0;
}

/* Start handing held[0, n) on. */
static void
tx_begin(struct zn_nf *nf, unsigned int n)
{
	struct zn_ledger *l = &nf->s->ledger;

	/* In the ledger now (its reclaim answers for them): no longer
	 * buffers this NF took and keeps; a port's burst, as it leaves
	 * (untag_run) */
	if (nf->burst_tagged) {
		nf->untag_to = 0;
	} else {
		zn_pool_ops_handed(l->held, n);
		nf->untag_to = (uint16_t)n;
	}
	zn_nf_acct_begin(nf);
	nf->tx_head = 0;
	nf->applied = 0;
	nf->resolved = false;
	nf->tx_ring_id = 0;
	zn_ledger_tx_begin(l, nf->tx);
}

int
zn_nf_tx_held(struct zn_nf *nf, unsigned int n)
{
	tx_begin(nf, n);
	return tx_wait(nf, n, false);
}

int
zn_nf_tx_turn(struct zn_nf *nf, unsigned int n)
{
	tx_begin(nf, n);
	return tx_wait(nf, n, nf->assist != NULL);
}

int
zn_nf_tx_resume(struct zn_nf *nf, bool may_pend)
{
	return tx_wait(nf, nf->tx_pending, may_pend);
}
