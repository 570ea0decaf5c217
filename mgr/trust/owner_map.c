/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Descriptors that cannot lie: every pointer an NF puts on its TX ring is
 * checked before a worker reads through it (--validate, on by default).
 * A packet an NF hands back must be a buffer of the NF's own pool (its
 * trust group's, or the shared one), starting where a buffer starts (not
 * inside one), a direct mbuf whose data lies inside its own buffer, of at
 * most ZN_OWNER_MAP_MAX_SEGS segments that are all such buffers, and one the
 * NF holds: the owner map (who holds each buffer, as the workers handed
 * it out) takes each hand-out back once. Anything else is dropped as
 * `bad_descriptor`, counted for the NF, and never read past the checks;
 * not freed either (it is not ours to free), but for a real buffer of the
 * pool whose chain or lengths are broken: its first segment goes back to
 * the pool; an NF past --bad-desc-limit of them is killed (police.c; the
 * registry reclaims what it held as for any dead NF).
 *
 * The owner map (an entry per buffer: where it starts and who holds it,
 * owner_map.h) is in the manager's own memory: an NF can write every byte of
 * the shared memory it maps, not this. What they leave to the pool: a buffer an NF freed in its own
 * process (its mempool cache) and handed back too (docs/security.md).
 *
 * The checks themselves are in owner_map_hot.c; their cost: `make bench
 * BENCH=validate` (docs/benchmarks.md).
 */

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_memory.h>
#include <rte_prefetch.h>
#include <rte_mempool.h>

#include <zeronf/pkt.h>

#include "../core/mgr.h"
#include "owner_map.h"
#include "port_headers.h"
#include "../../lib/common/zn_flow.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"
#include "../core/subsys.h"

#define ZN_OWNER_MAP_MAX_SPAN (8ULL << 30) /* a pool's memory, first to last */

static void
chunk_span(struct rte_mempool *mp, void *arg, struct rte_mempool_memhdr *mh,
	   unsigned int idx)
{
	struct zn_owner_map *d = arg;
	uintptr_t lo = (uintptr_t)mh->addr, hi = lo + mh->len;

	(void)mp;
	(void)idx;
	if (d->lo == 0 || lo < d->lo)
		d->lo = lo;
	if (hi > d->hi)
		d->hi = hi;
}

static void
obj_mark(struct rte_mempool *mp, void *arg, void *obj, unsigned int idx)
{
	struct zn_owner_map *d = arg;
	uintptr_t line = ((uintptr_t)obj - d->lo) / RTE_CACHE_LINE_SIZE;

	(void)mp;
	(void)idx;
	d->bits[line / 64] |= 1ULL << (line % 64);
	zn_owner_map_own(d, (uintptr_t)obj)->start = (uint16_t)
		(((uintptr_t)obj - d->lo) & ((1u << d->own_shift) - 1));
}

static void
chunk_pg(struct rte_mempool *mp, void *arg, struct rte_mempool_memhdr *mh,
	 unsigned int idx)
{
	struct zn_owner_map *d = arg;
	const struct rte_memseg *ms = rte_mem_virt2memseg(mh->addr, NULL);
	uint64_t pg = ms != NULL ? ms->hugepage_sz : (uint64_t)getpagesize();

	(void)mp;
	(void)idx;
	if (d->pg == 0 || pg < d->pg)
		d->pg = pg;
}

static int
map_pool(struct zn_owner_map *d, struct rte_mempool *mp,
	 struct rte_mempool *mine)
{
	size_t lines, pages, n_own;

	memset(d, 0, sizeof(*d));
	d->mp = mp;
	d->mine = mine;
	d->priv = rte_pktmbuf_priv_size(mp);
	d->buf_len = rte_pktmbuf_data_room_size(mp);
	rte_mempool_mem_iter(mp, chunk_span, d);
	rte_mempool_mem_iter(mp, chunk_pg, d);
	if (d->hi <= d->lo || d->hi - d->lo > ZN_OWNER_MAP_MAX_SPAN)
		return -E2BIG;
	lines = (d->hi - d->lo) / RTE_CACHE_LINE_SIZE + 1;
	d->bits = calloc((lines + 63) / 64, sizeof(uint64_t));
	/* A buffer's whole size (header, mbuf, room, trailer), down to a
	 * power of two: buffers are that far apart at least. */
	d->own_shift = (uint8_t)(31 - __builtin_clz(mp->header_size +
						     mp->elt_size +
						     mp->trailer_size));
	if (d->own_shift > 15)
		return -E2BIG; /* a start must fit below ZN_OWN_NONE */
	n_own = ((d->hi - d->lo) >> d->own_shift) + 1;
	d->own = malloc(n_own * sizeof(*d->own));
	for (size_t i = 0; d->own != NULL && i < n_own; i++)
		d->own[i] = (struct zn_own){ .owner = 0, .start = ZN_OWN_NONE };
	if (!rte_is_power_of_2(d->pg))
		return -EINVAL;
	d->pg_shift = (uint8_t)__builtin_ctzll(d->pg);
	d->pg_lo = RTE_ALIGN_FLOOR(d->lo, d->pg);
	pages = (d->hi - d->pg_lo + d->pg - 1) / d->pg;
	d->page_iova = calloc(pages, sizeof(rte_iova_t));
	if (d->bits == NULL || d->own == NULL || d->page_iova == NULL)
		return -ENOMEM;
	/* What the pool's buffers were given (rte_mempool_populate_virt
	 * asked the same function): an NF can rewrite buf_iova in the
	 * buffer, not this. */
	for (size_t i = 0; i < pages; i++)
		d->page_iova[i] = rte_mem_virt2iova(
			(void *)(d->pg_lo + i * d->pg));
	rte_mempool_obj_iter(mp, obj_mark, d);
	return 0;
}

/* The pools' driver asks this of what the manager's process takes out of
 * a pool's ring (lib/common/zn_pool_ops.h): the PMDs' refills, a
 * worker's copies. Process memory, set once before the workers start. */
static struct zn_owner_map *check_pools;

static bool
pool_check(const struct rte_mempool *mp, const void *obj)
{
	for (unsigned int g = 0; g <= ZN_MAX_GROUPS; g++) {
		struct zn_owner_map *d = &check_pools[g];

		if (d->mp != mp && d->mine != mp)
			continue;
		if (likely(zn_owner_map_real(d, obj)))
			return true;
		if (__atomic_fetch_add(&d->foreign, 1, __ATOMIC_RELAXED) == 0)
			ZN_LOG(ERR, "pool %s: its free ring held %p, no buffer "
			       "of it (an NF freed garbage?): dropped; "
			       "group.list counts them", mp->name, obj);
		return false;
	}
	return true; /* not one of ours */
}

/* The flow hash's reader (lib/common/zn_flow.h): a packet's data as
 * zn_owner_map_pkt_data finds it, with the maps of the pools. */
static const uint8_t *
pkt_data(const struct rte_mbuf *mb, uint32_t *len)
{
	return zn_owner_map_pkt_data(check_pools, mb, len);
}

/* Build the maps of the shared pool and of every trust group's. */
static int
zn_owner_map_init(struct zn_mgr *m)
{
	int rc;

	if (!m->cfg.validate)
		return 0; /* --validate off: the NFs are trusted */
	m->trust.owner_maps = calloc(ZN_MAX_GROUPS + 1, sizeof(*m->trust.owner_maps));
	if (m->trust.owner_maps == NULL)
		return -ENOMEM;
	rc = map_pool(&m->trust.owner_maps[0], m->pool, m->pool);
	for (unsigned int g = 0; g < ZN_MAX_GROUPS && rc == 0; g++)
		if (m->trust.group[g].pool != NULL) {
			m->trust.group[g].owners = &m->trust.owner_maps[g + 1];
			rc = map_pool(m->trust.group[g].owners, m->trust.group[g].pool,
				      m->trust.group[g].pool_mgr);
		}
	if (rc < 0) {
		ZN_LOG(ERR, "cannot map the packet pools' buffers for "
		       "--validate: %s", strerror(-rc));
		return rc;
	}
	check_pools = m->trust.owner_maps;
	zn_pool_ops_set_check(pool_check);
	zn_flow_set_reader(pkt_data); /* routing's flow hash of a packet */
	/* what the ports' drivers read of trust groups' packets */
	return zn_port_headers_init(m);
}

static void
zn_owner_map_fini(struct zn_mgr *m)
{
	if (m->trust.owner_maps == NULL)
		return;
	zn_port_headers_fini(m); /* after the ports: they gave theirs back */
	zn_pool_ops_set_check(NULL); /* the workers are gone */
	zn_flow_set_reader(NULL);
	check_pools = NULL;
	for (unsigned int g = 0; g <= ZN_MAX_GROUPS; g++) {
		free(m->trust.owner_maps[g].bits);
		free(m->trust.owner_maps[g].own);
		free(m->trust.owner_maps[g].page_iova);
	}
	free(m->trust.owner_maps);
	m->trust.owner_maps = NULL;
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++)
		m->trust.group[g].owners = NULL;
}

unsigned int
zn_owner_map_free(struct zn_mgr *m, struct rte_mbuf **pkts, unsigned int n,
	     const char *who)
{
	unsigned int freed = 0;

	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *mb = pkts[i];
		const struct zn_owner_map *d = zn_owner_map_pool_at(m->trust.owner_maps,
							   (uintptr_t)mb);
		bool dup = false;

		for (unsigned int j = 0; j < i && !dup; j++)
			dup = pkts[j] == mb;
		if (d == NULL || !zn_owner_map_real(d, mb) || dup) {
			ZN_LOG(ERR, "%s left %s %p; ignored", who,
			       dup ? "a pointer twice:" : "a bad buffer pointer",
			       (void *)mb);
			continue;
		}
		zn_owner_map_own(d, (uintptr_t)mb)->owner = 0; /* the pool's */
		if (zn_owner_map_ok(d, mb)) { /* not through its pool field */
			zn_owner_map_put(m->trust.owner_maps, &mb, 1);
		} else {
			ZN_LOG(ERR, "%s left a mangled buffer %p; given back "
			       "to its pool as new", who, (void *)mb);
			rte_mempool_put(d->mine, zn_owner_map_restore(d, mb));
		}
		freed++;
	}
	return freed;
}

static const struct zn_subsys subsys = {
	.name = "owner_maps", .order = ZN_SUBSYS_OWNER_MAPS,
	.init = zn_owner_map_init, .fini = zn_owner_map_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static int
opt_validate(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (strcmp(arg, "on") != 0 && strcmp(arg, "off") != 0) {
		fprintf(stderr, "%s: --validate must be on or off, not '%s'\n",
			prog, arg);
		return -EINVAL;
	}
	cfg->validate = strcmp(arg, "on") == 0;
	return 0;
}

static void
checks_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->validate = true;
	cfg->bad_desc_limit = 64;
}

static const struct zn_opt checks_opt[] = {
	{ "validate", 0, "on|off", "check every packet pointer an NF hands "
	  "back (default on)", ZN_OPT_PARSE, .parse = opt_validate },
	{ "bad-desc-limit", 0, "N", "kill an NF after N bad ones (default 64; "
	  "0: never)", ZN_OPT_UINT, ZN_CFG(bad_desc_limit), 0, 1u << 30,
	  NULL },
};

static const struct zn_opts checks_opts = {
	.order = ZN_SUBSYS_OWNER_MAPS, .opt = checks_opt,
	.n = RTE_DIM(checks_opt), .defaults = checks_defaults,
};
ZN_OPTIONS_REGISTER(checks_opts)
