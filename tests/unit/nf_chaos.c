/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/system/test_robustness.py: a buggy NF. It writes
 * pseudo-random bytes over the whole metadata of every packet it sees -
 * action, chain id and position, hop count, destination, ingress port,
 * flow hash and flags, all of which an NF may write - so the manager has
 * to route or drop (and count) whatever comes back. Deterministic:
 * --seed N. */

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <zeronf/zeronf.h>

static uint64_t state = 88172645463325252ULL;

static uint64_t
next_rand(void)
{
	/* xorshift64 */
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

static int
chaos_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "s:", lo, NULL)) != -1) {
		if (c != 's')
			return -EINVAL;
		state ^= strtoull(optarg, NULL, 0) * 0x9e3779b97f4a7c15ULL;
	}
	return 0;
}

static void
chaos_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	(void)nf;
	for (uint16_t i = 0; i < n; i++) {
		uint64_t r[2] = { next_rand(), next_rand() };
		struct zn_pkt_meta *meta = zn_pkt_meta(pkts[i]);

		memcpy(meta, r, sizeof(*meta));
		/* Half of them with a plausible action, so that packets also
		 * travel on (to services, ports, the chain) before they are
		 * dropped or leave. */
		if (r[1] >> 63)
			meta->action = (uint8_t)(meta->action % ZN_ACT_MAX);
		if ((r[1] >> 62) & 1)
			meta->dest = (uint16_t)(meta->dest % 4);
	}
}

static const struct zn_nf_ops chaos_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "chaos",
	.parse_args = chaos_parse,
	.burst = chaos_burst,
};

ZN_NF_REGISTER(chaos_ops)
