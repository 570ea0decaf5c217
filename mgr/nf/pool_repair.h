/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_POOL_REPAIR_H
#define ZN_POOL_REPAIR_H

/*
 * A dead NF's operation on its pool's free ring, finished (pool_repair.c).
 * The ring is shared by the manager's threads and the pool's NFs, each
 * claiming a range by moving a head, then committing it by moving the
 * tail once the earlier ranges are committed (lib/nf/nf_pool_ring.c). An
 * NF that dies between the two left its range half written and every
 * later claim waiting for its commit; one that dies while its cache's
 * content goes to the ring leaves the cache listing what the ring has
 * (flushed again: buffers twice in the pool). Its record (struct
 * zn_pool_op, in its slot) says which range is its and what goes there.
 */

struct zn_mgr;

/** Finish or undo the ring operations the gone NF of @p slot was in:
 *  a put's range written with what it was putting and committed in turn
 *  (its cache's length dropped as the NF would have), a get's range
 *  committed and what it held put back (what it tagged as its own is
 *  left to zn_pool_acct_sweep). Control thread, first thing when the NF
 *  is gone (before anything waits for the NFs, which may be waiting for
 *  its commit, or reads or flushes its cache). @return the operations
 *  finished. */
unsigned int zn_pool_repair_nf(struct zn_mgr *m, unsigned int slot);

#endif /* ZN_POOL_REPAIR_H */
