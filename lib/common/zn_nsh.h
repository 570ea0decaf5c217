/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NSH_H
#define ZN_NSH_H

/*
 * The Network Service Header (RFC 8300) and the tunnels that carry it
 * between hosts (zn_nsh.c; docs/multihost.md): what a chain's packets wear
 * from the host that classified them to the host of their next hop.
 *
 *   - NSH: base header (version 0, O bit, TTL, length, MD type, next
 *     protocol), service path header (SPI 24 bits, SI 8 bits), then MD
 *     type 1's 16 bytes of fixed context or MD type 2's context headers
 *     (TLVs: class, type, length, value padded to 4 bytes). ZeroNF's own
 *     metadata is one MD type 2 TLV (ZN_NSH_MD_CLASS, ZN_NSH_TLV_FLOW):
 *     the packet's symmetric flow hash, so the far host's replicas see
 *     both directions of a flow alike, and its tenant.
 *   - Tunnels: VXLAN-GPE (UDP 4790, next protocol NSH), plain VXLAN (RFC
 *     7348, UDP 4789: an inner Ethernet header of EtherType 0x894F, then
 *     NSH), or Ethernet itself (EtherType 0x894F). Outer IPv4, UDP
 *     checksum 0 (RFC 7348 allows it), the UDP source port from the flow
 *     hash (ECMP in the fabric keeps a flow on one path).
 *
 * DPDK 22.11 has the VXLAN and VXLAN-GPE headers (rte_vxlan.h), used
 * here; it has no NSH, hence these. Pure functions on byte buffers: no
 * mbuf, no allocation (unit-tested, fuzzed).
 */

#include <stddef.h>
#include <stdint.h>

#define ZN_NSH_ETHERTYPE 0x894F
#define ZN_NSH_BASE_LEN 8         /* base + service path headers */
#define ZN_NSH_MD1_LEN 24         /* with MD type 1's fixed context */
#define ZN_NSH_CTX_MAX 244        /* context bytes: 63 words (length: 6
				   * bits) less the 2 of base and path */
#define ZN_NSH_TTL_DEFAULT 63     /* RFC 8300 section 2.2 */
#define ZN_NSH_SI_FIRST 255       /* a path's first hop's index */

/* Next protocol (RFC 8300 section 9.1.5) */
enum { ZN_NSH_NP_IPV4 = 1, ZN_NSH_NP_IPV6 = 2, ZN_NSH_NP_ETH = 3,
       ZN_NSH_NP_NSH = 4, ZN_NSH_NP_MPLS = 5 };

/* ZeroNF's MD type 2 TLV: class from IANA's experimental range
 * (0xfff6-0xfffe), type 1: flow hash (4 bytes, big endian), tenant (1),
 * flags (1), 2 bytes reserved. */
#define ZN_NSH_MD_CLASS 0xfff6
#define ZN_NSH_TLV_FLOW 0x01
#define ZN_NSH_TLV_FLOW_LEN 8

struct zn_nsh {
	uint32_t spi;        /* service path identifier, 24 bits */
	uint8_t si;          /* service index */
	uint8_t ttl;         /* 6 bits */
	uint8_t md_type;     /* 1 or 2 */
	uint8_t next_proto;  /* ZN_NSH_NP_* */
	uint8_t oam;         /* the O bit */
	uint8_t ctx_len;     /* context bytes: 16 (MD 1), 0..244 by 4 (MD 2) */
	uint8_t ctx[ZN_NSH_CTX_MAX];
};

/** The header's length in bytes (8 + its context). */
static inline unsigned int
zn_nsh_len(const struct zn_nsh *h)
{
	return ZN_NSH_BASE_LEN + h->ctx_len;
}

/** Write @p h at @p p (@p cap bytes of room). @return its length, or
 *  -EINVAL (a field out of range: SPI past 24 bits, TTL past 6, MD type 1
 *  without 16 bytes of context, MD type 2's not a multiple of 4) or
 *  -ENOSPC. */
int zn_nsh_put(uint8_t *p, size_t cap, const struct zn_nsh *h);

/** Read the NSH at @p p (@p len bytes). @return its length, or -EINVAL:
 *  a version other than 0, a length under its MD type's minimum or past
 *  @p len, an MD type other than 1 or 2, MD type 2 context headers that
 *  overrun the header. */
int zn_nsh_parse(const uint8_t *p, size_t len, struct zn_nsh *h);

/** MD type 2: append ZeroNF's flow TLV to @p h's context. 0 or -ENOSPC. */
int zn_nsh_md2_add_flow(struct zn_nsh *h, uint32_t flow_hash, uint8_t tenant,
			uint8_t flags);
/** MD type 2: ZeroNF's flow TLV in @p h's context. 0, or -ENOENT: none. */
int zn_nsh_md2_flow(const struct zn_nsh *h, uint32_t *flow_hash,
		    uint8_t *tenant, uint8_t *flags);

/* ---- tunnels ---- */

enum zn_nsh_encap {
	ZN_NSH_VXLAN_GPE = 1, /* IPv4 / UDP 4790 / VXLAN-GPE / NSH */
	ZN_NSH_VXLAN,         /* IPv4 / UDP 4789 / VXLAN / Ethernet / NSH */
	ZN_NSH_ETHERNET,      /* Ethernet 0x894F / NSH */
};

/** A tunnel's end points (a peer, as this host sends to it). Addresses
 *  in network order, as on the wire. */
struct zn_nsh_tunnel {
	enum zn_nsh_encap encap;
	uint8_t src_mac[6], dst_mac[6];
	uint32_t src_ip, dst_ip;  /* VXLAN, VXLAN-GPE */
	uint32_t vni;             /* 24 bits */
};

/** Outer bytes before the NSH for @p encap (Ethernet, IPv4, UDP, VXLAN
 *  and VXLAN's inner Ethernet), the NSH excluded. */
unsigned int zn_nsh_outer_len(enum zn_nsh_encap encap);

/** Write the outer headers and @p h at @p p (@p cap bytes of room) for an
 *  inner packet of @p inner_len bytes that follows them; @p flow_hash
 *  picks the UDP source port. @return bytes written (the inner packet
 *  goes at p + that), -ENOSPC, -EINVAL (@p h, or an outer packet past
 *  IPv4's 65535 bytes). */
int zn_nsh_encap_put(uint8_t *p, size_t cap, const struct zn_nsh_tunnel *t,
		     const struct zn_nsh *h, size_t inner_len,
		     uint32_t flow_hash);

/** Recognize a frame of @p len bytes at @p p that carries NSH by any of
 *  the three tunnels (VXLAN(-GPE) on its UDP port, Ethernet of EtherType
 *  0x894F; one VLAN tag allowed outside): the encapsulation in *@p encap,
 *  the NSH in @p h, the inner packet at p + *@p inner_off, the sender's
 *  outer IPv4 address in *@p src_ip (0: Ethernet).
 *  @return 0; -ENOENT: not NSH in a tunnel (an ordinary packet); -EINVAL:
 *  a tunnel or an NSH that does not parse (a counted drop). */
int zn_nsh_decap(const uint8_t *p, size_t len, enum zn_nsh_encap *encap,
		 struct zn_nsh *h, size_t *inner_off, uint32_t *src_ip);

/* ---- plain VXLAN (RFC 7348): no NSH, the frame itself inside ---- */

/** Ethernet, IPv4, UDP and VXLAN: 50 bytes. */
#define ZN_VXLAN_LEN 50

/** Write plain VXLAN outer headers at @p p for an inner frame of
 *  @p inner_len bytes (@p t's VNI and addresses; its encap is not read):
 *  what a path's last host sends to a VXLAN end point that knows no NSH
 *  (a kernel's vxlan device). @return ZN_VXLAN_LEN, -ENOSPC or -EINVAL. */
int zn_vxlan_put(uint8_t *p, size_t cap, const struct zn_nsh_tunnel *t,
		 size_t inner_len, uint32_t flow_hash);

/** Recognize plain VXLAN (IPv4, UDP 4789; one VLAN tag allowed outside):
 *  its VNI in *@p vni, the inner frame at p + *@p inner_off, the sender's
 *  outer IPv4 address in *@p src_ip. Whether it carries NSH is
 *  zn_nsh_decap's question, asked first. @return 0; -ENOENT: not VXLAN;
 *  -EINVAL: VXLAN without room for a frame or without its I flag. */
int zn_vxlan_decap(const uint8_t *p, size_t len, uint32_t *vni,
		   size_t *inner_off, uint32_t *src_ip);

#endif /* ZN_NSH_H */
