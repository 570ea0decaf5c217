/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_TENANT_H
#define ZN_TENANT_H

/*
 * Tenants: isolated virtual routers (Europa). A tenant is a trust group
 * (its packet pool, mgr/trust/group.c) plus its slices of ports, a range of
 * service ids, its own chain and its own counters. tenant.c: options,
 * checks and commands (control thread); tenant_hot.c: the ingress
 * classifier (workers). docs/security.md "Tenants".
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <zeronf/step.h>

#include "../core/args.h"
#include "../core/mgr.h"
#include "../nf/nf_rec.h"

struct zn_mgr;
struct zn_worker;
struct zn_route;
struct rte_mbuf;

enum zn_slice_kind {
	ZN_SLICE_PORT = 0, /* the port's packets no other slice takes */
	ZN_SLICE_VLAN,     /* outer 802.1Q VLAN id */
	ZN_SLICE_MAC,      /* destination MAC */
	ZN_SLICE_PREFIX,   /* destination IPv4/IPv6 prefix */
};

/* Built from the options at start (zn_tenant_init), then read-only:
 * what workers and checks read. Process memory. */
struct zn_tenants {
	/* group index + 1 -> tenant index + 1 (0: the group is no
	 * tenant's, and the shared pool [0] is none) */
	uint8_t grp_tenant[ZN_MAX_GROUPS + 1];
	/* bit t: tenant t has a slice of the port; 0: the port is not
	 * sliced (its packets belong to no tenant) */
	uint16_t port_mask[ZN_MAX_PORTS];
	uint8_t port_rest[ZN_MAX_PORTS];   /* tenant + 1 of a whole-port
					    * slice, 0: none */
	uint16_t first[ZN_MAX_PORTS];      /* the port's match slices: */
	uint16_t n_match[ZN_MAX_PORTS];    /* match[first..+n_match) */
	struct zn_slice_cfg match[ZN_MAX_SLICES]; /* by port, as given */
	uint8_t svc_tenant[ZN_MAX_SERVICES]; /* tenant + 1, 0: none */
};
_Static_assert(ZN_MAX_TENANTS <= 16, "port_mask has a bit per tenant");


/** The index of the tenant called @p name, or -ENOENT. */
int zn_tenant_find(const struct zn_mgr *m, const char *name);
/** Tenant @p t's (index + 1; 0: the operator) name @p name for its NF, as
 *  the manager keeps it: "TENANT:NAME", so that tenants' names never meet
 *  (nor say that another tenant has one). 0, or -ENAMETOOLONG (longer than
 *  @p len - 1). */
int zn_tenant_scoped_name(const struct zn_mgr *m, unsigned int t,
			  const char *name, char *buf, size_t len);
/** @p name as tenant @p t (index + 1; 0: the operator, who sees names
 *  whole) sees it: without its "TENANT:". */
const char *zn_tenant_shown_name(const struct zn_mgr *m, unsigned int t,
				 const char *name);
/** May an NF of trust group @p group (index + 1, 0: none) register
 *  service @p svc? A tenant's services are its own: false with a reason
 *  in @p err. */
bool zn_tenant_svc_ok(const struct zn_mgr *m, uint32_t group, uint16_t svc,
		      char *err, size_t errlen);
/** The tenant + 1 of trust group @p group (index + 1; 0: none). */
static inline unsigned int
zn_tenant_of_group(const struct zn_mgr *m, unsigned int group)
{
	return m->tn != NULL && group <= ZN_MAX_GROUPS ?
	       m->tn->grp_tenant[group] : 0;
}

/** The tenant + 1 of the NF in @p slot (0: none). Hot-path safe. */
static inline unsigned int
zn_tenant_of_nf(const struct zn_mgr *m, unsigned int slot)
{
	return slot < ZN_MAX_NFS ?
	       zn_tenant_of_group(m, zn_group_id(m->nf[slot].group)) : 0;
}
/** Is port @p port divided among tenants? */
bool zn_tenant_port_sliced(const struct zn_mgr *m, unsigned int port);
/** Hops for a chain of @p tenant (index, or -1: an operator's chain):
 *  a tenant's chain names only its services and ports; an operator's
 *  chain does not mix one tenant's services with anything not that
 *  tenant's (its NFs could not send there). 0 or -EPERM with @p err. */
int zn_tenant_steps_check(const struct zn_mgr *m, int tenant,
			 const struct zn_step *steps, unsigned int n, char *err,
			 size_t errlen);

/** Ingress from sliced port @p port (workers), instead of
 *  zn_fdir_classify: each packet's tenant by the port's slices (none:
 *  freed, counted as no_tenant), the burst ordered by tenant, rules (a
 *  tenant's match its packets only), then its tenant's chain where no
 *  rule matched (none: no_tenant, counted as its no_chain). @return the
 *  packets kept, compacted in @p pkts. */
unsigned int zn_tenant_classify(struct zn_worker *w, const struct zn_route *rt,
				uint16_t port, struct rte_mbuf **pkts,
				unsigned int n);

#endif /* ZN_TENANT_H */
