/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FLOW_H
#define ZN_FLOW_H

#include <stdint.h>
#include <rte_mbuf.h>

#include <zeronf/flow.h>

/**
 * Parse the flow key of a raw Ethernet frame of @p len bytes. Handles up
 * to 4 VLAN tags (802.1Q, 802.1ad, 0x9100; the outer id is kept), IPv4,
 * IPv6 with its common extension headers, and TCP/UDP/SCTP/UDP-Lite
 * ports. IP fragments and truncated L4 headers get ports 0. Every access is
 * bounds-checked: a malformed packet never causes a read out of bounds.
 * @return 0, or -EINVAL if the frame is not IP or its IP header is cut.
 */
int zn_flow_parse(const uint8_t *p, uint32_t len, struct zn_flow_key *key);

/** zn_flow_parse() without its fast path for plain IPv4 TCP/UDP: the same
 *  result, always by the general walk (for tests). */
int zn_flow_parse_walk(const uint8_t *p, uint32_t len,
		       struct zn_flow_key *key);

/** Symmetric hash of a key (both directions alike). */
uint32_t zn_flow_hash_key(const struct zn_flow_key *key);

/** Symmetric flow hash of a frame: zn_flow_hash_key() of its key, 0 if it
 *  has none (non-IP, cut IP header). */
uint32_t zn_flow_hash_raw(const uint8_t *p, uint32_t len);

/** Same, on the first segment of a packet. */
uint32_t zn_flow_hash_sw(const struct rte_mbuf *m);

/* The first segment's data of @p m and its length, as this process may
 * read them. */
typedef const uint8_t *(*zn_flow_reader_fn)(const struct rte_mbuf *m,
					    uint32_t *len);

/** zn_pkt_flow_hash() in this process reads a packet through @p fn
 *  (NULL: through its buf_addr, data_off and data_len, zn_flow_hash_sw).
 *  The manager, before its workers start: NFs may rewrite those fields
 *  of a packet the manager holds (mgr/trust/owner_map.h zn_owner_map_pkt_data). In
 *  libzeronf (lib/nf/pkt.c), as the hash it serves. */
void zn_flow_set_reader(zn_flow_reader_fn fn);

/** True if the key's source endpoint sorts after its destination (the
 *  order zn_flow_hash_key() and bidirectional tables use). */
bool zn_flow_key_is_reversed(const struct zn_flow_key *key);

#endif /* ZN_FLOW_H */
