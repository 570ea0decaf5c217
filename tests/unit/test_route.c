/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Chain syntax (the one parser of zeronf/step.h) and the per-packet
 * routing decision (zn_route_resolve). */

#include <string.h>

#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include "zn_test.h"
#include "../../mgr/flow/lb.h"
#include "../../mgr/core/mgr.h"
#include "../../mgr/flow/route.h"
#include "../../mgr/datapath/worker.h"

ZN_TEST(chain_parse)
{
	struct zn_step h[ZN_MAX_CHAIN_STEPS];
	char err[128], buf[32];

	ZT_EQ(zn_steps_parse_err("1,svc:2,port:0,drop", h, ZN_MAX_CHAIN_STEPS,
				 err, sizeof(err)), 4);
	ZT_EQ(h[0].type, ZN_STEP_SERVICE);
	ZT_EQ(h[0].id, 1);
	ZT_EQ(h[1].id, 2);
	ZT_EQ(h[2].type, ZN_STEP_PORT);
	ZT_EQ(h[3].type, ZN_STEP_DROP);
	zn_step_format(&h[1], buf, sizeof(buf));
	ZT_CHECK(strcmp(buf, "svc:2") == 0);
	zn_step_format(&h[2], buf, sizeof(buf));
	ZT_CHECK(strcmp(buf, "port:0") == 0);
	for (const char *bad = "0\0" "256\0" "svc:\0" "port:x\0" "1,,2x\0"
			       "-1\0" "port:99\0" "x\0" "svc:1,,port:0\0"
			       "1,\0" ",1\0" ",\0" "0x10\0" "svc:0x1\0"
			       "port:0x1\0" " 1\0" "+1\0";
	     *bad != '\0'; bad += strlen(bad) + 1)
		ZT_EQ(zn_steps_parse_err(bad, h, ZN_MAX_CHAIN_STEPS, err,
				     sizeof(err)), -EINVAL);
	ZT_EQ(zn_steps_parse_err("", h, ZN_MAX_CHAIN_STEPS, err, sizeof(err)),
	      -EINVAL);
	ZT_EQ(zn_steps_parse_err("1,2,3", h, 2, err, sizeof(err)), -EINVAL);
	/* Leading zeros are decimal (not octal): svc:010 is service 10. */
	ZT_EQ(zn_steps_parse_err("010,svc:08,port:01", h, ZN_MAX_CHAIN_STEPS, err,
			     sizeof(err)), 3);
	ZT_EQ(h[0].id, 10);
	ZT_EQ(h[1].id, 8);
	ZT_EQ(h[2].type, ZN_STEP_PORT);
	ZT_EQ(h[2].id, 1);
	/* 32 hops is the limit and works. */
	ZT_EQ(zn_steps_parse_err("1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,"
			     "19,20,21,22,23,24,25,26,27,28,29,30,31,32", h,
			     ZN_MAX_CHAIN_STEPS, err, sizeof(err)), 32);
	/* One bound for ports, whoever parses: the last port id works,
	 * the next does not (the manager and NFs once disagreed). */
	snprintf(buf, sizeof(buf), "port:%u", ZN_STEP_MAX_PORT);
	ZT_EQ(zn_steps_parse(buf, h, 1), 1);
	snprintf(buf, sizeof(buf), "port:%u", ZN_STEP_MAX_PORT + 1);
	ZT_EQ(zn_steps_parse(buf, h, 1), -EINVAL);
	ZT_EQ(zn_step_parse(buf, h), -EINVAL);
	ZT_EQ(zn_steps_parse("svc:256", h, 1), -EINVAL);
	ZT_EQ(zn_steps_parse("255", h, 1), 1);
	/* Another host's hops: "@H", 1..254, not after drop; formatted back */
	ZT_EQ(zn_steps_parse("svc:2@3,4@254,port:1@1", h, 4), 3);
	ZT_EQ(h[0].host, 3);
	ZT_EQ(h[0].id, 2);
	ZT_EQ(h[1].host, 254);
	ZT_EQ(h[2].type, ZN_STEP_PORT);
	ZT_EQ(h[2].host, 1);
	zn_step_format(&h[2], buf, sizeof(buf));
	ZT_EQ(strcmp(buf, "port:1@1"), 0);
	static const char *const bad_host[] = { "drop@2", "svc:1@0",
		"svc:1@255", "svc:1@", "1@2@3", "@2", "svc:1@x", "port:1@-1" };

	for (unsigned int i = 0; i < RTE_DIM(bad_host); i++)
		ZT_EQ(zn_step_parse(bad_host[i], h), -EINVAL);
	ZT_EQ(h[0].host, 0); /* zeroed when refused */
}

static struct rte_mempool *pool;

static struct rte_mbuf *
pkt_chain(uint8_t action, uint8_t chain, uint8_t pos, uint16_t dest,
	  uint32_t hash)
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
	zn_pkt_meta(m)->chain = chain;
	zn_pkt_meta(m)->chain_pos = pos;
	zn_pkt_meta(m)->dest = dest;
	return m;
}

static struct rte_mbuf *
pkt(uint8_t action, uint8_t pos, uint16_t dest, uint32_t hash)
{
	return pkt_chain(action, 0, pos, dest, hash);
}

static void
set_service(struct zn_route *rt, uint16_t svc, unsigned int n,
	    const uint16_t *inst)
{
	uint32_t w[ZN_MAX_REPLICAS];

	rt->svc[svc].n = (uint16_t)n;
	for (unsigned int i = 0; i < n; i++) {
		rt->svc[svc].inst[i] = inst[i];
		rt->nf_svc[inst[i]] = svc;
		w[i] = 1;
	}
	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++)
		rt->svc[svc].bucket[b] = ZN_LB_NONE;
	zn_lb_buckets_assign(rt->svc[svc].bucket, inst, w, n);
}

static struct zn_res
resolve(const struct zn_route *rt, uint8_t action, uint8_t pos,
	uint16_t dest, uint32_t hash)
{
	struct rte_mbuf *m = pkt(action, pos, dest, hash);
	struct zn_res r = zn_route_resolve(NULL, rt, m);

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
	rt.chains[0].len = 4;
	rt.chains[0].steps[0] = (struct zn_step){ .type = ZN_STEP_SERVICE, .id = 1 };
	rt.chains[0].steps[1] = (struct zn_step){ .type = ZN_STEP_SERVICE, .id = 2 };
	rt.chains[0].steps[2] = (struct zn_step){ .type = ZN_STEP_PORT, .id = 1 };
	rt.chains[0].steps[3] = (struct zn_step){ .type = ZN_STEP_DROP, .id = 0 };
	/* A per-flow chain: service 9, then port 0. */
	rt.chains[5].len = 2;
	rt.chains[5].steps[0] = (struct zn_step){ .type = ZN_STEP_SERVICE, .id = 9 };
	rt.chains[5].steps[1] = (struct zn_step){ .type = ZN_STEP_PORT, .id = 0 };
	rt.n_ports = 2;
	set_service(&rt, 1, 1, (const uint16_t[]){ 7 });
	set_service(&rt, 2, 3, (const uint16_t[]){ 3, 4, 5 });
	set_service(&rt, 9, 1, (const uint16_t[]){ 9 });

	/* A packet follows its own chain. */
	m = pkt_chain(ZN_ACT_NEXT, 5, ZN_CHAIN_POS_START, 0, 1);
	r = zn_route_resolve(NULL, &rt, m);
	ZT_EQ(r.type, ZN_RES_NF);
	ZT_EQ(r.id, 9);
	zn_pkt_meta(m)->chain_pos = 0;
	r = zn_route_resolve(NULL, &rt, m);
	ZT_EQ(r.type, ZN_RES_PORT);
	ZT_EQ(r.id, 0);
	zn_pkt_meta(m)->chain_pos = 1;
	ZT_EQ(zn_route_resolve(NULL, &rt, m).reason, ZN_DROP_CHAIN_END);
	/* A hop on another host: to it, with the hop's position and the
	 * chain (its path), whatever the step's type there */
	rt.chains[7].len = 3;
	rt.chains[7].steps[0] = (struct zn_step){ .type = ZN_STEP_SERVICE, .id = 9 };
	rt.chains[7].steps[1] = (struct zn_step){ .type = ZN_STEP_SERVICE,
						  .host = 4, .id = 200 };
	rt.chains[7].steps[2] = (struct zn_step){ .type = ZN_STEP_PORT,
						  .host = 4, .id = 33 };
	zn_pkt_meta(m)->chain = 7;
	zn_pkt_meta(m)->chain_pos = 0;
	r = zn_route_resolve(NULL, &rt, m);
	ZT_EQ(r.type, ZN_RES_REMOTE);
	ZT_EQ(r.id, 4);
	ZT_EQ(r.pos, 1);
	ZT_EQ(r.svc, 7);
	zn_pkt_meta(m)->chain_pos = 1;
	r = zn_route_resolve(NULL, &rt, m);
	ZT_EQ(r.type, ZN_RES_REMOTE);
	ZT_EQ(r.pos, 2);
	/* An unused chain id ends at once. */
	zn_pkt_meta(m)->chain = 6;
	zn_pkt_meta(m)->chain_pos = ZN_CHAIN_POS_START;
	ZT_EQ(zn_route_resolve(NULL, &rt, m).reason, ZN_DROP_CHAIN_END);
	rte_pktmbuf_free(m);

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
	r = zn_route_resolve(NULL, &rt, m);
	ZT_EQ(r.reason, ZN_DROP_HOP_LIMIT);
	/* The count the caller gives is the one that counts, whatever the
	 * metadata says (the manager's own, mgr/trust/owner_map.h), in a burst too:
	 * packets of equal metadata but different counts are not one run. */
	zn_pkt_meta(m)->hops = 0;
	ZT_EQ(zn_route_resolve_at(NULL, &rt, m, 64).reason, ZN_DROP_HOP_LIMIT);
	{
		struct rte_mbuf *b[3] = { m, pkt(ZN_ACT_TO_SERVICE, 0, 9, 1),
					  pkt(ZN_ACT_TO_SERVICE, 0, 9, 1) };
		const uint8_t counts[3] = { 3, 64, 10 };
		struct zn_res res[3];

		ZT_EQ(zn_resolve_burst(NULL, &rt, b, counts, res, 3, NULL),
		      false);
		ZT_EQ(res[0].type, ZN_RES_NF);
		ZT_EQ(res[0].hops, 4);
		ZT_EQ(res[1].reason, ZN_DROP_HOP_LIMIT);
		ZT_EQ(res[2].hops, 11);
		ZT_EQ(zn_resolve_burst(NULL, &rt, b, NULL, res, 3, NULL), true);
		ZT_EQ(res[0].hops, 1);
		rte_pktmbuf_free(b[1]);
		rte_pktmbuf_free(b[2]);
	}
	rte_pktmbuf_free(m);

	/* Resolution is pure: the packet is unchanged. */
	m = pkt(ZN_ACT_NEXT, 0, 0, 1);
	zn_route_resolve(NULL, &rt, m);
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

static unsigned int
owned(const uint16_t *bucket, uint16_t inst)
{
	unsigned int n = 0;

	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++)
		n += bucket[b] == inst;
	return n;
}

ZN_TEST(lb_buckets)
{
	uint16_t bucket[ZN_LB_BUCKETS], before[ZN_LB_BUCKETS];
	const uint32_t one[4] = { 1, 1, 1, 1 }, w13[2] = { 1, 3 };
	unsigned int moved, changed = 0;

	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++)
		bucket[b] = ZN_LB_NONE;
	/* First fill: even shares, nothing counted as moved. */
	ZT_EQ(zn_lb_buckets_assign(bucket, (const uint16_t[]){ 10, 11, 12, 13 },
				   one, 4), 0u);
	for (uint16_t i = 10; i < 14; i++)
		ZT_EQ(owned(bucket, i), 64u);
	/* Instance 12 leaves: only its 64 buckets move, evenly. */
	memcpy(before, bucket, sizeof(before));
	moved = zn_lb_buckets_assign(bucket, (const uint16_t[]){ 10, 11, 13 },
				     one, 3);
	ZT_EQ(moved, 64u);
	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++)
		if (before[b] != 12)
			ZT_EQ(bucket[b], before[b]);
	ZT_CHECK(owned(bucket, 10) >= 85 && owned(bucket, 10) <= 86);
	ZT_EQ(owned(bucket, 12), 0u);
	/* Instance 14 joins: it takes a quarter, from the others only. */
	memcpy(before, bucket, sizeof(before));
	moved = zn_lb_buckets_assign(bucket,
				     (const uint16_t[]){ 10, 11, 13, 14 }, one,
				     4);
	ZT_EQ(owned(bucket, 14), 64u);
	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++)
		changed += bucket[b] != before[b];
	ZT_EQ(changed, 64u);
	ZT_EQ(moved, 64u);
	/* Weights 1:3. */
	zn_lb_buckets_assign(bucket, (const uint16_t[]){ 1, 2 }, w13, 2);
	ZT_EQ(owned(bucket, 1), 64u);
	ZT_EQ(owned(bucket, 2), 192u);
	/* No instance: no owner. */
	zn_lb_buckets_assign(bucket, NULL, NULL, 0);
	ZT_EQ(owned(bucket, ZN_LB_NONE), (unsigned int)ZN_LB_BUCKETS);
}

/* LEAST_LOADED: a new flow goes to the shorter RX ring and stays there;
 * flows just pinned count as queued packets, so a burst of new flows while
 * one replica's ring is backed up does not all go to the other. */
ZN_TEST(lb_least_loaded)
{
	static struct zn_route rt;
	static struct zn_shm shm;
	static struct zn_lb_pins pins;
	static struct zn_rctx w, nfc;
	/* a reader's record of each slot, larger than its zn_peer (as the
	 * manager's): read with its stride */
	static struct {
		struct zn_peer at;
		char more[40];
	} rec[ZN_MAX_NFS];
	static struct rte_ring *links[ZN_MAX_LINKS];
	uint64_t moved = 0;
	unsigned int count[2] = { 0 };
	void *objs[100] = { NULL };
	struct zn_res r;

	memset(&rt, 0, sizeof(rt));
	memset(&shm, 0, sizeof(shm));
	memset(&pins, 0, sizeof(pins));
	for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
		rec[i].at.slot = &shm.nfs[i];
	zn_rctx_init(&w, &shm.rt.lb_epoch, &rec[0].at, sizeof(rec[0]), links,
		     -1, 0, &moved);
	w.lb_decay_cycles = 1000;
	rt.chains[0].len = 1;
	rt.chains[0].steps[0] = (struct zn_step){ .type = ZN_STEP_SERVICE, .id = 2 };
	rt.lb_epoch_idle = 5;
	set_service(&rt, 2, 2, (const uint16_t[]){ 3, 4 });
	rt.svc[2].mode = ZN_LB_LEAST_LOADED;
	rt.svc[2].pins = &pins;
	shm.rt.nf_rx[3] = rte_ring_create("ll3", 256, SOCKET_ID_ANY, 0);
	shm.rt.nf_rx[4] = rte_ring_create("ll4", 256, SOCKET_ID_ANY, 0);
	shm.links[0].ring = rte_ring_create("ll4l", 256, SOCKET_ID_ANY, 0);
	ZT_CHECK(shm.rt.nf_rx[3] != NULL && shm.rt.nf_rx[4] != NULL &&
		 shm.links[0].ring != NULL);
	links[0] = shm.links[0].ring;
	rec[3].at.rx = shm.rt.nf_rx[3];
	rec[4].at.rx = shm.rt.nf_rx[4];
	/* Replica 3 has 100 packets queued (its NF is off its core). */
	ZT_EQ(rte_ring_enqueue_bulk(shm.rt.nf_rx[3], objs, 100, NULL), 100u);
	for (uint32_t f = 0; f < 1000; f++) {
		struct rte_mbuf *m = pkt(ZN_ACT_NEXT, ZN_CHAIN_POS_START, 0,
					 f << 16);

		r = zn_route_resolve(&w, &rt, m);
		ZT_EQ(r.type, ZN_RES_NF);
		count[r.id - 3]++;
		/* The flow stays where it was pinned. */
		ZT_EQ(zn_route_resolve(&w, &rt, m).id, r.id);
		rte_pktmbuf_free(m);
		/* The first 100 new flows all go to the empty ring. */
		if (f < 100)
			ZT_EQ(r.id, 4);
	}
	/* Then both: 550 / 450 (ties alternate). */
	ZT_CHECK(count[0] >= 440 && count[0] <= 460);
	/* The recent-pin counts fade with time: after them, the ring alone
	 * decides again. */
	for (unsigned int i = 0; i < 20; i++) {
		struct rte_mbuf *m = pkt(ZN_ACT_NEXT, ZN_CHAIN_POS_START, 0,
					 (2000 + i) << 16);

		w.now += 1000;
		r = zn_route_resolve(&w, &rt, m);
		rte_pktmbuf_free(m);
	}
	ZT_CHECK(w.lb_fresh[3] + w.lb_fresh[4] <= 2);
	ZT_EQ(r.id, 4);
	ZT_EQ(moved, 0u);
	/* A link into replica 4 counts as its backlog: 150 queued there. */
	shm.nfs[4].links.in[0] = 0;
	shm.nfs[4].links.n_in = 1;
	ZT_EQ(rte_ring_enqueue_bulk(shm.links[0].ring, objs, 100, NULL), 100u);
	ZT_EQ(rte_ring_enqueue_bulk(shm.links[0].ring, objs, 50, NULL), 50u);
	ZT_EQ(zn_nf_backlog(&w, &rt, 4), 150u);
	/* An NF of trust group 1 does not map the slots and rings of NFs
	 * of no group (nor of others): it counts them as far behind. */
	zn_rctx_init(&nfc, &shm.rt.lb_epoch, &rec[0].at, sizeof(rec[0]), links,
		     1, ZN_READER_NF(0), NULL);
	ZT_EQ(zn_nf_backlog(&nfc, &rt, 4), ZN_BACKLOG_UNSEEN);
	rt.nf_group[4] = 1;
	ZT_EQ(zn_nf_backlog(&nfc, &rt, 4), 150u);
	ZT_EQ(zn_nf_backlog(&w, &rt, 4), 150u);
	rt.nf_group[4] = 0;
	for (unsigned int i = 0; i < 20; i++) {
		struct rte_mbuf *m = pkt(ZN_ACT_NEXT, ZN_CHAIN_POS_START, 0,
					 (3000 + i) << 16);

		w.now += 1000;
		ZT_EQ(zn_route_resolve(&w, &rt, m).id, 3);
		rte_pktmbuf_free(m);
	}
	rte_ring_free(shm.rt.nf_rx[3]);
	rte_ring_free(shm.rt.nf_rx[4]);
	rte_ring_free(shm.links[0].ring);
}
