/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Rules compiled with rte_acl. The lookup key of a packet (struct key4,
 * struct key6) is built in network order, as rte_acl reads its input;
 * rule values are in host order, as it wants them:
 *
 *   proto     1 byte, the first field (rte_acl wants a byte first)
 *   meta      32 bits: connection state (one bit, 0-7), TCP flags (8-15),
 *             "L4 header read" (16): a rule naming ports, an ICMP type
 *             or flags matches only packets whose header was read (as
 *             nftables' payload match fails on a cut header)
 *   src, dst  IPv4: one 32-bit masked field each; IPv6: four each
 *   ports     source and destination ranges; ICMP: type and code
 */

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_byteorder.h>
#include <rte_common.h>

#include <zeronf/zeronf.h>

#include "fw_acl.h"

#define META_L4 (1u << 16)
#define PRIO_TOP RTE_ACL_MAX_PRIORITY

struct key4 {
	uint8_t proto;
	uint8_t pad[3];
	uint32_t meta;
	uint32_t src, dst;
	uint16_t sport, dport;
};

struct key6 {
	uint8_t proto;
	uint8_t pad[3];
	uint32_t meta;
	uint32_t src[4], dst[4];
	uint16_t sport, dport;
};
/* the offsets def_fields() gives rte_acl */
_Static_assert(offsetof(struct key4, meta) == 4 &&
	       offsetof(struct key4, src) == 8 &&
	       offsetof(struct key4, sport) == 16, "key4 layout");
_Static_assert(offsetof(struct key6, src) == 8 &&
	       offsetof(struct key6, sport) == 40, "key6 layout");

enum { F4_PROTO, F4_META, F4_SRC, F4_DST, F4_SPORT, F4_DPORT, F4_NUM };
enum { F6_PROTO, F6_META, F6_SRC0, F6_DST0 = F6_SRC0 + 4,
       F6_SPORT = F6_DST0 + 4, F6_DPORT, F6_NUM };

RTE_ACL_RULE_DEF(rule4, F4_NUM);
RTE_ACL_RULE_DEF(rule6, F6_NUM);

struct fw_acl {
	struct rte_acl_ctx *ctx[2]; /* IPv4, IPv6; NULL: no rule */
	uint32_t count[2];
	struct zn_nf *nf;
};

static void
def_fields(struct rte_acl_field_def *d, bool v6)
{
	unsigned int n = 0, idx = 0;

	d[n++] = (struct rte_acl_field_def){
		.type = RTE_ACL_FIELD_TYPE_BITMASK, .size = 1,
		.field_index = 0, .input_index = idx++, .offset = 0 };
	d[n] = (struct rte_acl_field_def){
		.type = RTE_ACL_FIELD_TYPE_BITMASK, .size = 4,
		.field_index = n, .input_index = idx++, .offset = 4 };
	n++;
	for (unsigned int i = 0; i < (v6 ? 8u : 2u); i++, n++)
		d[n] = (struct rte_acl_field_def){
			.type = RTE_ACL_FIELD_TYPE_MASK, .size = 4,
			.field_index = n, .input_index = idx++,
			.offset = 8 + 4 * i };
	for (unsigned int i = 0; i < 2; i++, n++)
		d[n] = (struct rte_acl_field_def){
			.type = RTE_ACL_FIELD_TYPE_RANGE, .size = 2,
			.field_index = n, .input_index = idx,
			.offset = (v6 ? 40 : 16) + 2 * i };
}

/* The mask bits of 32-bit word @p w of a prefix of @p len bits. */
static uint32_t
word_bits(unsigned int len, unsigned int w)
{
	unsigned int lo = w * 32;

	return len <= lo ? 0 : len >= lo + 32 ? 32 : len - lo;
}

static uint32_t
word(const uint8_t *a, unsigned int w)
{
	return (uint32_t)a[4 * w] << 24 | (uint32_t)a[4 * w + 1] << 16 |
	       (uint32_t)a[4 * w + 2] << 8 | a[4 * w + 3];
}

/* The fields of rule @p r for state bit @p ct (0: any), into @p f. */
static void
fill(const struct fw_rule *r, uint8_t ct, bool v6, struct rte_acl_field *f)
{
	unsigned int n = 0;
	uint32_t meta = 0, mask = 0;
	bool l4 = r->ports || r->icmp_type >= 0 || r->flags_mask != 0;

	f[n].value.u8 = r->proto;
	f[n++].mask_range.u8 = r->has_proto ? 0xff : 0;
	meta = ct | (uint32_t)r->flags_cmp << 8 | (l4 ? META_L4 : 0);
	mask = (ct ? 0xffu : 0) | (uint32_t)r->flags_mask << 8 |
	       (l4 ? META_L4 : 0);
	f[n].value.u32 = meta;
	f[n++].mask_range.u32 = mask;
	for (unsigned int w = 0; w < (v6 ? 4u : 1u); w++, n++) {
		f[n].value.u32 = word(r->src, w);
		f[n].mask_range.u32 = word_bits(r->src_len, w);
	}
	for (unsigned int w = 0; w < (v6 ? 4u : 1u); w++, n++) {
		f[n].value.u32 = word(r->dst, w);
		f[n].mask_range.u32 = word_bits(r->dst_len, w);
	}
	if (r->icmp_type >= 0) { /* type in the source port's place */
		f[n].value.u16 = (uint16_t)r->icmp_type;
		f[n++].mask_range.u16 = (uint16_t)r->icmp_type;
		f[n].value.u16 = r->icmp_code >= 0 ? (uint16_t)r->icmp_code : 0;
		f[n++].mask_range.u16 = r->icmp_code >= 0 ?
					(uint16_t)r->icmp_code : 0xffff;
	} else {
		f[n].value.u16 = r->sport_lo;
		f[n++].mask_range.u16 = r->sport_hi;
		f[n].value.u16 = r->dport_lo;
		f[n++].mask_range.u16 = r->dport_hi;
	}
}

static int
build_one(const struct fw_ruleset *rs, bool v6, const char *name,
	  struct rte_acl_ctx **out, uint32_t *count, char *err, size_t errlen)
{
	unsigned int nf = v6 ? F6_NUM : F4_NUM;
	size_t rsz = RTE_ACL_RULE_SZ(nf);
	struct rte_acl_config cfg = { .num_categories = 1,
				      .num_fields = nf };
	struct rte_acl_ctx *ctx;
	uint8_t fam = v6 ? 6 : 4;
	uint32_t total = 0, k = 0;
	uint8_t *rules;
	int rc;

	*out = NULL;
	*count = 0;
	for (uint32_t i = 0; i < rs->n; i++)
		if (rs->r[i].family == 0 || rs->r[i].family == fam)
			total += rs->r[i].ct ?
				 (uint32_t)__builtin_popcount(rs->r[i].ct) : 1;
	if (total == 0)
		return 0;
	rules = calloc(total, rsz);
	if (rules == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < rs->n; i++) {
		const struct fw_rule *r = &rs->r[i];

		if (r->family != 0 && r->family != fam)
			continue;
		for (uint8_t b = 1; b <= FW_CT_UNTRACKED; b <<= 1) {
			struct rte_acl_rule *ar;

			if (r->ct != 0 && !(r->ct & b))
				continue;
			ar = (struct rte_acl_rule *)(rules + (size_t)k++ * rsz);
			ar->data.category_mask = 1;
			ar->data.priority = (int32_t)(PRIO_TOP - i);
			ar->data.userdata = i + 1;
			fill(r, r->ct != 0 ? b : 0, v6, ar->field);
			if (r->ct == 0)
				break;
		}
	}
	ctx = rte_acl_create(&(struct rte_acl_param){
		.name = name, .socket_id = SOCKET_ID_ANY, .rule_size = (int)rsz,
		.max_rule_num = total });
	if (ctx == NULL) {
		free(rules);
		snprintf(err, errlen, "rte_acl_create %s: %s", name,
			 rte_strerror(rte_errno));
		return -rte_errno ? -rte_errno : -ENOMEM;
	}
	rc = rte_acl_add_rules(ctx, (const struct rte_acl_rule *)rules, total);
	free(rules);
	if (rc == 0) {
		def_fields(cfg.defs, v6);
		rc = rte_acl_build(ctx, &cfg);
	}
	if (rc != 0) {
		snprintf(err, errlen, "rte_acl: %s rules of IPv%u: %s", name,
			 fam, strerror(-rc));
		rte_acl_free(ctx);
		return rc;
	}
	*out = ctx;
	*count = total;
	return 0;
}

int
fw_acl_build(const struct fw_ruleset *rs, const char *name, struct zn_nf *nf,
	     struct fw_acl **out, char *err, size_t errlen)
{
	static unsigned int gen;
	struct fw_acl *a = calloc(1, sizeof(*a));
	char nm[RTE_ACL_NAMESIZE];
	int rc = 0;

	if (a == NULL) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	a->nf = nf;
	gen++;
	for (unsigned int v = 0; v < 2 && rc == 0; v++) {
		snprintf(nm, sizeof(nm), "%s%c-%u", name, v ? '6' : '4', gen);
		rc = build_one(rs, v == 1, nm, &a->ctx[v], &a->count[v], err,
			       errlen);
		if (rc == 0 && a->ctx[v] != NULL && nf != NULL &&
		    zn_nf_obj_track(nf, ZN_NF_OBJ_ACL, nm, a->ctx[v]) < 0) {
			/* untracked: still ours to free */
		}
	}
	if (rc < 0) {
		fw_acl_free(a);
		return rc;
	}
	*out = a;
	return 0;
}

void
fw_acl_free(struct fw_acl *a)
{
	if (a == NULL)
		return;
	for (unsigned int v = 0; v < 2; v++) {
		if (a->ctx[v] == NULL)
			continue;
		if (a->nf != NULL)
			zn_nf_obj_untrack(a->nf, a->ctx[v]);
		rte_acl_free(a->ctx[v]);
	}
	free(a);
}

void
fw_acl_abandon(struct fw_acl *a)
{
	free(a);
}

void
fw_acl_counts(const struct fw_acl *a, uint32_t *v4, uint32_t *v6)
{
	*v4 = a->count[0];
	*v6 = a->count[1];
}

static uint32_t
meta_of(const struct fw_pkt *k, uint8_t ct)
{
	return rte_cpu_to_be_32(ct | (uint32_t)k->tcp_flags << 8 |
				(k->l4 ? META_L4 : 0));
}

/* Ports, or an ICMP message's type and code, in network order. */
static void
ports_of(const struct fw_pkt *k, uint16_t *sp, uint16_t *dp)
{
	if (!k->l4) {
		*sp = *dp = 0;
	} else if (k->proto == (k->family == 4 ? 1 : 58)) {
		*sp = rte_cpu_to_be_16(k->icmp_type);
		*dp = rte_cpu_to_be_16(k->icmp_code);
	} else {
		*sp = rte_cpu_to_be_16(k->t.sport);
		*dp = rte_cpu_to_be_16(k->t.dport);
	}
}

void
fw_acl_match(const struct fw_acl *a, const struct fw_pkt *const *k,
	     const uint8_t *ct, uint32_t n, uint32_t *rule)
{
	struct key4 k4[ZN_BURST];
	struct key6 k6[ZN_BURST];
	const uint8_t *d4[ZN_BURST], *d6[ZN_BURST];
	uint32_t r4[ZN_BURST], r6[ZN_BURST];
	uint32_t i4[ZN_BURST], i6[ZN_BURST];
	uint32_t n4 = 0, n6 = 0;

	for (uint32_t off = 0; off < n; off += ZN_BURST) {
		uint32_t m = RTE_MIN(n - off, (uint32_t)ZN_BURST);

		n4 = n6 = 0;
		for (uint32_t j = 0; j < m; j++) {
			const struct fw_pkt *p = k[off + j];

			rule[off + j] = 0;
			if (p->family == 4 && a->ctx[0] != NULL) {
				struct key4 *q = &k4[n4];

				q->proto = p->proto;
				q->meta = meta_of(p, ct[off + j]);
				memcpy(&q->src, p->t.src, 4);
				memcpy(&q->dst, p->t.dst, 4);
				ports_of(p, &q->sport, &q->dport);
				d4[n4] = (const uint8_t *)q;
				i4[n4++] = off + j;
			} else if (p->family == 6 && a->ctx[1] != NULL) {
				struct key6 *q = &k6[n6];

				q->proto = p->proto;
				q->meta = meta_of(p, ct[off + j]);
				memcpy(q->src, p->t.src, 16);
				memcpy(q->dst, p->t.dst, 16);
				ports_of(p, &q->sport, &q->dport);
				d6[n6] = (const uint8_t *)q;
				i6[n6++] = off + j;
			}
		}
		if (n4 > 0 && rte_acl_classify(a->ctx[0], d4, r4, n4, 1) == 0)
			for (uint32_t j = 0; j < n4; j++)
				rule[i4[j]] = r4[j];
		if (n6 > 0 && rte_acl_classify(a->ctx[1], d6, r6, n6, 1) == 0)
			for (uint32_t j = 0; j < n6; j++)
				rule[i6[j]] = r6[j];
	}
}
