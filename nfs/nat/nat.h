/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NAT_H
#define ZN_NAT_H

/*
 * The NAT NF (docs/nfs/nat.md), IPv4: stateful source NAT (masquerade,
 * the source port kept where free, as Linux does), static destination
 * NAT (port forwarding), and the stateless rewrites tcprewrite does
 * (a prefix mapped to another, ports mapped), every checksum updated
 * incrementally (RFC 1624), ICMP errors translated inside and out.
 *
 * nat_pkt.c reads and rewrites packets (no DPDK: the fuzz target calls
 * it on bytes); nat_table.c keeps the sessions.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A connection's addresses in one direction, host order; ICMP queries
 * by identifier (in both ports). A hash key: aligned for rte_hash_crc's
 * 8-byte loads. */
struct nat_tuple {
	_Alignas(8) uint32_t src;
	uint32_t dst;
	uint16_t sport, dport;
	uint8_t proto;
	uint8_t pad[3];
};

/* What nat_pkt_read() found. */
enum nat_class {
	NAT_IP = 0,     /* an IPv4 packet with a readable header */
	NAT_NOT_IPV4,   /* IPv6, ARP ...: passed as it is */
	NAT_BAD,        /* a runt, a bad IPv4 header */
	NAT_FRAGMENT,   /* an IPv4 fragment: not translated */
};

struct nat_pkt {
	uint8_t *l3;            /* the IPv4 header */
	uint8_t *l4;            /* its payload */
	uint32_t l4_len;        /* bytes of it in the frame (to tot_len) */
	struct nat_tuple t;
	bool ports;             /* TCP/UDP/ICMP query: ports (ids) read */
	bool icmp_error;
	uint8_t tcp_flags;
	/* an ICMP error's quoted packet */
	uint8_t *in_l3, *in_l4;
	uint32_t in_l4_len;     /* quoted bytes past its IP header */
	struct nat_tuple in;    /* its tuple, as it went */
	bool in_ok;
};

/** Read Ethernet frame @p f of @p len bytes (up to 2 VLAN tags passed).
 *  @return enum nat_class; @p k filled for NAT_IP. */
int nat_pkt_read(uint8_t *f, uint32_t len, struct nat_pkt *k);

/** Rewrite packet @p k to carry tuple @p to (addresses and ports or
 *  ICMP identifier; the protocol stays), checksums updated
 *  incrementally: IPv4 header, TCP, UDP (a 0 checksum stays 0), ICMP. */
void nat_pkt_rewrite(struct nat_pkt *k, const struct nat_tuple *to);

/** Rewrite an ICMP error @p k: its outer source or destination address
 *  to those of @p outer, its quoted packet to @p inner; the quoted IP
 *  header's and L4 checksums (where quoted) and the ICMP checksum
 *  updated incrementally. */
void nat_pkt_rewrite_error(struct nat_pkt *k, const struct nat_tuple *outer,
			   const struct nat_tuple *inner);

/** The tuple of the reply to @p t. */
static inline struct nat_tuple
nat_reply(const struct nat_tuple *t)
{
	struct nat_tuple r = { .src = t->dst, .dst = t->src,
			       .sport = t->dport, .dport = t->sport,
			       .proto = t->proto };

	if (t->proto == 1) /* an ICMP query: the identifier both ways */
		r.sport = r.dport = t->sport;
	return r;
}

#endif /* ZN_NAT_H */
