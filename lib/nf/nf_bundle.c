/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Bundles (include/zeronf/bundle.h): NFs that run in turn in one thread.
 *
 * Each member is a whole NF (nf.c zn_nf_open_in: its own slot, ledger,
 * links, commands); what the process has once is shared: the EAL and its
 * lcore (the first member's slot's, so the manager flushes that lcore's
 * pool cache when the slot is reclaimed), the pool account and its cache
 * state (nf_acct.c: the process allocates from one cache, charged to the
 * first member), a trust group's mapping (nf_group.c zn_nf_group_share).
 *
 * A pass gives every member one turn (nf_run.c zn_nf_turn) in the order
 * given, which is the chain's: a burst the first hands to the second on
 * their link is taken by the second in the same pass. The link stays:
 * it is the ledger's record of who holds a buffer (lib/common/zn_ledger.h),
 * so a kill -9 anywhere in a pass loses nothing the manager cannot account
 * for, exactly as between processes; in one thread it costs an enqueue
 * and a dequeue of pointers in this core's cache. A member whose hand-off
 * waits for room (in a pass, or in its init: a generator's first window)
 * lets the others take turns meanwhile (assist(), which
 * nf_tx.c calls through nf->assist): the member it waits for runs nowhere
 * else.
 */

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include <zeronf/bundle.h>

#include "nf_pvt.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_util.h"

#define SLEEP_US 100000 /* as nf_run.c: also the periodic checks' period */
#define POLL_SPIN_US 50 /* a generator's turn nearer: no sleep */

_Static_assert(ZN_BUNDLE_MAX <= ZN_DB_WAIT_MAX,
	       "a bundle sleeps on all its members' doorbells at once");

struct zn_bundle {
	unsigned int n;
	struct zn_nf *nf[ZN_BUNDLE_MAX];
	struct zn_nf_loop lp[ZN_BUNDLE_MAX];
	bool done[ZN_BUNDLE_MAX];  /* stopped and drained: no more turns */
	bool stopping;             /* a stop of one is a stop of all */
	unsigned int idle;         /* empty passes in a row */
	int rc;                    /* the first error of a turn */
};

static struct zn_bundle *volatile signal_bundle;

static void
stop_all(struct zn_bundle *b)
{
	b->stopping = true;
	for (unsigned int i = 0; i < b->n; i++)
		zn_nf_stop(b->nf[i]);
}

static void
on_signal(int sig)
{
	struct zn_bundle *b = signal_bundle;

	if (b == NULL) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	for (unsigned int i = 0; i < b->n; i++)
		zn_nf_stop(b->nf[i]);
}

/* Member @p i's turn (its generator's first). @return packets it took. */
static unsigned int
turn(struct zn_bundle *b, unsigned int i)
{
	struct zn_nf *nf = b->nf[i];
	unsigned int got = 0;
	int rc;

	zn_nf_self = nf;
	if (nf->ops.poll != NULL)
		b->lp[i].due = nf->ops.poll(nf, rte_rdtsc());
	rc = zn_nf_turn(nf, &b->lp[i], &got);
	if (rc != 0) {
		/* Stopped (1), or an error that ends the bundle: the
		 * manager is gone, or did not take a leave. */
		b->done[i] = true;
		if (rc < 0 && b->rc == 0)
			b->rc = rc;
		if (!b->stopping)
			stop_all(b);
	}
	return got;
}

/* nf->assist: while @p nf's hand-off waits for room (nf_tx.c), the turns
 * of the members that may be what it waits for: those after it (it hands
 * its packets down the order, the chain's) and the one it waits for, when
 * that is a member. Never one before it otherwise: that one may feed a
 * member below us on the stack (busy, waiting for us to return), and
 * would wait for it in turn, forever. @return 1 if one moved packets;
 * -EDEADLK if none did and what @p nf waits for is a member not run
 * here (below on the stack; or one before it the worker waits for on our
 * TX ring's behalf): that one runs only once this turn returns, which
 * the turn then does with its hand-off pending (nf_tx.c tx_wait); 0
 * otherwise. */
static int
assist(struct zn_nf *nf)
{
	struct zn_bundle *b = nf->bundle;
	uint32_t wf = __atomic_load_n(&nf->s->hstats.blocked_on,
				      __ATOMIC_RELAXED);
	/* whom it waits for, through the worker too (in a pass only to
	 * know: running a member before us for the worker's sake there ran
	 * it nested inside us mid-hand-off, and a kill -9 leaked) */
	uint32_t via = wf != ZN_WAIT_TX_RING ? wf :
		       __atomic_load_n(&nf->s->mstats.blocked_on,
				       __ATOMIC_RELAXED);
	unsigned int moved = 0;
	bool below = false;

	/* In an init (before the passes: nothing of ours below it) the one
	 * the worker waits for runs too, as the one it waits for itself. */
	if (nf->bundle_idx == UINT_MAX)
		wf = via;
	for (unsigned int i = 0; i < b->n; i++) {
		const struct zn_nf *m = b->nf[i];
		bool skip = m == nf || m->busy || b->done[i] ||
			    (i < nf->bundle_idx && wf != m->slot + 1u);

		if (m != nf && via == m->slot + 1u && skip && !b->done[i])
			below = true;
		if (!skip)
			moved += turn(b, i);
	}
	zn_nf_self = nf;
	return moved != 0 ? 1 : below ? -EDEADLK : 0;
}

static bool
any_ready(void *arg)
{
	const struct zn_bundle *b = arg;

	for (unsigned int i = 0; i < b->n; i++)
		if (!b->done[i] && zn_nf_rx_ready(b->nf[i]))
			return true;
	return false;
}

/* A pass found no work: spin, yield, then sleep on every member's
 * doorbell at once until one is rung (a worker, another NF, the
 * manager), a generator's turn, or a port queue's next poll. */
static void
idle_wait(struct zn_bundle *b)
{
	struct zn_doorbell *db[ZN_BUNDLE_MAX];
	uint64_t us = SLEEP_US, now = rte_rdtsc();
	unsigned int k = 0;

	b->idle++;
	for (unsigned int i = 0; i < b->n; i++) {
		const struct zn_nf_loop *lp = &b->lp[i];

		if (b->done[i] || lp->due == 0)
			continue;
		if (lp->due <= now)
			return;
		us = RTE_MIN(us, (lp->due - now) / lp->tsc_us);
	}
	if (us < POLL_SPIN_US) {
		if (!zn_nf_yield(b->nf[0], NULL))
			rte_pause();
		return;
	}
	if (b->idle < ZN_IDLE_SPIN) {
		rte_pause();
		return;
	}
	if (b->idle < ZN_IDLE_YIELD && zn_nf_yield(b->nf[0], NULL))
		return;
	for (unsigned int i = 0; i < b->n; i++) {
		struct zn_nf *nf = b->nf[i];

		if (b->done[i])
			continue;
		/* a pending hand-off waits for room no one rings for */
		if (nf->tx_pending != 0)
			us = RTE_MIN(us, (uint64_t)ZN_TX_SLEEP_US);
		/* port RX queues ring no doorbell (nf_run.c idle_wait) */
		if (nf->prx_owned) {
			us = RTE_MIN(us, (uint64_t)nf->prx_sleep_us);
			nf->prx_sleep_us = RTE_MIN(nf->prx_sleep_us * 2,
						   (uint32_t)ZN_PRX_SLEEP_MAX_US);
		}
		db[k++] = &nf->s->db;
	}
	if (k == 0)
		return;
	if (!zn_db_wait_all(db, k, any_ready, b, us) && us >= SLEEP_US)
		for (unsigned int i = 0; i < b->n; i++)
			b->lp[i].next_check = 0; /* timed out: check now */
}

/* @p nf, open now, takes its turns in the passes from now on, and in
 * the waits of the members opened after it (their inits' too: nf.c). */
static void
join(struct zn_bundle *b, struct zn_nf *nf)
{
	nf->bundle = b;
	nf->bundle_idx = b->n;
	nf->assist = assist;
	zn_nf_loop_init(nf, &b->lp[b->n]);
	b->nf[b->n++] = nf;
}

static int
run(struct zn_bundle *b)
{
	for (;;) {
		unsigned int moved = 0, live = 0;

		for (unsigned int i = 0; i < b->n; i++) {
			if (b->done[i])
				continue;
			moved += turn(b, i);
			live += !b->done[i];
		}
		if (live == 0)
			return b->rc;
		if (moved != 0)
			b->idle = 0;
		else
			idle_wait(b);
	}
}

/* The exit status zn_nf_main would give for @p rc. */
static int
status(int rc)
{
	return rc == 0 || rc == -ECANCELED ? 0 : rc == -EINVAL ? 2 :
	       rc == -ENOTCONN ? 3 : 1;
}

static void
close_all(struct zn_bundle *b)
{
	/* the first last: its process-wide parts (the pool account, the
	 * group's mapping) are the others' too */
	while (b->n > 0) {
		b->n--;
		zn_nf_self = b->nf[b->n];
		zn_nf_close(b->nf[b->n]);
	}
}

int ZN_API
zn_bundle_main(const struct zn_bundle_nf *nfs, unsigned int n)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct zn_bundle *b;
	bool ports = false;
	int rc = 0;

	if (nfs == NULL || n == 0 || n > ZN_BUNDLE_MAX) {
		ZN_LOG(ERR, "a bundle has 1..%d NFs", ZN_BUNDLE_MAX);
		return 2;
	}
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return 1;
	/* No SA_RESTART: a sleeping bundle must wake up to stop. Until
	 * every member is open, a signal ends the process (the manager
	 * reclaims what it registered). */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (unsigned int i = 0; i < n && rc == 0; i++) {
		struct zn_nf *nf;

		rc = zn_nf_open_in(nfs[i].argc, nfs[i].argv, nfs[i].ops,
				   i == 0 ? NULL : b->nf[0], &nf);
		if (rc == 0)
			join(b, nf);
	}
	if (rc < 0) {
		close_all(b);
		free(b);
		return status(rc);
	}
	for (unsigned int i = 0; i < b->n; i++)
		ports |= b->nf[i]->n_prx != 0;
	/* A port's driver allocates from the process's one cache in any
	 * member's rx_burst: its contents known ours before the first. */
	if (ports)
		zn_nf_acct_allocating(b->nf[0]);
	ZN_LOG(INFO, "bundle of %u NFs in one thread, lcore %u", b->n,
	       rte_lcore_id());
	signal_bundle = b;
	rc = run(b);
	signal_bundle = NULL;
	if (rc == -ENOTCONN)
		ZN_LOG(ERR, "bundle: manager '%s' is gone, exiting",
		       b->nf[0]->instance);
	else if (rc < 0)
		ZN_LOG(ERR, "bundle stopped: %s", strerror(-rc));
	close_all(b);
	free(b);
	return status(rc);
}
