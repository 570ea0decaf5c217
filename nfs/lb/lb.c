/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * lb: an L4 load balancer (docs/nfs/lb.md). Virtual IP:port services,
 * each with a pool of backends chosen by Maglev consistent hashing
 * (maglev.c); a connection table keeps every connection on its backend
 * (the table changing, or the backend marked down: only new connections
 * follow); NAT mode (the destination rewritten to the backend, replies'
 * source back to the VIP, checksums updated incrementally: the NAT NF's
 * rewriter and session table) or DSR (only the destination MAC changes;
 * backends answer from the VIP on their own).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_ether.h>
#include <rte_mbuf.h>

#include <zeronf/zeronf.h>

#include "lb_nf.h"
#include "../common/opts.h"
#include "../common/tally.h"

enum { C_TO_BACKEND, C_FROM_BACKEND, C_NEW_CONNS, C_NO_BACKEND,
       C_CONN_FULL, C_OTHER, C_BAD, C_CONNS, C_MAX };
static const char *const cnames[C_MAX] = {
	"to_backend", "from_backend", "new_conns", "no_backend", "conn_full",
	"other", "bad", "conns",
};

static struct tally tally;
static uint64_t *const cnt = tally.v;
static uint32_t conn_capacity = 262144;
static uint32_t tcp_timeout = 300, udp_timeout = 30;

static struct lb_vip *
vip_of(const struct nat_tuple *t)
{
	for (unsigned int i = 0; i < lb.n_vip; i++)
		if (lb.vip[i].addr == t->dst && lb.vip[i].port == t->dport &&
		    lb.vip[i].proto == t->proto)
			return &lb.vip[i];
	return NULL;
}

/* The backend of VIP @p v at @p addr:@p port. */
static struct lb_backend *
backend_at(struct lb_vip *v, uint32_t addr, uint16_t port)
{
	for (unsigned int i = 0; i < v->n_be; i++)
		if (v->be[i].addr == addr && v->be[i].port == port)
			return &v->be[i];
	return NULL;
}

/* A client's packet @p k to VIP @p v: to its connection's backend, or a
 * new connection's. @return false: dropped (counted). */
static bool
to_backend(struct rte_mbuf *m, struct nat_pkt *k, struct lb_vip *v,
	   uint64_t now)
{
	struct lb_backend *b;
	struct nat_tuple x;
	unsigned int d;
	uint32_t i;

	if (nat_find(&lb.t, &k->t, now, &i, &d) && d == 0) {
		x = lb.t.s[i].xlat;
		b = backend_at(v, x.dst, x.dport);
	} else {
		uint16_t bi = maglev_lookup(&v->mg, maglev_flow_hash(
			k->t.src, k->t.dst, k->t.sport, k->t.dport,
			k->t.proto));
		int s;

		if (bi == MAGLEV_NONE) {
			cnt[C_NO_BACKEND]++;
			return false;
		}
		b = &v->be[bi];
		x = k->t;
		x.dst = b->addr;
		x.dport = b->port;
		s = nat_add(&lb.t, &k->t, &x, true, now);
		if (s < 0) {
			cnt[C_CONN_FULL]++;
			return false;
		}
		i = (uint32_t)s;
		b->conns++;
		cnt[C_NEW_CONNS]++;
	}
	nat_touch(&lb.t, i, 0, k->tcp_flags, now);
	if (b != NULL)
		b->packets++;
	if (b != NULL && b->has_mac) { /* to the backend's door */
		struct rte_ether_hdr *eth = rte_pktmbuf_mtod(
			m, struct rte_ether_hdr *);

		memcpy(eth->dst_addr.addr_bytes, b->mac, 6);
	}
	if (!lb.dsr)
		nat_pkt_rewrite(k, &x);
	cnt[C_TO_BACKEND]++;
	return true;
}

static void
lb_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = coarse_ns();

	(void)nf;
	for (uint16_t j = 0; j < n; j++) {
		struct rte_mbuf *m = pkts[j];
		struct lb_vip *v;
		struct nat_pkt k;
		unsigned int d;
		uint32_t i;
		int cls;

		if (m->nb_segs > 1) {
			cnt[C_OTHER]++;
			continue;
		}
		cls = nat_pkt_read(rte_pktmbuf_mtod(m, uint8_t *),
				   rte_pktmbuf_data_len(m), &k);
		if (cls != NAT_IP || !k.ports || k.t.proto == 1) {
			cnt[cls == NAT_BAD ? C_BAD : C_OTHER]++;
			if (cls == NAT_BAD)
				zn_pkt_drop(m);
			continue;
		}
		v = vip_of(&k.t);
		if (v != NULL) {
			if (!to_backend(m, &k, v, now))
				zn_pkt_drop(m);
			continue;
		}
		/* NAT mode: a backend's reply leaves from the VIP */
		if (!lb.dsr && nat_find(&lb.t, &k.t, now, &i, &d) && d == 1) {
			struct nat_tuple to = nat_reply(&lb.t.s[i].orig);

			nat_pkt_rewrite(&k, &to);
			nat_touch(&lb.t, i, 1, k.tcp_flags, now);
			cnt[C_FROM_BACKEND]++;
			continue;
		}
		cnt[C_OTHER]++;
	}
}

static void
lb_tick(struct zn_nf *nf, uint64_t now)
{
	(void)now;
	nat_gc(&lb.t, coarse_ns(), lb.t.cap / 100 + 1);
	cnt[C_CONNS] = lb.t.in_use; /* a gauge */
	tally_publish(&tally, nf);
}

static int
lb_init(struct zn_nf *nf)
{
	char nm[32];
	int rc = tally_register(&tally, nf, cnames, C_MAX);

	if (rc < 0)
		return rc;
	snprintf(nm, sizeof(nm), "lb%u", zn_nf_instance_id(nf));
	rc = nat_table_create(&lb.t, nm, conn_capacity, nf);
	if (rc < 0) {
		fprintf(stderr, "lb: a table of %u connections: %s\n",
			conn_capacity, strerror(-rc));
		return rc;
	}
	lb.t.to_ns[NAT_TO_TCP_SYN] = lb.t.to_ns[NAT_TO_TCP_EST] =
		tcp_timeout * 1000000000ull;
	lb.t.to_ns[NAT_TO_UDP] = lb.t.to_ns[NAT_TO_UDP_STREAM] =
		udp_timeout * 1000000000ull;
	for (unsigned int i = 0; i < lb.n_vip; i++) {
		rc = maglev_init(&lb.vip[i].mg, lb.table_size);
		if (rc < 0)
			return rc;
		lb_populate(&lb.vip[i]);
	}
	rc = lb_cmds_register(nf);
	if (rc < 0)
		return rc;
	fprintf(stderr, "lb: %u VIPs, %s mode, Maglev tables of %u\n",
		lb.n_vip, lb.dsr ? "DSR" : "NAT", lb.table_size);
	return 0;
}

static void
lb_fini(struct zn_nf *nf)
{
	lb_tick(nf, 0);
	/* the hash not while the manager stops: its memory goes with it */
	if (!zn_nf_manager_stopping(nf))
		nat_table_free(&lb.t);
	else
		nat_table_abandon(&lb.t);
	for (unsigned int i = 0; i < lb.n_vip; i++)
		maglev_free(&lb.vip[i].mg);
}

/* Options. */

static int
addr(const char *s, uint32_t *a)
{
	struct in_addr in;

	if (inet_pton(AF_INET, s, &in) != 1)
		return -1;
	*a = ntohl(in.s_addr);
	return 0;
}

/* --vip NAME=ADDR:PORT[/tcp|udp] */
static int
parse_vip(char *s)
{
	struct lb_vip *v = &lb.vip[lb.n_vip];
	char *eq = strchr(s, '='), *colon, *slash;
	uint64_t port;

	if (lb.n_vip == LB_MAX_VIPS || eq == NULL || eq == s ||
	    (size_t)(eq - s) >= LB_NAME_LEN)
		return -1;
	*eq++ = '\0';
	slash = strchr(eq, '/');
	v->proto = 6;
	if (slash != NULL) {
		*slash++ = '\0';
		v->proto = strcmp(slash, "tcp") == 0 ? 6 :
			   strcmp(slash, "udp") == 0 ? 17 : 0;
	}
	colon = strchr(eq, ':');
	if (v->proto == 0 || colon == NULL)
		return -1;
	*colon++ = '\0';
	if (addr(eq, &v->addr) < 0 || opt_dec(colon, 65535, &port) < 0 ||
	    port == 0)
		return -1;
	for (unsigned int i = 0; i < lb.n_vip; i++)
		if (strcmp(lb.vip[i].name, s) == 0)
			return -1;
	snprintf(v->name, sizeof(v->name), "%.31s", s);
	v->port = (uint16_t)port;
	lb.n_vip++;
	return 0;
}

/* --backend VIP=NAME@ADDR[:PORT][,weight=W][,mac=MAC][,down] */
static int
parse_backend(char *s)
{
	char *eq = strchr(s, '='), *at, *opt, *colon, *save = NULL;
	struct lb_vip *v = NULL;
	struct lb_backend *b;
	uint64_t x;

	if (eq == NULL)
		return -1;
	*eq++ = '\0';
	for (unsigned int i = 0; i < lb.n_vip; i++)
		if (strcmp(lb.vip[i].name, s) == 0)
			v = &lb.vip[i];
	at = strchr(eq, '@');
	if (v == NULL || v->n_be == LB_MAX_BACKENDS || at == NULL ||
	    at == eq || (size_t)(at - eq) >= LB_NAME_LEN)
		return -1;
	*at++ = '\0';
	b = &v->be[v->n_be];
	memset(b, 0, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%.31s", eq);
	b->weight = 1;
	b->up = true;
	opt = strtok_r(at, ",", &save);
	colon = opt ? strchr(opt, ':') : NULL;
	if (colon != NULL)
		*colon++ = '\0';
	if (opt == NULL || addr(opt, &b->addr) < 0 ||
	    (colon && (opt_dec(colon, 65535, &x) < 0 || x == 0)))
		return -1;
	b->port = colon ? (uint16_t)x : v->port;
	while ((opt = strtok_r(NULL, ",", &save)) != NULL) {
		struct rte_ether_addr mac;

		if (strncmp(opt, "weight=", 7) == 0 &&
		    opt_dec(opt + 7, 100, &x) == 0 && x > 0) {
			b->weight = (uint32_t)x;
		} else if (strncmp(opt, "mac=", 4) == 0 &&
			   rte_ether_unformat_addr(opt + 4, &mac) == 0) {
			memcpy(b->mac, mac.addr_bytes, 6);
			b->has_mac = true;
		} else if (strcmp(opt, "down") == 0) {
			b->up = false;
		} else {
			return -1;
		}
	}
	for (unsigned int i = 0; i < v->n_be; i++)
		if (strcmp(v->be[i].name, b->name) == 0 ||
		    (v->be[i].addr == b->addr && v->be[i].port == b->port))
			return -1;
	snprintf(b->key, sizeof(b->key), "%u.%u.%u.%u:%u", b->addr >> 24,
		 b->addr >> 16 & 255, b->addr >> 8 & 255, b->addr & 255,
		 b->port);
	v->n_be++;
	return 0;
}

static void
lb_usage(FILE *o)
{
	fprintf(o,
		"  --vip NAME=ADDR:PORT[/tcp|udp]     a service (repeatable)\n"
		"  --backend VIP=NAME@ADDR[:PORT][,weight=W][,mac=MAC][,down]\n"
		"                                     one of its backends "
		"(repeatable)\n"
		"  --mode nat|dsr                     rewrite the destination "
		"(default) or\n"
		"                                     its MAC only\n"
		"  --table-size M                     Maglev table, a prime "
		"(default 65537)\n"
		"  --conns N                          connections at most "
		"(default 262144)\n"
		"  --tcp-timeout S, --udp-timeout S   idle connections "
		"forgotten (300, 30)\n");
}

static int
lb_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "vip", required_argument, NULL, 'v' },
		{ "backend", required_argument, NULL, 'b' },
		{ "mode", required_argument, NULL, 'm' },
		{ "table-size", required_argument, NULL, 'M' },
		{ "conns", required_argument, NULL, 'c' },
		{ "tcp-timeout", required_argument, NULL, 'T' },
		{ "udp-timeout", required_argument, NULL, 'U' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t x;
	int c;

	(void)nf;
	lb.table_size = MAGLEV_M_DEFAULT;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		char buf[160];

		if (optarg != NULL && strlen(optarg) >= sizeof(buf))
			return -EINVAL;
		switch (c) {
		case 'v':
			strcpy(buf, optarg);
			if (parse_vip(buf) < 0) {
				fprintf(stderr, "lb: --vip wants a new "
					"NAME=ADDR:PORT[/tcp|udp] (at most "
					"%d), not '%s'\n", LB_MAX_VIPS, optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			strcpy(buf, optarg);
			if (parse_backend(buf) < 0) {
				fprintf(stderr, "lb: --backend wants VIP=NAME@"
					"ADDR[:PORT][,weight=1..100][,mac=MAC]"
					"[,down], of a --vip given before, a "
					"name and address:port of its own; "
					"not '%s'\n", optarg);
				return -EINVAL;
			}
			break;
		case 'm':
			if (strcmp(optarg, "nat") != 0 &&
			    strcmp(optarg, "dsr") != 0) {
				fprintf(stderr, "lb: --mode wants nat or dsr, "
					"not '%s'\n", optarg);
				return -EINVAL;
			}
			lb.dsr = optarg[0] == 'd';
			break;
		case 'M':
			if (opt_dec(optarg, 1u << 24, &x) < 0 ||
			    !maglev_is_prime((uint32_t)x) || x < 7) {
				fprintf(stderr, "lb: --table-size wants a prime"
					" of 7..%u, not '%s'\n", 1u << 24,
					optarg);
				return -EINVAL;
			}
			lb.table_size = (uint32_t)x;
			break;
		case 'c': case 'T': case 'U':
			if (opt_dec(optarg, 1u << 24, &x) < 0 || x == 0) {
				const char *o = c == 'c' ? "--conns" :
						c == 'T' ? "--tcp-timeout" :
							   "--udp-timeout";

				fprintf(stderr, "lb: %s wants 1..%u, not "
					"'%s'\n", o, 1u << 24, optarg);
				return -EINVAL;
			}
			if (c == 'c')
				conn_capacity = (uint32_t)x;
			else if (c == 'T')
				tcp_timeout = (uint32_t)x;
			else
				udp_timeout = (uint32_t)x;
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "lb: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (lb.n_vip == 0) {
		fprintf(stderr, "lb: no --vip\n");
		return -EINVAL;
	}
	for (unsigned int i = 0; i < lb.n_vip; i++)
		if (lb.vip[i].n_be == 0) {
			fprintf(stderr, "lb: VIP %s has no --backend\n",
				lb.vip[i].name);
			return -EINVAL;
		}
	for (unsigned int i = 0; lb.dsr && i < lb.n_vip; i++)
		for (unsigned int j = 0; j < lb.vip[i].n_be; j++)
			if (!lb.vip[i].be[j].has_mac) {
				fprintf(stderr, "lb: --mode dsr: backend %s "
					"has no mac=\n", lb.vip[i].be[j].name);
				return -EINVAL;
			}
	return 0;
}

static const struct zn_nf_ops lb_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "lb",
	.parse_args = lb_parse,
	.usage = lb_usage,
	.init = lb_init,
	.burst = lb_burst,
	.tick = lb_tick,
	.fini = lb_fini,
};

ZN_NF_REGISTER(lb_ops)
