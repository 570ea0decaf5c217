/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The control thread's own sends on a port (port.h zn_port_ctl_tx): an
 * OpenFlow packet-out to a port goes out from the thread that decoded it,
 * as OVS sends a packet-out from its main thread on a locked TX queue.
 * Handing it to a worker instead (its inject ring, then its doorbell)
 * woke a sleeping worker for each one: about 20 us of the packet-in round
 * trip on two cores (docs/benchmarks.md, sdn). Control thread only.
 *
 * The queue is 0, a worker's: from the first call, `on` tells the
 * workers to take its lock (worker.c flush_txbuf), and the sends wait
 * until every worker has passed a quiescent state after that (the
 * workers' RCU variable): none is then inside an unlocked burst. The
 * lock stays on (one uncontended lock per burst on queue 0).
 */

#include <errno.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_rcu_qsbr.h>
#include <rte_spinlock.h>

#include "../core/mgr.h"
#include "port.h"

int
zn_port_ctl_tx(struct zn_mgr *m, unsigned int i, struct rte_mbuf *mb)
{
	struct zn_port *p;
	uint16_t sent;

	if (i >= m->n_ports)
		return -ENOTSUP;
	p = &m->ports[i];
	/* a trust group's port sends its group's buffers as the manager's
	 * headers (trust/port_headers.h): the workers' path does that */
	if (!p->started || p->closed || p->group != NULL || mb->pool != m->pool)
		return -ENOTSUP;
	if (!p->ctl_tx.ready) {
		if (!p->ctl_tx.on) {
			__atomic_store_n(&p->ctl_tx.on, true, __ATOMIC_RELAXED);
			/* release: `on` before the token */
			p->ctl_tx.token = rte_rcu_qsbr_start(m->route.qsbr);
			return -EAGAIN;
		}
		if (rte_rcu_qsbr_check(m->route.qsbr, p->ctl_tx.token,
				       false) != 1)
			return -EAGAIN;
		p->ctl_tx.ready = true;
	}
	rte_spinlock_lock(&p->txq_lock[0]);
	sent = rte_eth_tx_burst(p->port_id, 0, &mb, 1);
	rte_spinlock_unlock(&p->txq_lock[0]);
	if (sent == 0)
		return -EAGAIN; /* full: the worker's buffer waits for room */
	p->ctl_tx.tx++;
	return 0;
}
