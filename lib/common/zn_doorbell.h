/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_DOORBELL_H
#define ZN_DOORBELL_H

/**
 * @file
 * Cross-process sleep and wake-up on a futex in shared memory.
 *
 * Protocol (no lost wake-up):
 *   sleeper:  s = seq; sleeping = 1; FENCE; if (work visible) abort;
 *             futex_wait(&seq, s, timeout); sleeping = 0
 *   producer: publish work (ring enqueue); FENCE;
 *             if (sleeping && CAS(sleeping, 1, 0)) { seq++; futex_wake }
 * The two full fences make it impossible for the sleeper to miss the work
 * and the producer to miss `sleeping` at once. If the producer bumps seq
 * after the sleeper read it, futex_wait returns at once (EAGAIN). The CAS
 * means one futex_wake syscall per sleep however many producers there are;
 * a producer that finds `sleeping` clear pays one fence and one load.
 *
 * The futex is not FUTEX_PRIVATE: sleeper and waker are in different
 * processes, mapping the same hugepage file.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <rte_atomic.h>

#include "../shm/zn_shm.h"

/**
 * The producer's half: true if the sleeper slept and this producer is
 * the one to wake it (seq bumped), which zn_db_ring does with a futex
 * and a VM's NF through its host helper (lib/nf/nf_guest.c).
 */
static inline bool
zn_db_ring_claim(struct zn_doorbell *db)
{
	uint32_t one = 1;

	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (__atomic_load_n(&db->sleeping, __ATOMIC_RELAXED) == 0)
		return false;
	if (!__atomic_compare_exchange_n(&db->sleeping, &one, 0, false,
					 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
		return false;
	__atomic_fetch_add(&db->seq, 1, __ATOMIC_RELEASE);
	return true;
}

static inline void
zn_db_ring(struct zn_doorbell *db)
{
	if (zn_db_ring_claim(db))
		syscall(SYS_futex, &db->seq, FUTEX_WAKE, 1, NULL, NULL, 0);
}

/**
 * Sleep on @p db for at most @p timeout_us microseconds unless
 * @p has_work(arg) already sees work after the sleeper announced itself.
 * @return true if woken by a producer (or work was found), false on
 *   timeout, or early: a producer's wake-up for an earlier sleep may land
 *   on this one (its seq bump was seen then). Callers check their work
 *   and loop either way; no wake-up is ever lost.
 */
/**
 * The sleeper's half of the protocol around a sleep of the caller's own
 * (zn_db_wait's futex; a VM's NF sleeps on its serial port instead:
 * lib/nf/nf_guest.c). _begin announces the sleeper and returns false,
 * announcement undone, if @p has_work(arg) already sees work; else the
 * caller sleeps unless seq moved from @p *seq, then calls _end, true if
 * a producer woke it.
 */
static inline bool
zn_db_sleep_begin(struct zn_doorbell *db, bool (*has_work)(void *),
		  void *arg, uint32_t *seq)
{
	*seq = __atomic_load_n(&db->seq, __ATOMIC_ACQUIRE);
	__atomic_store_n(&db->sleeping, 1, __ATOMIC_RELAXED);
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (has_work != NULL && has_work(arg)) {
		__atomic_store_n(&db->sleeping, 0, __ATOMIC_RELAXED);
		return false;
	}
	db->sleeps++;
	return true;
}

static inline bool
zn_db_sleep_end(struct zn_doorbell *db, uint32_t seq)
{
	bool woken;

	__atomic_store_n(&db->sleeping, 0, __ATOMIC_RELAXED);
	woken = __atomic_load_n(&db->seq, __ATOMIC_ACQUIRE) != seq;
	if (woken)
		db->wakeups++;
	return woken;
}

/**
 * Sleep on @p db for at most @p timeout_us microseconds unless
 * @p has_work(arg) already sees work after the sleeper announced itself.
 * @return true if woken by a producer (or work was found), false on
 *   timeout, or early: a producer's wake-up for an earlier sleep may land
 *   on this one (its seq bump was seen then). Callers check their work
 *   and loop either way; no wake-up is ever lost.
 */
static inline bool
zn_db_wait(struct zn_doorbell *db, bool (*has_work)(void *), void *arg,
	   uint64_t timeout_us)
{
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_us / 1000000),
		.tv_nsec = (long)(timeout_us % 1000000) * 1000,
	};
	uint32_t seq;

	if (!zn_db_sleep_begin(db, has_work, arg, &seq))
		return true;
	syscall(SYS_futex, &db->seq, FUTEX_WAIT, seq, &ts, NULL, 0);
	return zn_db_sleep_end(db, seq);
}

#define ZN_DB_WAIT_MAX (1 + ZN_MAX_GROUPS) /* futex_waitv takes 128 */

#ifndef FUTEX_32
#define FUTEX_32 2
#endif
#ifndef SYS_futex_waitv
#define SYS_futex_waitv 449
#endif

/**
 * Sleep on @p n doorbells at once (a worker: its own, and one in each
 * trust group's file that the group's NFs ring, since they map nothing
 * else of the manager's): zn_db_wait's protocol on each, one
 * futex_waitv (Linux 5.16). Sleeps and wake-ups are counted on db[0].
 * Where the kernel has no futex_waitv, sleeps on db[0] at most 200 us:
 * the others are then seen late, never missed.
 */
static inline bool
zn_db_wait_all(struct zn_doorbell *const *db, unsigned int n,
	       bool (*has_work)(void *), void *arg, uint64_t timeout_us)
{
	struct {
		uint64_t val, uaddr;
		uint32_t flags, reserved;
	} wv[ZN_DB_WAIT_MAX];
	static bool no_waitv;
	struct timespec ts;
	bool woken = false;

	if (n > ZN_DB_WAIT_MAX)
		n = ZN_DB_WAIT_MAX;
	if (n == 1 || no_waitv)
		return zn_db_wait(db[0], has_work, arg,
				  n == 1 ? timeout_us :
				  (timeout_us < 200 ? timeout_us : 200));
	for (unsigned int i = 0; i < n; i++) {
		wv[i].val = __atomic_load_n(&db[i]->seq, __ATOMIC_ACQUIRE);
		wv[i].uaddr = (uint64_t)(uintptr_t)&db[i]->seq;
		wv[i].flags = FUTEX_32; /* shared: other processes ring */
		wv[i].reserved = 0;
		__atomic_store_n(&db[i]->sleeping, 1, __ATOMIC_RELAXED);
	}
	rte_atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (has_work != NULL && has_work(arg)) {
		for (unsigned int i = 0; i < n; i++)
			__atomic_store_n(&db[i]->sleeping, 0, __ATOMIC_RELAXED);
		return true;
	}
	db[0]->sleeps++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(timeout_us / 1000000);
	ts.tv_nsec += (long)(timeout_us % 1000000) * 1000;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	if (syscall(SYS_futex_waitv, wv, n, 0, &ts, CLOCK_MONOTONIC) < 0 &&
	    errno == ENOSYS)
		no_waitv = true;
	for (unsigned int i = 0; i < n; i++) {
		__atomic_store_n(&db[i]->sleeping, 0, __ATOMIC_RELAXED);
		if (__atomic_load_n(&db[i]->seq, __ATOMIC_ACQUIRE) !=
		    (uint32_t)wv[i].val)
			woken = true;
	}
	if (woken)
		db[0]->wakeups++;
	return woken;
}

#endif /* ZN_DOORBELL_H */
