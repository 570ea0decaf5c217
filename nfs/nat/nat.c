/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * nat: IPv4 network address translation (nat.h, docs/nfs/nat.md).
 * Stateful: source NAT of inside prefixes to public addresses (a new
 * connection keeps its source port where that makes no clash, else gets
 * another of the same class, as Linux's masquerade does), static
 * destination NAT (port forwarding), sessions in both directions, ICMP
 * errors about a session translated inside and out. Stateless: a prefix
 * mapped to another and ports mapped, on sources and destinations alike
 * (tcprewrite's -N and -r, its outputs the ground truth). A bump in the
 * wire: addresses and ports change, the frame goes where the chain says.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_hash_crc.h>
#include <rte_mbuf.h>

#include <zeronf/zeronf.h>

#include "nat_nf.h"
#include "../common/opts.h"
#include "../common/tally.h"

enum { C_OUT, C_IN, C_ICMP_ERRORS, C_UNTRANSLATED, C_NO_SESSION,
       C_NO_PORT, C_TABLE_FULL, C_FRAGMENTS, C_BAD, C_SESSIONS,
       C_SESSIONS_MADE, C_MAX };
static const char *const cnames[C_MAX] = {
	"translated_out", "translated_in", "icmp_errors", "untranslated",
	"no_session", "no_port", "table_full", "fragments", "bad",
	"sessions", "sessions_made",
};

static struct tally tally;
static uint64_t *const cnt = tally.v;
static uint32_t capacity = 65536;
static uint32_t timeouts[NAT_TO_MAX];

/* The stateless rewrites: prefixes and ports, sources and destinations
 * alike. @return whether the tuple changed. */
static bool
stateless(struct nat_tuple *to)
{
	bool changed = false;

	for (unsigned int i = 0; i < nat.n_netmap; i++) {
		const struct nat_netmap *r = &nat.netmap[i];

		if ((to->src & r->mask) == r->from) {
			to->src = r->to | (to->src & ~r->mask);
			changed = true;
		}
		if ((to->dst & r->mask) == r->from) {
			to->dst = r->to | (to->dst & ~r->mask);
			changed = true;
		}
	}
	if (to->proto != 6 && to->proto != 17)
		return changed;
	for (unsigned int i = 0; i < nat.n_portmap; i++) {
		const struct nat_portmap *r = &nat.portmap[i];

		if (to->sport >= r->lo && to->sport <= r->hi) {
			to->sport = r->to;
			changed = true;
		}
		if (to->dport >= r->lo && to->dport <= r->hi) {
			to->dport = r->to;
			changed = true;
		}
	}
	return changed;
}

static bool
is_public(uint32_t a)
{
	for (unsigned int i = 0; i < nat.n_snat; i++)
		if (nat.snat[i].addr == a)
			return true;
	for (unsigned int i = 0; i < nat.n_dnat; i++)
		if (nat.dnat[i].addr == a)
			return true;
	return false;
}

/* A source port (ICMP identifier) on @p r's address for @p orig that
 * clashes with no session: the original where it can be, else one of
 * the same class from a point the tuple hashes to. @return false: all
 * taken. */
static bool
pick_port(const struct nat_snat *r, const struct nat_tuple *orig,
	  struct nat_tuple *x, uint64_t now)
{
	uint32_t lo, hi, n, start;
	uint16_t want = orig->sport;

	if (r->range) {
		lo = r->lo;
		hi = r->hi;
	} else if (orig->proto == 1) {
		lo = 0;
		hi = 65535;
	} else if (want < 512) {
		lo = 1;
		hi = 511;
	} else if (want < 1024) {
		lo = 600;
		hi = 1023;
	} else {
		lo = 1024;
		hi = 65535;
	}
	if (want >= lo && want <= hi) {
		struct nat_tuple rr;

		x->sport = want;
		if (orig->proto == 1)
			x->dport = want;
		rr = nat_reply(x);
		if (!nat_reply_used(&nat.t, &rr, now))
			return true;
	}
	n = hi - lo + 1;
	start = rte_hash_crc(orig, sizeof(*orig), 0x5eed) % n;
	for (uint32_t i = 0; i < n; i++) {
		struct nat_tuple rr;

		x->sport = (uint16_t)(lo + (start + i) % n);
		if (orig->proto == 1)
			x->dport = x->sport;
		rr = nat_reply(x);
		if (!nat_reply_used(&nat.t, &rr, now))
			return true;
	}
	return false;
}

/* A new connection, tuple @p t (ports read: @p ports): the session it
 * opens, or -1 with the packet's fate counted (pass or drop in
 * @p drop). */
static int
open_session(const struct nat_tuple *t, bool ports, uint64_t now, bool *drop)
{
	struct nat_tuple x = *t;
	bool dnat = false;
	int i;

	*drop = false;
	for (unsigned int k = 0; k < nat.n_dnat; k++) {
		const struct nat_dnat *r = &nat.dnat[k];

		if (t->dst != r->addr || (r->proto && r->proto != t->proto) ||
		    (r->port && (!ports || t->dport != r->port)))
			continue;
		x.dst = r->to;
		if (r->to_port && ports)
			x.dport = r->to_port;
		dnat = true;
		break;
	}
	if (!dnat) {
		const struct nat_snat *r = NULL;

		for (unsigned int k = 0; k < nat.n_snat && r == NULL; k++)
			if ((t->src & nat.snat[k].mask) == nat.snat[k].net)
				r = &nat.snat[k];
		if (r == NULL) {
			/* the public addresses take replies and forwarded
			 * ports only */
			*drop = is_public(t->dst);
			cnt[*drop ? C_NO_SESSION : C_UNTRANSLATED]++;
			return -1;
		}
		x.src = r->addr;
		if (ports && !pick_port(r, t, &x, now)) {
			cnt[C_NO_PORT]++;
			*drop = true;
			return -1;
		}
		if (!ports) { /* by address only: one inside host a peer */
			struct nat_tuple rr = nat_reply(&x);

			if (nat_reply_used(&nat.t, &rr, now)) {
				cnt[C_NO_PORT]++;
				*drop = true;
				return -1;
			}
		}
	}
	i = nat_add(&nat.t, t, &x, dnat, now);
	if (i < 0) {
		cnt[C_TABLE_FULL]++;
		*drop = true;
	}
	return i;
}

/* An ICMP error: translated if it is about a session's packet. */
static bool
icmp_error(struct nat_pkt *k, uint64_t now)
{
	struct nat_tuple rq, outer, inner;
	const struct nat_sess *s;
	unsigned int d;
	uint32_t i;

	if (!k->in_ok || (rq = nat_reply(&k->in),
			  !nat_find(&nat.t, &rq, now, &i, &d))) {
		/* about no session: to a public address, dropped */
		if (is_public(k->t.dst))
			return false;
		cnt[C_UNTRANSLATED]++;
		return true;
	}
	s = &nat.t.s[i];
	/* The error goes as a packet of direction d, about one of the
	 * other: that one back as it was before it was translated. Its own
	 * addresses change where they are the session's (a router on the
	 * way that sent it keeps its own). */
	outer = k->t;
	if (d == 1) {
		if (outer.src == s->xlat.dst)
			outer.src = s->orig.dst;
		if (outer.dst == s->xlat.src)
			outer.dst = s->orig.src;
		inner = s->orig;
	} else {
		if (outer.src == s->orig.src)
			outer.src = s->xlat.src;
		if (outer.dst == s->orig.dst)
			outer.dst = s->xlat.dst;
		inner = nat_reply(&s->xlat);
	}
	nat_pkt_rewrite_error(k, &outer, &inner);
	nat.errors_translated++;
	cnt[C_ICMP_ERRORS]++;
	return true;
}

static void
nat_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = coarse_ns();
	bool stateful = nat.n_snat + nat.n_dnat > 0;

	(void)nf;
	for (uint16_t j = 0; j < n; j++) {
		struct rte_mbuf *m = pkts[j];
		struct nat_tuple to;
		struct nat_pkt k;
		unsigned int d;
		uint32_t i;
		bool drop, s_new;
		int cls;

		if (m->nb_segs > 1) { /* headers and ICMP quotes in one */
			cnt[C_UNTRANSLATED]++;
			continue;
		}
		cls = nat_pkt_read(rte_pktmbuf_mtod(m, uint8_t *),
				   rte_pktmbuf_data_len(m), &k);
		if (cls == NAT_NOT_IPV4) {
			cnt[C_UNTRANSLATED]++;
			continue;
		}
		if (cls != NAT_IP) {
			cnt[cls == NAT_FRAGMENT ? C_FRAGMENTS : C_BAD]++;
			zn_pkt_drop(m);
			continue;
		}
		to = k.t;
		if (stateless(&to)) {
			nat_pkt_rewrite(&k, &to);
			cnt[C_OUT]++;
		}
		if (!stateful)
			continue;
		if ((k.t.proto == 6 || k.t.proto == 17) && !k.ports) {
			cnt[C_BAD]++; /* ports cut off */
			zn_pkt_drop(m);
			continue;
		}
		if (k.icmp_error) {
			if (!icmp_error(&k, now)) {
				cnt[C_NO_SESSION]++;
				zn_pkt_drop(m);
			}
			continue;
		}
		s_new = false;
		if (!nat_find(&nat.t, &k.t, now, &i, &d)) {
			int s = open_session(&k.t, k.ports, now, &drop);

			if (s < 0) {
				if (drop)
					zn_pkt_drop(m);
				continue;
			}
			i = (uint32_t)s;
			d = 0;
			s_new = true;
		}
		if (s_new)
			memcpy(nat.t.s[i].mac, rte_pktmbuf_mtod_offset(
				       m, uint8_t *, 6), 6);
		else if (d == 1 && nat.reply_mac && !nat.t.s[i].dnat)
			/* back to the inside host the session came from */
			memcpy(rte_pktmbuf_mtod(m, uint8_t *),
			       nat.t.s[i].mac, 6);
		to = d == 0 ? nat.t.s[i].xlat : nat_reply(&nat.t.s[i].orig);
		nat_pkt_rewrite(&k, &to);
		nat_touch(&nat.t, i, d, k.tcp_flags, now);
		if (d == 0) {
			nat.translated_out++;
			cnt[C_OUT]++;
		} else {
			nat.translated_in++;
			cnt[C_IN]++;
		}
	}
}

static void
nat_tick(struct zn_nf *nf, uint64_t now)
{
	(void)now;
	nat_gc(&nat.t, coarse_ns(), nat.t.cap / 100 + 1);
	cnt[C_SESSIONS] = nat.t.in_use; /* a gauge */
	cnt[C_SESSIONS_MADE] = nat.t.made;
	tally_publish(&tally, nf);
}

static int
nat_init(struct zn_nf *nf)
{
	char nm[32];
	int rc = tally_register(&tally, nf, cnames, C_MAX);

	if (rc < 0)
		return rc;
	snprintf(nm, sizeof(nm), "nat%u", zn_nf_instance_id(nf));
	rc = nat_table_create(&nat.t, nm, capacity, nf);
	if (rc < 0) {
		fprintf(stderr, "nat: a table of %u sessions: %s\n", capacity,
			strerror(-rc));
		return rc;
	}
	for (unsigned int i = 0; i < NAT_TO_MAX; i++)
		if (timeouts[i] != 0)
			nat.t.to_ns[i] = timeouts[i] * 1000000000ull;
	rc = nat_cmds_register(nf);
	if (rc < 0)
		return rc;
	fprintf(stderr, "nat: %u snat, %u dnat, %u netmap, %u portmap rules;"
		" %u sessions at most\n", nat.n_snat, nat.n_dnat, nat.n_netmap,
		nat.n_portmap, capacity);
	return 0;
}

static void
nat_fini(struct zn_nf *nf)
{
	nat_tick(nf, 0);
	/* the hash not while the manager stops: its memory goes with it */
	if (!zn_nf_manager_stopping(nf))
		nat_table_free(&nat.t);
	else
		nat_table_abandon(&nat.t);
}

static void
nat_usage(FILE *o)
{
	fprintf(o,
		"  --snat PREFIX=ADDR[:LO-HI]   masquerade PREFIX's sources to "
		"ADDR (ports kept\n"
		"                               where free; LO-HI: from those "
		"only)\n"
		"  --dnat ADDR[:PORT]=TO[:PORT2][/tcp|udp]  forward to TO "
		"(PORT2)\n"
		"  --netmap PREFIX=PREFIX2      map addresses, both ways, "
		"stateless (tcprewrite -N)\n"
		"  --portmap LO[-HI]=PORT       map TCP/UDP ports, stateless "
		"(tcprewrite -r)\n"
		"  --reply-mac learned|keep     replies to the MAC their "
		"session's first packet\n"
		"                               came from (a gateway's), or as "
		"they come (default)\n"
		"  --sessions N                 sessions at most (default "
		"65536)\n"
		"  --timeout NAME=S             tcp_syn, tcp_established, "
		"tcp_fin, tcp_rst, udp,\n"
		"                               udp_stream, icmp, generic "
		"(seconds)\n");
}

static int
nat_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "snat", required_argument, NULL, 's' },
		{ "dnat", required_argument, NULL, 'd' },
		{ "netmap", required_argument, NULL, 'm' },
		{ "portmap", required_argument, NULL, 'p' },
		{ "sessions", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "reply-mac", required_argument, NULL, 'R' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const opt[] = {
		['s'] = "--snat wants PREFIX=ADDR[:LO-HI]",
		['d'] = "--dnat wants ADDR[:PORT]=TO[:PORT][/tcp|udp]",
		['m'] = "--netmap wants PREFIX=PREFIX of one length",
		['p'] = "--portmap wants LO[-HI]=PORT",
	};
	uint64_t v;
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's': case 'd': case 'm': case 'p':
			if (nat_conf_rule(c, optarg) < 0) {
				fprintf(stderr, "nat: %s (at most %d), not "
					"'%s'\n", opt[c], NAT_MAX_RULES,
					optarg);
				return -EINVAL;
			}
			break;
		case 'R':
			if (strcmp(optarg, "learned") != 0 &&
			    strcmp(optarg, "keep") != 0) {
				fprintf(stderr, "nat: --reply-mac wants learned "
					"or keep, not '%s'\n", optarg);
				return -EINVAL;
			}
			nat.reply_mac = optarg[0] == 'l';
			break;
		case 'n':
			if (opt_dec(optarg, 1u << 24, &v) < 0 || v == 0) {
				fprintf(stderr, "nat: --sessions must be "
					"1..%u, not '%s'\n", 1u << 24, optarg);
				return -EINVAL;
			}
			capacity = (uint32_t)v;
			break;
		case 't': {
			char *eq = strchr(optarg, '=');
			unsigned int i;

			for (i = 0; eq != NULL && i < NAT_TO_MAX; i++)
				if ((size_t)(eq - optarg) ==
					    strlen(nat_timeout_names[i]) &&
				    strncmp(optarg, nat_timeout_names[i],
					    (size_t)(eq - optarg)) == 0)
					break;
			if (eq == NULL || i == NAT_TO_MAX ||
			    opt_dec(eq + 1, 10000000, &v) < 0 || v == 0) {
				fprintf(stderr, "nat: --timeout wants NAME=S "
					"(see --help), not '%s'\n", optarg);
				return -EINVAL;
			}
			timeouts[i] = (uint32_t)v;
			break;
		}
		default:
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "nat: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (nat.n_snat + nat.n_dnat + nat.n_netmap + nat.n_portmap == 0) {
		fprintf(stderr, "nat: nothing to translate: give --snat, "
			"--dnat, --netmap or --portmap\n");
		return -EINVAL;
	}
	return 0;
}

static const struct zn_nf_ops nat_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "nat",
	.parse_args = nat_parse,
	.usage = nat_usage,
	.init = nat_init,
	.burst = nat_burst,
	.tick = nat_tick,
	.fini = nat_fini,
};

ZN_NF_REGISTER(nat_ops)
