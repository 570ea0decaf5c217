/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Flow keys and flow tables (include/zeronf/flow.h). */

#include <string.h>

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_rcu_qsbr.h>
#include <rte_malloc.h>

#include <zeronf/flow.h>

#include "zn_test.h"
#include "../../lib/common/zn_flow.h"

/* Ethernet (+ optional VLAN) + IPv4 + UDP/TCP. */
static unsigned int
frame4(uint8_t *p, uint32_t src, uint32_t dst, uint16_t sp, uint16_t dp,
       uint8_t proto, uint16_t vlan)
{
	unsigned int o = 12;

	memset(p, 0, 128);
	if (vlan) {
		p[o] = 0x81;
		p[o + 2] = (uint8_t)(vlan >> 8);
		p[o + 3] = (uint8_t)vlan;
		o += 4;
	}
	p[o] = 0x08;
	o += 2;
	p[o] = 0x45;
	p[o + 9] = proto;
	for (int i = 0; i < 4; i++) {
		p[o + 12 + i] = (uint8_t)(src >> (24 - 8 * i));
		p[o + 16 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	p[o + 20] = (uint8_t)(sp >> 8);
	p[o + 21] = (uint8_t)sp;
	p[o + 22] = (uint8_t)(dp >> 8);
	p[o + 23] = (uint8_t)dp;
	return o + 28;
}

/* The flow hash by its definition: CRC32-C (rte_hash_crc) over a byte
 * buffer of the sorted endpoints. */
static uint32_t
ref_hash(const struct zn_flow_key *k)
{
	unsigned int al = k->ip_version == 4 ? 4 : 16, o = 0;
	int c = memcmp(k->src, k->dst, al);
	bool rev = c > 0 || (c == 0 && k->src_port > k->dst_port);
	uint16_t pa = rev ? k->dst_port : k->src_port;
	uint16_t pb = rev ? k->src_port : k->dst_port;
	uint8_t b[40] = { 0 };

	memcpy(b, rev ? k->dst : k->src, al);
	memcpy(b + al, rev ? k->src : k->dst, al);
	o = 2 * al;
	memcpy(b + o, &pa, 2);
	memcpy(b + o + 2, &pb, 2);
	b[o + 4] = k->proto;
	b[o + 5] = (uint8_t)al;
	return rte_hash_crc(b, o + 8, 0x5a45524f);
}

ZN_TEST(flow_hash_definition)
{
	struct zn_flow_key k;
	uint32_t x = 12345;

	for (int i = 0; i < 2000; i++) {
		memset(&k, 0, sizeof(k));
		k.ip_version = i % 2 ? 6 : 4;
		k.proto = (uint8_t)(i % 3 ? 6 : 17);
		for (unsigned int j = 0; j < (k.ip_version == 4 ? 4u : 16u); j++) {
			x = x * 1103515245u + 12345u;
			k.src[j] = (uint8_t)(x >> 16);
			/* equal addresses sometimes: ports decide */
			k.dst[j] = i % 7 == 0 ? k.src[j] : (uint8_t)(x >> 24);
		}
		k.src_port = (uint16_t)(x >> 3);
		k.dst_port = (uint16_t)(i % 5 == 0 ? k.src_port : x >> 9);
		ZT_EQ(zn_flow_hash_key(&k), ref_hash(&k));
	}
}

ZN_TEST(flow_key_parse)
{
	uint8_t f[128], v6[128];
	struct zn_flow_key k, r;
	char buf[128];
	unsigned int n = frame4(f, 0x0a000001, 0x0a000002, 1234, 80, 6, 7);

	ZT_EQ(zn_flow_parse(f, n, &k), 0);
	ZT_EQ(k.ip_version, 4);
	ZT_EQ(k.proto, 6);
	ZT_EQ(k.vlan, 7);
	ZT_EQ(k.src_port, 1234);
	ZT_EQ(k.dst_port, 80);
	ZT_EQ(k.src[3], 1);
	ZT_EQ(k.dst[3], 2);
	ZT_EQ(k.src[4], 0); /* IPv4 leaves the rest of the address zero */
	ZT_CHECK(zn_flow_key_format(&k, buf, sizeof(buf)) > 0);
	ZT_CHECK(strcmp(buf, "tcp 10.0.0.1:1234 -> 10.0.0.2:80 vlan 7") == 0);
	/* The key hashes like the packet, in both directions. */
	ZT_EQ(zn_flow_hash_key(&k), zn_flow_hash_raw(f, n));
	zn_flow_key_reverse(&k, &r);
	ZT_EQ(r.src_port, 80);
	ZT_EQ(zn_flow_hash_key(&r), zn_flow_hash_key(&k));
	/* Not IP, cut IP header: no key. */
	ZT_EQ(zn_flow_parse(f, 20, &k), -EINVAL);
	f[16] = 0x08;
	f[17] = 0x06; /* ARP */
	ZT_EQ(zn_flow_parse(f, n, &k), -EINVAL);
	/* Cut L4 header: a key without ports. */
	n = frame4(f, 1, 2, 3, 4, 17, 0);
	ZT_EQ(zn_flow_parse(f, n - 6, &k), 0);
	ZT_EQ(k.src_port, 0);
	/* IPv6 + UDP behind a hop-by-hop header. */
	memset(v6, 0, sizeof(v6));
	v6[12] = 0x86;
	v6[13] = 0xdd;
	v6[14] = 0x60;
	v6[20] = 0; /* next header: hop-by-hop */
	v6[22 + 15] = 1;
	v6[38 + 15] = 2;
	v6[54] = 17; /* HBH: next = UDP, length 0 (8 bytes) */
	v6[62] = 0x13;
	v6[63] = 0x88;
	v6[64] = 0x00;
	v6[65] = 0x35;
	ZT_EQ(zn_flow_parse(v6, 80, &k), 0);
	ZT_EQ(k.ip_version, 6);
	ZT_EQ(k.proto, 17);
	ZT_EQ(k.src_port, 5000);
	ZT_EQ(k.dst_port, 53);
	ZT_CHECK(zn_flow_key_format(&k, buf, sizeof(buf)) > 0);
	ZT_CHECK(strcmp(buf, "udp [::1]:5000 -> [::2]:53") == 0);
}

/* zn_flow_parse's fast path (plain IPv4 TCP/UDP) gives what the general
 * walk gives, on frames around its edges: VLAN tags, IP options, fragments,
 * other versions, EtherTypes and protocols, every cut length. */
ZN_TEST(flow_parse_fast_path)
{
	static const uint8_t protos[] = { 6, 17, 1, 132, 136, 47 };
	static const uint16_t frags[] = { 0, 0x4000, 0x2000, 0x0001, 0x6000 };
	static const uint8_t vers[] = { 0x45, 0x46, 0x44, 0x55, 0x4f };
	uint32_t x = 99;
	unsigned int cases = 0, plain = 0;

	for (int i = 0; i < 3000; i++) {
		uint8_t f[128];
		struct zn_flow_key a, b;
		unsigned int n, ip;
		uint16_t vlan = i % 4 == 0 ? (uint16_t)(i % 4000 + 1) : 0;
		uint8_t proto = protos[i % 6];

		x = x * 1103515245u + 12345u;
		n = frame4(f, x, x >> 7 ^ 0x0a0b0c0d, (uint16_t)x,
			   (uint16_t)(x >> 16), proto, vlan);
		ip = vlan ? 18 : 14;
		f[ip] = vers[(i / 6) % 5];
		f[ip + 6] = (uint8_t)(frags[(i / 30) % 5] >> 8);
		f[ip + 7] = (uint8_t)frags[(i / 30) % 5];
		if (i % 50 == 49) { /* not IPv4 */
			f[ip - 2] = i % 100 == 99 ? 0x86 : 0x08;
			f[ip - 1] = i % 100 == 99 ? 0xdd : 0x06;
		}
		plain += !vlan && f[ip] == 0x45 && (proto == 6 || proto == 17) &&
			 (f[ip + 6] & 0x3f) == 0 && f[ip + 7] == 0;
		for (unsigned int len = 0; len <= n + 4; len++) {
			int ra = zn_flow_parse(f, len, &a);
			int rb = zn_flow_parse_walk(f, len, &b);

			ZT_EQ(ra, rb);
			if (ra == 0)
				ZT_CHECK(memcmp(&a, &b, sizeof(a)) == 0);
			cases++;
		}
	}
	ZT_CHECK(plain >= 40); /* the fast path's own case was covered */
	ZT_CHECK(cases > 100000);
}

static struct zn_flow_key
key_n(uint32_t i)
{
	struct zn_flow_key k = { .ip_version = 4, .proto = 6,
				 .src_port = (uint16_t)(i & 0xffff),
				 .dst_port = 443 };

	memcpy(k.src, &i, 4);
	k.dst[0] = 192;
	return k;
}

ZN_TEST(flow_table_basic)
{
	struct zn_ft *ft = zn_ft_create(&ZN_FT_OPTS(.name = "ft_basic",
						    .capacity = 1000,
						    .data_size = 16));
	struct zn_ft_hit hit, hits[3];
	struct zn_flow_key k = key_n(1), k2 = key_n(2), r;
	const struct zn_flow_key *keys[3] = { &k, &k2, &r };
	uint32_t hashes[3];
	uint32_t cursor = 0, seen = 0;
	const struct zn_flow_key *it;
	void *data;

	ZT_CHECK(ft != NULL);
	ZT_EQ(zn_ft_lookup(ft, &k, zn_flow_key_hash(&k), 0, &hit), -ENOENT);
	ZT_CHECK(zn_ft_add(ft, &k, zn_flow_key_hash(&k), 5, &hit) >= 0);
	memset(hit.data, 0xab, 16);
	ZT_CHECK(zn_ft_add(ft, &k2, zn_flow_key_hash(&k2), 5, NULL) >= 0);
	/* Adding again finds the entry and its data. */
	ZT_CHECK(zn_ft_add(ft, &k, zn_flow_key_hash(&k), 6, &hit) >= 0);
	ZT_EQ(((uint8_t *)hit.data)[15], 0xab);
	ZT_EQ(zn_ft_count(ft), 2);
	ZT_EQ(zn_ft_last_seen(ft, hit.index), 6);
	/* A unidirectional table keeps directions apart. */
	zn_flow_key_reverse(&k, &r);
	ZT_EQ(zn_ft_lookup(ft, &r, zn_flow_key_hash(&r), 0, NULL), -ENOENT);
	for (int i = 0; i < 3; i++)
		hashes[i] = zn_flow_key_hash(keys[i]);
	ZT_EQ(zn_ft_lookup_burst(ft, keys, hashes, 3, 9, hits), 2);
	ZT_CHECK(hits[0].index >= 0 && hits[1].index >= 0);
	ZT_EQ(hits[2].index, -ENOENT);
	while (zn_ft_iterate(ft, &cursor, &it, &data) >= 0)
		seen++;
	ZT_EQ(seen, 2);
	ZT_EQ(zn_ft_del(ft, &k, zn_flow_key_hash(&k)), 0);
	ZT_EQ(zn_ft_del(ft, &k, zn_flow_key_hash(&k)), -ENOENT);
	ZT_EQ(zn_ft_count(ft), 1);
	/* A re-added key gets zeroed data. */
	ZT_CHECK(zn_ft_add(ft, &k, zn_flow_key_hash(&k), 5, &hit) >= 0);
	ZT_EQ(((uint8_t *)hit.data)[0], 0);
	zn_ft_free(ft);
	/* Bad options. */
	ZT_CHECK(zn_ft_create(&ZN_FT_OPTS(.name = "x", .capacity = 0)) == NULL);
	ZT_CHECK(zn_ft_create(&ZN_FT_OPTS(.capacity = 10)) == NULL);
	ZT_CHECK(zn_ft_create(&ZN_FT_OPTS(.name = "y", .capacity = 10,
					  .flags = ZN_FT_F_CONCURRENT)) == NULL);
}

ZN_TEST(flow_table_bidir)
{
	struct zn_ft *ft = zn_ft_create(&ZN_FT_OPTS(.name = "ft_bidir",
						    .capacity = 100,
						    .data_size = 8,
						    .flags = ZN_FT_F_BIDIR));
	struct zn_flow_key k = key_n(77), r;
	struct zn_ft_hit a, b;

	zn_flow_key_reverse(&k, &r);
	ZT_CHECK(zn_ft_add(ft, &k, zn_flow_key_hash(&k), 1, &a) >= 0);
	ZT_CHECK(zn_ft_lookup(ft, &r, zn_flow_key_hash(&r), 2, &b) >= 0);
	ZT_EQ(a.index, b.index);
	ZT_CHECK(a.reverse != b.reverse); /* directions told apart */
	ZT_EQ(zn_ft_count(ft), 1);
	ZT_EQ(zn_ft_del(ft, &r, zn_flow_key_hash(&r)), 0);
	ZT_EQ(zn_ft_count(ft), 0);
	zn_ft_free(ft);
}

static unsigned int expired_cb_calls;

static void
on_expire(const struct zn_flow_key *key, void *data, void *arg)
{
	(void)key;
	(void)arg;
	ZT_EQ(*(uint32_t *)data, 42);
	expired_cb_calls++;
}

ZN_TEST(flow_table_expiry_and_capacity)
{
	struct zn_ft *ft = zn_ft_create(&ZN_FT_OPTS(.name = "ft_exp",
						    .capacity = 4096,
						    .data_size = 4,
						    .idle_timeout_ns = 100));
	struct zn_ft_hit hit;
	unsigned int added = 0;
	int removed = 0;

	/* Every add below capacity succeeds (extendable buckets). */
	for (uint32_t i = 0; i < 4096; i++) {
		struct zn_flow_key k = key_n(i);

		if (zn_ft_add(ft, &k, zn_flow_key_hash(&k), 1000, &hit) >= 0) {
			*(uint32_t *)hit.data = 42;
			added++;
		}
	}
	ZT_EQ(added, 4096);
	/* Half are used again later; the others expire. */
	for (uint32_t i = 0; i < 4096; i += 2) {
		struct zn_flow_key k = key_n(i);

		zn_ft_lookup(ft, &k, zn_flow_key_hash(&k), 2000, NULL);
	}
	/* Expiry works in slices of a budget. */
	for (int round = 0; round < 20; round++)
		removed += zn_ft_expire(ft, 1150, 500, on_expire, NULL);
	ZT_EQ(removed, 2048);
	ZT_EQ(expired_cb_calls, 2048);
	ZT_EQ(zn_ft_count(ft), 2048);
	zn_ft_free(ft);
}

/* Tables filled with a NIC's RSS hash (any function but ours) still
 * expire: entries are deleted with the hash they were added with. */
ZN_TEST(flow_table_expiry_foreign_hash)
{
	struct zn_ft *ft = zn_ft_create(&ZN_FT_OPTS(.name = "ft_rss",
						    .capacity = 1024,
						    .flags = ZN_FT_F_BIDIR,
						    .idle_timeout_ns = 100));
	int removed = 0;

	for (uint32_t i = 0; i < 1000; i++) {
		struct zn_flow_key k = key_n(i);

		ZT_CHECK(zn_ft_add(ft, &k, i * 2654435761u, 10, NULL) >= 0);
	}
	ZT_EQ(zn_ft_count(ft), 1000);
	for (int round = 0; round < 10; round++)
		removed += zn_ft_expire(ft, 1000, 500, NULL, NULL);
	ZT_EQ(removed, 1000);
	ZT_EQ(zn_ft_count(ft), 0);
	zn_ft_free(ft);
}

ZN_TEST(flow_table_million)
{
	const uint32_t n = 1000000;
	struct zn_ft *ft = zn_ft_create(&ZN_FT_OPTS(.name = "ft_1m",
						    .capacity = n,
						    .data_size = 8));
	struct zn_ft_hit hit;
	uint32_t ok = 0, bad = 0;

	ZT_CHECK(ft != NULL);
	if (ft == NULL)
		return;
	for (uint32_t i = 0; i < n; i++) {
		struct zn_flow_key k = key_n(i);

		if (zn_ft_add(ft, &k, zn_flow_key_hash(&k), 1, &hit) >= 0)
			*(uint64_t *)hit.data = i;
	}
	ZT_EQ(zn_ft_count(ft), n);
	for (uint32_t i = 0; i < n; i++) {
		struct zn_flow_key k = key_n(i);

		if (zn_ft_lookup(ft, &k, zn_flow_key_hash(&k), 0, &hit) >= 0 &&
		    *(uint64_t *)hit.data == i)
			ok++;
		else
			bad++;
	}
	ZT_EQ(ok, n);
	ZT_EQ(bad, 0);
	zn_ft_free(ft);
}

ZN_TEST(flow_table_concurrent)
{
	size_t sz = rte_rcu_qsbr_get_memsize(2);
	struct rte_rcu_qsbr *qs = rte_zmalloc("ftqs", sz, 64);
	struct zn_ft *ft;
	struct zn_flow_key k = key_n(3);

	rte_rcu_qsbr_init(qs, 2);
	ft = zn_ft_create(&ZN_FT_OPTS(.name = "ft_conc", .capacity = 64,
				      .flags = ZN_FT_F_CONCURRENT, .rcu = qs));
	ZT_CHECK(ft != NULL);
	ZT_CHECK(zn_ft_add(ft, &k, zn_flow_key_hash(&k), 1, NULL) >= 0);
	ZT_EQ(zn_ft_del(ft, &k, zn_flow_key_hash(&k)), 0);
	ZT_EQ(zn_ft_lookup(ft, &k, zn_flow_key_hash(&k), 0, NULL), -ENOENT);
	/* Re-adding works: freed slots come back from the defer queue. */
	for (int i = 0; i < 200; i++) {
		ZT_CHECK(zn_ft_add(ft, &k, zn_flow_key_hash(&k), 1, NULL) >= 0);
		ZT_EQ(zn_ft_del(ft, &k, zn_flow_key_hash(&k)), 0);
	}
	zn_ft_free(ft);
	rte_free(qs);
}
