/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * libzeronf, NF -> port hand-off (control path): attach the ports the
 * manager gave this NF a TX queue of (ctl.txq, mgr/port/port_nftx.c), and only
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
#include <string.h>

#include <rte_bus_vdev.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include "nf_pvt.h"
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

void
zn_nf_ports_attach(struct zn_nf *nf)
{
	unsigned int n_ports = RTE_MIN((unsigned int)nf->hdr->n_ports,
				       (unsigned int)ZN_MAX_PORTS);

	memset(nf->ptxq, 0, sizeof(nf->ptxq));
	nf->n_ptxq = 0;
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
 * straight to the pool) and it can take a burst without a flush. */
void
zn_nf_ports_thread(struct zn_nf *nf)
{
	unsigned int lc = rte_lcore_id();

	nf->cache = NULL;
	if (nf->n_ptxq == 0 || lc != ZN_NF_LCORE_BASE + (unsigned int)nf->slot)
		return;
	nf->cache = rte_mempool_default_cache(nf->pool, lc);
	if (nf->cache != NULL && nf->cache->flushthresh < ZN_BURST)
		nf->cache = NULL;
}
