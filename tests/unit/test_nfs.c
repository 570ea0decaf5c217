/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The NFs' own modules: ndpiReader-compatible frame parsing (dpi,
 * flowmon) and route files (router). */

#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_fib.h>
#include <rte_fib6.h>

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

static uint32_t
nh6(const struct routes *r, const uint8_t a[16])
{
	uint32_t idx = routes_lookup6(r, a);

	return idx == ROUTES_NONE ? ROUTES_NONE : r->nh_id[idx];
}

static uint32_t
nh4(const struct routes *r, uint32_t ip)
{
	uint32_t idx = routes_lookup4(r, ip);

	return idx == ROUTES_NONE ? ROUTES_NONE : r->nh_id[idx];
}

ZN_TEST(router_routes_file)
{
	char path[] = "/tmp/zn-routes-XXXXXX", err[256];
	struct routes r;
	uint8_t a6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1 };
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");

	fprintf(f, "; pyasn style comment\n# another\n\n"
		"10.0.0.0/8\t65001\n10.1.0.0/16 65002\n"
		"10.1.0.0/16 65003\n"          /* a later one replaces */
		"0.0.0.0/0 7\n2001:db8::/32 9\n2001:db8:1::/48 4000000000\n"
		"192.168.0.0/24 010\n");        /* decimal: ten */
	fclose(f);
	ZT_EQ(routes_load(&r, path, "ut_rt", 16, NULL, err, sizeof(err)), 0);
	ZT_EQ(r.n_v4, 4u);
	ZT_EQ(r.n_v6, 2u);
	ZT_EQ(nh4(&r, 0x0a010203), 65003u);
	ZT_EQ(nh4(&r, 0x0a020304), 65001u);
	ZT_EQ(nh4(&r, 0x0b000001), 7u);          /* the /0 */
	ZT_EQ(nh4(&r, 0xc0a80001), 10u);
	ZT_EQ(nh6(&r, a6), 4000000000u);         /* any 32-bit id */
	a6[5] = 2;
	ZT_EQ(nh6(&r, a6), 9u);
	a6[3] = 0xb9;
	ZT_EQ(nh6(&r, a6), ROUTES_NONE);         /* no IPv6 default */
	/* live: add, replace, remove, and the room they have */
	ZT_EQ(routes_add(&r, "11.0.0.0/8", 99, err, sizeof(err)), 1);
	ZT_EQ(nh4(&r, 0x0b000001), 99u);
	ZT_EQ(routes_add(&r, "11.0.0.0/8", 98, err, sizeof(err)), 0);
	ZT_EQ(nh4(&r, 0x0b000001), 98u);
	ZT_EQ(routes_del(&r, "11.0.0.0/8", err, sizeof(err)), 0);
	ZT_EQ(nh4(&r, 0x0b000001), 7u);
	ZT_EQ(routes_del(&r, "11.0.0.0/8", err, sizeof(err)), -ENOENT);
	ZT_EQ(routes_del(&r, "0.0.0.0/0", err, sizeof(err)), 0);
	ZT_EQ(nh4(&r, 0x0b000001), ROUTES_NONE);
	ZT_EQ(routes_add(&r, "11.0.0.0/33", 1, err, sizeof(err)), -EINVAL);
	ZT_EQ(routes_add(&r, "011.0.0.0/8", 1, err, sizeof(err)), -EINVAL);
	ZT_EQ(routes_add(&r, "11.0.0.0/+8", 1, err, sizeof(err)), -EINVAL);
	ZT_EQ(routes_add(&r, "2001:db8:5::/48", 5, err, sizeof(err)), 1);
	/* the file's 4 IPv4 lines but /0 (kept apart), + 16 */
	ZT_EQ(r.cap_v4, 4u + 16u);
	ZT_EQ(r.t4, 3u);  /* 11/8 and the /0 went; 10/8, 10.1/16, 192.168/24 */
	for (int i = 0; i < 17; i++) {
		char p[32];

		snprintf(p, sizeof(p), "12.%d.0.0/16", i);
		ZT_EQ(routes_add(&r, p, 1, err, sizeof(err)), 1);
	}
	ZT_EQ(routes_add(&r, "13.0.0.0/8", 1, err, sizeof(err)), -ENOSPC);
	ZT_CHECK(strstr(err, "no room") != NULL);
	ZT_EQ(routes_add(&r, "0.0.0.0/0", 3, err, sizeof(err)), 1); /* apart */
	ZT_EQ(r.n_v4, 21u);
	routes_free(&r);
	/* Defaults only: no table (64 MB each) until a route needs one */
	f = fopen(path, "w");
	fprintf(f, "0.0.0.0/0 1\n::/0 2\n");
	fclose(f);
	ZT_EQ(routes_load(&r, path, "ut_rt5", 8, NULL, err, sizeof(err)), 0);
	ZT_CHECK(r.v4 == NULL && r.v6 == NULL);
	ZT_EQ(nh4(&r, 0x01020304), 1u);
	ZT_EQ(nh6(&r, a6), 2u);
	ZT_EQ(routes_add(&r, "1.0.0.0/8", 5, err, sizeof(err)), 1);
	ZT_CHECK(r.v4 != NULL && r.v6 == NULL);
	ZT_EQ(nh4(&r, 0x01020304), 5u);
	ZT_EQ(nh4(&r, 0x02020304), 1u);
	routes_free(&r);
	/* A bad line is named, and nothing is kept */
	f = fopen(path, "w");
	fprintf(f, "10.0.0.0/8 1\n10.0.0.0/33 1\n");
	fclose(f);
	ZT_EQ(routes_load(&r, path, "ut_rt2", 0, NULL, err, sizeof(err)),
	      -EINVAL);
	ZT_CHECK(strstr(err, ":2:") != NULL);
	ZT_CHECK(r.v4 == NULL && r.nh_id == NULL);
	for (const char *bad = "10.0.0.0/8 x\0" "10.0.0.0/8 0x10\0"
			       "10.0.0.0/8 -1\0" "10.0.0.0/8 +1\0"
			       "10.0.0.0/08x 1\0" "10.0.0.0 1\0"
			       "10.0.0.0/8 4294967296\0" "10.0.0.0/8 1 2\0";
	     *bad != '\0'; bad += strlen(bad) + 1) {
		f = fopen(path, "w");
		fprintf(f, "%s\n", bad);
		fclose(f);
		ZT_EQ(routes_load(&r, path, "ut_rt3", 0, NULL, err,
				  sizeof(err)), -EINVAL);
	}
	unlink(path);
	ZT_CHECK(routes_load(&r, path, "ut_rt4", 0, NULL, err,
			     sizeof(err)) < 0);
}

/* rte_fib against a reference LPM (a scan of every route) over random
 * prefixes, /0 to /32, with live adds, replacements and removals. */
ZN_TEST(router_fib_vs_reference)
{
	enum { N = 3000 };
	static uint32_t pfx[N], nh[N];
	static uint8_t dep[N], live[N];
	char err[256], buf[32];
	struct routes r;
	uint32_t seed = 12345;

	ZT_EQ(routes_load(&r, NULL, "ut_fib", N, NULL, err, sizeof(err)), 0);
	for (int step = 0; step < 3 * N; step++) {
		int i = (int)((seed = seed * 1103515245 + 12345) >> 8) % N;
		uint32_t rnd = (seed = seed * 1103515245 + 12345);

		if (!live[i] || (rnd & 3) == 0) { /* add or replace */
			if (!live[i]) {
				dep[i] = (uint8_t)(rnd % 33);
				pfx[i] = (seed = seed * 1103515245 + 12345) &
					 (dep[i] ? ~0u << (32 - dep[i]) : 0);
				/* one route per prefix: skip duplicates */
				for (int j = 0; j < N; j++)
					if (j != i && live[j] &&
					    dep[j] == dep[i] && pfx[j] == pfx[i])
						goto next;
			}
			nh[i] = rnd >> 4;
			snprintf(buf, sizeof(buf), "%u.%u.%u.%u/%u",
				 pfx[i] >> 24, (pfx[i] >> 16) & 255,
				 (pfx[i] >> 8) & 255, pfx[i] & 255, dep[i]);
			ZT_EQ(routes_add(&r, buf, nh[i], err, sizeof(err)),
			      live[i] ? 0 : 1);
			live[i] = 1;
		} else {
			snprintf(buf, sizeof(buf), "%u.%u.%u.%u/%u",
				 pfx[i] >> 24, (pfx[i] >> 16) & 255,
				 (pfx[i] >> 8) & 255, pfx[i] & 255, dep[i]);
			ZT_EQ(routes_del(&r, buf, err, sizeof(err)), 0);
			live[i] = 0;
		}
		if (step % 300 != 0)
			continue;
		for (int k = 0; k < 2000; k++) {
			uint32_t ip = (seed = seed * 1103515245 + 12345);
			int best = -1;

			if (k & 1) { /* near a live prefix */
				int j = (int)(ip >> 8) % N;

				if (live[j])
					ip = pfx[j] | (ip & (dep[j] ?
						~(~0u << (32 - dep[j])) : ~0u));
			}
			for (int j = 0; j < N; j++)
				if (live[j] && (best < 0 || dep[j] > dep[best]) &&
				    (dep[j] == 0 || (ip ^ pfx[j]) >>
						    (32 - dep[j]) == 0))
					best = j;
			ZT_EQ(nh4(&r, ip), best < 0 ? ROUTES_NONE : nh[best]);
		}
next:;
	}
	routes_free(&r);
}

static bool
match6(const uint8_t *a, const uint8_t *p, unsigned int depth)
{
	for (unsigned int b = 0; b < depth; b++)
		if (((a[b / 8] ^ p[b / 8]) >> (7 - b % 8)) & 1)
			return false;
	return true;
}

/* The same for IPv6 (rte_fib6's trie): prefixes /0 to /128 that share
 * their first bits, so they nest. */
ZN_TEST(router_fib6_vs_reference)
{
	enum { N = 1500 };
	static uint8_t pfx[N][16], dep[N], live[N];
	static uint32_t nh[N];
	char err[256], buf[64];
	struct routes r;
	uint32_t seed = 777;

#define RND() (seed = seed * 1103515245 + 12345)
	ZT_EQ(routes_load(&r, NULL, "ut_fib6", 16 * N, NULL, err,
			  sizeof(err)), 0);
	for (int step = 0; step < 3 * N; step++) {
		int i = (int)(RND() >> 8) % N;

		if (!live[i] || (RND() & 3) == 0) {
			if (!live[i]) {
				/* BGP-like: /0 to /64, and one in 8 up to /128 */
				uint32_t wide = RND() & 7;

				dep[i] = (uint8_t)(RND() % (wide ? 65 : 129));
				for (int b = 0; b < 16; b++)
					pfx[i][b] = b < 2 ? 0x20 :
						    (uint8_t)(RND() >> 16) &
						    (b < 4 ? 0x3 : 0xff);
				for (int b = 0; b < 128; b++)
					if (b >= dep[i])
						pfx[i][b / 8] &=
							(uint8_t)~(0x80 >> (b % 8));
				for (int j = 0; j < N; j++)
					if (j != i && live[j] && dep[j] == dep[i] &&
					    memcmp(pfx[j], pfx[i], 16) == 0)
						goto next;
			}
			nh[i] = RND() >> 4;
			inet_ntop(AF_INET6, pfx[i], buf, sizeof(buf));
			snprintf(buf + strlen(buf), 8, "/%u", dep[i]);
			ZT_EQ(routes_add(&r, buf, nh[i], err, sizeof(err)),
			      live[i] ? 0 : 1);
			live[i] = 1;
		} else {
			inet_ntop(AF_INET6, pfx[i], buf, sizeof(buf));
			snprintf(buf + strlen(buf), 8, "/%u", dep[i]);
			ZT_EQ(routes_del(&r, buf, err, sizeof(err)), 0);
			live[i] = 0;
		}
		if (step % 300 != 0)
			continue;
		for (int k = 0; k < 500; k++) {
			uint8_t a[16];
			int best = -1, j = (int)(RND() >> 8) % N;

			for (int b = 0; b < 16; b++)
				a[b] = b < 2 ? 0x20 : (uint8_t)(RND() >> 16) &
					   (b < 4 ? 0x3 : 0xff);
			if (live[j]) /* inside a live prefix */
				for (int b = 0; b < dep[j]; b++)
					a[b / 8] = (uint8_t)((a[b / 8] &
						~(0x80 >> (b % 8))) |
						(pfx[j][b / 8] & (0x80 >> (b % 8))));
			for (j = 0; j < N; j++)
				if (live[j] && (best < 0 || dep[j] > dep[best]) &&
				    match6(a, pfx[j], dep[j]))
					best = j;
			ZT_EQ(nh6(&r, a), best < 0 ? ROUTES_NONE : nh[best]);
		}
next:;
	}
#undef RND
	routes_free(&r);
}
