/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_POOL_ACCT_H
#define ZN_POOL_ACCT_H

/*
 * What NFs take from their packet pool themselves (rte_pktmbuf_alloc and
 * kin), bounded and returned when they are gone (pool_acct.c): NFs of no
 * group from the shared pool, an NF of a trust group from its group's.
 * Each buffer of a pool has a tag byte where the pool's NFs map it (the
 * EAL's memory; the group's file): the slot + 1 of the NF whose mempool
 * driver took it out of the pool's ring and that keeps it, 0 otherwise
 * (lib/common/zn_pool_ops.h). The NF's
 * driver tags what it takes and counts it (slot alloc.held), refusing a
 * take past the NF's quota (ctl.pool_quota, --nf-pool-quota); what goes
 * back to the ring, from any process, is untagged first; so is what the
 * NF hands on as packets (the ledger answers for those). The NF's lcore
 * cache serves gets and puts no driver sees: what the refills put there
 * is tagged (it is the NF's), and what libzeronf frees there is claimed
 * as the NF's once it allocates (lib/nf/nf_acct.c). When the NF is gone,
 * its cache is flushed (untagged: free), and the buffers still tagged
 * with its slot are the ones it kept: put back.
 *
 * The tags are in memory the pool's NFs write (as the pool's ring and
 * headers are): a count an NF keeps for itself, not a boundary between
 * NFs that trust each other (those of no group; those of one group); the
 * manager puts back only buffers its own map says are the pool's (a tag
 * names a buffer, never an address).
 */

#include <stdbool.h>
#include <stdint.h>

struct zn_mgr;
struct rte_mbuf;
struct zn_shm_hdr;


/** Bytes of tags (and starts) a pool of buffers of @p elt bytes (header
 *  and trailer included) over @p span bytes of memory needs. */
uint64_t zn_pool_acct_bytes(uint64_t span, uint32_t elt);

/** Where the NFs of pool @p pool (0: the shared one, g + 1: group g's)
 *  find its tags, written into @p h's acct_* (zeros: not kept). */
void zn_pool_acct_view(const struct zn_mgr *m, unsigned int pool,
		       struct zn_shm_hdr *h);

/** The quota an NF of pool @p pool registering now gets
 *  (ctl.pool_quota; 0: none). */
uint32_t zn_pool_acct_quota(const struct zn_mgr *m, unsigned int pool);

/** Flush the lcore caches of the pools of the NF that had slot @p slot
 *  (it is gone; the next NF in the slot has the same lcore id). */
void zn_pool_acct_nf_caches(struct zn_mgr *m, unsigned int slot);

/** Is @p obj a buffer of the pool of the NF in @p slot (this process's
 *  map of it; a pool not mapped: any non-NULL)? */
bool zn_pool_acct_is_buf(const struct zn_mgr *m, unsigned int slot,
			 const void *obj);

/** The NF in @p slot is gone; @p pkts[0, n) are what its ledger named
 *  (freed or left by reclaim.c), or what the manager put back for it
 *  otherwise: untagged, not put back twice. */
void zn_pool_acct_forget(struct zn_mgr *m, unsigned int slot,
			 struct rte_mbuf *const *pkts, unsigned int n);

/** Put back what the gone NF in @p slot took and kept, its lcore's
 *  caches of the pools flushed first if there is any (else registry.c
 *  flushes them when it frees the slot, as before tags). @return how
 *  many. Control thread, after
 *  zn_pool_acct_forget and the ledger's reclaim (which reads that
 *  cache). */
unsigned int zn_pool_acct_sweep(struct zn_mgr *m, unsigned int slot);

#endif /* ZN_POOL_ACCT_H */
