/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_YIELD_H
#define ZN_YIELD_H

/*
 * sched_yield() that stops yielding to a thread that keeps the core.
 *
 * The packet threads (NFs, the manager's workers) yield between empty
 * polls so that those sharing a core take turns: a cooperating thread
 * yields back within a burst's work, microseconds. A thread that never
 * yields (an NF spinning in its handler, another busy process) gets a
 * whole time slice from each yield while the yielder's ring fills:
 * measured, a forwarder and the manager's worker sharing one core with a
 * busy loop fell from 48 to 2.5 Mpps. Yields that lasted ZN_LONG_YIELD_US
 * each and add up to a quarter of a ZN_LONG_WINDOW_MS window show such a
 * thread: for ZN_YIELD_OFF_MS after, zn_yield() does not yield and the
 * caller waits on its doorbell instead; the wake-up, a sleeper's, takes
 * the core from the spinner at once (CFS favours the thread that slept),
 * and the spinner gets its fair share, not ours. The spinner still there
 * when yields come back doubles the next pause (up to ZN_YIELD_OFF_MAX_MS).
 * A long yield now and then is not enough: the manager's control thread,
 * a harness polling it, the kernel's own work make one (2-5 a second per
 * NF in the tenants bench); when one alone turned yields off, the NFs
 * slept and the worker woke them 8-11k times a second, a quarter of its
 * time in futex_wake (2 tenants: 16 against 18 Mpps).
 */

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_cycles.h>

#define ZN_LONG_YIELD_US 500
#define ZN_YIELD_OFF_MS 100
#define ZN_YIELD_OFF_MAX_MS 1600
#define ZN_LONG_WINDOW_MS 20

struct zn_yield {
	uint64_t off_until; /* tsc: no yield before then */
	uint64_t win_start; /* tsc: the window long yields are summed in */
	uint64_t win_long;  /* tsc spent in them in it */
	uint32_t off_ms;    /* the next pause, ms (set by a new window) */
	uint64_t n_long;    /* long yields seen (the caller publishes it) */
};

/** Note a yield of @p y's thread that began at tsc @p t0 and lasted
 *  @p d (@p hz: tsc per second): a long one counts towards a pause
 *  (y->off_until). zn_yield's decision, apart for the unit tests. */
static inline void
zn_yield_note(struct zn_yield *y, uint64_t t0, uint64_t d, uint64_t hz)
{
	uint64_t ms = hz / 1000, win = ms * ZN_LONG_WINDOW_MS;

	if (d <= hz / (1000000 / ZN_LONG_YIELD_US))
		return;
	y->n_long++;
	if (t0 - y->win_start > win) { /* a new window */
		if (y->off_until != 0 && t0 - y->off_until < win)
			/* long again just after a pause: the same spinner */
			y->off_ms = RTE_MIN(y->off_ms * 2,
					    (uint32_t)ZN_YIELD_OFF_MAX_MS);
		else if (y->off_until == 0 ||
			 t0 - y->off_until > ms * ZN_YIELD_OFF_MAX_MS)
			y->off_ms = ZN_YIELD_OFF_MS;
		y->win_start = t0;
		y->win_long = 0;
	}
	y->win_long += d;
	if (y->win_long * 4 > win) { /* a quarter of the window */
		y->off_until = t0 + d + ms * y->off_ms;
		y->win_start = 0;
	}
}

/** sched_yield(), unless yields of @p y's thread lately lasted time
 *  slices (a thread that keeps the core: above): then nothing, and false
 *  (wait on a doorbell instead). *@p took (if not NULL): the tsc the
 *  yield lasted. */
static inline bool
zn_yield(struct zn_yield *y, uint64_t *took)
{
	uint64_t t0 = rte_rdtsc(), d;

	if (__builtin_expect(t0 < y->off_until, 0))
		return false;
	sched_yield();
	d = rte_rdtsc() - t0;
	zn_yield_note(y, t0, d, rte_get_tsc_hz());
	if (took != NULL)
		*took = d;
	return true;
}

#endif /* ZN_YIELD_H */
