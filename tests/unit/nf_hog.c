/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/security/: an NF that takes more than its share of
 * what NFs share. --mode rules [--keep]: at its first tick, installs an
 * exact flow rule (zn_nf_flow_steer, both directions) for one new flow
 * after another until the manager refuses one, then idles; with --keep
 * the rules are to outlive it (ZN_STEER_F_KEEP). Counters: rules (rules
 * installed, a direction each), refused (the errno of the refusal).
 * --mode replay [--last N]: passes every packet on and keeps the last N
 * (at most and by default 128); at the first tick after they stopped
 * coming, sends those again as packets it made (zn_nf_send), once:
 * buffers it no longer holds, sent on to another NF, or freed. Counter:
 * replayed. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zeronf/zeronf.h>

#define KEPT 128

static bool keep, done, replay;
static int c_rules, c_refused, c_replayed;
static struct rte_mbuf *kept[KEPT];
static unsigned int n_kept, seen_at_tick, last = KEPT;

static int
hog_parse(struct zn_nf *nf, int argc, char **argv)
{
	(void)nf;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--keep") == 0)
			keep = true;
		else if (strcmp(argv[i], "--last") == 0 && i + 1 < argc &&
			 atoi(argv[i + 1]) > 0 && atoi(argv[i + 1]) <= KEPT)
			last = (unsigned int)atoi(argv[++i]);
		else if (strcmp(argv[i], "--mode") != 0 || i + 1 >= argc)
			return -EINVAL;
		else if (strcmp(argv[++i], "replay") == 0)
			replay = true;
		else if (strcmp(argv[i], "rules") != 0)
			return -EINVAL;
	}
	return 0;
}

static int
hog_init(struct zn_nf *nf)
{
	if (replay) {
		c_replayed = zn_nf_counter_register(nf, "replayed");
		return c_replayed < 0 ? c_replayed : 0;
	}
	c_rules = zn_nf_counter_register(nf, "rules");
	c_refused = zn_nf_counter_register(nf, "refused");
	return c_rules < 0 ? c_rules : c_refused < 0 ? c_refused : 0;
}

static void
hog_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	(void)nf;
	if (!replay)
		return;
	for (uint16_t i = 0; i < n; i++)
		kept[n_kept++ % last] = pkts[i]; /* passed on: NEXT */
}

static void
hog_replay(struct zn_nf *nf)
{
	if (n_kept == 0 || n_kept != seen_at_tick) {
		seen_at_tick = n_kept; /* still coming */
		return;
	}
	done = true;
	n_kept = RTE_MIN(n_kept, last);
	for (unsigned int i = 0; i < n_kept; i++)
		zn_pkt_meta_init(kept[i]);
	zn_nf_counter_add(nf, c_replayed, n_kept);
	(void)zn_nf_send(nf, kept, (uint16_t)n_kept);
}

static void
hog_rules(struct zn_nf *nf)
{
	const struct zn_step drop = { .type = ZN_STEP_DROP };
	unsigned int flags = ZN_STEER_F_BOTH | (keep ? ZN_STEER_F_KEEP : 0);

	for (uint32_t i = 0;; i++) {
		struct zn_flow_key key;
		int rc;

		memset(&key, 0, sizeof(key));
		key.ip_version = 4;
		key.proto = 17;
		key.src[0] = 10;
		memcpy(key.src + 1, &i, 3); /* 10.x.y.z: a flow each */
		key.dst[0] = 192, key.dst[1] = 168, key.dst[3] = 1;
		key.dst[2] = (uint8_t)getpid(); /* not another hog's flows */
		key.src_port = 1024;
		key.dst_port = 53;
		rc = zn_nf_flow_steer(nf, &key, &drop, 1, flags);
		if (rc < 0) {
			zn_nf_counter_add(nf, c_refused, (uint64_t)-rc);
			return;
		}
		zn_nf_counter_add(nf, c_rules, 2);
	}
}

static void
hog_tick(struct zn_nf *nf, uint64_t now_ns)
{
	(void)now_ns;
	if (done)
		return;
	if (replay) {
		hog_replay(nf);
	} else {
		done = true;
		hog_rules(nf);
	}
}

static const struct zn_nf_ops hog_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "hog",
	.parse_args = hog_parse,
	.init = hog_init,
	.burst = hog_burst,
	.tick = hog_tick,
};

ZN_NF_REGISTER(hog_ops)
