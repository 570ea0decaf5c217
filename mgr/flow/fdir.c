/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Flow director, control side: wildcard rules and exact rules (chains:
 * fdir_chain.c).
 *
 * - Wildcard rules (prefixes, port ranges, protocol, priority) are compiled
 *   with rte_acl, one context per IP version, rebuilt on every change and
 *   published in a new routing snapshot: a worker sees the old rule set or
 *   the new one, never a mix.
 * - Exact rules (a 5-tuple + VLAN, one direction each) live in a
 *   concurrent flow table (lib/flow, rte_hash lock-free readers + RCU):
 *   the control thread is its one writer; an entry is complete before it
 *   becomes visible. They expire after --flow-idle-s without traffic.
 *
 * Precedence at ingress: exact rule, then the highest-priority wildcard
 * rule (equal priorities: the older rule), then the default chain.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_malloc.h>

#include "fdir.h"
#include "fdir_pvt.h"
#include "../tenant/tenant.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../../lib/common/zn_flow.h"
#include "../../lib/common/zn_util.h"
#include "route.h"
#include "../core/subsys.h"


/* Count rule @p d in (+1) or out (-1). */
static void
account(struct zn_fdir *fd, const struct zn_fdir_exact *d, int dir)
{
	uint16_t by = d->owner;
	uint8_t t = d->tenant;

	if (by != ZN_FDIR_BY_SOCKET && by <= ZN_FDIR_BY_KEPT &&
	    (dir > 0 || fd->by[by] > 0))
		fd->by[by] += (uint32_t)dir;
	if (t != 0 && t <= ZN_MAX_TENANTS &&
	    (dir > 0 || fd->of_tenant[t - 1] > 0))
		fd->of_tenant[t - 1] += (uint32_t)dir;
}

/* Whether a new rule of @p by for @p tenant is within the quotas. */
static bool
within_quota(struct zn_fdir *fd, uint16_t by, unsigned int tenant,
	     char *err, size_t errlen)
{
	if (by != ZN_FDIR_BY_SOCKET && fd->nf_quota != 0 &&
	    fd->by[by] >= fd->nf_quota) {
		snprintf(err, errlen, by == ZN_FDIR_BY_KEPT ?
			 "the rules NFs keep are at their quota (%u, "
			 "--nf-flow-quota)" : "this NF's rules are at its "
			 "quota (%u, --nf-flow-quota)", fd->nf_quota);
		return false;
	}
	if (tenant != 0 && fd->tenant_quota != 0 &&
	    fd->of_tenant[tenant - 1] >= fd->tenant_quota) {
		snprintf(err, errlen, "the tenant's rules are at its quota "
			 "(%u, --tenant-flow-quota)", fd->tenant_quota);
		return false;
	}
	return true;
}


/* Rebuild both contexts and publish; on failure nothing changes. */
static int
acl_republish(struct zn_mgr *m)
{
	struct zn_fdir *fd = m->fdir;
	struct rte_acl_ctx *ctx[2], *old[2] = { fd->acl[0], fd->acl[1] };
	int err;

	for (int v6 = 0; v6 < 2; v6++) {
		ctx[v6] = zn_fdir_acl_build(fd->rules, fd->n_rules, v6,
					    ++fd->acl_gen, &err);
		if (err < 0) {
			if (v6 == 1)
				rte_acl_free(ctx[0]);
			return err;
		}
	}
	fd->acl[0] = ctx[0];
	fd->acl[1] = ctx[1];
	zn_route_publish(m); /* waits until no worker sees the old ones */
	rte_acl_free(old[0]);
	rte_acl_free(old[1]);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Wildcard rules                                                      */

int
zn_fdir_rule_add(struct zn_mgr *m, struct zn_fdir_rule *r,
		 const struct zn_step *steps, unsigned int n, char *err,
		 size_t errlen)
{
	struct zn_fdir *fd = m->fdir;
	bool created;
	int rc, chain;

	rc = fdir_validate_steps(m, steps, n, err, errlen);
	if (rc < 0)
		return rc;
	if (r->priority < 0 || r->priority > ZN_FDIR_MAX_PRIORITY) {
		snprintf(err, errlen, "priority: 0..%d", ZN_FDIR_MAX_PRIORITY);
		return -EINVAL;
	}
	if (fd->n_rules >= ZN_FDIR_MAX_RULES) {
		snprintf(err, errlen, "too many rules (%d)", ZN_FDIR_MAX_RULES);
		return -ENOSPC;
	}
	if (fd->n_rules == fd->cap_rules) {
		unsigned int cap = fd->cap_rules ? fd->cap_rules * 2 : 64;
		void *p = realloc(fd->rules, cap * sizeof(*fd->rules));

		if (p == NULL)
			return -ENOMEM;
		fd->rules = p;
		fd->cap_rules = cap;
	}
	chain = fdir_chain_take(fd, steps, n, &created, err, errlen);
	if (chain < 0)
		return chain;
	r->chain = (uint8_t)chain;
	r->id = ++fd->next_id;
	fd->rules[fd->n_rules++] = *r;
	rc = acl_republish(m);
	if (rc < 0) {
		fd->n_rules--;
		fdir_chain_put(fd, (unsigned int)chain);
		snprintf(err, errlen, "cannot build the rule set: %s",
			 strerror(-rc));
		return rc;
	}
	return (int)r->id;
}

int
zn_fdir_rule_del(struct zn_mgr *m, uint32_t id, unsigned int tenant)
{
	struct zn_fdir *fd = m->fdir;

	for (unsigned int i = 0; i < fd->n_rules; i++) {
		struct zn_fdir_rule r = fd->rules[i];
		int rc;

		if (r.id != id ||
		    (tenant != ZN_FDIR_ANY_OWNER && r.tenant != tenant))
			continue;
		memmove(&fd->rules[i], &fd->rules[i + 1],
			(fd->n_rules - i - 1) * sizeof(r));
		fd->n_rules--;
		rc = acl_republish(m);
		if (rc < 0) { /* keep the rule: the old set is still live */
			memmove(&fd->rules[i + 1], &fd->rules[i],
				(fd->n_rules - i) * sizeof(r));
			fd->rules[i] = r;
			fd->n_rules++;
			return rc;
		}
		fdir_chain_put(fd, r.chain);
		return 0;
	}
	return -ENOENT;
}

const struct zn_fdir_rule *
zn_fdir_rules(struct zn_mgr *m, unsigned int *n)
{
	*n = m->fdir->n_rules;
	return m->fdir->rules;
}

/* ------------------------------------------------------------------ */
/* Exact rules                                                         */

int
zn_fdir_flow_add(struct zn_mgr *m, const struct zn_flow_key *key,
		 const struct zn_step *steps, unsigned int n,
		 unsigned int tenant, uint16_t by, bool pair, char *err,
		 size_t errlen)
{
	struct zn_fdir *fd = m->fdir;
	uint32_t hash = zn_flow_key_hash(key);
	struct zn_ft_hit hit;
	struct zn_fdir_exact *d;
	bool created;
	int rc, chain;

	rc = fdir_validate_steps(m, steps, n, err, errlen);
	if (rc < 0)
		return rc;
	/* a new rule counts against its owner's quota, a replaced one not */
	if (zn_ft_lookup(fd->exact, key, hash, 0, &hit) < 0 &&
	    !within_quota(fd, by, tenant, err, errlen)) {
		fd->over_quota++;
		return -EDQUOT;
	}
	chain = fdir_chain_take(fd, steps, n, &created, err, errlen);
	if (chain < 0)
		return chain;
	/* Workers must know the chain before any entry names it; and an
	 * NF that takes a port's packets itself must have given its queue
	 * back to the workers, which apply the rules. */
	if (!fd->exact_soon && zn_ft_count(fd->exact) == 0) {
		fd->exact_soon = true;
		created = true;
	}
	if (created)
		zn_route_publish(m);
	rc = zn_ft_add(fd->exact, key, hash, zn_now_ns(), &hit);
	if (rc < 0) {
		fdir_chain_put(fd, (unsigned int)chain);
		snprintf(err, errlen, "flow table full (%u flows)",
			 m->cfg.flow_capacity);
		return rc;
	}
	d = hit.data;
	if (!hit.created && d->tenant != tenant) {
		fdir_chain_put(fd, (unsigned int)chain);
		snprintf(err, errlen, "this flow has a rule of %s", d->tenant ?
			 "a tenant" : "the operator");
		return -EEXIST;
	}
	if (!hit.created) {
		fdir_chain_put(fd, d->chain);
		account(fd, d, -1); /* replaced: its new owner's now */
	} else {
		fd->exact_added++;
	}
	d->owner = by;
	d->pair = pair;
	/* One byte: a reader sees the old chain or the new one (a new
	 * entry reads as chain 0, the default, until this store: the rule
	 * is in force once this function returns); its tenant before it. */
	__atomic_store_n(&d->tenant, (uint8_t)tenant, __ATOMIC_RELAXED);
	account(fd, d, +1);
	__atomic_store_n(&d->chain, (uint8_t)chain, __ATOMIC_RELEASE);
	return 0;
}

bool
zn_fdir_classifies(const struct zn_mgr *m)
{
	const struct zn_fdir *fd = m->fdir;

	return fd != NULL && (fd->acl[0] != NULL || fd->acl[1] != NULL ||
			      fd->exact_soon || zn_ft_count(fd->exact) > 0);
}

/* One entry of @p tenant's (or any's) gone. 0 or -ENOENT; *@p pair: it
 * was one of a pair. */
static int
flow_del_one(struct zn_fdir *fd, const struct zn_flow_key *key,
	     unsigned int tenant, bool *pair)
{
	struct zn_ft_hit hit;
	uint32_t h = zn_flow_key_hash(key);
	struct zn_fdir_exact *d;
	uint8_t chain;

	if (zn_ft_lookup(fd->exact, key, h, 0, &hit) < 0)
		return -ENOENT;
	d = hit.data;
	if (tenant != ZN_FDIR_ANY_OWNER && d->tenant != tenant)
		return -ENOENT;
	chain = d->chain;
	*pair = d->pair;
	account(fd, d, -1);
	if (zn_ft_del(fd->exact, key, h) < 0)
		return -ENOENT;
	fdir_chain_put(fd, chain);
	return 0;
}

int
zn_fdir_flow_del(struct zn_mgr *m, const struct zn_flow_key *key,
		 unsigned int tenant)
{
	struct zn_flow_key rev;
	bool pair = false, other;

	if (flow_del_one(m->fdir, key, tenant, &pair) < 0)
		return -ENOENT;
	if (!pair)
		return 1;
	zn_flow_key_reverse(key, &rev);
	return flow_del_one(m->fdir, &rev, tenant, &other) == 0 ? 2 : 1;
}

unsigned int
zn_fdir_nf_gone(struct zn_mgr *m, unsigned int slot, const char *name)
{
	struct zn_fdir *fd = m->fdir;
	uint16_t by = ZN_FDIR_BY_NF(slot);
	struct zn_flow_key *keys;
	const struct zn_flow_key *key;
	unsigned int n = 0, want, removed = 0;
	uint32_t cursor = 0;
	void *data;

	if (fd == NULL || slot >= ZN_MAX_NFS || (want = fd->by[by]) == 0)
		return 0;
	/* Its keys first: the table is not walked while entries go */
	keys = malloc(want * sizeof(*keys));
	if (keys == NULL)
		return 0;
	while (n < want && zn_ft_iterate(fd->exact, &cursor, &key, &data) >= 0)
		if (((struct zn_fdir_exact *)data)->owner == by)
			keys[n++] = *key;
	for (unsigned int i = 0; i < n; i++)
		removed += zn_fdir_flow_del(m, &keys[i], ZN_FDIR_ANY_OWNER) > 0;
	free(keys);
	fd->by[by] = 0;
	fd->gone_removed += removed;
	if (removed > 0)
		ZN_LOG(INFO, "NF '%s' (instance %u): its %u flow rules removed",
		       name, slot, removed);
	return removed;
}

int
zn_fdir_flow_iterate(struct zn_mgr *m, uint32_t *cursor,
		     const struct zn_flow_key **key, unsigned int *chain,
		     unsigned int *tenant, unsigned int *by)
{
	void *data;
	int rc = zn_ft_iterate(m->fdir->exact, cursor, key, &data);

	if (rc >= 0) {
		*chain = ((struct zn_fdir_exact *)data)->chain;
		*tenant = ((struct zn_fdir_exact *)data)->tenant;
		*by = ((struct zn_fdir_exact *)data)->owner;
	}
	return rc;
}

void
zn_fdir_counts(struct zn_mgr *m, struct zn_fdir_counts *c)
{
	struct zn_fdir *fd = m->fdir;

	c->flows = zn_ft_count(fd->exact);
	c->capacity = m->cfg.flow_capacity;
	c->nf_quota = fd->nf_quota;
	c->tenant_quota = fd->tenant_quota;
	c->kept = fd->by[ZN_FDIR_BY_KEPT];
	c->flows_of_gone_nfs = fd->gone_removed;
	c->over_quota = fd->over_quota;
	c->flows_added = fd->exact_added;
	c->flows_expired = fd->exact_expired;
	c->rules = fd->n_rules;
	c->chains = 0;
	for (unsigned int id = 1; id < ZN_MAX_CHAINS; id++)
		c->chains += fd->chains[id].refs != 0;
}

static void
on_expire(const struct zn_flow_key *key, void *data, void *arg)
{
	struct zn_fdir *fd = arg;

	(void)key;
	account(fd, data, -1);
	fdir_chain_put(fd, ((struct zn_fdir_exact *)data)->chain);
	fd->exact_expired++;
}

/* Expiry passes over the table EXPIRE_PASSES times per idle timeout: a
 * rule expires between one and 1 + 1/EXPIRE_PASSES timeouts after its last
 * packet. Each tick (after every wake-up of the control loop: at least
 * every 100 ms, and after each control request) visits the share of
 * the entries due since the previous one, at most EXPIRE_SLICE: a pass
 * over 100k rules with the default 300 s takes 19 s, not the control
 * thread's time and the worker's cache all the while. */
#define EXPIRE_PASSES 16
#define EXPIRE_SLICE 65536u

static void
fdir_tick(void *arg)
{
	struct zn_mgr *m = arg;
	struct zn_fdir *fd = m->fdir;
	uint64_t now_ns = zn_now_ns();
	uint64_t n = zn_ft_count(fd->exact), dt, due;

	if (n == 0 && fd->exact_soon) {
		fd->exact_soon = false; /* empty again: NFs may take ports' */
		zn_route_publish(m);  /* packets themselves */
	}
	if (fd->idle_ns == 0 || n == 0) {
		fd->expire_tick_ns = now_ns;
		return;
	}
	dt = now_ns - fd->expire_tick_ns;
	/* n <= 2^26 and dt capped at 10 s: no overflow. */
	due = n * RTE_MIN(dt, 10000000000ULL) /
	      RTE_MAX(fd->idle_ns / EXPIRE_PASSES, 1ULL) + 1;
	if (due == 1 && dt < 10000000ULL)
		return; /* less than one entry due: wait (requests may come
			 * far faster than entries are due) */
	fd->expire_tick_ns = now_ns;
	zn_ft_expire(fd->exact, now_ns, (uint32_t)RTE_MIN(due, EXPIRE_SLICE),
		     on_expire, fd);
}

/* ------------------------------------------------------------------ */

/* Make the flow director (after the routing snapshot, route.h, whose
 *  RCU state its exact table uses) and register as a source. 0 or
 *  -errno. */
static int
zn_fdir_init(struct zn_mgr *m)
{
	struct zn_fdir *fd = calloc(1, sizeof(*fd));
	int rc;

	if (fd == NULL)
		return -ENOMEM;
	m->fdir = fd;
	fd->chains[0].len = (uint16_t)m->cfg.chain_len;
	memcpy(fd->chains[0].steps, m->cfg.chain,
	       m->cfg.chain_len * sizeof(struct zn_step));
	fd->idle_ns = m->cfg.flow_idle_s * 1000000000ULL;
	/* Defaults: an NF an eighth of the table, a tenant a quarter: the
	 * operator's own rules always find room */
	fd->nf_quota = m->cfg.nf_flow_quota != UINT_MAX ?
		       m->cfg.nf_flow_quota : m->cfg.flow_capacity / 8;
	fd->tenant_quota = m->cfg.tenant_flow_quota != UINT_MAX ?
			   m->cfg.tenant_flow_quota :
			   m->cfg.flow_capacity / 4;
	fd->exact = zn_ft_create(&ZN_FT_OPTS(
		.name = "zn_fdir_exact", .capacity = m->cfg.flow_capacity,
		.data_size = sizeof(struct zn_fdir_exact),
		.idle_timeout_ns = fd->idle_ns,
		.flags = ZN_FT_F_CONCURRENT, .rcu = m->route.qsbr));
	if (fd->exact == NULL) {
		ZN_LOG(ERR, "cannot create a flow table of %u flows: %s (more "
		       "--mem or less --flow-capacity)", m->cfg.flow_capacity,
		       rte_strerror(rte_errno));
		return -ENOMEM;
	}
	fd->expire_tick_ns = zn_now_ns();
	rc = zn_route_add_source(m, fdir_fill);
	if (rc == 0 && m->loop != NULL)
		rc = zn_loop_on_wake(m->loop, fdir_tick, m);
	if (rc == 0)
		zn_route_publish(m);
	return rc;
}

static void
zn_fdir_fini(struct zn_mgr *m)
{
	struct zn_fdir *fd = m->fdir;

	if (fd == NULL)
		return;
	zn_ft_free(fd->exact);
	rte_acl_free(fd->acl[0]);
	rte_acl_free(fd->acl[1]);
	free(fd->rules);
	free(fd);
	m->fdir = NULL;
}

static const struct zn_subsys subsys = {
	.name = "flow_director", .order = ZN_SUBSYS_FDIR,
	.init = zn_fdir_init, .fini = zn_fdir_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static void
fdir_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->flow_capacity = 1u << 18;
	cfg->flow_idle_s = 300;
	cfg->nf_flow_quota = UINT_MAX;     /* an eighth of the table */
	cfg->tenant_flow_quota = UINT_MAX; /* a quarter (zn_fdir_init) */
}

static const struct zn_opt fdir_opt[] = {
	{ "flow-capacity", 0, "N", "exact flow rules at most (default 262144; "
	  "1M needs\nabout 100 MB more --mem)", ZN_OPT_UINT,
	  ZN_CFG(flow_capacity), 8, 1u << 26, NULL },
	{ "flow-idle-s", 0, "S", "exact flow rules expire after S s without "
	  "traffic\n(0 = never; default 300)", ZN_OPT_UINT, ZN_CFG(flow_idle_s),
	  0, 1u << 24, NULL },
	{ "nf-flow-quota", 0, "N", "exact rules one NF may hold (and all NFs "
	  "keep\nafter them); default flow capacity / 8; 0 = none",
	  ZN_OPT_UINT, ZN_CFG(nf_flow_quota), 0, 1u << 26, NULL },
	{ "tenant-flow-quota", 0, "N", "exact rules of one tenant (its socket "
	  "and NFs);\ndefault flow capacity / 4; 0 = none", ZN_OPT_UINT,
	  ZN_CFG(tenant_flow_quota), 0, 1u << 26, NULL },
	{ "fdir-rehash", 0, NULL, "benchmark baseline: parse, hash and look "
	  "up every packet\nat every hop (as OpenNetVM does)", ZN_OPT_FLAG,
	  ZN_CFG(fdir_rehash), 0, 0, NULL },
};

static const struct zn_opts fdir_opts = {
	.order = ZN_SUBSYS_FDIR, .opt = fdir_opt, .n = RTE_DIM(fdir_opt),
	.defaults = fdir_defaults,
};
ZN_OPTIONS_REGISTER(fdir_opts)
