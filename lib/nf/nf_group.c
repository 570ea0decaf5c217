/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * libzeronf: joining a trust group (--trust-group NAME; mgr/trust/group.c). An
 * NF of a group is no DPDK secondary of the manager (nf.c eal_init): it
 * maps one file of the manager's, its group's, at the address every
 * process maps it at (buffers hold addresses), and reads there all it
 * needs: the homes of the group's NFs (slots, rings, links), the manager's
 * state as the group's NFs see it (struct zn_group_home view: the shared
 * header, shutdown, links, workers' doorbells), the group's routing
 * snapshot, and the pool (header, caches, free ring, buffers). The file's
 * name is in the runtime directory's ZN_GROUPS_FILE. An NF of another
 * group, or of none, never maps it; a sandboxed one cannot open it, nor
 * any of the EAL's memory (docs/security.md).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <rte_mempool.h>

#include "nf_pvt.h"
#include "../common/zn_instance.h"
#include "../common/zn_util.h"

/* What we read of the manager's state, all in the file: the checks of
 * nf.c (check_compat) follow. */
static int
attach(struct zn_nf *nf, struct zn_group_home *h, unsigned int i,
       uint64_t len)
{
	const struct zn_shm_group *g = &h->view.group;
	struct rte_mempool *mp = h->hdr.pool;
	uint64_t home = g->home_len, heap = g->heap_len;

	if (strncmp(g->name, nf->group_name, sizeof(g->name)) != 0 ||
	    g->va != (uint64_t)(uintptr_t)h || g->len != len ||
	    home + heap >= len) {
		ZN_LOG(ERR, "trust group '%s': its file is not laid out as "
		       "this library expects (another build of the manager?)",
		       nf->group_name);
		return -EPROTO;
	}
	/* Not rte_mempool_lookup: DPDK's list of pools is the manager's,
	 * in memory this process does not map. */
	if (mp == NULL || (char *)mp < (char *)h + home ||
	    (char *)mp >= (char *)h + home + heap ||
	    strncmp(mp->name, g->pool, sizeof(mp->name)) != 0) {
		ZN_LOG(ERR, "trust group '%s': pool '%.32s' not found",
		       nf->group_name, g->pool);
		return -EPROTO;
	}
	nf->gpool = mp;
	nf->group = i + 1;
	nf->hdr = &h->view.hdr;
	nf->stopping = &h->view.stopping;
	nf->lb_epoch = &h->view.lb_epoch;
	nf->links = h->view.links;
	nf->w_db0 = h->wdb;
	nf->w_db_stride = 1;
	return 0;
}

int
zn_nf_group_attach(struct zn_nf *nf)
{
	char path[ZN_GROUP_PATH_LEN];
	struct zn_group_home *want;
	unsigned int i = 0;
	struct stat st;
	void *va = NULL;
	int fd, rc;

	if (nf->group_name[0] == '\0')
		return 0;
	if (nf->guest) { /* the file is the ivshmem device's BAR 2 */
		uint64_t len = 0;

		rc = zn_nf_guest_map(nf, &va, &len, &i);
		if (rc == 0)
			rc = attach(nf, va, i, len);
		if (rc < 0) {
			if (va != NULL)
				munmap(va, len);
			return rc;
		}
		nf->gva = va;
		nf->glen = (size_t)len;
		return 0;
	}
	rc = zn_group_file(nf->instance, nf->group_name, &i, path,
			   sizeof(path));
	if (rc < 0) {
		ZN_LOG(ERR, "manager '%s' has no trust group '%s'",
		       nf->instance, nf->group_name);
		return rc;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		int err = errno;

		ZN_LOG(ERR, "trust group '%s': cannot open %s: %s",
		       nf->group_name, path, strerror(err));
		if (fd >= 0)
			close(fd);
		return -err;
	}
	want = zn_group_home_at(i);
	va = st.st_size > 0 && (uint64_t)st.st_size <= ZN_GROUP_VA_STRIDE ?
	     mmap(want, (size_t)st.st_size, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0) :
	     MAP_FAILED;
	rc = errno;
	close(fd);
	if (va == MAP_FAILED || va != want) {
		if (va != MAP_FAILED)
			munmap(va, (size_t)st.st_size);
		ZN_LOG(ERR, "trust group '%s': cannot map %s at %p: %s",
		       nf->group_name, path, (void *)want,
		       strerror(va == MAP_FAILED ? rc : EADDRINUSE));
		return va == MAP_FAILED ? -rc : -EADDRINUSE;
	}
	rc = attach(nf, va, i, (uint64_t)st.st_size);
	if (rc < 0) {
		munmap(va, (size_t)st.st_size);
		return rc;
	}
	nf->gva = va;
	nf->glen = (size_t)st.st_size;
	return 0;
}

int
zn_nf_group_share(struct zn_nf *nf, const struct zn_nf *first)
{
	int rc;

	if (first->gva == NULL)
		return 0;
	/* what attach() reads of the file, read again: the same mapping */
	rc = attach(nf, first->gva, first->group - 1u, first->glen);
	if (rc < 0)
		return rc;
	nf->gva = first->gva;
	nf->glen = first->glen;
	nf->gshared = true;
	return 0;
}

void
zn_nf_group_detach(struct zn_nf *nf)
{
	if (nf->gva == NULL)
		return;
	if (!nf->gshared)
		munmap(nf->gva, nf->glen);
	nf->gva = NULL;
	nf->gpool = NULL;
}

ZN_API struct rte_mempool *
zn_nf_group_pool(const struct zn_nf *nf)
{
	return nf != NULL ? nf->gpool : NULL;
}
