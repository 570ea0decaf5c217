/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * speed-tester: inject N packets once and keep them circulating through
 * the default chain. Put it at the end of the chain (e.g. --chain 2,3,1
 * with the tester as service 1): every packet that comes back is
 * timestamped, counted and sent round again (chain restarted). Reports
 * packets per second and round-trip latency percentiles as one JSON line
 * on stdout when --duration is over (or on SIGINT).
 *
 * With --rate PPS it is an open-loop generator instead: it makes packets
 * at that rate (ops->poll paces it), timestamps them, and every packet
 * that comes back is measured and dropped: the latency of the chain at a
 * load below its peak, not only at saturation.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_hash_crc.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include <zeronf/zeronf.h>

#define TS_OFF (RTE_ETHER_HDR_LEN + sizeof(struct rte_ipv4_hdr) + \
		sizeof(struct rte_udp_hdr))
#define SUB_BITS 5
#define N_BUCKETS (64 << SUB_BITS)

static unsigned int n_pkts = 512;
static unsigned int pkt_size = 64;
static unsigned int n_flows = 64;
static double duration_s;
static double warmup_s = 1.0;
static double rate_pps; /* --rate: open loop; 0: packets circulate */
/* --out-port: packets circulate through this port (what is on its other
 * side sends them back; the port's chain brings them here), not through
 * the chain; -1: the chain */
static int out_port = -1;
static uint64_t gen_t0, gen_made, gen_failed, gen_base; /* tsc, packets */

static uint64_t hist[N_BUCKETS];
static uint64_t received, lat_max;
static uint64_t t_start, t_measure; /* tsc */
static bool measuring, reported;
static int c_rx = -1;

/* Log-linear bucket: 2^SUB_BITS sub-buckets per power of two (~3%). */
static inline unsigned int
bucket_of(uint64_t v)
{
	unsigned int msb;

	if (v < (1u << SUB_BITS))
		return (unsigned int)v;
	msb = 63u - (unsigned int)__builtin_clzll(v);
	return ((msb - SUB_BITS + 1) << SUB_BITS) |
	       (unsigned int)((v >> (msb - SUB_BITS)) & ((1u << SUB_BITS) - 1));
}

static inline uint64_t
bucket_value(unsigned int b)
{
	unsigned int e = b >> SUB_BITS, s = b & ((1u << SUB_BITS) - 1);

	if (e == 0)
		return s;
	return (uint64_t)((1u << SUB_BITS) | s) << (e - 1);
}

static uint64_t
percentile_ns(double q)
{
	uint64_t total = 0, acc = 0, target;

	for (unsigned int b = 0; b < N_BUCKETS; b++)
		total += hist[b];
	if (total == 0)
		return 0;
	target = (uint64_t)(q * (double)total);
	for (unsigned int b = 0; b < N_BUCKETS; b++) {
		acc += hist[b];
		if (acc > target)
			return bucket_value(b) * 1000000000ULL /
			       rte_get_tsc_hz();
	}
	return lat_max * 1000000000ULL / rte_get_tsc_hz();
}

static void
report(struct zn_nf *nf)
{
	uint64_t now = rte_rdtsc();
	double secs = measuring ? (double)(now - t_measure) / rte_get_tsc_hz()
				: 0.0;

	if (reported)
		return;
	static const double cdf_q[] = { 0.01, 0.05, 0.1, 0.25, 0.5, 0.75,
					0.9, 0.95, 0.99, 0.999 };

	reported = true;
	printf("{\"nf\":\"speed-tester\",\"name\":\"%s\",\"packets\":%u,"
	       "\"size\":%u,\"seconds\":%.3f,\"received\":%" PRIu64 ","
	       "\"mpps\":%.4f,\"latency_ns\":{\"p50\":%" PRIu64 ",\"p90\":%"
	       PRIu64 ",\"p99\":%" PRIu64 ",\"p999\":%" PRIu64 ",\"max\":%"
	       PRIu64 "},\"rate_pps\":%.0f,\"offered_mpps\":%.4f,"
	       "\"gen_failed\":%" PRIu64 ",\"cdf_ns\":[",
	       zn_nf_name(nf), n_pkts, pkt_size, secs, received,
	       secs > 0 ? (double)received / secs / 1e6 : 0.0,
	       percentile_ns(0.50), percentile_ns(0.90), percentile_ns(0.99),
	       percentile_ns(0.999),
	       (uint64_t)(lat_max * 1000000000ULL / rte_get_tsc_hz()),
	       rate_pps, secs > 0 ? (double)(gen_made - gen_base) / secs / 1e6
				  : 0.0, gen_failed);
	for (unsigned int i = 0; i < RTE_DIM(cdf_q); i++)
		printf("%s[%g,%" PRIu64 "]", i ? "," : "", cdf_q[i],
		       percentile_ns(cdf_q[i]));
	printf("]}\n");
	fflush(stdout);
}

static void
st_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = rte_rdtsc();

	for (uint16_t i = 0; i < n; i++) {
		/* 42 bytes into the frame: not 8-byte aligned, so copied */
		void *ts = rte_pktmbuf_mtod_offset(pkts[i], void *, TS_OFF);

		if (measuring) {
			uint64_t sent, lat;

			memcpy(&sent, ts, sizeof(sent));
			lat = now - sent;

			hist[RTE_MIN(bucket_of(lat), N_BUCKETS - 1u)]++;
			if (lat > lat_max)
				lat_max = lat;
		}
		if (rate_pps > 0) {
			zn_pkt_drop(pkts[i]); /* measured: done with it */
		} else {
			memcpy(ts, &now, sizeof(now));
			if (out_port >= 0)
				zn_pkt_out(pkts[i], (uint16_t)out_port);
			else
				zn_pkt_restart_chain(pkts[i]);
		}
	}
	if (measuring)
		received += n;
	zn_nf_counter_add(nf, c_rx, n);
}

static void
st_tick(struct zn_nf *nf, uint64_t now_ns)
{
	uint64_t now = rte_rdtsc(), hz = rte_get_tsc_hz();

	(void)now_ns;
	if (!measuring && now - t_start >= (uint64_t)(warmup_s * (double)hz)) {
		memset(hist, 0, sizeof(hist));
		received = lat_max = 0;
		gen_base = gen_made;
		t_measure = now;
		measuring = true;
	}
	if (measuring && duration_s > 0 &&
	    now - t_measure >= (uint64_t)(duration_s * (double)hz)) {
		report(nf);
		zn_nf_stop(nf);
	}
}

static void
build_packet(struct rte_mbuf *m, unsigned int i)
{
	struct rte_ether_hdr *eth;
	struct rte_ipv4_hdr *ip;
	struct rte_udp_hdr *udp;
	unsigned int frame = pkt_size - RTE_ETHER_CRC_LEN;
	char *p = rte_pktmbuf_append(m, (uint16_t)frame);
	uint16_t sport = (uint16_t)(1024 + i % n_flows);
	uint64_t now;

	memset(p, 0, frame);
	eth = (struct rte_ether_hdr *)p;
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	eth->src_addr.addr_bytes[0] = 0x02;
	eth->dst_addr.addr_bytes[0] = 0x02;
	eth->dst_addr.addr_bytes[5] = 0x01;
	ip = (struct rte_ipv4_hdr *)(eth + 1);
	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->time_to_live = 64;
	ip->next_proto_id = IPPROTO_UDP;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(frame -
						       RTE_ETHER_HDR_LEN));
	ip->src_addr = rte_cpu_to_be_32(0x0a000001);
	ip->dst_addr = rte_cpu_to_be_32(0x0a000002);
	ip->hdr_checksum = rte_ipv4_cksum(ip);
	udp = (struct rte_udp_hdr *)(ip + 1);
	udp->src_port = rte_cpu_to_be_16(sport);
	udp->dst_port = rte_cpu_to_be_16(9);
	udp->dgram_len = rte_cpu_to_be_16((uint16_t)(frame -
						     RTE_ETHER_HDR_LEN -
						     sizeof(*ip)));
	zn_pkt_meta_init(m);
	if (out_port >= 0)
		zn_pkt_out(m, (uint16_t)out_port);
	zn_pkt_set_flow_hash(m, rte_hash_crc_4byte(sport, 0));
	now = rte_rdtsc();
	memcpy(rte_pktmbuf_mtod_offset(m, void *, TS_OFF), &now, sizeof(now));
}

/* --rate: make the packets due since the start (at most a burst per
 * turn; a generator that fell more than a burst behind drops the backlog
 * rather than sending it at once) and say when the next one is due. */
static uint64_t
st_poll(struct zn_nf *nf, uint64_t now)
{
	struct rte_mbuf *pkts[ZN_BURST];
	double hz = (double)rte_get_tsc_hz();
	uint64_t due;
	unsigned int n;

	if (rate_pps <= 0 || gen_t0 == 0)
		return 0;
	due = (uint64_t)((double)(now - gen_t0) * rate_pps / hz);
	if (due > gen_made + ZN_BURST)
		gen_made = due - ZN_BURST;
	n = (unsigned int)RTE_MIN(due - RTE_MIN(due, gen_made),
				  (uint64_t)ZN_BURST);
	if (n > 0) {
		if (rte_pktmbuf_alloc_bulk(zn_nf_pktmbuf_pool(nf), pkts, n)) {
			gen_failed += n; /* the pool is dry: counted, skipped */
		} else {
			for (unsigned int i = 0; i < n; i++)
				build_packet(pkts[i], (unsigned int)(gen_made + i));
			if (zn_nf_send(nf, pkts, (uint16_t)n) < 0)
				gen_failed += n;
		}
		gen_made += n;
	}
	return gen_t0 + (uint64_t)((double)(gen_made + 1) * hz / rate_pps);
}

static int
st_init(struct zn_nf *nf)
{
	struct rte_mbuf **pkts;
	int rc;

	c_rx = zn_nf_counter_register(nf, "looped");
	if (rate_pps > 0) { /* open loop: st_poll makes the packets */
		t_start = gen_t0 = rte_rdtsc();
		return 0;
	}
	pkts = calloc(n_pkts, sizeof(*pkts));
	if (pkts == NULL)
		return -ENOMEM;
	if (rte_pktmbuf_alloc_bulk(zn_nf_pktmbuf_pool(nf), pkts, n_pkts)) {
		fprintf(stderr, "speed-tester: cannot allocate %u packets\n",
			n_pkts);
		free(pkts);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < n_pkts; i++)
		build_packet(pkts[i], i);
	t_start = rte_rdtsc();
	rc = zn_nf_send(nf, pkts, (uint16_t)n_pkts);
	free(pkts);
	return rc < 0 ? rc : 0;
}

static void
st_fini(struct zn_nf *nf)
{
	report(nf);
}

static int
parse_double(const char *s, double min, double max, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (*s == '\0' || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int
st_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "packets", required_argument, NULL, 'n' },
		{ "size", required_argument, NULL, 'S' },
		{ "flows", required_argument, NULL, 'f' },
		{ "duration", required_argument, NULL, 'd' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "rate", required_argument, NULL, 'r' },
		{ "out-port", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	double v;
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "n:S:f:d:w:r:o:", opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			if (parse_double(optarg, 1, 65535, &v))
				return -EINVAL;
			n_pkts = (unsigned int)v;
			break;
		case 'S':
			if (parse_double(optarg, 64, 1518, &v))
				return -EINVAL;
			pkt_size = (unsigned int)v;
			break;
		case 'f':
			if (parse_double(optarg, 1, 65535, &v))
				return -EINVAL;
			n_flows = (unsigned int)v;
			break;
		case 'd':
			if (parse_double(optarg, 0, 86400, &duration_s))
				return -EINVAL;
			break;
		case 'w':
			if (parse_double(optarg, 0, 3600, &warmup_s))
				return -EINVAL;
			break;
		case 'r':
			if (parse_double(optarg, 1, 1e9, &rate_pps))
				return -EINVAL;
			break;
		case 'o':
			if (parse_double(optarg, 0, 65535, &v))
				return -EINVAL;
			out_port = (int)v;
			break;
		default:
			return -EINVAL;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

static void
st_usage(FILE *out)
{
	fprintf(out,
		"  -n, --packets N      packets kept in flight (default 512)\n"
		"  -S, --size BYTES     frame size incl. FCS, 64..1518 "
		"(default 64)\n"
		"  -f, --flows N        distinct UDP flows (default 64)\n"
		"  -d, --duration SEC   measure for SEC seconds, report, exit "
		"(default: until stopped)\n"
		"  -w, --warmup SEC     seconds before measuring (default 1)\n"
		"  -r, --rate PPS       open loop: make PPS packets per second, "
		"measure and\n"
		"                       drop each one that comes back (default: "
		"--packets\n"
		"                       circulate)\n"
		"  -o, --out-port P     circulate through port P (its other "
		"side sends them\n"
		"                       back; its chain brings them here), "
		"not the chain\n");
}

static const struct zn_nf_ops speed_tester_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "speed-tester",
	.parse_args = st_parse,
	.usage = st_usage,
	.init = st_init,
	.burst = st_burst,
	.tick = st_tick,
	.fini = st_fini,
	.poll = st_poll,
};

ZN_NF_REGISTER(speed_tester_ops)
