/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* forward: pass every packet on - to the next hop of its chain (default),
 * to a service, out of a port, to the first hop of another chain (by its
 * id, as a steering NF does), or cross-connected (out of the other port
 * of its pair: 0<->1, 2<->3, ...), which makes a two-port bridge. With
 * --cost-ns it spends that long on each packet: a heavier NF, to overload
 * a chain on purpose (tests, benchmarks); with --wait-us it sleeps that
 * long on each packet: a slow NF that leaves its core to others (one
 * waiting on something), to overload a chain on a busy machine. */

#include <errno.h>
#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_pause.h>

#include <zeronf/zeronf.h>

static enum zn_action action = ZN_ACT_NEXT;
static uint16_t dest;
static bool cross;
static int chain = -1; /* --chain */
static uint64_t cost_ns, cost_cycles; /* --cost-ns */
static uint64_t wait_us; /* --wait-us */

static void
fwd_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	(void)nf;
	if (cost_cycles != 0) {
		uint64_t end = rte_get_tsc_cycles() + cost_cycles * n;

		while (rte_get_tsc_cycles() < end)
			rte_pause();
	}
	if (wait_us != 0) {
		uint64_t ns = wait_us * 1000 * n;
		struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
				       .tv_nsec = (long)(ns % 1000000000ull) };

		while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
			;
	}
	/* NEXT is every packet's default: do not even touch the metadata
	 * (it stays in the manager's cache). */
	if (action == ZN_ACT_NEXT && !cross && chain < 0)
		return;
	for (uint16_t i = 0; i < n; i++) {
		struct zn_pkt_meta *meta = zn_pkt_meta(pkts[i]);

		if (chain >= 0) {
			meta->chain = (uint8_t)chain;
			meta->chain_pos = ZN_CHAIN_POS_START;
			meta->action = ZN_ACT_NEXT;
			continue;
		}
		if (cross) {
			/* NF-made packets have no ingress port: drop them */
			meta->action = meta->in_port == ZN_PORT_NONE ?
					       ZN_ACT_DROP : ZN_ACT_OUT;
			meta->dest = meta->in_port ^ 1;
			continue;
		}
		meta->action = (uint8_t)action;
		meta->dest = dest;
	}
}

static int
parse_num(const char *s, unsigned long max, uint16_t *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v > max)
		return -EINVAL;
	*out = (uint16_t)v;
	return 0;
}

/* A decimal number of at most @p max (digits only). */
static int
parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	*out = strtoull(s, &end, 10);
	return *s < '0' || *s > '9' || *end != '\0' || *out > max ? -EINVAL
								    : 0;
}

static int
fwd_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to-service", required_argument, NULL, 's' },
		{ "out-port", required_argument, NULL, 'p' },
		{ "cross-connect", no_argument, NULL, 'x' },
		{ "cost-ns", required_argument, NULL, 'c' },
		{ "wait-us", required_argument, NULL, 'w' },
		{ "chain", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "s:p:x", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_num(optarg, 255, &dest) || dest == 0)
				return -EINVAL;
			action = ZN_ACT_TO_SERVICE;
			break;
		case 'p':
			if (parse_num(optarg, 65534, &dest))
				return -EINVAL;
			action = ZN_ACT_OUT;
			break;
		case 'x':
			cross = true;
			break;
		case 'C': {
			uint16_t id;

			if (parse_num(optarg, 255, &id))
				return -EINVAL;
			chain = id;
			break;
		}
		case 'c':
			if (parse_u64(optarg, 1000000000ull, &cost_ns) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (parse_u64(optarg, 1000000ull, &wait_us) < 0)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

static int
fwd_init(struct zn_nf *nf)
{
	cost_cycles = cost_ns * rte_get_tsc_hz() / 1000000000ull;
	if (action == ZN_ACT_OUT && dest >= zn_nf_port_count(nf)) {
		fprintf(stderr, "forward: no port %u (the manager has %u)\n",
			dest, zn_nf_port_count(nf));
		return -EINVAL;
	}
	return 0;
}

static void
fwd_usage(FILE *out)
{
	fprintf(out, "  -s, --to-service S    send every packet to service S\n"
		     "  -p, --out-port P      send every packet out of port P\n"
		     "  -x, --cross-connect   out of the other port of the pair "
		     "(0<->1, 2<->3...)\n"
		     "      --chain ID        to the first hop of chain ID "
		     "(path.list, rule.list)\n"
		     "  (default: next hop of the packet's chain)\n"
		     "      --cost-ns N       spend N ns on each packet (a "
		     "heavier NF)\n"
		     "      --wait-us N       sleep N us on each packet (a slow "
		     "NF that leaves its core)\n");
}

static const struct zn_nf_ops forward_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "forward",
	.parse_args = fwd_parse,
	.usage = fwd_usage,
	.init = fwd_init,
	.burst = fwd_burst,
};

ZN_NF_REGISTER(forward_ops)
