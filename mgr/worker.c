/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The data path (hot). A worker loops over:
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
 * with --ingress drop, where the excess is dropped as "ingress_full".
 * The only exception is a destination that makes no progress for
 * --stall-ms (a hung NF, a dead link): its packets are dropped as "stalled"
 * so one stuck hop cannot stop everything forever.
 *
 * Idle policy: spin briefly, yield the core a while (NFs may share it),
 * then sleep on the worker's doorbell (RCU offline). NFs ring it when they hand packets back; ports are polled
 * again after a timeout that grows to --idle-sleep-us.
 */

#include <sched.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_pause.h>
#include <rte_prefetch.h>

#include <rte_rcu_qsbr.h>

#include "mgr.h"
#include "worker.h"
#include "route.h"
#include "../lib/common/zn_doorbell.h"

#define ZN_HOP_LIMIT 64
#define IDLE_SPIN 8
#define IDLE_YIELD (IDLE_SPIN + 256)
#define SLEEP_MIN_US 16
#define SLEEP_BLOCKED_US 20
#define SLEEP_NO_PORTS_US 100000

static inline struct zn_res
res_drop(enum zn_drop_reason reason)
{
	return (struct zn_res){ .type = ZN_RES_DROP, .reason = (uint8_t)reason };
}

/* Halve the recent-pin counts once per lb_decay_cycles (1 ms). */
static void
lb_decay(struct zn_worker *w)
{
	if (likely(w->now < w->lb_decay_at))
		return;
	for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
		w->lb_fresh[i] >>= 1;
	w->lb_decay_at = w->now + w->lb_decay_cycles;
}

/* LEAST_LOADED: the flow's pinned replica, or the replica with the
 * shortest RX ring for a new flow (then pinned; see struct zn_lb_pins).
 * A flow pinned in the last millisecond or so counts as one packet in its
 * replica's ring: the ring alone says nothing about flows that have just
 * been given, so a burst of new flows arriving while one replica is off
 * its core would all pin to the other for good (seen on 2 cores: 1000
 * flows to one replica, none to the other). */
static inline uint16_t
pick_pinned(struct zn_worker *w, const struct zn_route *rt,
	    const struct zn_svc_entry *e, uint16_t svc, uint32_t hash)
{
	uint32_t *pin = &e->pins->pin[hash >> (32 - ZN_LB_PIN_BITS)];
	uint32_t epoch = w->mgr->lb_epoch & 0xffff;
	uint32_t old = __atomic_load_n(pin, __ATOMIC_RELAXED);
	unsigned int best = UINT32_MAX;
	uint16_t slot = (uint16_t)((old & 0xffff) - 1u), pick = e->inst[0];
	bool fresh = old != 0 &&
		     ((epoch - (old >> 16)) & 0xffff) <= rt->lb_epoch_idle;

	if (fresh && slot < ZN_MAX_NFS && rt->nf_svc[slot] == svc) {
		if ((old >> 16) != epoch) /* once per epoch: keep it fresh */
			__atomic_store_n(pin, epoch << 16 | (old & 0xffff),
					 __ATOMIC_RELAXED);
		return slot;
	}
	/* Ties (empty rings, typical when a burst brings many new flows
	 * at once) go round-robin, not all to the first replica. */
	lb_decay(w);
	for (unsigned int k = 0, i = w->lb_rr++ % e->n; k < e->n;
	     k++, i = i + 1 == e->n ? 0 : i + 1) {
		unsigned int c = rte_ring_count(w->mgr->nf_rx[e->inst[i]]) +
				 w->lb_fresh[e->inst[i]];

		if (c < best) {
			best = c;
			pick = e->inst[i];
		}
	}
	/* Another worker may pin the flow at the same time: its choice wins,
	 * so both directions keep one replica. */
	if (!__atomic_compare_exchange_n(pin, &old,
					 epoch << 16 | (uint32_t)(pick + 1),
					 false, __ATOMIC_RELAXED,
					 __ATOMIC_RELAXED)) {
		slot = (uint16_t)((old & 0xffff) - 1u);
		if (slot < ZN_MAX_NFS && rt->nf_svc[slot] == svc)
			return slot;
	} else if (fresh) {
		e->pins->w[w->id].moved++; /* its replica left */
		w->shm->stats.lb_moved++;
	}
	w->lb_fresh[pick]++;
	return pick;
}

static inline struct zn_res
pick_instance(struct zn_worker *w, const struct zn_route *rt, uint16_t svc,
	      struct rte_mbuf *m, uint8_t pos, uint8_t hops)
{
	const struct zn_svc_entry *e = &rt->svc[svc];
	uint16_t id = e->inst[0];

	if (e->n == 0)
		return res_drop(ZN_DROP_NO_INSTANCE);
	/* The flow hash is only needed (and computed) to choose a replica.
	 * Buckets use its high bits. */
	if (e->n > 1) {
		uint32_t hash = zn_pkt_flow_hash(m);

		if (e->mode == ZN_LB_LEAST_LOADED && e->pins != NULL &&
		    w != NULL)
			id = pick_pinned(w, rt, e, svc, hash);
		else
			id = e->bucket[hash >> 24];
	}
	return (struct zn_res){ .type = ZN_RES_NF, .pos = pos, .hops = hops,
				.svc = svc, .id = id };
}

struct zn_res
zn_route_resolve(struct zn_worker *w, const struct zn_route *rt,
		 struct rte_mbuf *m)
{
	const struct zn_pkt_meta *meta = zn_pkt_meta(m);
	const struct zn_chain *chain = &rt->chains[meta->chain];
	unsigned int hops = meta->hops + 1u;
	unsigned int pos;
	const struct zn_step *hop;

	switch (meta->action) {
	case ZN_ACT_NEXT:
		pos = meta->chain_pos == ZN_CHAIN_POS_START ?
			      0 : meta->chain_pos + 1u;
		if (pos >= chain->len)
			return res_drop(ZN_DROP_CHAIN_END);
		hop = &chain->hops[pos];
		if (hop->type == ZN_STEP_PORT)
			return hop->id < rt->n_ports ?
				(struct zn_res){ .type = ZN_RES_PORT,
						 .id = hop->id } :
				res_drop(ZN_DROP_BAD_ACTION);
		if (hop->type != ZN_STEP_SERVICE)
			return res_drop(ZN_DROP_CHAIN);
		if (hops > ZN_HOP_LIMIT)
			return res_drop(ZN_DROP_HOP_LIMIT);
		return pick_instance(w, rt, hop->id, m, (uint8_t)pos,
				     (uint8_t)hops);
	case ZN_ACT_TO_SERVICE:
		if (meta->dest == 0 || meta->dest >= ZN_MAX_SERVICES)
			return res_drop(ZN_DROP_BAD_ACTION);
		if (hops > ZN_HOP_LIMIT)
			return res_drop(ZN_DROP_HOP_LIMIT);
		return pick_instance(w, rt, meta->dest, m, meta->chain_pos,
				     (uint8_t)hops);
	case ZN_ACT_OUT:
		if (meta->dest >= rt->n_ports)
			return res_drop(ZN_DROP_BAD_ACTION);
		return (struct zn_res){ .type = ZN_RES_PORT, .id = meta->dest };
	case ZN_ACT_DROP:
		return res_drop(ZN_DROP_NF);
	default:
		return res_drop(ZN_DROP_BAD_ACTION);
	}
}

/*
 * Resolve a burst. Packets of a burst mostly share their routing fields
 * (action, chain, position, hops, dest: the first 6 bytes of the meta);
 * such a packet reuses the previous decision unless that decision depends
 * on the flow hash (a service with several replicas). Counts the actions
 * into @p act (if not NULL). @return true if one decision, res[0], applies
 * to the whole burst (then res[1..] are not written).
 */
static inline bool
resolve_burst(struct zn_worker *w, const struct zn_route *rt,
	      struct rte_mbuf **pkts,
	      struct zn_res *res, unsigned int n, uint64_t *act)
{
	const uint64_t mask = 0x0000ffffffffffffULL;
	uint64_t key0, key;
	unsigned int i, j;
	bool reuse;

	memcpy(&key0, zn_pkt_meta(pkts[0]), sizeof(key0));
	key0 &= mask;
	res[0] = zn_route_resolve(w, rt, pkts[0]);
	reuse = res[0].type != ZN_RES_NF || rt->svc[res[0].svc].n <= 1;
	for (i = 1; i < n; i++) {
		memcpy(&key, zn_pkt_meta(pkts[i]), sizeof(key));
		if ((key & mask) != key0)
			break;
	}
	if (reuse && i == n) {
		if (act != NULL)
			act[RTE_MIN((unsigned int)(key0 & 0xff),
				    (unsigned int)ZN_ACT_MAX)] += n;
		return true;
	}
	/* Mixed burst: one decision per run of equal keys. */
	for (j = 0; j < n; j++) {
		memcpy(&key, zn_pkt_meta(pkts[j]), sizeof(key));
		key &= mask;
		if (act != NULL)
			act[RTE_MIN((unsigned int)(key & 0xff),
				    (unsigned int)ZN_ACT_MAX)]++;
		if (j > 0 && reuse && key == key0) {
			res[j] = res[j - 1];
			continue;
		}
		res[j] = zn_route_resolve(w, rt, pkts[j]);
		key0 = key;
		reuse = res[j].type != ZN_RES_NF || rt->svc[res[j].svc].n <= 1;
	}
	return false;
}

static inline bool
res_same(const struct zn_res *a, const struct zn_res *b)
{
	uint64_t x, y;

	memcpy(&x, a, sizeof(x));
	memcpy(&y, b, sizeof(y));
	return x == y;
}

static inline unsigned int
deliver_drop(struct zn_worker *w, const struct zn_res *r,
	     struct rte_mbuf **pkts, unsigned int n, uint64_t *src_drops)
{
	rte_pktmbuf_free_bulk(pkts, n);
	w->shm->stats.drops[r->reason] += n;
	src_drops[r->reason] += n;
	return n;
}

static inline unsigned int
deliver_nf(struct zn_worker *w, const struct zn_res *r,
	   struct rte_mbuf **pkts, unsigned int n)
{
	unsigned int k;

	/* Idempotent: a packet not enqueued now gets the same values again. */
	for (unsigned int i = 0; i < n; i++) {
		struct zn_pkt_meta *meta = zn_pkt_meta(pkts[i]);

		meta->chain_pos = r->pos;
		meta->hops = r->hops;
		meta->action = ZN_ACT_NEXT;
	}
	k = rte_ring_mp_enqueue_burst(w->mgr->nf_rx[r->id], (void **)pkts, n,
				      NULL);
	if (k > 0)
		zn_db_ring(&w->mgr->shm->nfs[r->id].db);
	return k;
}

/* Send what the port takes; keep the rest in order. */
static unsigned int
flush_txbuf(struct zn_worker *w, uint16_t port)
{
	struct zn_txbuf *tb = &w->txbuf[port];
	struct zn_port *p = &w->mgr->ports[port];
	uint16_t q = w->txq[port], sent;

	if (tb->n == 0)
		return 0;
	if (p->txq_shared)
		rte_spinlock_lock(&p->txq_lock[q]);
	sent = rte_eth_tx_burst(p->port_id, q, tb->pkts, tb->n);
	if (p->txq_shared)
		rte_spinlock_unlock(&p->txq_lock[q]);
	w->shm->port[port].tx += sent;
	if (sent == tb->n) {
		tb->n = 0;
		tb->blocked_since = 0;
		return sent;
	}
	w->shm->port[port].tx_retry++;
	if (sent > 0 || tb->blocked_since == 0) {
		tb->blocked_since = w->now;
	} else if (w->stall_cycles != 0 &&
		   w->now - tb->blocked_since > w->stall_cycles) {
		/* The port took nothing for stall_ms: a dead link. */
		rte_pktmbuf_free_bulk(tb->pkts, tb->n);
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
	memcpy(&tb->pkts[tb->n], pkts, k * sizeof(void *));
	tb->n = (uint16_t)(tb->n + k);
	if (tb->n >= ZN_BURST)
		flush_txbuf(w, port);
	return k;
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

	while (st->head < st->tail) {
		struct zn_res *r = &st->res[st->uniform ? 0 : st->head];
		struct rte_mbuf **pkts = &st->pkts[st->head];
		unsigned int run = 1, k;

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
			*r = pick_instance(w, rt, r->svc, pkts[0], r->pos,
					   r->hops);
		}
		if (st->uniform)
			run = (unsigned int)(st->tail - st->head);
		else
			while (st->head + run < st->tail &&
			       res_same(&st->res[st->head + run], r))
				run++;
		switch (r->type) {
		case ZN_RES_NF:
			k = deliver_nf(w, r, pkts, run);
			break;
		case ZN_RES_PORT:
			k = deliver_port(w, r->id, pkts, run);
			break;
		default:
			k = deliver_drop(w, r, pkts, run, src_drops);
			break;
		}
		st->head = (uint16_t)(st->head + k);
		moved += k;
		if (k == run) {
			st->blocked_since = 0;
			continue;
		}
		if (k > 0 || st->blocked_since == 0) {
			st->blocked_since = w->now;
		} else if (w->stall_cycles != 0 &&
			   w->now - st->blocked_since > w->stall_cycles) {
			struct zn_res d = res_drop(ZN_DROP_STALLED);

			deliver_drop(w, &d, &st->pkts[st->head], run,
				     src_drops);
			st->head = (uint16_t)(st->head + run);
			st->blocked_since = 0;
			continue;
		}
		w->shm->stats.stalls++;
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
prefetch_ring(const struct rte_ring *r)
{
	uint32_t head = r->cons.head;
	uint32_t n = RTE_MIN(__atomic_load_n(&r->prod.tail, __ATOMIC_RELAXED) -
			     head, ZN_BURST) & ~7u;
	void *const *slots = (void *const *)&r[1];

	for (uint32_t i = 0; i < n; i += 8)
		rte_prefetch0(&slots[(head + i) & r->mask]);
}

/* Packets an NF handed back: route them on. */
static unsigned int
drain_nf(struct zn_worker *w, const struct zn_route *rt, uint16_t slot)
{
	struct zn_nf_slot *ns = &w->mgr->shm->nfs[slot];
	struct zn_stage *st = &w->nf_stage[slot];
	unsigned int moved = 0, n, staged;

	if (st->tail != 0) {
		moved = flush_stage(w, rt, st, ns->mstats.drops);
		if (st->tail != 0)
			goto out;
	}
	n = rte_ring_sc_dequeue_burst(w->mgr->nf_tx[slot], (void **)st->pkts,
				      ZN_BURST, NULL);
	if (n == 0)
		goto out;
	ns->mstats.dequeued += n;
	zn_db_ring(&ns->db); /* the NF may be waiting for TX ring room */
	for (unsigned int i = 0; i < n; i++)
		rte_prefetch0(zn_pkt_meta(st->pkts[i]));
	if (rt->rehash_every_hop) /* the naive baseline: look up again */
		zn_fdir_classify(w, rt, st->pkts, n);
	st->uniform = resolve_burst(w, rt, st->pkts, st->res, n,
				    ns->mstats.act);
	st->head = 0;
	st->tail = (uint16_t)n;
	w->shm->stats.routed += n;
	moved += n;
	flush_stage(w, rt, st, ns->mstats.drops);
out:
	staged = (unsigned int)(st->tail - st->head);
	if (ns->mstats.staged != staged)
		ns->mstats.staged = staged;
	return moved;
}

/* The NIC's RSS hash (symmetric key, port.c) is the flow hash when there
 * is one; otherwise it is computed in software when first needed. */
static inline void
ingress_meta(struct rte_mbuf *m, uint16_t port)
{
	struct zn_pkt_meta *meta = zn_pkt_meta(m);
	bool rss = (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0;

	*meta = (struct zn_pkt_meta){
		.action = ZN_ACT_NEXT,
		.chain_pos = ZN_CHAIN_POS_START,
		.in_port = port,
		.flow_hash = rss ? m->hash.rss : 0,
		.flags = rss ? ZN_PKT_F_HASH_VALID | ZN_PKT_F_HASH_RSS : 0,
	};
}

static void
ingress_drop_rest(struct zn_worker *w, struct zn_stage *st, uint64_t *drops)
{
	struct zn_res d = res_drop(ZN_DROP_INGRESS_FULL);
	unsigned int n = (unsigned int)(st->tail - st->head);

	deliver_drop(w, &d, &st->pkts[st->head], n, drops);
	st->head = st->tail = 0;
}

/* Packets entering from a port queue. */
static unsigned int
poll_rxq(struct zn_worker *w, const struct zn_route *rt, struct zn_rxq *rq)
{
	struct zn_port_wstats *ps = &w->shm->port[rq->port];
	struct zn_stage *st = &rq->stage;
	unsigned int moved = 0, n;

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
	if (!w->mgr->rx_enabled)
		return moved;
	n = rte_eth_rx_burst(w->mgr->ports[rq->port].port_id, rq->queue,
			     st->pkts, ZN_BURST);
	if (n == 0)
		return moved;
	ps->rx += n;
	for (unsigned int i = 0; i < n; i++)
		ingress_meta(st->pkts[i], rq->port);
	zn_fdir_classify(w, rt, st->pkts, n);
	st->uniform = resolve_burst(w, rt, st->pkts, st->res, n, NULL);
	st->head = 0;
	st->tail = (uint16_t)n;
	w->shm->stats.routed += n;
	flush_stage(w, rt, st, ps->drops);
	if (st->tail != 0 && w->mgr->cfg.ingress == ZN_INGRESS_DROP)
		ingress_drop_rest(w, st, ps->drops);
	return moved + n;
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
	return false;
}

/* Sleeper's re-check: does an NF drained by this worker have packets?
 * Reads only shared, never-freed state: the worker is RCU-offline here. */
static bool
worker_has_work(void *arg)
{
	struct zn_worker *w = arg;
	struct zn_mgr *m = w->mgr;

	if (m->quit)
		return true;
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		const struct zn_nf_slot *ns = &m->shm->nfs[s];

		if (ns->ctl.state != ZN_NF_FREE && ns->ctl.worker == w->id &&
		    m->nf_tx[s] != NULL && rte_ring_count(m->nf_tx[s]) > 0)
			return true;
	}
	return false;
}

int
zn_worker_main(void *arg)
{
	struct zn_worker *w = arg;
	struct zn_mgr *m = w->mgr;
	uint64_t sleep_us = SLEEP_MIN_US;
	unsigned int idle = 0;

	rte_rcu_qsbr_thread_register(m->qsbr, w->id);
	rte_rcu_qsbr_thread_online(m->qsbr, w->id);
	w->shm->stats.online = 1;
	while (!m->quit) {
		const struct zn_route *rt =
			__atomic_load_n(&m->route, __ATOMIC_ACQUIRE);
		unsigned int work = 0;
		uint64_t timeout;
		bool pending;

		w->now = rte_rdtsc();
		if (w->tx_role) {
			for (unsigned int i = 0; i < rt->n_drain[w->id]; i++)
				work += drain_nf(w, rt, rt->drain[w->id][i]);
			for (unsigned int i = 0; i < rt->n_drain[w->id]; i++)
				prefetch_ring(m->nf_tx[rt->drain[w->id][i]]);
		}
		if (w->rx_role)
			for (unsigned int q = 0; q < w->n_rxq; q++)
				work += poll_rxq(w, rt, &w->rxq[q]);
		pending = flush_all_txbufs(w, &work);
		w->shm->stats.loops++;
		rte_rcu_qsbr_quiescent(m->qsbr, w->id);
		if (work != 0) {
			w->shm->stats.busy_loops++;
			idle = 0;
			sleep_us = SLEEP_MIN_US;
			continue;
		}
		if (++idle < IDLE_SPIN) {
			rte_pause();
			continue;
		}
		if (idle < IDLE_YIELD) {
			sched_yield(); /* NFs sharing our core may run */
			continue;
		}
		if (pending || stages_pending(w)) {
			timeout = SLEEP_BLOCKED_US;
		} else if (w->n_rxq > 0 && w->rx_role) {
			timeout = sleep_us;
			sleep_us = RTE_MIN(sleep_us * 2,
					   (uint64_t)m->cfg.idle_sleep_us);
		} else {
			timeout = SLEEP_NO_PORTS_US;
		}
		rte_rcu_qsbr_thread_offline(m->qsbr, w->id);
		zn_db_wait(&w->shm->db, worker_has_work, w, timeout);
		rte_rcu_qsbr_thread_online(m->qsbr, w->id);
	}
	/* Last chance for buffered output; the rest is freed at shutdown. */
	w->now = rte_rdtsc();
	for (uint16_t p = 0; p < m->n_ports; p++)
		flush_txbuf(w, p);
	w->shm->stats.online = 0;
	rte_rcu_qsbr_thread_offline(m->qsbr, w->id);
	rte_rcu_qsbr_thread_unregister(m->qsbr, w->id);
	return 0;
}
