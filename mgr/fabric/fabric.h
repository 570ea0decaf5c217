/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FABRIC_H
#define ZN_FABRIC_H

/*
 * Chains across hosts (docs/multihost.md): this host's place in the
 * fabric (one of its ports, its host id and IPv4 address) and its peers
 * (the other hosts: address, encapsulation, MTU), fabric.c; the hot
 * path, fabric_hot.c: the packets of a hop on another host leave through
 * the fabric port in NSH (lib/common/zn_nsh.h) for that host, and what
 * comes in on the fabric port in NSH from a peer goes on at the hop its
 * service index names.
 *
 * A chain's hop on host H is a step with host H ("svc:2@H"); host ids are
 * the deployment's, the same on every host. The service path identifier
 * of a chain is its path's (path.set, mgr/flow/fdir_path.c), the same on
 * every host of it; the service index a packet carries to the next host
 * is 255 less the position of the hop it runs there, so it falls by one
 * at each hop, as RFC 8300 has it.
 *
 * Workers read the fabric as an immutable view (struct zn_fabric_view,
 * from the routing snapshot): a change publishes a new one and frees the
 * old after the workers passed a quiescent state.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_ether.h>

#include <zeronf/step.h>

#include "../../lib/common/zn_nsh.h"
#include "../../lib/common/zn_route_hot.h"
#include "../../lib/shm/zn_shm.h"

struct zn_mgr;
struct zn_worker;
struct rte_mbuf;

#define ZN_FABRIC_HOSTS (ZN_STEP_MAX_HOST + 1) /* by host id; 0 unused */
#define ZN_FABRIC_MTU_DEFAULT 1500
#define ZN_FABRIC_PROBE_MS 1000  /* an ARP request to each peer this often */
#define ZN_FABRIC_DEAD_MS 3500   /* a peer not heard for this long: down */

/* A peer as workers read it. */
struct zn_fabric_peer {
	uint8_t up;       /* configured, not marked down, heard lately (or
			   * not probed: Ethernet), its MAC address known */
	uint8_t probe;    /* probe it by ARP (it has an IPv4 address) */
	uint8_t nsh;      /* 1: a host of ZeroNF's (NSH); 0: a plain VXLAN
			   * end point (a path ends there) */
	uint16_t mtu;     /* the fabric's IP MTU towards it (Ethernet
			   * encapsulation: its frames' payload) */
	uint16_t outer;   /* bytes before the inner frame, all headers */
	struct zn_nsh_tunnel t;
};

/* A worker's counts of one peer. */
struct zn_fabric_pstats {
	uint64_t tx, tx_bytes;  /* sent to it, inner frames */
	uint64_t rx, rx_bytes;  /* taken from it, inner frames */
	uint64_t mtu_drops;     /* too large for it (nsh_mtu) */
	uint64_t down_drops;    /* for it while down (peer_down) */
	/* Liveness, read by the control thread (fabric.c): the tsc when it
	 * was last heard (an ARP reply, or a tunnel packet from it), and the
	 * MAC address its last ARP reply gave (48 bits, stored whole) */
	uint64_t seen;
	uint64_t mac;
};

/* A worker's counts of the fabric port's ingress. */
struct zn_fabric_wstats {
	uint64_t malformed;     /* nsh_malformed */
	uint64_t no_path;       /* nsh_no_path: unknown path or index */
	uint64_t stranger;      /* nsh_no_path: NSH or VXLAN from no peer,
				 * or not addressed to this host */
	uint64_t ttl;           /* nsh_ttl */
	uint64_t arp;           /* ARP requests for our address answered */
	uint64_t probes;        /* ARP requests sent to peers */
	uint64_t answers;       /* their answers, taken (not classified) */
	struct zn_fabric_pstats peer[ZN_FABRIC_HOSTS];
} __rte_cache_aligned;

struct zn_fabric_view {
	uint16_t port;          /* the fabric port */
	uint8_t host;           /* this host's id */
	uint8_t n_peers;
	uint32_t ip;            /* this host's fabric address (network order) */
	struct rte_ether_addr mac; /* the fabric port's */
	uint8_t peers[ZN_STEP_MAX_HOST]; /* configured peers' ids */
	struct zn_fabric_wstats *wst; /* [worker] (fabric.c owns them) */
	uint64_t probe_cycles;  /* tsc between probes */
	struct zn_fabric_peer peer[ZN_FABRIC_HOSTS];
};

/** The fabric port of view @p v. */
static inline uint16_t
zn_fabric_port(const struct zn_fabric_view *v)
{
	return v->port;
}

/* ---- control (fabric.c) ---- */

/** May a chain name a hop on host @p host? 0 (a peer, up or down), or
 *  -EINVAL with the reason in @p err: no fabric, this host's own id, no
 *  such peer, or a plain VXLAN peer named other than by the chain's last
 *  hop "port:0@H" (@p last: the step is the chain's last; @p type, its
 *  type). */
int zn_fabric_step_check(const struct zn_mgr *m, const struct zn_step *step,
			 bool last, char *err, size_t errlen);

/* ---- hot (fabric_hot.c) ---- */

/**
 * The fabric port's ingress, after the packets' metadata is set: what
 * this host ends is taken off. NSH from a peer for this host: its
 * encapsulation removed, the packet's chain, position, flow hash and TTL
 * set from it (routed, not classified); plain VXLAN from a plain peer:
 * decapsulated, then classified as the fabric port's; ARP requests for
 * this host's address: answered out of the fabric port; peers' answers to
 * its probes: taken (freed, counted: fabric.show's arp_answers_taken);
 * anything else that is not NSH: classified as any port's packet. What is malformed or
 * names nothing here is dropped and counted (the drop reasons nsh_*).
 * Reorders @p pkts: the routed ones first, in order, then those to
 * classify, in order. @return how many are kept, *@p n_routed of them
 * routed.
 */
unsigned int zn_fabric_ingress(struct zn_worker *w, const struct zn_route *rt,
			       struct rte_mbuf **pkts, unsigned int n,
			       unsigned int *n_routed);

/**
 * Liveness probes, made by the worker that polls the fabric port's RX
 * queue 0 once per @p v's probe_cycles and at once for a new view: an
 * ARP request for each peer's address, from this host's, into @p pkts
 * (buffers of the manager's pool: the caller holds and sends them out of
 * the fabric port). The answers come back through zn_fabric_ingress,
 * which notes the peer heard and its MAC address. @return how many.
 */
unsigned int zn_fabric_probes(struct zn_worker *w,
			      const struct zn_fabric_view *v,
			      struct rte_mbuf **pkts, unsigned int max);

/**
 * Encapsulate @p n packets, all of decision @p r (ZN_RES_REMOTE), for
 * its host, in place (in their headroom). Those that cannot go (no
 * fabric or peer, no path, too large for the peer's MTU) are dropped and
 * counted into @p src_drops too. @return how many remain, compacted at
 * the start of @p pkts.
 */
unsigned int zn_fabric_encap(struct zn_worker *w, const struct zn_route *rt,
			     const struct zn_res *r, struct rte_mbuf **pkts,
			     unsigned int n, uint64_t *src_drops);

#endif /* ZN_FABRIC_H */
