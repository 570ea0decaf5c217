/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The data path (hot). Long: the one loop and its delivery stages, kept
 * together so that the hot path reads top to bottom.
 *
 * A worker loops over:
 *   - the TX rings of the NFs it drains: packets an NF handed back;
 *   - the port RX queues it polls: packets entering the system;
 * decides where each packet goes (zn_route_resolve), and delivers it to an
 * NF's RX ring, a port TX buffer, or drops it under a named reason.
 *
 * Drop policy: a packet inside a chain is never dropped because a ring is
 * full. Packets that cannot be delivered stay in their source's stage, in
 * order, and the source is not read again until they are gone; the NF
 * whose TX ring then fills waits, and so on back to ingress, where the
 * port is simply not polled (the NIC drops and counts, "imissed"), or,
 * with --ingress drop, where the excess is dropped as "ingress_full"; a
 * port sliced among tenants drops so too, per destination (no_wait), so
 * that no tenant waits for another.
 * The only exception is a destination that makes no progress for
 * --stall-ms (a hung NF, a dead link): its packets are dropped as "stalled"
 * so one stuck hop cannot stop everything forever.
 *
 * Idle policy: spin briefly, yield the core a while (NFs may share it),
 * then sleep on the worker's doorbell (RCU offline). NFs ring it when they hand packets back; ports are polled
 * again after a timeout that grows to --idle-sleep-us.
 */

#include <sched.h>
#include <sys/prctl.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include <rte_rcu_qsbr.h>

#include "../core/mgr.h"
#include "../trust/owner_map.h"
#include "../trust/port_headers.h"
#include "../trust/ring_guard.h"
#include "worker.h"
#include "../flow/route.h"
#include "../fabric/fabric.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_doorbell.h"
#include "../nf/nf_rec.h"

#define IDLE_SPIN 8
#define IDLE_YIELD (IDLE_SPIN + 256)
#define SLEEP_MIN_US 16
#define SLEEP_BLOCKED_US 20
#define SLEEP_NO_PORTS_US 100000

static inline unsigned int
deliver_drop(struct zn_worker *w, const struct zn_res *r,
	     struct rte_mbuf **pkts, unsigned int n, uint64_t *src_drops)
{
	zn_owner_map_drop(w->mgr->trust.owner_maps, pkts, n);
	w->shm->stats.drops[r->reason] += n;
	src_drops[r->reason] += n;
	return n;
}

/* @p same_pool: every packet is known to be of the NF's pool already (an
 * NF's stage of that pool: their pool field is not read, owner_map.h). */
static inline unsigned int
deliver_nf(struct zn_worker *w, const struct zn_res *r,
	   struct rte_mbuf **pkts, unsigned int n, bool same_pool)
{
	const struct zn_owner_map *d = NULL;
	unsigned int k;

	if (unlikely(w->mgr->cfg.n_groups != 0) && !same_pool)
		n = zn_copy_to_nf_pool(w, r->id, pkts, n);
	/* Idempotent: a packet not enqueued now gets the same values again. */
	zn_res_apply(r, pkts, n);
	/* Handed out before the ring has them: the NF may hand them back
	 * at once (owner_map.h owner map). */
	if (likely(w->mgr->trust.owner_maps != NULL)) {
		d = zn_owner_map_of_nf(w->mgr, r->id);
		zn_owner_map_hold(d, pkts, n, (uint8_t)(r->id + 1), r->hops);
	}
	k = zn_rguard_mp_enqueue(&w->mgr->nf[r->id].rx_guard, (void *const *)pkts, n);
	if (k > 0)
		zn_db_ring(&zn_slot(w->mgr, r->id)->db);
	if (unlikely(k < n) && d != NULL)
		zn_owner_map_hold(d, pkts + k, n - k, 0, 0); /* still ours */
	return k;
}

/* Send what the port takes; keep the rest in order. */
static unsigned int
flush_txbuf(struct zn_worker *w, uint16_t port)
{
	struct zn_txbuf *tb = &w->txbuf[port];
	struct zn_port *p = &w->mgr->ports[port];
	uint16_t q = w->txq[port], sent;
	bool lock;

	if (tb->n == 0)
		return 0;
	/* shared with other workers, or queue 0 with the control thread's
	 * packet-outs (port_ctltx.c: seen here before its first send) */
	lock = p->txq_shared ||
	       (q == 0 && __atomic_load_n(&p->ctl_tx.on, __ATOMIC_RELAXED));
	if (lock)
		rte_spinlock_lock(&p->txq_lock[q]);
	sent = rte_eth_tx_burst(p->port_id, q, tb->pkts, tb->n);
	if (lock)
		rte_spinlock_unlock(&p->txq_lock[q]);
	w->shm->port[port].tx += sent;
	if (sent == tb->n) {
		tb->n = 0;
		tb->blocked_since = 0;
		return sent;
	}
	w->shm->port[port].tx_retry++;
	if (sent > 0 || tb->blocked_since == 0) {
		tb->blocked_since = w->rc.now;
	} else if (w->stall_cycles != 0 &&
		   w->rc.now - tb->blocked_since > w->stall_cycles) {
		/* The port took nothing for stall_ms: a dead link. */
		zn_owner_map_drop(w->mgr->trust.owner_maps, tb->pkts, tb->n);
		w->shm->stats.drops[ZN_DROP_STALLED] += tb->n;
		w->shm->port[port].drops[ZN_DROP_STALLED] += tb->n;
		tb->n = 0;
		tb->blocked_since = 0;
		return 0;
	}
	memmove(tb->pkts, tb->pkts + sent, (tb->n - sent) * sizeof(void *));
	tb->n = (uint16_t)(tb->n - sent);
	return sent;
}

static inline unsigned int
deliver_port(struct zn_worker *w, uint16_t port, struct rte_mbuf **pkts,
	     unsigned int n)
{
	struct zn_txbuf *tb = &w->txbuf[port];
	unsigned int k;

	if (ZN_TXBUF_SZ - tb->n < n)
		flush_txbuf(w, port);
	k = RTE_MIN(n, (unsigned int)(ZN_TXBUF_SZ - tb->n));
	/* A trust group's packets go as the manager's headers (port_headers.h) */
	if (unlikely(w->mgr->trust.port_headers))
		zn_port_headers_tx(w, pkts, k);
	memcpy(&tb->pkts[tb->n], pkts, k * sizeof(void *));
	tb->n = (uint16_t)(tb->n + k);
	if (tb->n >= ZN_BURST)
		flush_txbuf(w, port);
	return k;
}

/* To another host (ZN_RES_REMOTE): as many as the fabric port's buffer
 * takes, encapsulated (mgr/fabric/fabric_hot.c; what cannot go is
 * dropped there), then buffered as any port's. Encapsulation is not
 * idempotent: only what the buffer will take is encapsulated.
 * @return packets consumed. */
static unsigned int
deliver_remote(struct zn_worker *w, const struct zn_route *rt,
	       const struct zn_res *r, struct rte_mbuf **pkts, unsigned int n,
	       uint64_t *src_drops)
{
	uint16_t port = rt->fabric != NULL ? zn_fabric_port(rt->fabric) : 0;
	struct zn_txbuf *tb = &w->txbuf[port];
	unsigned int k = n, ok;

	if (rt->fabric != NULL) {
		if (ZN_TXBUF_SZ - tb->n < n)
			flush_txbuf(w, port);
		k = RTE_MIN(n, (unsigned int)(ZN_TXBUF_SZ - tb->n));
	}
	ok = zn_fabric_encap(w, rt, r, pkts, k, src_drops);
	if (ok > 0)
		deliver_port(w, port, pkts, ok); /* room was made: takes all */
	return k;
}

/* Of an NF's stage (st->dp), a run about to be read past its metadata:
 * what is not a whole packet of the NF's pool leaves the run (counted as
 * bad_descriptor for the NF). @return how many left. */
static inline unsigned int
check_run(struct zn_worker *w, struct zn_stage *st, const struct zn_res *r,
	  unsigned int run, uint64_t *src_drops)
{
	/* A run to an NF of another pool may hold our copies already
	 * (to_nf_pool made them, the NF's ring took only some). */
	const struct zn_owner_map *made = r->type == ZN_RES_NF ?
		zn_owner_map_of_nf(w->mgr, r->id) : NULL;
	unsigned int bad;

	if (made == st->dp)
		made = NULL; /* a stalled run to an NF of the same pool */
	bad = zn_owner_map_deep(st->dp, made, &st->pkts[st->head], run);

	if (unlikely(bad != 0)) {
		src_drops[ZN_DROP_BAD_DESC] += bad;
		w->shm->stats.drops[ZN_DROP_BAD_DESC] += bad;
		st->head = (uint16_t)(st->head + bad);
	}
	return bad;
}

/* May a packet of tenant @p t (+ 1) go where @p r says? Its services and
 * its ports only; never another host (a tenant's chains stay on this one:
 * its NF may name any chain in the packet's metadata). */
static inline bool
tenant_may(const struct zn_mgr *m, unsigned int t, const struct zn_res *r)
{
	if (r->type == ZN_RES_NF)
		return zn_tenant_of_nf(m, r->id) == t;
	if (r->type == ZN_RES_PORT)
		return (m->tn->port_mask[r->id] >> (t - 1)) & 1;
	return r->type != ZN_RES_REMOTE;
}

/* A run a tenant's NF sent out of its tenant: checked (it is freed),
 * dropped as cross_tenant. */
static unsigned int
drop_cross(struct zn_worker *w, struct zn_stage *st, const struct zn_res *r,
	   unsigned int run, uint64_t *src_drops)
{
	struct zn_res d = zn_res_drop(ZN_DROP_CROSS_TENANT);
	unsigned int bad = st->dp != NULL ?
			   check_run(w, st, r, run, src_drops) : 0;

	w->shm->tenant[st->tenant - 1].cross += run - bad;
	deliver_drop(w, &d, &st->pkts[st->head], run - bad, src_drops);
	st->head = (uint16_t)(st->head + run - bad);
	return run;
}

/* A sliced port's stage: what the first hop did not take drops now. */
static unsigned int
drop_no_wait(struct zn_worker *w, struct zn_stage *st, const struct zn_res *r,
	     unsigned int left, uint64_t *src_drops)
{
	struct zn_res d = zn_res_drop(ZN_DROP_INGRESS_FULL);
	unsigned int t = r->type == ZN_RES_NF ?
			 zn_tenant_of_nf(w->mgr, r->id) : 0;

	if (t != 0)
		w->shm->tenant[t - 1].ingress_full += left;
	deliver_drop(w, &d, &st->pkts[st->head], left, src_drops);
	st->head = (uint16_t)(st->head + left);
	return left;
}

/*
 * Deliver a stage's packets in order, runs of the same destination at a
 * time, stopping at the first destination that is full. Returns packets
 * moved. @p src_drops: the source's per-reason drop counters.
 */
static unsigned int
flush_stage(struct zn_worker *w, const struct zn_route *rt,
	    struct zn_stage *st, uint64_t *src_drops)
{
	unsigned int moved = 0;

	st->wait_nf = 0;
	while (st->head < st->tail) {
		struct zn_res *r = &st->res[st->uniform ? 0 : st->head];
		struct rte_mbuf **pkts = &st->pkts[st->head];
		unsigned int run = 1, k, bad;
		bool same;

		/* The chosen instance may have left since: pick again (per
		 * packet: the service may have several instances now). */
		if (r->type == ZN_RES_NF && rt->nf_svc[r->id] != r->svc) {
			if (st->uniform) {
				for (unsigned int i = st->head; i < st->tail;
				     i++)
					st->res[i] = *r;
				st->uniform = false;
				r = &st->res[st->head];
			}
			*r = zn_pick_instance(&w->rc, rt, r->svc, pkts[0], r->pos,
					   r->hops);
		}
		if (st->uniform)
			run = (unsigned int)(st->tail - st->head);
		else
			while (st->head + run < st->tail &&
			       zn_res_same(&st->res[st->head + run], r))
				run++;
		if (unlikely(st->tenant != 0) &&
		    !tenant_may(w->mgr, st->tenant, r)) {
			moved += drop_cross(w, st, r, run, src_drops);
			continue;
		}
		/* Validated lazily (owner_map.h): a run going to an NF of the
		 * same pool is not read here (the NF reads it, within its
		 * trust boundary); any other is checked whole first. */
		same = st->dp == NULL ||
		       (r->type == ZN_RES_NF &&
			zn_pool_of_nf(w->mgr, r->id) == st->dp->mp);
		if (!same) {
			bad = check_run(w, st, r, run, src_drops);
			moved += bad;
			if (bad == run)
				continue;
			run -= bad;
			pkts += bad;
		}
		switch (r->type) {
		case ZN_RES_NF:
			k = deliver_nf(w, r, pkts, run, st->dp != NULL && same);
			break;
		case ZN_RES_PORT:
			k = deliver_port(w, r->id, pkts, run);
			break;
		case ZN_RES_REMOTE:
			k = deliver_remote(w, rt, r, pkts, run, src_drops);
			break;
		default:
			k = deliver_drop(w, r, pkts, run, src_drops);
			break;
		}
		st->head = (uint16_t)(st->head + k);
		moved += k;
		if (r->type == ZN_RES_NF && k > 0)
			w->nf_stalled[r->id] = false;
		if (k == run) {
			st->blocked_since = 0;
			continue;
		}
		if (st->no_wait) {
			moved += drop_no_wait(w, st, r, run - k, src_drops);
			continue;
		}
		/* Stalled: nothing taken for stall_cycles, or by an NF that
		 * took nothing since its last stall. */
		if (k == 0 && w->stall_cycles != 0 &&
		    ((r->type == ZN_RES_NF && w->nf_stalled[r->id]) ||
		     (st->blocked_since != 0 &&
		      w->rc.now - st->blocked_since > w->stall_cycles))) {
			struct zn_res d = zn_res_drop(ZN_DROP_STALLED);

			if (same && st->dp != NULL) {
				bad = check_run(w, st, r, run, src_drops);
				moved += bad;
				run -= bad;
			}
			deliver_drop(w, &d, &st->pkts[st->head], run,
				     src_drops);
			st->head = (uint16_t)(st->head + run);
			moved += run;
			st->blocked_since = 0;
			if (r->type == ZN_RES_NF)
				w->nf_stalled[r->id] = true;
			continue;
		}
		if (k > 0 || st->blocked_since == 0)
			st->blocked_since = w->rc.now;
		w->shm->stats.stalls++;
		if (r->type == ZN_RES_NF)
			st->wait_nf = (uint16_t)(r->id + 1);
		break;
	}
	if (st->head == st->tail)
		st->head = st->tail = 0;
	return moved;
}

/* Start moving what an NF has committed to its TX ring towards our cache
 * while we do other work: the slots of the next burst, written on the
 * NF's core, otherwise arrive one line at a time inside the dequeue
 * (perf: a quarter of the worker's cycles in p2p). Whole lines of
 * committed slots only, so that no line the NF still writes moves here.
 * Reads rte_ring's layout (slots after the header; the ring is created
 * with 8-byte elements): DPDK has no API for it. */
static inline void
prefetch_ring(const struct zn_rguard *g)
{
	uint32_t head = g->head;
	uint32_t n = RTE_MIN(zn_rguard_count(g), ZN_BURST) & ~7u;
	void *const *slots = zn_rguard_slots(g->ring);

	for (uint32_t i = 0; i < n; i += 8)
		rte_prefetch0(&slots[(head + i) & g->made.mask]);
}

/* Packets an NF handed back: route them on. */
static unsigned int
drain_nf(struct zn_worker *w, const struct zn_route *rt, uint16_t slot)
{
	struct zn_nf_slot *ns = zn_slot(w->mgr, slot);
	struct zn_stage *st = &w->nf_stage[slot];
	unsigned int moved = 0, n, staged, done = 0;
	uint8_t hops[ZN_BURST], *hp = NULL;

	if (st->tail != 0) {
		done = moved = flush_stage(w, rt, st, ns->mstats.drops);
		if (st->tail != 0)
			goto out;
	}
	n = zn_rguard_sc_dequeue(&w->mgr->nf[slot].tx_guard, (void **)st->pkts,
				 ZN_BURST);
	if (n == 0)
		goto out;
	ns->mstats.dequeued += n;
	zn_db_ring(&ns->db); /* the NF may be waiting for TX ring room */
	/* What is not a packet of the NF's pool goes no further (owner_map.c);
	 * it counts as delivered: the NF's ordering rule waits for that. */
	st->dp = NULL;
	st->tenant = (uint8_t)zn_tenant_of_nf(w->mgr, slot);
	if (likely(w->mgr->trust.owner_maps != NULL)) {
		unsigned int k = zn_owner_map_filter(w, slot, st->pkts, hops, n,
						rt);

		st->dp = zn_owner_map_of_nf(w->mgr, slot);
		hp = hops; /* the loop guard counts by the map, not the NF */
		done += n - k;
		n = k;
		if (n == 0)
			goto out;
	} else { /* the filter prefetches these itself */
		for (unsigned int i = 0; i < n; i++)
			rte_prefetch0(zn_pkt_meta(st->pkts[i]));
	}
	if (rt->rehash_every_hop) /* the naive baseline: look up again */
		zn_fdir_classify(w, rt, st->pkts, n, NULL);
	/* The NF counts the actions of what it puts on links. */
	st->uniform = zn_resolve_burst(&w->rc, rt, st->pkts, hp, st->res, n,
				       ns->mstats.act);
	st->head = 0;
	st->tail = (uint16_t)n;
	w->shm->stats.routed += n;
	moved += n;
	done += flush_stage(w, rt, st, ns->mstats.drops);
out:
	staged = (unsigned int)(st->tail - st->head);
	if (ns->mstats.staged != staged)
		ns->mstats.staged = staged;
	/* For the NFs' loop finding (lib/nf/nf_tx.c in_loop): the NF whose
	 * packets wait here waits, through us, for that NF. */
	if (ns->mstats.blocked_on != (staged != 0 ? st->wait_nf : 0u))
		__atomic_store_n(&ns->mstats.blocked_on,
				 staged != 0 ? st->wait_nf : 0u,
				 __ATOMIC_RELAXED);
	/* Release: the NF reads it to know that none of its packets is
	 * still here (it may then hand packets to NFs directly). */
	if (done != 0)
		__atomic_store_n(&ns->mstats.delivered,
				 ns->mstats.delivered + done, __ATOMIC_RELEASE);
	return moved;
}

static void
ingress_drop_rest(struct zn_worker *w, struct zn_stage *st, uint64_t *drops)
{
	struct zn_res d = zn_res_drop(ZN_DROP_INGRESS_FULL);
	unsigned int n = (unsigned int)(st->tail - st->head);

	deliver_drop(w, &d, &st->pkts[st->head], n, drops);
	st->head = st->tail = 0;
}

/* @p n new packets in an empty stage from a port (or the packet-outs):
 * where each goes, then as many delivered as will go. */
static void
route_stage(struct zn_worker *w, const struct zn_route *rt,
	    struct zn_stage *st, unsigned int n, uint64_t *src_drops)
{
	st->uniform = zn_resolve_burst(&w->rc, rt, st->pkts, NULL, st->res, n,
				       NULL);
	st->head = 0;
	st->tail = (uint16_t)n;
	w->shm->stats.routed += n;
	flush_stage(w, rt, st, src_drops);
}

/* Packet-outs of the OpenFlow table (mgr/sdn/oft_io.c): packets the
 * control thread made or kept, their chain set, routed as a port's. */
static unsigned int
poll_inject(struct zn_worker *w, const struct zn_route *rt)
{
	struct zn_stage *st = &w->inject_stage;
	unsigned int moved = 0, n;

	if (st->tail != 0) {
		moved = flush_stage(w, rt, st, w->inject_drops);
		if (st->tail != 0)
			return moved;
	}
	if (rte_ring_count(w->inject) == 0)
		return moved;
	n = zn_oft_inject_take(w, rt, w->inject, st->pkts, ZN_BURST);
	if (n == 0)
		return moved;
	if (likely(w->mgr->trust.owner_maps != NULL))
		zn_owner_map_hold(w->mgr->trust.owner_maps, st->pkts, n, 0, 0);
	route_stage(w, rt, st, n, w->inject_drops);
	return moved + n;
}

/* Classify @p n packets from port queue @p rq: by the OpenFlow table
 * (mgr/sdn/oft.h) while it is on, else by the flow director, or on a port
 * sliced among tenants by their slices. @return how many go on, at the
 * start of @p pkts; the rest (punted or dropped) are done with. */
static unsigned int
classify(struct zn_worker *w, const struct zn_route *rt, struct zn_rxq *rq,
	 struct rte_mbuf **pkts, unsigned int n)
{
	bool sliced = unlikely(w->mgr->tn != NULL) &&
		      w->mgr->tn->port_mask[rq->port] != 0;

	if (unlikely(rt->oft != NULL) && !sliced)
		return zn_oft_classify(w, rt, rq->port, pkts, n);
	if (likely(!sliced)) {
		zn_fdir_classify(w, rt, pkts, n, NULL);
		return n;
	}
	rq->stage.no_wait = true;
	return zn_tenant_classify(w, rt, rq->port, pkts, n);
}

/* Packets entering from a port queue. */
static unsigned int
poll_rxq(struct zn_worker *w, const struct zn_route *rt, struct zn_rxq *rq)
{
	struct zn_port_wstats *ps = &w->shm->port[rq->port];
	struct zn_stage *st = &rq->stage;
	unsigned int moved = 0, n, kept, routed = 0;

	if (st->tail != 0) {
		moved = flush_stage(w, rt, st, ps->drops);
		if (st->tail != 0) {
			if (w->mgr->cfg.ingress == ZN_INGRESS_DROP) {
				ingress_drop_rest(w, st, ps->drops);
			} else {
				ps->rx_paused++; /* backpressure */
				return moved;
			}
		}
	}
	if (!w->mgr->dp.rx_enabled)
		return moved;
	/* an NF polls it (mgr/port/port_nfrx.c), or it changes hands */
	if (unlikely(rq->queue < ZN_NF_RXQ_MAX &&
		     rt->rxq_nf[rq->port][rq->queue] != ZN_RXQ_WORKERS))
		return moved;
	n = rte_eth_rx_burst(w->mgr->ports[rq->port].port_id, rq->queue,
			     st->pkts, ZN_BURST);
	if (n == 0)
		return moved;
	ps->rx += n;
	if (unlikely(rq->headers != NULL)) /* a group's port: port_headers.h */
		zn_port_headers_rx(w, rq->headers, st->pkts, n);
	const struct zn_pkt_meta t = zn_ingress_tmpl(rq->port);

	for (unsigned int i = 0; i < n; i++)
		zn_ingress_meta(st->pkts[i], &t);
	/* The manager's, whatever an NF that freed one of these buffers
	 * itself left in the owner map (owner_map.h). */
	if (likely(rq->owners != NULL))
		zn_owner_map_hold(rq->owners, st->pkts, n, 0, 0);
	if (unlikely(rt->fabric != NULL) &&
	    rq->port == zn_fabric_port(rt->fabric)) {
		/* Tunnels this host ends (mgr/fabric/fabric.h): what their
		 * path routes comes first, not classified */
		kept = zn_fabric_ingress(w, rt, st->pkts, n, &routed);
		moved += n - kept;
		n = kept;
	}
	if (n > routed) {
		kept = routed + classify(w, rt, rq, st->pkts + routed,
					 n - routed);
		moved += n - kept; /* dropped: work done all the same */
		n = kept;
	}
	if (n == 0)
		return moved;
	route_stage(w, rt, st, n, ps->drops);
	if (st->tail != 0 && w->mgr->cfg.ingress == ZN_INGRESS_DROP)
		ingress_drop_rest(w, st, ps->drops);
	return moved + n;
}

/* Liveness probes of the fabric's peers (mgr/fabric/fabric.h): by the
 * worker that polls the fabric port's RX queue 0, once per probe period
 * and at once for a new fabric view (a peer just configured is known at
 * once). What the port's buffer does not take waits for the next round. */
static unsigned int
fabric_probe(struct zn_worker *w, const struct zn_route *rt)
{
	const struct zn_fabric_view *v = rt->fabric;
	struct rte_mbuf *pkts[ZN_BURST];
	unsigned int n, k, q;

	if (likely(v == w->probe_view && w->rc.now < w->probe_at))
		return 0;
	w->probe_view = v;
	w->probe_at = w->rc.now + v->probe_cycles;
	for (q = 0; q < w->n_rxq; q++)
		if (w->rxq[q].port == v->port && w->rxq[q].queue == 0)
			break;
	if (q == w->n_rxq || !w->rx_role)
		return 0;
	n = zn_fabric_probes(w, v, pkts, ZN_BURST);
	if (n == 0)
		return 0;
	if (likely(w->mgr->trust.owner_maps != NULL))
		zn_owner_map_hold(w->mgr->trust.owner_maps, pkts, n, 0, 0);
	k = deliver_port(w, v->port, pkts, n);
	if (k < n) /* made here, never counted in: freed as never made */
		zn_owner_map_drop(w->mgr->trust.owner_maps, pkts + k, n - k);
	return k;
}

/* Flush port TX buffers; @return true if packets remain buffered. */
static bool
flush_all_txbufs(struct zn_worker *w, unsigned int *work)
{
	bool pending = false;

	for (uint16_t p = 0; p < w->mgr->n_ports; p++) {
		if (w->txbuf[p].n == 0)
			continue;
		*work += flush_txbuf(w, p);
		pending |= w->txbuf[p].n != 0;
	}
	return pending;
}

static bool
stages_pending(const struct zn_worker *w)
{
	for (unsigned int q = 0; q < w->n_rxq; q++)
		if (w->rxq[q].stage.tail != 0)
			return true;
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		if (w->nf_stage[s].tail != 0)
			return true;
	return w->inject_stage.tail != 0;
}

/* Does this worker poll a port RX queue now (one no NF owns,
 * mgr/port/port_nfrx.c)? Ports ring no doorbell: it sleeps short then. */
static bool
polls_ports(const struct zn_worker *w, const struct zn_route *rt)
{
	for (unsigned int q = 0; q < w->n_rxq; q++) {
		const struct zn_rxq *rq = &w->rxq[q];

		if (rq->queue >= ZN_NF_RXQ_MAX ||
		    rt->rxq_nf[rq->port][rq->queue] == ZN_RXQ_WORKERS)
			return true;
	}
	return false;
}

/* Sleeper's re-check: does an NF drained by this worker have packets?
 * Reads only shared, never-freed state: the worker is RCU-offline here. */
static bool
worker_has_work(void *arg)
{
	struct zn_worker *w = arg;
	struct zn_mgr *m = w->mgr;

	if (m->dp.quit || zn_audit_pending(w))
		return true;
	if (w->inject != NULL && rte_ring_count(w->inject) > 0)
		return true;
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		if (zn_nf_state(m, s) != ZN_NF_FREE && m->nf[s].worker == w->id &&
		    m->nf[s].tx != NULL && zn_nf_tx_count(m, s) > 0)
			return true;
	}
	return false;
}

int
zn_worker_main(void *arg)
{
	struct zn_worker *w = arg;
	struct zn_mgr *m = w->mgr;
	/* the first sleep after work: 16 us, or less if --idle-sleep-us
	 * (the longest) says so (it was 16 us whatever the option said) */
	const uint64_t sleep_min = RTE_MIN((uint64_t)SLEEP_MIN_US,
					   (uint64_t)m->cfg.idle_sleep_us);
	uint64_t sleep_us = sleep_min;
	unsigned int idle = 0;

	/* its sleeps are short and timed (16 us, or less, up to
	 * --idle-sleep-us): the
	 * kernel's default slack (50 us) would stretch each one, and with it
	 * the time a packet waits for a sleeping worker */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	w->db[0] = &w->shm->db;
	w->n_db = 1;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++)
		if (m->trust.group[g].home_rg != NULL)
			w->db[w->n_db++] = &zn_group_home_at(g)->wdb[w->id];
	rte_rcu_qsbr_thread_register(m->route.qsbr, w->id);
	rte_rcu_qsbr_thread_online(m->route.qsbr, w->id);
	w->shm->stats.online = 1;
	while (!m->dp.quit) {
		const struct zn_route *rt =
			__atomic_load_n(&m->route.live, __ATOMIC_ACQUIRE);
		unsigned int work = 0;
		uint64_t timeout;
		bool pending;

		w->rc.now = rte_rdtsc();
		if (unlikely(zn_audit_pending(w)))
			zn_audit_answer(w); /* between bursts: group_audit.c */
		if (w->tx_role) {
			for (unsigned int i = 0; i < rt->n_drain[w->id]; i++)
				work += drain_nf(w, rt, rt->drain[w->id][i]);
			for (unsigned int i = 0; i < rt->n_drain[w->id]; i++)
				prefetch_ring(&m->nf[rt->drain[w->id][i]].tx_guard);
		}
		if (w->rx_role)
			for (unsigned int q = 0; q < w->n_rxq; q++)
				work += poll_rxq(w, rt, &w->rxq[q]);
		if (unlikely(w->inject != NULL))
			work += poll_inject(w, rt);
		if (unlikely(rt->fabric != NULL))
			work += fabric_probe(w, rt);
		pending = flush_all_txbufs(w, &work);
		w->shm->stats.loops++;
		rte_rcu_qsbr_quiescent(m->route.qsbr, w->id);
		if (work != 0) {
			w->shm->stats.busy_loops++;
			idle = 0;
			sleep_us = sleep_min;
			continue;
		}
		if (++idle < IDLE_SPIN) {
			rte_pause();
			continue;
		}
		/* NFs sharing our core may run; not a thread that keeps it
		 * (lib/common/zn_yield.h): then the doorbell wait below. */
		if (idle < IDLE_YIELD && zn_yield(&w->yld, NULL)) {
			w->shm->stats.long_yields = (uint32_t)w->yld.n_long;
			continue;
		}
		if (pending || stages_pending(w)) {
			timeout = SLEEP_BLOCKED_US;
		} else if (w->rx_role && polls_ports(w, rt)) {
			timeout = sleep_us;
			sleep_us = RTE_MIN(sleep_us * 2,
					   (uint64_t)m->cfg.idle_sleep_us);
		} else {
			timeout = SLEEP_NO_PORTS_US;
		}
		rte_rcu_qsbr_thread_offline(m->route.qsbr, w->id);
		zn_db_wait_all(w->db, w->n_db, worker_has_work, w, timeout);
		rte_rcu_qsbr_thread_online(m->route.qsbr, w->id);
	}
	/* Last chance for buffered output; the rest is freed at shutdown. */
	w->rc.now = rte_rdtsc();
	for (uint16_t p = 0; p < m->n_ports; p++)
		flush_txbuf(w, p);
	w->shm->stats.online = 0;
	rte_rcu_qsbr_thread_offline(m->route.qsbr, w->id);
	rte_rcu_qsbr_thread_unregister(m->route.qsbr, w->id);
	return 0;
}
