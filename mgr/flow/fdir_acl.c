/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Wildcard rules compiled with rte_acl (fdir.c keeps the rules and
 * publishes the contexts): one context per IP version. A rule's priority
 * inside rte_acl orders by the rule's priority, then by age (the older
 * wins), so equal priorities never depend on rte_acl's tie-breaking.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>

#include "fdir.h"

#define ACL_BUILD_MAX_MB 512

/* ------------------------------------------------------------------ */
/* rte_acl layout. The input is a struct zn_fdir_acl_in: a flow key with */
/* its ports in network order (rte_acl wants input in network order,    */
/* rules in host), then the packet's tenant: a tenant's rule matches    */
/* its tenant's packets only, the operator's every packet.              */

enum { F4_PROTO, F4_SRC, F4_DST, F4_SPORT, F4_DPORT, F4_TENANT, F4_NUM };
enum { F6_PROTO, F6_SRC0, F6_DST0 = F6_SRC0 + 4, F6_SPORT = F6_DST0 + 4,
       F6_DPORT, F6_TENANT, F6_NUM };

RTE_ACL_RULE_DEF(acl4_rule, F4_NUM);
RTE_ACL_RULE_DEF(acl6_rule, F6_NUM);

#define KOFF(f) ((uint32_t)offsetof(struct zn_flow_key, f))

static unsigned int
acl_defs(int v6, struct rte_acl_field_def *d)
{
	unsigned int n = 0, in = 0;

	d[n++] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK, 1,
		0, in++, KOFF(proto) };
	for (unsigned int i = 0; i < (v6 ? 4u : 1u); i++, n++)
		d[n] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_MASK, 4,
			(uint8_t)n, (uint8_t)in++, KOFF(src) + 4 * i };
	for (unsigned int i = 0; i < (v6 ? 4u : 1u); i++, n++)
		d[n] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_MASK, 4,
			(uint8_t)n, (uint8_t)in++, KOFF(dst) + 4 * i };
	d[n] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_RANGE, 2,
		(uint8_t)n, (uint8_t)in, KOFF(src_port) };
	n++;
	d[n] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_RANGE, 2,
		(uint8_t)n, (uint8_t)in++, KOFF(dst_port) };
	n++;
	d[n] = (struct rte_acl_field_def){ RTE_ACL_FIELD_TYPE_BITMASK, 4,
		(uint8_t)n, (uint8_t)in,
		(uint32_t)offsetof(struct zn_fdir_acl_in, tenant_be) };
	return n + 1;
}

static void
prefix_fields(struct rte_acl_field *f, const uint8_t *addr, unsigned int len,
	      unsigned int words)
{
	for (unsigned int i = 0; i < words; i++) {
		uint32_t be;
		int bits = (int)len - 32 * (int)i;

		memcpy(&be, addr + 4 * i, 4);
		f[i].value.u32 = rte_be_to_cpu_32(be);
		f[i].mask_range.u32 = (uint32_t)RTE_MAX(0, RTE_MIN(bits, 32));
	}
}

/* Internal priority: higher rule priority first, then the older rule. */
static int32_t
acl_priority(const struct zn_fdir_rule *r, unsigned int rank)
{
	return RTE_ACL_MIN_PRIORITY + r->priority * ZN_FDIR_MAX_RULES +
	       (ZN_FDIR_MAX_RULES - 1 - (int32_t)rank);
}

static void
acl_rule_fill(const struct zn_fdir_rule *r, unsigned int rank, int v6,
	      struct rte_acl_rule_data *data, struct rte_acl_field *f)
{
	unsigned int w = v6 ? 4 : 1;

	data->category_mask = 1;
	data->priority = acl_priority(r, rank);
	data->userdata = (uint32_t)r->chain + 1; /* 0 means no match */
	f[0].value.u8 = r->proto;
	f[0].mask_range.u8 = r->proto_any ? 0 : 0xff;
	prefix_fields(&f[1], r->src, r->src_len, w);
	prefix_fields(&f[1 + w], r->dst, r->dst_len, w);
	f[1 + 2 * w].value.u16 = r->sport[0];
	f[1 + 2 * w].mask_range.u16 = r->sport[1];
	f[2 + 2 * w].value.u16 = r->dport[0];
	f[2 + 2 * w].mask_range.u16 = r->dport[1];
	f[3 + 2 * w].value.u32 = r->tenant;
	f[3 + 2 * w].mask_range.u32 = r->tenant != 0 ? UINT32_MAX : 0;
}

/* A rule without addresses or "ip" applies to both IP versions. */
static inline bool
rule_in(const struct zn_fdir_rule *r, int v6)
{
	return r->ip_version == 0 || r->ip_version == (v6 ? 6 : 4);
}

struct rte_acl_ctx *
zn_fdir_acl_build(const struct zn_fdir_rule *rules, unsigned int n_rules,
		  int v6, unsigned int gen, int *err)
{
	struct rte_acl_config cfg = { .num_categories = 1,
				      .max_size = (size_t)ACL_BUILD_MAX_MB
						  << 20 };
	char name[RTE_ACL_NAMESIZE];
	struct rte_acl_param prm = {
		.name = name,
		.socket_id = SOCKET_ID_ANY,
		.rule_size = (uint32_t)RTE_ACL_RULE_SZ(v6 ? F6_NUM : F4_NUM),
		.max_rule_num = ZN_FDIR_MAX_RULES,
	};
	struct rte_acl_ctx *ctx;
	unsigned int n = 0;

	*err = 0;
	for (unsigned int i = 0; i < n_rules; i++)
		n += rule_in(&rules[i], v6);
	if (n == 0)
		return NULL;
	snprintf(name, sizeof(name), "zn_acl%d_%u", v6 ? 6 : 4, gen);
	ctx = rte_acl_create(&prm);
	if (ctx == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	for (unsigned int i = 0; i < n_rules; i++) {
		const struct zn_fdir_rule *r = &rules[i];
		struct acl6_rule ar6;
		struct acl4_rule ar4;
		int rc;

		if (!rule_in(r, v6))
			continue;
		if (v6) {
			memset(&ar6, 0, sizeof(ar6));
			acl_rule_fill(r, i, 1, &ar6.data, ar6.field);
			rc = rte_acl_add_rules(ctx, (struct rte_acl_rule *)&ar6,
					       1);
		} else {
			memset(&ar4, 0, sizeof(ar4));
			acl_rule_fill(r, i, 0, &ar4.data, ar4.field);
			rc = rte_acl_add_rules(ctx, (struct rte_acl_rule *)&ar4,
					       1);
		}
		if (rc < 0) {
			rte_acl_free(ctx);
			*err = rc;
			return NULL;
		}
	}
	cfg.num_fields = acl_defs(v6, cfg.defs);
	*err = rte_acl_build(ctx, &cfg);
	if (*err < 0) {
		rte_acl_free(ctx);
		return NULL;
	}
	return ctx;
}

