/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/system/test_vandal.py: a hostile NF that writes
 * garbage where it can. --mode ring: into its own RX and TX rings'
 * headers (geometry, name, memzone pointer, and the positions of both
 * sides; in a trust group, those in its group's file), before its first
 * packet and every tick after; its own library
 * then reads garbage too and it may well crash: that is part of the test.
 * --mode slot: random bytes into every line of its own slot in shared
 * memory (docs/architecture.md: what an NF can write and what garbage
 * there does), its state "free", its pid and group pointing elsewhere
 * (pid 1), every tick. --mode route: into the routing snapshot NFs read
 * (no chains, no services, no TX rings to drain, no direct hand-off),
 * every tick: the workers route with their own copy (mgr/trust/private_heap.c).
 * --mode others: "stop" into every other slot of zn_shm.nfs (the homes
 * of NFs of no trust group), every tick. --mode reach: garbage into the
 * header of every other running NF's RX ring, through the pointer the
 * manager publishes: a ring in another trust group's file (mgr/trust/group_home.c) is
 * not mapped here, and the vandal dies of SIGSEGV. --mode pool: garbage
 * into the header and free ring of every trust group's pool it finds by
 * their memzones' names: they are in the groups' files (mgr/trust/group.c), and
 * the vandal dies of SIGSEGV. --mode pointers: garbage into every NF
 * ring and link ring pointer the manager publishes (zn_shm_route.nf_rx,
 * nf_tx, zn_link.ring), every tick: the workers balance LEAST_LOADED
 * replicas with their own (mgr/trust/group_home.c, link.c), NFs with theirs.
 * --mode rcu: every other reader of the NFs' RCU variable of NFs of no
 * group marked online since long ago, every tick (the manager kills a
 * reader stuck online for 2 s): a group's NFs report to their group's.
 * --mode freebufs: (in a trust group) garbage into the header of every
 * free buffer of its group's pool (those in the pool's free ring), every
 * tick: where its data is (buf_addr, buf_iova, buf_len, data_off); the
 * manager's copies into the pool write where the pool keeps each
 * buffer's data, not where the header says. --mode poolring: (in a
 * trust group) garbage into the geometry of its group's pool's free ring
 * (size, mask, capacity), every tick, its positions moved once by 2^30
 * (the same slots under the ring's mask): the manager uses the ring with
 * the geometry it made it with (lib/nf/nf_pool_ops.c) and writes it back.
 * --mode poolhdr: (in a trust group) garbage into its group's pool's
 * rte_mempool header, every tick: every field (the caches' address, the
 * ops index, the ring, sizes, lists), every other lcore cache's size,
 * flush threshold and length, the mbuf pool's private area (data room): the
 * manager uses the pool with its own header (mgr/trust/pool_header.c).
 * --mode rcuhdr: garbage into the header of the RCU variable it reports
 * to (its group's, in its file, or the one of NFs of no group): where
 * DPDK's code finds the readers' bitmap and how long it is (max_threads,
 * num_elems, num_threads), every tick; the manager checks each reader's
 * counter where it is (mgr/flow/route.c sync_nfs).
 * --mode heaphdr: (in a trust group) garbage neighbours (prev, next)
 * into the header DPDK's rte_malloc keeps before each structure of its
 * group's heap (the pool's header and free ring, the routing copy, the
 * RCU variable), every tick: the manager frees them at exit from its
 * heap as made (mgr/trust/group.c).
 * --mode msgs: (no group) writes the NFs' message ring (which it maps
 * whole) directly: forged messages in its slots (every type, for every
 * slot, as every trust group, generations 0-3, and random ones) with
 * the producer's positions moved over them, one tick; the ring's header
 * (geometry and positions) garbage, the next: the manager reads it with
 * the geometry it made it with, refuses what is no message of an NF of
 * no group, and resets a header it finds written (mgr/nf/registry_kick.c).
 * Counter: vandalised. */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_memzone.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include <zeronf/zeronf.h>

#include "../../lib/shm/zn_shm.h"
#include "xorshift.h"

static const char *mode = "ring";
static int c_done;
static uint64_t state = 0x2545f4914f6cdd1dULL;

static int
vandal_parse(struct zn_nf *nf, int argc, char **argv)
{
	(void)nf;
	if (argc == 3 && strcmp(argv[1], "--mode") == 0 &&
	    (strcmp(argv[2], "ring") == 0 || strcmp(argv[2], "slot") == 0 ||
	     strcmp(argv[2], "route") == 0 || strcmp(argv[2], "others") == 0 ||
	     strcmp(argv[2], "reach") == 0 || strcmp(argv[2], "pool") == 0 ||
	     strcmp(argv[2], "pointers") == 0 || strcmp(argv[2], "rcu") == 0 ||
	     strcmp(argv[2], "freebufs") == 0 ||
	     strcmp(argv[2], "poolring") == 0 ||
	     strcmp(argv[2], "poolhdr") == 0 ||
	     strcmp(argv[2], "rcuhdr") == 0 ||
	     strcmp(argv[2], "msgs") == 0 ||
	     strcmp(argv[2], "heaphdr") == 0)) {
		mode = argv[2];
		return 0;
	}
	return argc == 1 ? 0 : -EINVAL;
}

static void
rnd(void *p, size_t n)
{
	uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)xorshift64(&state);
}

static void
garble_ring(struct rte_ring *r, int rx)
{
	memset(r->name, 'X', sizeof(r->name));
	r->flags = 0x7fffffff;
	r->memzone = (const struct rte_memzone *)(uintptr_t)0xdead0000;
	r->size = 0x80000000u;
	r->mask = 0xffffffffu;
	r->capacity = 0xffffffffu;
	if (rx) { /* ours: consumer; the manager's: producer */
		r->cons.head = r->cons.tail = 0x7fffffffu;
		r->prod.head = 0x12345u;
	} else {
		r->prod.head = r->prod.tail = 0xdeadbeefu;
		r->cons.head = r->cons.tail = 0x5555u;
	}
}

static void
garble_slot(struct zn_nf_slot *s)
{
	rnd(&s->ctl, sizeof(s->ctl));
	s->ctl.state = ZN_NF_FREE; /* as if its slot were free */
	s->ctl.stop = 0;      /* else it would leave at once */
	s->ctl.pid = 1;       /* a signal there would reach init */
	s->ctl.group = 3;     /* a group it is not in */
	rnd(&s->ledger, sizeof(s->ledger));
	rnd(&s->stats, sizeof(s->stats));
	rnd(&s->mstats, sizeof(s->mstats));
	rnd(&s->exit_drops, sizeof(s->exit_drops));
	rnd(&s->links, sizeof(s->links));
	rnd(&s->hstats, sizeof(s->hstats));
	rnd(&s->steer, sizeof(s->steer));
	rnd(&s->cmd_reply, sizeof(s->cmd_reply));
	rnd(&s->ptx, sizeof(s->ptx));
	rnd(&s->objs, sizeof(s->objs));
	rnd(&s->db, sizeof(s->db));
}

/* Every buffer in @p mp's free ring (entries between the consumer's tail
 * and the producer's: nobody holds them) told its data is elsewhere. The
 * pool's ops are libzeronf's zn_ring: DPDK's ring. */
static void
garble_free(struct rte_mempool *mp)
{
	struct rte_ring *r = mp->pool_data;
	void **objs = (void **)&r[1];
	uint32_t tail = __atomic_load_n(&r->cons.tail, __ATOMIC_ACQUIRE);
	uint32_t head = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);

	for (uint32_t i = tail; i != head; i++) {
		struct rte_mbuf *mb = objs[i & r->mask];

		mb->buf_addr = (void *)(uintptr_t)0xdead0000ULL;
		rte_mbuf_iova_set(mb, 0xdead0000ULL);
		mb->buf_len = 0xffff;
		mb->data_off = 0x7fff;
	}
}

/* Forged messages straight into the ring, or its header garbled */
static void
forge_msgs(void)
{
	static unsigned int turn;
	struct rte_ring *r = rte_ring_lookup(ZN_MSG_RING_NAME);
	struct zn_msg *slots;
	uint32_t head;

	if (r == NULL)
		abort();
	if (turn++ % 2 == 1) {
		garble_ring(r, 0);
		return;
	}
	/* as made, to write messages it will read (the manager reset it) */
	slots = (struct zn_msg *)&r[1];
	head = r->prod.tail;
	for (unsigned int i = 0; i < 512; i++) {
		struct zn_msg *m = &slots[(head + i) & (r->size - 1)];

		if (i < 384) {
			m->type = (uint8_t)(1 + i % 5);
			m->slot = (uint16_t)((i / 5) % ZN_MAX_NFS);
			m->group = (uint8_t)(i % 17);
			m->gen = i % 4;
		} else {
			rnd(m, sizeof(*m));
		}
	}
	r->prod.head = r->prod.tail = head + 512;
}

static void
vandalise(struct zn_nf *nf)
{
	const struct rte_memzone *mz = NULL;
	struct zn_shm *shm = NULL;
	uint16_t id = zn_nf_instance_id(nf);

	/* An NF of a trust group maps none of the EAL's memory: the modes
	 * for one write its group's file only. */
	if (zn_nf_group_pool(nf) == NULL) {
		mz = rte_memzone_lookup(ZN_SHM_NAME);
		if (mz == NULL)
			abort();
		shm = mz->addr;
	} else if (strcmp(mode, "ring") != 0 &&
		   strcmp(mode, "poolring") != 0 &&
		   strcmp(mode, "poolhdr") != 0 &&
		   strcmp(mode, "freebufs") != 0 &&
		   strcmp(mode, "rcuhdr") != 0 &&
		   strcmp(mode, "heaphdr") != 0) {
		abort();
	}
	if (strcmp(mode, "heaphdr") == 0) {
		struct zn_group_home *h = zn_group_home_at(0);
		struct rte_mempool *mp = zn_nf_group_pool(nf);
		void *in_heap[] = { mp, mp->pool_data, h->hdr.route,
				    h->hdr.qsbr };

		/* DPDK 22.11's struct malloc_elem (lib/eal/common/
		 * malloc_elem.h), 128 bytes before the data: heap, prev,
		 * next, ...; its neighbours are what a free joins with */
		for (unsigned int i = 0; i < RTE_DIM(in_heap); i++) {
			uint64_t *e = RTE_PTR_SUB(in_heap[i], 128);

			e[1] = 0xdead0000ULL;
			e[2] = 0xdead0040ULL;
		}
		zn_nf_counter_add(nf, c_done, 1);
		return;
	}
	if (strcmp(mode, "rcuhdr") == 0) {
		struct zn_group_home *h = zn_group_home_at(0);
		struct rte_rcu_qsbr *q = shm != NULL ? shm->rt.qsbr :
					 h->hdr.qsbr; /* group index 0 */

		q->max_threads = 0xfffffff0u;
		q->num_elems = 0x7ffffff0u;
		q->num_threads = 0xfffffff0u;
		zn_nf_counter_add(nf, c_done, 1);
		return;
	}
	if (strcmp(mode, "ring") == 0 && shm == NULL) {
		/* in a trust group: its rings in its group's file, where
		 * the manager laid them out (mgr/trust/group_home.c) */
		uintptr_t mp = (uintptr_t)zn_nf_group_pool(nf);
		unsigned int g = (unsigned int)((mp - ZN_GROUP_VA_BASE) /
						ZN_GROUP_VA_STRIDE);
		struct zn_group_home *h = zn_group_home_at(g);
		uint64_t mem = rte_ring_get_memsize(h->view.hdr.ring_size);

		garble_ring(RTE_PTR_ADD(h, zn_home_ring_off(ZN_HOME_RX(id),
							    mem)), 1);
		garble_ring(RTE_PTR_ADD(h, zn_home_ring_off(ZN_HOME_TX(id),
							    mem)), 0);
	} else if (strcmp(mode, "ring") == 0) {
		garble_ring(shm->rt.nf_rx[id], 1);
		garble_ring(shm->rt.nf_tx[id], 0);
	} else if (strcmp(mode, "route") == 0) {
		struct zn_route *rt = shm->rt.route;

		memset(rt->chains, 0, sizeof(rt->chains));
		memset(rt->nf_svc, 0, sizeof(rt->nf_svc));
		memset(rt->n_drain, 0, sizeof(rt->n_drain));
		rt->direct = false;
	} else if (strcmp(mode, "others") == 0) {
		for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
			if (i != id)
				shm->nfs[i].ctl.stop = 1;
	} else if (strcmp(mode, "pool") == 0) {
		for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
			static const char *const fmt[] = { "MP_zn_tg%u",
							   "ZR_zn_tg%u" };
			char name[RTE_MEMZONE_NAMESIZE];

			for (unsigned int k = 0; k < RTE_DIM(fmt); k++) {
				snprintf(name, sizeof(name), fmt[k], g);
				mz = rte_memzone_lookup(name);
				if (mz != NULL)
					rnd(mz->addr, 256);
			}
		}
	} else if (strcmp(mode, "rcu") == 0) {
		for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
			if (i != id)
				__atomic_store_n(&shm->rt.qsbr->qsbr_cnt[i].cnt,
						 1, __ATOMIC_RELEASE);
	} else if (strcmp(mode, "pointers") == 0) {
		for (unsigned int i = 0; i < ZN_MAX_NFS; i++) {
			shm->rt.nf_rx[i] = (struct rte_ring *)(uintptr_t)
					   (0xdead000000ULL + i * 64);
			shm->rt.nf_tx[i] = shm->rt.nf_rx[i];
		}
		for (unsigned int l = 0; l < ZN_MAX_LINKS; l++)
			shm->links[l].ring = (struct rte_ring *)(uintptr_t)
					     (0xbad000000ULL + l * 64);
	} else if (strcmp(mode, "poolring") == 0) {
		static bool moved;
		struct rte_ring *r = zn_nf_group_pool(nf)->pool_data;

		/* Once, while nothing uses the ring (before traffic): its
		 * positions moved by a multiple of its size (the same slots
		 * under the ring's own mask, 8 GB away under the garbage). */
		if (!moved) {
			r->prod.head += 1u << 30;
			r->prod.tail += 1u << 30;
			r->cons.head += 1u << 30;
			r->cons.tail += 1u << 30;
			moved = true;
		}
		r->size = 0x80000000u;
		r->mask = 0xffffffffu;
		r->capacity = 0xffffffffu;
	} else if (strcmp(mode, "poolhdr") == 0) {
		struct rte_mempool *mp = zn_nf_group_pool(nf);
		struct rte_mempool_cache *c = RTE_PTR_ADD(mp, sizeof(*mp));
		static uint32_t cs; /* as made: the header is garbage after */

		if (cs == 0)
			cs = mp->cache_size;
		/* Every lcore's cache but its own: that one only this
		 * process uses (libzeronf counts what it allocates there),
		 * and a vandal that kills itself with it stops the chain it
		 * is first in before the manager was tried (seen in CI) */
		for (unsigned int i = 0; cs != 0 && i < RTE_MAX_LCORE; i++) {
			if (i == rte_lcore_id())
				continue;
			c[i].size = 0xffffffffu;
			c[i].flushthresh = 0xfffffff0u;
			c[i].len = 0x7ffffff0u;
		}
		rnd(RTE_PTR_ADD(mp, RTE_MEMPOOL_HEADER_SIZE(mp, cs)),
		    sizeof(struct rte_pktmbuf_pool_private));
		rnd(mp, sizeof(*mp));
	} else if (strcmp(mode, "freebufs") == 0) {
		garble_free(zn_nf_group_pool(nf));
	} else if (strcmp(mode, "msgs") == 0) {
		forge_msgs();
	} else if (strcmp(mode, "reach") == 0) {
		for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
			if (i != id && shm->rt.route->nf_svc[i] != 0)
				garble_ring(shm->rt.nf_rx[i], 1);
	} else {
		garble_slot(&shm->nfs[id]);
	}
	zn_nf_counter_add(nf, c_done, 1);
}

static int
vandal_init(struct zn_nf *nf)
{
	c_done = zn_nf_counter_register(nf, "vandalised");
	if (c_done < 0)
		return c_done;
	vandalise(nf);
	return 0;
}

static void
vandal_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	(void)nf, (void)pkts, (void)n;
}

static void
vandal_tick(struct zn_nf *nf, uint64_t now_ns)
{
	(void)now_ns;
	vandalise(nf);
}

static const struct zn_nf_ops vandal_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "vandal",
	.parse_args = vandal_parse,
	.init = vandal_init,
	.burst = vandal_burst,
	.tick = vandal_tick,
};

ZN_NF_REGISTER(vandal_ops)
