/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_SHADOW_H
#define ZN_SHADOW_H

/*
 * Headers of the manager's for what port drivers send of trust groups'
 * packets (shadow.c, shadow_hot.c). A packet's header is in its pool's
 * memory, which the pool's NFs write at any time: a driver sending it
 * would read where its data is (buf_addr, buf_iova: a NIC's DMA), its
 * lengths, its chain, and free it through its `pool` field, its flags
 * (an attached buffer's free callback) and its reference count, all
 * after the worker's check. So a worker sends a group's packet as
 * headers of its own, from a pool in its private memory (privmem.c),
 * each with that segment's buffer attached as external data
 * (rte_pktmbuf_attach_extbuf: where and how long from the manager's map
 * of the pool, offset and length loaded once and cut to the buffer); the
 * driver's free of such a header gives the segment back to its pool
 * through the manager's own header of it (pool_twin.c). The NF can still
 * write the data while the NIC reads it: its own packet's bytes, within
 * its buffer. As memif and virtio do: descriptors the device side reads
 * are never in memory the other side writes.
 */

#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct zn_desc_pool;
struct zn_mgr;
struct zn_worker;

/** Private heap bytes the headers take (privmem.c sizes it; 0 without
 *  trust groups or --validate). After rte_eal_init. */
size_t zn_shadow_bytes(const struct zn_mgr *m);
/** Make the pool of headers (after privmem, with --validate and trust
 *  groups). 0 or -errno. */
int zn_shadow_init(struct zn_mgr *m);
/** The maps the drivers' frees find a segment's pool with (hot file's
 *  own pointer; shadow.c sets it). */
void zn_shadow_set_maps(const struct zn_desc_pool *desc);
/** Free it (after the ports are closed: they free what they held). */
void zn_shadow_fini(struct zn_mgr *m);

/**
 * Of @p pkts[0, n), about to go to a port's driver, each packet of a
 * trust group's pool replaced by the manager's headers of it (others
 * are left as they are). @return how many are ready, a prefix: short
 * when the headers ran out (counted; the rest stay the worker's, sent
 * later as a full port's would be).
 */
unsigned int zn_shadow_swap(struct zn_worker *w, struct rte_mbuf **pkts,
			    unsigned int n);

#endif /* ZN_SHADOW_H */
