/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include <string.h>

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

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

/* Hash an address pair and port pair in an order that does not depend on
 * direction: (addr, port) endpoints sorted. */
static uint32_t
hash_pair(const uint8_t *a, const uint8_t *b, unsigned int alen,
	  uint16_t pa, uint16_t pb, uint8_t proto)
{
	uint8_t key[2 * 16 + 2 * 2 + 4];
	int c = memcmp(a, b, alen);
	unsigned int off = 0;

	if (c > 0 || (c == 0 && pa > pb)) {
		const uint8_t *t = a;
		uint16_t tp = pa;

		a = b;
		b = t;
		pa = pb;
		pb = tp;
	}
	memcpy(key + off, a, alen);
	off += alen;
	memcpy(key + off, b, alen);
	off += alen;
	memcpy(key + off, &pa, 2);
	off += 2;
	memcpy(key + off, &pb, 2);
	off += 2;
	key[off++] = proto;
	key[off++] = (uint8_t)alen;
	key[off++] = 0;
	key[off++] = 0;
	return rte_hash_crc(key, off, 0x5a45524f /* "ZERO" */);
}

static void
l4_ports(const uint8_t *p, uint32_t len, uint32_t off, uint8_t proto,
	 uint16_t *sp, uint16_t *dp)
{
	*sp = 0;
	*dp = 0;
	if ((proto == PROTO_TCP || proto == PROTO_UDP || proto == PROTO_SCTP ||
	     proto == PROTO_UDPLITE) && off + 4 <= len) {
		*sp = rd16(p + off);
		*dp = rd16(p + off + 2);
	}
}

static uint32_t
hash_ipv4(const uint8_t *p, uint32_t len, uint32_t off)
{
	uint32_t ihl;
	uint16_t sp, dp, frag;
	uint8_t proto;

	if (off + 20 > len || (p[off] >> 4) != 4)
		return 0;
	ihl = (uint32_t)(p[off] & 0xf) * 4;
	proto = p[off + 9];
	frag = rd16(p + off + 6) & 0x3fff; /* MF | fragment offset */
	if (ihl < 20 || frag != 0)
		sp = dp = 0;
	else
		l4_ports(p, len, off + ihl, proto, &sp, &dp);
	return hash_pair(p + off + 12, p + off + 16, 4, sp, dp, proto);
}

static uint32_t
hash_ipv6(const uint8_t *p, uint32_t len, uint32_t off)
{
	uint32_t l4 = off + 40;
	uint16_t sp = 0, dp = 0;
	uint8_t nh;
	bool frag = false;

	if (off + 40 > len || (p[off] >> 4) != 6)
		return 0;
	nh = p[off + 6];
	/* Walk a bounded number of extension headers. */
	for (int i = 0; i < 8; i++) {
		if (nh == 0 || nh == 43 || nh == 60) { /* HBH, routing, dst */
			if (l4 + 2 > len)
				break;
			nh = p[l4];
			l4 += 8u + 8u * p[l4 + 1];
		} else if (nh == 44) { /* fragment */
			if (l4 + 8 > len)
				break;
			frag = true;
			nh = p[l4];
			l4 += 8;
		} else {
			break;
		}
	}
	if (!frag)
		l4_ports(p, len, l4, nh, &sp, &dp);
	return hash_pair(p + off + 8, p + off + 24, 16, sp, dp, nh);
}

uint32_t
zn_flow_hash_raw(const uint8_t *p, uint32_t len)
{
	uint32_t off = ETH_HLEN;
	uint16_t et;

	if (len < ETH_HLEN)
		return 0;
	et = rd16(p + 12);
	for (int i = 0; i < MAX_VLANS &&
	     (et == ET_VLAN || et == ET_QINQ || et == ET_QINQ_OLD); i++) {
		if (off + 4 > len)
			return 0;
		et = rd16(p + off + 2);
		off += 4;
	}
	if (et == ET_IPV4)
		return hash_ipv4(p, len, off);
	if (et == ET_IPV6)
		return hash_ipv6(p, len, off);
	return 0;
}

uint32_t
zn_flow_hash_sw(const struct rte_mbuf *m)
{
	return zn_flow_hash_raw(rte_pktmbuf_mtod(m, const uint8_t *),
				rte_pktmbuf_data_len(m));
}
