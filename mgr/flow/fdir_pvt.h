/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FDIR_PVT_H
#define ZN_FDIR_PVT_H

/* The flow director's state, shared by its files (fdir.c: rules and
 * exact rules, fdir_chain.c: chains) and no other module. Control thread
 * only. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "../../lib/shm/zn_shm.h"

struct zn_mgr;
struct rte_acl_ctx;
struct zn_ft;

struct fdir_chain {
	uint16_t len;
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	uint32_t refs;      /* rules using it (chain 0: unused); a path
			     * holds one too */
	uint32_t spi;       /* its service path's id (fdir_path.c), 0: none */
	uint64_t freed_seq; /* when refs fell to 0 (reuse the oldest) */
};

struct zn_fdir {
	struct fdir_chain chains[ZN_MAX_CHAINS];
	uint8_t port_chain[ZN_MAX_PORTS]; /* chain id of a port, 0: none */
	uint8_t tenant_chain[ZN_MAX_TENANTS]; /* of a tenant (tenant.h) */
	uint64_t seq;
	struct zn_fdir_rule *rules; /* by increasing id */
	unsigned int n_rules;
	unsigned int cap_rules;
	uint32_t next_id;
	struct rte_acl_ctx *acl[2];
	uint32_t acl_gen;
	struct zn_ft *exact;
	uint64_t idle_ns;
	uint64_t expire_tick_ns; /* the previous expiry slice */
	/* An exact rule is being added to an empty table, or was added
	 * since the table was last found empty: NFs owning port RX queues
	 * give them back first (zn_fdir_classifies), get them again once
	 * the table is empty (fdir_tick) */
	bool exact_soon;
	uint64_t exact_added;
	uint64_t exact_expired;
	/* Exact rules by who added them (ZN_FDIR_BY_*: [0] unused) and by
	 * tenant, for the quotas; the owner is read back from the entry
	 * (NFs of no group write the table: a count never goes below 0) */
	uint32_t by[ZN_MAX_NFS + 2];
	uint32_t of_tenant[ZN_MAX_TENANTS];
	uint32_t nf_quota, tenant_quota; /* 0: none */
	uint64_t gone_removed, over_quota;
};

/* fdir_chain.c */
/** Hops fit for a chain (1..ZN_MAX_CHAIN_STEPS, services and ports that
 *  exist). 0, or -EINVAL with the reason in @p err. */
int fdir_validate_steps(struct zn_mgr *m, const struct zn_step *steps,
		       unsigned int n, char *err, size_t errlen);
/** The id of the chain of @p steps, interned (made if new: @p created),
 *  one more reference; -ENOSPC (reason in @p err): no free id. */
int fdir_chain_take(struct zn_fdir *fd, const struct zn_step *steps,
		    unsigned int n, bool *created, char *err, size_t errlen);
/** One reference less to chain @p id. */
/** Are @p steps the default chain's (chain 0, which is not interned)? */
bool fdir_is_default_chain(const struct zn_fdir *fd,
			   const struct zn_step *steps, unsigned int n);
void fdir_chain_put(struct zn_fdir *fd, unsigned int id);
/** The snapshot's flow-director part (route.h source): chains, ACL
 *  contexts, exact table. */
void fdir_fill(struct zn_mgr *m, struct zn_route *rt);

/* fdir_chain_cmds.c: a text for each step of @p steps to a service no
 * running NF serves (its packets drop as no_instance until one does):
 * chain.set and rule.add answer them as warnings. An array, maybe
 * empty. */
json_t *fdir_idle_services(const struct zn_mgr *m, const struct zn_step *steps,
			   unsigned int n);

#endif /* ZN_FDIR_PVT_H */
