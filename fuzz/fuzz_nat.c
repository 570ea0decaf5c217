/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The NAT NF's packet reader and rewriter (nfs/nat/nat_pkt.c) on any
 * frame: read it, rewrite it (and, an ICMP error, what it quotes) to
 * addresses and ports the input's first 12 bytes give; every access in
 * bounds, and an IPv4 header checksum that was right before is right
 * after (the incremental update against a full one). */
#include <stdlib.h>
#include <string.h>

#include "../nfs/nat/nat.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
ip_sum_ok(const uint8_t *ip)
{
	uint32_t s = 0, ihl = (ip[0] & 0xfu) * 4;

	for (uint32_t i = 0; i < ihl; i += 2)
		s += (uint32_t)(ip[i] << 8 | ip[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s == 0xffff;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct nat_tuple to;
	struct nat_pkt k;
	uint8_t *f;
	int ok;

	if (size < 12 || size > 65535 + 12)
		return 0;
	memcpy(&to.src, data, 4);
	memcpy(&to.dst, data + 4, 4);
	memcpy(&to.sport, data + 8, 2);
	memcpy(&to.dport, data + 10, 2);
	f = malloc(size - 12 + 1);
	if (f == NULL)
		return 0;
	memcpy(f, data + 12, size - 12);
	if (nat_pkt_read(f, (uint32_t)(size - 12), &k) == NAT_IP) {
		ok = ip_sum_ok(k.l3);
		to.proto = k.t.proto;
		if (k.icmp_error) {
			struct nat_tuple in = to;

			in.proto = k.in.proto;
			nat_pkt_rewrite_error(&k, &to, &in);
		} else {
			nat_pkt_rewrite(&k, &to);
		}
		if (ok && !ip_sum_ok(k.l3))
			abort(); /* the update broke a right checksum */
	}
	free(f);
	return 0;
}
