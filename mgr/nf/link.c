/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * NF -> NF links, control side: the pool, giving links to the NFs that
 * ask, and taking them back when an end is gone. See link.h for why links
 * are per pair, and lib/nf/nf_tx.c for how a sender uses one.
 *
 * Who may touch a link, and when:
 *   - its sender enqueues only while it is an RCU reader online and the
 *     snapshot it reads routes to the receiver; so once the receiver
 *     left the snapshot and the readers passed a quiescent state
 *     (zn_route_publish), nobody enqueues any more;
 *   - its receiver dequeues only while online and the link is in its
 *     links.in[]; so once the link left that list and readers passed a
 *     quiescent state, nobody dequeues any more.
 * A link is reused only after both, and reset when given again.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "../trust/group_home.h"
#include "link.h"
#include "../core/mgr.h"
#include "../trust/ring_guard.h"
#include "../flow/route.h"
#include "../../lib/common/zn_util.h"
#include "nf_rec.h"
#include "../core/subsys.h"

struct zn_links {
	/* The link table as given (from, to, gen, used): the shared one
	 * tells the NFs, who can write it; decisions read this one. */
	struct zn_link own[ZN_MAX_LINKS];
	struct rte_ring *made[ZN_MAX_LINKS]; /* in the EAL's memory */
	uint16_t free[ZN_MAX_LINKS];
	unsigned int n_free;
	bool orphan[ZN_MAX_LINKS]; /* sender gone: take back once drained */
	bool warned_full;
};

static int
zn_link_init(struct zn_mgr *m)
{
	char name[RTE_RING_NAMESIZE];

	m->links = calloc(1, sizeof(*m->links));
	if (m->links == NULL)
		return -ENOMEM;
	for (unsigned int l = ZN_MAX_LINKS; l-- > 0;) {
		struct rte_ring *r;

		snprintf(name, sizeof(name), ZN_LINK_RING_FMT, l);
		r = rte_ring_create(name, m->cfg.ring_size, (int)rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (r == NULL) {
			ZN_LOG(ERR, "cannot create NF links of %u entries "
			       "(raise --mem or lower --ring-size)",
			       m->cfg.ring_size);
			return -ENOMEM;
		}
		m->links->own[l] = m->shm->links[l] = (struct zn_link){
			.ring = r };
		m->links->made[l] = m->link_ring[l] = r;
		m->links->free[m->links->n_free++] = (uint16_t)l;
	}
	return 0;
}

static void
zn_link_fini(struct zn_mgr *m)
{
	if (m->shm != NULL)
		for (unsigned int l = 0; l < ZN_MAX_LINKS; l++) {
			/* At the address we made it at, its header as made
			 * (an NF may have written its memzone pointer); the
			 * guard of the EAL's ring: a link may be in a group's
			 * file, gone by now (group_home.c). */
			struct rte_ring *r = m->links != NULL ?
					     m->links->made[l] : NULL;

			if (r != NULL && m->trust.home_rg != NULL)
				zn_rguard_reset(&m->trust.home_rg[ZN_HOME_LINK(l)]);
			else if (r != NULL && m->rg_link != NULL)
				zn_rguard_reset(&m->rg_link[l]);
			rte_ring_free(r);
			m->shm->links[l].ring = NULL;
			m->link_ring[l] = NULL;
		}
	free(m->links);
	m->links = NULL;
}

const struct zn_link *
zn_link_own(const struct zn_mgr *m, unsigned int l)
{
	return m->links != NULL && l < ZN_MAX_LINKS ? &m->links->own[l] : NULL;
}

static double
ring_fill(const struct rte_ring *r)
{
	return r == NULL ? 0 :
	       (double)rte_ring_count(r) / rte_ring_get_capacity(r);
}

double
zn_link_input_fill(const struct zn_mgr *m, unsigned int slot)
{
	const struct zn_nf_slot *s = zn_slot(m, slot);
	unsigned int n = RTE_MIN(s->links.n_in, ZN_MAX_LINKS_IN);
	double fill = ring_fill(m->nf[slot].where.rx);

	/* the ids in the slot, the rings as the manager gave them */
	for (unsigned int i = 0; i < n; i++) {
		const struct zn_link *l = zn_link_own(m, s->links.in[i]);

		if (l != NULL && l->used && l->to == slot)
			fill = RTE_MAX(fill, ring_fill(l->ring));
	}
	return fill;
}

unsigned int
zn_link_count(const struct zn_mgr *m)
{
	return m->links == NULL ? 0 : ZN_MAX_LINKS - m->links->n_free;
}

static bool
give(struct zn_mgr *m, unsigned int from, unsigned int to)
{
	struct zn_nf_slot *s = zn_slot(m, from), *r = zn_slot(m, to);
	/* Read once: the receiver's slot is its to write too. */
	uint16_t n_in = __atomic_load_n(&r->links.n_in, __ATOMIC_RELAXED);
	struct zn_link *lk;
	uint16_t l;

	if (n_in >= ZN_MAX_LINKS_IN)
		return false; /* the sender goes on through a worker */
	if (m->links->n_free == 0) {
		if (!m->links->warned_full)
			ZN_LOG(WARNING, "all %d NF links in use: more NF pairs "
			       "go through a worker", ZN_MAX_LINKS);
		m->links->warned_full = true;
		return false;
	}
	l = m->links->free[--m->links->n_free];
	lk = &m->links->own[l];
	/* Nobody uses a free link; what NFs wrote into it is gone. Its
	 * ring is in the home of the pair's trust group (group_home.c). */
	zn_group_home_link(m, l, m->nf[from].group);
	zn_rguard_reset(&m->rg_link[l]);
	lk->ring = m->rg_link[l].ring;
	lk->from = (uint16_t)from;
	lk->to = (uint16_t)to;
	lk->gen++;
	lk->used = 1;
	m->shm->links[l] = *lk;
	zn_group_home_view_link(m, l, m->nf[from].group, lk);
	/* Before the release below: a worker reading what the receiver
	 * hands back sees it (owner_map_hot.c take_back). */
	__atomic_store_n(&m->nf[to].linked_in, true, __ATOMIC_RELAXED);
	__atomic_store_n(&m->nf[from].linked_out, true, __ATOMIC_RELAXED);
	/* The receiver lists it before the sender can fill it. */
	r->links.in[n_in] = l;
	__atomic_store_n(&r->links.n_in, (uint16_t)(n_in + 1),
			 __ATOMIC_RELEASE);
	__atomic_store_n(&s->links.out[to], ZN_LINK_OUT(lk->gen, l),
			 __ATOMIC_RELEASE);
	return true;
}

void
zn_link_request(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	uint32_t state = zn_nf_state(m, slot);

	if (state != ZN_NF_RUNNING && state != ZN_NF_STARTING &&
	    state != ZN_NF_STOPPING)
		return;
	for (unsigned int w = 0; w < RTE_DIM(s->hstats.want); w++) {
		uint64_t bits = __atomic_load_n(&s->hstats.want[w],
						__ATOMIC_ACQUIRE);

		while (bits != 0) {
			unsigned int to = w * 64 + (unsigned int)
					  __builtin_ctzll(bits);

			bits &= bits - 1;
			/* Not to itself: it would wait for itself to empty
			 * its RX ring before using the link (the ordering
			 * rule of lib/nf/nf_tx.c). A chain that visits an NF
			 * twice in a row goes through a worker there. */
			/* Nor across a trust boundary: the packets must be
			 * copied into the receiver's pool (by a worker). */
			if (to >= ZN_MAX_NFS || to == slot ||
			    s->links.out[to] != 0 ||
			    zn_nf_state(m, to) != ZN_NF_RUNNING ||
			    m->nf[to].group != m->nf[slot].group)
				continue;
			if (!give(m, slot, to))
				return;
		}
	}
}

/* Remove link @p l from the receiver's list (readers may still see it
 * until the next grace period). */
static void
in_del(struct zn_nf_slot *r, uint16_t l)
{
	/* The receiver's list is in its slot: bounded, whatever it says. */
	uint16_t n = RTE_MIN(r->links.n_in, (uint16_t)ZN_MAX_LINKS_IN);

	for (uint16_t i = 0; i < n; i++)
		if (r->links.in[i] == l) {
			r->links.in[i] = r->links.in[n - 1];
			__atomic_store_n(&r->links.n_in, (uint16_t)(n - 1),
					 __ATOMIC_RELEASE);
			return;
		}
}

static void
put_back(struct zn_mgr *m, uint16_t l)
{
	m->links->own[l].used = m->shm->links[l].used = 0;
	zn_group_home_view_link(m, l, 0, &m->links->own[l]);
	m->links->orphan[l] = false;
	m->links->free[m->links->n_free++] = l;
	m->links->warned_full = false;
}

void
zn_link_nf_gone(struct zn_mgr *m, unsigned int slot,
		void (*drop)(struct zn_mgr *m, struct zn_nf_slot *s,
			     struct rte_mbuf **pkts, unsigned int n))
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	struct rte_mbuf *pkts[ZN_BURST];
	uint16_t n_in = RTE_MIN(s->links.n_in, (uint16_t)ZN_MAX_LINKS_IN);

	/* Into it: handed over by their senders, never taken: lost. */
	for (uint16_t i = 0; i < n_in; i++) {
		uint16_t l = s->links.in[i];
		const struct zn_link *lk = &m->links->own[l % ZN_MAX_LINKS];
		unsigned int k;

		/* The list is in the NF's slot: it may have written it. */
		if (l >= ZN_MAX_LINKS || !lk->used || lk->to != slot) {
			ZN_LOG(ERR, "NF in slot %u: its list of links names "
			       "%u, not one into it: ignored", slot, l);
			continue;
		}
		if (lk->from < ZN_MAX_NFS &&
		    zn_slot(m, lk->from)->links.out[slot] ==
			    ZN_LINK_OUT(lk->gen, l))
			__atomic_store_n(&zn_slot(m, lk->from)->links.out[slot],
					 0, __ATOMIC_RELEASE);
		while ((k = zn_rguard_drain(&m->rg_link[l], false, false,
					    (void **)pkts, ZN_BURST)) > 0)
			drop(m, s, pkts, k);
		put_back(m, l);
	}
	__atomic_store_n(&s->links.n_in, 0, __ATOMIC_RELEASE);
	/* Out of it: what it handed over goes on; taken back once drained. */
	for (unsigned int r = 0; r < ZN_MAX_NFS; r++) {
		uint32_t o = s->links.out[r];

		if (o == 0)
			continue;
		if (ZN_LINK_OUT_ID(o) < ZN_MAX_LINKS &&
		    m->links->own[ZN_LINK_OUT_ID(o)].used &&
		    m->links->own[ZN_LINK_OUT_ID(o)].from == slot)
			m->links->orphan[ZN_LINK_OUT_ID(o)] = true;
		s->links.out[r] = 0;
	}
}

void
zn_link_gc(struct zn_mgr *m)
{
	uint16_t done[ZN_MAX_LINKS];
	unsigned int n = 0;

	if (m->links == NULL)
		return;
	for (uint16_t l = 0; l < ZN_MAX_LINKS; l++) {
		const struct zn_link *lk = &m->links->own[l];

		if (!m->links->orphan[l] || !lk->used ||
		    zn_rguard_nf_count(&m->rg_link[l]) != 0)
			continue;
		in_del(zn_slot(m, lk->to), l);
		done[n++] = l;
	}
	if (n == 0)
		return;
	zn_route_sync(m); /* no receiver still reads them */
	for (unsigned int i = 0; i < n; i++)
		put_back(m, done[i]);
}

static const struct zn_subsys subsys = {
	.name = "links", .order = ZN_SUBSYS_LINKS,
	.init = zn_link_init, .fini = zn_link_fini,
};
ZN_SUBSYS_REGISTER(subsys)
