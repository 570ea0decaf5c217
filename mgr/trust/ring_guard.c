/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The manager's side of the rings NFs write (ring_guard.h): made once the
 * rings exist (registry.c, link.c) and before any NF is let in, so that
 * the geometry kept is the one rte_ring_create wrote.
 */

#include <errno.h>
#include <stdlib.h>

#include "../core/mgr.h"
#include "ring_guard.h"
#include "../nf/nf_rec.h"
#include "../core/subsys.h"

struct zn_rguard *
zn_rguard_alloc(unsigned int n)
{
	void *p = NULL;

	if (posix_memalign(&p, RTE_CACHE_LINE_SIZE,
			   n * sizeof(struct zn_rguard)) != 0)
		return NULL;
	return memset(p, 0, n * sizeof(struct zn_rguard));
}

static int
zn_rguard_setup(struct zn_mgr *m)
{
	m->rg_link = zn_rguard_alloc(ZN_MAX_LINKS);
	if (m->rg_link == NULL)
		return -ENOMEM;
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		zn_rguard_init(&m->nf[s].rx_guard, m->nf[s].where.rx);
		zn_rguard_init(&m->nf[s].tx_guard, m->nf[s].tx);
	}
	for (unsigned int l = 0; l < ZN_MAX_LINKS; l++)
		zn_rguard_init(&m->rg_link[l], m->link_ring[l]);
	return 0;
}

static void
zn_rguard_teardown(struct zn_mgr *m)
{
	free(m->rg_link);
	m->rg_link = NULL;
}

static const struct zn_subsys subsys = {
	.name = "ring_guards", .order = ZN_SUBSYS_RING_GUARDS,
	.init = zn_rguard_setup, .fini = zn_rguard_teardown,
};
ZN_SUBSYS_REGISTER(subsys)
