/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_GROUP_H
#define ZN_GROUP_H

/* Trust groups (group.c): a packet pool per group in a hugepage file only
 * the group's NFs map. A group is one object, struct zn_group: everything
 * the manager keeps of it, each piece's writer named. An NF's record
 * (registry.h) and a port (port.h) point to theirs, NULL: none. Where a
 * group is said to NFs or kept in shared memory (ctl.group, the routing
 * snapshot, the options) it is its id: index + 1, 0 none
 * (zn_group_id, zn_group_by_id). */

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "../../lib/shm/zn_shm.h"
#include "pool_header.h"

struct zn_mgr;
struct rte_mempool;
struct rte_rcu_qsbr;
struct zn_route;
struct zn_owner_map;
struct zn_port_headers;
struct zn_rguard;
struct zn_acct;

/** A group's hugepage file as made (group.c): bytes, of which the NFs'
 *  homes, then the pool's heap, then its buffers. */
struct zn_group_file {
	uint64_t len;
	uint64_t home;
	uint64_t heap;
	/* the end of its homes: its pool's tags from here, as many bytes as
	 * acct (pool_acct.h), before the heap */
	uint64_t acct_off, acct;
	char path[ZN_GROUP_PATH_LEN];
	char heap_name[ZN_NAME_LEN]; /* its rte_malloc heap, */
	int socket;                  /* and that heap's socket id */
	/* in its heap: the NFs' routing snapshot copies (the live one is in
	 * the file's home) and their RCU variable */
	struct zn_route *rt_spare, *rt_live;
	struct rte_rcu_qsbr *qsbr;
	/* its heap as it was once made (the rte_malloc elements' headers
	 * among it), for the frees at exit */
	void *heap_as_made;
};

/** One trust group. Made at start (the trust_groups, owner_maps,
 *  pool_accounts and homes steps, subsys.h), read-only after but for
 *  the control thread's fields at the end. Its first cache line is what
 *  the workers read (per packet, for a group's port headers). */
struct zn_group {
	/* its pool (group.c; NULL: no group here): what NFs and packets
	 * name, its header in the file */
	struct rte_mempool *pool;
	/* the manager's own header of it (pool_header.c): what it calls
	 * DPDK's mempool code with */
	struct rte_mempool *pool_mgr;
	/* its pool's owner map and tags: m->trust.owner_maps[idx + 1]
	 * (owner_map.c), m->acct[idx + 1] (pool_acct.c), pool-indexed for
	 * lookups by address */
	struct zn_owner_map *owners;
	struct zn_acct *acct;
	/* the manager's port headers of its buffers (port_headers.c), NULL:
	 * none of its ports needs them */
	struct zn_port_headers *port_headers;
	/* the guards of its NFs' homes' rings as made (group_home.c) */
	struct zn_rguard *home_rg;
	unsigned int idx; /* zn_shm.groups[idx], cfg.groups[idx] */

	struct zn_pool_header header __rte_cache_aligned;
	struct zn_group_file file;
	/* its NFs' RCU variable's token (route.c sync_nfs; control thread):
	 * kept here, the variable being in memory its NFs write */
	uint64_t qtoken;
};

/** The id (index + 1) of group @p g, 0: NULL. */
static inline uint8_t
zn_group_id(const struct zn_group *g)
{
	return g != NULL ? (uint8_t)(g->idx + 1) : 0;
}

/** Trust, the manager's side (m->trust): the groups, and the maps that
 *  check what every NF hands back. */
struct zn_trust {
	struct zn_group group[ZN_MAX_GROUPS]; /* group.c */
	/* some groups have port headers: drivers see groups' packets in
	 * them (port_headers.c) */
	bool port_headers;
	/* Each pool's owner map (owner_map.c), [0]: the shared pool's, [g +
	 * 1]: group g's (its `owners`); NULL: --validate off */
	struct zn_owner_map *owner_maps;
	/* The guards of the EAL's home's rings as made (a group's are its
	 * home_rg), copied to a record's when its slot moves (group_home.c). */
	struct zn_rguard *home_rg;
};

/** Group @p id (index + 1), NULL: 0, out of range or not made. */
struct zn_group *zn_group_by_id(const struct zn_mgr *m, uint32_t id);
/** An NF's registration names group id @p g (0: none): valid? */
bool zn_group_valid(const struct zn_mgr *m, uint32_t g);

/** The index of the group called @p name, or -ENOENT. */
int zn_group_find(const struct zn_mgr *m, const char *name);

#endif /* ZN_GROUP_H */
