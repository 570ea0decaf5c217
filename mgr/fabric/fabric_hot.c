/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Chains across hosts, the hot path (fabric.h): the fabric port's
 * ingress (tunnels ended, ARP for this host's address answered) and the
 * encapsulation of packets whose next hop is on another host. Counters
 * are the worker's own.
 */

#include <errno.h>
#include <stddef.h>
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include <zeronf/pkt.h>

#include "fabric.h"
#include "../core/mgr.h"
#include "../datapath/worker.h"
#include "../trust/owner_map.h"

/* ---- ingress ---- */

enum verdict { ROUTED, CLASSIFY, DROPPED, TAKEN };

/* Free @p m, dropped for @p why: counted in the totals, in its source's
 * counters @p src_drops (a port's or an NF's) and in @p count, the
 * fabric's own (if not NULL). */
static void
drop(struct zn_worker *w, struct rte_mbuf *m, enum zn_drop_reason why,
     uint64_t *src_drops, uint64_t *count)
{
	zn_owner_map_drop(w->mgr->trust.owner_maps, &m, 1);
	w->shm->stats.drops[why]++;
	src_drops[why]++;
	if (count != NULL)
		(*count)++;
}

/* A drop at the fabric port's ingress. */
static void
in_drop(struct zn_worker *w, const struct zn_fabric_view *v,
	struct rte_mbuf *m, enum zn_drop_reason why, uint64_t *count)
{
	drop(w, m, why, w->shm->port[v->port].drops, count);
}

static const struct zn_fabric_peer *
peer_of_ip(const struct zn_fabric_view *v, uint32_t ip, unsigned int *host)
{
	for (unsigned int i = 0; i < v->n_peers; i++) {
		const struct zn_fabric_peer *p = &v->peer[v->peers[i]];

		if (p->t.dst_ip == ip && p->t.encap != ZN_NSH_ETHERNET) {
			*host = v->peers[i];
			return p;
		}
	}
	return NULL;
}

static const struct zn_fabric_peer *
peer_of_mac(const struct zn_fabric_view *v, const uint8_t *mac,
	    unsigned int *host)
{
	for (unsigned int i = 0; i < v->n_peers; i++) {
		const struct zn_fabric_peer *p = &v->peer[v->peers[i]];

		if (p->t.encap == ZN_NSH_ETHERNET &&
		    memcmp(p->t.dst_mac, mac, 6) == 0) {
			*host = v->peers[i];
			return p;
		}
	}
	return NULL;
}

/* The outer IPv4 destination of a tunnel frame (after its Ethernet
 * header and at most one VLAN tag: zn_nsh_decap and zn_vxlan_decap
 * accepted it so). */
static uint32_t
outer_dst_ip(const uint8_t *p)
{
	size_t off = RTE_ETHER_HDR_LEN;
	uint32_t ip;

	if (p[12] == 0x81 && p[13] == 0x00)
		off += 4;
	memcpy(&ip, p + off + offsetof(struct rte_ipv4_hdr, dst_addr), 4);
	return ip;
}

/* ARP on the fabric: a request for this host's address becomes its
 * answer, sent back out of the fabric port (ROUTED); a peer's answer to
 * our probe (zn_fabric_probes) says it is there and its MAC address, and
 * is taken here, as a host's kernel takes the answers to its own requests
 * (TAKEN: freed, counted); anything else goes on as any packet
 * (CLASSIFY). */
static enum verdict
arp_in(struct zn_worker *w, const struct zn_fabric_view *v,
       struct rte_mbuf *m)
{
	struct rte_ether_hdr *e = rte_pktmbuf_mtod(m, struct rte_ether_hdr *);
	struct rte_arp_hdr *a;
	struct zn_pkt_meta *meta;
	unsigned int host;

	if (e->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP) ||
	    rte_pktmbuf_data_len(m) < sizeof(*e) + sizeof(*a))
		return CLASSIFY;
	a = (struct rte_arp_hdr *)(e + 1);
	if (a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    a->arp_hlen != 6 || a->arp_plen != 4 ||
	    a->arp_data.arp_tip != v->ip)
		return CLASSIFY;
	if (a->arp_opcode == rte_cpu_to_be_16(RTE_ARP_OP_REPLY)) {
		struct zn_fabric_pstats *ps;
		uint64_t mac = 0;

		if (peer_of_ip(v, a->arp_data.arp_sip, &host) == NULL)
			return CLASSIFY;
		ps = &v->wst[w->id].peer[host];
		memcpy(&mac, &a->arp_data.arp_sha, 6);
		__atomic_store_n(&ps->mac, mac, __ATOMIC_RELAXED);
		__atomic_store_n(&ps->seen, w->rc.now, __ATOMIC_RELAXED);
		zn_owner_map_drop(w->mgr->trust.owner_maps, &m, 1);
		v->wst[w->id].answers++;
		return TAKEN;
	}
	if (a->arp_opcode != rte_cpu_to_be_16(RTE_ARP_OP_REQUEST))
		return CLASSIFY;
	a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REPLY);
	a->arp_data.arp_tha = a->arp_data.arp_sha;
	a->arp_data.arp_tip = a->arp_data.arp_sip;
	a->arp_data.arp_sha = v->mac;
	a->arp_data.arp_sip = v->ip;
	e->dst_addr = e->src_addr;
	e->src_addr = v->mac;
	meta = zn_pkt_meta(m);
	meta->action = ZN_ACT_OUT;
	meta->dest = v->port;
	v->wst[w->id].arp++;
	return ROUTED;
}

unsigned int
zn_fabric_probes(struct zn_worker *w, const struct zn_fabric_view *v,
		 struct rte_mbuf **pkts, unsigned int max)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < v->n_peers && n < max; i++) {
		const struct zn_fabric_peer *p = &v->peer[v->peers[i]];
		struct rte_ether_hdr *e;
		struct rte_arp_hdr *a;
		struct rte_mbuf *m;

		if (!p->probe)
			continue;
		m = rte_pktmbuf_alloc(w->mgr->pool);
		if (m == NULL)
			break; /* the pool is short: the next round */
		e = (struct rte_ether_hdr *)rte_pktmbuf_append(
			m, sizeof(*e) + sizeof(*a));
		a = (struct rte_arp_hdr *)(e + 1);
		memset(&e->dst_addr, 0xff, sizeof(e->dst_addr));
		e->src_addr = v->mac;
		e->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
		a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
		a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
		a->arp_hlen = 6;
		a->arp_plen = 4;
		a->arp_opcode = rte_cpu_to_be_16(RTE_ARP_OP_REQUEST);
		a->arp_data.arp_sha = v->mac;
		a->arp_data.arp_sip = v->ip;
		memset(&a->arp_data.arp_tha, 0, sizeof(a->arp_data.arp_tha));
		a->arp_data.arp_tip = p->t.dst_ip;
		*zn_pkt_meta(m) = (struct zn_pkt_meta){
			.action = ZN_ACT_OUT, .dest = v->port,
			.chain_pos = ZN_CHAIN_POS_START,
			.in_port = ZN_PORT_NONE };
		pkts[n++] = m;
	}
	v->wst[w->id].probes += n;
	return n;
}

/* The chain of service path @p spi (rt->spi_map), or -1. */
static int
chain_of_spi(const struct zn_route *rt, uint32_t spi)
{
	for (unsigned int i = zn_spi_slot(spi), k = 0; k < ZN_SPI_MAP_SLOTS;
	     k++, i = (i + 1) & (ZN_SPI_MAP_SLOTS - 1)) {
		if (rt->spi_map[i].spi == spi)
			return (int)rt->spi_map[i].chain;
		if (rt->spi_map[i].spi == 0)
			break;
	}
	return -1;
}

/* A packet in NSH (zn_nsh_decap said so): its path's hop here, or a
 * drop. */
static enum verdict
nsh_in(struct zn_worker *w, const struct zn_route *rt,
       const struct zn_fabric_view *v, struct rte_mbuf *m,
       enum zn_nsh_encap encap, const struct zn_nsh *h, size_t off,
       uint32_t src_ip)
{
	struct zn_fabric_wstats *ws = &v->wst[w->id];
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	struct zn_pkt_meta *meta = zn_pkt_meta(m);
	const struct zn_chain *c;
	unsigned int host = 0, pos;
	uint32_t hash;
	uint8_t tenant, flags;
	int chain;

	if (encap == ZN_NSH_ETHERNET ?
	    (memcmp(p, &v->mac, 6) != 0 || peer_of_mac(v, p + 6, &host) == NULL) :
	    (outer_dst_ip(p) != v->ip || peer_of_ip(v, src_ip, &host) == NULL ||
	     !v->peer[host].nsh)) {
		in_drop(w, v, m, ZN_DROP_NSH_NO_PATH, &ws->stranger);
		return DROPPED;
	}
	if (h->next_proto != ZN_NSH_NP_ETH) {
		in_drop(w, v, m, ZN_DROP_NSH_MALFORMED, &ws->malformed);
		return DROPPED;
	}
	chain = h->si != 0 ? chain_of_spi(rt, h->spi) : -1;
	pos = ZN_NSH_SI_FIRST - h->si;
	c = chain >= 0 ? &rt->chains[chain] : NULL;
	if (c == NULL || pos >= c->len || c->steps[pos].host != 0) {
		in_drop(w, v, m, ZN_DROP_NSH_NO_PATH, &ws->no_path);
		return DROPPED;
	}
	if (h->ttl <= 1) {
		in_drop(w, v, m, ZN_DROP_NSH_TTL, &ws->ttl);
		return DROPPED;
	}
	rte_pktmbuf_adj(m, (uint16_t)off);
	meta->chain = (uint8_t)chain;
	meta->chain_pos = pos == 0 ? ZN_CHAIN_POS_START : (uint8_t)(pos - 1);
	meta->action = ZN_ACT_NEXT;
	meta->hops = 0;
	meta->flags &= ~(ZN_PKT_F_HASH_VALID | ZN_PKT_F_HASH_RSS |
			 ZN_PKT_NSH_TTL_MASK);
	meta->flags |= ZN_PKT_F_NSH_TTL |
		       (uint32_t)(h->ttl - 1) << ZN_PKT_NSH_TTL_SHIFT;
	meta->flow_hash = 0;
	/* The near host's flow hash: both directions of a flow alike */
	if (h->md_type == 2 &&
	    zn_nsh_md2_flow(h, &hash, &tenant, &flags) == 0) {
		meta->flow_hash = hash;
		meta->flags |= ZN_PKT_F_HASH_VALID;
	}
	ws->peer[host].rx++;
	ws->peer[host].rx_bytes += rte_pktmbuf_pkt_len(m);
	ws->peer[host].seen = w->rc.now;
	return ROUTED;
}

/* Plain VXLAN (no NSH) from a plain peer: its frame, as the fabric
 * port's. */
static enum verdict
vxlan_in(struct zn_worker *w, const struct zn_fabric_view *v,
	 struct rte_mbuf *m, const uint8_t *p, size_t len)
{
	struct zn_fabric_wstats *ws = &v->wst[w->id];
	struct zn_pkt_meta *meta = zn_pkt_meta(m);
	unsigned int host = 0;
	size_t off;
	uint32_t vni, src;
	int rc = zn_vxlan_decap(p, len, &vni, &off, &src);

	if (rc == -ENOENT)
		return CLASSIFY;
	if (rc < 0) {
		in_drop(w, v, m, ZN_DROP_NSH_MALFORMED, &ws->malformed);
		return DROPPED;
	}
	if (outer_dst_ip(p) != v->ip || peer_of_ip(v, src, &host) == NULL ||
	    v->peer[host].nsh || vni != v->peer[host].t.vni) {
		in_drop(w, v, m, ZN_DROP_NSH_NO_PATH, &ws->stranger);
		return DROPPED;
	}
	rte_pktmbuf_adj(m, (uint16_t)off);
	meta->flow_hash = 0; /* the outer packet's RSS hash is not the flow's */
	meta->flags &= ~(ZN_PKT_F_HASH_VALID | ZN_PKT_F_HASH_RSS);
	ws->peer[host].rx++;
	ws->peer[host].rx_bytes += rte_pktmbuf_pkt_len(m);
	ws->peer[host].seen = w->rc.now;
	return CLASSIFY;
}

static enum verdict
ingress_one(struct zn_worker *w, const struct zn_route *rt,
	    const struct zn_fabric_view *v, struct rte_mbuf *m)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	size_t len = rte_pktmbuf_data_len(m), off;
	enum zn_nsh_encap encap;
	struct zn_nsh h;
	uint32_t src_ip;
	int rc = zn_nsh_decap(p, len, &encap, &h, &off, &src_ip);

	if (rc == 0)
		return nsh_in(w, rt, v, m, encap, &h, off, src_ip);
	if (rc != -ENOENT) {
		in_drop(w, v, m, ZN_DROP_NSH_MALFORMED,
			&v->wst[w->id].malformed);
		return DROPPED;
	}
	enum verdict arp = arp_in(w, v, m);

	if (arp != CLASSIFY)
		return arp;
	return vxlan_in(w, v, m, p, len);
}

unsigned int
zn_fabric_ingress(struct zn_worker *w, const struct zn_route *rt,
		  struct rte_mbuf **pkts, unsigned int n,
		  unsigned int *n_routed)
{
	const struct zn_fabric_view *v = rt->fabric;
	struct rte_mbuf *cls[ZN_BURST];
	unsigned int r = 0, c = 0;

	for (unsigned int i = 0; i < n; i++) {
		switch (ingress_one(w, rt, v, pkts[i])) {
		case ROUTED:
			pkts[r++] = pkts[i];
			break;
		case CLASSIFY:
			cls[c++] = pkts[i];
			break;
		case DROPPED:
		case TAKEN:
			break;
		}
	}
	memcpy(&pkts[r], cls, c * sizeof(*cls));
	*n_routed = r;
	return r + c;
}

/* ---- egress ---- */

unsigned int
zn_fabric_encap(struct zn_worker *w, const struct zn_route *rt,
		const struct zn_res *r, struct rte_mbuf **pkts, unsigned int n,
		uint64_t *src_drops)
{
	const struct zn_fabric_view *v = rt->fabric;
	const struct zn_fabric_peer *p = v != NULL ? &v->peer[r->id] : NULL;
	struct zn_fabric_pstats *ps = v != NULL ? &v->wst[w->id].peer[r->id] :
				      NULL;
	unsigned int chain = r->svc & (ZN_MAX_CHAINS - 1);
	uint32_t spi = rt->chain_spi[chain];
	struct zn_nsh h;
	unsigned int k = 0;

	if (p == NULL || !p->up || (p->nsh && spi == 0)) {
		enum zn_drop_reason why = p == NULL || !p->up ?
			ZN_DROP_PEER_DOWN : ZN_DROP_NSH_NO_PATH;

		for (unsigned int i = 0; i < n; i++)
			drop(w, pkts[i], why, src_drops,
				 ps != NULL && why == ZN_DROP_PEER_DOWN ?
				 &ps->down_drops : NULL);
		return 0;
	}
	/* the index of the hop's position on the path: the chain may have
	 * hops of this host put in (fdir_chain.c path_fill) */
	h = (struct zn_nsh){ .spi = spi,
			     .si = (uint8_t)(ZN_NSH_SI_FIRST -
					     rt->path_pos[chain][r->pos &
						(ZN_MAX_CHAIN_STEPS - 1)]),
			     .md_type = 2, .next_proto = ZN_NSH_NP_ETH };
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		const struct zn_pkt_meta *meta = zn_pkt_meta(m);
		uint32_t len = rte_pktmbuf_pkt_len(m);
		uint32_t hash = zn_pkt_flow_hash(m);
		uint8_t *hdr;
		int rc;

		if (p->outer - RTE_ETHER_HDR_LEN + len > p->mtu ||
		    rte_pktmbuf_headroom(m) < p->outer) {
			drop(w, m, ZN_DROP_NSH_MTU, src_drops,
				 &ps->mtu_drops);
			continue;
		}
		hdr = (uint8_t *)rte_pktmbuf_prepend(m, p->outer);
		if (p->nsh) {
			h.ttl = (meta->flags & ZN_PKT_F_NSH_TTL) ?
				(uint8_t)((meta->flags & ZN_PKT_NSH_TTL_MASK) >>
					  ZN_PKT_NSH_TTL_SHIFT) :
				ZN_NSH_TTL_DEFAULT;
			h.ctx_len = 0;
			zn_nsh_md2_add_flow(&h, hash, 0, 0);
			rc = zn_nsh_encap_put(hdr, p->outer, &p->t, &h, len,
					      hash);
		} else {
			rc = zn_vxlan_put(hdr, p->outer, &p->t, len, hash);
		}
		if (unlikely(rc != (int)p->outer)) { /* the view's sizes */
			rte_pktmbuf_adj(m, p->outer);
			drop(w, m, ZN_DROP_NSH_MTU, src_drops,
				 &ps->mtu_drops);
			continue;
		}
		ps->tx++;
		ps->tx_bytes += len;
		pkts[k++] = m;
	}
	return k;
}
