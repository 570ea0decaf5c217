/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Utilities, the flow hash, the doorbell, the shared layout contract. */

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "zn_test.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_flow.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/common/zn_yield.h"
#include "../../lib/common/zn_cpus.h"
#include "../../mgr/core/mgr.h"
#include "../../mgr/flow/route.h"

ZN_TEST(util_parse)
{
	cpu_set_t s;
	char buf[64];
	uint64_t v;

	ZT_EQ(zn_parse_cpulist("0-3,6", &s), 0);
	ZT_EQ(CPU_COUNT(&s), 5);
	ZT_EQ(zn_format_cpulist(&s, buf, sizeof(buf)), 0);
	ZT_CHECK(strcmp(buf, "0-3,6") == 0);
	ZT_EQ(zn_parse_cpulist("3-1", &s), -EINVAL);
	ZT_EQ(zn_parse_cpulist("a", &s), -EINVAL);
	ZT_EQ(zn_parse_cpulist("1,", &s), 0);
	ZT_EQ(zn_parse_uint("42", 1, 100, &v), 0);
	ZT_EQ(v, 42);
	ZT_EQ(zn_parse_uint("101", 1, 100, &v), -EINVAL);
	ZT_EQ(zn_parse_uint("-1", 0, 100, &v), -EINVAL);
	ZT_EQ(zn_parse_uint("4x", 0, 100, &v), -EINVAL);
	/* decimal only, leading zeros included (strtoull base 0 read "010"
	 * as 8 and "0x10" as 16) */
	ZT_EQ(zn_parse_uint("010", 0, 100, &v), 0);
	ZT_EQ(v, 10);
	ZT_EQ(zn_parse_uint("09", 0, 100, &v), 0);
	ZT_EQ(v, 9);
	ZT_EQ(zn_parse_uint("0x10", 0, 100, &v), -EINVAL);
	ZT_EQ(zn_parse_uint("00", 0, 100, &v), 0);
	ZT_EQ(v, 0);
	ZT_CHECK(zn_instance_name_valid("zn-test_1"));
	ZT_CHECK(!zn_instance_name_valid(""));
	ZT_CHECK(!zn_instance_name_valid("a/b"));
	ZT_CHECK(!zn_instance_name_valid("0123456789012345678901234567890123"));
}

/* Ethernet + IPv4 + UDP frame. */
static unsigned int
frame4(uint8_t *p, const uint8_t src[4], const uint8_t dst[4], uint16_t sp,
       uint16_t dp, uint16_t frag)
{
	memset(p, 0, 64);
	p[12] = 0x08;
	p[14] = 0x45;
	p[20] = (uint8_t)(frag >> 8);
	p[21] = (uint8_t)frag;
	p[23] = 17;
	memcpy(p + 26, src, 4);
	memcpy(p + 30, dst, 4);
	p[34] = (uint8_t)(sp >> 8);
	p[35] = (uint8_t)sp;
	p[36] = (uint8_t)(dp >> 8);
	p[37] = (uint8_t)dp;
	return 60;
}

ZN_TEST(flow_hash)
{
	static const uint8_t a[4] = { 10, 0, 0, 1 }, b[4] = { 10, 0, 0, 2 };
	uint8_t f1[128], f2[128], v6a[128], v6b[128], vlan[128];
	unsigned int n = frame4(f1, a, b, 1234, 80, 0);
	uint32_t h;

	frame4(f2, b, a, 80, 1234, 0);
	h = zn_flow_hash_raw(f1, n);
	ZT_CHECK(h != 0);
	ZT_EQ(zn_flow_hash_raw(f2, n), h); /* symmetric */
	frame4(f2, a, b, 1235, 80, 0);
	ZT_CHECK(zn_flow_hash_raw(f2, n) != h); /* ports count */
	/* Fragments: ports ignored, so every fragment hashes alike. */
	frame4(f1, a, b, 1234, 80, 0x2000);
	frame4(f2, a, b, 9999, 9999, 0x0010);
	ZT_EQ(zn_flow_hash_raw(f1, n), zn_flow_hash_raw(f2, n));
	/* A VLAN tag does not change the flow. */
	frame4(f1, a, b, 1234, 80, 0);
	memcpy(vlan, f1, 12);
	vlan[12] = 0x81;
	vlan[13] = 0x00;
	vlan[14] = 0x00;
	vlan[15] = 0x05;
	memcpy(vlan + 16, f1 + 12, n - 12);
	ZT_EQ(zn_flow_hash_raw(vlan, n + 4), h);
	/* IPv6 symmetric. */
	memset(v6a, 0, sizeof(v6a));
	v6a[12] = 0x86;
	v6a[13] = 0xdd;
	v6a[14] = 0x60;
	v6a[20] = 6;
	v6a[14 + 8 + 15] = 1;
	v6a[14 + 24 + 15] = 2;
	v6a[54] = 0x30;
	v6a[56] = 0x40;
	memcpy(v6b, v6a, sizeof(v6b));
	memset(v6b + 22, 0, 32);
	v6b[14 + 8 + 15] = 2;
	v6b[14 + 24 + 15] = 1;
	v6b[54] = 0x40; /* ports swapped too */
	v6b[56] = 0x30;
	ZT_EQ(zn_flow_hash_raw(v6a, 80), zn_flow_hash_raw(v6b, 80));
	/* Truncations at every length, and garbage: no crash, no overread
	 * (run under valgrind or ASan to see the reads). */
	for (unsigned int len = 0; len < n; len++)
		(void)zn_flow_hash_raw(f1, len);
	for (unsigned int len = 0; len < 80; len++)
		(void)zn_flow_hash_raw(v6a, len);
	ZT_EQ(zn_flow_hash_raw(f1, 13), 0);
	v6a[14 + 6] = 0; /* hop-by-hop header claiming a huge length */
	v6a[54] = 6;
	v6a[55] = 0xff;
	(void)zn_flow_hash_raw(v6a, 80);
}

struct db_fx {
	struct zn_doorbell db;
	struct zn_doorbell group_db; /* all: rung instead of db */
	bool all;                    /* the sleeper waits on both */
	volatile uint32_t work;
	volatile bool done;
	volatile uint64_t rings; /* rings the producer completed */
	uint64_t timeouts, handled;
};

static bool
db_has_work(void *arg)
{
	struct db_fx *f = arg;

	return __atomic_load_n(&f->work, __ATOMIC_ACQUIRE) != 0;
}

static void *
db_sleeper(void *arg)
{
	struct db_fx *f = arg;

	while (!f->done) {
		if (__atomic_exchange_n(&f->work, 0, __ATOMIC_ACQ_REL)) {
			f->handled++;
			continue;
		}
		/* A lost wake-up: a sleep that lasted its whole second
		 * although a ring completed meanwhile, with work pending (work
		 * is published before the ring, so a ring that found us not
		 * yet asleep left work our check sees). Not one: a producer not
		 * scheduled for a second (it completed no ring), or an early
		 * return (a wake-up meant for the previous sleep, arriving
		 * late: seq unchanged, the loop just goes round). */
		uint64_t rings = __atomic_load_n(&f->rings, __ATOMIC_ACQUIRE);
		uint64_t t0 = zn_now_ns();

		struct zn_doorbell *const both[] = { &f->db, &f->group_db };
		bool woken = f->all ?
			zn_db_wait_all(both, 2, db_has_work, f, 1000000) :
			zn_db_wait(&f->db, db_has_work, f, 1000000);

		if (!woken && zn_now_ns() - t0 >= 900000000ULL &&
		    __atomic_load_n(&f->rings, __ATOMIC_ACQUIRE) != rings &&
		    db_has_work(f))
			f->timeouts++;
	}
	return NULL;
}

static void
db_run(struct db_fx *f)
{
	struct zn_doorbell *ring = f->all ? &f->group_db : &f->db;
	pthread_t t;

	pthread_create(&t, NULL, db_sleeper, f);
	for (int i = 0; i < 20000; i++) {
		__atomic_store_n(&f->work, 1, __ATOMIC_RELEASE);
		zn_db_ring(ring);
		__atomic_fetch_add(&f->rings, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&f->work, __ATOMIC_ACQUIRE) != 0)
			;
	}
	f->done = true;
	__atomic_store_n(&f->work, 1, __ATOMIC_RELEASE);
	zn_db_ring(ring);
	pthread_join(t, NULL);
}

ZN_TEST(doorbell_no_lost_wakeup)
{
	static struct db_fx f;

	memset(&f, 0, sizeof(f));
	db_run(&f);
	ZT_EQ(f.timeouts, 0);
	ZT_CHECK(f.handled >= 20000);
	ZT_CHECK(f.db.sleeps > 0); /* it really slept, and was woken */
	ZT_CHECK(f.db.wakeups > 0);
}

/* A worker sleeping on its doorbell and a group's at once (futex_waitv):
 * rung on the group's alone, it is woken every time, none lost. */
ZN_TEST(doorbell_wait_all_no_lost_wakeup)
{
	static struct db_fx f;

	memset(&f, 0, sizeof(f));
	f.all = true;
	db_run(&f);
	ZT_EQ(f.timeouts, 0);
	ZT_CHECK(f.handled >= 20000);
	ZT_CHECK(f.db.sleeps > 0); /* counted on the first */
	ZT_CHECK(f.db.wakeups > 0);
	ZT_EQ(f.group_db.sleeps, 0);
}

/* zn_yield's decision (lib/common/zn_yield.h), on a clock of 1 tick per
 * us: yields that lasted a slice now and then (a control thread, the
 * kernel) never pause yielding; a thread that keeps the core (every yield
 * to it a slice) does at once, for 100 ms, then 200, 400 ... while it
 * stays, and 100 again once it was gone a while. */
#define YHZ 1000000u /* ticks per second: 1 per us */

static uint64_t
spin_until_paused(struct zn_yield *y, uint64_t t)
{
	for (int i = 0; i < 10 && y->off_until <= t; i++) {
		zn_yield_note(y, t, 3000, YHZ); /* a 3 ms slice to it */
		t += 3000 + 10;
	}
	return t;
}

ZN_TEST(yield_pauses_for_a_spinner_only)
{
	struct zn_yield y;
	uint64_t t = 5000000, end;

	memset(&y, 0, sizeof(y));
	/* short yields: nothing noted */
	for (int i = 0; i < 1000; i++)
		zn_yield_note(&y, t + i * 2, 1, YHZ);
	ZT_EQ(y.n_long, 0);
	/* a 1 ms yield every 200 ms for 10 s, and now and then two 1.5 ms
	 * ones 5 ms apart: counted, never a pause */
	for (int i = 0; i < 50; i++) {
		t += 200000;
		zn_yield_note(&y, t, 1000, YHZ);
		if (i % 10 == 0)
			zn_yield_note(&y, t + 5000, 1500, YHZ);
	}
	ZT_EQ(y.n_long, 55);
	ZT_EQ(y.off_until, 0);
	/* a spinner: paused after two of its slices, for 100 ms */
	t += 300000;
	end = spin_until_paused(&y, t);
	ZT_EQ(y.n_long, 57);
	ZT_EQ(end - t, 2 * 3010);
	ZT_EQ(y.off_until, t + 3010 + 3000 + 100000);
	/* still there when the pause ends: 200, 400, 800, 1600, 1600 ms */
	for (uint32_t ms = 200; ms <= 3200; ms *= 2) {
		t = y.off_until + 20;
		spin_until_paused(&y, t);
		ZT_EQ(y.off_until - (t + 3010 + 3000),
		      1000u * (ms > 1600 ? 1600 : ms));
	}
	/* gone for two seconds, then back: 100 ms again */
	t = y.off_until + 2000000;
	spin_until_paused(&y, t);
	ZT_EQ(y.off_until, t + 3010 + 3000 + 100000);
}

/* The shared layout: each named-writer section starts a cache line. */
ZN_TEST(shm_layout)
{
	ZT_EQ(sizeof(struct zn_msg), 8);
	ZT_EQ(sizeof(struct zn_res), 8);
	ZT_EQ(sizeof(struct zn_pkt_meta), 16);
	ZT_EQ(offsetof(struct zn_nf_slot, ctl) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, req) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, counter_names) % RTE_CACHE_LINE_SIZE,
	      0);
	ZT_EQ(offsetof(struct zn_nf_slot, ledger) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, stats) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, counters) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, mstats) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, exit_drops) % RTE_CACHE_LINE_SIZE,
	      0);
	ZT_EQ(offsetof(struct zn_nf_slot, db) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, hstats) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, steer) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_nf_slot, steer_reply) % RTE_CACHE_LINE_SIZE,
	      0);
	ZT_EQ(offsetof(struct zn_nf_slot, cmds) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_group_home, view) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_group_home, hdr) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_group_home, nfs) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_doorbell, sleeps) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_worker_shm, stats) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_worker_shm, port) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(sizeof(struct zn_port_wstats) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_shm, mgr) % RTE_CACHE_LINE_SIZE, 0);
	ZT_EQ(offsetof(struct zn_shm, nfs) % RTE_CACHE_LINE_SIZE, 0);
	for (int r = 0; r < ZN_DROP_MAX; r++)
		ZT_CHECK(zn_drop_reason_name(r) != NULL);
}
