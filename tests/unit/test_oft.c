/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The OpenFlow table's packet keys (what a match reads of a packet) and
 * its matches' JSON both ways (mgr/sdn/). The table's flow_mod semantics
 * run against ovs-ofctl and os-ken in tests/system/test_sdn*.py. */

#include <errno.h>
#include <string.h>

#include <jansson.h>

#include "zn_test.h"
#include "xorshift.h"
#include "../../mgr/sdn/oft.h"
#include "../../mgr/sdn/oft_pvt.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 0xa };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 0xb };

static unsigned int
eth(uint8_t *p, uint16_t type, int vlan)
{
	unsigned int n = 12;

	memcpy(p, mac_b, 6);
	memcpy(p + 6, mac_a, 6);
	if (vlan >= 0) {
		p[n++] = 0x81, p[n++] = 0x00;
		p[n++] = (uint8_t)(0x20 | (vlan >> 8)); /* PCP 1 */
		p[n++] = (uint8_t)vlan;
	}
	p[n++] = (uint8_t)(type >> 8);
	p[n++] = (uint8_t)type;
	return n;
}

ZN_TEST(oft_key_ipv4_tcp_vlan)
{
	uint8_t p[128] = { 0 };
	unsigned int o = eth(p, 0x0800, 7);
	struct zn_oft_key k;

	p[o] = 0x45;
	p[o + 9] = 6;
	memcpy(p + o + 12, (uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(p + o + 16, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	p[o + 20] = 0x30, p[o + 21] = 0x39;     /* 12345 */
	p[o + 22] = 0x00, p[o + 23] = 0x50;     /* 80 */
	p[o + 32] = 0x50, p[o + 33] = 0x12;     /* SYN|ACK */
	oft_key_of(p, o + 40, 3, &k);
	ZT_EQ(k.in_port, 3);
	ZT_EQ(k.vlan_vid, 0x1000 | 7);
	ZT_EQ(k.eth_type, 0x0800);
	ZT_CHECK(memcmp(k.eth_src, mac_a, 6) == 0);
	ZT_CHECK(memcmp(k.eth_dst, mac_b, 6) == 0);
	ZT_EQ(k.ip_proto, 6);
	ZT_EQ(k.ip_src[3], 1);
	ZT_EQ(k.ip_dst[3], 2);
	ZT_EQ(k.l4_src, 12345);
	ZT_EQ(k.l4_dst, 80);
	ZT_EQ(k.tcp_flags, 0x012);
	ZT_EQ(k.sub, 0);
	/* a later fragment: addresses, no ports */
	p[o + 6] = 0x00, p[o + 7] = 0x10;
	oft_key_of(p, o + 40, 3, &k);
	ZT_EQ(k.ip_proto, 6);
	ZT_EQ(k.l4_src, 0);
	ZT_EQ(k.tcp_flags, 0);
}

ZN_TEST(oft_key_ipv6_ext_udp_and_arp)
{
	uint8_t p[160] = { 0 };
	unsigned int o = eth(p, 0x86dd, -1);
	struct zn_oft_key k;

	p[o] = 0x60;
	p[o + 6] = 0;           /* hop-by-hop first */
	p[o + 8 + 15] = 1;      /* src ::1 */
	p[o + 24 + 15] = 2;     /* dst ::2 */
	p[o + 40] = 17;         /* then UDP, 8 bytes of options */
	p[o + 41] = 0;
	p[o + 48] = 0x13, p[o + 49] = 0x8a; /* 5002 */
	p[o + 50] = 0x00, p[o + 51] = 0x35; /* 53 */
	oft_key_of(p, o + 56, 1, &k);
	ZT_EQ(k.eth_type, 0x86dd);
	ZT_EQ(k.vlan_vid, 0);
	ZT_EQ(k.ip_proto, 17);
	ZT_EQ(k.ip_src[15], 1);
	ZT_EQ(k.ip_dst[15], 2);
	ZT_EQ(k.l4_src, 5002);
	ZT_EQ(k.l4_dst, 53);
	/* ARP request 10.0.0.1 -> 10.0.0.2 */
	memset(p, 0, sizeof(p));
	o = eth(p, 0x0806, -1);
	memcpy(p + o, (uint8_t[]){ 0, 1, 8, 0, 6, 4, 0, 1 }, 8);
	memcpy(p + o + 14, (uint8_t[]){ 10, 0, 0, 1 }, 4);
	memcpy(p + o + 24, (uint8_t[]){ 10, 0, 0, 2 }, 4);
	oft_key_of(p, o + 28, 2, &k);
	ZT_EQ(k.eth_type, 0x0806);
	ZT_EQ(k.ip_proto, 1);
	ZT_EQ(k.ip_src[3], 1);
	ZT_EQ(k.ip_dst[3], 2);
}

/* Every truncation and random bytes: fields of what is there only, never
 * a read past the end (the ASan build says). */
ZN_TEST(oft_key_truncated_and_random)
{
	uint8_t p[96] = { 0 }, *copy;
	unsigned int o = eth(p, 0x0800, 5);
	uint64_t rng = 31;
	struct zn_oft_key k;

	p[o] = 0x4f; /* ihl 60: past the end when truncated */
	p[o + 9] = 6;
	for (unsigned int len = 0; len <= sizeof(p); len++) {
		copy = malloc(len ? len : 1);
		memcpy(copy, p, len);
		oft_key_of(copy, len, 1, &k);
		if (len < 14)
			ZT_EQ(k.eth_type, 0);
		ZT_EQ(k.l4_src, 0); /* the options run past every length */
		free(copy);
	}
	for (int i = 0; i < 20000; i++) {
		unsigned int len = (unsigned int)(xorshift64(&rng) % 96);

		copy = malloc(len ? len : 1);
		for (unsigned int j = 0; j < len; j++)
			copy[j] = (uint8_t)xorshift64(&rng);
		if (len > 13 && (i & 1)) /* half of them IPv4/IPv6/ARP */
			copy[12] = (uint8_t[]){ 8, 0x86, 8 }[i % 3],
			copy[13] = (uint8_t[]){ 0, 0xdd, 6 }[i % 3];
		oft_key_of(copy, len, 1, &k);
		free(copy);
	}
}

static int
parse(const char *text, struct zn_oft_key *v, struct zn_oft_key *m)
{
	char err[160];
	json_t *o = json_loads(text, 0, NULL);
	int rc = zn_oft_match_parse(o, v, m, err, sizeof(err));

	json_decref(o);
	return rc;
}

static int
roundtrip_is(const char *text, const char *want)
{
	struct zn_oft_key v, m;
	json_t *out, *w = json_loads(want, 0, NULL);
	int same;

	if (parse(text, &v, &m) < 0)
		return 0;
	out = zn_oft_match_json(&v, &m);
	same = json_equal(out, w);
	if (!same) {
		char *s = json_dumps(out, JSON_SORT_KEYS);

		fprintf(stderr, "  got %s\n", s);
		free(s);
	}
	json_decref(out);
	json_decref(w);
	return same;
}

ZN_TEST(oft_match_json)
{
	struct zn_oft_key v, m;

	ZT_CHECK(roundtrip_is("{\"in_port\": 2, \"eth_dst\": "
			      "\"02:00:00:00:00:0b\"}",
			      "{\"in_port\": 2, \"eth_dst\": "
			      "\"02:00:00:00:00:0B\"}"));
	/* prefixes and arbitrary masks; the value's host bits cleared */
	ZT_CHECK(roundtrip_is("{\"eth_type\": 2048, \"ipv4_src\": "
			      "\"10.1.2.3/8\", \"ipv4_dst\": "
			      "\"10.0.0.1/255.0.255.0\"}",
			      "{\"eth_type\": 2048, \"ipv4_src\": "
			      "\"10.0.0.0/8\", \"ipv4_dst\": "
			      "\"10.0.0.0/255.0.255.0\"}"));
	ZT_CHECK(roundtrip_is("{\"eth_type\": 34525, \"ip_proto\": 6, "
			      "\"tcp_dst\": 443, \"tcp_flags\": \"0x2/0x12\", "
			      "\"ipv6_dst\": \"2001:db8::/32\"}",
			      "{\"eth_type\": 34525, \"ip_proto\": 6, "
			      "\"tcp_dst\": 443, \"tcp_flags\": \"0x2/0x12\", "
			      "\"ipv6_dst\": \"2001:db8::/32\"}"));
	/* OpenFlow's exact vlan_vid mask is its 13 bits */
	ZT_CHECK(roundtrip_is("{\"vlan_vid\": \"0x1005/0x1fff\"}",
			      "{\"vlan_vid\": 4101}"));
	ZT_CHECK(roundtrip_is("{\"vlan_vid\": \"0x1000/0x1000\"}",
			      "{\"vlan_vid\": \"0x1000/0x1000\"}"));
	ZT_CHECK(roundtrip_is("{\"eth_type\": 2054, \"arp_op\": 1, "
			      "\"arp_tpa\": \"10.0.0.2\"}",
			      "{\"eth_type\": 2054, \"arp_op\": 1, "
			      "\"arp_tpa\": \"10.0.0.2\"}"));
	/* prerequisites, unknown fields, bad values */
	ZT_EQ(parse("{\"tcp_dst\": 80}", &v, &m), -EPROTO);
	ZT_EQ(parse("{\"eth_type\": 2048, \"tcp_dst\": 80}", &v, &m),
	      -EPROTO);
	ZT_EQ(parse("{\"eth_type\": 34525, \"ip_proto\": 1, "
		    "\"icmpv4_type\": 8}", &v, &m), -EPROTO);
	ZT_EQ(parse("{\"ipv4_src\": \"10.0.0.1\", \"eth_type\": "
		    "\"0x800/0xff00\"}", &v, &m), -EINVAL); /* not maskable */
	ZT_EQ(parse("{\"mpls_label\": 3}", &v, &m), -ENOENT);
	ZT_EQ(parse("{\"in_port\": -1}", &v, &m), -EINVAL);
	ZT_EQ(parse("{\"tcp_flags\": 4096, \"eth_type\": 2048, "
		    "\"ip_proto\": 6}", &v, &m), -EINVAL);
	ZT_EQ(parse("{\"ipv4_src\": \"10.0.0.1/33\", \"eth_type\": 2048}",
		    &v, &m), -EINVAL);
	ZT_EQ(parse("{\"eth_src\": \"02:00:00:00:00\"}", &v, &m), -EINVAL);
	ZT_EQ(parse("[1]", &v, &m), -EINVAL);
	ZT_EQ(parse("{}", &v, &m), 0);
	ZT_EQ(v.in_port | m.in_port, 0);
}
