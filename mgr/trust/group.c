/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Trust groups (NetVM's trust boundaries): each group's packet pool lives
 * in a hugepage file of its own, outside the EAL's memory. A DPDK
 * secondary maps every segment of the EAL's memory, whatever it is told,
 * so a pool there is readable by every NF; memory registered as external
 * (rte_extmem_register) is mapped by no other process until it opens the
 * file itself and attaches (rte_extmem_attach). So the group's NFs map it
 * (lib/nf/nf_group.c) and no other NF has it in its address space: a
 * group's packet address, read by an NF of another group, faults. What
 * keeps an NF from opening another group's file is the sandbox: a
 * sandboxed NF sees only the files bound into its mount namespace (and
 * the file is the manager's, mode 0600). docs/security.md.
 *
 * The file begins with the homes of the group's NFs (their slots and
 * rings, group_home.c), then the pool.
 *
 * Each group's file is mapped at ZN_GROUP_VA_BASE + index * STRIDE in
 * every process (mbufs hold virtual addresses): far above the EAL's own
 * reservations, below the kernel's top-down mmap area.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_mbuf.h>
#include <rte_malloc.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_memory.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "../core/mgr.h"
#include "../core/cmd.h"
#include "owner_map.h"
#include "group.h"
#include "../nf/pool_acct.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"
#include "police.h"
#include "../core/subsys.h"

#define GROUP_CACHE 256

/* Bytes for the group's heap: the pool's header (with an lcore cache per
 * lcore), its private area and its free ring, the NFs' two routing
 * snapshot copies and their RCU variable (group_routing), each a malloc
 * element; with slack for the heap's own headers. */
static uint64_t
heap_bytes(uint32_t n_mbufs, uint64_t pg)
{
	uint64_t b = sizeof(struct rte_mempool) +
		     RTE_MAX_LCORE * sizeof(struct rte_mempool_cache) +
		     sizeof(struct rte_pktmbuf_pool_private) +
		     rte_ring_get_memsize(rte_align32pow2(n_mbufs + 1)) +
		     2 * sizeof(struct zn_route) +
		     rte_rcu_qsbr_get_memsize(ZN_MAX_NFS);

	return RTE_ALIGN_CEIL(b + (64u << 10), pg);
}

/* The pool, all of it in the file: its structures from the group's heap
 * over [home, home + heap), its buffers over the rest. */
static struct rte_mempool *
pool_create(struct zn_mgr *m, unsigned int i, void *va)
{
	const struct zn_group_cfg *c = &m->cfg.groups[i];
	const struct zn_group_file *gm = &m->trust.group[i].file;
	struct zn_shm_group *g = &m->shm->groups[i];
	struct rte_pktmbuf_pool_private priv = {
		.mbuf_data_room_size = RTE_MBUF_DEFAULT_BUF_SIZE,
	};
	uint32_t elt = (uint32_t)sizeof(struct rte_mbuf) +
		       RTE_MBUF_DEFAULT_BUF_SIZE;
	struct rte_mempool *mp;
	int rc;

	mp = rte_mempool_create_empty(g->pool, c->n_mbufs, elt, GROUP_CACHE,
				      sizeof(priv), gm->socket, 0);
	if (mp == NULL)
		return NULL;
	/* libzeronf's ring driver with the manager's check of what it takes
	 * out (lib/common/zn_pool_ops.h): the group's NFs write its ring.
	 * Always this one: it makes the ring in the pool's heap without
	 * listing it among DPDK's rings, where every NF looking a ring up
	 * would read its name, and fault (an operator's
	 * --mbuf-pool-ops-name is for the shared pool). */
	rc = rte_mempool_set_ops_byname(mp, ZN_POOL_OPS, NULL);
	if (rc == 0) {
		rte_pktmbuf_pool_init(mp, &priv);
		rc = rte_mempool_populate_virt(mp, RTE_PTR_ADD(va, gm->home +
							       gm->heap),
					       gm->len - gm->home - gm->heap,
					       g->page_sz, NULL, NULL);
	}
	if (rc >= 0 && mp->populated_size != mp->size)
		rc = -ENOSPC;
	if (rc < 0) {
		rte_mempool_free(mp);
		rte_errno = -rc;
		return NULL;
	}
	rte_mempool_obj_iter(mp, rte_pktmbuf_init, NULL);
	zn_pool_unlist(mp);
	return mp;
}

static void
group_routing_free(struct zn_group_file *gm)
{
	rte_free(gm->rt_spare);
	rte_free(gm->rt_live);
	rte_free(gm->qsbr);
	gm->rt_spare = gm->rt_live = NULL;
	gm->qsbr = NULL;
}

/* The group's NFs' routing snapshot copies and RCU variable, in its heap
 * (mgr/flow/route.c publishes into them). */
static int
group_routing(struct zn_mgr *m, unsigned int i, void *va)
{
	struct zn_group_file *gm = &m->trust.group[i].file;
	struct zn_group_home *h = va;
	size_t qsz = rte_rcu_qsbr_get_memsize(ZN_MAX_NFS);
	int socket = gm->socket;

	gm->rt_spare = rte_zmalloc_socket("zn_route_g", sizeof(struct zn_route),
					  RTE_CACHE_LINE_SIZE, socket);
	gm->rt_live = rte_zmalloc_socket("zn_route_g", sizeof(struct zn_route),
					 RTE_CACHE_LINE_SIZE, socket);
	gm->qsbr = rte_zmalloc_socket("zn_qsbr_g", qsz, RTE_CACHE_LINE_SIZE,
				      socket);
	if (gm->rt_spare == NULL || gm->rt_live == NULL || gm->qsbr == NULL ||
	    rte_rcu_qsbr_init(gm->qsbr, ZN_MAX_NFS) < 0) {
		group_routing_free(gm);
		return -ENOMEM;
	}
	h->hdr.route = gm->rt_live;
	h->hdr.qsbr = gm->qsbr;
	return 0;
}

/* Fault in [va, va + len) now (MADV_POPULATE_WRITE, Linux 5.14; else a
 * write per page, of the zero a new page holds): -ENOMEM when the
 * hugepages run out, not a SIGBUS later. */
static int
populate(void *va, uint64_t len, uint64_t pg)
{
#ifdef MADV_POPULATE_WRITE
	if (madvise(va, len, MADV_POPULATE_WRITE) == 0)
		return 0;
	if (errno != EINVAL)
		return -ENOMEM;
#endif
	for (uint64_t off = 0; off < len; off += pg)
		*(volatile char *)RTE_PTR_ADD(va, off) = 0;
	return 0;
}

static int
group_create(struct zn_mgr *m, unsigned int i)
{
	const struct zn_group_cfg *c = &m->cfg.groups[i];
	struct zn_shm_group *g = &m->shm->groups[i];
	uint32_t elt = (uint32_t)sizeof(struct rte_mbuf) +
		       RTE_MBUF_DEFAULT_BUF_SIZE;
	struct rte_mempool_objsz sz;
	struct rte_mempool *mp;
	struct statfs fs;
	uint64_t len, used, pg, home, heap, acct;
	char *heap_name = m->trust.group[i].file.heap_name;
	void *va;
	int fd, rc;

	if ((size_t)snprintf(g->path, sizeof(g->path), "%s/" ZN_GROUP_FILE_FMT,
			     m->inst.huge_dir, m->cfg.instance, i) >=
	    sizeof(g->path))
		return -ENAMETOOLONG;
	snprintf(g->pool, sizeof(g->pool), "zn_tg%u", i);
	snprintf(heap_name, sizeof(m->trust.group[i].file.heap_name), ZN_GROUP_HEAP_FMT,
		 i);
	zn_strlcpy(g->name, c->name, sizeof(g->name));
	if (statfs(m->inst.huge_dir, &fs) < 0)
		return -errno;
	pg = (uint64_t)fs.f_bsize;
	/* Room for every object whole, one page of slack per object run
	 * that populate cuts at a page boundary (never across one). */
	len = (uint64_t)rte_mempool_calc_obj_size(elt, 0, &sz) *
	      c->n_mbufs;
	len += len / pg * (sz.total_size) + 2 * pg;
	len = RTE_ALIGN_CEIL(len, pg);
	/* Before the buffers: the homes of the group's NFs (group_home.c), the
	 * tags of who took which buffer (pool_acct.h), then the pool's own
	 * structures */
	home = zn_home_len(rte_ring_get_memsize(m->cfg.ring_size), pg);
	acct = RTE_ALIGN_CEIL(zn_pool_acct_bytes(len, sz.total_size), pg);
	m->trust.group[i].file.acct_off = home;
	m->trust.group[i].file.acct = acct;
	home += acct;
	heap = heap_bytes(c->n_mbufs, pg);
	len += home + heap;
	/* The file is a power of two long: a VM's ivshmem BAR is the file
	 * (docs/vm-nfs.md), and a PCI BAR's size is one. Only its first
	 * `used` bytes are touched (the buffers are made from the front);
	 * the rest costs address space, not pages. */
	used = len;
	len = rte_align64pow2(len);
	if (len > ZN_GROUP_VA_STRIDE)
		return -E2BIG;

	fd = open(g->path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0) {
		rc = -errno;
		goto fail_file;
	}
	/* No reservation of the whole file's pages (hugetlbfs reserves a
	 * shared mapping's at mmap): its tail is never touched. */
	va = mmap((void *)zn_group_home_at(i), len, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED_NOREPLACE | MAP_NORESERVE, fd, 0);
	close(fd);
	fd = -1;
	if (va == MAP_FAILED) {
		rc = -errno;
		goto fail_file;
	}
	if (va != (void *)zn_group_home_at(i)) { /* a kernel without FIXED_NOREPLACE */
		munmap(va, len);
		rc = -EADDRINUSE;
		goto fail_file;
	}
	/* Populated now: a hugetlbfs file short of pages would fault later,
	 * in a worker, as SIGBUS. */
	rc = populate(va, used, pg);
	if (rc < 0)
		goto fail_map;
	g->len = m->trust.group[i].file.len = len;
	g->home_len = m->trust.group[i].file.home = home;
	g->heap_len = m->trust.group[i].file.heap = heap;
	g->page_sz = pg;
	zn_strlcpy(m->trust.group[i].file.path, g->path, sizeof(m->trust.group[i].file.path));
	if (rte_malloc_heap_create(heap_name) < 0) {
		rc = -rte_errno;
		goto fail_map;
	}
	if (rte_malloc_heap_memory_add(heap_name, RTE_PTR_ADD(va, home), heap,
				       NULL, 0, pg) < 0) {
		rc = -rte_errno;
		goto fail_heap;
	}
	m->trust.group[i].file.socket = rte_malloc_heap_get_socket(heap_name);
	if (m->trust.group[i].file.socket < 0) {
		rc = -ENOENT;
		goto fail_heap_mem;
	}
	if (rte_extmem_register(RTE_PTR_ADD(va, home + heap),
				len - home - heap, NULL, 0, pg) < 0) {
		rc = -rte_errno;
		goto fail_heap_mem;
	}
	mp = pool_create(m, i, va);
	if (mp == NULL) {
		rc = -rte_errno;
		goto fail_reg;
	}
	m->trust.group[i].pool = mp;
	rc = zn_pool_header_make(m, i);
	if (rc < 0) {
		m->trust.group[i].pool = NULL;
		rte_mempool_free(mp);
		goto fail_reg;
	}
	rc = group_routing(m, i, va);
	if (rc < 0) {
		zn_pool_header_free(m, i);
		goto fail_reg;
	}
	((struct zn_group_home *)va)->hdr.pool = mp;
	/* Nothing more is allocated in the heap: what rte_free follows at
	 * exit (each element's header, between the structures) is as
	 * now, whatever the group's NFs write there meanwhile. */
	m->trust.group[i].file.heap_as_made = malloc(heap);
	if (m->trust.group[i].file.heap_as_made == NULL) {
		rc = -ENOMEM;
		group_routing_free(&m->trust.group[i].file);
		zn_pool_header_free(m, i);
		goto fail_reg;
	}
	memcpy(m->trust.group[i].file.heap_as_made, RTE_PTR_ADD(va, home), heap);
	g->va = (uint64_t)(uintptr_t)va;
	g->n_mbufs = c->n_mbufs;
	__atomic_store_n(&g->used, 1, __ATOMIC_RELEASE);
	ZN_LOG(NOTICE, "trust group '%s': %u buffers in %s (%" PRIu64
	       " MB at %p)", g->name, c->n_mbufs, g->path, len >> 20, va);
	return 0;

fail_reg:
	rte_extmem_unregister(RTE_PTR_ADD(va, home + heap), len - home - heap);
fail_heap_mem:
	rte_malloc_heap_memory_remove(heap_name, RTE_PTR_ADD(va, home), heap);
fail_heap:
	rte_malloc_heap_destroy(heap_name);
fail_map:
	munmap(va, len);
fail_file:
	if (fd >= 0)
		close(fd);
	unlink(g->path);
	return rc;
}

/* Where a group's NFs find its file: they map nothing of the manager's
 * but that file (lib/nf/nf_group.c), so not zn_shm.groups either. Made
 * whole, then renamed into place: an NF never reads half of it. */
static int
groups_file(struct zn_mgr *m)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	FILE *f;
	int rc = 0;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", m->inst.rundir,
			     ZN_GROUPS_FILE) >= sizeof(path))
		return -ENAMETOOLONG;
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "we");
	if (f == NULL)
		return -errno;
	for (unsigned int i = 0; i < ZN_MAX_GROUPS; i++)
		if (m->trust.group[i].pool != NULL)
			fprintf(f, "%u %s %s\n", i, m->shm->groups[i].name,
				m->shm->groups[i].path);
	if (ferror(f))
		rc = -EIO;
	if (fclose(f) != 0 && rc == 0)
		rc = -errno;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

/* Make --trust-group's groups (after the shared memory). 0 or -errno. */
static int
zn_group_init(struct zn_mgr *m)
{
	int rc;

	for (unsigned int i = 0; i < ZN_MAX_GROUPS; i++)
		m->trust.group[i].idx = i;
	for (unsigned int i = 0; i < m->cfg.n_groups; i++) {
		rc = group_create(m, i);
		if (rc < 0) {
			ZN_LOG(ERR, "trust group '%s': %s", m->cfg.groups[i].name,
			       strerror(-rc));
			return rc;
		}
	}
	rc = m->cfg.n_groups > 0 ? groups_file(m) : 0;
	if (rc < 0)
		ZN_LOG(ERR, "cannot write %s/%s: %s", m->inst.rundir,
		       ZN_GROUPS_FILE, strerror(-rc));
	return rc;
}

/* Free their pools and files (after the NFs are gone). */
static void
zn_group_fini(struct zn_mgr *m)
{
	char path[PATH_MAX];

	if (m->cfg.n_groups > 0 && (size_t)snprintf(path, sizeof(path),
			"%s/%s", m->inst.rundir, ZN_GROUPS_FILE) < sizeof(path))
		unlink(path);
	for (unsigned int i = 0; i < ZN_MAX_GROUPS; i++) {
		struct zn_group_file *gm = &m->trust.group[i].file;
		void *va = (void *)zn_group_home_at(i);

		if (m->trust.group[i].pool == NULL)
			continue;
		zn_pool_header_flush_lcore(m, i, rte_lcore_id());
		if (zn_pool_header_avail(m, i) != m->trust.group[i].pool_mgr->size)
			ZN_LOG(WARNING, "trust group '%s': %u of %u buffers "
			       "not returned", m->cfg.groups[i].name,
			       m->trust.group[i].pool_mgr->size - zn_pool_header_avail(m, i),
			       m->trust.group[i].pool_mgr->size);
		__atomic_store_n(&m->shm->groups[i].used, 0, __ATOMIC_RELEASE);
		/* The heap's element headers are in the file, which the
		 * group's NFs write; DPDK's rte_free follows them (and the
		 * pool's free ring, header and routing copies have no use
		 * left): the heap as made, then freed. */
		memcpy(RTE_PTR_ADD(va, gm->home), gm->heap_as_made, gm->heap);
		free(gm->heap_as_made);
		gm->heap_as_made = NULL;
		zn_pool_header_free(m, i);
		group_routing_free(&m->trust.group[i].file);
		rte_extmem_unregister(RTE_PTR_ADD(va, gm->home + gm->heap),
				      gm->len - gm->home - gm->heap);
		rte_malloc_heap_memory_remove(gm->heap_name,
					      RTE_PTR_ADD(va, gm->home),
					      gm->heap);
		rte_malloc_heap_destroy(gm->heap_name);
		munmap(va, gm->len);
		unlink(gm->path);
	}
}

struct zn_group *
zn_group_by_id(const struct zn_mgr *m, uint32_t id)
{
	return id != 0 && id <= ZN_MAX_GROUPS && m->trust.group[id - 1].pool != NULL ?
	       (struct zn_group *)(uintptr_t)&m->trust.group[id - 1] : NULL;
}

bool
zn_group_valid(const struct zn_mgr *m, uint32_t g)
{
	return g == 0 || zn_group_by_id(m, g) != NULL;
}

int
zn_group_find(const struct zn_mgr *m, const char *name)
{
	for (unsigned int i = 0; i < ZN_MAX_GROUPS; i++)
		if (m->trust.group[i].pool != NULL &&
		    strcmp(m->cfg.groups[i].name, name) == 0)
			return (int)i;
	return -ENOENT;
}

static const struct zn_subsys subsys = {
	.name = "trust_groups", .order = ZN_SUBSYS_GROUPS,
	.init = zn_group_init, .fini = zn_group_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

/* --trust-group NAME[:BUFFERS]: a name (as an instance name) used once. */
static int
opt_trust_group(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	struct zn_group_cfg *g;
	const char *colon = strchr(arg, ':');
	size_t n = colon != NULL ? (size_t)(colon - arg) : strlen(arg);

	if (cfg->n_groups >= ZN_MAX_GROUPS) {
		fprintf(stderr, "%s: at most %u --trust-group\n", prog,
			ZN_MAX_GROUPS);
		return -EINVAL;
	}
	g = &cfg->groups[cfg->n_groups];
	if (n == 0 || n >= sizeof(g->name)) {
		fprintf(stderr, "%s: --trust-group '%s': a name of 1..%zu "
			"characters first\n", prog, arg, sizeof(g->name) - 1);
		return -EINVAL;
	}
	memcpy(g->name, arg, n);
	g->name[n] = '\0';
	if (!zn_instance_name_valid(g->name)) {
		fprintf(stderr, "%s: --trust-group: bad name '%s' (letters, "
			"digits, '_', '-')\n", prog, g->name);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < cfg->n_groups; i++)
		if (strcmp(cfg->groups[i].name, g->name) == 0) {
			fprintf(stderr, "%s: --trust-group '%s' given twice\n",
				prog, g->name);
			return -EINVAL;
		}
	g->n_mbufs = 8191;
	if (colon != NULL &&
	    zn_opt_uint(prog, "--trust-group's BUFFERS", colon + 1, 1023,
			1u << 22, &g->n_mbufs) < 0)
		return -EINVAL;
	cfg->n_groups++;
	return 0;
}

static int
opt_port_group(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	return zn_opt_port_name(prog, "--port-group", arg,
				cfg->port_group_name);
}

/* --port-group's port exists and its group was given: its id. */
static int
groups_check(const char *prog, struct zn_mgr_cfg *cfg)
{
	for (unsigned int p = 0; p < ZN_MAX_PORT_ARGS; p++) {
		const char *name = cfg->port_group_name[p];
		unsigned int g;

		if (name[0] == '\0')
			continue;
		if (p >= cfg->n_devargs) {
			fprintf(stderr, "%s: --port-group names port %u but "
				"only %u port(s) are given\n", prog, p,
				cfg->n_devargs);
			return -EINVAL;
		}
		for (g = 0; g < cfg->n_groups; g++)
			if (strcmp(cfg->groups[g].name, name) == 0)
				break;
		if (g == cfg->n_groups) {
			fprintf(stderr, "%s: --port-group %u=%s: no "
				"--trust-group %s\n", prog, p, name, name);
			return -EINVAL;
		}
		cfg->port_group[p] = g + 1;
	}
	return 0;
}

static const struct zn_opt group_opt[] = {
	{ "trust-group", 0, "NAME[:BUFFERS]", "a trust group: a packet pool "
	  "of BUFFERS (default\n8191) in hugepage memory that only the "
	  "group's NFs\nmap (repeat for more, up to " RTE_STR(ZN_MAX_GROUPS)
	  ")", ZN_OPT_PARSE, .parse = opt_trust_group },
	{ "port-group", 0, "P=NAME", "port P (0, 1, ... in -p order) receives "
	  "into trust\ngroup NAME's pool: no copy for the group's NFs",
	  ZN_OPT_PARSE, .parse = opt_port_group },
};

static const struct zn_opts group_opts = {
	.order = ZN_SUBSYS_GROUPS, .opt = group_opt, .n = RTE_DIM(group_opt),
	.check = groups_check,
};
ZN_OPTIONS_REGISTER(group_opts)
