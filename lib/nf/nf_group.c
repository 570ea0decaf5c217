/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * libzeronf: joining a trust group (--trust-group NAME; mgr/group.c). The
 * group's packet pool is in a hugepage file of its own that the EAL does
 * not map in a secondary: the NF opens it and maps it at the address the
 * manager published, then tells DPDK it is there (the pool's heap:
 * rte_malloc_heap_memory_attach; its buffers: rte_extmem_attach). An
 * NF of no group, or of another, never maps it; a sandboxed one cannot
 * open it (docs/security.md).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_errno.h>
#include <rte_malloc.h>
#include <rte_memory.h>
#include <rte_mempool.h>

#include "nf_pvt.h"
#include "../common/zn_util.h"

/* Tell DPDK what is where in the group's file (mgr/group.c): the pool's
 * heap, then its buffers; the pool itself as the file's home says. */
static int
attach(struct zn_nf *nf, const struct zn_shm_group *g, unsigned int i,
       void *va)
{
	uint64_t home = g->home_len, heap = g->heap_len;
	struct rte_mempool *mp;
	char name[ZN_NAME_LEN];

	if (home + heap >= g->len) {
		ZN_LOG(ERR, "trust group '%s': bad layout", g->name);
		return -EPROTO;
	}
	snprintf(name, sizeof(name), ZN_GROUP_HEAP_FMT, i);
	if (rte_malloc_heap_memory_attach(name, RTE_PTR_ADD(va, home),
					  heap) < 0) {
		ZN_LOG(ERR, "trust group '%s': heap: %s", g->name,
		       rte_strerror(rte_errno));
		return -rte_errno;
	}
	if (rte_extmem_attach(RTE_PTR_ADD(va, home + heap),
			      g->len - home - heap) < 0) {
		int err = rte_errno;

		rte_malloc_heap_memory_detach(name, RTE_PTR_ADD(va, home),
					      heap);
		ZN_LOG(ERR, "trust group '%s': %s", g->name,
		       rte_strerror(err));
		return -err;
	}
	/* Not rte_mempool_lookup: DPDK's list of pools has other groups'
	 * too, and reading their names here would fault. */
	mp = ((const struct zn_group_home *)va)->hdr.pool;
	if (mp == NULL || (void *)mp < va ||
	    (char *)mp >= (char *)va + home + heap ||
	    strncmp(mp->name, g->pool, sizeof(mp->name)) != 0) {
		rte_extmem_detach(RTE_PTR_ADD(va, home + heap),
				  g->len - home - heap);
		rte_malloc_heap_memory_detach(name, RTE_PTR_ADD(va, home),
					      heap);
		ZN_LOG(ERR, "trust group '%s': pool '%s' not found", g->name,
		       g->pool);
		return -EPROTO;
	}
	nf->gpool = mp;
	nf->ghome = home;
	nf->gheap = heap;
	return 0;
}

int
zn_nf_group_attach(struct zn_nf *nf)
{
	const struct zn_shm_group *g = NULL;
	unsigned int i;
	void *va;
	int fd, rc;

	if (nf->group_name[0] == '\0')
		return 0;
	for (i = 0; i < ZN_MAX_GROUPS; i++)
		if (__atomic_load_n(&nf->shm->groups[i].used,
				    __ATOMIC_ACQUIRE) &&
		    strcmp(nf->shm->groups[i].name, nf->group_name) == 0) {
			g = &nf->shm->groups[i];
			break;
		}
	if (g == NULL) {
		ZN_LOG(ERR, "manager '%s' has no trust group '%s'",
		       nf->instance, nf->group_name);
		return -ENOENT;
	}
	fd = open(g->path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;

		ZN_LOG(ERR, "trust group '%s': cannot open %s: %s",
		       g->name, g->path, strerror(err));
		return -err;
	}
	va = mmap((void *)(uintptr_t)g->va, g->len, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	close(fd);
	if (va == MAP_FAILED || va != (void *)(uintptr_t)g->va) {
		int err = va == MAP_FAILED ? errno : EADDRINUSE;

		if (va != MAP_FAILED)
			munmap(va, g->len);
		ZN_LOG(ERR, "trust group '%s': cannot map it at %#llx: %s",
		       g->name, (unsigned long long)g->va, strerror(err));
		return -err;
	}
	rc = attach(nf, g, i, va);
	if (rc < 0) {
		munmap(va, g->len);
		return rc;
	}
	nf->group = i + 1;
	nf->gva = va;
	nf->glen = g->len;
	return 0;
}

void
zn_nf_group_detach(struct zn_nf *nf)
{
	if (nf->gva == NULL)
		return;
	char name[ZN_NAME_LEN];

	snprintf(name, sizeof(name), ZN_GROUP_HEAP_FMT, nf->group - 1);
	rte_extmem_detach(RTE_PTR_ADD(nf->gva, nf->ghome + nf->gheap),
			  nf->glen - nf->ghome - nf->gheap);
	rte_malloc_heap_memory_detach(name, RTE_PTR_ADD(nf->gva, nf->ghome),
				      nf->gheap);
	munmap(nf->gva, nf->glen);
	nf->gva = NULL;
	nf->gpool = NULL;
}

ZN_API struct rte_mempool *
zn_nf_group_pool(const struct zn_nf *nf)
{
	return nf != NULL ? nf->gpool : NULL;
}
