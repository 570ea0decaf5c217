/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZERONF_FLOW_H
#define ZERONF_FLOW_H

/**
 * @file
 * Flow keys and flow tables, for the manager and for NFs.
 *
 * A flow key is the 5-tuple of a packet plus its outer VLAN id, for IPv4
 * and IPv6. A flow table (`zn_ft_*`) maps keys to per-entry user data of a
 * fixed size, on DPDK's rte_hash: capacity fixed at creation (millions of
 * flows), lookups by the packet's stored flow hash (computed once per
 * packet, never again), bursts, iteration and expiry by idle timeout.
 *
 * Bidirectional tables (ZN_FT_F_BIDIR) store one entry per connection: a
 * key and its reverse find the same entry, and lookups tell which
 * direction the packet goes relative to the first one seen.
 *
 * Errors: functions returning int return >= 0 on success and a negative
 * errno value on failure; zn_ft_create() returns NULL and sets rte_errno.
 * A table is used by one thread at a time unless created with
 * ZN_FT_F_CONCURRENT: then one writer thread and any number of lock-free
 * reader threads, which report quiescent states to the DPDK RCU variable
 * given at creation; a deleted entry's slot is reused only after every
 * reader has passed one.
 */

#include <stdbool.h>
#include <stdint.h>
#include <rte_mbuf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A flow: 40 bytes, padding-free, so it can be hashed and compared as
 *  bytes. IPv4 addresses use the first 4 bytes of src/dst (the rest 0). */
struct zn_flow_key {
	uint8_t ip_version; /**< 4 or 6 */
	uint8_t proto;      /**< IP protocol (after IPv6 extension headers) */
	uint16_t vlan;      /**< outer VLAN id, 0 if untagged */
	uint16_t src_port;  /**< host order; 0 for protocols without ports */
	uint16_t dst_port;
	uint8_t src[16];
	uint8_t dst[16];
};

/**
 * Parse a packet's flow key (first segment, bounds-checked).
 * @return 0, or -EINVAL for a non-IP or malformed packet. IP fragments get
 *   ports 0 (only the first fragment carries them).
 */
int zn_flow_key_from_pkt(const struct rte_mbuf *m, struct zn_flow_key *key);

/** The key of the other direction of the same flow. */
void zn_flow_key_reverse(const struct zn_flow_key *key,
			 struct zn_flow_key *rev);

/** Symmetric hash of a key: a key and its reverse hash alike, and a key
 *  parsed from a packet hashes to that packet's software flow hash
 *  (zn_pkt_flow_hash() without NIC RSS). */
uint32_t zn_flow_key_hash(const struct zn_flow_key *key);

/** Format as "tcp 10.0.0.1:80 -> 10.0.0.2:5000 vlan 3". */
int zn_flow_key_format(const struct zn_flow_key *key, char *buf,
		       size_t len);

/**
 * Parse an address prefix, "10.0.0.0/8" or "2001:db8::/32", or a plain
 * address (its full length): the one parser of the flow director's
 * matches, the router NF's routes and `zeronf validate` (through
 * `zeronf-mgr --check`). @p addr gets 16 bytes (IPv4 in the first 4).
 * @return the IP version (4 or 6), or -EINVAL (not an address, or a
 *   length past 32 or 128).
 */
int zn_ip_prefix_parse(const char *s, uint8_t addr[16], uint8_t *len);

/* ---------------------------------------------------------------------- */

struct zn_ft;

/** One entry per connection: a key and its reverse share the entry. */
#define ZN_FT_F_BIDIR 0x1
/** One writer and lock-free readers, with opts.rcu (see above). */
#define ZN_FT_F_CONCURRENT 0x2

struct rte_rcu_qsbr;

struct zn_ft_opts {
	size_t sz;              /**< sizeof(struct zn_ft_opts) */
	const char *name;       /**< unique among the manager's processes
				 * (DPDK names are shared), <= 20 bytes;
				 * in an NF the table is tracked for it
				 * (zn_nf_obj_track) */
	uint32_t capacity;      /**< flows; adds never fail below it */
	uint32_t data_size;     /**< bytes of user data per entry */
	uint64_t idle_timeout_ns; /**< 0: entries never expire */
	uint32_t flags;         /**< ZN_FT_F_* */
	int socket;             /**< NUMA socket, or -1 for any */
	struct rte_rcu_qsbr *rcu; /**< ZN_FT_F_CONCURRENT: readers' RCU */
};

#define ZN_FT_OPTS(...) \
	((struct zn_ft_opts){ .sz = sizeof(struct zn_ft_opts), .socket = -1, \
			      __VA_ARGS__ })

/** Result of a lookup or add. */
struct zn_ft_hit {
	int32_t index;   /**< entry index, 0..capacity-1 */
	bool reverse;    /**< BIDIR: the key is the entry's reverse */
	bool created;    /**< zn_ft_add: the entry is new */
	void *data;      /**< the entry's user data (data_size bytes) */
};

struct zn_ft *zn_ft_create(const struct zn_ft_opts *opts);
void zn_ft_free(struct zn_ft *ft);

/**
 * Find @p key (whose zn_flow_key_hash() or packet flow hash is @p hash).
 * Marks the entry used at @p now_ns (for idle expiry; 0: do not touch).
 * @return entry index, or -ENOENT.
 */
int zn_ft_lookup(struct zn_ft *ft, const struct zn_flow_key *key,
		 uint32_t hash, uint64_t now_ns, struct zn_ft_hit *hit);

/**
 * Look up @p n keys (at most 64). hits[i].index is -ENOENT for a miss.
 * @return number of hits.
 */
int zn_ft_lookup_burst(struct zn_ft *ft, const struct zn_flow_key **keys,
		       const uint32_t *hashes, unsigned int n, uint64_t now_ns,
		       struct zn_ft_hit *hits);

/**
 * Add @p key, or find it if present (hit->data then points to the existing
 * data; new entries' data is zeroed). @return entry index, or -ENOSPC.
 */
int zn_ft_add(struct zn_ft *ft, const struct zn_flow_key *key,
	      uint32_t hash, uint64_t now_ns, struct zn_ft_hit *hit);

/** Remove @p key. @return 0 or -ENOENT. */
int zn_ft_del(struct zn_ft *ft, const struct zn_flow_key *key,
	      uint32_t hash);

/**
 * Iterate: start with *cursor = 0; each call returns the next entry's
 * index and its key and data, until -ENOENT. Not with concurrent adds.
 */
int zn_ft_iterate(struct zn_ft *ft, uint32_t *cursor,
		  const struct zn_flow_key **key, void **data);

/**
 * Remove entries idle for more than the table's idle timeout, examining at
 * most @p budget entries from where the previous call stopped (so expiry
 * can be spread over time). Calls @p cb (if not NULL) before removing each.
 * @return entries removed.
 */
int zn_ft_expire(struct zn_ft *ft, uint64_t now_ns, uint32_t budget,
		 void (*cb)(const struct zn_flow_key *key, void *data,
			    void *arg),
		 void *arg);

/** Entries in the table. */
uint32_t zn_ft_count(const struct zn_ft *ft);

/** Last-use time (ns) of entry @p index. */
uint64_t zn_ft_last_seen(const struct zn_ft *ft, int32_t index);

#ifdef __cplusplus
}
#endif

#endif /* ZERONF_FLOW_H */
