/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The pool of the manager's headers for trust groups' packets going to
 * ports' drivers (shadow.h): made in the manager's private heap, with
 * libzeronf's ring driver (its ring not in DPDK's list of rings) and out
 * of DPDK's list of pools: NFs do not map that heap, and a process
 * looking a ring or a pool up reads every listed one's name.
 */

#include <errno.h>

#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "mgr.h"
#include "port.h"
#include "shadow.h"
#include "worker.h"
#include "../lib/common/zn_pool_ops.h"
#include "../lib/common/zn_util.h"

#define SHADOW_CACHE 64
/* What one header takes: the mbuf, its private area (the external
 * buffer's shared info), the mempool's object header, slack */
#define SHADOW_ELT (sizeof(struct rte_mbuf) + SHADOW_PRIV + 128)
#define SHADOW_PRIV RTE_ALIGN_CEIL(sizeof(struct rte_mbuf_ext_shared_info), \
				   RTE_MBUF_PRIV_ALIGN)

/* As many as the drivers can hold at once: every worker's TX queue of
 * every port full (twice the descriptors asked for: a driver may round
 * up) and every worker's TX buffers, and the caches. */
static unsigned int
shadow_count(const struct zn_mgr *m)
{
	unsigned int ports = rte_eth_dev_count_avail();

	return ports * m->n_workers * (2 * ZN_PORT_TXD + ZN_TXBUF_SZ) +
	       (m->n_workers + 2) * SHADOW_CACHE * 2;
}

static bool
wanted(const struct zn_mgr *m)
{
	return m->cfg.validate && m->cfg.n_groups != 0;
}

size_t
zn_shadow_bytes(const struct zn_mgr *m)
{
	if (!wanted(m))
		return 0;
	/* the objects, the pool's header with its caches, its ring */
	return (size_t)shadow_count(m) * (SHADOW_ELT + 2 * sizeof(void *)) +
	       sizeof(struct rte_mempool) +
	       RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) + (64u << 10);
}

int
zn_shadow_init(struct zn_mgr *m)
{
	struct rte_mempool *mp;

	if (!wanted(m))
		return 0;
	mp = rte_pktmbuf_pool_create_by_ops("zn_shadow", shadow_count(m),
					    SHADOW_CACHE, SHADOW_PRIV, 0,
					    m->priv_socket, ZN_POOL_OPS);
	if (mp == NULL) {
		ZN_LOG(ERR, "cannot make the headers for trust groups' "
		       "packets to ports (%u): %s", shadow_count(m),
		       rte_strerror(rte_errno));
		return -rte_errno;
	}
	zn_pool_unlist(mp);
	zn_shadow_set_maps(m->desc);
	m->shadow_mp = mp;
	return 0;
}

void
zn_shadow_fini(struct zn_mgr *m)
{
	if (m->shadow_mp == NULL)
		return;
	if (rte_mempool_avail_count(m->shadow_mp) != m->shadow_mp->size)
		ZN_LOG(WARNING, "%u headers of trust groups' packets not "
		       "returned by the ports",
		       m->shadow_mp->size -
		       rte_mempool_avail_count(m->shadow_mp));
	rte_mempool_free(m->shadow_mp);
	m->shadow_mp = NULL;
	zn_shadow_set_maps(NULL);
}
