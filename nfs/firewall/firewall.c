/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * firewall: a stateful packet filter. Ordered rules in iptables' syntax
 * (fw_rules.c), compiled with rte_acl (fw_acl.c), matched with each
 * packet's connection state from connection tracking (fw_ct.c) that
 * follows the Linux kernel's conntrack, so that a rule set gives the
 * verdicts nftables gives (tests/pkt/test_firewall.py checks that on
 * third-party captures). Rules change live (rules.load) without touching
 * the connection table. See docs/nfs/firewall.md.
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_mbuf.h>

#include <zeronf/zeronf.h>

#include "fw_nf.h"
#include "fw_pkt.h"
#include "../common/opts.h"
#include "../common/tally.h"

enum {
	C_ACCEPTED, C_DROPPED_RULE, C_DROPPED_POLICY, C_NEW, C_ESTABLISHED,
	C_RELATED, C_INVALID, C_UNTRACKED, C_NOT_IP, C_BAD_IP, C_FRAGMENTS,
	C_CT_FULL, C_CONNECTIONS, C_MAX
};
static const char *const cnames[C_MAX] = {
	"accepted", "dropped_rule", "dropped_policy", "ct_new",
	"ct_established", "ct_related", "ct_invalid", "ct_untracked",
	"not_ip", "bad_ip", "fragments", "ct_full", "connections",
};

#define FRAME_MAX 16384

static const char *rules_path;
static uint32_t ct_capacity = 65536;
static uint32_t timeouts[FW_TO_MAX];  /* 0: the default */
static bool verify_csum = true;
static bool vlan = true;
static uint8_t non_ip_verdict = FW_ACCEPT;
static uint8_t frag_verdict = FW_DROP;

static struct tally tally;
static uint64_t *const cnt = tally.v;
static uint8_t frame[FRAME_MAX];

static void
count_state(uint8_t st)
{
	switch (st) {
	case FW_CT_NEW: cnt[C_NEW]++; break;
	case FW_CT_ESTABLISHED: cnt[C_ESTABLISHED]++; break;
	case FW_CT_RELATED: cnt[C_RELATED]++; break;
	case FW_CT_UNTRACKED: cnt[C_UNTRACKED]++; break;
	default: cnt[C_INVALID]++; break;
	}
}

/* The verdict of rule @p r (index + 1; 0: the policy), counted. */
static uint8_t
verdict_of(uint32_t r)
{
	if (r == 0 || r > fw.rules.n) {
		fw.policy_hits++;
		return fw.rules.policy;
	}
	fw.hits[r - 1]++;
	return fw.rules.r[r - 1].verdict;
}

static void
apply(struct rte_mbuf *m, uint8_t v, bool by_rule)
{
	if (v == FW_ACCEPT) {
		cnt[C_ACCEPTED]++;
		return; /* the action stays NEXT */
	}
	cnt[by_rule ? C_DROPPED_RULE : C_DROPPED_POLICY]++;
	zn_pkt_drop(m);
}

static void
fw_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	struct fw_pkt k[ZN_BURST];
	const struct fw_pkt *kp[ZN_BURST];
	uint8_t st[ZN_BURST];
	uint32_t r[ZN_BURST];
	uint16_t at[ZN_BURST];
	uint32_t nb = 0;
	uint64_t now = coarse_ns();

	(void)nf;
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
		uint32_t len = rte_pktmbuf_pkt_len(m);
		struct fw_ct_res res;
		int cls;

		if (m->nb_segs > 1) { /* in one piece, for checksums */
			if (len > FRAME_MAX) {
				cnt[C_BAD_IP]++;
				zn_pkt_drop(m);
				continue;
			}
			p = rte_pktmbuf_read(m, 0, len, frame);
		}
		cls = fw_pkt_parse(p, len, vlan, verify_csum, &k[nb]);
		if (cls == FW_NOT_IP) {
			cnt[C_NOT_IP]++;
			if (non_ip_verdict == FW_DROP)
				zn_pkt_drop(m);
			continue;
		}
		if (cls != FW_IP) {
			cnt[C_BAD_IP]++;
			zn_pkt_drop(m);
			continue;
		}
		if (k[nb].frag) {
			cnt[C_FRAGMENTS]++;
			if (frag_verdict == FW_DROP)
				zn_pkt_drop(m);
			continue;
		}
		fw_ct_in(fw.ct, &k[nb], now, &res);
		count_state(res.state);
		if (res.pending) {
			/* a new connection: decided now, so that the next
			 * packets of the burst find it if it passes */
			const struct fw_pkt *one = &k[nb];
			uint32_t rule;
			uint8_t v;

			fw_acl_match(fw.acl, &one, &res.state, 1, &rule);
			v = verdict_of(rule);
			if (v == FW_ACCEPT &&
			    fw_ct_confirm(fw.ct, &res, now) < 0) {
				cnt[C_CT_FULL]++;
				zn_pkt_drop(m);
				continue;
			}
			apply(m, v, rule != 0);
			continue;
		}
		kp[nb] = &k[nb];
		st[nb] = res.state;
		at[nb++] = i;
	}
	if (nb == 0)
		return;
	fw_acl_match(fw.acl, kp, st, nb, r);
	for (uint32_t j = 0; j < nb; j++)
		apply(pkts[at[j]], verdict_of(r[j]), r[j] != 0);
}

static void
fw_tick(struct zn_nf *nf, uint64_t now)
{
	struct fw_ct_stats s;

	(void)now;
	/* a tenth of the table a second at most */
	fw_ct_gc(fw.ct, coarse_ns(), ct_capacity / 100 + 1);
	fw_ct_get_stats(fw.ct, &s);
	cnt[C_CONNECTIONS] = s.in_use; /* a gauge */
	tally_publish(&tally, nf);
}

static int
fw_init(struct zn_nf *nf)
{
	char err[512], nm[32];
	char *text = NULL;
	size_t len = 0;
	int rc;

	rc = tally_register(&tally, nf, cnames, C_MAX);
	if (rc < 0)
		return rc;
	snprintf(fw.name_base, sizeof(fw.name_base), "fw%u",
		 zn_nf_instance_id(nf));
	snprintf(nm, sizeof(nm), "fwct%u", zn_nf_instance_id(nf));
	rc = fw_ct_create(nm, ct_capacity, nf, &fw.ct);
	if (rc < 0) {
		fprintf(stderr, "firewall: a connection table of %u: %s\n",
			ct_capacity, strerror(-rc));
		return rc;
	}
	for (unsigned int i = 0; i < FW_TO_MAX; i++)
		if (timeouts[i] != 0)
			fw_ct_set_timeout(fw.ct, i, timeouts[i]);
	rc = fw_read_file(rules_path, &text, &len, err, sizeof(err));
	if (rc == 0) {
		rc = fw_install(nf, text, len, err, sizeof(err));
		free(text);
	}
	if (rc < 0) {
		fprintf(stderr, "firewall: %s%s\n",
			strncmp(err, "line", 4) == 0 ? rules_path : "",
			strncmp(err, "line", 4) == 0 ? ": " : "");
		fprintf(stderr, "firewall: %s\n", err);
		return rc;
	}
	rc = fw_cmds_register(nf);
	if (rc < 0)
		return rc;
	fprintf(stderr, "firewall: %u rules, policy %s, %u connections at "
		"most\n", fw.rules.n, fw_verdict_name(fw.rules.policy),
		ct_capacity);
	return 0;
}

static void
fw_fini(struct zn_nf *nf)
{
	fw_tick(nf, 0);
	/* The DPDK objects not while the manager stops: its memory goes
	 * with it. Our own memory always. */
	if (!zn_nf_manager_stopping(nf)) {
		fw_acl_free(fw.acl);
		fw_ct_free(fw.ct);
	} else {
		fw_acl_abandon(fw.acl);
		fw_ct_abandon(fw.ct);
	}
	fw.acl = NULL;
	fw.ct = NULL;
	fw_rules_free(&fw.rules);
	free(fw.hits);
	fw.hits = NULL;
}

static int
parse_verdict(const char *opt, const char *s, uint8_t *v)
{
	if (strcmp(s, "ACCEPT") == 0)
		*v = FW_ACCEPT;
	else if (strcmp(s, "DROP") == 0)
		*v = FW_DROP;
	else {
		fprintf(stderr, "firewall: %s wants ACCEPT or DROP, not '%s'\n",
			opt, s);
		return -EINVAL;
	}
	return 0;
}

static int
parse_timeout(char *s)
{
	char *eq = strchr(s, '=');
	uint64_t v;

	if (eq != NULL) {
		*eq = '\0';
		for (unsigned int i = 0; i < FW_TO_MAX; i++)
			if (strcmp(s, fw_ct_timeout_names[i]) == 0 &&
			    opt_dec(eq + 1, 10000000, &v) == 0 && v > 0) {
				timeouts[i] = (uint32_t)v;
				return 0;
			}
		*eq = '=';
	}
	fprintf(stderr, "firewall: --ct-timeout wants NAME=SECONDS (1.."
		"10000000), NAME one of");
	for (unsigned int i = 0; i < FW_TO_MAX; i++)
		fprintf(stderr, " %s", fw_ct_timeout_names[i]);
	fprintf(stderr, "; not '%s'\n", s);
	return -EINVAL;
}

static void
fw_usage(FILE *o)
{
	fprintf(o,
		"  -r, --rules FILE          rules, iptables' syntax, one a "
		"line (docs/nfs/firewall.md)\n"
		"      --ct-capacity N       connections tracked at most "
		"(default 65536)\n"
		"      --ct-timeout NAME=S   a timeout (tcp_established, udp, "
		"icmp, ...; repeatable)\n"
		"      --checksum MODE       verify (default: as the kernel's "
		"conntrack) or ignore\n"
		"      --non-ip VERDICT      ACCEPT (default) or DROP frames "
		"that are not IP\n"
		"      --fragments VERDICT   DROP (default) or ACCEPT IP "
		"fragments (not reassembled)\n"
		"      --no-vlan             do not look through VLAN tags\n");
}

static int
fw_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "rules", required_argument, NULL, 'r' },
		{ "ct-capacity", required_argument, NULL, 'c' },
		{ "ct-timeout", required_argument, NULL, 't' },
		{ "checksum", required_argument, NULL, 'k' },
		{ "non-ip", required_argument, NULL, 'n' },
		{ "fragments", required_argument, NULL, 'f' },
		{ "no-vlan", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	uint64_t v;
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "r:", lo, NULL)) != -1) {
		switch (c) {
		case 'r': rules_path = optarg; break;
		case 'c':
			if (opt_dec(optarg, 1u << 26, &v) < 0 || v == 0) {
				fprintf(stderr, "firewall: --ct-capacity must "
					"be 1..%u, not '%s'\n", 1u << 26,
					optarg);
				return -EINVAL;
			}
			ct_capacity = (uint32_t)v;
			break;
		case 't':
			if (parse_timeout(optarg) < 0)
				return -EINVAL;
			break;
		case 'k':
			if (strcmp(optarg, "verify") != 0 &&
			    strcmp(optarg, "ignore") != 0) {
				fprintf(stderr, "firewall: --checksum wants "
					"verify or ignore, not '%s'\n", optarg);
				return -EINVAL;
			}
			verify_csum = optarg[0] == 'v';
			break;
		case 'n':
			if (parse_verdict("--non-ip", optarg,
					  &non_ip_verdict) < 0)
				return -EINVAL;
			break;
		case 'f':
			if (parse_verdict("--fragments", optarg,
					  &frag_verdict) < 0)
				return -EINVAL;
			break;
		case 'V': vlan = false; break;
		default:
			return -EINVAL; /* getopt said why */
		}
	}
	if (optind < argc) {
		fprintf(stderr, "firewall: unexpected argument '%s'\n",
			argv[optind]);
		return -EINVAL;
	}
	if (rules_path == NULL) {
		fprintf(stderr, "firewall: --rules FILE is required\n");
		return -EINVAL;
	}
	return 0;
}

static const struct zn_nf_ops fw_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "firewall",
	.parse_args = fw_parse,
	.usage = fw_usage,
	.init = fw_init,
	.burst = fw_burst,
	.tick = fw_tick,
	.fini = fw_fini,
};

ZN_NF_REGISTER(fw_ops)
