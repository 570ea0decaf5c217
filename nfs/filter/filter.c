/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * filter: a SYN-flood filter. TCP connection openings (SYN without ACK)
 * pass at --syn-rate per second at most (a token bucket of --syn-burst),
 * the rest of them is dropped and counted; every other packet passes, so
 * established connections keep flowing whatever the flood. Put in front
 * of a chain by a reaction (policy.set) while a monitor sees a flood.
 * The ratelimit NF does this and more (a class of SYNs, per source, per
 * tenant: docs/nfs/ratelimit.md).
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ip.h>

#include <zeronf/zeronf.h>

#include "../common/l2.h"
#include "../common/opts.h"
#include "../common/tally.h"

enum { C_PASSED, C_SYN_PASSED, C_SYN_DROPPED, C_MAX };
static const char *const cnames[C_MAX] = { "passed", "syn_passed",
					   "syn_dropped" };

static struct tally tally;
static uint64_t syn_rate = 100, syn_burst = 100;
static double tokens;
static uint64_t last_ns;

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool
is_syn(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l4;
	struct l2 l;

	if (l2_walk(p, len, &l) < 0)
		return false;
	if (l.ethertype == RTE_ETHER_TYPE_IPV4 &&
	    len >= l.off + sizeof(struct rte_ipv4_hdr) &&
	    p[l.off + 9] == IPPROTO_TCP)
		l4 = l.off + (p[l.off] & 0xfu) * 4u;
	else if (l.ethertype == RTE_ETHER_TYPE_IPV6 &&
		 len >= l.off + sizeof(struct rte_ipv6_hdr) &&
		 p[l.off + 6] == IPPROTO_TCP)
		l4 = l.off + 40;
	else
		return false;
	return len >= l4 + 14 && (p[l4 + 13] & 0x12) == 0x02;
}

static void
filter_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = mono_ns();

	tokens += (double)(now - last_ns) * 1e-9 * (double)syn_rate;
	if (tokens > (double)syn_burst)
		tokens = (double)syn_burst;
	last_ns = now;
	for (uint16_t i = 0; i < n; i++) {
		if (!is_syn(pkts[i])) {
			tally.v[C_PASSED]++; /* action stays NEXT */
		} else if (tokens >= 1) {
			tokens -= 1;
			tally.v[C_SYN_PASSED]++;
		} else {
			tally.v[C_SYN_DROPPED]++;
			zn_pkt_drop(pkts[i]);
		}
	}
	tally_publish(&tally, nf);
}

static int
filter_init(struct zn_nf *nf)
{
	tokens = (double)syn_burst;
	last_ns = mono_ns();
	return tally_register(&tally, nf, cnames, C_MAX);
}

static void
filter_usage(FILE *o)
{
	fprintf(o, "  -r, --syn-rate N   SYNs passed per second at most "
		"(default 100)\n"
		"  -b, --syn-burst N  of them at once (default 100)\n");
}

static int
filter_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "syn-rate", required_argument, NULL, 'r' },
		{ "syn-burst", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "r:b:", lo, NULL)) != -1) {
		if ((c != 'r' && c != 'b') ||
		    opt_dec(optarg, 100000000, &v) < 0)
			return -EINVAL;
		if (c == 'r')
			syn_rate = v;
		else
			syn_burst = v;
	}
	return optind == argc ? 0 : -EINVAL;
}

static const struct zn_nf_ops filter_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "filter",
	.parse_args = filter_parse,
	.usage = filter_usage,
	.init = filter_init,
	.burst = filter_burst,
	.fini = NULL,
};

ZN_NF_REGISTER(filter_ops)
