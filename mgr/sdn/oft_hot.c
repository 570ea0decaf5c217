/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow table, hot side: the key of each packet entering from a
 * port, the tuple space search (oft.h), then per packet what its entry
 * says: a chain id, the flow director (NORMAL), the controller (a punt to
 * the control thread) or a drop. Counters are the worker's own.
 */

#include <string.h>
#include <sys/eventfd.h>

#include <rte_byteorder.h>
#include <rte_hash.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <zeronf/pkt.h>

#include "oft_pvt.h"
#include "../core/mgr.h"
#include "../datapath/worker.h"
#include "../trust/owner_map.h"

#define CHUNK 64 /* rte_hash_lookup_bulk_data's most */

static inline uint16_t
rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/* The L4 fields at @p l4 (@p len bytes there) of protocol @p proto. */
static inline void
l4_fields(const uint8_t *l4, uint32_t len, uint8_t proto,
	  struct zn_oft_key *k)
{
	switch (proto) {
	case 6: /* TCP */
		if (len >= 14)
			k->tcp_flags = (uint16_t)((l4[12] & 0x0f) << 8 | l4[13]);
		/* fall through */
	case 17: /* UDP */
	case 132: /* SCTP */
		if (len >= 4) {
			k->l4_src = rd16(l4);
			k->l4_dst = rd16(l4 + 2);
		}
		break;
	case 1:  /* ICMP */
	case 58: /* ICMPv6 */
		if (len >= 2) {
			k->l4_src = l4[0];
			k->l4_dst = l4[1];
		}
		break;
	default:
		break;
	}
}

void
oft_key_of(const uint8_t *p, uint32_t len, uint32_t in_port,
	   struct zn_oft_key *k)
{
	uint32_t off = 14;
	uint16_t type;

	memset(k, 0, sizeof(*k));
	k->in_port = in_port;
	if (len < 14)
		return;
	memcpy(k->eth_dst, p, 6);
	memcpy(k->eth_src, p + 6, 6);
	type = rd16(p + 12);
	if ((type == 0x8100 || type == 0x88a8) && len >= 18) {
		k->vlan_vid = (uint16_t)(0x1000 | (rd16(p + 14) & 0x0fff));
		type = rd16(p + 16);
		off = 18;
	}
	k->eth_type = type;
	p += off;
	len -= off;
	if (type == 0x0800 && len >= 20 && (p[0] >> 4) == 4) {
		uint32_t ihl = (uint32_t)(p[0] & 0x0f) * 4;

		k->ip_proto = p[9];
		memcpy(k->ip_src, p + 12, 4);
		memcpy(k->ip_dst, p + 16, 4);
		/* L4 of the first fragment only: a later one has none */
		if (ihl >= 20 && ihl <= len && (rd16(p + 6) & 0x1fff) == 0)
			l4_fields(p + ihl, len - ihl, k->ip_proto, k);
	} else if (type == 0x86dd && len >= 40 && (p[0] >> 4) == 6) {
		uint8_t nh = p[6];
		uint32_t at = 40;

		memcpy(k->ip_src, p + 8, 16);
		memcpy(k->ip_dst, p + 24, 16);
		/* Extension headers: hop-by-hop, routing, destination
		 * options (8-octet units), fragment (a later one has no L4) */
		for (int i = 0; i < 8; i++) {
			if ((nh == 0 || nh == 43 || nh == 60) && at + 8 <= len) {
				nh = p[at];
				at += 8 + 8u * p[at + 1];
			} else if (nh == 44 && at + 8 <= len) {
				bool first = (rd16(p + at + 2) & 0xfff8) == 0;

				nh = p[at];
				at += 8;
				if (!first)
					at = len + 1; /* no L4 */
			} else {
				break;
			}
		}
		k->ip_proto = nh;
		if (at <= len)
			l4_fields(p + at, len - at, nh, k);
	} else if (type == 0x0806 && len >= 28 && rd16(p) == 1 &&
		   rd16(p + 2) == 0x0800 && p[4] == 6 && p[5] == 4) {
		uint16_t op = rd16(p + 6);

		k->ip_proto = op > 0xff ? 0 : (uint8_t)op;
		memcpy(k->ip_src, p + 14, 4);
		memcpy(k->ip_dst, p + 24, 4);
	}
}

static inline void
masked(const struct zn_oft_key *k, const struct zn_oft_key *mask,
       struct zn_oft_key *out)
{
	for (unsigned int i = 0; i < ZN_OFT_KEY_WORDS; i++)
		zn_oft_key_set_word(out, i, zn_oft_key_word(k, i) &
					    zn_oft_key_word(mask, i));
	out->sub = mask->sub;
}

void
oft_search(const struct zn_oft_view *v, const struct zn_oft_key *keys,
       unsigned int n, const struct zn_oft_entry **best)
{
	struct zn_oft_key mk[CHUNK];
	const void *kp[CHUNK];
	void *data[CHUNK];
	int32_t bp[CHUNK];
	uint8_t who[CHUNK];

	for (unsigned int i = 0; i < n; i++) {
		best[i] = NULL;
		bp[i] = -1;
	}
	for (unsigned int s = 0; s < v->n_sub; s++) {
		const struct oft_view_sub *sb = &v->sub[s];
		uint64_t hits = 0;
		unsigned int k = 0;

		for (unsigned int i = 0; i < n; i++) {
			if (bp[i] >= (int32_t)sb->max_priority)
				continue; /* nothing here beats its entry */
			masked(&keys[i], &sb->mask, &mk[k]);
			kp[k] = &mk[k];
			who[k++] = (uint8_t)i;
		}
		if (k == 0)
			break; /* (subtables come by falling priority) */
		if (rte_hash_lookup_bulk_data(v->hash, kp, k, &hits, data) <= 0)
			continue;
		for (unsigned int j = 0; j < k; j++) {
			const struct zn_oft_entry *e = data[j];

			if (!(hits & (1ULL << j)))
				continue;
			if ((int32_t)e->priority > bp[who[j]]) {
				best[who[j]] = e;
				bp[who[j]] = e->priority;
			}
		}
	}
}

static void
punt(struct zn_worker *w, const struct zn_oft_view *v, struct oft_wstats *ws,
     struct rte_mbuf *m, const struct zn_oft_entry *e, uint32_t act,
     uint16_t port)
{
	/* The table-miss entry's packets go as "no match" (OpenFlow 1.3
	 * section 5.4), any other's as an action's. */
	struct oft_punt p = {
		.m = m, .idx = e->idx, .max_len = (uint16_t)OFT_ACT_MAX_LEN(act),
		.reason = e->table_miss ? 0 : 1,
	};

	if (!v->controller ||
	    rte_ring_mp_enqueue_elem(v->punt, &p, sizeof(p)) != 0) {
		zn_owner_map_drop(w->mgr->trust.owner_maps, &m, 1);
		w->shm->stats.drops[ZN_DROP_SDN_PUNT]++;
		w->shm->port[port].drops[ZN_DROP_SDN_PUNT]++;
		ws->punt_drops++;
		return;
	}
	ws->punted++;
	/* the control thread's eventfd, once until it drains */
	if (__atomic_exchange_n(v->punt_waiting, 1, __ATOMIC_ACQ_REL) == 0)
		(void)!eventfd_write(v->punt_fd, 1);
}

unsigned int
zn_oft_classify(struct zn_worker *w, const struct zn_route *rt, uint16_t port,
		struct rte_mbuf **pkts, unsigned int n)
{
	const struct zn_oft_view *v = rt->oft;
	struct oft_wstats *ws = &v->wst[w->id];
	struct oft_count *cnt = v->cnt[w->id];
	struct zn_oft_key keys[CHUNK];
	const struct zn_oft_entry *best[CHUNK];
	struct rte_mbuf *normal[CHUNK];
	unsigned int kept = 0;

	for (unsigned int base = 0; base < n; base += CHUNK) {
		unsigned int c = RTE_MIN(n - base, (unsigned int)CHUNK);
		unsigned int n_normal = 0;

		for (unsigned int i = 0; i < c; i++) {
			const uint8_t *p;
			uint32_t len;

			p = zn_owner_map_pkt_data(w->mgr->trust.owner_maps,
						  pkts[base + i], &len);
			oft_key_of(p != NULL ? p : (const uint8_t *)"", p != NULL ?
				   len : 0, (uint32_t)port + 1, &keys[i]);
		}
		oft_search(v, keys, c, best);
		ws->lookups += c;
		for (unsigned int i = 0; i < c; i++) {
			struct rte_mbuf *m = pkts[base + i];
			const struct zn_oft_entry *e = best[i];
			uint32_t act;

			if (e == NULL) {
				ws->no_match++;
				zn_owner_map_drop(w->mgr->trust.owner_maps, &m,
						  1);
				w->shm->stats.drops[ZN_DROP_SDN_NO_MATCH]++;
				w->shm->port[port].drops[ZN_DROP_SDN_NO_MATCH]++;
				continue;
			}
			ws->matched++;
			act = __atomic_load_n(&e->act, __ATOMIC_ACQUIRE);
			cnt[e->idx].packets++;
			cnt[e->idx].bytes += rte_pktmbuf_pkt_len(m);
			cnt[e->idx].used_tsc = w->rc.now;
			switch (OFT_ACT_VERDICT(act)) {
			case ZN_OFT_CONTROLLER:
				punt(w, v, ws, m, e, act, port);
				continue;
			case ZN_OFT_NORMAL:
				normal[n_normal++] = m;
				break;
			case ZN_OFT_GROUP: {
				unsigned int g = OFT_ACT_CHAIN(act), b;
				const struct oft_gview *gv =
					__atomic_load_n(&v->gv[g],
							__ATOMIC_ACQUIRE);

				if (gv == NULL)
					goto drop; /* no bucket, or gone */
				/* the hash a service's replicas are picked
				 * by (zn_route_hot.h): both directions alike */
				b = gv->slot[zn_pkt_flow_hash(m) >> 24];
				v->gcnt[w->id][OFT_GCOUNT_IDX(g, b)].packets++;
				v->gcnt[w->id][OFT_GCOUNT_IDX(g, b)].bytes +=
					rte_pktmbuf_pkt_len(m);
				zn_pkt_meta(m)->chain = gv->chain[b];
				break;
			}
			case ZN_OFT_DROP:
drop:
				zn_owner_map_drop(w->mgr->trust.owner_maps, &m,
						  1);
				w->shm->stats.drops[ZN_DROP_CHAIN]++;
				w->shm->port[port].drops[ZN_DROP_CHAIN]++;
				continue;
			default:
				zn_pkt_meta(m)->chain = (uint8_t)OFT_ACT_CHAIN(act);
				break;
			}
			pkts[kept++] = m; /* in order: base + i >= kept */
		}
		/* NORMAL: the flow director's own pipeline, in place */
		if (n_normal > 0)
			zn_fdir_classify(w, rt, normal, n_normal, NULL);
	}
	return kept;
}

/* Packet-outs for this worker (oft_io.c): their chain is set, or they go
 * through the flow director first. @return how many are in @p pkts. */
unsigned int
zn_oft_inject_take(struct zn_worker *w, const struct zn_route *rt,
		   struct rte_ring *r, struct rte_mbuf **pkts,
		   unsigned int max)
{
	struct oft_inject in[CHUNK];
	struct rte_mbuf *normal[CHUNK];
	unsigned int n, n_normal = 0;

	n = rte_ring_sc_dequeue_burst_elem(r, in, sizeof(in[0]),
					   RTE_MIN(max, (unsigned int)CHUNK),
					   NULL);
	for (unsigned int i = 0; i < n; i++) {
		pkts[i] = in[i].m;
		if (in[i].normal)
			normal[n_normal++] = in[i].m;
	}
	if (n_normal > 0)
		zn_fdir_classify(w, rt, normal, n_normal, NULL);
	return n;
}
