/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Routing state, control side: build an immutable snapshot (services and
 * their balancing (lb.c), chains and wildcard rules (fdir.c), which NF TX
 * rings each worker drains), publish it with one atomic store, and free
 * the old one once every worker has passed a quiescent state
 * (rte_rcu_qsbr). route.c builds fdir and lb and hands them its publish
 * function: they change their state, then publish, without knowing this
 * module. Workers never see a half-written chain or service
 * table, and nothing they may still read is freed under them.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_malloc.h>
#include <rte_rcu_qsbr.h>

#include "fdir.h"
#include "lb.h"
#include "mgr.h"
#include "route.h"
#include "../lib/common/zn_util.h"

/* Fill @p rt, the snapshot no worker can see, from the control state. */
static void
build(struct zn_mgr *m, struct zn_route *rt)
{
	memset(rt, 0, sizeof(*rt));
	rt->version = ++m->route_version;
	rt->n_ports = m->n_ports;
	zn_fdir_fill(m, rt);

	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		const struct zn_nf_slot *slot = &m->shm->nfs[s];
		uint32_t state = slot->ctl.state;
		uint16_t w = slot->ctl.worker;

		if (state == ZN_NF_FREE)
			continue;
		if (state == ZN_NF_RUNNING) {
			struct zn_svc_entry *e = &rt->svc[slot->ctl.service_id];

			if (e->n < ZN_MAX_REPLICAS) {
				e->inst[e->n++] = (uint16_t)s;
				rt->nf_svc[s] = slot->ctl.service_id;
			}
		}
		/* Every NF not yet freed keeps its TX ring drained. */
		if (w < m->n_workers)
			rt->drain[w][rt->n_drain[w]++] = (uint16_t)s;
	}
	zn_lb_fill(m, rt);
}

/* Two snapshots, made at start: the published one and the spare, built
 * and published next; once every worker passed a quiescent state the old
 * one is the spare. Publishing allocates nothing, so it cannot fail (a
 * failing ~180 KB allocation used to leave callers half done). Only the
 * control thread publishes, and only workers read snapshots. */
void
zn_route_publish(struct zn_mgr *m)
{
	struct zn_route *rt = m->route_spare;

	build(m, rt);
	m->route_spare = __atomic_exchange_n(&m->route, rt,
					     __ATOMIC_ACQ_REL);
	/* After this no worker holds a reference to the old snapshot, nor
	 * sends to an NF the new one no longer accepts. */
	rte_rcu_qsbr_synchronize(m->qsbr, RTE_QSBR_THRID_INVALID);
}

int
zn_route_init(struct zn_mgr *m)
{
	size_t sz = rte_rcu_qsbr_get_memsize(ZN_MAX_WORKERS);
	int rc;

	m->qsbr = rte_zmalloc("zn_qsbr", sz, RTE_CACHE_LINE_SIZE);
	if (m->qsbr == NULL)
		return -ENOMEM;
	if (rte_rcu_qsbr_init(m->qsbr, ZN_MAX_WORKERS) < 0)
		return -EINVAL;
	for (int i = 0; i < 2; i++) {
		struct zn_route *rt = aligned_alloc(RTE_CACHE_LINE_SIZE,
			RTE_ALIGN_CEIL(sizeof(*rt), RTE_CACHE_LINE_SIZE));

		if (rt == NULL)
			return -ENOMEM;
		memset(rt, 0, sizeof(*rt));
		if (i == 0)
			m->route_spare = rt;
		else
			m->route = rt;
	}
	rc = zn_lb_init(m, zn_route_publish);
	if (rc == 0)
		rc = zn_fdir_init(m, zn_route_publish);
	if (rc == 0)
		zn_route_publish(m);
	return rc;
}

void
zn_route_fini(struct zn_mgr *m)
{
	free(m->route);
	free(m->route_spare);
	m->route = m->route_spare = NULL;
	zn_fdir_fini(m);
	zn_lb_fini(m);
	rte_free(m->qsbr);
	m->qsbr = NULL;
}
