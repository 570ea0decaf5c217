/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZERONF_PKT_H
#define ZERONF_PKT_H

/**
 * @file
 * Per-packet metadata and actions.
 *
 * Every packet carries a struct zn_pkt_meta in an mbuf dynamic field
 * (registered by the manager under ZN_PKT_META_DYNFIELD). An NF's burst
 * handler sets one action per packet with the helpers below; the manager
 * reads it when the burst comes back and moves the packet on. The default
 * action of a packet handed to an NF is ZN_ACT_NEXT, so a handler that
 * leaves a packet alone passes it to the next hop of its chain.
 *
 * Handlers must never free, hold or reuse a packet of their burst: the
 * library returns every packet to the manager, and ZN_ACT_DROP is how a
 * packet is dropped (the manager frees it and counts the drop).
 */

#include <stdint.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Name of the mbuf dynamic field holding struct zn_pkt_meta. */
#define ZN_PKT_META_DYNFIELD "zeronf_pkt_meta"

/** What happens to a packet when its NF returns it. */
enum zn_action {
	ZN_ACT_NEXT = 0,       /**< next hop of the packet's chain (default) */
	ZN_ACT_DROP = 1,       /**< drop; the manager frees and counts it */
	ZN_ACT_TO_SERVICE = 2, /**< to an instance of service `dest` */
	ZN_ACT_OUT = 3,        /**< out of port `dest` */
	ZN_ACT_MAX
};

/** chain_pos value of a packet that has not reached its first hop. */
#define ZN_CHAIN_POS_START 0xff

/** Packet metadata, 16 bytes, lives in the mbuf (zero copy). */
struct zn_pkt_meta {
	uint8_t action;     /**< enum zn_action, set by the NF */
	uint8_t chain;      /**< chain id; 0 is the default chain */
	uint8_t chain_pos;  /**< hop now processing the packet */
	uint8_t hops;       /**< NF hops taken so far (loop guard) */
	uint16_t dest;      /**< service id (TO_SERVICE) or port id (OUT) */
	uint16_t in_port;   /**< ingress port, or ZN_PORT_NONE if NF-made */
	uint32_t flow_hash; /**< symmetric flow hash: use zn_pkt_flow_hash() */
	uint32_t flags;     /**< ZN_PKT_F_* */
};

#define ZN_PORT_NONE 0xffff
/** flow_hash is valid. */
#define ZN_PKT_F_HASH_VALID 0x1
/** flow_hash came from the NIC's (symmetric) RSS hash. */
#define ZN_PKT_F_HASH_RSS 0x2
/** Reserved: set by zn_nf_send() on each packet the NF made, and by
 *  zn_pkt_restart_chain() (the manager takes a buffer back once per time
 *  it handed it out, or once if new; a new packet's hop count starts at
 *  0). */
#define ZN_PKT_F_NEW 0x40000000u
/** Reserved (the manager's, chains across hosts): the packet came in
 *  NSH whose TTL, less this host's hop, is in bits 16..21
 *  (ZN_PKT_NSH_TTL_MASK); the next host gets that TTL. */
#define ZN_PKT_F_NSH_TTL 0x00400000u
#define ZN_PKT_NSH_TTL_SHIFT 16
#define ZN_PKT_NSH_TTL_MASK (0x3fu << ZN_PKT_NSH_TTL_SHIFT)

/** Reserved: the flags of a packet made anew, @p flags' with
 *  ZN_PKT_F_NEW set and the NSH TTL of the buffer's earlier use gone
 *  (zn_nf_send(), zn_pkt_restart_chain()). */
static inline uint32_t
zn_pkt_flags_new(uint32_t flags)
{
	return (flags & ~(ZN_PKT_F_NSH_TTL | ZN_PKT_NSH_TTL_MASK)) |
	       ZN_PKT_F_NEW;
}

/** Offset of the metadata dynfield; set by zn_nf_open() / the manager. */
extern int zn_pkt_meta_offset;

static inline struct zn_pkt_meta *
zn_pkt_meta(struct rte_mbuf *m)
{
	return RTE_MBUF_DYNFIELD(m, zn_pkt_meta_offset, struct zn_pkt_meta *);
}

/** Pass the packet to the next hop of its chain. */
static inline void
zn_pkt_next(struct rte_mbuf *m)
{
	zn_pkt_meta(m)->action = ZN_ACT_NEXT;
}

/** Drop the packet (the manager frees it and counts an "nf" drop). */
static inline void
zn_pkt_drop(struct rte_mbuf *m)
{
	zn_pkt_meta(m)->action = ZN_ACT_DROP;
}

/** Send the packet to an instance of service @p service_id. The chain
 *  position is kept, so a later NEXT continues after the current hop. */
static inline void
zn_pkt_to_service(struct rte_mbuf *m, uint16_t service_id)
{
	struct zn_pkt_meta *meta = zn_pkt_meta(m);

	meta->action = ZN_ACT_TO_SERVICE;
	meta->dest = service_id;
}

/** Transmit the packet on port @p port_id. */
static inline void
zn_pkt_out(struct rte_mbuf *m, uint16_t port_id)
{
	struct zn_pkt_meta *meta = zn_pkt_meta(m);

	meta->action = ZN_ACT_OUT;
	meta->dest = port_id;
}

/** Restart the packet's chain: NEXT then goes to hop 0 again, as a packet
 *  the NF made (ZN_PKT_F_NEW): its hop count starts again, the NF being
 *  its source, and so does the TTL it would carry to another host. For
 *  NFs that re-circulate packets on purpose (such as the speed tester);
 *  the loop guard stops a packet only an NF's routing (NEXT, TO_SERVICE)
 *  keeps sending round. */
static inline void
zn_pkt_restart_chain(struct rte_mbuf *m)
{
	struct zn_pkt_meta *meta = zn_pkt_meta(m);

	meta->chain_pos = ZN_CHAIN_POS_START;
	meta->hops = 0;
	meta->action = ZN_ACT_NEXT;
	meta->flags = zn_pkt_flags_new(meta->flags);
}

/** Initialise the metadata of a packet an NF created itself (its flow
 *  hash is computed when first needed). */
static inline void
zn_pkt_meta_init(struct rte_mbuf *m)
{
	struct zn_pkt_meta *meta = zn_pkt_meta(m);

	*meta = (struct zn_pkt_meta){
		.action = ZN_ACT_NEXT,
		.chain_pos = ZN_CHAIN_POS_START,
		.in_port = ZN_PORT_NONE,
	};
}

/** Set the packet's flow hash (e.g. one an NF already computed). */
static inline void
zn_pkt_set_flow_hash(struct rte_mbuf *m, uint32_t hash)
{
	struct zn_pkt_meta *meta = zn_pkt_meta(m);

	meta->flow_hash = hash;
	meta->flags |= ZN_PKT_F_HASH_VALID;
}

/** Software flow hash of the packet, stored in its metadata (slow path
 *  of zn_pkt_flow_hash()). */
uint32_t zn_pkt_flow_hash_compute(struct rte_mbuf *m);

/**
 * The packet's symmetric flow hash: both directions of a connection get the
 * same value. Computed at most once per packet - by the NIC (RSS with a
 * symmetric key) or in software the first time anyone needs it - and kept
 * in the metadata for every later hop, manager or NF.
 */
static inline uint32_t
zn_pkt_flow_hash(struct rte_mbuf *m)
{
	const struct zn_pkt_meta *meta = zn_pkt_meta(m);

	if (__builtin_expect((meta->flags & ZN_PKT_F_HASH_VALID) != 0, 1))
		return meta->flow_hash;
	return zn_pkt_flow_hash_compute(m);
}

#ifdef __cplusplus
}
#endif

#endif /* ZERONF_PKT_H */
