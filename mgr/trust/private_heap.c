/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The manager's private DPDK memory: an rte_malloc heap that no NF maps.
 *
 * Every NF is a DPDK secondary process: it maps all of the primary's
 * hugepage memory, read-write. What the workers read there, an NF could
 * rewrite under them: a worker's own stages (the packets it will free or
 * send), the routing snapshot they resolve packets with, the workers'
 * RCU state, the header the manager uses each trust group's pool with
 * (pool_header.c). Those live here instead: an external heap (rte_malloc's
 * "external memory", DPDK's own mechanism) over anonymous memory of this
 * process. A secondary maps an external heap's memory only if it attaches
 * it (rte_malloc_heap_memory_attach); libzeronf never does, and the pages
 * are MAP_PRIVATE, so no other process could map them anyway. What NFs
 * must read (their copy of the routing snapshot) or write (their slots,
 * rings, doorbells) stays in the shared memory (lib/shm/zn_shm.h;
 * docs/architecture.md).
 *
 * Not here: DPDK objects listed in a shared tailq (rte_hash, rte_acl,
 * rte_ring, rte_mempool). Any process creating one of the same kind walks
 * the list and reads each object's name: an NF creating a hash table
 * would fault on the manager's flow table if it lived here (seen: the
 * steer NF). The flow director's tables stay in shared memory.
 *
 * The memory: private huge pages (MAP_HUGETLB: the workers' stages are
 * hot, as they were in the EAL's huge pages), else ordinary pages with
 * transparent huge pages asked for. No DMA: it has no IOVA, and nothing a
 * NIC reads is here.
 */

#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <rte_common.h>
#include <rte_errno.h>
#include <rte_malloc.h>

#include "../core/mgr.h"
#include "private_heap.h"
#include "port_headers.h"
#include "../datapath/worker.h"
#include "../../lib/common/zn_util.h"
#include "../core/subsys.h"

#define PRIV_PAGE (2u << 20) /* what DPDK is told: a power of two */
#define PRIV_MORE (4u << 20)   /* 2 routing snapshots, RCU, slack */

static char heap_name[] = "zn_private";

/* Make the heap (after rte_eal_init, before anything allocates). */
static int
zn_private_heap_init(struct zn_mgr *m)
{
	size_t len = RTE_ALIGN_CEIL(m->dp.n_workers * sizeof(struct zn_worker) +
				    m->cfg.n_groups * zn_pool_header_bytes() +
				    zn_port_headers_bytes(m) +
				    PRIV_MORE, PRIV_PAGE);
	void *raw, *va;
	int rc;

	/* One page more: huge pages come aligned, ordinary ones get
	 * aligned below (DPDK wants the heap's pages aligned). */
	raw = mmap(NULL, len + PRIV_PAGE, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (raw == MAP_FAILED) {
		raw = mmap(NULL, len + PRIV_PAGE, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (raw == MAP_FAILED)
			return -errno;
		madvise(raw, len + PRIV_PAGE, MADV_HUGEPAGE);
	}
	va = RTE_PTR_ALIGN_CEIL(raw, PRIV_PAGE);
	if (rte_malloc_heap_create(heap_name) < 0 ||
	    rte_malloc_heap_memory_add(heap_name, va, len, NULL, 0,
				       PRIV_PAGE) < 0) {
		rc = -rte_errno;
		ZN_LOG(ERR, "cannot make the manager's private heap (%zu MB): "
		       "%s", len >> 20, rte_strerror(rte_errno));
		rte_malloc_heap_destroy(heap_name);
		munmap(raw, len + PRIV_PAGE);
		return rc < 0 ? rc : -ENOMEM;
	}
	m->priv.raw = raw;
	m->priv.va = va;
	m->priv.len = len;
	m->priv.socket = rte_malloc_heap_get_socket(heap_name);
	return m->priv.socket < 0 ? -ENOENT : 0;
}

/* Remove it (after everything in it was freed). */
static void
zn_private_heap_fini(struct zn_mgr *m)
{
	if (m->priv.raw == NULL)
		return;
	/* Fails (EBUSY) if something was not freed: the memory then stays
	 * mapped until the process exits, as a leak would. */
	if (rte_malloc_heap_memory_remove(heap_name, m->priv.va,
					  m->priv.len) < 0) {
		ZN_LOG(DEBUG, "private heap still in use at exit: %s",
		       rte_strerror(rte_errno));
		return;
	}
	rte_malloc_heap_destroy(heap_name);
	munmap(m->priv.raw, m->priv.len + PRIV_PAGE);
	m->priv.raw = NULL;
}

static const struct zn_subsys subsys = {
	.name = "private_heap", .order = ZN_SUBSYS_PRIVATE_HEAP,
	.init = zn_private_heap_init, .fini = zn_private_heap_fini,
};
ZN_SUBSYS_REGISTER(subsys)
