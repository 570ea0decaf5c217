/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* IPv4 packets read and rewritten for the NAT NF (nat.h): bounds checked
 * against the frame and the IP length; checksums updated incrementally
 * (RFC 1624: HC' = ~(~HC + ~m + m')), so that a checksum that was wrong
 * stays as wrong as it was, as a router's would. */

#include <string.h>

#include "nat.h"
#include "../common/bytes.h"
#include "../common/l2.h"

#define P_ICMP 1
#define P_TCP 6
#define P_UDP 17

/* Checksum @p c (as in the header) after 16-bit word @p old became
 * @p nw. */
static uint16_t
adj16(uint16_t c, uint16_t old, uint16_t nw)
{
	uint32_t s = (uint16_t)~c + (uint32_t)(uint16_t)~old + nw;

	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint16_t
adj32(uint16_t c, uint32_t old, uint32_t nw)
{
	c = adj16(c, (uint16_t)(old >> 16), (uint16_t)(nw >> 16));
	return adj16(c, (uint16_t)old, (uint16_t)nw);
}

static bool
is_query(uint8_t type)
{
	return type == 8 || type == 0 || type == 13 || type == 14 ||
	       type == 15 || type == 16 || type == 17 || type == 18;
}

static bool
is_error(uint8_t type)
{
	return type == 3 || type == 4 || type == 5 || type == 11 ||
	       type == 12;
}

/* Ports (or an ICMP query's identifier) of L4 header @p l4 of @p len
 * bytes into @p t. */
static bool
read_ports(const uint8_t *l4, uint32_t len, struct nat_tuple *t)
{
	if (t->proto == P_TCP || t->proto == P_UDP) {
		if (len < 4)
			return false;
		t->sport = rd16(l4);
		t->dport = rd16(l4 + 2);
		return true;
	}
	if (t->proto == P_ICMP && len >= 8 && is_query(l4[0])) {
		t->sport = t->dport = rd16(l4 + 4);
		return true;
	}
	return false;
}

/* An IPv4 header at @p ip, @p room bytes from it to the frame's end: its
 * length in *ihl and its addresses and protocol in @p t; false if it is
 * none (too short, not version 4, an IHL under 5 or past the room). The
 * packet's own header and the one an ICMP error quotes alike. */
static bool
v4_header(const uint8_t *ip, uint32_t room, uint32_t *ihl,
	  struct nat_tuple *t)
{
	if (room < 20 || (ip[0] >> 4) != 4 || (ip[0] & 0xf) < 5)
		return false;
	*ihl = (ip[0] & 0xfu) * 4;
	t->src = rd32(ip + 12);
	t->dst = rd32(ip + 16);
	t->proto = ip[9];
	return *ihl <= room;
}

int
nat_pkt_read(uint8_t *f, uint32_t len, struct nat_pkt *k)
{
	uint32_t ihl, tot;
	struct l2 l2;
	uint8_t *ip;

	memset(k, 0, sizeof(*k));
	if (l2_walk(f, len, &l2) < 0)
		return NAT_BAD;
	if (l2.ethertype != RTE_ETHER_TYPE_IPV4)
		return NAT_NOT_IPV4;
	ip = f + l2.off;
	if (!v4_header(ip, len - l2.off, &ihl, &k->t))
		return NAT_BAD;
	tot = rd16(ip + 2);
	if (tot < ihl || l2.off + tot > len)
		return NAT_BAD;
	if ((rd16(ip + 6) & 0x3fff) != 0)
		return NAT_FRAGMENT;
	k->l3 = ip;
	k->l4 = ip + ihl;
	k->l4_len = tot - ihl;
	k->ports = read_ports(k->l4, k->l4_len, &k->t);
	if (k->t.proto == P_TCP && k->l4_len >= 14)
		k->tcp_flags = k->l4[13];
	if (k->t.proto == P_ICMP && k->l4_len >= 8 && is_error(k->l4[0])) {
		uint8_t *q = k->l4 + 8;
		uint32_t ql = k->l4_len - 8, qihl;
		struct nat_tuple in = { 0 };

		k->icmp_error = true;
		/* a quoted first fragment (its offset 0) has its ports */
		if (v4_header(q, ql, &qihl, &in) &&
		    (rd16(q + 6) & 0x1fff) == 0) {
			k->in_l3 = q;
			k->in_l4 = q + qihl;
			k->in_l4_len = ql - qihl;
			k->in = in;
			k->in_ok = read_ports(k->in_l4, k->in_l4_len, &k->in);
		}
	}
	return NAT_IP;
}

/* Where the L4 checksum of a packet of @p proto is, in @p l4 of @p len
 * bytes; NULL: none there (or a UDP checksum of 0, which stays). */
static uint8_t *
l4_csum(uint8_t proto, uint8_t *l4, uint32_t len)
{
	if (proto == P_TCP && len >= 18)
		return l4 + 16;
	if (proto == P_UDP && len >= 8 && rd16(l4 + 6) != 0)
		return l4 + 6;
	if (proto == P_ICMP && len >= 4)
		return l4 + 2;
	return NULL;
}

/* Rewrite the IPv4 header at @p ip and the L4 header at @p l4 (@p len
 * bytes of it) to tuple @p to; with @p icmp_outer, a checksum of the
 * ICMP message around them to keep right too (a quoted packet). */
static void
rewrite(uint8_t *ip, uint8_t *l4, uint32_t len, const struct nat_tuple *from,
	const struct nat_tuple *to, bool ports, uint8_t *icmp_outer)
{
	uint8_t proto = ip[9];
	uint8_t *c4 = l4_csum(proto, l4, len);
	uint16_t ipc = rd16(ip + 10);

	if (from->src != to->src || from->dst != to->dst) {
		uint16_t nipc = adj32(adj32(ipc, from->src, to->src),
				      from->dst, to->dst);

		/* TCP's and UDP's checksums cover the addresses */
		if (c4 != NULL && proto != P_ICMP) {
			uint16_t c = rd16(c4), nc;

			nc = adj32(adj32(c, from->src, to->src), from->dst,
				   to->dst);
			if (proto == P_UDP && nc == 0)
				nc = 0xffff;
			if (icmp_outer != NULL)
				wr16(icmp_outer, adj16(rd16(icmp_outer), c,
						       nc));
			wr16(c4, nc);
		}
		if (icmp_outer != NULL) {
			uint16_t oc = rd16(icmp_outer);

			oc = adj32(adj32(oc, from->src, to->src), from->dst,
				   to->dst);
			wr16(icmp_outer, adj16(oc, ipc, nipc));
		}
		wr32(ip + 12, to->src);
		wr32(ip + 16, to->dst);
		wr16(ip + 10, nipc);
	}
	if (!ports)
		return;
	if (proto == P_ICMP) { /* the identifier, in ICMP's own checksum */
		if (from->sport != to->sport) {
			uint16_t c = rd16(c4), nc = adj16(c, from->sport,
							  to->sport);

			if (icmp_outer != NULL)
				wr16(icmp_outer,
				     adj16(adj16(rd16(icmp_outer), c, nc),
					   from->sport, to->sport));
			wr16(c4, nc);
			wr16(l4 + 4, to->sport);
		}
		return;
	}
	for (unsigned int i = 0; i < 2; i++) {
		uint16_t a = i ? from->dport : from->sport;
		uint16_t b = i ? to->dport : to->sport;

		if (a == b)
			continue;
		if (c4 != NULL) {
			uint16_t c = rd16(c4), nc = adj16(c, a, b);

			if (proto == P_UDP && nc == 0)
				nc = 0xffff;
			if (icmp_outer != NULL)
				wr16(icmp_outer, adj16(rd16(icmp_outer), c,
						       nc));
			wr16(c4, nc);
		}
		if (icmp_outer != NULL)
			wr16(icmp_outer, adj16(rd16(icmp_outer), a, b));
		wr16(l4 + 2 * i, b);
	}
}

void
nat_pkt_rewrite(struct nat_pkt *k, const struct nat_tuple *to)
{
	rewrite(k->l3, k->l4, k->l4_len, &k->t, to, k->ports, NULL);
	k->t.src = to->src;
	k->t.dst = to->dst;
	if (k->ports) {
		k->t.sport = to->sport;
		k->t.dport = to->dport;
	}
}

void
nat_pkt_rewrite_error(struct nat_pkt *k, const struct nat_tuple *outer,
		      const struct nat_tuple *inner)
{
	struct nat_tuple o = k->t;

	/* the quoted packet first: its changes go into the ICMP checksum */
	if (k->in_ok) {
		rewrite(k->in_l3, k->in_l4, k->in_l4_len, &k->in, inner, true,
			k->l4 + 2);
		k->in = *inner;
	}
	o.src = outer->src;
	o.dst = outer->dst;
	rewrite(k->l3, k->l4, k->l4_len, &k->t, &o, false, NULL);
	k->t.src = o.src;
	k->t.dst = o.dst;
}
