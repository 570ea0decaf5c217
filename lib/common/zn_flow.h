/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FLOW_H
#define ZN_FLOW_H

#include <stdint.h>
#include <rte_mbuf.h>

/**
 * Symmetric software flow hash of a packet: both directions of a
 * connection get the same value. Parses Ethernet with up to 4 VLAN tags
 * (802.1Q, 802.1ad, 0x9100), IPv4, IPv6 with its common extension headers,
 * and TCP/UDP/SCTP/UDP-Lite ports. IP fragments hash on addresses and
 * protocol only, so every fragment of a datagram lands together.
 *
 * Only the first segment is read and every access is bounds-checked, so a
 * truncated or malformed packet hashes on what can be parsed and never
 * reads out of bounds (non-IP: 0, malformed IP: its L2/L3 prefix).
 */
uint32_t zn_flow_hash_sw(const struct rte_mbuf *m);

/** Same, on a raw frame of @p len bytes (used by tests and NFs). */
uint32_t zn_flow_hash_raw(const uint8_t *p, uint32_t len);

#endif /* ZN_FLOW_H */
