/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * A shorter TSC calibration for an NF of a trust group (nf_pvt.h
 * zn_nf_short_calibration). Such an NF runs a primary EAL of its own
 * (nf.c: no manager's configuration to take the TSC frequency from), and
 * where the CPU does not report the frequency (CPUID leaf 0x15, the
 * platform MSR: this VM's does not) DPDK 22.11 measures it over one
 * 100 ms nanosleep (lib/eal/linux/eal_timer.c get_tsc_freq): two thirds
 * of the NF's start (docs/benchmarks.md, nf_start). DPDK takes no
 * frequency from outside, so libzeronf, which an NF links first, defines
 * nanosleep: while asked to (around that rte_eal_init only), a sleep of
 * exactly 100 ms is made 10 ms. DPDK measures the TSC against
 * CLOCK_MONOTONIC_RAW over whatever the sleep took and rounds to 10 MHz:
 * 10 ms resolve that (the clocks' reads jitter by microseconds). Every
 * other sleep, and every sleep at any other time, is the C library's.
 * Not our own code where DPDK has it: DPDK has no way to say it.
 */

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include "nf_pvt.h"

static bool shorten;

void
zn_nf_short_calibration(bool on)
{
	__atomic_store_n(&shorten, on, __ATOMIC_RELEASE);
}

typedef int (*nanosleep_fn)(const struct timespec *, struct timespec *);

ZN_API int
nanosleep(const struct timespec *req, struct timespec *rem)
{
	static const struct timespec ten_ms = { .tv_nsec = 10000000 };
	static nanosleep_fn next;
	nanosleep_fn fn = __atomic_load_n(&next, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&shorten, __ATOMIC_ACQUIRE) && req != NULL &&
	    req->tv_sec == 0 && req->tv_nsec == 100000000)
		req = &ten_ms;
	if (fn == NULL) {
		fn = (nanosleep_fn)(uintptr_t)dlsym(RTLD_NEXT, "nanosleep");
		__atomic_store_n(&next, fn, __ATOMIC_RELEASE);
	}
	if (fn != NULL)
		return fn(req, rem);
	/* the same as the C library's, should it not be found */
	errno = (int)syscall(SYS_clock_nanosleep, CLOCK_REALTIME, 0, req, rem);
	return errno == 0 ? 0 : -1;
}
