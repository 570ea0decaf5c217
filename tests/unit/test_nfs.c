/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The NFs' own modules: ndpiReader-compatible frame parsing (dpi,
 * flowmon) and route files (router). */

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_lpm.h>
#include <rte_lpm6.h>

#include "zn_test.h"
#include "../../nfs/dpi/dpi.h"
#include "../../nfs/router/routes.h"

static unsigned int
ipv4(uint8_t *p, uint8_t proto, uint16_t frag, uint16_t tot, uint16_t sp,
     uint16_t dp)
{
	memset(p, 0, 40);
	p[0] = 0x45;
	p[2] = (uint8_t)(tot >> 8);
	p[3] = (uint8_t)tot;
	p[6] = (uint8_t)(frag >> 8);
	p[7] = (uint8_t)frag;
	p[8] = 64;
	p[9] = proto;
	p[12] = 10, p[15] = 1;
	p[16] = 10, p[19] = 2;
	p[20] = (uint8_t)(sp >> 8), p[21] = (uint8_t)sp;
	p[22] = (uint8_t)(dp >> 8), p[23] = (uint8_t)dp;
	return 20;
}

static unsigned int
eth(uint8_t *p, const uint16_t *types, unsigned int n)
{
	unsigned int o = 12;

	memset(p, 0, 12);
	for (unsigned int i = 0; i < n; i++) {
		p[o] = (uint8_t)(types[i] >> 8);
		p[o + 1] = (uint8_t)types[i];
		o += 2;
		if (i + 1 < n) { /* a tag (VLAN id 100 + i) or label */
			p[o] = 0, p[o + 1] = (uint8_t)(100 + i);
			o += 2;
		}
	}
	return o;
}

ZN_TEST(dpi_parse_link_layers)
{
	uint8_t f[256];
	struct dpi_pkt pk;
	unsigned int o;

	/* Ethernet + QinQ: the innermost VLAN id is the flow's */
	o = eth(f, (const uint16_t[]){ 0x8100, 0x8100, 0x0800 }, 3);
	ipv4(f + o, 6, 0, 40, 1234, 80);
	ZT_EQ(dpi_parse(f, o + 40, DPI_DLT_EN10MB, true, &pk), DPI_OK);
	ZT_EQ(pk.key.vlan, 101);
	ZT_EQ(pk.key.proto, 6);
	ZT_EQ(pk.key.src_port, 1234);
	ZT_EQ(pk.key.dst_port, 80);
	ZT_EQ(pk.l3_len, 40u);
	/* MPLS (bottom of stack on the second label), then IPv4 */
	o = 12;
	memset(f, 0, sizeof(f));
	f[o] = 0x88, f[o + 1] = 0x47;
	f[o + 2 + 2] = 0x00;          /* label 1: S = 0 */
	f[o + 6 + 2] = 0x01;          /* label 2: S = 1 */
	o += 2 + 8;
	ipv4(f + o, 17, 0, 28, 53, 5353);
	ZT_EQ(dpi_parse(f, o + 28, DPI_DLT_EN10MB, true, &pk), DPI_OK);
	ZT_EQ(pk.key.dst_port, 5353);
	/* PPPoE session: 8 bytes, then IP */
	o = eth(f, (const uint16_t[]){ 0x8864 }, 1);
	memset(f + o, 0, 8);
	ipv4(f + o + 8, 17, 0, 28, 1, 2);
	ZT_EQ(dpi_parse(f, o + 36, DPI_DLT_EN10MB, true, &pk), DPI_OK);
	ZT_EQ(pk.key.src_port, 1);
	/* Raw IP, Linux cooked */
	ipv4(f, 6, 0, 40, 7, 8);
	ZT_EQ(dpi_parse(f, 40, DPI_DLT_RAW, true, &pk), DPI_OK);
	ZT_EQ(dpi_parse(f, 40, DPI_LINKTYPE_RAW, true, &pk), DPI_OK);
	memset(f, 0, 16);
	f[14] = 0x08;
	ipv4(f + 16, 6, 0, 40, 7, 8);
	ZT_EQ(dpi_parse(f, 56, DPI_DLT_LINUX_SLL, true, &pk), DPI_OK);
	ZT_EQ(pk.key.dst_port, 8);
	/* Not flows: ARP, an unknown link type, a runt */
	o = eth(f, (const uint16_t[]){ 0x0806 }, 1);
	memset(f + o, 0, 28);
	ZT_EQ(dpi_parse(f, o + 28, DPI_DLT_EN10MB, true, &pk),
	      DPI_SKIP_NOT_IP);
	ZT_EQ(dpi_parse(f, 60, 147, true, &pk), DPI_SKIP_BAD_L2);
	ZT_EQ(dpi_parse(f, 20, DPI_DLT_EN10MB, true, &pk), DPI_SKIP_SHORT);
}

ZN_TEST(dpi_parse_ip_rules)
{
	uint8_t f[256];
	struct dpi_pkt pk;
	unsigned int o = eth(f, (const uint16_t[]){ 0x0800 }, 1);

	/* A non-first fragment is no flow packet; the first one is, with
	 * ports 0 (as ndpiReader: it reads them, but only from the first) */
	ipv4(f + o, 17, 0x0010, 28, 1, 2);
	ZT_EQ(dpi_parse(f, o + 28, DPI_DLT_EN10MB, true, &pk),
	      DPI_SKIP_FRAGMENT);
	ipv4(f + o, 17, 0x2000, 28, 1, 2);
	ZT_EQ(dpi_parse(f, o + 28, DPI_DLT_EN10MB, true, &pk), DPI_OK);
	/* The capture cut the datagram: skipped */
	ipv4(f + o, 6, 0, 1500, 1, 2);
	ZT_EQ(dpi_parse(f, o + 60, DPI_DLT_EN10MB, true, &pk),
	      DPI_SKIP_TRUNCATED);
	/* IP in IP: the inner header's flow */
	ipv4(f + o, 4, 0, 60, 0, 0);
	ipv4(f + o + 20, 6, 0, 40, 4444, 443);
	ZT_EQ(dpi_parse(f, o + 60, DPI_DLT_EN10MB, true, &pk), DPI_OK);
	ZT_EQ(pk.key.dst_port, 443);
	ZT_EQ(pk.l3 - f, (long)(o + 20));
	/* GTP-U (UDP 2152, T-PDU): the inner flow, marked, with -t only */
	ipv4(f + o, 17, 0, 20 + 8 + 8 + 40, 2152, 2152);
	memset(f + o + 28, 0, 8);
	f[o + 28] = 0x30, f[o + 29] = 0xff;
	ipv4(f + o + 36, 6, 0, 40, 5555, 80);
	ZT_EQ(dpi_parse(f, o + 76, DPI_DLT_EN10MB, true, &pk), DPI_OK);
	ZT_EQ(pk.tunnel, DPI_TUN_GTP);
	ZT_EQ(pk.key.src_port, 5555);
	ZT_EQ(dpi_parse(f, o + 76, DPI_DLT_EN10MB, false, &pk), DPI_OK);
	ZT_EQ(pk.tunnel, 0);
	ZT_EQ(pk.key.src_port, 2152);
	/* IPv6 behind a hop-by-hop header */
	memset(f + o, 0, 80);
	f[12] = 0x86, f[13] = 0xdd;
	f[o] = 0x60;
	f[o + 5] = 16;                /* payload: 8 hop-by-hop + 8 UDP */
	f[o + 6] = 0;                 /* hop-by-hop */
	f[o + 40] = 17;               /* then UDP */
	f[o + 48] = 0x12, f[o + 49] = 0x34;
	ZT_EQ(dpi_parse(f, o + 56, DPI_DLT_EN10MB, true, &pk), DPI_OK);
	ZT_EQ(pk.key.ip_version, 6);
	ZT_EQ(pk.key.proto, 17);
	ZT_EQ(pk.key.src_port, 0x1234);
}

ZN_TEST(router_routes_file)
{
	char path[] = "/tmp/zn-routes-XXXXXX", err[256];
	struct routes r;
	uint32_t nh;
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1 };
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fprintf(f, "; pyasn style comment\n# another\n\n"
		"10.0.0.0/8\t65001\n10.1.0.0/16 65002\n"
		"10.1.0.0/16 65003\n"          /* a later one replaces */
		"0.0.0.0/0 7\n2001:db8::/32 9\n2001:db8:1::/48 4000000000\n");
	fclose(f);
	ZT_EQ(routes_load(&r, path, "ut_rt", NULL, err, sizeof(err)), 0);
	ZT_EQ(r.n_v4, 3u);
	ZT_EQ(r.n_v6, 2u);
	ZT_CHECK(r.default_v4 >= 0 && r.nh_id[r.default_v4] == 7);
	ZT_EQ(r.default_v6, -1);
	ZT_EQ(rte_lpm_lookup(r.v4, 0x0a010203, &nh), 0);
	ZT_EQ(r.nh_id[nh], 65003u);
	ZT_EQ(rte_lpm_lookup(r.v4, 0x0a020304, &nh), 0);
	ZT_EQ(r.nh_id[nh], 65001u);
	ZT_CHECK(rte_lpm_lookup(r.v4, 0x0b000001, &nh) != 0); /* /0 apart */
	ZT_EQ(rte_lpm6_lookup(r.v6, a6, &nh), 0);
	ZT_EQ(r.nh_id[nh], 4000000000u);  /* any 32-bit id */
	a6[5] = 2;
	ZT_EQ(rte_lpm6_lookup(r.v6, a6, &nh), 0);
	ZT_EQ(r.nh_id[nh], 9u);
	routes_free(&r);
	/* A bad line is named, and nothing is kept */
	f = fopen(path, "w");
	fprintf(f, "10.0.0.0/8 1\n10.0.0.0/33 1\n");
	fclose(f);
	ZT_EQ(routes_load(&r, path, "ut_rt2", NULL, err, sizeof(err)), -EINVAL);
	ZT_CHECK(strstr(err, ":2:") != NULL);
	ZT_CHECK(r.v4 == NULL && r.nh_id == NULL);
	f = fopen(path, "w");
	fprintf(f, "10.0.0.0/8 x\n");
	fclose(f);
	ZT_EQ(routes_load(&r, path, "ut_rt3", NULL, err, sizeof(err)), -EINVAL);
	unlink(path);
	ZT_CHECK(routes_load(&r, path, "ut_rt4", NULL, err, sizeof(err)) < 0);
}
