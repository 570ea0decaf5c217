/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FDIR_H
#define ZN_FDIR_H

/* Flow director rules (fdir.c), used by the control commands. Control
 * thread only. */

#include <stdbool.h>
#include <stdint.h>

#include <zeronf/flow.h>

#include "mgr.h"

#define ZN_FDIR_MAX_PRIORITY 8000

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
	uint16_t sport[2];
	uint16_t dport[2];
	uint8_t src[16];
	uint8_t dst[16];
};

struct zn_fdir_counts {
	uint32_t flows, capacity, rules, chains;
	uint64_t flows_added, flows_expired;
};

/** @return the new rule id (> 0), or -errno (err set). */
int zn_fdir_rule_add(struct zn_mgr *m, struct zn_fdir_rule *r,
		     const struct zn_hop *hops, unsigned int n, char *err,
		     size_t errlen);
int zn_fdir_rule_del(struct zn_mgr *m, uint32_t id);
const struct zn_fdir_rule *zn_fdir_rules(struct zn_mgr *m, unsigned int *n);

/** Add or replace the exact rule of one direction of a flow. 0 or -errno */
int zn_fdir_flow_add(struct zn_mgr *m, const struct zn_flow_key *key,
		     const struct zn_hop *hops, unsigned int n, char *err,
		     size_t errlen);
int zn_fdir_flow_del(struct zn_mgr *m, const struct zn_flow_key *key);
int zn_fdir_flow_iterate(struct zn_mgr *m, uint32_t *cursor,
			 const struct zn_flow_key **key, unsigned int *chain);
/** Hops of chain @p id. @return hop count (0: unused id). */
unsigned int zn_fdir_chain_hops(struct zn_mgr *m, unsigned int id,
				struct zn_hop *hops);
void zn_fdir_counts(struct zn_mgr *m, struct zn_fdir_counts *c);

#endif /* ZN_FDIR_H */
