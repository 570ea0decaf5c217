/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LINK_H
#define ZN_LINK_H

/*
 * NF -> NF links, control side (link.c). A link is a single-producer,
 * single-consumer ring from one NF to another (struct zn_link, zn_shm.h):
 * an NF hands a packet to the next NF through it without a worker
 * (lib/nf/nf_tx.c). Why one ring per pair, not the receiver's RX ring
 * with many producers: a producer of a multi-producer rte_ring that dies
 * or is descheduled between reserving its slots and publishing them
 * stops every other producer (they wait for the tail in order); with one
 * producer per ring a dead NF leaves a ring whose tail says exactly what
 * it handed over (the ledger's commit point), and a descheduled one stops
 * only itself. Links come from a pool made at start (no hugepage
 * allocation while NFs come and go) and are given when an NF asks
 * (ZN_MSG_LINK). Control thread only.
 */

#include <stdint.h>

struct rte_mbuf;
struct zn_mgr;
struct zn_nf_slot;

/** The NF in @p slot asked for links (its hstats.want): give what can be
 *  given (both ends running, a free link, room in the receiver's list). */
void zn_link_request(struct zn_mgr *m, unsigned int slot);
/** The NF in @p slot is gone (its process can no longer run) and no
 *  reader routes to it any more (published, synchronised): free what
 *  waits in the links into it (counted as its nf_exit drops through
 *  @p drop), take those links back, and leave its links out to drain
 *  into their receivers. */
void zn_link_nf_gone(struct zn_mgr *m, unsigned int slot,
		     void (*drop)(struct zn_mgr *m, struct zn_nf_slot *s,
				  struct rte_mbuf **pkts, unsigned int n));
/** Take back drained links whose sender is gone (periodic). */
void zn_link_gc(struct zn_mgr *m);
/** How full the NF in @p slot's input is, 0..1: the fullest of its RX
 *  ring and the links into it (a sender waits on the ring it writes).
 *  What autoscaling calls its RX rings' occupancy (policy.c, nf.list
 *  "input_fill"). */
double zn_link_input_fill(const struct zn_mgr *m, unsigned int slot);
/** Links in use (for stats). */
unsigned int zn_link_count(const struct zn_mgr *m);
/** Link @p l as the manager gave it (not the shared table, which NFs can
 *  write); NULL if out of range. */
const struct zn_link *zn_link_own(const struct zn_mgr *m, unsigned int l);

#endif /* ZN_LINK_H */
