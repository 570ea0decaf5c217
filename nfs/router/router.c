/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * router: IPv4/IPv6 longest-prefix-match forwarding (NetVM's L3
 * forwarder). Each packet's destination is looked up (rte_lpm, rte_lpm6,
 * a burst at a time); the route's next hop gives the output port and the
 * destination MAC; the source MAC becomes the port's; the TTL (hop limit)
 * is decremented, with an incremental IPv4 checksum update (RFC 1624).
 * Dropped and counted: no route, TTL expiring here, not IP, malformed IP,
 * a next hop without a port. See README.md.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_fib.h>
#include <rte_fib6.h>

#include <jansson.h>

#include <zeronf/zeronf.h>

#include "routes.h"
#include "../common/l2.h"
#include "../common/tally.h"

#define MAX_NH_CONF 256

enum {
	C_ROUTED, C_NO_ROUTE, C_TTL, C_NOT_IP, C_BAD_IP, C_NO_PORT, C_V4,
	C_V6, C_MAX
};
static const char *const cnames[C_MAX] = {
	"routed", "no_route", "ttl_expired", "not_ip", "bad_ip", "no_port",
	"ipv4", "ipv6",
};

/* A next hop as the packet leaves: port and destination MAC. */
struct hop {
	uint16_t port;         /* UINT16_MAX: none */
	struct rte_ether_addr mac;
};

struct nh_conf {
	uint32_t id;
	uint16_t port;
	bool has_mac;
	struct rte_ether_addr mac;
};

static const char *routes_path;
static struct nh_conf nh_conf[MAX_NH_CONF];
static unsigned int n_nh_conf;
static int default_port = -1;
static uint32_t route_room = 4096;   /* --route-room */
static uint16_t n_ports;
static struct routes rt;
static struct hop *hops;            /* by next-hop index */
static struct rte_ether_addr port_mac[RTE_MAX_ETHPORTS];
static struct tally tally;
static uint64_t *const cnt = tally.v; /* counted here, on the packet thread */

/* RFC 1624: HC' = ~(~HC + ~m + m') for the 16-bit word holding the TTL. */
static inline void
ttl_dec4(struct rte_ipv4_hdr *ip)
{
	uint32_t s = (uint16_t)~rte_be_to_cpu_16(ip->hdr_checksum);
	uint16_t old = (uint16_t)(ip->time_to_live << 8 | ip->next_proto_id);

	ip->time_to_live--;
	s += (uint16_t)~old;
	s += (uint16_t)(ip->time_to_live << 8 | ip->next_proto_id);
	s = (s & 0xffff) + (s >> 16);
	s = (s & 0xffff) + (s >> 16);
	ip->hdr_checksum = rte_cpu_to_be_16((uint16_t)~s);
}

/* L3 header of an Ethernet frame (802.1Q / QinQ tags passed), or NULL. */
static void *
l3_of(struct rte_mbuf *m, uint16_t *et)
{
	struct l2 l;

	if (l2_walk(rte_pktmbuf_mtod(m, const uint8_t *),
		    rte_pktmbuf_data_len(m), &l) < 0)
		return NULL;
	*et = l.ethertype;
	return rte_pktmbuf_mtod_offset(m, void *, l.off);
}

static inline void
out(struct rte_mbuf *m, uint32_t idx)
{
	const struct hop *h = &hops[idx];
	struct rte_ether_hdr *eth;

	if (h->port == UINT16_MAX) {
		cnt[C_NO_PORT]++;
		zn_pkt_drop(m);
		return;
	}
	eth = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	eth->dst_addr = h->mac;
	eth->src_addr = port_mac[h->port];
	zn_pkt_out(m, h->port);
	cnt[C_ROUTED]++;
}

static void
router_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	struct rte_mbuf *m4[ZN_BURST], *m6[ZN_BURST];
	struct rte_ipv4_hdr *ip4[ZN_BURST];
	struct rte_ipv6_hdr *ip6[ZN_BURST];
	uint32_t dst4[ZN_BURST];
	uint8_t dst6[ZN_BURST][RTE_FIB6_IPV6_ADDR_SIZE];
	uint64_t nh[ZN_BURST];
	unsigned int k4 = 0, k6 = 0;

	(void)nf;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint16_t et = 0;
		uint8_t *l3 = l3_of(m, &et);
		uint32_t room = l3 ? (uint32_t)(rte_pktmbuf_mtod(m, uint8_t *) +
					       rte_pktmbuf_data_len(m) - l3) : 0;

		if (l3 != NULL && et == RTE_ETHER_TYPE_IPV4) {
			struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)l3;

			cnt[C_V4]++;
			if (room < sizeof(*ip) || (ip->version_ihl >> 4) != 4 ||
			    (ip->version_ihl & 0xf) < 5 ||
			    rte_be_to_cpu_16(ip->total_length) > room ||
			    rte_be_to_cpu_16(ip->total_length) <
				    (ip->version_ihl & 0xf) * 4u) {
				cnt[C_BAD_IP]++;
				zn_pkt_drop(m);
			} else if (ip->time_to_live <= 1) {
				cnt[C_TTL]++;
				zn_pkt_drop(m);
			} else {
				m4[k4] = m;
				ip4[k4] = ip;
				dst4[k4++] = rte_be_to_cpu_32(ip->dst_addr);
			}
		} else if (l3 != NULL && et == RTE_ETHER_TYPE_IPV6) {
			struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)l3;

			cnt[C_V6]++;
			if (room < sizeof(*ip) ||
			    rte_be_to_cpu_32(ip->vtc_flow) >> 28 != 6) {
				cnt[C_BAD_IP]++;
				zn_pkt_drop(m);
			} else if (ip->hop_limits <= 1) {
				cnt[C_TTL]++;
				zn_pkt_drop(m);
			} else {
				m6[k6] = m;
				ip6[k6] = ip;
				memcpy(dst6[k6++], ip->dst_addr, 16);
			}
		} else {
			cnt[C_NOT_IP]++;
			zn_pkt_drop(m);
		}
	}
	if (k4 > 0) {
		if (rt.v4 != NULL)
			rte_fib_lookup_bulk(rt.v4, dst4, nh, (int)k4);
		for (unsigned int j = 0; j < k4; j++) {
			uint32_t idx = routes_or_default4(&rt, rt.v4 != NULL ?
							  nh[j] : ROUTES_NONE);

			if (idx == ROUTES_NONE) {
				cnt[C_NO_ROUTE]++;
				zn_pkt_drop(m4[j]);
				continue;
			}
			ttl_dec4(ip4[j]);
			out(m4[j], idx);
		}
	}
	if (k6 > 0) {
		if (rt.v6 != NULL)
			rte_fib6_lookup_bulk(rt.v6, dst6, nh, (int)k6);
		for (unsigned int j = 0; j < k6; j++) {
			uint32_t idx = routes_or_default6(&rt, rt.v6 != NULL ?
							  nh[j] : ROUTES_NONE);

			if (idx == ROUTES_NONE) {
				cnt[C_NO_ROUTE]++;
				zn_pkt_drop(m6[j]);
				continue;
			}
			ip6[j]->hop_limits--;
			out(m6[j], idx);
		}
	}
}

static void
router_tick(struct zn_nf *nf, uint64_t now_ns)
{
	(void)now_ns;
	tally_publish(&tally, nf);
}

/* Next hops [from, rt.n_nh) as packets leave by them: the --next-hop
 * entry, else the port of that number, else --default-port; the MAC
 * given, else 02:00 and the id (a local address naming the next hop). */
static int
hops_update(uint32_t from)
{
	for (uint32_t i = from; i < rt.n_nh; i++) {
		uint32_t id = rt.nh_id[i];
		struct hop *h = &hops[i];

		h->port = id < n_ports ? (uint16_t)id :
			  default_port >= 0 ? (uint16_t)default_port :
					      UINT16_MAX;
		h->mac = (struct rte_ether_addr){ { 0x02, 0x00, id >> 24,
			(id >> 16) & 0xff, (id >> 8) & 0xff, id & 0xff } };
		for (unsigned int c = 0; c < n_nh_conf; c++) {
			if (nh_conf[c].id != id)
				continue;
			h->port = nh_conf[c].port;
			if (nh_conf[c].has_mac)
				h->mac = nh_conf[c].mac;
		}
		if (h->port != UINT16_MAX && h->port >= n_ports) {
			fprintf(stderr, "router: next hop %u: no port %u\n",
				id, h->port);
			return -EINVAL;
		}
	}
	return 0;
}

/* Commands (nf.call), on the packet thread between bursts: the tables
 * change with no lookup running. */

/* route.add {"routes": [{"prefix": "10.0.0.0/8", "next_hop": 7}, ...]}:
 * all checked first, then added in order; a route that does not fit stops
 * there (the reply says how many went in). */
static int
cmd_route_add(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a = json_loads(args, 0, NULL), *routes, *r;
	uint32_t nh_before = rt.n_nh, added = 0, replaced = 0;
	char err[256];
	size_t i;
	int rc = 0;

	(void)nf;
	routes = json_object_get(a, "routes");
	if (!json_is_array(routes) || json_array_size(routes) == 0) {
		snprintf(reply, len, "route.add wants {\"routes\": [{\"prefix\""
			 ": P, \"next_hop\": N}, ...]}");
		json_decref(a);
		return -EINVAL;
	}
	json_array_foreach(routes, i, r) {
		json_t *p = json_object_get(r, "prefix");
		json_t *h = json_object_get(r, "next_hop");

		if (!json_is_string(p) || !json_is_integer(h) ||
		    json_integer_value(h) < 0 ||
		    json_integer_value(h) > UINT32_MAX ||
		    json_object_size(r) != 2) {
			snprintf(reply, len, "routes[%zu]: want {\"prefix\": "
				 "string, \"next_hop\": 0..4294967295}", i);
			json_decref(a);
			return -EINVAL;
		}
	}
	json_array_foreach(routes, i, r) {
		rc = routes_add(&rt, json_string_value(json_object_get(
					     r, "prefix")),
				(uint32_t)json_integer_value(json_object_get(
					r, "next_hop")), err, sizeof(err));
		if (rc < 0)
			break;
		added += rc == 1;
		replaced += rc == 0;
	}
	/* Next hops first seen here: their port and MAC. */
	if (rt.n_nh > nh_before && hops_update(nh_before) < 0 && rc >= 0) {
		snprintf(err, sizeof(err), "a new next hop has no port");
		rc = -EINVAL;
	}
	if (rc < 0)
		snprintf(reply, len, "routes[%zu]: %s (%u added, %u replaced "
			 "before it)", i, err, added, replaced);
	else
		snprintf(reply, len, "{\"added\": %u, \"replaced\": %u, "
			 "\"ipv4\": %u, \"ipv6\": %u}", added, replaced,
			 rt.n_v4, rt.n_v6);
	json_decref(a);
	return rc < 0 ? rc : 0;
}

/* route.del {"prefixes": ["10.0.0.0/8", ...]}: all removed, or none
 * where one is bad or absent (checked first). */
static int
cmd_route_del(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a = json_loads(args, 0, NULL), *pfx, *p;
	uint32_t removed = 0;
	char err[256];
	size_t i;
	int rc = 0;

	(void)nf;
	pfx = json_object_get(a, "prefixes");
	if (!json_is_array(pfx) || json_array_size(pfx) == 0) {
		snprintf(reply, len, "route.del wants {\"prefixes\": [P, "
			 "...]}");
		json_decref(a);
		return -EINVAL;
	}
	json_array_foreach(pfx, i, p)
		if (!json_is_string(p)) {
			snprintf(reply, len, "prefixes[%zu]: not a string", i);
			json_decref(a);
			return -EINVAL;
		}
	json_array_foreach(pfx, i, p) {
		rc = routes_del(&rt, json_string_value(p), err, sizeof(err));
		if (rc < 0)
			break;
		removed++;
	}
	if (rc < 0)
		snprintf(reply, len, "prefixes[%zu]: %s (%u removed before "
			 "it)", i, err, removed);
	else
		snprintf(reply, len, "{\"removed\": %u, \"ipv4\": %u, "
			 "\"ipv6\": %u}", removed, rt.n_v4, rt.n_v6);
	json_decref(a);
	return rc;
}

/* route.lookup {"address": "192.0.2.1"}: the next hop a packet to it
 * takes now (IPv4 or IPv6). */
static int
cmd_route_lookup(struct zn_nf *nf, const char *args, char *reply,
		 size_t len)
{
	json_t *a = json_loads(args, 0, NULL);
	const char *addr = json_string_value(json_object_get(a, "address"));
	uint8_t ip[16];
	uint64_t idx = ROUTES_NONE;

	(void)nf;
	if (addr != NULL && inet_pton(AF_INET, addr, ip) == 1) {
		uint32_t v4;

		memcpy(&v4, ip, 4);
		idx = routes_lookup4(&rt, rte_be_to_cpu_32(v4));
	} else if (addr != NULL && inet_pton(AF_INET6, addr, ip) == 1) {
		idx = routes_lookup6(&rt, ip);
	} else {
		snprintf(reply, len, "route.lookup wants {\"address\": an "
			 "IPv4 or IPv6 address}");
		json_decref(a);
		return -EINVAL;
	}
	if (idx == ROUTES_NONE)
		snprintf(reply, len, "{\"next_hop\": null}");
	else
		snprintf(reply, len, "{\"next_hop\": %u, \"port\": %d}",
			 rt.nh_id[idx], hops[idx].port == UINT16_MAX ? -1 :
			 hops[idx].port);
	json_decref(a);
	return 0;
}

static int
router_init(struct zn_nf *nf)
{
	char err[512], name[32];
	uint64_t t0 = rte_get_tsc_cycles();
	int rc;

	n_ports = zn_nf_port_count(nf);
	rc = tally_register(&tally, nf, cnames, C_MAX);
	if (rc < 0)
		return rc;
	for (uint16_t p = 0; p < n_ports; p++)
		zn_nf_port_mac(nf, p, port_mac[p].addr_bytes);
	snprintf(name, sizeof(name), "rt%u", zn_nf_instance_id(nf));
	rc = routes_load(&rt, routes_path, name, route_room, nf, err,
			 sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "router: %s\n", err);
		return rc;
	}
	hops = calloc(RTE_MAX(rt.cap_nh, 1u), sizeof(*hops));
	if (hops == NULL)
		return -ENOMEM;
	rc = hops_update(0);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "route.add", cmd_route_add);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "route.del", cmd_route_del);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "route.lookup", cmd_route_lookup);
	if (rc < 0)
		return rc;
	fprintf(stderr, "router: %u IPv4 and %u IPv6 routes, %u next hops, "
		"loaded in %.2f s\n", rt.n_v4, rt.n_v6, rt.n_nh,
		(double)(rte_get_tsc_cycles() - t0) / (double)rte_get_tsc_hz());
	return 0;
}

static void
router_fini(struct zn_nf *nf)
{
	router_tick(nf, 0);
	/* Not while the manager stops: its memory goes with it. */
	if (!zn_nf_manager_stopping(nf))
		routes_free(&rt);
	free(hops);
}

static int
parse_nh(char *s)
{
	struct nh_conf *c = &nh_conf[n_nh_conf];
	char *eq = strchr(s, '='), *at;
	uint64_t v;

	if (n_nh_conf == MAX_NH_CONF) {
		fprintf(stderr, "router: at most %u --next-hop\n",
			MAX_NH_CONF);
		return -EINVAL;
	}
	if (eq == NULL)
		goto bad;
	*eq = '\0';
	at = strchr(eq + 1, '@');
	if (at != NULL) {
		*at = '\0';
		if (rte_ether_unformat_addr(at + 1, &c->mac) < 0)
			goto bad;
		c->has_mac = true;
	}
	if (routes_parse_dec(s, UINT32_MAX, &v) < 0)
		goto bad;
	c->id = (uint32_t)v;
	if (routes_parse_dec(eq + 1, RTE_MAX_ETHPORTS - 1, &v) < 0)
		goto bad;
	c->port = (uint16_t)v;
	n_nh_conf++;
	return 0;
bad:
	fprintf(stderr, "router: --next-hop wants ID=PORT[@MAC] (decimal ID "
		"and port 0..%d)\n", RTE_MAX_ETHPORTS - 1);
	return -EINVAL;
}

static void
router_usage(FILE *o)
{
	fprintf(o,
		"  -r, --routes FILE         routes, \"PREFIX/LEN NEXT-HOP\" "
		"per line (IPv4/IPv6)\n"
		"  -n, --next-hop ID=PORT[@MAC]  next hop ID leaves by PORT "
		"to MAC (repeatable)\n"
		"  -d, --default-port P      port of next hops that are "
		"neither configured\n"
		"                            nor a port number (default: "
		"drop, no_port)\n"
		"      --route-room N        room for N routes added live, "
		"per IP version\n"
		"                            (default 4096)\n");
}

static int
router_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "routes", required_argument, NULL, 'r' },
		{ "next-hop", required_argument, NULL, 'n' },
		{ "default-port", required_argument, NULL, 'd' },
		{ "route-room", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "r:n:d:", lo, NULL)) != -1) {
		switch (c) {
		case 'r': routes_path = optarg; break;
		case 'n':
			if (parse_nh(optarg) < 0)
				return -EINVAL;
			break;
		case 'd':
			if (routes_parse_dec(optarg, RTE_MAX_ETHPORTS - 1,
					     &v) < 0) {
				fprintf(stderr, "router: --default-port must "
					"be 0..%d, not '%s'\n",
					RTE_MAX_ETHPORTS - 1, optarg);
				return -EINVAL;
			}
			default_port = (int)v;
			break;
		case 'R':
			if (routes_parse_dec(optarg, 1u << 26, &v) < 0) {
				fprintf(stderr, "router: --route-room must be "
					"0..%u, not '%s'\n", 1u << 26, optarg);
				return -EINVAL;
			}
			route_room = (uint32_t)v;
			break;
		default:
			return -EINVAL; /* getopt said why */
		}
	}
	if (optind < argc) {
		fprintf(stderr, "router: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (routes_path == NULL) {
		fprintf(stderr, "router: --routes FILE is required\n");
		return -EINVAL;
	}
	return 0;
}

static const struct zn_nf_ops router_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "router",
	.parse_args = router_parse,
	.usage = router_usage,
	.init = router_init,
	.burst = router_burst,
	.tick = router_tick,
	.fini = router_fini,
};

ZN_NF_REGISTER(router_ops)
