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
 * busy loop fell from 48 to 2.5 Mpps. A yield that lasted ZN_LONG_YIELD_US
 * shows such a thread: for ZN_YIELD_OFF_MS after it, zn_yield() does not
 * yield and the caller waits on its doorbell instead; the wake-up, a
 * sleeper's, takes the core from the spinner at once (CFS favours the
 * thread that slept), and the spinner gets its fair share, not ours.
 */

#include <sched.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_cycles.h>

#define ZN_LONG_YIELD_US 500
#define ZN_YIELD_OFF_MS 100

struct zn_yield {
	uint64_t off_until; /* tsc: no yield before then */
	uint64_t n_long;    /* long yields seen (the caller publishes it) */
};

/** sched_yield(), unless a yield of @p y's thread lately lasted
 *  ZN_LONG_YIELD_US: then nothing, and false (wait on a doorbell
 *  instead). *@p took (if not NULL): the tsc the yield lasted. */
static inline bool
zn_yield(struct zn_yield *y, uint64_t *took)
{
	uint64_t t0 = rte_rdtsc(), d;

	if (__builtin_expect(t0 < y->off_until, 0))
		return false;
	sched_yield();
	d = rte_rdtsc() - t0;
	if (__builtin_expect(d > rte_get_tsc_hz() / (1000000 /
						     ZN_LONG_YIELD_US), 0)) {
		y->off_until = t0 + d + rte_get_tsc_hz() / 1000 *
					ZN_YIELD_OFF_MS;
		y->n_long++;
	}
	if (took != NULL)
		*took = d;
	return true;
}

#endif /* ZN_YIELD_H */
