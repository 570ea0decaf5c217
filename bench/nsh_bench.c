/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * xhost's encapsulation cost: what the worker does per packet for a hop
 * on another host (mgr/fabric/fabric_hot.c), on its own: building the NSH
 * with ZeroNF's MD type 2 header and writing VXLAN-GPE, IPv4, UDP and
 * Ethernet before a frame of SIZE bytes (zn_nsh_encap_put); and reading
 * it back at the far end (zn_nsh_decap). Bursts of 32 frames in their
 * own buffers, as a worker sees them. Prints
 *   {"bench":"xhost_encap","size":B,"encap_ns":X,"decap_ns":Y}
 * with the median of 5 rounds of 2^22 packets each.
 *
 *   zn-nsh-bench SIZE
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../lib/common/zn_nsh.h"

#define ROUNDS 5
#define BURST 32
#define PACKETS (1u << 22)
#define ROOM 128 /* DPDK's headroom */

static double
now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int
main(int argc, char **argv)
{
	const struct zn_nsh_tunnel t = {
		.encap = ZN_NSH_VXLAN_GPE,
		.src_mac = { 0x02, 0, 0, 0, 0, 1 },
		.dst_mac = { 0x02, 0, 0, 0, 0, 2 },
		.src_ip = 0x0100000a, .dst_ip = 0x0200000a, .vni = 7,
	};
	size_t size = argc > 1 ? strtoul(argv[1], NULL, 10) : 64;
	static uint8_t buf[BURST][ROOM + 2048];
	double enc[ROUNDS], dec[ROUNDS];
	unsigned int outer = 0;
	uint64_t sink = 0;

	if (size < 60 || size > 2048) {
		fprintf(stderr, "usage: zn-nsh-bench SIZE (60..2048)\n");
		return 2;
	}
	for (unsigned int i = 0; i < BURST; i++)
		memset(buf[i] + ROOM, (int)i, size);
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_ns();

		for (unsigned int n = 0; n < PACKETS; n += BURST)
			for (unsigned int i = 0; i < BURST; i++) {
				struct zn_nsh h = { .spi = 1, .si = 254,
						    .ttl = 63, .md_type = 2,
						    .next_proto = ZN_NSH_NP_ETH };
				unsigned int o = zn_nsh_outer_len(t.encap) +
						 ZN_NSH_BASE_LEN + 4 +
						 ZN_NSH_TLV_FLOW_LEN;
				uint32_t hash = n + i;

				zn_nsh_md2_add_flow(&h, hash, 0, 0);
				if (zn_nsh_encap_put(buf[i] + ROOM - o, o, &t,
						     &h, size, hash) !=
				    (int)o)
					return 1;
				outer = o;
			}
		enc[r] = (now_ns() - t0) / PACKETS;
		t0 = now_ns();
		for (unsigned int n = 0; n < PACKETS; n += BURST)
			for (unsigned int i = 0; i < BURST; i++) {
				enum zn_nsh_encap e;
				struct zn_nsh h;
				size_t off;
				uint32_t src, hash;
				uint8_t tn, fl;

				if (zn_nsh_decap(buf[i] + ROOM - outer,
						 size + outer, &e, &h, &off,
						 &src) != 0 ||
				    zn_nsh_md2_flow(&h, &hash, &tn, &fl) != 0)
					return 1;
				sink += off + hash;
			}
		dec[r] = (now_ns() - t0) / PACKETS;
	}
	qsort(enc, ROUNDS, sizeof(double), cmp_double);
	qsort(dec, ROUNDS, sizeof(double), cmp_double);
	printf("{\"bench\":\"xhost_encap\",\"size\":%zu,\"encap_ns\":%.1f,"
	       "\"decap_ns\":%.1f}\n", size, enc[ROUNDS / 2], dec[ROUNDS / 2]);
	return sink == 0; /* the reads are used */
}
