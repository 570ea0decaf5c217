/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* monitor: count packets and bytes by L2/L3/L4 protocol and pass them on.
 * Counters are NF counters (ctl "nf.list", telemetry /zeronf/nf); with
 * --print N a summary line is printed every N seconds, and always at exit.
 * With --flows FILE it also tracks connections (a bidirectional flow table
 * keyed by the packet's flow hash) and writes them to FILE at exit, one
 * per line: "key<TAB>packets a->b<TAB>packets b->a". */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>

#include <rte_ether.h>
#include <rte_ip.h>

#include <zeronf/zeronf.h>

#include "../common/l2.h"
#include "../common/tally.h"

enum {
	C_PKTS, C_BYTES, C_IPV4, C_IPV6, C_ARP, C_OTHER_L3, C_TCP, C_UDP,
	C_ICMP, C_OTHER_L4, C_VLAN, C_RUNT, C_TCP_SYN, C_MAX
};

static const char *const names[C_MAX] = {
	"packets", "bytes", "ipv4", "ipv6", "arp", "other_l3", "tcp", "udp",
	"icmp", "other_l4", "vlan", "runt", "tcp_syn",
};

static struct tally tally;
static uint64_t *const local = tally.v; /* counted here, on the packet thread */
static uint64_t print_every_ns, next_print_ns;

static const char *flows_path;
static uint32_t flow_capacity = 1u << 16;
static struct zn_ft *flows;
static int c_flows = -1, c_flows_full = -1;

struct flow_counts {
	uint64_t pkts[2];     /* [0]: the direction of the first packet */
	bool first_reverse;   /* the first packet was the entry's reverse */
};

static void
track_flow(struct zn_nf *nf, struct rte_mbuf *m)
{
	struct zn_flow_key key;
	struct zn_ft_hit hit;
	struct flow_counts *fc;

	if (zn_flow_key_from_pkt(m, &key) < 0)
		return;
	if (zn_ft_add(flows, &key, zn_pkt_flow_hash(m), 0, &hit) < 0) {
		zn_nf_counter_add(nf, c_flows_full, 1);
		return;
	}
	fc = hit.data;
	if (hit.created) {
		fc->first_reverse = hit.reverse;
		zn_nf_counter_add(nf, c_flows, 1);
	}
	fc->pkts[hit.reverse != fc->first_reverse]++;
}

static void
write_flows(void)
{
	const struct zn_flow_key *key;
	struct flow_counts *fc;
	uint32_t cursor = 0;
	char buf[160];
	FILE *f = fopen(flows_path, "w");

	if (f == NULL) {
		fprintf(stderr, "monitor: cannot write %s\n", flows_path);
		return;
	}
	while (zn_ft_iterate(flows, &cursor, &key, (void **)&fc) >= 0) {
		struct zn_flow_key k = *key;

		/* Print the flow as its first packet went. */
		if (fc->first_reverse)
			zn_flow_key_reverse(key, &k);
		zn_flow_key_format(&k, buf, sizeof(buf));
		fprintf(f, "%s\t%" PRIu64 "\t%" PRIu64 "\n", buf, fc->pkts[0],
			fc->pkts[1]);
	}
	fclose(f);
}

static void
count_l4(uint8_t proto)
{
	switch (proto) {
	case IPPROTO_TCP:
		local[C_TCP]++;
		break;
	case IPPROTO_UDP:
		local[C_UDP]++;
		break;
	case IPPROTO_ICMP:
	case IPPROTO_ICMPV6:
		local[C_ICMP]++;
		break;
	default:
		local[C_OTHER_L4]++;
		break;
	}
}

/* A connection opening: SYN without ACK (what a SYN flood is made of). */
static void
count_syn(const uint8_t *p, uint32_t len, uint32_t l4)
{
	if (len >= l4 + 14 && (p[l4 + 13] & 0x12) == 0x02)
		local[C_TCP_SYN]++;
}

/* Classify from the first segment, with bounds checks: malformed and
 * truncated frames are counted, never read past. */
static void
classify(const struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m);
	struct l2 l;

	local[C_PKTS]++;
	local[C_BYTES] += rte_pktmbuf_pkt_len(m);
	if (l2_walk(p, len, &l) < 0) {
		if (len >= RTE_ETHER_HDR_LEN)
			local[C_VLAN]++; /* it ends inside a tag */
		local[C_RUNT]++;
		return;
	}
	if (l.tags > 0)
		local[C_VLAN]++;
	switch (l.ethertype) {
	case RTE_ETHER_TYPE_IPV4:
		local[C_IPV4]++;
		if (len < l.off + sizeof(struct rte_ipv4_hdr)) {
			local[C_RUNT]++; /* it ends inside its IP header */
			break;
		}
		count_l4(p[l.off + 9]);
		if (p[l.off + 9] == IPPROTO_TCP)
			count_syn(p, len, l.off + (p[l.off] & 0xfu) * 4u);
		break;
	case RTE_ETHER_TYPE_IPV6:
		local[C_IPV6]++;
		if (len < l.off + sizeof(struct rte_ipv6_hdr)) {
			local[C_RUNT]++;
			break;
		}
		count_l4(p[l.off + 6]);
		if (p[l.off + 6] == IPPROTO_TCP)
			count_syn(p, len, l.off + 40);
		break;
	case RTE_ETHER_TYPE_ARP:
		local[C_ARP]++;
		break;
	default:
		local[C_OTHER_L3]++;
		break;
	}
}

static void
publish(struct zn_nf *nf)
{
	tally_publish(&tally, nf);
}

static void
print_summary(struct zn_nf *nf, const char *when)
{
	printf("monitor %s [%s]:", zn_nf_name(nf), when);
	for (int c = 0; c < C_MAX; c++)
		printf(" %s=%" PRIu64, names[c], local[c]);
	printf("\n");
	fflush(stdout);
}

static void
mon_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		classify(pkts[i]); /* action stays NEXT */
		if (flows != NULL)
			track_flow(nf, pkts[i]);
	}
	publish(nf);
}

static void
mon_tick(struct zn_nf *nf, uint64_t now)
{
	if (print_every_ns != 0 && now >= next_print_ns) {
		next_print_ns = now + print_every_ns;
		print_summary(nf, "periodic");
	}
}

static int
mon_init(struct zn_nf *nf)
{
	char name[32];
	int rc = tally_register(&tally, nf, names, C_MAX);

	if (rc < 0)
		return rc;
	if (flows_path == NULL)
		return 0;
	c_flows = zn_nf_counter_register(nf, "flows");
	c_flows_full = zn_nf_counter_register(nf, "flow_table_full");
	snprintf(name, sizeof(name), "mon_flows_%u", zn_nf_instance_id(nf));
	flows = zn_ft_create(&ZN_FT_OPTS(.name = name,
					 .capacity = flow_capacity,
					 .data_size = sizeof(struct flow_counts),
					 .flags = ZN_FT_F_BIDIR));
	if (flows == NULL) {
		fprintf(stderr, "monitor: cannot create a flow table\n");
		return -ENOMEM;
	}
	return 0;
}

static void
mon_fini(struct zn_nf *nf)
{
	print_summary(nf, "final");
	if (flows != NULL) {
		write_flows();
		if (!zn_nf_manager_stopping(nf))
			zn_ft_free(flows);
	}
}

static int
mon_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "print", required_argument, NULL, 'p' },
		{ "flows", required_argument, NULL, 'f' },
		{ "flow-capacity", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	unsigned long long v;
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "p:f:c:", opts, NULL)) != -1) {
		if (c == 'f') {
			flows_path = optarg;
			continue;
		}
		if (c != 'p' && c != 'c')
			return -EINVAL;
		errno = 0;
		v = strtoull(optarg, &end, 10);
		if (errno != 0 || *end != '\0' || end == optarg ||
		    (c == 'c' && (v == 0 || v > (1u << 26))))
			return -EINVAL;
		if (c == 'c')
			flow_capacity = (uint32_t)v;
		else
			print_every_ns = v * 1000000000ULL;
	}
	return 0;
}

static void
mon_usage(FILE *out)
{
	fprintf(out, "  -p, --print SECONDS   print counters every SECONDS\n"
		     "  -f, --flows FILE      track connections, write them to "
		     "FILE at exit\n"
		     "  -c, --flow-capacity N flows tracked at most (default "
		     "65536)\n");
}

static const struct zn_nf_ops monitor_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "monitor",
	.parse_args = mon_parse,
	.usage = mon_usage,
	.init = mon_init,
	.burst = mon_burst,
	.tick = mon_tick,
	.fini = mon_fini,
};

ZN_NF_REGISTER(monitor_ops)
