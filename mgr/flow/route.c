/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Routing state, control side: build an immutable snapshot (services and
 * their balancing (lb.c), chains and wildcard rules (fdir.c), which NF TX
 * rings each worker drains), publish it with one atomic store, and free
 * the old one once every worker has passed a quiescent state
 * (rte_rcu_qsbr). The flow director and load balancing register as
 * sources (zn_route_add_source): each fills its part of every snapshot,
 * and changes its state, then publishes; this module calls neither but
 * through the fill it was given. Workers never see a half-written chain
 * or service table, and nothing they may still read is freed under them.
 */

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_pause.h>
#include <rte_rcu_qsbr.h>

#include "../core/event.h"
#include "../core/mgr.h"
#include "../nf/registry.h"
#include "route.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"
#include "../core/subsys.h"

#define MAX_SOURCES 8

/* The snapshot's sources, in registration order (control thread). */
static zn_route_fill_fn *sources[MAX_SOURCES];
static unsigned int n_sources;

int
zn_route_add_source(struct zn_mgr *m, zn_route_fill_fn *fill)
{
	RTE_SET_USED(m);
	if (n_sources == MAX_SOURCES)
		return -ENOSPC;
	sources[n_sources++] = fill;
	return 0;
}

/* Fill @p rt, the snapshot no worker can see, from the control state. */
static void
build(struct zn_mgr *m, struct zn_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->version = ++m->route.version;
	rt->n_ports = m->n_ports;

	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		const struct zn_nf_slot *slot = zn_slot(m, s);
		uint32_t state = zn_nf_state(m, s);
		uint16_t w = m->nf[s].worker;

		if (state == ZN_NF_FREE)
			continue;
		rt->nf_group[s] = zn_group_id(m->nf[s].group);
		/* ctl is the NF's to write too: an index out of range is
		 * garbage (the registry checked the service it set). */
		if (state == ZN_NF_RUNNING &&
		    slot->ctl.service_id < ZN_MAX_SERVICES) {
			struct zn_svc_entry *e = &rt->svc[slot->ctl.service_id];

			if (e->n < ZN_MAX_REPLICAS) {
				e->inst[e->n++] = (uint16_t)s;
				rt->nf_svc[s] = slot->ctl.service_id;
			}
		}
		/* Every NF not yet freed keeps its TX ring drained. */
		if (w < m->dp.n_workers)
			rt->drain[w][rt->n_drain[w]++] = (uint16_t)s;
	}
	for (unsigned int i = 0; i < n_sources; i++)
		sources[i](m, rt);
	rt->direct = m->cfg.handoff == ZN_HANDOFF_DIRECT &&
		     !rt->rehash_every_hop;
}

/* Take queue (i, q) out of NF @p s's list of port RX queues in @p rt. */
static void
rxq_unlist(struct zn_route *rt, unsigned int s, unsigned int i,
	   unsigned int q)
{
	uint8_t *n = &rt->n_nf_rxq[s];

	for (unsigned int j = 0; j < *n; j++) {
		if (rt->nf_rxq[s][j].port != i || rt->nf_rxq[s][j].queue != q)
			continue;
		memmove(&rt->nf_rxq[s][j], &rt->nf_rxq[s][j + 1],
			(*n - j - 1) * sizeof(rt->nf_rxq[s][0]));
		(*n)--;
		return;
	}
}

/* Does @p next give the workers a port RX queue @p live did not? */
static bool
rxq_to_workers(const struct zn_route *live, const struct zn_route *next)
{
	if (live == NULL)
		return false;
	for (unsigned int i = 0; i < next->n_ports && i < ZN_MAX_PORTS; i++)
		for (unsigned int q = 0; q < ZN_NF_RXQ_MAX; q++)
			if (next->rxq_nf[i][q] == ZN_RXQ_WORKERS &&
			    live->rxq_nf[i][q] != ZN_RXQ_WORKERS)
				return true;
	return false;
}

/* Port RX queues that change pollers between the live snapshot and @p next
 * (mgr/port/port_nfrx.c fills who polls them) are given to nobody in
 * @p next; true if there were any: then @p next is to be published
 * first, and once every reader passed it (the publish waits) the old
 * pollers poll them no more and the real next snapshot may give them to
 * their new ones. No two threads ever poll a queue at once. */
static bool
rxq_handover(const struct zn_route *live, struct zn_route *next)
{
	bool moved = false;

	if (live == NULL)
		return false;
	for (unsigned int i = 0; i < next->n_ports && i < ZN_MAX_PORTS; i++)
		for (unsigned int q = 0; q < ZN_NF_RXQ_MAX; q++) {
			uint8_t a = live->rxq_nf[i][q], b = next->rxq_nf[i][q];

			if (a == b || a == ZN_RXQ_NOBODY ||
			    b == ZN_RXQ_NOBODY)
				continue;
			if (b != ZN_RXQ_WORKERS && b <= ZN_MAX_NFS)
				rxq_unlist(next, b - 1u, i, q);
			next->rxq_nf[i][q] = ZN_RXQ_NOBODY;
			moved = true;
		}
	return moved;
}

/* A reader of the NFs' RCU variable that holds back the grace period now
 * begun at @p token: online, since before it. */
static bool
nf_reader_blocks(const struct zn_mgr *m, const struct rte_rcu_qsbr *q,
		 const struct zn_group *group, unsigned int slot,
		 uint64_t token)
{
	uint64_t c;

	/* Only the NF registered in the slot reports here, if it is of
	 * this variable's group (what the registry says, not the slot) */
	if (m->nf[slot].group != group ||
	    zn_nf_state(m, slot) == ZN_NF_FREE)
		return false;
	c = __atomic_load_n(&q->qsbr_cnt[slot].cnt, __ATOMIC_ACQUIRE);
	return c != 0 && c < token;
}

/* Wait until no NF packet thread can still read what was unpublished.
 * An NF is online only while it resolves and hands over a burst (no
 * waiting inside), so this is microseconds, unless the NF is off its core
 * or gone: one that died online is put offline here (its process cannot
 * read any more); one alive but stuck online for ZN_READER_STUCK_NS
 * (stopped, traced) is killed, so that no NF can hold routing changes,
 * and with them the control thread, forever. */
#define ZN_READER_STUCK_NS (2ULL * 1000 * 1000 * 1000)

/*
 * The NFs' RCU variables are in memory NFs write (the EAL's, a group's
 * file), and DPDK's rte_rcu_qsbr_start/check and thread_register follow
 * their header (the bitmap's place and length: max_threads, num_elems)
 * wherever garbage there points. So the manager keeps each variable's
 * token itself (@p tok), stores it where NFs read it (what
 * rte_rcu_qsbr_quiescent and thread_online copy into their counter), and
 * checks the counter of each slot the registry says reports there, at
 * its fixed place (qsbr_cnt[slot], as DPDK lays it out). Readers use
 * DPDK's functions unchanged.
 */
static bool
nf_readers_passed(const struct zn_mgr *m, const struct rte_rcu_qsbr *q,
		  const struct zn_group *group, uint64_t token)
{
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		if (nf_reader_blocks(m, q, group, s, token))
			return false;
	return true;
}

/* @p group: the variable's (NULL: NFs of no group) */
static void
sync_nfs(struct zn_mgr *m, struct rte_rcu_qsbr *q, struct zn_group *group)
{
	uint64_t *tok = group != NULL ? &group->qtoken : &m->route.nf_qtoken;
	uint64_t token, t0 = 0;
	unsigned int spins = 0;

	/* past the variable's initial token (__RTE_QSBR_CNT_INIT) */
	token = *tok = RTE_MAX(*tok, (uint64_t)__RTE_QSBR_CNT_INIT) + 1;
	__atomic_store_n(&q->token, token, __ATOMIC_RELEASE);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	while (!nf_readers_passed(m, q, group, token)) {
		if (++spins < 64) {
			rte_pause();
			continue;
		}
		/* On few cores the reader needs ours to finish its burst. */
		sched_yield();
		if (spins % 256 != 0)
			continue;
		if (t0 == 0)
			t0 = zn_now_ns();
		for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
			struct zn_nf_slot *slot = zn_slot(m, s);

			if (!nf_reader_blocks(m, q, group, s, token))
				continue;
			if (!zn_proc_alive(zn_registry_pid(m, s),
					   slot->ctl.start_time)) {
				ZN_LOG(WARNING, "NF '%s' (instance %u) died "
				       "while reading the routing table",
				       slot->ctl.name, s);
				rte_rcu_qsbr_thread_offline(q, s);
			} else if (zn_now_ns() - t0 > ZN_READER_STUCK_NS) {
				ZN_LOG(ERR, "NF '%s' (pid %u, instance %u) "
				       "has held the routing table for 2 s "
				       "(stopped?): killed", slot->ctl.name,
				       (unsigned int)zn_registry_pid(m, s), s);
				zn_event("nf.killed", "NF '%s' (instance %u) "
					 "stuck reading the routing table",
					 slot->ctl.name, s);
				zn_registry_kill(m, s, SIGKILL);
				t0 = zn_now_ns();
			}
		}
	}
}

void
zn_route_sync(struct zn_mgr *m)
{
	rte_rcu_qsbr_synchronize(m->route.qsbr, RTE_QSBR_THRID_INVALID);
	sync_nfs(m, m->shm->rt.qsbr, NULL);
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++)
		if (m->trust.group[g].file.qsbr != NULL)
			sync_nfs(m, m->trust.group[g].file.qsbr, &m->trust.group[g]);
}

/* The RCU variable the NF in @p slot reports to: its group's (in the
 * group's file), or the one of NFs of no group. */
static struct rte_rcu_qsbr *
nf_qsbr(const struct zn_mgr *m, unsigned int slot)
{
	const struct zn_group *g = m->nf[slot].group;

	return g != NULL && g->file.qsbr != NULL ? g->file.qsbr :
	       m->shm->rt.qsbr;
}

/* A reader comes and goes: offline (its counter, at its fixed place).
 * Not rte_rcu_qsbr_thread_register: it follows the variable's header,
 * and the check reads the slots the registry names (sync_nfs). */
void
zn_route_reader_add(struct zn_mgr *m, unsigned int slot)
{
	rte_rcu_qsbr_thread_offline(nf_qsbr(m, slot), slot);
}

void
zn_route_reader_del(struct zn_mgr *m, unsigned int slot)
{
	/* Its process can no longer run: whatever it left online. */
	rte_rcu_qsbr_thread_offline(nf_qsbr(m, slot), slot);
}

/* Each trust group's NFs read a copy in the group's file (mgr/trust/group.c):
 * another group's NFs cannot write it. Published with the shared one. */
static void
publish_groups(struct zn_mgr *m, const struct zn_route *nf)
{
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		struct zn_group_file *gm = &m->trust.group[g].file;
		struct zn_group_home *h = zn_group_home_at(g);
		struct zn_route *spare = gm->rt_spare;

		if (m->trust.group[g].pool == NULL || spare == NULL)
			continue;
		memcpy(spare, nf, sizeof(*spare));
		/* The LEAST_LOADED pins are in the EAL's memory, which the
		 * group's NFs do not map: they hand such packets to a worker
		 * (zn_pick_instance) */
		for (unsigned int s = 0; s < ZN_MAX_SERVICES; s++)
			spare->svc[s].pins = NULL;
		gm->rt_spare = gm->rt_live;
		gm->rt_live = spare;
		__atomic_store_n(&h->hdr.route, spare, __ATOMIC_RELEASE);
		__atomic_store_n(&h->hdr.version, nf->version,
				 __ATOMIC_RELEASE);
	}
}

/* Two snapshots for the workers, made at start in the manager's private
 * memory (private_heap.c: no NF can change what a worker resolves with), and
 * two copies for NFs in hugepage memory (they read them to hand packets
 * to each other; without the workers-only flow director pointers): the
 * published ones and the spares, built and published next; once every
 * reader passed a quiescent state the old ones are the spares.
 * Publishing allocates nothing, so it cannot fail (a failing ~200 KB
 * allocation used to leave callers half done). Only the control thread
 * publishes. */
static void publish(struct zn_mgr *m, struct zn_route *rt);

void
zn_route_publish(struct zn_mgr *m)
{
	build(m, m->route.spare);
	/* Port RX queues that change hands (mgr/port/port_nfrx.c) are polled
	 * by nobody in a first snapshot: once it is published (and every
	 * reader passed it) their old owners poll them no more. */
	bool wake;

	if (rxq_handover(m->route.live, m->route.spare)) {
		publish(m, m->route.spare);
		build(m, m->route.spare);
	}
	wake = rxq_to_workers(m->route.live, m->route.spare);
	publish(m, m->route.spare);
	/* a worker that polled no port sleeps long: it has one now */
	for (unsigned int w = 0; wake && w < m->dp.n_workers; w++)
		zn_db_ring(&m->shm->workers[w].db);
}

static void
publish(struct zn_mgr *m, struct zn_route *rt)
{
	struct zn_route *nf = m->route.nf_spare;

	memcpy(nf, rt, sizeof(*nf));
	nf->acl[0] = nf->acl[1] = NULL; /* workers only, private memory */
	nf->exact = NULL;
	nf->oft = NULL;
	m->route.spare = __atomic_exchange_n(&m->route.live, rt,
					     __ATOMIC_ACQ_REL);
	m->route.nf_spare = m->shm->rt.route;
	__atomic_store_n(&m->shm->rt.route, nf, __ATOMIC_RELEASE);
	__atomic_store_n(&m->shm->rt.version, rt->version, __ATOMIC_RELEASE);
	publish_groups(m, nf);
	/* After this no reader holds a reference to the old snapshot, nor
	 * sends to an NF the new one no longer accepts. */
	zn_route_sync(m);
}

/* Make the snapshots (an empty one published) and the RCU state. 0 or
 *  -errno. */
static int
zn_route_init(struct zn_mgr *m)
{
	size_t sz = rte_rcu_qsbr_get_memsize(ZN_MAX_WORKERS);
	size_t nsz = rte_rcu_qsbr_get_memsize(ZN_MAX_NFS);
	struct rte_rcu_qsbr *nq;

	m->route.qsbr = rte_zmalloc_socket("zn_qsbr", sz, RTE_CACHE_LINE_SIZE,
				     m->priv.socket);
	nq = rte_zmalloc("zn_qsbr_nf", nsz, RTE_CACHE_LINE_SIZE);
	if (m->route.qsbr == NULL || nq == NULL)
		return -ENOMEM;
	m->shm->rt.qsbr = nq;
	if (rte_rcu_qsbr_init(m->route.qsbr, ZN_MAX_WORKERS) < 0 ||
	    rte_rcu_qsbr_init(nq, ZN_MAX_NFS) < 0)
		return -EINVAL;
	for (int i = 0; i < 2; i++) {
		struct zn_route *rt = rte_zmalloc_socket("zn_route",
							 sizeof(*rt),
							 RTE_CACHE_LINE_SIZE,
							 m->priv.socket);
		struct zn_route *nf = rte_zmalloc("zn_route_nf", sizeof(*nf),
						  RTE_CACHE_LINE_SIZE);

		if (rt == NULL || nf == NULL) {
			rte_free(rt);
			rte_free(nf);
			return -ENOMEM;
		}
		if (i == 0) {
			m->route.spare = rt;
			m->route.nf_spare = nf;
		} else {
			m->route.live = rt;
			m->shm->rt.route = nf;
		}
	}
	zn_route_publish(m);
	return 0;
}

static void
zn_route_fini(struct zn_mgr *m)
{
	if (m->shm != NULL) {
		rte_free(m->shm->rt.route);
		rte_free(m->shm->rt.qsbr);
		m->shm->rt.route = NULL;
		m->shm->rt.qsbr = NULL;
	}
	rte_free(m->route.live);
	rte_free(m->route.spare);
	rte_free(m->route.nf_spare);
	m->route.live = m->route.spare = m->route.nf_spare = NULL;
	n_sources = 0;
	rte_free(m->route.qsbr);
	m->route.qsbr = NULL;
}

static const struct zn_subsys subsys = {
	.name = "route", .order = ZN_SUBSYS_ROUTE,
	.init = zn_route_init, .fini = zn_route_fini,
};
ZN_SUBSYS_REGISTER(subsys)
