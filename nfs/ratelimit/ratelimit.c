/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * ratelimit: token-bucket policers in two levels (rl.h): a class's
 * aggregate, then each flow, source or destination inside it (a tenant,
 * then its flows). A packet over either rate is dropped and counted by
 * level. The SYN-flood filter (nfs/filter) is one class of it: SYNs at
 * N a second. Configuration in JSON (docs/nfs/ratelimit.md); rates
 * changed live (class.set). Time is the wall clock, or with --clock
 * capture the packets' RX timestamps (net_pcap: the capture's times), so
 * that a replayed capture is policed as it was recorded: the packet
 * test compares that with a reference bucket exactly.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#include <zeronf/zeronf.h>

#include "rl_nf.h"
#include "../common/bytes.h"
#include "../common/l2.h"
#include "../common/tally.h"

enum { C_PASSED, C_DROPPED_CLASS, C_DROPPED_PER, C_DROPPED_FULL,
       C_UNCLASSIFIED, C_KEYS, C_MAX };
static const char *const cnames[C_MAX] = {
	"passed", "dropped_class", "dropped_per", "dropped_full",
	"unclassified", "keys",
};


static const char *conf_path;
static struct tally tally;
static uint64_t *const cnt = tally.v;
static bool capture_clock;
static int ts_off = -1;
static uint64_t ts_flag;
static uint64_t last_ns; /* the clock's last reading */

/* What a packet is matched and keyed on. */
struct pkt_view {
	uint8_t family, proto, flags;
	int32_t vlan;
	uint8_t src[16], dst[16];
	uint16_t sport, dport;
	bool ports;
};

static uint64_t
wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void
view(const struct rte_mbuf *m, struct pkt_view *v)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	uint32_t len = rte_pktmbuf_data_len(m), l4 = 0, end = 0;
	struct l2 l;

	memset(v, 0, sizeof(*v));
	v->vlan = -1;
	if (l2_walk(p, len, &l) < 0)
		return;
	if (l.tags > 0)
		v->vlan = (int32_t)(rd16(p + 14) & 0xfff);
	if (l.ethertype == 0x0800 && len >= l.off + 20u &&
	    (p[l.off] >> 4) == 4) {
		uint32_t ihl = (p[l.off] & 0xfu) * 4;

		v->family = 4;
		v->proto = p[l.off + 9];
		memcpy(v->src, p + l.off + 12, 4);
		memcpy(v->dst, p + l.off + 16, 4);
		/* ports only in a first fragment */
		if ((rd16(p + l.off + 6) & 0x1fff) == 0 && ihl >= 20) {
			l4 = l.off + ihl;
			end = len;
		}
	} else if (l.ethertype == 0x86dd && len >= l.off + 40u) {
		v->family = 6;
		v->proto = p[l.off + 6];
		memcpy(v->src, p + l.off + 8, 16);
		memcpy(v->dst, p + l.off + 24, 16);
		l4 = l.off + 40; /* extension headers: no ports */
		end = len;
	}
	if (l4 != 0 && (v->proto == 6 || v->proto == 17 || v->proto == 132) &&
	    end >= l4 + 4) {
		v->sport = rd16(p + l4);
		v->dport = rd16(p + l4 + 2);
		v->ports = true;
		if (v->proto == 6 && end >= l4 + 14)
			v->flags = p[l4 + 13];
	}
}

static bool
pfx_match(const uint8_t *a, const uint8_t *p, uint8_t len)
{
	unsigned int whole = len / 8, rest = len % 8;

	if (memcmp(a, p, whole) != 0)
		return false;
	return rest == 0 ||
	       ((a[whole] ^ p[whole]) & (uint8_t)(0xff << (8 - rest))) == 0;
}

static bool
matches(const struct rl_match *r, const struct pkt_view *v)
{
	if (r->family != 0 && r->family != v->family)
		return false;
	if (r->has_proto && (v->family == 0 || r->proto != v->proto))
		return false;
	if (r->vlan >= 0 && r->vlan != v->vlan)
		return false;
	if (r->src_len && !pfx_match(v->src, r->src, r->src_len))
		return false;
	if (r->dst_len && !pfx_match(v->dst, r->dst, r->dst_len))
		return false;
	if ((r->dport_lo != 0 || r->dport_hi != 65535) &&
	    (!v->ports || v->dport < r->dport_lo || v->dport > r->dport_hi))
		return false;
	if (r->flags_mask && (!v->ports ||
			      (v->flags & r->flags_mask) != r->flags_cmp))
		return false;
	return true;
}

/* The bucket of @p v's flow, source or destination in class @p ci,
 * found or made (full); NULL: the table is full. */
static struct rl_bucket *
key_bucket(unsigned int ci, const struct rl_class *c,
	   const struct pkt_view *v, uint64_t now)
{
	struct rl_key k;
	void *data;
	int32_t pos;

	memset(&k, 0, sizeof(k));
	k.cls = (uint8_t)ci;
	k.family = v->family;
	if (c->per == RL_PER_FLOW || c->per == RL_PER_SRC)
		memcpy(k.src, v->src, 16);
	if (c->per == RL_PER_FLOW || c->per == RL_PER_DST)
		memcpy(k.dst, v->dst, 16);
	if (c->per == RL_PER_FLOW) {
		k.proto = v->proto;
		k.sport = v->sport;
		k.dport = v->dport;
	}
	if (rte_hash_lookup_data(rl.keys, &k, &data) >= 0) {
		struct rl_key_slot *s = &rl.slot[(uintptr_t)data];

		s->seen_ns = now;
		return &s->b;
	}
	if (rl.n_free == 0)
		return NULL;
	pos = (int32_t)rl.free_list[--rl.n_free];
	if (rte_hash_add_key_data(rl.keys, &k,
				  (void *)(uintptr_t)pos) < 0) {
		rl.free_list[rl.n_free++] = (uint32_t)pos;
		return NULL;
	}
	rl.slot[pos].key = k;
	rl.slot[pos].seen_ns = now;
	rl.slot[pos].used = true;
	rl_fill(&rl.slot[pos].b, &c->each, now);
	rl.in_use++;
	return &rl.slot[pos].b;
}

/* The time of packet @p m: its RX timestamp with --clock capture. */
static uint64_t
clock_of(const struct rte_mbuf *m, uint64_t wall)
{
	if (!capture_clock)
		return wall;
	if (ts_off >= 0 && (m->ol_flags & ts_flag)) {
		/* net_pcap: microseconds; never backwards */
		uint64_t t = *RTE_MBUF_DYNFIELD(m, ts_off, uint64_t *) * 1000;

		if (t > last_ns)
			last_ns = t;
	}
	return last_ns;
}

static void
rl_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t wall = capture_clock ? 0 : wall_ns();

	(void)nf;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		uint64_t now = clock_of(m, wall);
		struct rl_bucket *kb = NULL;
		struct rl_class *c = NULL;
		struct pkt_view v;
		unsigned int ci;
		uint64_t cost_c, cost_k;

		view(m, &v);
		for (ci = 0; ci < rl.conf.n; ci++)
			if (matches(&rl.conf.c[ci].match, &v)) {
				c = &rl.conf.c[ci];
				break;
			}
		if (c == NULL && rl.conf.has_default)
			c = &rl.conf.c[ci = rl.conf.n];
		if (c == NULL) {
			cnt[C_UNCLASSIFIED]++;
			cnt[C_PASSED]++;
			continue;
		}
		cost_c = c->agg.unit == RL_BITS ? 8ull * m->pkt_len : 1;
		cost_k = c->each.unit == RL_BITS ? 8ull * m->pkt_len : 1;
		if (c->per != RL_PER_NONE) {
			kb = key_bucket(ci, c, &v, now);
			if (kb == NULL) {
				c->dropped_full++;
				cnt[C_DROPPED_FULL]++;
				zn_pkt_drop(m);
				continue;
			}
			if (!rl_has(kb, &c->each, cost_k, now)) {
				c->dropped_per++;
				cnt[C_DROPPED_PER]++;
				zn_pkt_drop(m);
				continue;
			}
		}
		if (!rl_has(&c->bucket, &c->agg, cost_c, now)) {
			c->dropped_class++;
			cnt[C_DROPPED_CLASS]++;
			zn_pkt_drop(m);
			continue;
		}
		rl_take(&c->bucket, &c->agg, cost_c);
		if (kb != NULL)
			rl_take(kb, &c->each, cost_k);
		c->passed++;
		c->passed_bytes += m->pkt_len;
		cnt[C_PASSED]++;
	}
}

/* Forget keys whose bucket has been full again for a while: a new one
 * is the same. A slice of the table per call. */
static void
sweep(uint64_t now, uint32_t budget)
{
	for (uint32_t n = 0; n < budget && n < rl.cap; n++) {
		struct rl_key_slot *s = &rl.slot[rl.sweep_next];
		const struct rl_class *c;

		rl.sweep_next = (rl.sweep_next + 1) % rl.cap;
		if (!s->used)
			continue;
		c = &rl.conf.c[s->key.cls];
		if (now > s->seen_ns &&
		    now - s->seen_ns > rl_refill_ns(&c->each) + 1000000000ull) {
			rte_hash_del_key(rl.keys, &s->key);
			s->used = false;
			rl.free_list[rl.n_free++] =
				(uint32_t)(s - rl.slot);
			rl.in_use--;
		}
	}
}

static void
rl_tick(struct zn_nf *nf, uint64_t now)
{
	(void)now;
	sweep(capture_clock ? last_ns : wall_ns(), rl.cap / 50 + 1);
	cnt[C_KEYS] = rl.in_use; /* a gauge */
	tally_publish(&tally, nf);
}

static int
rl_init(struct zn_nf *nf)
{
	char err[512], nm[32];
	int rc, bit;

	rc = tally_register(&tally, nf, cnames, C_MAX);
	if (rc < 0)
		return rc;
	rc = rl_load(conf_path, &rl.conf, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ratelimit: %s: %s\n", conf_path, err);
		return rc;
	}
	snprintf(nm, sizeof(nm), "rlkeys%u", zn_nf_instance_id(nf));
	rc = rl_keys_create(nm, nf);
	if (rc < 0) {
		fprintf(stderr, "ratelimit: a table of %u keys: %s\n", rl.cap,
			strerror(-rc));
		return rc;
	}
	last_ns = capture_clock ? 0 : wall_ns();
	for (unsigned int i = 0; i <= rl.conf.n; i++)
		rl_fill(&rl.conf.c[i].bucket, &rl.conf.c[i].agg, last_ns);
	if (capture_clock) {
		ts_off = rte_mbuf_dynfield_lookup(
			RTE_MBUF_DYNFIELD_TIMESTAMP_NAME, NULL);
		bit = rte_mbuf_dynflag_lookup(
			RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);
		ts_flag = bit >= 0 ? 1ull << bit : 0;
		if (ts_off < 0 || bit < 0) {
			fprintf(stderr, "ratelimit: --clock capture: no RX "
				"timestamps (start the manager with "
				"--rx-timestamp)\n");
			return -EINVAL;
		}
	}
	rc = rl_cmds_register(nf);
	if (rc < 0)
		return rc;
	fprintf(stderr, "ratelimit: %u classes%s, %u keys at most\n",
		rl.conf.n, rl.conf.has_default ? " and a default" : "",
		rl.cap);
	return 0;
}

static void
rl_fini(struct zn_nf *nf)
{
	rl_tick(nf, 0);
	/* Not while the manager stops: its memory goes with it. */
	if (!zn_nf_manager_stopping(nf))
		rl_keys_free(nf);
	else
		rl_keys_abandon();
}

static void
rl_usage(FILE *o)
{
	fprintf(o,
		"  -c, --config FILE     classes, rates and bursts (JSON, "
		"docs/nfs/ratelimit.md)\n"
		"      --keys N          flows/sources/destinations tracked "
		"at most (default 65536)\n"
		"      --clock MODE      wall (default) or capture: the "
		"packets' RX timestamps\n"
		"                        (the manager's --rx-timestamp; "
		"net_pcap: capture time)\n");
}

static int
rl_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "keys", required_argument, NULL, 'k' },
		{ "clock", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c;

	(void)nf;
	rl.cap = 65536;
	while ((c = getopt_long(argc, argv, "c:", lo, NULL)) != -1) {
		switch (c) {
		case 'c': conf_path = optarg; break;
		case 'k':
			v = optarg[0] >= '0' && optarg[0] <= '9' ?
			    strtoul(optarg, &end, 10) : 0;
			if (v == 0 || *end != '\0' || v > (1u << 24)) {
				fprintf(stderr, "ratelimit: --keys must be "
					"1..%u, not '%s'\n", 1u << 24, optarg);
				return -EINVAL;
			}
			rl.cap = (uint32_t)v;
			break;
		case 't':
			if (strcmp(optarg, "wall") != 0 &&
			    strcmp(optarg, "capture") != 0) {
				fprintf(stderr, "ratelimit: --clock wants wall "
					"or capture, not '%s'\n", optarg);
				return -EINVAL;
			}
			capture_clock = optarg[0] == 'c';
			break;
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "ratelimit: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (conf_path == NULL) {
		fprintf(stderr, "ratelimit: --config FILE is required\n");
		return -EINVAL;
	}
	return 0;
}

static const struct zn_nf_ops rl_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "ratelimit",
	.parse_args = rl_parse,
	.usage = rl_usage,
	.init = rl_init,
	.burst = rl_burst,
	.tick = rl_tick,
	.fini = rl_fini,
};

ZN_NF_REGISTER(rl_ops)
