/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/system/test_handoff.py: an NF whose packet thread
 * stops inside its routing-table read, the one place an NF holds routing
 * changes back. At its Nth packet it goes online as an RCU reader of the
 * routing snapshot (the NFs' rte_rcu_qsbr variable in the shared zone, its
 * instance id being its reader id: what libzeronf's nf_tx.c does around
 * every hand-off) and then, as --mode says, kills itself (SIGKILL: died
 * reading) or stops itself (SIGSTOP: alive, never leaves). With --armed-by
 * usr1 its packets count only once it got SIGUSR1 (a test that waits for
 * its join to be done first). Otherwise it forwards like zeronf-forward. */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_memzone.h>
#include <rte_rcu_qsbr.h>

#include <zeronf/zeronf.h>

#include "../../lib/shm/zn_shm.h"

static unsigned long after = 1000, seen;
static int sig = SIGKILL;
static volatile sig_atomic_t armed = 1;

static void
on_usr1(int s)
{
	(void)s;
	armed = 1;
}

static int
hold_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "after", required_argument, NULL, 'a' },
		{ "mode", required_argument, NULL, 'm' },
		{ "armed-by", required_argument, NULL, 'u' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "a:m:u:", lo, NULL)) != -1) {
		if (c == 'u' && strcmp(optarg, "usr1") == 0) {
			armed = 0;
			if (signal(SIGUSR1, on_usr1) == SIG_ERR)
				return -errno;
		} else if (c == 'a')
			after = strtoul(optarg, NULL, 10);
		else if (c == 'm' && strcmp(optarg, "die") == 0)
			sig = SIGKILL;
		else if (c == 'm' && strcmp(optarg, "stop") == 0)
			sig = SIGSTOP;
		else
			return -EINVAL;
	}
	return 0;
}

static void
hold_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	const struct rte_memzone *mz;
	struct zn_shm *shm;

	(void)pkts;
	if (!armed)
		return;
	seen += n;
	if (seen < after)
		return;
	mz = rte_memzone_lookup(ZN_SHM_NAME);
	if (mz == NULL)
		abort();
	shm = mz->addr;
	rte_rcu_qsbr_thread_online(shm->rt.qsbr, zn_nf_instance_id(nf));
	kill(getpid(), sig);
	/* SIGSTOP: on SIGCONT (if the manager did not kill it first) the
	 * thread goes on as if it had left the read. */
	rte_rcu_qsbr_thread_offline(shm->rt.qsbr, zn_nf_instance_id(nf));
	after = ~0UL;
}

static const struct zn_nf_ops hold_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "rcu-hold",
	.parse_args = hold_parse,
	.burst = hold_burst,
};

ZN_NF_REGISTER(hold_ops)
