/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * A frame read as the Linux kernel reads it on the way to netfilter's
 * PREROUTING hook and conntrack (the firewall's ground truth): ip_rcv's
 * and ipv6_rcv's checks, the L4 protocol past IPv6 extension headers,
 * conntrack's L4 header, flag and checksum checks, and the packet an
 * ICMP error quotes. Every read is bounds checked against the frame and
 * the IP length (bytes past it are padding).
 */

#include <string.h>

#include "fw_pkt.h"
#include "../common/bytes.h"
#include "../common/l2.h"

#define ETH_HLEN 14
#define ET_IPV4 0x0800
#define ET_IPV6 0x86dd

#define P_ICMP 1
#define P_TCP 6
#define P_UDP 17
#define P_ICMPV6 58

/* One's complement sum of @p len bytes, big-endian words, added to @p s. */
static uint32_t
sum16(uint32_t s, const uint8_t *p, uint32_t len)
{
	uint32_t i;

	for (i = 0; i + 1 < len; i += 2)
		s += rd16(p + i);
	if (len & 1)
		s += (uint32_t)p[len - 1] << 8;
	return s;
}

static uint16_t
fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

/* The L4 checksum over the pseudo header and @p len bytes at @p l4 is
 * right (sums to 0xffff). */
static bool
l4_csum_ok(const struct fw_pkt *k, const uint8_t *l4, uint32_t len)
{
	uint32_t s = 0;

	if (k->family == 4) {
		s = sum16(s, k->t.src, 4);
		s = sum16(s, k->t.dst, 4);
	} else {
		s = sum16(s, k->t.src, 16);
		s = sum16(s, k->t.dst, 16);
	}
	/* ICMPv4 has no pseudo header */
	if (!(k->family == 4 && k->proto == P_ICMP)) {
		s += k->proto;
		s += len & 0xffff;
		s += len >> 16;
	} else {
		s = 0;
	}
	s = sum16(s, l4, len);
	return fold(s) == 0xffff;
}

bool
fw_icmp_is_query(uint8_t family, uint8_t type)
{
	if (family == 4)
		return type == 8 || type == 13 || type == 15 || type == 17;
	return type == 128 || type == 139;
}

/* The reply type of an ICMP query type, or -1. */
static int
icmp_reply_type(uint8_t family, uint8_t type)
{
	if (family == 4) {
		switch (type) {
		case 8: return 0;
		case 13: return 14;
		case 15: return 16;
		case 17: return 18;
		case 0: return 8;
		case 14: return 13;
		case 16: return 15;
		case 18: return 17;
		}
		return -1;
	}
	switch (type) {
	case 128: return 129;
	case 139: return 140;
	case 129: return 128;
	case 140: return 139;
	}
	return -1;
}

bool
fw_tuple_reply(const struct fw_tuple *t, struct fw_tuple *r)
{
	*r = *t;
	memcpy(r->src, t->dst, sizeof(r->src));
	memcpy(r->dst, t->src, sizeof(r->dst));
	if (t->proto == (t->family == 4 ? P_ICMP : P_ICMPV6)) {
		int rt = icmp_reply_type(t->family, (uint8_t)(t->dport >> 8));

		if (rt < 0)
			return false;
		r->dport = (uint16_t)((unsigned int)rt << 8 |
				      (t->dport & 0xff));
		return true;
	}
	r->sport = t->dport;
	r->dport = t->sport;
	return true;
}

/* Past IPv6 extension headers from @p nh at @p off (end: @p end): the L4
 * protocol and where it starts; fragment header facts. @return 0, or -1
 * when a header is cut. */
static int
v6_skip(const uint8_t *p, uint32_t end, uint8_t *nh, uint32_t *off,
	bool *frag, bool *frag_first)
{
	for (unsigned int n = 0; n < 16; n++) {
		uint32_t hl;

		switch (*nh) {
		case 0:   /* hop-by-hop */
		case 43:  /* routing */
		case 60:  /* destination options */
			if (*off + 8 > end)
				return -1;
			hl = ((uint32_t)p[*off + 1] + 1) * 8;
			break;
		case 51:  /* AH */
			if (*off + 8 > end)
				return -1;
			hl = ((uint32_t)p[*off + 1] + 2) * 4;
			break;
		case 44: { /* fragment */
			uint16_t fo;

			if (*off + 8 > end)
				return -1;
			fo = rd16(p + *off + 2);
			if ((fo & 0xfff9) != 0) { /* offset or M: a fragment */
				*frag = true;
				*frag_first = (fo & 0xfff8) == 0;
			}
			hl = 8;
			break;
		}
		default:
			return 0;
		}
		if (*off + hl > end)
			return -1;
		*nh = p[*off];
		*off += hl;
	}
	return -1;
}

/* The quoted packet of an ICMP error, at @p q (@p qlen bytes): its
 * tuple as it went. @return true if it reads (an IP header of the
 * error's family, then 8 bytes of L4 header for TCP/UDP/ICMP). */
static bool
quoted(uint8_t family, const uint8_t *q, uint32_t qlen, struct fw_tuple *t)
{
	uint32_t off;
	uint8_t nh;
	bool frag = false, first = false;

	memset(t, 0, sizeof(*t));
	t->family = family;
	if (family == 4) {
		uint32_t ihl;

		if (qlen < 20 || (q[0] >> 4) != 4 || (q[0] & 0xf) < 5)
			return false;
		ihl = (q[0] & 0xfu) * 4;
		if (ihl > qlen)
			return false;
		memcpy(t->src, q + 12, 4);
		memcpy(t->dst, q + 16, 4);
		nh = q[9];
		off = ihl;
		if ((rd16(q + 6) & 0x1fff) != 0)
			return false; /* not the first fragment: no L4 header */
	} else {
		if (qlen < 40 || (q[0] >> 4) != 6)
			return false;
		memcpy(t->src, q + 8, 16);
		memcpy(t->dst, q + 24, 16);
		nh = q[6];
		off = 40;
		if (v6_skip(q, qlen, &nh, &off, &frag, &first) < 0 ||
		    (frag && !first))
			return false;
	}
	t->proto = nh;
	if (nh == P_TCP || nh == P_UDP) {
		if (off + 8 > qlen)
			return false;
		t->sport = rd16(q + off);
		t->dport = rd16(q + off + 2);
	} else if (nh == (family == 4 ? P_ICMP : P_ICMPV6)) {
		if (off + 8 > qlen)
			return false;
		/* only a query is tracked (an error about an error: none) */
		if (!fw_icmp_is_query(family, q[off]) &&
		    icmp_reply_type(family, q[off]) < 0)
			return false;
		t->sport = rd16(q + off + 4);
		t->dport = (uint16_t)(q[off] << 8 | q[off + 1]);
	}
	return true;
}

/* TCP flag combinations conntrack accepts (ECE, CWR and PSH aside): as
 * the kernel's tcp_error(). */
static bool
tcp_flags_valid(uint8_t f)
{
	switch (f & (uint8_t)~(FW_TCP_ECE | FW_TCP_CWR | FW_TCP_PSH)) {
	case FW_TCP_SYN:
	case FW_TCP_SYN | FW_TCP_URG:
	case FW_TCP_SYN | FW_TCP_ACK:
	case FW_TCP_RST:
	case FW_TCP_RST | FW_TCP_ACK:
	case FW_TCP_FIN | FW_TCP_ACK:
	case FW_TCP_FIN | FW_TCP_ACK | FW_TCP_URG:
	case FW_TCP_ACK:
	case FW_TCP_ACK | FW_TCP_URG:
		return true;
	}
	return false;
}

static void
l4_parse(const uint8_t *p, uint32_t end, bool verify, struct fw_pkt *k)
{
	const uint8_t *l4 = p + k->l4_off;
	uint32_t len = end - k->l4_off;
	uint8_t icmp = k->family == 4 ? P_ICMP : P_ICMPV6;

	k->l4_len = len;
	k->t.proto = k->proto;
	if (k->frag && !k->frag_first)
		return; /* no L4 header here */
	if (k->proto == P_TCP) {
		uint32_t hl;

		if (len < 20) {
			k->l4_err = FW_L4_SHORT;
			return;
		}
		hl = (uint32_t)(l4[12] >> 4) * 4;
		k->t.sport = rd16(l4);
		k->t.dport = rd16(l4 + 2);
		k->seq = rd32(l4 + 4);
		k->ack = rd32(l4 + 8);
		k->tcp_flags = l4[13];
		k->l4 = true;
		if (hl < 20 || hl > len) {
			k->l4_err = FW_L4_SHORT;
			return;
		}
		k->payload = len - hl;
		if (verify && !k->frag && !l4_csum_ok(k, l4, len))
			k->l4_err = FW_L4_CSUM;
		else if (!tcp_flags_valid(k->tcp_flags))
			k->l4_err = FW_L4_FLAGS;
	} else if (k->proto == P_UDP) {
		uint16_t ulen;

		if (len < 8) {
			k->l4_err = FW_L4_SHORT;
			return;
		}
		k->t.sport = rd16(l4);
		k->t.dport = rd16(l4 + 2);
		k->l4 = true;
		ulen = rd16(l4 + 4);
		if (ulen > len || ulen < 8)
			k->l4_err = FW_L4_SHORT;
		else if (verify && !k->frag &&
			 (k->family == 6 || rd16(l4 + 6) != 0) &&
			 !l4_csum_ok(k, l4, len))
			k->l4_err = FW_L4_CSUM;
	} else if (k->proto == icmp) {
		if (len < 8) {
			k->l4_err = FW_L4_SHORT;
			return;
		}
		k->icmp_type = l4[0];
		k->icmp_code = l4[1];
		k->t.sport = rd16(l4 + 4);
		k->t.dport = (uint16_t)(l4[0] << 8 | l4[1]);
		k->l4 = true;
		if (verify && !k->frag && !l4_csum_ok(k, l4, len)) {
			k->l4_err = FW_L4_CSUM;
			return;
		}
		if (k->family == 4)
			k->icmp_error = l4[0] == 3 || l4[0] == 4 ||
					l4[0] == 5 || l4[0] == 11 ||
					l4[0] == 12;
		else
			k->icmp_error = l4[0] < 128;
		if (k->icmp_error) {
			k->t.sport = 0;
			k->inner_ok = !k->frag &&
				      quoted(k->family, l4 + 8, len - 8,
					     &k->inner);
		}
	} else {
		k->l4 = true; /* no ports: protocol and addresses only */
	}
}

static int
parse_v4(const uint8_t *p, uint32_t off, uint32_t len, bool verify,
	 struct fw_pkt *k)
{
	const uint8_t *ip = p + off;
	uint32_t avail = len - off, ihl, tot;
	uint16_t fo;

	if (avail < 20 || (ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5)
		return FW_BAD_IP;
	ihl = (ip[0] & 0xfu) * 4;
	tot = rd16(ip + 2);
	if (ihl > avail || fold(sum16(0, ip, ihl)) != 0xffff ||
	    tot > avail || tot < ihl)
		return FW_BAD_IP;
	k->family = 4;
	k->t.family = 4;
	k->proto = ip[9];
	memcpy(k->t.src, ip + 12, 4);
	memcpy(k->t.dst, ip + 16, 4);
	fo = rd16(ip + 6);
	k->frag = (fo & 0x3fff) != 0; /* MF or an offset */
	k->frag_first = (fo & 0x1fff) == 0;
	k->l3_off = off;
	k->l4_off = off + ihl;
	l4_parse(p, off + tot, verify, k);
	return FW_IP;
}

static bool
v6_multicast(const uint8_t *a)
{
	return a[0] == 0xff;
}

static bool
v6_loopback(const uint8_t *a)
{
	static const uint8_t lo[16] = { [15] = 1 };

	return memcmp(a, lo, 16) == 0;
}

static bool
v6_v4mapped(const uint8_t *a)
{
	static const uint8_t pfx[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(a, pfx, 12) == 0;
}

static int
parse_v6(const uint8_t *p, uint32_t off, uint32_t len, bool verify,
	 struct fw_pkt *k)
{
	const uint8_t *ip = p + off;
	uint32_t avail = len - off, plen, l4off;
	uint8_t nh;

	if (avail < 40 || (ip[0] >> 4) != 6)
		return FW_BAD_IP;
	plen = rd16(ip + 4);
	nh = ip[6];
	if ((plen == 0 && nh == 0) || plen + 40 > avail)
		return FW_BAD_IP; /* a jumbogram, or cut */
	/* ipv6_rcv: a multicast, loopback or v4-mapped source, a loopback
	 * destination, a reserved or interface-local multicast one */
	if (v6_multicast(ip + 8) || v6_loopback(ip + 8) ||
	    v6_v4mapped(ip + 8) || v6_loopback(ip + 24) ||
	    (v6_multicast(ip + 24) &&
	     ((ip[25] & 0xf) == 0 || (ip[25] & 0xf) == 1)))
		return FW_BAD_IP;
	k->family = 6;
	k->t.family = 6;
	memcpy(k->t.src, ip + 8, 16);
	memcpy(k->t.dst, ip + 24, 16);
	k->l3_off = off;
	l4off = 40;
	if (v6_skip(ip, 40 + plen, &nh, &l4off, &k->frag,
		    &k->frag_first) < 0) {
		k->proto = nh;
		k->t.proto = nh;
		k->l4_err = FW_L4_SHORT;
		return FW_IP;
	}
	k->proto = nh;
	k->l4_off = off + l4off;
	l4_parse(p, off + 40 + plen, verify, k);
	return FW_IP;
}

int
fw_pkt_parse(const uint8_t *p, uint32_t len, bool vlan, bool verify_csum,
	     struct fw_pkt *k)
{
	struct l2 l2 = { .off = ETH_HLEN };

	memset(k, 0, sizeof(*k));
	/* --no-vlan: the tags are not looked through (a tagged frame is
	 * not IP) */
	if (vlan ? l2_walk(p, len, &l2) < 0 : len < ETH_HLEN)
		return FW_BAD_IP;
	if (!vlan)
		l2.ethertype = rd16(p + 12);
	if (l2.ethertype == ET_IPV4)
		return parse_v4(p, l2.off, len, verify_csum, k);
	if (l2.ethertype == ET_IPV6)
		return parse_v6(p, l2.off, len, verify_csum, k);
	return FW_NOT_IP;
}
