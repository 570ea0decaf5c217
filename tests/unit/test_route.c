/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Chain syntax and the per-packet routing decision (zn_route_resolve). */

#include <string.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "zn_test.h"
#include "../../mgr/mgr.h"

ZN_TEST(chain_parse)
{
	struct zn_hop h[ZN_MAX_CHAIN_HOPS];
	char err[128], buf[32];

	ZT_EQ(zn_chain_parse("1,svc:2,port:0,drop", h, ZN_MAX_CHAIN_HOPS, err,
			     sizeof(err)), 4);
	ZT_EQ(h[0].type, ZN_HOP_SERVICE);
	ZT_EQ(h[0].id, 1);
	ZT_EQ(h[1].id, 2);
	ZT_EQ(h[2].type, ZN_HOP_PORT);
	ZT_EQ(h[3].type, ZN_HOP_DROP);
	zn_hop_format(&h[1], buf, sizeof(buf));
	ZT_CHECK(strcmp(buf, "svc:2") == 0);
	zn_hop_format(&h[2], buf, sizeof(buf));
	ZT_CHECK(strcmp(buf, "port:0") == 0);
	for (const char *bad = "0\0" "256\0" "svc:\0" "port:x\0" "1,,2x\0"
			       "-1\0" "port:99\0" "x\0";
	     *bad != '\0'; bad += strlen(bad) + 1)
		ZT_EQ(zn_chain_parse(bad, h, ZN_MAX_CHAIN_HOPS, err,
				     sizeof(err)), -EINVAL);
	ZT_EQ(zn_chain_parse("", h, ZN_MAX_CHAIN_HOPS, err, sizeof(err)),
	      -EINVAL);
	ZT_EQ(zn_chain_parse("1,2,3", h, 2, err, sizeof(err)), -EINVAL);
	/* 32 hops is the limit and works. */
	ZT_EQ(zn_chain_parse("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,"
			     "19,20,21,22,23,24,25,26,27,28,29,30,31,32", h,
			     ZN_MAX_CHAIN_HOPS, err, sizeof(err)), 32);
}

static struct rte_mempool *pool;

static struct rte_mbuf *
pkt(uint8_t action, uint8_t pos, uint16_t dest, uint32_t hash)
{
	static const struct rte_mbuf_dynfield desc = {
		.name = ZN_PKT_META_DYNFIELD,
		.size = sizeof(struct zn_pkt_meta),
		.align = 4,
	};
	struct rte_mbuf *m;

	if (pool == NULL) {
		zn_pkt_meta_offset = rte_mbuf_dynfield_register(&desc);
		pool = rte_pktmbuf_pool_create("route_pool", 63, 0, 0, 256, 0);
	}
	m = rte_pktmbuf_alloc(pool);
	zn_pkt_meta_init(m);
	zn_pkt_set_flow_hash(m, hash);
	zn_pkt_meta(m)->action = action;
	zn_pkt_meta(m)->chain_pos = pos;
	zn_pkt_meta(m)->dest = dest;
	return m;
}

static struct zn_res
resolve(const struct zn_route *rt, uint8_t action, uint8_t pos,
	uint16_t dest, uint32_t hash)
{
	struct rte_mbuf *m = pkt(action, pos, dest, hash);
	struct zn_res r = zn_route_resolve(rt, m);

	rte_pktmbuf_free(m);
	return r;
}

ZN_TEST(route_resolve)
{
	static struct zn_route rt;
	struct zn_res r;
	struct rte_mbuf *m;
	unsigned int count[3] = { 0 };

	memset(&rt, 0, sizeof(rt));
	rt.chain_len = 4;
	rt.chain[0] = (struct zn_hop){ ZN_HOP_SERVICE, 1 };
	rt.chain[1] = (struct zn_hop){ ZN_HOP_SERVICE, 2 };
	rt.chain[2] = (struct zn_hop){ ZN_HOP_PORT, 1 };
	rt.chain[3] = (struct zn_hop){ ZN_HOP_DROP, 0 };
	rt.n_ports = 2;
	rt.svc[1] = (struct zn_svc_entry){ .n = 1, .inst = { 7 } };
	rt.svc[2] = (struct zn_svc_entry){ .n = 3, .inst = { 3, 4, 5 } };
	rt.svc[9] = (struct zn_svc_entry){ .n = 1, .inst = { 9 } };

	/* Ingress: first hop. */
	r = resolve(&rt, ZN_ACT_NEXT, ZN_CHAIN_POS_START, 0, 1);
	ZT_EQ(r.type, ZN_RES_NF);
	ZT_EQ(r.id, 7);
	ZT_EQ(r.pos, 0);
	ZT_EQ(r.hops, 1);
	/* NEXT from hop 0: service 2, one of its replicas. */
	r = resolve(&rt, ZN_ACT_NEXT, 0, 0, 1);
	ZT_EQ(r.svc, 2);
	ZT_CHECK(r.id >= 3 && r.id <= 5);
	ZT_EQ(r.pos, 1);
	/* Hop 2 is a port, hop 3 drop, then the end. */
	r = resolve(&rt, ZN_ACT_NEXT, 1, 0, 1);
	ZT_EQ(r.type, ZN_RES_PORT);
	ZT_EQ(r.id, 1);
	r = resolve(&rt, ZN_ACT_NEXT, 2, 0, 1);
	ZT_EQ(r.type, ZN_RES_DROP);
	ZT_EQ(r.reason, ZN_DROP_CHAIN);
	r = resolve(&rt, ZN_ACT_NEXT, 3, 0, 1);
	ZT_EQ(r.reason, ZN_DROP_CHAIN_END);
	/* TO_SERVICE keeps the chain position; unknown service: no instance;
	 * bad ids: bad action. */
	r = resolve(&rt, ZN_ACT_TO_SERVICE, 1, 9, 1);
	ZT_EQ(r.type, ZN_RES_NF);
	ZT_EQ(r.id, 9);
	ZT_EQ(r.pos, 1);
	r = resolve(&rt, ZN_ACT_TO_SERVICE, 1, 10, 1);
	ZT_EQ(r.reason, ZN_DROP_NO_INSTANCE);
	r = resolve(&rt, ZN_ACT_TO_SERVICE, 1, 0, 1);
	ZT_EQ(r.reason, ZN_DROP_BAD_ACTION);
	r = resolve(&rt, ZN_ACT_TO_SERVICE, 1, 300, 1);
	ZT_EQ(r.reason, ZN_DROP_BAD_ACTION);
	r = resolve(&rt, ZN_ACT_OUT, 0, 1, 1);
	ZT_EQ(r.type, ZN_RES_PORT);
	r = resolve(&rt, ZN_ACT_OUT, 0, 2, 1);
	ZT_EQ(r.reason, ZN_DROP_BAD_ACTION);
	r = resolve(&rt, ZN_ACT_DROP, 0, 0, 1);
	ZT_EQ(r.reason, ZN_DROP_NF);
	r = resolve(&rt, 77, 0, 0, 1);
	ZT_EQ(r.reason, ZN_DROP_BAD_ACTION);

	/* A routing loop ends at the hop limit. */
	m = pkt(ZN_ACT_TO_SERVICE, 0, 9, 1);
	zn_pkt_meta(m)->hops = 64;
	r = zn_route_resolve(&rt, m);
	ZT_EQ(r.reason, ZN_DROP_HOP_LIMIT);
	rte_pktmbuf_free(m);

	/* Resolution is pure: the packet is unchanged. */
	m = pkt(ZN_ACT_NEXT, 0, 0, 1);
	zn_route_resolve(&rt, m);
	ZT_EQ(zn_pkt_meta(m)->chain_pos, 0);
	ZT_EQ(zn_pkt_meta(m)->hops, 0);
	rte_pktmbuf_free(m);

	/* Replicas are picked by flow hash, spread evenly, and the same
	 * hash always gets the same replica. */
	for (uint32_t h = 0; h < 30000; h++) {
		uint32_t hash = h * 2654435761u;

		r = resolve(&rt, ZN_ACT_NEXT, 0, 0, hash);
		count[r.id - 3]++;
		ZT_EQ(resolve(&rt, ZN_ACT_NEXT, 0, 0, hash).id, r.id);
	}
	for (int i = 0; i < 3; i++)
		ZT_CHECK(count[i] > 9000 && count[i] < 11000);
}
