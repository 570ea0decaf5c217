/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * NF -> port hand-off (control side): which ports NFs may transmit on
 * themselves, and which NF has which TX queue. Decided per port at start:
 * the workers' queues come first, then up to --nf-tx-queues queues for
 * NFs, each given to one NF at its registration (first come; an NF
 * without one has the workers transmit for it) and taken back when its
 * slot is free again.
 *
 * Only PMDs whose tx_burst works from a secondary process AND is done with
 * every packet when it returns (it freed or copied them) qualify: a dead
 * NF's packets are then found exactly by the ledger (zn_ledger.h, the port
 * run). Measured here (scripts/pmd_secondary_tx.py, docs/architecture.md
 * "Ports belong to the manager"):
 *   net_null  works from a secondary, frees in tx_burst;
 *   net_tap   works (the queue fds come over the multi-process channel,
 *             at most RTE_MP_MAX_FD_NUM of them for all queues), writes
 *             and frees in tx_burst;
 *   net_ring  works, but its packets wait in a ring for a reader: a dead
 *             NF's last burst cannot be told apart from one not sent;
 *   net_pcap  a secondary reopens (truncates) the capture files;
 *   net_af_packet crashes a secondary; PCI PMDs free on completion, in a
 *             later tx_burst of the same queue (a dead NF's queue would
 *             have to be stopped by the manager first): not measurable
 *             here, left to the workers.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rte_eal.h>
#include <rte_ethdev.h>

#include "../core/event.h"
#include "../core/mgr.h"
#include "port.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"

/* The drivers above that qualify, and their own limit on queues. */
static const struct {
	const char *driver;
	/* queue pairs: as many RX queues as TX queues (net_tap: one fd per
	 * pair, all of them sent to a secondary in one message) */
	bool pairs;
} nftx_drivers[] = {
	{ "net_null", false },
	{ "net_tap", true },
};

/* After the RSS decision (the added RX queues of a pair PMD get none). */
unsigned int
zn_port_nftx_plan(struct zn_mgr *m, struct zn_port *p,
		  const struct rte_eth_dev_info *info)
{
	unsigned int k = m->cfg.nf_tx_queues, i;

	p->nf_txq_first = p->nb_txq;
	p->nf_txq_n = 0;
	if (m->cfg.handoff != ZN_HANDOFF_DIRECT) {
		p->nf_tx_why = "--handoff worker";
		return 0;
	}
	if (k == 0) {
		p->nf_tx_why = "--nf-tx-queues 0";
		return 0;
	}
	for (i = 0; i < RTE_DIM(nftx_drivers); i++)
		if (strcmp(p->driver, nftx_drivers[i].driver) == 0)
			break;
	if (i == RTE_DIM(nftx_drivers)) {
		p->nf_tx_why = "driver not usable from an NF";
		return 0;
	}
	if (info->max_tx_queues > p->nb_txq)
		k = RTE_MIN(k, (unsigned int)(info->max_tx_queues - p->nb_txq));
	else
		k = 0;
	if (nftx_drivers[i].pairs) {
		/* The extra RX queues are polled like the others (main.c
		 * spreads every RX queue over the RX workers): the kernel
		 * spreads flows over them. */
		unsigned int pairs = RTE_MP_MAX_FD_NUM / 2;

		k = p->nb_txq < pairs ? RTE_MIN(k, pairs - p->nb_txq) : 0;
		if (k > 0)
			p->nb_rxq = (uint16_t)RTE_MAX((unsigned int)p->nb_rxq,
						      p->nb_txq + k);
	}
	if (k == 0) {
		p->nf_tx_why = "no TX queue left for NFs";
		return 0;
	}
	p->nf_txq_n = (uint16_t)k;
	p->nf_tx_why = NULL;
	return k;
}

/* What an NF needs to attach the port: its name and the PMD's library
 * (the functions the port transmits and receives with lie in it), for
 * its TX queues and the RX queues NFs may own (port_nfrx.c). */
void
zn_port_nftx_publish(struct zn_mgr *m, unsigned int i)
{
	struct zn_port *p = &m->ports[i];
	struct zn_shm_port *sp = &m->shm->ports[i];
	Dl_info info;
	char real[PATH_MAX];

	memset(sp, 0, sizeof(*sp));
	zn_strlcpy(sp->name, p->name, sizeof(sp->name));
	sp->port_id = p->port_id;
	sp->nf_txq_first = p->nf_txq_first;
	if (p->nf_txq_n == 0 && p->nf_rxq_n == 0)
		return;
	if (dladdr((void *)(uintptr_t)rte_eth_fp_ops[p->port_id].tx_pkt_burst,
		   &info) == 0 || info.dli_fname == NULL ||
	    realpath(info.dli_fname, real) == NULL ||
	    strlen(real) >= sizeof(sp->driver_so)) {
		ZN_LOG(WARNING, "port %u (%s): the driver's library is not "
		       "found: the workers transmit and receive for every NF",
		       i, p->name);
		if (p->nf_txq_n != 0)
			p->nf_tx_why = "driver library not found";
		if (p->nf_rxq_n != 0)
			p->nf_rx_why = "driver library not found";
		p->nf_txq_n = p->nf_rxq_n = 0;
		return;
	}
	zn_strlcpy(sp->driver_so, real, sizeof(sp->driver_so));
	sp->nf_txq_n = p->nf_txq_n;
	sp->nf_rxq_n = p->nf_rxq_n;
	sp->nf_rx_kind = p->nf_rx_kind;
}

/* At registration, before the reply: a queue of every port that has one
 * free. */
void
zn_port_nftx_assign(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);

	unsigned int t = zn_tenant_of_nf(m, slot);
	/* what it asks for (read once: the NF writes it), or the default */
	uint64_t asked = __atomic_load_n(&s->req.tx_ports, __ATOMIC_RELAXED);
	uint64_t want = asked != 0 ? asked :
			m->cfg.nf_tx_by_request ? 0 : UINT64_MAX;

	memset(s->ctl.txq, 0, sizeof(s->ctl.txq));
	memset(s->ptx, 0, sizeof(s->ptx));
	/* Not to an NF of a trust group: it maps none of the EAL's memory,
	 * where a port's queues are (lib/nf/nf_group.c); the workers send
	 * its packets, as the manager's headers (port_headers.h). */
	if (m->nf[slot].group != NULL) {
		if (asked != 0)
			zn_event("nf.txq", "%s: asked for TX queues of its own: "
				 "a trust group's NF has none (the workers "
				 "transmit for it)", s->ctl.name);
		return;
	}
	for (unsigned int i = 0; i < m->n_ports; i++) {
		struct zn_port *p = &m->ports[i];
		bool given = false;

		if (!((want >> i) & 1))
			continue;

		/* A tenant's NF transmits itself on its tenant's ports only
		 * (elsewhere the worker drops it as cross_tenant). */
		if (t != 0 && !((m->tn->port_mask[i] >> (t - 1)) & 1))
			continue;

		for (unsigned int q = 0; q < p->nf_txq_n; q++) {
			if (p->txq_owner[q] != 0)
				continue;
			p->txq_owner[q] = (uint16_t)(slot + 1);
			s->ctl.txq[i] = (uint16_t)(p->nf_txq_first + q + 1);
			given = true;
			break;
		}
		if (!given && ((asked >> i) & 1))
			zn_event("nf.txq", "%s: asked for a TX queue of port %u: "
				 "%s (the workers transmit for it)", s->ctl.name,
				 i, p->nf_txq_n == 0 ? "it has none" :
				 "none is free");
	}
	for (unsigned int i = m->n_ports; i < 64; i++)
		if ((asked >> i) & 1)
			zn_event("nf.txq", "%s: asked for a TX queue of port %u: "
				 "no such port", s->ctl.name, i);
}

/* The slot is free: the NF's process is gone, and these PMDs kept none of
 * its packets (see above): its queues go to the next NFs. What it sent
 * stays in the port's totals. */
void
zn_port_nftx_release(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);

	for (unsigned int i = 0; i < m->n_ports; i++) {
		struct zn_port *p = &m->ports[i];

		p->nf_gone.rx += s->ptx[i].rx;
		p->nf_gone.tx += s->ptx[i].tx;
		p->nf_gone.tx_retry += s->ptx[i].tx_retry;
		p->nf_gone.stalled += s->ptx[i].stalled;
		for (unsigned int q = 0; q < p->nf_txq_n; q++)
			if (p->txq_owner[q] == slot + 1)
				p->txq_owner[q] = 0;
		s->ctl.txq[i] = 0;
	}
	memset(s->ptx, 0, sizeof(s->ptx));
}

/* Port @p i's NF transmissions: totals (live NFs and gone ones) into
 * @p sum, and the "nf_tx" object of port.list. */
json_t *
zn_port_nftx_json(struct zn_mgr *m, unsigned int i, struct zn_port_wstats *sum)
{
	struct zn_port *p = &m->ports[i];
	json_t *nfs = json_array();
	uint64_t tx = p->nf_gone.tx;

	sum->tx_retry += p->nf_gone.tx_retry;
	sum->drops[ZN_DROP_STALLED] += p->nf_gone.stalled;
	for (unsigned int q = 0; q < p->nf_txq_n; q++) {
		unsigned int slot = p->txq_owner[q];
		const struct zn_nf_slot *s;

		if (slot == 0)
			continue;
		s = zn_slot(m, slot - 1);
		tx += s->ptx[i].tx;
		sum->tx_retry += s->ptx[i].tx_retry;
		sum->drops[ZN_DROP_STALLED] += s->ptx[i].stalled;
		json_array_append_new(nfs, json_pack(
			"{s:i, s:s, s:i, s:b, s:I}", "instance", (int)slot - 1,
			"name", s->ctl.name, "queue",
			(int)(p->nf_txq_first + q), "attached",
			s->ptx[i].q != 0, "tx", (json_int_t)s->ptx[i].tx));
	}
	sum->tx += tx;
	return json_pack("{s:i, s:i, s:o, s:I, s:I, s:o}", "queues",
			 p->nf_txq_n, "first_queue", p->nf_txq_first, "why_not",
			 p->nf_tx_why ? json_string(p->nf_tx_why) : json_null(),
			 "tx", (json_int_t)tx, "tx_at_exit",
			 (json_int_t)p->nf_gone.tx_at_exit, "nfs", nfs);
}
