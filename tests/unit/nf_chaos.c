/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/system/test_robustness.py: a buggy NF. It writes
 * pseudo-random bytes over the whole metadata of every packet it sees -
 * action, chain id and position, hop count, destination, ingress port,
 * flow hash and flags, all of which an NF may write - so the manager has
 * to route or drop (and count) whatever comes back. With --steer N it
 * also asks, every N packets, for a flow-director rule on the packet's
 * flow (or its removal) with random steps: service ids, ports and step
 * types the manager must refuse, or install. Counters: steer_ok,
 * steer_refused (negative errno), steer_bad (any other result: a bug).
 * Deterministic: --seed N. */

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <zeronf/zeronf.h>

#include "xorshift.h"

static uint64_t state = 88172645463325252ULL;
static unsigned int steer_every, seen;
static int c_ok, c_refused, c_bad;

static uint64_t
next_rand(void)
{
	return xorshift64(&state);
}

static int
chaos_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "steer", required_argument, NULL, 'e' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "s:e:", lo, NULL)) != -1) {
		if (c == 's')
			state ^= strtoull(optarg, NULL, 0) *
				 0x9e3779b97f4a7c15ULL;
		else if (c == 'e')
			steer_every = (unsigned int)strtoul(optarg, NULL, 0);
		else
			return -EINVAL;
	}
	return 0;
}

static int
chaos_init(struct zn_nf *nf)
{
	c_ok = zn_nf_counter_register(nf, "steer_ok");
	c_refused = zn_nf_counter_register(nf, "steer_refused");
	c_bad = zn_nf_counter_register(nf, "steer_bad");
	return c_ok < 0 ? c_ok : c_refused < 0 ? c_refused :
	       c_bad < 0 ? c_bad : 0;
}

/* A rule for the packet's flow, or its removal, with random steps. */
static void
random_steer(struct zn_nf *nf, struct rte_mbuf *m)
{
	struct zn_step steps[ZN_MAX_CHAIN_STEPS + 4];
	struct zn_flow_key key;
	uint64_t r = next_rand();
	unsigned int n = (unsigned int)(r >> 8) % (ZN_MAX_CHAIN_STEPS + 4);
	unsigned int flags = (unsigned int)(r >> 16) & 3; /* 2: invalid */
	int rc;

	if (zn_flow_key_from_pkt(m, &key) < 0)
		memset(&key, 0, sizeof(key));
	if ((r >> 20) % 8 == 0)
		key.ip_version = (uint8_t)(r >> 24);
	for (unsigned int i = 0; i < n; i++) {
		uint64_t x = next_rand();

		steps[i] = (struct zn_step){
			.type = (uint8_t)(x % 8 < 6 ? 1 + x % 3 : x >> 8),
			.id = (uint16_t)(x % 4 == 0 ? x >> 16 : (x >> 16) % 5),
		};
	}
	if ((r >> 32) % 4 == 0)
		rc = zn_nf_flow_unsteer(nf, &key, flags);
	else
		rc = zn_nf_flow_steer(nf, &key, steps, n, flags);
	zn_nf_counter_add(nf, rc == 0 ? c_ok : rc < 0 ? c_refused : c_bad, 1);
}

static void
chaos_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		uint64_t r[2] = { next_rand(), next_rand() };
		struct zn_pkt_meta *meta = zn_pkt_meta(pkts[i]);

		if (steer_every != 0 && ++seen % steer_every == 0)
			random_steer(nf, pkts[i]);
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
	.init = chaos_init,
	.burst = chaos_burst,
};

ZN_NF_REGISTER(chaos_ops)
