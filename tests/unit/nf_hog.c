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
 * replayed.
 * --mode fork: at its first tick, forks; the child, a process the manager
 * did not register, asks for a flow rule in the NF's name (its slot, its
 * registration) and exits; then the NF asks for one itself. Counters:
 * child_rc, own_rc (the negated results: 0 when installed), done (1 once
 * both are in).
 * --mode loop --to S [--new]: sends every packet it gets to service S as
 * if none had been anywhere yet (chain position START, hop count 0,
 * TO_SERVICE S; with --new also marked as a packet it made): the loop
 * guard's count is what it rewrites. Counter: looped.
 * --mode alloc [--free N]: at its first tick, allocates buffers of its
 * pool (rte_pktmbuf_alloc_bulk, 32 at a time) until refused, keeps them,
 * then frees N of them (default 0) and allocates again until refused.
 * Counters: allocated (buffers it holds), refusals. */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <zeronf/zeronf.h>

#define KEPT 128

static bool keep, done, replay, forks, loop, mark_new, allocs;
static int c_rules, c_refused, c_replayed, c_child, c_own, c_done, c_looped;
static int c_alloc, c_refusals;
static unsigned int n_free;
static struct rte_mbuf **hoard;
static unsigned int n_hoard;
static uint16_t loop_to;
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
		else if (strcmp(argv[i], "--free") == 0 && i + 1 < argc &&
			 atoi(argv[i + 1]) >= 0)
			n_free = (unsigned int)atoi(argv[++i]);
		else if (strcmp(argv[i], "--new") == 0)
			mark_new = true;
		else if (strcmp(argv[i], "--to") == 0 && i + 1 < argc &&
			 atoi(argv[i + 1]) > 0 && atoi(argv[i + 1]) < 65536)
			loop_to = (uint16_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--mode") != 0 || i + 1 >= argc)
			return -EINVAL;
		else if (strcmp(argv[++i], "replay") == 0)
			replay = true;
		else if (strcmp(argv[i], "fork") == 0)
			forks = true;
		else if (strcmp(argv[i], "loop") == 0)
			loop = true;
		else if (strcmp(argv[i], "alloc") == 0)
			allocs = true;
		else if (strcmp(argv[i], "rules") != 0)
			return -EINVAL;
	}
	return loop && loop_to == 0 ? -EINVAL : 0;
}

static int
hog_init(struct zn_nf *nf)
{
	if (allocs) {
		c_alloc = zn_nf_counter_register(nf, "allocated");
		c_refusals = zn_nf_counter_register(nf, "refusals");
		hoard = calloc(1u << 24, sizeof(*hoard));
		return hoard == NULL ? -ENOMEM : c_alloc < 0 ? c_alloc :
		       c_refusals < 0 ? c_refusals : 0;
	}
	if (loop) {
		done = true;
		c_looped = zn_nf_counter_register(nf, "looped");
		return c_looped < 0 ? c_looped : 0;
	}
	if (forks) {
		c_child = zn_nf_counter_register(nf, "child_rc");
		c_own = zn_nf_counter_register(nf, "own_rc");
		c_done = zn_nf_counter_register(nf, "done");
		return c_child < 0 ? c_child : c_own < 0 ? c_own :
		       c_done < 0 ? c_done : 0;
	}
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
	if (loop) {
		for (uint16_t i = 0; i < n; i++) {
			struct zn_pkt_meta *meta = zn_pkt_meta(pkts[i]);

			zn_pkt_to_service(pkts[i], loop_to);
			meta->chain_pos = ZN_CHAIN_POS_START;
			meta->hops = 0;
			if (mark_new)
				meta->flags |= ZN_PKT_F_NEW;
		}
		zn_nf_counter_add(nf, c_looped, n);
		return;
	}
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

/* Flow @p i of this process: 10.x.y.z -> 192.168.<pid>.1, UDP 1024 -> 53 */
static void
flow_of(uint32_t i, struct zn_flow_key *key)
{
	memset(key, 0, sizeof(*key));
	key->ip_version = 4;
	key->proto = 17;
	key->src[0] = 10;
	memcpy(key->src + 1, &i, 3);
	key->dst[0] = 192, key->dst[1] = 168, key->dst[3] = 1;
	key->dst[2] = (uint8_t)getpid(); /* not another hog's flows */
	key->src_port = 1024;
	key->dst_port = 53;
}

static void
hog_fork(struct zn_nf *nf)
{
	const struct zn_step drop = { .type = ZN_STEP_DROP };
	struct zn_flow_key key;
	int status = 0, rc;
	pid_t child = fork();

	if (child == 0) {
		flow_of(1, &key);
		rc = zn_nf_flow_steer(nf, &key, &drop, 1, 0);
		_exit(rc < 0 ? -rc : 0);
	}
	if (child < 0 || waitpid(child, &status, 0) < 0 ||
	    !WIFEXITED(status))
		return;
	zn_nf_counter_add(nf, c_child, (uint64_t)WEXITSTATUS(status));
	flow_of(2, &key);
	rc = zn_nf_flow_steer(nf, &key, &drop, 1, 0);
	zn_nf_counter_add(nf, c_own, (uint64_t)(rc < 0 ? -rc : 0));
	zn_nf_counter_add(nf, c_done, 1);
}

static void
hog_rules(struct zn_nf *nf)
{
	const struct zn_step drop = { .type = ZN_STEP_DROP };
	unsigned int flags = ZN_STEER_F_BOTH | (keep ? ZN_STEER_F_KEEP : 0);

	for (uint32_t i = 0;; i++) {
		struct zn_flow_key key;
		int rc;

		flow_of(i, &key);
		rc = zn_nf_flow_steer(nf, &key, &drop, 1, flags);
		if (rc < 0) {
			zn_nf_counter_add(nf, c_refused, (uint64_t)-rc);
			return;
		}
		zn_nf_counter_add(nf, c_rules, 2);
	}
}

/* Allocate until refused: how many it got. */
static void
hog_take(struct zn_nf *nf)
{
	struct rte_mempool *mp = zn_nf_pktmbuf_pool(nf);

	while (n_hoard + 32 <= (1u << 24) &&
	       rte_pktmbuf_alloc_bulk(mp, hoard + n_hoard, 32) == 0)
		n_hoard += 32;
	/* the last few one by one: the quota need not be a multiple */
	while (n_hoard < (1u << 24) &&
	       (hoard[n_hoard] = rte_pktmbuf_alloc(mp)) != NULL)
		n_hoard++;
	zn_nf_counter_add(nf, c_refusals, 1);
}

static void
hog_alloc(struct zn_nf *nf)
{
	unsigned int k;

	hog_take(nf);
	k = RTE_MIN(n_free, n_hoard);
	rte_pktmbuf_free_bulk(hoard + n_hoard - k, k);
	n_hoard -= k;
	if (k != 0)
		hog_take(nf);
	zn_nf_counter_add(nf, c_alloc, n_hoard);
}

static void
hog_tick(struct zn_nf *nf, uint64_t now_ns)
{
	(void)now_ns;
	if (done)
		return;
	if (allocs) {
		done = true;
		hog_alloc(nf);
	} else if (forks) {
		done = true;
		hog_fork(nf);
	} else if (replay) {
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
