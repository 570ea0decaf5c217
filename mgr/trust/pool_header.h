/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_POOL_HEADER_H
#define ZN_POOL_HEADER_H

/* The manager's own header of each trust group's pool (pool_header.c):
 * what the manager calls DPDK's mempool code with, never the header in
 * the group's file that the group's NFs write. */

#include <stddef.h>
#include <stdint.h>

struct zn_mgr;
struct rte_mempool;
struct rte_memzone;
struct rte_mempool_memhdr;

/** What the NFs' header's teardown needs, kept as it was made. */
struct zn_pool_header {
	const struct rte_memzone *mz;
	struct rte_mempool_memhdr **chunks;
	unsigned int n_chunks;
	uint64_t repairs; /* zn_pool_header_repair found the NFs' header changed */
};

/** Take @p mp out of DPDK's list of pools: its header is in memory some
 *  NFs do not map (a group's file, the manager's private heap), and a
 *  process looking any pool up reads every listed one's. */
void zn_pool_unlist(struct rte_mempool *mp);
/** Private heap bytes one group's header takes (private_heap.c sizes it). */
size_t zn_pool_header_bytes(void);
/** Make m->trust.group[@p g].pool_mgr from m->trust.group[g].pool, just made (before any NF
 *  can write it). 0 or -errno. */
int zn_pool_header_make(struct zn_mgr *m, unsigned int g);
/** Free the pool: the NFs' header rewritten as made, then freed; the
 *  manager's. Clears both. */
void zn_pool_header_free(struct zn_mgr *m, unsigned int g);
/** Free buffers of group @p g's pool: its ring, the manager's caches,
 *  the NFs' caches as their lengths say (cut to a cache's bound). */
unsigned int zn_pool_header_avail(const struct zn_mgr *m, unsigned int g);
/** Empty the manager's cache of group @p g's pool for lcore @p lcore. */
void zn_pool_header_flush_lcore(struct zn_mgr *m, unsigned int g,
			 unsigned int lcore);
/** Take what a gone NF (lcore @p lcore) left in its cache of group
 *  @p g's pool, in the NFs' header, into the ring: the cache where it
 *  was made, its length cut to it, with --validate only buffers of the
 *  pool, each once. @return how many. */
unsigned int zn_pool_header_take_nf_cache(struct zn_mgr *m, unsigned int g,
				   unsigned int lcore);
/** The NFs' header of every group's pool written back as made where an
 *  NF changed it (the fields, the private area, each cache's size; a
 *  cache length out of range emptied), for the group's NFs' own DPDK
 *  code: the manager never reads it. Control thread, every 50 ms with
 *  --validate (owner_map.c). @return how many pools were repaired. */
unsigned int zn_pool_header_repair(struct zn_mgr *m);

#endif /* ZN_POOL_HEADER_H */
