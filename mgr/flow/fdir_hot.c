/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Flow director, hot side: give each packet entering from a port its
 * chain id (metadata `chain`). Exact rules first (one rte_hash burst
 * lookup with the packet's stored flow hash), then wildcard rules
 * (rte_acl, per IP version), else chain 0. With no rule at all this is one
 * branch per burst. Rules are documented in fdir.c.
 */

#include <rte_acl.h>
#include <rte_byteorder.h>

#include "fdir.h"
#include "../core/mgr.h"
#include "../trust/owner_map.h"
#include "../datapath/worker.h"
#include "route.h"
#include "../../lib/common/zn_flow.h"
#include "../../lib/common/zn_util.h"

#define CHUNK 64u /* zn_ft_lookup_burst's maximum */

/* The hash the exact table was filled with: the software flow hash. A
 * NIC's RSS hash (also symmetric, but a different function) is not it. */
static inline uint32_t
exact_hash(const struct zn_route *rt, struct rte_mbuf *m,
	   const struct zn_flow_key *key)
{
	const struct zn_pkt_meta *meta = zn_pkt_meta(m);

	if (rt->rehash_every_hop || (meta->flags & ZN_PKT_F_HASH_RSS))
		return zn_flow_hash_key(key);
	if (meta->flags & ZN_PKT_F_HASH_VALID)
		return meta->flow_hash;
	/* First use of the hash: compute it from the key we already have
	 * and keep it for every later hop. */
	uint32_t h = zn_flow_hash_key(key);

	zn_pkt_set_flow_hash(m, h);
	return h;
}

static void
classify_chunk(struct zn_worker *w, const struct zn_route *rt,
	       bool any_exact, struct rte_mbuf **pkts, unsigned int n,
	       const uint8_t *tenant)
{
	struct zn_fdir_acl_in in[CHUNK];
	const struct zn_flow_key *kp[CHUNK];
	const uint8_t *data[2][CHUNK];
	uint32_t hashes[CHUNK], res[CHUNK];
	struct zn_ft_hit hits[CHUNK];
	uint16_t idx[CHUNK], acl_idx[2][CHUNK];
	unsigned int nk = 0, na[2] = { 0, 0 }, exact = 0, rule = 0;

	for (unsigned int i = 0; i < n; i++) {
		const uint8_t *p;
		uint32_t len;

		zn_pkt_meta(pkts[i])->chain = 0;
		p = zn_owner_map_pkt_data(w->mgr->trust.owner_maps, pkts[i], &len);
		if (p == NULL || zn_flow_parse(p, len, &in[nk].key) < 0)
			continue; /* not IP: the default chain */
		in[nk].tenant_be = rte_cpu_to_be_32(tenant != NULL ? tenant[i]
							       : 0u);
		kp[nk] = &in[nk].key;
		hashes[nk] = exact_hash(rt, pkts[i], &in[nk].key);
		idx[nk++] = (uint16_t)i;
	}
	if (nk > 0 && any_exact) {
		if (w->now_ns == 0)
			w->now_ns = zn_now_ns();
		zn_ft_lookup_burst(rt->exact, kp, hashes, nk, w->now_ns, hits);
	} else {
		for (unsigned int k = 0; k < nk; k++)
			hits[k].index = -1;
	}
	for (unsigned int k = 0; k < nk; k++) {
		struct zn_flow_key *key = &in[k].key;
		int v6;

		if (hits[k].index >= 0) {
			const struct zn_fdir_exact *d = hits[k].data;
			uint8_t c = __atomic_load_n(&d->chain, __ATOMIC_ACQUIRE);

			/* Another tenant's rule: not for this packet. */
			if (d->tenant == 0 ||
			    d->tenant == rte_be_to_cpu_32(in[k].tenant_be)) {
				zn_pkt_meta(pkts[idx[k]])->chain = c;
				exact++;
				continue;
			}
		}
		v6 = key->ip_version == 6;
		if (rt->acl[v6] == NULL)
			continue;
		/* rte_acl wants network order input. */
		key->src_port = rte_cpu_to_be_16(key->src_port);
		key->dst_port = rte_cpu_to_be_16(key->dst_port);
		data[v6][na[v6]] = (const uint8_t *)&in[k];
		acl_idx[v6][na[v6]++] = idx[k];
	}
	for (int v6 = 0; v6 < 2; v6++) {
		if (na[v6] == 0)
			continue;
		rte_acl_classify(rt->acl[v6], data[v6], res, na[v6], 1);
		for (unsigned int j = 0; j < na[v6]; j++) {
			if (res[j] == 0)
				continue;
			zn_pkt_meta(pkts[acl_idx[v6][j]])->chain =
				(uint8_t)(res[j] - 1);
			rule++;
		}
	}
	w->shm->stats.fdir_exact += exact;
	w->shm->stats.fdir_rule += rule;
	w->shm->stats.fdir_miss += n - exact - rule;
}

/* What no rule matched takes its ingress port's chain, if it has one
 * (chain.set with a port): packets coming back from an external hop (a
 * TAP or veth to a plain Linux program) go on where they left. */
static void
port_chains(const struct zn_route *rt, struct rte_mbuf **pkts, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		struct zn_pkt_meta *meta = zn_pkt_meta(pkts[i]);

		if (meta->chain == 0 && meta->in_port < ZN_MAX_PORTS)
			meta->chain = rt->port_chain[meta->in_port];
	}
}

void
zn_fdir_classify(struct zn_worker *w, const struct zn_route *rt,
		 struct rte_mbuf **pkts, unsigned int n, const uint8_t *tenant)
{
	bool any_exact = zn_ft_count(rt->exact) > 0;

	if (rt->acl[0] == NULL && rt->acl[1] == NULL && !any_exact &&
	    !rt->rehash_every_hop) {
		w->shm->stats.fdir_miss += n;
	} else {
		w->now_ns = 0;
		for (unsigned int i = 0; i < n; i += CHUNK)
			classify_chunk(w, rt, any_exact, pkts + i,
				       RTE_MIN(n - i, CHUNK),
				       tenant != NULL ? tenant + i : NULL);
	}
	if (unlikely(rt->n_port_chains != 0))
		port_chains(rt, pkts, n);
}
