/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * libzeronf, NF <-> port (control path, and the RX poll): attach the ports
 * the manager gave this NF a TX queue of (ctl.txq, mgr/port/port_nftx.c)
 * and those whose RX queues NFs may own (mgr/port/port_nfrx.c), and only
 * those. The EAL of an NF attaches no port (the manager answers its device
 * scan with nothing); here one vdev is probed in this process alone
 * (rte_vdev_init in a secondary attaches to the primary's device by name:
 * no message to the primary, no other port touched). The PMD's library is
 * loaded first: a sandboxed NF's EAL loaded only the pool's driver. A port
 * that cannot be attached is left to the manager's workers (a warning):
 * the queue stays unused.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <rte_rcu_qsbr.h>

#include "nf_pvt.h"
#include "../common/zn_ledger.h"
#include "../common/zn_route_hot.h"
#include "../common/zn_util.h"

static int
attach(const struct zn_shm_port *sp, uint16_t *pid)
{
	int rc;

	if (rte_eth_dev_get_port_by_name(sp->name, pid) == 0)
		return 0;
	if (dlopen(sp->driver_so, RTLD_NOW | RTLD_GLOBAL) == NULL) {
		ZN_LOG(WARNING, "cannot load %s: %s", sp->driver_so, dlerror());
		return -ENOENT;
	}
	rc = rte_vdev_init(sp->name, NULL);
	if (rc != 0)
		return rc < 0 ? rc : -ENODEV;
	return rte_eth_dev_get_port_by_name(sp->name, pid);
}

/* Port @p i's RX queues may be ours (mgr/port/port_nfrx.c): attached, and
 * said so to the manager. Only with the pool's account on: what the PMD
 * takes in an rx_burst we die in is then found (zn_ledger.h). */
static void
attach_rx(struct zn_nf *nf, unsigned int i, const struct zn_shm_port *sp)
{
	uint16_t pid = 0;
	int rc;

	if (sp->nf_rxq_n == 0 || sp->nf_rxq_n > ZN_NF_RXQ_MAX || nf->guest ||
	    (sp->nf_rx_kind == ZN_PORT_RX_ALLOC && nf->hdr->acct_tags == 0) ||
	    (sp->nf_rx_kind != ZN_PORT_RX_ALLOC &&
	     sp->nf_rx_kind != ZN_PORT_RX_RING))
		return;
	/* a ring's queues: their rings, by the driver's names (the ledger
	 * records a ring's tail before each rx_burst) */
	for (unsigned int q = 0; sp->nf_rx_kind == ZN_PORT_RX_RING &&
				 q < sp->nf_rxq_n; q++) {
		char name[RTE_RING_NAMESIZE];

		nf->prx_ring[i][q] = snprintf(name, sizeof(name),
					      ZN_PORT_RX_RING_FMT, q, sp->name) <
				     (int)sizeof(name) ?
				     rte_ring_lookup(name) : NULL;
		if (nf->prx_ring[i][q] == NULL) {
			ZN_LOG(WARNING, "port %u (%s): ring %s not found: not "
			       "receiving from it in this NF", i, sp->name,
			       name);
			return;
		}
	}
	if (memchr(sp->name, '\0', sizeof(sp->name)) == NULL ||
	    memchr(sp->driver_so, '\0', sizeof(sp->driver_so)) == NULL)
		rc = -EPROTO;
	else
		rc = attach(sp, &pid);
	if (rc == 0 && pid != sp->port_id)
		rc = -EPROTO;
	if (rc < 0) {
		ZN_LOG(WARNING, "port %u (%s): not receiving from it in this "
		       "NF (%s): the manager's workers do", i, sp->name,
		       strerror(-rc));
		return;
	}
	nf->ptx_pid[i] = pid;
	nf->prx_kind[i] = (uint8_t)sp->nf_rx_kind;
	nf->n_prx++;
	__atomic_store_n(&nf->s->ptx[i].rx_ok, 1, __ATOMIC_RELEASE);
}

void
zn_nf_ports_attach(struct zn_nf *nf)
{
	unsigned int n_ports = RTE_MIN((unsigned int)nf->hdr->n_ports,
				       (unsigned int)ZN_MAX_PORTS);

	memset(nf->ptxq, 0, sizeof(nf->ptxq));
	memset(nf->prx_kind, 0, sizeof(nf->prx_kind));
	nf->n_ptxq = 0;
	nf->n_prx = 0;
	nf->cache = NULL;
	/* An NF of a trust group maps none of the EAL's memory, where the
	 * ports' queues are: the manager gives it none (mgr/port/port_nftx.c),
	 * and it never makes a device of its own by the name. */
	if (nf->shm == NULL)
		return;
	for (unsigned int i = 0; i < n_ports; i++) {
		const struct zn_shm_port *sp = &nf->shm->ports[i];
		uint16_t q = nf->s->ctl.txq[i], pid = 0;
		int rc;

		attach_rx(nf, i, sp);
		if (q == 0)
			continue;
		if (sp->nf_txq_n == 0 || q - 1u < sp->nf_txq_first ||
		    q - 1u >= (unsigned int)sp->nf_txq_first + sp->nf_txq_n ||
		    memchr(sp->name, '\0', sizeof(sp->name)) == NULL ||
		    memchr(sp->driver_so, '\0', sizeof(sp->driver_so)) == NULL)
			rc = -EPROTO;
		else
			rc = attach(sp, &pid);
		if (rc == 0 && pid != sp->port_id)
			rc = -EPROTO; /* not the manager's port of that name */
		if (rc < 0) {
			ZN_LOG(WARNING, "port %u (%s): not transmitting on it "
			       "from this NF (%s): the manager's workers do", i,
			       sp->name, strerror(-rc));
			continue;
		}
		nf->ptxq[i] = q;
		nf->ptx_pid[i] = pid;
		nf->n_ptxq++;
		__atomic_store_n(&nf->s->ptx[i].q, q, __ATOMIC_RELEASE);
		ZN_LOG(INFO, "port %u (%s): this NF transmits on TX queue %u",
		       i, sp->name, q - 1u);
	}
}

/* In the packet thread, before its first packet: where the PMD frees what
 * this thread sends. The manager looks into the cache of our lcore when
 * we die (mgr/nf/reclaim.c): used only if this thread is that lcore (an
 * application may run the loop in a thread of its own, whose frees go
 * straight to the pool) and it can take a burst without a flush. In a
 * bundle that lcore is its first NF's, whose cache the process's pool
 * account keeps (nf_acct.c): the manager finds it by the process. */
void
zn_nf_ports_thread(struct zn_nf *nf)
{
	unsigned int lc = rte_lcore_id();
	bool ours = lc == ZN_NF_LCORE_BASE + (unsigned int)nf->slot ||
		    (nf->bundle != NULL && nf->acct != NULL &&
		     nf->acct->cache != NULL &&
		     nf->acct->cache == rte_mempool_default_cache(nf->pool, lc));

	nf->cache = NULL;
	if (nf->n_ptxq == 0 || !ours)
		return;
	nf->cache = rte_mempool_default_cache(nf->pool, lc);
	if (nf->cache != NULL && nf->cache->flushthresh < ZN_BURST)
		nf->cache = NULL;
}

/* What entered from queue @p e now at its first hop, if that is our
 * service (held[0, n): the snapshot's port chain, as a worker's ingress
 * would have set it). Otherwise (a snapshot that gives us the queue names
 * our service as the first hop: never, but the chain is read here anew)
 * they are left at the chain's start, for the flush to send on. */
static void
ingest(struct zn_nf *nf, const struct zn_route *rt, const struct zn_nf_rxq *e,
       unsigned int n)
{
	struct rte_mbuf **held = nf->s->ledger.held;
	bool ours = zn_chain_first_service(rt, e->chain) ==
		    nf->s->ctl.service_id;

	/* as a worker delivers it to its first hop (hop 0, one NF hop); no
	 * worker handed the buffer out: the manager takes it back as a
	 * packet this NF made (mgr/trust/owner_map.h, --validate) */
	struct zn_pkt_meta t = zn_ingress_tmpl(e->port);

	t.chain = e->chain;
	t.flags = ZN_PKT_F_NEW;
	if (ours) {
		t.chain_pos = 0;
		t.hops = 1;
	}
	for (unsigned int i = 0; i < n; i++)
		zn_ingress_meta(held[i], &t);
	nf->rx_pass = !ours;
}

unsigned int
zn_nf_ports_rx(struct zn_nf *nf)
{
	struct zn_nf_slot *s = nf->s;
	struct zn_ledger *l = &s->ledger;
	const struct zn_route *rt;
	unsigned int n = 0, k;

	if (nf->n_prx == 0 ||
	    !__atomic_load_n(&nf->shm->mgr.port_rx, __ATOMIC_ACQUIRE))
		return 0;
	/* Online while it polls: the manager hands a queue to another poller
	 * only once we passed the snapshot that took it from us. */
	rte_rcu_qsbr_thread_online(nf->qsbr, nf->slot);
	rt = __atomic_load_n(nf->rt_route, __ATOMIC_ACQUIRE);
	k = RTE_MIN((unsigned int)rt->n_nf_rxq[nf->slot],
		    (unsigned int)ZN_NF_RXQ_PER_NF);
	nf->prx_owned = k != 0;
	for (unsigned int j = 0; j < k && n == 0; j++) {
		const struct zn_nf_rxq *e =
			&rt->nf_rxq[nf->slot][(nf->prx_next + j) % k];
		struct rte_ring *ring = NULL;
		uint64_t rx0;

		if (e->port >= ZN_MAX_PORTS || e->queue >= ZN_NF_RXQ_MAX ||
		    nf->prx_kind[e->port] == 0)
			continue;
		rx0 = s->ptx[e->port].rx;
		if (nf->prx_kind[e->port] == ZN_PORT_RX_RING) {
			ring = nf->prx_ring[e->port][e->queue];
			if (ring == NULL || rte_ring_count(ring) == 0)
				continue;
			zn_ledger_port_rx_begin(l, e->port, e->queue,
						__atomic_load_n(&ring->cons.tail,
								__ATOMIC_RELAXED));
		} else {
			zn_nf_acct_allocating(nf); /* before its first take */
		}
		n = rte_eth_rx_burst(nf->ptx_pid[e->port], e->queue, l->held,
				     ZN_BURST);
		if (n == 0) {
			if (ring != NULL)
				zn_ledger_set_phase(l, ZN_LEDGER_IDLE);
			continue;
		}
		zn_ledger_rx_port(l, e->port, rx0, n);
		__atomic_store_n(&s->ptx[e->port].rx, rx0 + n,
				 __ATOMIC_RELEASE);
		ingest(nf, rt, e, n);
		/* the PMD took them from our cache (claimed) or through our
		 * pool driver (tagged): ours; a ring's were sent by others */
		nf->burst_tagged = ring == NULL && nf->acct->cache != NULL;
		nf->prx_next = (uint16_t)((nf->prx_next + j + 1) % k);
	}
	rte_rcu_qsbr_thread_offline(nf->qsbr, nf->slot);
	return n;
}
