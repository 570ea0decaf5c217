/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* NSH and its tunnels (zn_nsh.h): writing and reading the bytes. */

#include <errno.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include <rte_vxlan.h>

#include "zn_nsh.h"

#define VXLAN_FLAG_I 0x08     /* RFC 7348: the VNI is valid */
#define GPE_FLAG_P 0x04       /* VXLAN-GPE: next protocol present */
/* The UDP source port: in the ephemeral range RFC 7348 names, from the
 * flow hash's top bits, never 49152 itself (decoders take that port for
 * Broadcom's LI shim, tcpdump among them) */
#define UDP_SPORT_BASE 49153
#define UDP_SPORTS 16383

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static uint16_t
get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

int
zn_nsh_put(uint8_t *p, size_t cap, const struct zn_nsh *h)
{
	unsigned int len = zn_nsh_len(h);

	if (h->spi > 0xffffff || h->ttl > 63 ||
	    (h->md_type == 1 && h->ctx_len != 16) ||
	    (h->md_type == 2 && (h->ctx_len % 4 != 0 ||
				 h->ctx_len > ZN_NSH_CTX_MAX)) ||
	    (h->md_type != 1 && h->md_type != 2))
		return -EINVAL;
	if (cap < len)
		return -ENOSPC;
	/* Ver 0 | O | U | TTL (6) | Length (6, in 4-byte words) */
	p[0] = (uint8_t)((h->oam ? 0x20 : 0) | (h->ttl >> 2));
	p[1] = (uint8_t)((h->ttl & 0x3) << 6 | (len / 4));
	p[2] = h->md_type & 0x0f; /* U (4) | MD type (4) */
	p[3] = h->next_proto;
	p[4] = (uint8_t)(h->spi >> 16);
	p[5] = (uint8_t)(h->spi >> 8);
	p[6] = (uint8_t)h->spi;
	p[7] = h->si;
	memcpy(p + ZN_NSH_BASE_LEN, h->ctx, h->ctx_len);
	return (int)len;
}

int
zn_nsh_parse(const uint8_t *p, size_t len, struct zn_nsh *h)
{
	unsigned int hlen;

	if (len < ZN_NSH_BASE_LEN || (p[0] >> 6) != 0)
		return -EINVAL; /* short, or not version 0 */
	memset(h, 0, sizeof(*h));
	hlen = 4u * (p[1] & 0x3f);
	h->oam = (p[0] & 0x20) != 0;
	h->ttl = (uint8_t)((p[0] & 0x0f) << 2 | p[1] >> 6);
	h->md_type = p[2] & 0x0f;
	h->next_proto = p[3];
	h->spi = (uint32_t)p[4] << 16 | (uint32_t)p[5] << 8 | p[6];
	h->si = p[7];
	if (hlen > len || hlen < ZN_NSH_BASE_LEN ||
	    (h->md_type == 1 && hlen != ZN_NSH_MD1_LEN) ||
	    (h->md_type != 1 && h->md_type != 2))
		return -EINVAL;
	h->ctx_len = (uint8_t)(hlen - ZN_NSH_BASE_LEN);
	memcpy(h->ctx, p + ZN_NSH_BASE_LEN, h->ctx_len);
	if (h->md_type == 2) { /* the TLVs fill the context exactly */
		unsigned int off = 0;

		while (off < h->ctx_len) {
			unsigned int vlen;

			if (h->ctx_len - off < 4)
				return -EINVAL;
			vlen = h->ctx[off + 3] & 0x7f;
			off += 4 + ((vlen + 3) & ~3u);
		}
		if (off != h->ctx_len)
			return -EINVAL;
	}
	return (int)hlen;
}

int
zn_nsh_md2_add_flow(struct zn_nsh *h, uint32_t flow_hash, uint8_t tenant,
		    uint8_t flags)
{
	uint8_t *t = h->ctx + h->ctx_len;

	if (h->ctx_len + 4 + ZN_NSH_TLV_FLOW_LEN > ZN_NSH_CTX_MAX)
		return -ENOSPC;
	put16(t, ZN_NSH_MD_CLASS);
	t[2] = ZN_NSH_TLV_FLOW;
	t[3] = ZN_NSH_TLV_FLOW_LEN;
	t[4] = (uint8_t)(flow_hash >> 24);
	t[5] = (uint8_t)(flow_hash >> 16);
	t[6] = (uint8_t)(flow_hash >> 8);
	t[7] = (uint8_t)flow_hash;
	t[8] = tenant;
	t[9] = flags;
	t[10] = t[11] = 0;
	h->ctx_len += 4 + ZN_NSH_TLV_FLOW_LEN;
	return 0;
}

int
zn_nsh_md2_flow(const struct zn_nsh *h, uint32_t *flow_hash, uint8_t *tenant,
		uint8_t *flags)
{
	unsigned int off = 0;

	if (h->md_type != 2)
		return -ENOENT;
	while (off + 4 <= h->ctx_len) {
		const uint8_t *t = h->ctx + off;
		unsigned int vlen = t[3] & 0x7f;

		if (get16(t) == ZN_NSH_MD_CLASS && t[2] == ZN_NSH_TLV_FLOW &&
		    vlen == ZN_NSH_TLV_FLOW_LEN &&
		    off + 4 + vlen <= h->ctx_len) {
			*flow_hash = (uint32_t)t[4] << 24 |
				     (uint32_t)t[5] << 16 |
				     (uint32_t)t[6] << 8 | t[7];
			*tenant = t[8];
			*flags = t[9];
			return 0;
		}
		off += 4 + ((vlen + 3) & ~3u);
	}
	return -ENOENT;
}

unsigned int
zn_nsh_outer_len(enum zn_nsh_encap encap)
{
	unsigned int ip = sizeof(struct rte_ether_hdr) +
			  sizeof(struct rte_ipv4_hdr) +
			  sizeof(struct rte_udp_hdr);

	switch (encap) {
	case ZN_NSH_VXLAN_GPE:
		return ip + sizeof(struct rte_vxlan_gpe_hdr);
	case ZN_NSH_VXLAN:
		return ip + sizeof(struct rte_vxlan_hdr) +
		       sizeof(struct rte_ether_hdr);
	case ZN_NSH_ETHERNET:
		return sizeof(struct rte_ether_hdr);
	}
	return 0;
}

static uint8_t *
put_eth(uint8_t *p, const uint8_t *dst, const uint8_t *src, uint16_t type)
{
	struct rte_ether_hdr *e = (struct rte_ether_hdr *)p;

	memcpy(&e->dst_addr, dst, 6);
	memcpy(&e->src_addr, src, 6);
	e->ether_type = rte_cpu_to_be_16(type);
	return p + sizeof(*e);
}

/* Ethernet, IPv4 and UDP to @p dport for @p ip_len bytes of IPv4 packet;
 * @return where the UDP payload goes. */
static uint8_t *
put_udp(uint8_t *p, const struct zn_nsh_tunnel *t, size_t ip_len,
	uint16_t dport, uint32_t flow_hash)
{
	uint8_t *q = put_eth(p, t->dst_mac, t->src_mac, RTE_ETHER_TYPE_IPV4);
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)q;
	struct rte_udp_hdr *udp;

	memset(ip, 0, sizeof(*ip));
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->total_length = rte_cpu_to_be_16((uint16_t)ip_len);
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->src_addr = t->src_ip;
	ip->dst_addr = t->dst_ip;
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16((uint16_t)(UDP_SPORT_BASE +
						    (flow_hash >> 18) %
						    UDP_SPORTS));
	udp->dst_port = rte_cpu_to_be_16(dport);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(ip_len - sizeof(*ip)));
	udp->dgram_cksum = 0;
	return (uint8_t *)(udp + 1);
}

int
zn_nsh_encap_put(uint8_t *p, size_t cap, const struct zn_nsh_tunnel *t,
		 const struct zn_nsh *h, size_t inner_len, uint32_t flow_hash)
{
	unsigned int outer = zn_nsh_outer_len(t->encap);
	size_t ip_len;
	uint8_t *q;
	int n;

	if (outer == 0 || t->vni > 0xffffff)
		return -EINVAL;
	if (cap < outer)
		return -ENOSPC;
	n = zn_nsh_put(p + outer, cap - outer, h);
	if (n < 0)
		return n;
	if (t->encap == ZN_NSH_ETHERNET) {
		put_eth(p, t->dst_mac, t->src_mac, ZN_NSH_ETHERTYPE);
		return (int)outer + n;
	}
	ip_len = outer - sizeof(struct rte_ether_hdr) + (size_t)n + inner_len;
	if (ip_len > 65535)
		return -EINVAL;
	q = put_udp(p, t, ip_len, t->encap == ZN_NSH_VXLAN_GPE ?
		    RTE_VXLAN_GPE_DEFAULT_PORT : RTE_VXLAN_DEFAULT_PORT,
		    flow_hash);
	if (t->encap == ZN_NSH_VXLAN_GPE) {
		struct rte_vxlan_gpe_hdr *g = (struct rte_vxlan_gpe_hdr *)q;

		g->vx_flags = VXLAN_FLAG_I | GPE_FLAG_P;
		g->reserved[0] = g->reserved[1] = 0;
		g->proto = RTE_VXLAN_GPE_TYPE_NSH;
		g->vx_vni = rte_cpu_to_be_32(t->vni << 8);
	} else {
		struct rte_vxlan_hdr *v = (struct rte_vxlan_hdr *)q;

		v->vx_flags = rte_cpu_to_be_32((uint32_t)VXLAN_FLAG_I << 24);
		v->vx_vni = rte_cpu_to_be_32(t->vni << 8);
		/* the frame VXLAN carries: Ethernet, then NSH */
		put_eth((uint8_t *)(v + 1), t->dst_mac, t->src_mac,
			ZN_NSH_ETHERTYPE);
	}
	return (int)outer + n;
}

int
zn_vxlan_put(uint8_t *p, size_t cap, const struct zn_nsh_tunnel *t,
	     size_t inner_len, uint32_t flow_hash)
{
	size_t ip_len = ZN_VXLAN_LEN - sizeof(struct rte_ether_hdr) +
			inner_len;
	struct rte_vxlan_hdr *v;

	if (t->vni > 0xffffff || ip_len > 65535)
		return -EINVAL;
	if (cap < ZN_VXLAN_LEN)
		return -ENOSPC;
	v = (struct rte_vxlan_hdr *)put_udp(p, t, ip_len,
					    RTE_VXLAN_DEFAULT_PORT, flow_hash);
	v->vx_flags = rte_cpu_to_be_32((uint32_t)VXLAN_FLAG_I << 24);
	v->vx_vni = rte_cpu_to_be_32(t->vni << 8);
	return ZN_VXLAN_LEN;
}

/* The UDP header of the IPv4 packet at @p p + *@p off (@p len bytes in
 * the frame): a whole header, not a fragment; *@p off moves past the UDP
 * header, the sender's address in *@p src. NULL: not such a packet. */
static const struct rte_udp_hdr *
ipv4_udp(const uint8_t *p, size_t len, size_t *off, uint32_t *src)
{
	const struct rte_ipv4_hdr *ip;
	size_t ihl;

	if (len < *off + sizeof(*ip))
		return NULL;
	ip = (const struct rte_ipv4_hdr *)(p + *off);
	ihl = (size_t)(ip->version_ihl & 0x0f) * 4;
	if ((ip->version_ihl >> 4) != 4 || ihl < sizeof(*ip) ||
	    ip->next_proto_id != IPPROTO_UDP ||
	    (rte_be_to_cpu_16(ip->fragment_offset) &
	     (RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK)) != 0 ||
	    len < *off + ihl + sizeof(struct rte_udp_hdr))
		return NULL;
	*src = ip->src_addr;
	*off += ihl + sizeof(struct rte_udp_hdr);
	return (const struct rte_udp_hdr *)(p + *off - sizeof(struct rte_udp_hdr));
}

/* The EtherType of the frame at @p p after at most one VLAN tag, *@p off
 * past it; 0: too short. */
static uint16_t
ether_type(const uint8_t *p, size_t len, size_t *off)
{
	uint16_t type;

	*off = sizeof(struct rte_ether_hdr);
	if (len < *off)
		return 0;
	type = get16(p + 12);
	if (type == RTE_ETHER_TYPE_VLAN) {
		if (len < *off + 4)
			return 0;
		type = get16(p + 16);
		*off += 4;
	}
	return type;
}

int
zn_vxlan_decap(const uint8_t *p, size_t len, uint32_t *vni, size_t *inner_off,
	       uint32_t *src_ip)
{
	const struct rte_udp_hdr *udp;
	const struct rte_vxlan_hdr *v;
	size_t off;

	if (ether_type(p, len, &off) != RTE_ETHER_TYPE_IPV4 ||
	    (udp = ipv4_udp(p, len, &off, src_ip)) == NULL ||
	    rte_be_to_cpu_16(udp->dst_port) != RTE_VXLAN_DEFAULT_PORT)
		return -ENOENT;
	if (len < off + sizeof(*v) + sizeof(struct rte_ether_hdr))
		return -EINVAL;
	v = (const struct rte_vxlan_hdr *)(p + off);
	if (!(rte_be_to_cpu_32(v->vx_flags) & ((uint32_t)VXLAN_FLAG_I << 24)))
		return -EINVAL; /* RFC 7348: the I flag must be set */
	*vni = rte_be_to_cpu_32(v->vx_vni) >> 8;
	*inner_off = off + sizeof(*v);
	return 0;
}

int
zn_nsh_decap(const uint8_t *p, size_t len, enum zn_nsh_encap *encap,
	     struct zn_nsh *h, size_t *inner_off, uint32_t *src_ip)
{
	const struct rte_udp_hdr *udp;
	uint16_t type, dport;
	size_t off;
	uint32_t src;
	int n;

	type = ether_type(p, len, &off);
	*src_ip = 0;
	if (type == ZN_NSH_ETHERTYPE) {
		*encap = ZN_NSH_ETHERNET;
		goto nsh;
	}
	if (type != RTE_ETHER_TYPE_IPV4 ||
	    (udp = ipv4_udp(p, len, &off, &src)) == NULL)
		return -ENOENT;
	dport = rte_be_to_cpu_16(udp->dst_port);
	if (dport != RTE_VXLAN_GPE_DEFAULT_PORT &&
	    dport != RTE_VXLAN_DEFAULT_PORT)
		return -ENOENT;
	*src_ip = src;
	if (len < off + 8)
		return -EINVAL;
	if (dport == RTE_VXLAN_GPE_DEFAULT_PORT) {
		const struct rte_vxlan_gpe_hdr *g =
			(const struct rte_vxlan_gpe_hdr *)(p + off);

		if (!(g->vx_flags & GPE_FLAG_P) ||
		    g->proto != RTE_VXLAN_GPE_TYPE_NSH)
			return -ENOENT; /* GPE, not carrying NSH */
		*encap = ZN_NSH_VXLAN_GPE;
		off += sizeof(*g);
	} else {
		off += sizeof(struct rte_vxlan_hdr);
		if (len < off + sizeof(struct rte_ether_hdr) ||
		    get16(p + off + 12) != ZN_NSH_ETHERTYPE)
			return -ENOENT; /* VXLAN, not carrying NSH */
		*encap = ZN_NSH_VXLAN;
		off += sizeof(struct rte_ether_hdr);
	}
nsh:
	n = zn_nsh_parse(p + off, len - off, h);
	if (n < 0)
		return n;
	*inner_off = off + (size_t)n;
	return 0;
}
