/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/system/test_descriptors.py: a hostile NF that hands
 * back, every --every N packets, what is not a packet of its pool
 * (--lie MODE). Replacing modes put another pointer in the packet's place
 * and give the real packet back to the pool itself (so that the pool is
 * whole after the test): random (random 64-bit values), misaligned (the
 * packet + 8), interior (a line inside the packet's buffer), foreign (the
 * pool's own rte_mempool structure, in the EAL's memory), other_group (an
 * address in trust group 0's pool, which this NF does not map),
 * duplicate (the previous packet again: the copies may fall into two of
 * the worker's bursts), stale (the last packet it handed back in its
 * previous burst, not one it holds now: the manager may have sent it on,
 * or given it to another NF, since). Mangling modes hand the real
 * packet back broken: bad_len (data beyond its buffer), bad_buf (buf_addr
 * elsewhere), bad_iova (buf_iova elsewhere: a NIC would DMA there),
 * bad_next (a chain to nowhere), indirect (claims to be attached).
 * Lies the manager cannot see (test_group_audit.py): freed_back (frees
 * the packet in its own process and hands it back too: a double free),
 * hoard (takes --every buffers of its pool at init and keeps them, out
 * of its ledger: put back when it dies, as its pool's tags say them its,
 * mgr/nf/pool_acct.h); hoard_hidden (the same, then it erases their tags,
 * which it can write: lost when it dies, until group.audit finds them);
 * free_garbage (puts a pointer that
 * is no buffer into its pool's free ring: what a buggy NF freeing a bad
 * pointer does; test_descriptors.py). A lie told after the check: flip
 * (a thread of its own rewrites, without pause, the packets it handed
 * back last: buf_addr, data_off, data_len, next and pool to garbage and
 * back, and their flow hash cleared, while the worker checks, hashes
 * and copies them: the manager must read none of these twice;
 * test_descriptors.py).
 * Counter: lies. Run with the manager's --handoff worker: in direct mode
 * the library resolves what the handler left, and a lie crashes only this
 * process. */

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include <zeronf/zeronf.h>

#include "../../lib/shm/zn_shm.h"
#include "xorshift.h"

#define GROUP0_VA 0x500000000000ULL /* ZN_GROUP_VA_BASE (mgr/trust/group.c) */

static const char *mode = "random";
static unsigned int every = 7, seen;
static int c_lies;
static uint64_t state = 0x9e3779b97f4a7c15ULL;
static struct rte_mbuf *handed_last; /* previous burst's last packet */
/* The last pointers repeated (duplicate, stale): one of them may still
 * wait in the TX ring (at most its size, 1023, a lie every --every) or
 * the worker's stage, and may have been taken back as a packet handed to
 * us since; freeing that packet too would be the one lie the manager
 * cannot see (docs/security.md), so such a packet is not replaced. */
#define TOLD 1024
static struct rte_mbuf *told[TOLD];
static unsigned int n_told;

/* flip: the packets handed back last, with what they held then. */
#define FLIPS 256
static struct flip {
	struct rte_mbuf *m;
	void *buf_addr;
	struct rte_mempool *pool;
	uint16_t data_off, data_len;
} flips[FLIPS];
static unsigned int n_flips;
static volatile bool flipping;
static pthread_t flipper;

static void *
flip_loop(void *arg)
{
	(void)arg;
	while (flipping) {
		for (unsigned int i = 0; i < FLIPS; i++) {
			struct flip f = flips[i];

			if (f.m == NULL)
				continue;
			__atomic_store_n(&f.m->buf_addr,
					 (void *)(uintptr_t)0xdead000000ULL,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->data_off, 0xfff0,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->data_len, 0xffff,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->next, (struct rte_mbuf *)
					 (uintptr_t)0xdead0000ULL,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->pool, (struct rte_mempool *)
					 (uintptr_t)0xdead0000ULL,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->buf_addr, f.buf_addr,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->data_off, f.data_off,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->data_len, f.data_len,
					 __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->next, NULL, __ATOMIC_RELAXED);
			__atomic_store_n(&f.m->pool, f.pool, __ATOMIC_RELAXED);
			/* And no flow hash: a worker choosing between
			 * replicas computes it, reading the packet. */
			__atomic_fetch_and(&zn_pkt_meta(f.m)->flags,
					   ~(uint32_t)(ZN_PKT_F_HASH_VALID |
						       ZN_PKT_F_HASH_RSS),
					   __ATOMIC_RELAXED);
		}
	}
	return NULL;
}

static bool
holds(struct rte_mbuf *const *pkts, unsigned int n, const struct rte_mbuf *m)
{
	for (unsigned int i = 0; i < n; i++)
		if (pkts[i] == m)
			return true;
	return false;
}

static int
liar_parse(struct zn_nf *nf, int argc, char **argv)
{
	(void)nf;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--lie") == 0)
			mode = argv[i + 1];
		else if (strcmp(argv[i], "--every") == 0 &&
			 atoi(argv[i + 1]) > 0)
			every = (unsigned int)atoi(argv[i + 1]);
		else
			return -EINVAL;
	}
	return argc % 2 == 1 ? 0 : -EINVAL;
}

/* Erase the tags that name @p bufs[0, n) ours (in its group's file, as
 * its view of the manager's header says: trust group 0's) */
static void
hide(struct rte_mbuf *const *bufs, unsigned int n)
{
	const struct zn_shm_hdr *h = &zn_group_home_at(0)->view.hdr;
	uint8_t *tags = (uint8_t *)(uintptr_t)h->acct_tags;

	for (unsigned int i = 0; tags != NULL && i < n; i++)
		tags[((uintptr_t)bufs[i] - h->acct_lo) >> h->acct_shift] = 0;
}

static int
liar_init(struct zn_nf *nf)
{
	static struct rte_mbuf *hoard[4096];

	c_lies = zn_nf_counter_register(nf, "lies");
	if (c_lies < 0)
		return c_lies;
	if (strcmp(mode, "flip") == 0) {
		flipping = true;
		if (pthread_create(&flipper, NULL, flip_loop, NULL) != 0)
			return -EAGAIN;
	}
	if (strcmp(mode, "hoard") == 0 || strcmp(mode, "hoard_hidden") == 0) {
		unsigned int n = RTE_MIN(every, (unsigned int)RTE_DIM(hoard));

		if (rte_pktmbuf_alloc_bulk(zn_nf_pktmbuf_pool(nf), hoard, n))
			return -ENOMEM;
		zn_nf_counter_add(nf, c_lies, n);
		if (strcmp(mode, "hoard_hidden") == 0)
			hide(hoard, n);
	}
	return 0;
}

/* Something in place of @p m, or NULL for a mode that mangles it. */
static struct rte_mbuf *
instead(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t i, uint16_t n)
{
	char *m = (char *)pkts[i];

	if (strcmp(mode, "random") == 0)
		return (struct rte_mbuf *)(uintptr_t)xorshift64(&state);
	if (strcmp(mode, "misaligned") == 0)
		return (struct rte_mbuf *)(m + 8);
	if (strcmp(mode, "interior") == 0)
		return (struct rte_mbuf *)(m + 2 * RTE_CACHE_LINE_SIZE);
	if (strcmp(mode, "foreign") == 0)
		return (struct rte_mbuf *)zn_nf_pktmbuf_pool(nf);
	if (strcmp(mode, "other_group") == 0)
		return (struct rte_mbuf *)(uintptr_t)(GROUP0_VA + 64 * 1024);
	if (strcmp(mode, "duplicate") == 0 && i > 0)
		return pkts[i - 1];
	/* Not one it holds again now: that would be a buffer it frees and
	 * hands back (below), which the manager cannot tell from its own. */
	if (strcmp(mode, "stale") == 0 && handed_last != NULL &&
	    !holds(pkts, n, handed_last))
		return handed_last;
	return NULL;
}

static void
mangle(struct zn_nf *nf, struct rte_mbuf *m)
{
	if (strcmp(mode, "bad_len") == 0)
		m->data_len = (uint16_t)(m->buf_len + 100);
	else if (strcmp(mode, "bad_buf") == 0)
		m->buf_addr = zn_nf_pktmbuf_pool(nf);
	else if (strcmp(mode, "bad_iova") == 0)
		m->buf_iova ^= 0x100000;
	else if (strcmp(mode, "bad_next") == 0) {
		m->next = (struct rte_mbuf *)(uintptr_t)0xdead0000;
		m->nb_segs = 2;
	} else if (strcmp(mode, "indirect") == 0)
		m->ol_flags |= RTE_MBUF_F_INDIRECT;
}

static bool
repeats(void)
{
	return strcmp(mode, "duplicate") == 0 || strcmp(mode, "stale") == 0;
}

static void
liar_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	if (strcmp(mode, "flip") == 0) {
		/* Real packets, handed back whole: the lie comes later. */
		for (uint16_t i = 0; i < n; i++) {
			struct rte_mbuf *m = pkts[i];

			flips[n_flips++ % FLIPS] = (struct flip){ m,
				m->buf_addr, m->pool, m->data_off,
				m->data_len };
		}
		zn_nf_counter_add(nf, c_lies, n);
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *lie;

		if (++seen % every != 0)
			continue;
		if (strcmp(mode, "freed_back") == 0) {
			rte_pktmbuf_free(pkts[i]); /* and handed back below */
			zn_nf_counter_add(nf, c_lies, 1);
			continue;
		}
		if (strcmp(mode, "hoard") == 0)
			continue;
		if (strcmp(mode, "free_garbage") == 0) {
			void *bad = (void *)(uintptr_t)(0xdead0000ULL +
							(seen % 4096) * 64);

			/* Straight into the ring (a free goes through the
			 * lcore's cache first, and gets there later). */
			if (rte_mempool_ops_enqueue_bulk(
				    zn_nf_pktmbuf_pool(nf), &bad, 1) == 0)
				zn_nf_counter_add(nf, c_lies, 1);
			continue;
		}
		lie = instead(nf, pkts, i, n);
		if (repeats()) {
			if (lie == NULL || holds(told, TOLD, pkts[i]))
				continue; /* nothing to repeat, see told */
			told[n_told++ % TOLD] = lie;
		}
		zn_nf_counter_add(nf, c_lies, 1);
		if (lie == NULL) {
			mangle(nf, pkts[i]);
			continue;
		}
		rte_pktmbuf_free(pkts[i]);
		pkts[i] = lie;
	}
	if (n > 0)
		handed_last = pkts[n - 1];
}

static void
liar_fini(struct zn_nf *nf)
{
	(void)nf;
	if (flipping) {
		flipping = false;
		pthread_join(flipper, NULL);
	}
}

static const struct zn_nf_ops liar_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "liar",
	.parse_args = liar_parse,
	.init = liar_init,
	.burst = liar_burst,
	.fini = liar_fini,
};

ZN_NF_REGISTER(liar_ops)
