/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* flowmon --decap: the decoders (tunnels as Zeek looks into them, link
 * layers ndpiReader does not parse). Pure: bytes in, where the inner
 * packet is and its link type out; the packet is never changed. */

#include <string.h>

#include <rte_common.h>

#include "flowmon.h"

/* The link type of what an EtherType names in a tunnel (GRE, Geneve):
 * IPv4, IPv6 or Ethernet (transparent bridging), else -1. */
int
fm_etype_dlt(uint16_t type)
{
	switch (type) {
	case 0x0800:
		return DPI_DLT_IPV4;
	case 0x86dd:
		return DPI_DLT_IPV6;
	case 0x6558:
		return DPI_DLT_EN10MB;
	default:
		return -1;
	}
}


/* --decap: what is inside a GRE header (RFC 2784/2890; version 1:
 * PPTP's, RFC 2637), or NULL for a payload not decoded. */
static const uint8_t *
gre_inner(const uint8_t *h, uint32_t left, uint32_t *len, int *dlt)
{
	uint16_t flags, type;
	uint32_t hl = 4;

	if (left < 4)
		return NULL;
	flags = dpi_rd16(h);
	type = dpi_rd16(h + 2);
	switch (flags & 7) {
	case 0:
		hl += (flags & 0x8000 ? 4 : 0) + (flags & 0x2000 ? 4 : 0) +
		      (flags & 0x1000 ? 4 : 0); /* checksum, key, sequence */
		break;
	case 1: /* key (call id) always; sequence, acknowledgment */
		hl += 4 + (flags & 0x1000 ? 4 : 0) + (flags & 0x0080 ? 4 : 0);
		break;
	default:
		return NULL;
	}
	switch (type) {
	case 0x0800:
	case 0x86dd:
	case 0x6558:
		*dlt = fm_etype_dlt(type);
		break;
	case 0x88be: /* ERSPAN type II (type I: no sequence, no header) */
		*dlt = DPI_DLT_EN10MB;
		hl += flags & 0x1000 ? 8 : 0;
		break;
	case 0x22eb: /* ERSPAN type III, and its optional subheader */
		*dlt = DPI_DLT_EN10MB;
		if (left < hl + 12)
			return NULL;
		hl += 12 + (h[hl + 11] & 1 ? 8 : 0);
		break;
	case 0x880b: /* PPP (PPTP): address and control, then protocol */
		if (left < hl + 4)
			return NULL;
		if (h[hl] == 0xff && h[hl + 1] == 0x03)
			hl += 2;
		if (h[hl] == 0x21 || h[hl] == 0x57) { /* compressed */
			*dlt = h[hl] == 0x21 ? DPI_DLT_IPV4 : DPI_DLT_IPV6;
			hl += 1;
		} else if (h[hl] == 0 && (h[hl + 1] == 0x21 ||
					  h[hl + 1] == 0x57)) {
			*dlt = h[hl + 1] == 0x21 ? DPI_DLT_IPV4 : DPI_DLT_IPV6;
			hl += 2;
		} else {
			return NULL;
		}
		break;
	default:
		if (type < 0x8200 || type > 0x8300)
			return NULL;
		*dlt = DLT_IEEE802_11; /* Aruba's WLAN GRE: 802.11 frames */
		break;
	}
	if (left < hl)
		return NULL;
	*len = left - hl;
	return h + hl;
}

/* The link type of a bare IP packet at @p h, or -1. */
static int
ip_dlt(const uint8_t *h, uint32_t left)
{
	if (left < 20)
		return -1;
	return h[0] >> 4 == 4 ? DPI_DLT_IPV4 :
	       h[0] >> 4 == 6 && left >= 40 ? DPI_DLT_IPV6 : -1;
}

/* GTPv1-U (3GPP TS 29.281): a G-PDU's payload, after the optional fields
 * and the extension headers. */
static const uint8_t *
gtp_inner(const uint8_t *h, uint32_t left, uint32_t *len, int *dlt)
{
	uint32_t hl = 8;

	if (left < 8 || h[0] >> 5 != 1 || !(h[0] & 0x10) || h[1] != 0xff)
		return NULL;
	if (h[0] & 0x07) {
		hl += 4;
		if (left < hl)
			return NULL;
		/* next extension header type: last byte of the 4 */
		for (uint8_t next = (h[0] & 0x04) ? h[hl - 1] : 0; next != 0;) {
			uint32_t el;

			if (left <= hl || (el = (uint32_t)h[hl] * 4) == 0 ||
			    left < hl + el)
				return NULL;
			hl += el;
			next = h[hl - 1];
		}
	}
	if ((*dlt = ip_dlt(h + hl, left - hl)) < 0)
		return NULL;
	*len = left - hl;
	return h + hl;
}

/* Teredo (RFC 4380): IPv6 after optional authentication and origin
 * indication headers; an IPv6 header whose length matches, as Zeek asks.
 * Off port 3544 (a client talks to its relay from any port), as Zeek's
 * signature: a header, or an address in the Teredo prefix 2001::/32. */
static const uint8_t *
teredo_inner(const uint8_t *h, uint32_t left, bool port, uint32_t *len,
	     int *dlt)
{
	static const uint8_t prefix[4] = { 0x20, 0x01, 0x00, 0x00 };
	uint32_t hl = 0;

	if (left >= 4 && h[0] == 0 && h[1] == 1)
		hl += 4u + h[2] + h[3] + 8 + 1;
	if (left >= hl + 8 && h[hl] == 0 && h[hl + 1] == 0)
		hl += 8;
	if (left < hl + 40 || h[hl] >> 4 != 6 ||
	    (uint32_t)dpi_rd16(h + hl + 4) + 40 != left - hl)
		return NULL;
	if (!port && hl == 0 && memcmp(h + 8, prefix, 4) != 0 &&
	    memcmp(h + 24, prefix, 4) != 0)
		return NULL;
	*dlt = DPI_DLT_IPV6;
	*len = left - hl;
	return h + hl;
}

/* AYIYA (draft-massar-v6ops-ayiya): forwarded IPv4 or IPv6, after the
 * identity and the signature. */
static const uint8_t *
ayiya_inner(const uint8_t *h, uint32_t left, uint32_t *len, int *dlt)
{
	uint32_t hl;

	if (left < 8 || (h[2] & 0x0f) != 1 || (h[3] != 4 && h[3] != 41))
		return NULL;
	hl = 8 + (1u << (h[0] >> 4)) + (uint32_t)(h[1] >> 4) * 4;
	if (left < hl || ip_dlt(h + hl, left - hl) < 0)
		return NULL;
	*dlt = h[3] == 4 ? DPI_DLT_IPV4 : DPI_DLT_IPV6;
	*len = left - hl;
	return h + hl;
}

/* --decap, as Zeek: the packet inside VXLAN (UDP port 4789), Geneve (6081),
 * GTP-U (2152), Teredo (3544), AYIYA (5072), GRE (IP protocol 47, or in
 * UDP 4754) is counted in its own flow; a UDP tunnel is a flow too, a GRE
 * one is not (*outer = false). NULL: not a tunnel decoded here. IPv6
 * extension headers are not looked into. */
const uint8_t *
fm_tunnel_inner(const struct dpi_pkt *p, uint32_t *len, int *dlt, bool *outer)
{
	const uint8_t *l4, *h;
	uint32_t off, left, opt;
	uint16_t type;

	*outer = true;
	if (p->key.ip_version == 4) {
		off = (uint32_t)(p->l3[0] & 0xf) * 4;
	} else {
		off = 40;
		if (p->l3_len < 40 || p->l3[6] != p->key.proto)
			return NULL;
	}
	if (off >= p->l3_len)
		return NULL;
	l4 = p->l3 + off;
	left = p->l3_len - off;
	if (p->key.proto == 47) {
		*outer = false;
		return gre_inner(l4, left, len, dlt);
	}
	if (p->key.proto != 17 || left < 16)
		return NULL;
	h = l4 + 8;
	left -= 8;
	switch (p->key.dst_port) {
	case 4789: /* VXLAN: flags (I: VNI valid), VNI; Ethernet */
		if (!(h[0] & 0x08))
			return NULL;
		*dlt = DPI_DLT_EN10MB;
		*len = left - 8;
		return h + 8;
	case 6081: /* Geneve: options length, protocol type */
		opt = (uint32_t)(h[0] & 0x3f) * 4;
		type = dpi_rd16(h + 2);
		if (left < 8 + opt || (*dlt = fm_etype_dlt(type)) < 0)
			return NULL;
		*len = left - 8 - opt;
		return h + 8 + opt;
	case 4754: /* GRE in UDP (RFC 8086) */
		return gre_inner(h, left, len, dlt);
	case 5072:
		return ayiya_inner(h, left, len, dlt);
	default:
		break;
	}
	if (p->key.src_port == 2152 || p->key.dst_port == 2152)
		return gtp_inner(h, left, len, dlt);
	if (p->key.src_port == 5072)
		return ayiya_inner(h, left, len, dlt);
	return teredo_inner(h, left, p->key.src_port == 3544 ||
			    p->key.dst_port == 3544, len, dlt);
}


/* --decap, Zeek's link layers that ndpiReader does not parse: Cisco
 * FabricPath (a 16-byte header before the frame), 802.1ah PBB (I-TAG,
 * then the customer's frame) and VN-Tag (802.1Qbh: 6 bytes after the MACs
 * or a VLAN tag). Returns the frame without them, in @p buf where bytes
 * must go from its middle (the packet itself is never changed), or NULL
 * if there are none. */
const uint8_t *
fm_strip_l2(const uint8_t *data, uint32_t *len, uint8_t *buf)
{
	const uint8_t *f = data;
	uint32_t n = *len, off = 12;
	bool changed = false, in_buf = false;

	for (unsigned int k = 0; k < 8 && off + 2 <= n; k++) {
		uint16_t t = dpi_rd16(f + off);

		if (t == 0x8100 || t == 0x88a8 || t == 0x9100) {
			off += 4;
		} else if (t == 0x8903 && off == 12 && n >= 16 + 14) {
			f += 16; /* FabricPath: the classic frame follows */
			n -= 16;
			changed = true;
		} else if (t == 0x88e7 && off + 6 + 14 <= n) {
			f += off + 6; /* PBB: the customer's MACs follow */
			n -= off + 6;
			off = 12;
			changed = true;
		} else if (t == 0x8926 && off + 8 <= n && n <= L2_BUF) {
			if (in_buf) {
				memmove((uint8_t *)(uintptr_t)f + off,
					f + off + 6, n - off - 6);
			} else {
				memcpy(buf, f, off);
				memcpy(buf + off, f + off + 6, n - off - 6);
				f = buf;
				in_buf = true;
			}
			n -= 6;
			changed = true;
		} else {
			break;
		}
	}
	if (!changed)
		return NULL;
	*len = n;
	return f;
}

/* The IP packet inside a tunnel whose outer packet is a first IPv4
 * fragment is cut by the fragmentation, not by the capture: its headers
 * are whole. Zeek reassembles and counts it once; flowmon counts the first
 * fragment once (ndpiReader's rule), so the inner packet too: from a copy
 * of its headers whose IP length says what is there. NULL: not such. */
const uint8_t *
fm_uncut(const uint8_t *data, uint32_t *len, int dlt, uint8_t *buf,
      uint32_t size)
{
	uint32_t n = RTE_MIN(*len, size);

	if (dlt == DPI_DLT_IPV4 && n >= 20 &&
	    (uint32_t)dpi_rd16(data + 2) > *len) {
		memcpy(buf, data, n);
		buf[2] = (uint8_t)(n >> 8);
		buf[3] = (uint8_t)n;
	} else if (dlt == DPI_DLT_IPV6 && n >= 40 &&
		   (uint32_t)dpi_rd16(data + 4) + 40 > *len) {
		memcpy(buf, data, n);
		buf[4] = (uint8_t)((n - 40) >> 8);
		buf[5] = (uint8_t)(n - 40);
	} else {
		return NULL;
	}
	*len = n;
	return buf;
}

