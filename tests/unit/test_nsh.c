/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* NSH and its tunnels (lib/common/zn_nsh.c): headers written and read back,
 * every field; what does not parse refused; each tunnel's frame decoded
 * to the same NSH and inner packet. tests/pkt/test_nsh.py has Debian's
 * tcpdump decode these frames (nsh_pcap below writes them). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <arpa/inet.h>

#include "zn_test.h"
#include "../../lib/common/zn_nsh.h"

static void
md1(struct zn_nsh *h, uint32_t spi, uint8_t si)
{
	memset(h, 0, sizeof(*h));
	h->spi = spi;
	h->si = si;
	h->ttl = ZN_NSH_TTL_DEFAULT;
	h->md_type = 1;
	h->next_proto = ZN_NSH_NP_ETH;
	h->ctx_len = 16;
	for (unsigned int i = 0; i < 16; i++)
		h->ctx[i] = (uint8_t)(0xa0 + i);
}

ZN_TEST(nsh_md1_and_md2_round_trip)
{
	uint8_t b[256];
	struct zn_nsh h, g;
	uint32_t hash;
	uint8_t tenant, flags;

	md1(&h, 0x123456, 254);
	h.oam = 1;
	ZT_EQ(zn_nsh_put(b, sizeof(b), &h), 24);
	/* RFC 8300 figure 2: ver 0, O, TTL 63 across the first two bytes,
	 * length 6 words, MD type 1, next protocol Ethernet */
	ZT_EQ(b[0], 0x20 | (63 >> 2));
	ZT_EQ(b[1], (3 << 6) | 6);
	ZT_EQ(b[2], 1);
	ZT_EQ(b[3], 3);
	ZT_EQ(b[4], 0x12);
	ZT_EQ(b[6], 0x56);
	ZT_EQ(b[7], 254);
	ZT_EQ(zn_nsh_parse(b, 24, &g), 24);
	ZT_EQ(g.spi, 0x123456);
	ZT_EQ(g.si, 254);
	ZT_EQ(g.ttl, 63);
	ZT_EQ(g.oam, 1);
	ZT_EQ(g.md_type, 1);
	ZT_EQ(g.next_proto, ZN_NSH_NP_ETH);
	ZT_CHECK(memcmp(g.ctx, h.ctx, 16) == 0);
	/* MD type 2: ZeroNF's flow TLV, found again */
	memset(&h, 0, sizeof(h));
	h.spi = 7;
	h.si = 3;
	h.ttl = 1;
	h.md_type = 2;
	h.next_proto = ZN_NSH_NP_IPV4;
	ZT_EQ(zn_nsh_md2_flow(&h, &hash, &tenant, &flags), -ENOENT);
	ZT_EQ(zn_nsh_md2_add_flow(&h, 0xdeadbeef, 4, 1), 0);
	ZT_EQ(zn_nsh_put(b, sizeof(b), &h), 8 + 12);
	ZT_EQ(zn_nsh_parse(b, 20, &g), 20);
	ZT_EQ(zn_nsh_md2_flow(&g, &hash, &tenant, &flags), 0);
	ZT_EQ(hash, 0xdeadbeef);
	ZT_EQ(tenant, 4);
	ZT_EQ(flags, 1);
}

ZN_TEST(nsh_refuses_what_does_not_parse)
{
	uint8_t b[256];
	struct zn_nsh h, g;

	md1(&h, 1, 1);
	ZT_EQ(zn_nsh_put(b, sizeof(b), &h), 24);
	ZT_EQ(zn_nsh_parse(b, 23, &g), -EINVAL);   /* cut short */
	ZT_EQ(zn_nsh_parse(b, 7, &g), -EINVAL);
	b[0] |= 0x40;                              /* version 1 */
	ZT_EQ(zn_nsh_parse(b, 24, &g), -EINVAL);
	b[0] &= 0x3f;
	b[1] = (uint8_t)((b[1] & 0xc0) | 5);       /* MD 1 of 5 words */
	ZT_EQ(zn_nsh_parse(b, 24, &g), -EINVAL);
	b[1] = (uint8_t)((b[1] & 0xc0) | 6);
	b[2] = 3;                                  /* MD type 3 */
	ZT_EQ(zn_nsh_parse(b, 24, &g), -EINVAL);
	b[2] = 0xf;                                /* nor 0xf */
	ZT_EQ(zn_nsh_parse(b, 24, &g), -EINVAL);
	/* MD 2 whose TLV says more than the header holds */
	memset(&h, 0, sizeof(h));
	h.md_type = 2;
	ZT_EQ(zn_nsh_md2_add_flow(&h, 1, 0, 0), 0);
	ZT_EQ(zn_nsh_put(b, sizeof(b), &h), 20);
	b[8 + 3] = 20;
	ZT_EQ(zn_nsh_parse(b, 20, &g), -EINVAL);
	/* what cannot be written */
	md1(&h, 0x1000000, 1);
	ZT_EQ(zn_nsh_put(b, sizeof(b), &h), -EINVAL);
	md1(&h, 1, 1);
	h.ttl = 64;
	ZT_EQ(zn_nsh_put(b, sizeof(b), &h), -EINVAL);
	h.ttl = 1;
	ZT_EQ(zn_nsh_put(b, 23, &h), -ENOSPC);
}

static unsigned int
inner_udp(uint8_t *p, uint16_t sport)
{
	static const uint8_t f[42] = {
		0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00,
		0x45, 0, 0, 28, 0, 0, 0x40, 0, 64, 17, 0x26, 0xcf,
		10, 0, 0, 1, 10, 0, 0, 2, 0, 0, 0x13, 0x89, 0, 8, 0, 0,
	};

	memcpy(p, f, sizeof(f));
	p[34] = (uint8_t)(sport >> 8);
	p[35] = (uint8_t)sport;
	return sizeof(f);
}

static void
tunnel(struct zn_nsh_tunnel *t, enum zn_nsh_encap e)
{
	static const uint8_t a[6] = { 0x02, 0, 0, 0, 0xa, 1 };
	static const uint8_t b[6] = { 0x02, 0, 0, 0, 0xb, 1 };

	memset(t, 0, sizeof(*t));
	t->encap = e;
	memcpy(t->src_mac, a, 6);
	memcpy(t->dst_mac, b, 6);
	t->src_ip = inet_addr("192.0.2.1");
	t->dst_ip = inet_addr("192.0.2.2");
	t->vni = 0x4242;
}

ZN_TEST(nsh_tunnels_round_trip)
{
	for (int e = ZN_NSH_VXLAN_GPE; e <= ZN_NSH_ETHERNET; e++) {
		uint8_t f[512];
		struct zn_nsh_tunnel t;
		struct zn_nsh h, g;
		enum zn_nsh_encap got;
		size_t off;
		uint32_t src;
		int n;

		tunnel(&t, (enum zn_nsh_encap)e);
		md1(&h, 0xabc, 200);
		n = zn_nsh_encap_put(f, sizeof(f), &t, &h, 42, 0x12345678);
		ZT_EQ(n, (int)(zn_nsh_outer_len(t.encap) + 24));
		inner_udp(f + n, 5000);
		ZT_EQ(zn_nsh_decap(f, (size_t)n + 42, &got, &g, &off, &src),
		      0);
		ZT_EQ(got, t.encap);
		ZT_EQ(off, (size_t)n);
		ZT_EQ(g.spi, 0xabc);
		ZT_EQ(g.si, 200);
		ZT_EQ(src, e == ZN_NSH_ETHERNET ? 0 : t.src_ip);
		/* cut inside the NSH: refused, not read past */
		ZT_EQ(zn_nsh_decap(f, (size_t)n - 1, &got, &g, &off, &src),
		      -EINVAL);
	}
}

ZN_TEST(nsh_ordinary_packets_are_not_tunnels)
{
	uint8_t f[128];
	struct zn_nsh g;
	enum zn_nsh_encap got;
	size_t off;
	uint32_t src;
	unsigned int n = inner_udp(f, 4790); /* from 4790, to 5001 */

	ZT_EQ(zn_nsh_decap(f, n, &got, &g, &off, &src), -ENOENT);
	ZT_EQ(zn_nsh_decap(f, 10, &got, &g, &off, &src), -ENOENT);
	/* to 4789: VXLAN whose inner frame is not NSH */
	f[36] = 0x12, f[37] = 0xb5;
	memset(f + n, 0, 8 + 14);
	f[n] = 0x08;
	ZT_EQ(zn_nsh_decap(f, n + 8 + 14, &got, &g, &off, &src), -ENOENT);
}

/* Plain VXLAN (no NSH), what a path's last host sends a kernel's vxlan
 * device: written and read back; NSH in VXLAN is not taken for it by
 * the order the fabric asks (zn_nsh_decap first). */
ZN_TEST(vxlan_plain_round_trip)
{
	uint8_t f[256];
	struct zn_nsh_tunnel t;
	uint32_t vni, src;
	size_t off;
	int n;

	tunnel(&t, ZN_NSH_VXLAN);
	n = zn_vxlan_put(f, sizeof(f), &t, 42, 0x12345678);
	ZT_EQ(n, ZN_VXLAN_LEN);
	ZT_EQ(f[12], 0x08); /* IPv4 */
	ZT_EQ(f[36] << 8 | f[37], 4789);
	ZT_EQ(f[16] << 8 | f[17], 20 + 8 + 8 + 42); /* IP total length */
	inner_udp(f + n, 5000);
	ZT_EQ(zn_vxlan_decap(f, (size_t)n + 42, &vni, &off, &src), 0);
	ZT_EQ(vni, 0x4242);
	ZT_EQ(off, (size_t)n);
	ZT_EQ(src, t.src_ip);
	/* no room for an inner frame, or no I flag: malformed */
	ZT_EQ(zn_vxlan_decap(f, (size_t)n + 13, &vni, &off, &src), -EINVAL);
	f[42] = 0;
	ZT_EQ(zn_vxlan_decap(f, (size_t)n + 42, &vni, &off, &src), -EINVAL);
	/* not UDP 4789: not VXLAN */
	f[37] = 0xb6;
	ZT_EQ(zn_vxlan_decap(f, (size_t)n + 42, &vni, &off, &src), -ENOENT);
	ZT_EQ(zn_vxlan_put(f, ZN_VXLAN_LEN - 1, &t, 42, 0), -ENOSPC);
	t.vni = 1u << 24;
	ZT_EQ(zn_vxlan_put(f, sizeof(f), &t, 42, 0), -EINVAL);
}

/* With ZN_NSH_PCAP set: every tunnel, SIs 255 down to 253, MD types 1 and
 * 2, written to that pcap for tcpdump to decode (tests/pkt/test_nsh.py). */
ZN_TEST(nsh_pcap)
{
	const char *path = getenv("ZN_NSH_PCAP");
	static const uint32_t ghdr[6] = { 0xa1b2c3d4, 0x00040002, 0, 0,
					  65535, 1 };
	FILE *out;

	if (path == NULL)
		return;
	out = fopen(path, "wb");
	ZT_CHECK(out != NULL);
	fwrite(ghdr, sizeof(ghdr), 1, out);
	for (int e = ZN_NSH_VXLAN_GPE; e <= ZN_NSH_ETHERNET; e++)
		for (unsigned int i = 0; i < 3; i++) {
			uint8_t f[512];
			struct zn_nsh_tunnel t;
			struct zn_nsh h;
			uint32_t rec[4] = { 1, i, 0, 0 };
			int n;

			tunnel(&t, (enum zn_nsh_encap)e);
			md1(&h, 0x000101 + (uint32_t)e, (uint8_t)(255 - i));
			if (i == 2) { /* MD type 2 with ZeroNF's TLV */
				memset(h.ctx, 0, sizeof(h.ctx));
				h.md_type = 2;
				h.ctx_len = 0;
				ZT_EQ(zn_nsh_md2_add_flow(&h, 0xfeedf00d, 1,
							  0), 0);
			}
			n = zn_nsh_encap_put(f, sizeof(f), &t, &h, 42,
					     0xfeedf00d);
			ZT_CHECK(n > 0);
			n += (int)inner_udp(f + n, (uint16_t)(6000 + i));
			rec[2] = rec[3] = (uint32_t)n;
			fwrite(rec, sizeof(rec), 1, out);
			fwrite(f, (size_t)n, 1, out);
		}
	ZT_EQ(fclose(out), 0);
}
