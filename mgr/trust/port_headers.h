/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_PORT_HEADERS_H
#define ZN_PORT_HEADERS_H

/*
 * The manager's port headers of trust groups' buffers (port_headers.c,
 * port_headers_hot.c). A buffer's own header is in its pool's memory, which the
 * group's NFs write at any time: a port's driver sending a packet would
 * read there where its data is (buf_addr, buf_iova: a NIC's DMA), its
 * lengths and chain, and free it through its `pool` field, flags and
 * reference count, all after the worker's check; a driver receiving
 * would write where a free buffer's header says. So each buffer of a
 * group has a header of the manager's, in its private memory
 * (private_heap.c), paired with it for good: it says where the buffer's data
 * is as the manager's map says, and its private area names the buffer.
 * Drivers see only those: a worker sends a group's packet as the headers
 * of its segments (offset and length loaded once and cut to the
 * buffer); a group's port receives into them (a get from their pool
 * takes buffers from the group's pool and hands out their headers) and
 * the worker then writes each buffer's own header from what the driver
 * wrote in the manager's; a driver's free (a put) gives the buffers back
 * through the manager's header of the group's pool (pool_header.c). The NF
 * can still write the data while a NIC reads it: its own packet's bytes,
 * within its buffer. As memif and virtio do: descriptors the device side
 * reads are never in memory the other side writes.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct rte_mempool;
struct zn_owner_map;
struct zn_mgr;
struct zn_worker;

/** A trust group's port headers. */
struct zn_port_headers {
	struct rte_mempool *mp;          /* what drivers get and free with */
	const struct zn_owner_map *d;    /* the group's pool */
	struct rte_mbuf **hdr_of;        /* by the buffer's entry in d->own */
	size_t n_of;
};

/** The buffer header @p h (one of a group's) carries, for good: its
 *  private area names it (written when they were paired, in memory no
 *  NF maps). */
static inline struct rte_mbuf *
zn_port_headers_buf(const struct rte_mbuf *h)
{
	return *(struct rte_mbuf *const *)(const void *)(h + 1);
}

/** Private heap bytes they take (private_heap.c sizes it; 0 without trust
 *  groups or --validate). */
size_t zn_port_headers_bytes(const struct zn_mgr *m);
/** Make every group's (with --validate: owner_map.c, before the ports).
 *  0 or -errno. */
int zn_port_headers_init(struct zn_mgr *m);
/** Free them (after the ports are closed: they freed what they held). */
void zn_port_headers_fini(struct zn_mgr *m);
/** Does port @p p receive into the manager's headers? */
bool zn_port_headers_port(const struct zn_mgr *m, uint16_t p);

/** Their pools' source and sink (lib/common/zn_pool_ops.h), @p arg the
 *  struct zn_port_headers: buffers out of the group's pool as their headers,
 *  headers freed as their buffers back into it. */
int zn_port_headers_take(void *arg, void **objs, unsigned int n);
void zn_port_headers_give(void *arg, void *const *objs, unsigned int n);

/** Of @p pkts[0, n), about to go to a port's driver, each packet of a
 *  trust group's pool replaced by the manager's headers of its segments
 *  (others are left as they are). */
void zn_port_headers_tx(struct zn_worker *w, struct rte_mbuf **pkts,
		  unsigned int n);

/**
 * What a worker received on a port of a group (@p pkts[0, n), headers
 * of @p ph) turned into the group's buffers they carry, each
 * buffer's header written as its pool made it plus what the driver said
 * (offset, length, offload flags, hash...); the headers are free again
 * with them (nothing to give back).
 */
void zn_port_headers_rx(struct zn_worker *w, const struct zn_port_headers *ph,
			struct rte_mbuf **pkts, unsigned int n);

#endif /* ZN_PORT_HEADERS_H */
