/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_hash_crc.h>

#include "zn_flow.h"

#define ETH_HLEN 14
#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd
#define ET_VLAN 0x8100
#define ET_QINQ 0x88a8
#define ET_QINQ_OLD 0x9100
#define MAX_VLANS 4

#define PROTO_TCP 6
#define PROTO_UDP 17
#define PROTO_SCTP 132
#define PROTO_UDPLITE 136

_Static_assert(sizeof(struct zn_flow_key) == 40, "flow key has no padding");

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static void
l4_ports(const uint8_t *p, uint32_t len, uint32_t off,
	 struct zn_flow_key *key)
{
	uint8_t proto = key->proto;

	if ((proto == PROTO_TCP || proto == PROTO_UDP || proto == PROTO_SCTP ||
	     proto == PROTO_UDPLITE) && off + 4 <= len) {
		key->src_port = rd16(p + off);
		key->dst_port = rd16(p + off + 2);
	}
}

static int
parse_ipv4(const uint8_t *p, uint32_t len, uint32_t off,
	   struct zn_flow_key *key)
{
	uint32_t ihl;

	if (off + 20 > len || (p[off] >> 4) != 4)
		return -EINVAL;
	ihl = (uint32_t)(p[off] & 0xf) * 4;
	key->ip_version = 4;
	key->proto = p[off + 9];
	memcpy(key->src, p + off + 12, 4);
	memcpy(key->dst, p + off + 16, 4);
	/* Fragments (MF or an offset): no ports, so all fragments of a
	 * datagram belong to one flow. */
	if (ihl >= 20 && (rd16(p + off + 6) & 0x3fff) == 0)
		l4_ports(p, len, off + ihl, key);
	return 0;
}

static int
parse_ipv6(const uint8_t *p, uint32_t len, uint32_t off,
	   struct zn_flow_key *key)
{
	uint32_t l4 = off + 40;
	bool frag = false;
	uint8_t nh;

	if (off + 40 > len || (p[off] >> 4) != 6)
		return -EINVAL;
	nh = p[off + 6];
	/* A bounded walk over hop-by-hop, routing, destination options and
	 * fragment headers. */
	for (int i = 0; i < 8; i++) {
		if (nh == 0 || nh == 43 || nh == 60) {
			if (l4 + 2 > len)
				break;
			nh = p[l4];
			l4 += 8u + 8u * p[l4 + 1];
		} else if (nh == 44) {
			if (l4 + 8 > len)
				break;
			frag = true;
			nh = p[l4];
			l4 += 8;
		} else {
			break;
		}
	}
	key->ip_version = 6;
	key->proto = nh;
	memcpy(key->src, p + off + 8, 16);
	memcpy(key->dst, p + off + 24, 16);
	if (!frag)
		l4_ports(p, len, l4, key);
	return 0;
}

/* The common case, parsed without the general walk below (the flow
 * director and the balancer parse every packet): untagged IPv4 without
 * options, not a fragment, TCP or UDP with both ports present. The key is
 * the one the general walk gives (unit test flow_parse_fast_path). */
static inline bool
parse_fast(const uint8_t *p, uint32_t len, struct zn_flow_key *key)
{
	uint8_t proto;

	if (len < ETH_HLEN + 24 || rd16(p + 12) != ET_IPV4 ||
	    p[ETH_HLEN] != 0x45 || (rd16(p + ETH_HLEN + 6) & 0x3fff) != 0)
		return false;
	proto = p[ETH_HLEN + 9];
	if (proto != PROTO_TCP && proto != PROTO_UDP)
		return false;
	*key = (struct zn_flow_key){
		.ip_version = 4,
		.proto = proto,
		.src_port = rd16(p + ETH_HLEN + 20),
		.dst_port = rd16(p + ETH_HLEN + 22),
	};
	memcpy(key->src, p + ETH_HLEN + 12, 4);
	memcpy(key->dst, p + ETH_HLEN + 16, 4);
	return true;
}

int
zn_flow_parse(const uint8_t *p, uint32_t len, struct zn_flow_key *key)
{
	return parse_fast(p, len, key) ? 0 : zn_flow_parse_walk(p, len, key);
}

int
zn_flow_parse_walk(const uint8_t *p, uint32_t len, struct zn_flow_key *key)
{
	uint32_t off = ETH_HLEN;
	uint16_t et;

	memset(key, 0, sizeof(*key));
	if (len < ETH_HLEN)
		return -EINVAL;
	et = rd16(p + 12);
	for (int i = 0; i < MAX_VLANS &&
	     (et == ET_VLAN || et == ET_QINQ || et == ET_QINQ_OLD); i++) {
		if (off + 4 > len)
			return -EINVAL;
		if (i == 0)
			key->vlan = rd16(p + off) & 0x0fff;
		et = rd16(p + off + 2);
		off += 4;
	}
	if (et == ET_IPV4)
		return parse_ipv4(p, len, off, key);
	if (et == ET_IPV6)
		return parse_ipv6(p, len, off, key);
	return -EINVAL;
}

static inline uint32_t
be32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return rte_be_to_cpu_32(v);
}

static inline bool
is_reversed(const struct zn_flow_key *key)
{
	int c;

	if (key->ip_version == 4) {
		uint32_t s = be32(key->src), d = be32(key->dst);

		c = s > d ? 1 : s < d ? -1 : 0;
	} else {
		c = memcmp(key->src, key->dst, 16);
	}
	return c > 0 || (c == 0 && key->src_port > key->dst_port);
}

bool
zn_flow_key_is_reversed(const struct zn_flow_key *key)
{
	return is_reversed(key);
}

/* (address, port) endpoints hashed in sorted order: both directions of a
 * connection hash alike. The VLAN is left out, so that the hash of a
 * packet does not depend on how much of it was parsed. The hashed bytes
 * are a, b, port a, port b (host order), proto, address length, 0, 0:
 * CRC32-C over them 8 bytes at a time, as rte_hash_crc() would do over a
 * buffer holding them (the IPv4 case is on the hot path: no buffer). */
uint32_t
zn_flow_hash_key(const struct zn_flow_key *key)
{
	bool rev = is_reversed(key);
	const uint8_t *a = rev ? key->dst : key->src;
	const uint8_t *b = rev ? key->src : key->dst;
	uint64_t pa = rev ? key->dst_port : key->src_port;
	uint64_t pb = rev ? key->src_port : key->dst_port;
	uint64_t tail = pa | pb << 16 | (uint64_t)key->proto << 32;
	uint32_t h = 0x5a45524f; /* "ZERO" */
	uint64_t w;

	if (key->ip_version == 4) {
		uint32_t wa, wb;

		memcpy(&wa, a, 4);
		memcpy(&wb, b, 4);
		h = rte_hash_crc_8byte((uint64_t)wa | (uint64_t)wb << 32, h);
		return rte_hash_crc_8byte(tail | 4ull << 40, h);
	}
	for (int i = 0; i < 16; i += 8) {
		memcpy(&w, a + i, 8);
		h = rte_hash_crc_8byte(w, h);
	}
	for (int i = 0; i < 16; i += 8) {
		memcpy(&w, b + i, 8);
		h = rte_hash_crc_8byte(w, h);
	}
	return rte_hash_crc_8byte(tail | 16ull << 40, h);
}

uint32_t
zn_flow_hash_raw(const uint8_t *p, uint32_t len)
{
	struct zn_flow_key key;

	return zn_flow_parse(p, len, &key) == 0 ? zn_flow_hash_key(&key) : 0;
}

uint32_t
zn_flow_hash_sw(const struct rte_mbuf *m)
{
	return zn_flow_hash_raw(rte_pktmbuf_mtod(m, const uint8_t *),
				rte_pktmbuf_data_len(m));
}
