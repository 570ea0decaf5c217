/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Frame parsing with ndpiReader 4.2's rules (reader_util.c,
 * ndpi_workflow_process_packet and get_ndpi_flow_info), which define what
 * its flows are: link types, VLAN (innermost id kept), MPLS, PPPoE,
 * LLC/SNAP, IP-in-IP, GTP-U and TZSP tunnels (-t), non-first IPv4
 * fragments ignored, IPv4 datagrams cut by the capture ignored. Where
 * ndpiReader reads past the captured bytes we stop instead: those frames
 * get ports 0 or are skipped (and counted). Then its way of counting a
 * flow's packets (dpi_count).
 */

#include <string.h>

#include "dpi.h"

#define ET_IP 0x0800
#define ET_IPV6 0x86dd
#define ET_VLAN 0x8100
#define ET_MPLS_UNI 0x8847
#define ET_MPLS_MULTI 0x8848
#define ET_PPPOE 0x8864
#define GTP_U_PORT 2152
#define TZSP_PORT 37008
#define CAPWAP_DATA_PORT 5247

static inline uint32_t
rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/* IPv6 extension headers (ndpi_handle_ipv6_extension_headers): 0 and
 * l4, l4len and nxt past them, or -1 (a later fragment, or cut). */
static int
v6_ext(const uint8_t *end, const uint8_t **l4, uint32_t *l4len, uint8_t *nxt)
{
	while (*nxt == 0 || *nxt == 43 || *nxt == 44 || *nxt == 60 ||
	       *nxt == 135 || *nxt == 59) {
		uint32_t ehl;

		if (*nxt == 59)
			return -1; /* no next header */
		if (*nxt == 44) {
			if (*l4len < 8 || *l4 + 8 > end)
				return -1;
			*nxt = (*l4)[0];
			if ((dpi_rd16(*l4 + 2) >> 3) != 0)
				return -1; /* not the first fragment */
			*l4len -= 8;
			*l4 += 8;
			continue;
		}
		if (*l4len < 2 || *l4 + 2 > end)
			return -1;
		ehl = 8u + 8u * (*l4)[1];
		if (*l4len < ehl || *l4 + ehl > end)
			return -1;
		*nxt = (*l4)[0];
		*l4len -= ehl;
		*l4 += ehl;
	}
	return 0;
}

/* Ports as ndpiReader takes them: TCP with >= 20 bytes of L4 (by the
 * IP length), UDP with >= 8; others 0. */
static void
ports(const uint8_t *l4, const uint8_t *end, uint32_t l4len,
      struct zn_flow_key *k)
{
	if (((k->proto == 6 && l4len >= 20) || (k->proto == 17 && l4len >= 8))
	    && l4 + 4 <= end) {
		k->src_port = dpi_rd16(l4);
		k->dst_port = dpi_rd16(l4 + 2);
	}
}

enum dpi_skip
dpi_parse(const uint8_t *p, uint32_t caplen, int dlt, bool decode_tunnels,
	  struct dpi_pkt *out)
{
	const uint8_t *end = p + caplen;
	uint32_t eth_off = 0, ip_off = 0, ip_len = 0;
	uint16_t type = 0, frag_off = 0, vlan = 0;
	uint8_t proto = 0, tunnel = 0;
	const uint8_t *ip;
	bool is_v6;

	memset(out, 0, sizeof(*out));
datalink:
	if (caplen < eth_off + 28)
		return DPI_SKIP_SHORT;
	switch (dlt) {
	case DPI_DLT_NULL:
		/* ndpiReader reads the family in network order */
		type = rd32(p + eth_off) == 2 ? ET_IP : ET_IPV6;
		ip_off = eth_off + 4;
		break;
	case DPI_DLT_PPP_SERIAL:
		ip_off = eth_off + 4;
		type = dpi_rd16(p + eth_off + 2);
		break;
	case DPI_DLT_C_HDLC:
	case DPI_DLT_PPP:
		if (p[0] == 0x0f || p[0] == 0x8f) {
			ip_off = eth_off + 4;
			type = dpi_rd16(p + eth_off + 2);
		} else {
			ip_off = eth_off + 2;
			type = dpi_rd16(p + eth_off);
		}
		break;
	case DPI_DLT_IPV4:
		type = ET_IP;
		ip_off = eth_off;
		break;
	case DPI_DLT_IPV6:
		type = ET_IPV6;
		ip_off = eth_off;
		break;
	case DPI_DLT_EN10MB: {
		uint16_t check = dpi_rd16(p + eth_off + 12);

		ip_off = eth_off + 14;
		type = 0;
		if (check >= 1536) {
			type = check;
		} else if (check != 0 && check <= 1500) {
			const uint8_t *llc = p + ip_off;

			if (llc[0] == 0xaa || llc[1] == 0xaa) { /* SNAP */
				type = dpi_rd16(llc + 6);
				ip_off += 8;
			} else {
				return DPI_SKIP_NOT_IP; /* STP, other LLC */
			}
		}
		break;
	}
	case DPI_DLT_LINUX_SLL:
		type = dpi_rd16(p + eth_off + 14);
		ip_off = eth_off + 16;
		break;
	case DPI_DLT_RAW:
	case DPI_DLT_RAW_ALT:
	case DPI_LINKTYPE_RAW:
		ip_off = eth_off;
		break;
	default:
		return DPI_SKIP_BAD_L2;
	}

	for (;;) { /* ether_type_check */
		if (type == ET_VLAN) {
			if (ip_off + 4 >= caplen)
				return DPI_SKIP_SHORT;
			do {
				vlan = dpi_rd16(p + ip_off) & 0xfff;
				type = dpi_rd16(p + ip_off + 2);
				ip_off += 4;
			} while (type == ET_VLAN && ip_off + 4 < caplen);
		} else if (type == ET_MPLS_UNI || type == ET_MPLS_MULTI) {
			uint32_t label;

			if (ip_off + 4 >= caplen)
				return DPI_SKIP_SHORT;
			label = rd32(p + ip_off);
			type = ET_IP;
			ip_off += 4;
			while (!(label & 0x100) && ip_off + 4 < caplen) {
				label = rd32(p + ip_off);
				ip_off += 4;
			}
		} else if (type == ET_PPPOE) {
			type = ET_IP;
			ip_off += 8;
		} else {
			break;
		}
	}

iph_check:
	if (ip_off + 20 > caplen)
		return DPI_SKIP_SHORT;
	ip = p + ip_off;
	if (type == ET_IP) {
		frag_off = dpi_rd16(ip + 6);
		proto = ip[9];
	}
	if ((ip[0] >> 4) == 4) {
		ip_len = (uint32_t)(ip[0] & 0xf) * 4;
		is_v6 = false;
		if (ip[9] == 41 || ip[9] == 4) { /* IP in IP: the inner one */
			ip_off += ip_len;
			if (ip_len > 0)
				goto iph_check;
		}
		if ((frag_off & 0x1fff) != 0) {
			out->l3 = ip; /* for who tracks fragments (flowmon) */
			out->l3_len = caplen - ip_off;
			return DPI_SKIP_FRAGMENT;
		}
	} else if ((ip[0] >> 4) == 6) {
		const uint8_t *l4 = ip + 40;
		uint32_t l4len = dpi_rd16(ip + 4);
		uint8_t nxt = ip[6];

		if (ip_off + 40 > caplen)
			return DPI_SKIP_SHORT;
		if (ip_off + 40 + l4len > caplen)
			return DPI_SKIP_TRUNCATED;
		if (v6_ext(end, &l4, &l4len, &nxt) < 0)
			return DPI_SKIP_FRAGMENT;
		if (nxt == 41 || nxt == 4) { /* IP in IPv6: the inner one */
			ip_off = (uint32_t)(l4 - p);
			goto iph_check;
		}
		is_v6 = true;
		proto = nxt;
		/* ndpiReader then looks for a tunnel's UDP header at the
		 * payload length past the IPv6 header (sic): same here. */
		ip_len = l4len;
	} else {
		return DPI_SKIP_NOT_IP;
	}

	if (decode_tunnels && proto == 17) {
		uint32_t off = ip_off + ip_len;
		uint16_t sp, dp;

		if (off + 8 > caplen)
			return DPI_SKIP_SHORT;
		sp = dpi_rd16(p + off);
		dp = dpi_rd16(p + off + 2);
		off += 8;
		if ((sp == GTP_U_PORT || dp == GTP_U_PORT) && off + 8 < caplen) {
			uint8_t flags = p[off], mtype = p[off + 1];
			bool bad = false;

			if ((flags & 0xe0) >> 5 == 1 && mtype == 0xff) {
				off += 8;
				if (flags & 0x07)
					off += 4;
				if (flags & 0x04) {
					while (off < caplen) {
						uint32_t el = (uint32_t)p[off] << 2;

						off += el;
						if (off >= caplen || el == 0) {
							bad = true;
							break;
						}
						if (p[off - 1] == 0)
							break;
					}
				}
				if (off < caplen && !bad) {
					tunnel = DPI_TUN_GTP;
					ip_off = off;
					if (ip_off + 20 > caplen)
						return DPI_SKIP_SHORT;
					ip = p + ip_off;
					if ((ip[0] >> 4) == 6) {
						if (ip_off + 40 > caplen)
							return DPI_SKIP_SHORT;
						is_v6 = true;
					} else if ((ip[0] >> 4) == 4) {
						is_v6 = false;
					} else {
						return DPI_SKIP_NOT_IP;
					}
				}
			}
		} else if (sp == TZSP_PORT || dp == TZSP_PORT) {
			if (off + 4 > caplen)
				return DPI_SKIP_SHORT;
			tunnel = DPI_TUN_TZSP;
			if (p[off] == 1 && p[off + 1] == 0 &&
			    dpi_rd16(p + off + 2) == 1) {
				uint32_t tl;

				off += 4;
				/* ndpiReader looks at the first tag only */
				if (off >= caplen)
					goto flow;
				if (p[off] == 0 || p[off] == 1) {
					tl = 1;
				} else {
					if (off + 1 >= caplen)
						return DPI_SKIP_SHORT;
					tl = p[off + 1];
				}
				off += tl;
				if (off >= caplen)
					return DPI_SKIP_SHORT;
				eth_off = off;
				goto datalink;
			}
		} else if (sp == CAPWAP_DATA_PORT || dp == CAPWAP_DATA_PORT) {
			/* 802.11 data in CAPWAP, LLC/SNAP: the IP inside */
			if (off + 1 < caplen && (p[off] & 0x0f) == 0) {
				off += (uint32_t)(p[off + 1] & 0xf8) >> 1;
				if (off + 32 < caplen && p[off + 1] == 0x08) {
					off += 24;
					type = dpi_rd16(p + off + 6);
					ip_off = off + 8;
					tunnel = DPI_TUN_CAPWAP;
					goto iph_check;
				}
			}
			/* CAPWAP data that is no 802.11 data frame (keep-
			 * alives, management): ndpiReader counts no flow */
			return DPI_SKIP_NOT_IP;
		}
	}

flow:
	/* get_ndpi_flow_info(6) */
	out->l3 = ip;
	out->l3_len = caplen - ip_off;
	out->tunnel = tunnel;
	out->key.vlan = vlan;
	if (!is_v6) {
		uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4;
		uint16_t tot = dpi_rd16(ip + 2);
		uint32_t l4len = (uint16_t)(tot - ihl); /* wraps as theirs */

		if (out->l3_len < 20)
			return DPI_SKIP_SHORT;
		if (ihl > out->l3_len || out->l3_len < tot)
			return DPI_SKIP_TRUNCATED;
		out->key.ip_version = 4;
		out->key.proto = ip[9];
		memcpy(out->key.src, ip + 12, 4);
		memcpy(out->key.dst, ip + 16, 4);
		ports(ip + ihl, end, l4len, &out->key);
	} else {
		const uint8_t *l4 = ip + 40;
		uint32_t l4len = dpi_rd16(ip + 4);
		uint8_t nxt = ip[6];

		if (v6_ext(end, &l4, &l4len, &nxt) < 0)
			return DPI_SKIP_FRAGMENT;
		out->key.ip_version = 6;
		out->key.proto = nxt;
		memcpy(out->key.src, ip + 8, 16);
		memcpy(out->key.dst, ip + 24, 16);
		ports(l4, end, l4len, &out->key);
	}
	return DPI_OK;
}

struct dpi_counts *
dpi_count(struct zn_ft *ft, const struct dpi_pkt *p, uint32_t len,
	  uint64_t ts_ms, struct zn_ft_hit *hit, int *dir)
{
	struct dpi_counts *c;

	if (zn_ft_add(ft, &p->key, zn_flow_key_hash(&p->key),
		      ts_ms * 1000000, hit) < 0)
		return NULL;
	c = hit->data;
	if (hit->created) {
		c->first = p->key;
		c->first_rev = hit->reverse;
		c->first_ms = ts_ms;
	}
	*dir = hit->reverse != c->first_rev;
	c->pkts[*dir]++;
	c->bytes[*dir] += len;
	c->last_ms = ts_ms;
	return c;
}
