/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Run to completion at ingress (control side): NFs that poll a port's RX
 * queues themselves, so that a packet goes from the port through its
 * first NF without a worker's hand-off (docs/architecture.md "How a
 * packet travels", "NFs that own a port's RX queues").
 *
 * Decided per port at start (--nf-rx-queues N): a port whose PMD
 * qualifies gets N RX queues (at least the workers'; RSS over them where
 * the PMD has it), and every one of them may be owned by an NF. Only a
 * PMD whose queue an NF killed inside rx_burst leaves whole, and whose
 * burst the manager can then find exactly, qualifies: one that takes
 * its buffers from the pool in the call and keeps none between calls
 * (what it had taken is tagged as the NF's in its pool account,
 * mgr/nf/pool_acct.h, which the manager sweeps), or one that dequeues
 * from a single-consumer ring (below); once the call returned the
 * ledger owns the burst (lib/common/zn_ledger.h, ZN_LEDGER_RX_PORT).
 * Read in DPDK 22.11's drivers:
 *   net_null  allocates each packet in rx_burst, keeps nothing: yes;
 *   net_tap   keeps a buffer chain per queue between calls, replaced in
 *             the call (a death in the middle leaves it half replaced);
 *   net_ring  dequeues from a single-consumer rte_ring and takes no
 *             buffer: the NF records the ring's consumer tail before the
 *             call (ZN_LEDGER_PORT_RX), and a dead NF's burst is what
 *             the tail moved past, its half-done dequeue undone before
 *             the queue has another poller (zn_port_nfrx_repair): yes;
 *   PCI PMDs  keep a descriptor ring of buffers, refilled in the call;
 *   net_pcap, net_af_packet: not usable from an NF at all (port_nftx.c);
 * the others stay with the workers.
 *
 * Who polls each queue is part of every routing snapshot (nfrx_fill): the
 * running instances of the service that is the first hop of the port's
 * ingress chain, queue q to the q-th of them in turn, each NF at most
 * ZN_NF_RXQ_PER_NF; while nothing but a worker can classify what enters
 * (flow director rules, the OpenFlow table, tenants' slices, the fabric
 * port), or the first hop is no service of this host, or no instance can
 * take a queue, the workers poll it. An NF ingests its queue's packets as
 * the worker would have (metadata, the port's chain, the first hop) and
 * hands them to its handler. A queue changes hands over two snapshots
 * (mgr/flow/route.c rxq_handover): first nobody polls it, then, once
 * every reader has passed the first, its new owner does.
 */

#include <stdio.h>
#include <string.h>

#include <jansson.h>
#include <rte_ethdev.h>
#include <rte_ring.h>

#include "../core/mgr.h"
#include "port.h"
#include "../fabric/fabric.h"
#include "../flow/fdir.h"
#include "../flow/route.h"
#include "../core/subsys.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_ledger.h"
#include "../../lib/common/zn_route_hot.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"

static const struct {
	const char *driver;
	uint16_t kind;
} nfrx_drivers[] = {
	{ "net_null", ZN_PORT_RX_ALLOC },
	{ "net_ring", ZN_PORT_RX_RING },
};

/* A net_ring port's RX queue q is its ring ZN_PORT_RX_RING_FMT (q, name),
 * made single-consumer by the driver (DPDK 22.11 rte_eth_ring.c): all of
 * them found, or none of the port's queues is an NF's. */
static const char *
find_rings(struct zn_port *p, unsigned int n)
{
	for (unsigned int q = 0; q < n; q++) {
		char name[RTE_RING_NAMESIZE];
		struct rte_ring *r;

		if (snprintf(name, sizeof(name), ZN_PORT_RX_RING_FMT, q,
			     p->name) >= (int)sizeof(name))
			return "the driver's ring names are too long";
		r = rte_ring_lookup(name);
		if (r == NULL)
			return "the driver's rings not found";
		if (!(r->flags & RING_F_SC_DEQ))
			return "the driver's ring is not single-consumer";
		p->nf_rx_ring[q] = r;
	}
	return NULL;
}

void
zn_port_nfrx_plan(struct zn_mgr *m, struct zn_port *p,
		  const struct rte_eth_dev_info *info)
{
	unsigned int n = m->cfg.nf_rx_queues, i;

	p->nf_rxq_n = 0;
	p->nf_rx_kind = 0;
	if (n == 0) {
		p->nf_rx_why = "--nf-rx-queues 0";
		return;
	}
	if (m->cfg.handoff != ZN_HANDOFF_DIRECT) {
		p->nf_rx_why = "--handoff worker";
		return;
	}
	if (p->group != NULL) {
		p->nf_rx_why = "port of a trust group";
		return;
	}
	for (i = 0; i < RTE_DIM(nfrx_drivers); i++)
		if (strcmp(p->driver, nfrx_drivers[i].driver) == 0)
			break;
	if (i == RTE_DIM(nfrx_drivers)) {
		p->nf_rx_why = "driver keeps RX buffers between calls";
		return;
	}
	n = RTE_MAX(n, (unsigned int)p->nb_rxq);
	n = RTE_MIN(n, RTE_MIN((unsigned int)info->max_rx_queues,
			       (unsigned int)ZN_NF_RXQ_MAX));
	if (n == 0) {
		p->nf_rx_why = "no RX queue";
		return;
	}
	if (nfrx_drivers[i].kind == ZN_PORT_RX_RING) {
		p->nf_rx_why = find_rings(p, n);
		if (p->nf_rx_why != NULL)
			return;
	}
	p->nf_rx_kind = nfrx_drivers[i].kind;
	p->nb_rxq = (uint16_t)n;
	p->nf_rxq_n = (uint16_t)n;
	p->nf_rx_why = NULL;
}

/* Can an NF take what enters port @p i, or only a worker? (Flow
 * director rules, the OpenFlow table, tenants' slices and tunnels are
 * the workers' to apply.) */
static const char *
ingress_by_workers(struct zn_mgr *m, const struct zn_route *rt,
		   unsigned int i)
{
	if (zn_fdir_classifies(m))
		return "flow director rules";
	if (rt->oft != NULL)
		return "OpenFlow table";
	if (rt->fabric != NULL && zn_fabric_port(rt->fabric) == i)
		return "fabric port";
	if (m->tn != NULL && m->tn->port_mask[i] != 0)
		return "sliced among tenants";
	if (rt->rehash_every_hop)
		return "--fdir-rehash";
	return NULL;
}

/* The chain of what enters port @p i and its first hop's service, 0 if
 * that hop is no service of this host. */
static uint16_t
first_service(const struct zn_route *rt, unsigned int i, uint8_t *chain)
{
	*chain = rt->n_port_chains != 0 ? rt->port_chain[i] : 0;
	return zn_chain_first_service(rt, *chain);
}

/* A source of every routing snapshot (mgr/flow/route.h), registered after
 * every other: it reads what they filled (chains, services, the OpenFlow
 * table, the fabric). route.c gives a queue that changes pollers to
 * nobody first. */
static void
nfrx_fill(struct zn_mgr *m, struct zn_route *rt)
{
	memset(rt->rxq_nf, ZN_RXQ_WORKERS, sizeof(rt->rxq_nf));
	memset(rt->n_nf_rxq, 0, sizeof(rt->n_nf_rxq));
	for (unsigned int i = 0; i < m->n_ports; i++) {
		struct zn_port *p = &m->ports[i];
		uint16_t elig[ZN_MAX_REPLICAS], svc;
		unsigned int k = 0;
		uint8_t chain;

		p->nf_rx_now = NULL;
		if (p->nf_rxq_n == 0)
			continue;
		p->nf_rx_now = ingress_by_workers(m, rt, i);
		if (p->nf_rx_now != NULL)
			continue;
		svc = first_service(rt, i, &chain);
		if (svc == 0) {
			p->nf_rx_now = "first hop is no service here";
			continue;
		}
		for (unsigned int r = 0; r < rt->svc[svc].n; r++) {
			uint16_t s = rt->svc[svc].inst[r];

			/* attached (the NF says so: a lie only stops its own
			 * queue), of no trust group, with room for one more */
			if (s < ZN_MAX_NFS && m->nf[s].group == NULL &&
			    __atomic_load_n(&zn_slot(m, s)->ptx[i].rx_ok,
					    __ATOMIC_RELAXED) == 1 &&
			    rt->n_nf_rxq[s] < ZN_NF_RXQ_PER_NF)
				elig[k++] = s;
		}
		if (k == 0) {
			p->nf_rx_now = "no instance of the first hop took a "
				       "queue";
			continue;
		}
		for (unsigned int q = 0; q < p->nf_rxq_n; q++) {
			uint16_t s = elig[q % k];
			uint8_t *n = &rt->n_nf_rxq[s];

			if (*n == ZN_NF_RXQ_PER_NF)
				continue; /* the workers poll the rest */
			rt->rxq_nf[i][q] = (uint8_t)(s + 1);
			rt->nf_rxq[s][*n] = (struct zn_nf_rxq){
				.port = (uint8_t)i, .queue = (uint8_t)q,
				.chain = chain };
			(*n)++;
		}
	}
}

void
zn_port_nfrx_wake(struct zn_mgr *m)
{
	bool any = false;

	for (unsigned int i = 0; i < m->n_ports; i++)
		any |= m->ports[i].nf_rxq_n != 0;
	/* An NF that owns queues sleeps up to its long idle sleep while RX
	 * is paused (it does not poll them then): woken, it polls at once,
	 * not up to 100 ms after the ports were turned on. */
	for (unsigned int s = 0; any && s < ZN_MAX_NFS; s++)
		if (zn_nf_state(m, s) != ZN_NF_FREE)
			zn_db_ring(&zn_slot(m, s)->db);
}

void
zn_port_nfrx_repair(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	struct zn_ledger *l = &s->ledger;
	unsigned int i = l->port, q = l->rx_queue, n;

	if (__atomic_load_n(&l->phase, __ATOMIC_ACQUIRE) != ZN_LEDGER_PORT_RX)
		return;
	/* the NF's word: a port and queue of a ring, or nothing is done */
	if (i >= m->n_ports || m->ports[i].nf_rx_kind != ZN_PORT_RX_RING ||
	    q >= m->ports[i].nf_rxq_n) {
		zn_ledger_set_phase(l, ZN_LEDGER_IDLE);
		return;
	}
	n = zn_ledger_port_rx_finish(l, m->ports[i].nf_rx_ring[q],
				     s->ptx[i].rx);
	if (n != 0)
		ZN_LOG(INFO, "NF in slot %u died taking %u packets from port "
		       "%u queue %u: they are its, as if it held them", slot,
		       n, i, q);
}

json_t *
zn_port_nfrx_json(struct zn_mgr *m, unsigned int i, struct zn_port_wstats *sum)
{
	struct zn_port *p = &m->ports[i];
	const struct zn_route *rt = m->route.live;
	json_t *owners = json_array();
	uint64_t rx = p->nf_gone.rx;

	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		if (zn_nf_state(m, s) != ZN_NF_FREE)
			rx += zn_slot(m, s)->ptx[i].rx;
	for (unsigned int q = 0; q < p->nf_rxq_n && rt != NULL; q++) {
		uint8_t o = rt->rxq_nf[i][q];

		if (o == ZN_RXQ_WORKERS || o == ZN_RXQ_NOBODY)
			json_array_append_new(owners, json_pack(
				"{s:i, s:s}", "queue", (int)q, "polled_by",
				o == ZN_RXQ_WORKERS ? "workers" : "nobody"));
		else
			json_array_append_new(owners, json_pack(
				"{s:i, s:s, s:i, s:s, s:I}", "queue", (int)q,
				"polled_by", "nf", "instance", (int)o - 1,
				"name", zn_slot(m, o - 1u)->ctl.name, "rx",
				(json_int_t)zn_slot(m, o - 1u)->ptx[i].rx));
	}
	sum->rx += rx;
	return json_pack("{s:i, s:o, s:o, s:I, s:o}", "queues", p->nf_rxq_n,
			 "why_not", p->nf_rx_why ? json_string(p->nf_rx_why) :
			 json_null(), "workers_now", p->nf_rx_now ?
			 json_string(p->nf_rx_now) : json_null(), "rx",
			 (json_int_t)rx, "owners", owners);
}

static int
nfrx_init(struct zn_mgr *m)
{
	return zn_route_add_source(m, nfrx_fill);
}

static const struct zn_subsys subsys = {
	.name = "nf_rx_queues", .order = ZN_SUBSYS_NF_RXQ,
	.init = nfrx_init,
};
ZN_SUBSYS_REGISTER(subsys)
