/* SPDX-License-Identifier: BSD-3-Clause
 * A complete ZeroNF network function: drop IPv4 packets whose TTL is 1 or
 * less, pass everything else to the next hop of its chain. Build it out of
 * tree with:  cc ttl_guard.c $(pkg-config --cflags --libs zeronf)
 */
#include <rte_ether.h>
#include <rte_ip.h>
#include <zeronf/zeronf.h>

static int dropped; /* index of our counter in the NF's stats */

static int
guard_init(struct zn_nf *nf)
{
	dropped = zn_nf_counter_register(nf, "ttl_expired");
	return dropped < 0 ? dropped : 0;
}

static void
guard_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		struct rte_ether_hdr *eth =
			rte_pktmbuf_mtod(pkts[i], struct rte_ether_hdr *);
		struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);

		if (rte_pktmbuf_data_len(pkts[i]) >= sizeof(*eth) + sizeof(*ip) &&
		    eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) &&
		    ip->time_to_live <= 1) {
			zn_pkt_drop(pkts[i]);
			zn_nf_counter_add(nf, dropped, 1);
		} /* else the default action, ZN_ACT_NEXT, applies */
	}
}

static const struct zn_nf_ops guard_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "ttl-guard",
	.init = guard_init,
	.burst = guard_burst,
};

ZN_NF_REGISTER(guard_ops)
