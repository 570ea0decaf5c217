/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FDIR_H
#define ZN_FDIR_H

/* The flow director, control side (fdir.c, fdir_acl.c; commands in
 * fdir_cmds.c): the default chain, chains by id, wildcard rules (rte_acl)
 * and exact flow rules. A source of the routing snapshot (route.h): it
 * fills its part of each, and republishes after a change. Control thread
 * only. The classifier workers run is in
 * fdir_hot.c (worker.h). */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include <zeronf/flow.h>
#include <zeronf/step.h>

struct zn_mgr;
struct zn_route;


/** Default chain (chain 0): set (validated, published) or read. */
int zn_chain_set(struct zn_mgr *m, const struct zn_step *steps,
		 unsigned int n, char *err, size_t errlen);
unsigned int zn_chain_get(struct zn_mgr *m, struct zn_step *steps);
/** Handle an NF's steering request (ZN_MSG_STEER). @return 0 or -errno */
int zn_fdir_steer(struct zn_mgr *m, unsigned int slot);

#define ZN_FDIR_MAX_PRIORITY 8000
#define ZN_FDIR_MAX_RULES 65536

/** A wildcard rule. Ports are host order, [lo, hi]; addresses as bytes. */
struct zn_fdir_rule {
	uint32_t id;
	int32_t priority;   /* 0..ZN_FDIR_MAX_PRIORITY, higher wins */
	uint8_t ip_version; /* 4 or 6; 0: both (no addresses given) */
	uint8_t proto;
	bool proto_any;
	uint8_t src_len;    /* prefix lengths */
	uint8_t dst_len;
	uint8_t chain;      /* set by zn_fdir_rule_add */
	uint8_t tenant;     /* 0: the operator's, for every packet; t + 1:
			     * tenant t's, for its packets only */
	uint16_t sport[2];
	uint16_t dport[2];
	uint8_t src[16];
	uint8_t dst[16];
};

/* An exact rule's data in the flow table: fdir.c writes it, fdir_hot.c
 * reads it (chain first, acquire: tenant is stored before it). */
struct zn_fdir_exact {
	uint8_t chain;
	uint8_t tenant; /* as zn_fdir_rule's */
	uint16_t owner; /* who added it (quotas): ZN_FDIR_BY_* */
	uint8_t pair;   /* added with its reverse (flow.add "both"): they
			 * go together (zn_fdir_flow_del) */
};

/* An exact rule's owner: a control socket's; NF slot s's (s + 1: removed
 * when it goes); kept by the NF that added it (ZN_STEER_F_KEEP) */
#define ZN_FDIR_BY_SOCKET 0
#define ZN_FDIR_BY_NF(slot) ((uint16_t)((slot) + 1))
#define ZN_FDIR_BY_KEPT ((uint16_t)(ZN_MAX_NFS + 1))

/* What rte_acl reads of a packet (fdir_acl.c): its flow key, ports in
 * network order, then its tenant + 1 (0: none) as a network-order word
 * (as a 1-byte field after the ports it never matched here: rules of
 * tenant 1 matched none of its packets). */
struct zn_fdir_acl_in {
	struct zn_flow_key key;
	uint32_t tenant_be;
};

struct zn_fdir_counts {
	uint32_t flows, capacity, rules, chains;
	uint32_t nf_quota, tenant_quota, kept; /* exact rules (0: none) */
	uint64_t flows_added, flows_expired, flows_of_gone_nfs, over_quota;
};

/** @return the new rule id (> 0), or -errno (err set). */
int zn_fdir_rule_add(struct zn_mgr *m, struct zn_fdir_rule *r,
		     const struct zn_step *steps, unsigned int n, char *err,
		     size_t errlen);
/* The owner a deletion names: the operator's control socket deletes
 * anyone's rule. */
#define ZN_FDIR_ANY_OWNER UINT32_MAX

/** Delete rule @p id if its tenant is @p tenant (0: the operator's; t +
 *  1: tenant t's; ZN_FDIR_ANY_OWNER). 0, -ENOENT, or the rebuild's
 *  -errno. */
int zn_fdir_rule_del(struct zn_mgr *m, uint32_t id, unsigned int tenant);
const struct zn_fdir_rule *zn_fdir_rules(struct zn_mgr *m, unsigned int *n);

/** Add or replace the exact rule of one direction of a flow, for
 *  @p tenant's packets (t + 1; 0: every packet), added by @p by
 *  (ZN_FDIR_BY_*). A rule of another tenant for the same key is not
 *  replaced: -EEXIST. A new rule past @p by's quota (an NF's, or that of
 *  the rules NFs keep) or the tenant's: -EDQUOT. @p pair: one of a
 *  flow's two directions added together (deleted together). 0 or
 *  -errno. */
int zn_fdir_flow_add(struct zn_mgr *m, const struct zn_flow_key *key,
		     const struct zn_step *steps, unsigned int n,
		     unsigned int tenant, uint16_t by, bool pair, char *err,
		     size_t errlen);
/** NF slot @p slot (named @p name) is gone: remove the rules it added and
 *  did not ask to keep (a dead NF's rules must not fill the table for
 *  others). @return how many. */
unsigned int zn_fdir_nf_gone(struct zn_mgr *m, unsigned int slot,
			     const char *name);
/** Delete it if its tenant is @p tenant (as zn_fdir_rule_del), and its
 *  reverse with it when the two were added as a pair. @return how many
 *  went (1 or 2), or -ENOENT. */
int zn_fdir_flow_del(struct zn_mgr *m, const struct zn_flow_key *key,
		     unsigned int tenant);
/** The exact rules one by one (@p cursor from 0): each one's key, chain,
 *  tenant (as zn_fdir_flow_add's) and who added it (ZN_FDIR_BY_*).
 *  @return >= 0, or -ENOENT past the last. */
int zn_fdir_flow_iterate(struct zn_mgr *m, uint32_t *cursor,
			 const struct zn_flow_key **key, unsigned int *chain,
			 unsigned int *tenant, unsigned int *by);
/**
 * The chain of packets entering from port @p port that no flow rule
 * matches, instead of the default chain (packets back from an external
 * hop: a TAP or veth to a plain Linux program, docs/security.md); @p n 0:
 * none again. Validated and published. 0 or -errno (err set).
 */
int zn_fdir_port_chain_set(struct zn_mgr *m, unsigned int port,
			   const struct zn_step *steps, unsigned int n,
			   char *err, size_t errlen);
/** May a rule of the flow director match a packet entering now (wildcard
 *  rules, exact rules, or one being added)? Then only a worker may take
 *  what enters (mgr/port/port_nfrx.c). */
bool zn_fdir_classifies(const struct zn_mgr *m);
/** Steps of port @p port's chain. @return how many (0: none). */
unsigned int zn_fdir_port_chain(struct zn_mgr *m, unsigned int port,
				struct zn_step *steps);
/** Tenant @p t's chain (tenant.h): its packets that no rule matches take
 *  it; @p n 0: none (they drop as no_tenant). Checked (its services and
 *  ports only) and published. 0 or -errno (err set). */
int zn_fdir_tenant_chain_set(struct zn_mgr *m, unsigned int t,
			     const struct zn_step *steps, unsigned int n,
			     char *err, size_t errlen);
/** Steps of tenant @p t's chain. @return how many (0: none). */
unsigned int zn_fdir_tenant_chain(struct zn_mgr *m, unsigned int t,
				  struct zn_step *steps);
/** A chain for another classifier (the OpenFlow table, mgr/sdn/oft.h):
 *  @p steps checked, interned, one reference taken, and published before
 *  this returns when new (workers know it before any packet is given
 *  it). @return its id (1..255), or -errno (err set). */
int zn_fdir_chain_take(struct zn_mgr *m, const struct zn_step *steps,
		       unsigned int n, char *err, size_t errlen);
/** Give back a reference of zn_fdir_chain_take() once no worker can
 *  give a packet chain @p id any more (after a sync). */
void zn_fdir_chain_put(struct zn_mgr *m, unsigned int id);
/** Steps of chain @p id. @return how many (0: unused id). */
unsigned int zn_fdir_chain_steps(struct zn_mgr *m, unsigned int id,
				struct zn_step *steps);
void zn_fdir_counts(struct zn_mgr *m, struct zn_fdir_counts *c);

/* fdir_acl.c: @p rules of IP version 4 (@p v6 0) or 6 compiled into a
 * new rte_acl context named by @p gen; a rule's chain + 1 is its
 * userdata. NULL with *err 0: no rule of that version; NULL with *err
 * < 0: failed. */
struct rte_acl_ctx;
struct rte_acl_ctx *zn_fdir_acl_build(const struct zn_fdir_rule *rules,
				      unsigned int n_rules, int v6,
				      unsigned int gen, int *err);

/* fdir_json.c: the commands' JSON forms (fuzzed too). flow.add's "flow"
 * object, rule.add's "match" object: 0 or -EINVAL with a message in
 * @p err; and back to JSON. */
int zn_fdir_parse_flow(json_t *o, struct zn_flow_key *key, char *err,
		       size_t errlen);
int zn_fdir_parse_match(json_t *o, struct zn_fdir_rule *r, char *err,
			size_t errlen);

json_t *zn_fdir_flow_json(const struct zn_flow_key *k);
json_t *zn_fdir_match_json(const struct zn_fdir_rule *r);
/** Reject members of @p o not in @p allowed (NULL-terminated), naming
 *  @p what. 0 or -EINVAL. */
int zn_fdir_check_keys(json_t *o, const char *const *allowed,
		       const char *what, char *err, size_t errlen);

#endif /* ZN_FDIR_H */
