/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * What an NF that left still holds, returned (registry.c calls it once
 * the NF can no longer touch its rings, ledger or objects): the buffers
 * its ledger says it held (unless it lied: owner_map.h), those waiting in its
 * RX ring, the flow rules it added (unless it asked to keep them), the
 * DPDK objects it registered (zn_nf_obj_track), and once its process is gone,
 * the files its EAL left. Every packet freed is counted
 * as an nf_exit drop; a pointer that is not one of the pool's buffers is
 * logged and never freed.
 */

#include <stdio.h>
#include <string.h>

#include <rte_acl.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_hash.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>
#include <rte_mbuf.h>
#include <rte_memzone.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include <zeronf/flow.h>

#include "../core/mgr.h"
#include "../trust/owner_map.h"
#include "../core/event.h"
#include "../flow/fdir.h"
#include "../core/instance.h"
#include "link.h"
#include "pool_acct.h"
#include "registry.h"
#include "registry_pvt.h"
#include "../trust/ring_guard.h"
#include "../../lib/common/zn_ledger.h"
#include "../../lib/common/zn_util.h"
#include "nf_rec.h"
#include "../trust/police.h"

static bool
pool_owns(const struct zn_mgr *m, const struct rte_mbuf *mb)
{
	const struct rte_mempool_memhdr *hdr;
	uintptr_t p = (uintptr_t)mb;

	if (mb == NULL || (p & 7) != 0)
		return false;
	STAILQ_FOREACH(hdr, &m->pool->mem_list, next) {
		uintptr_t lo = (uintptr_t)hdr->addr;

		if (p >= lo && p + sizeof(*mb) <= lo + hdr->len)
			return mb->pool == m->pool;
	}
	/* A trust group's pool: one region each (mgr/trust/group.c). */
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++) {
		const struct zn_shm_group *sg = &m->shm->groups[g];

		if (sg->used && p >= sg->va &&
		    p + sizeof(*mb) <= sg->va + sg->len)
			return mb->pool == m->trust.group[g].pool;
	}
	return false;
}

static void
free_counted(struct zn_mgr *m, struct zn_nf_slot *s, struct rte_mbuf **pkts,
	     unsigned int n)
{
	unsigned int ok = 0;

	if (m->trust.owner_maps != NULL) { /* --validate: every check (owner_map.h) */
		ok = zn_owner_map_free(m, pkts, n, s->ctl.name);
		goto counted;
	}
	for (unsigned int i = 0; i < n; i++) {
		if (!pool_owns(m, pkts[i])) {
			ZN_LOG(ERR, "NF '%s' left a bad buffer pointer %p; "
			       "ignored", s->ctl.name, (void *)pkts[i]);
			continue;
		}
		pkts[ok++] = pkts[i];
	}
	rte_pktmbuf_free_bulk(pkts, ok);
counted:
	m->shm->mgr.drops[ZN_DROP_NF_EXIT] += ok;
	m->shm->mgr.reclaimed += ok;
	s->exit_drops += ok;
}

/* Free the DPDK objects the NF left in shared memory (zn_nf_obj_track):
 * each found by its name, and freed only if the name still finds the
 * object at the address the NF gave, so a stale or bogus entry frees
 * nothing. The NF has died, or left after ops->fini: nothing uses them. */
/* A mempool's memory chunks carry the free callback of the process that
 * populated it (rte_mempool_memchunk_mz_free, at that process's address:
 * calling it here jumps into nothing). rte_mempool_create() backs every
 * chunk with a memzone, the chunk's opaque: free that here instead. */
static void
chunk_mz_free(struct rte_mempool_memhdr *memhdr, void *opaque)
{
	(void)memhdr;
	rte_memzone_free(opaque);
}

static void
adopt_chunk(struct rte_mempool *mp, void *arg, struct rte_mempool_memhdr *mh,
	    unsigned int idx)
{
	(void)mp, (void)arg, (void)idx;
	if (mh->free_cb != NULL)
		mh->free_cb = chunk_mz_free;
}

/* The mempool of the rte_rib(6) under the rte_fib(6) named @p name
 * (DPDK 22.11: the rib has the fib's name, its node pool "MP_" + name),
 * made ours to free. @return false if it is not there. */
static bool
adopt_fib_pool(const char *name)
{
	char pn[RTE_MEMPOOL_NAMESIZE + 16];
	struct rte_mempool *mp;

	snprintf(pn, sizeof(pn), "MP_%s", name);
	mp = rte_mempool_lookup(pn);
	if (mp == NULL)
		return false;
	rte_mempool_mem_iter(mp, adopt_chunk, NULL);
	return true;
}

static void
free_objs(struct zn_mgr *m, struct zn_nf_slot *s)
{
	uint32_t n = RTE_MIN(s->objs.n, (uint32_t)ZN_NF_MAX_OBJS);
	unsigned int freed = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct zn_nf_obj o = s->objs.obj[i];
		const struct rte_memzone *mz = NULL;
		const void *found = NULL;

		o.name[sizeof(o.name) - 1] = '\0';
		switch (o.type) {
		case ZN_NF_OBJ_HASH:
			found = rte_hash_find_existing(o.name);
			break;
		case ZN_NF_OBJ_LPM:
			found = rte_lpm_find_existing(o.name);
			break;
		case ZN_NF_OBJ_LPM6:
			found = rte_lpm6_find_existing(o.name);
			break;
		case ZN_NF_OBJ_RING:
			found = rte_ring_lookup(o.name);
			break;
		case ZN_NF_OBJ_MEMZONE:
			found = mz = rte_memzone_lookup(o.name);
			break;
		case ZN_NF_OBJ_FT: /* a zn_ft heads its memzone */
			mz = rte_memzone_lookup(o.name);
			found = mz != NULL ? mz->addr : NULL;
			break;
		case ZN_NF_OBJ_FIB:
			found = rte_fib_find_existing(o.name);
			if (found != NULL && !adopt_fib_pool(o.name))
				found = NULL;
			break;
		case ZN_NF_OBJ_FIB6:
			found = rte_fib6_find_existing(o.name);
			if (found != NULL && !adopt_fib_pool(o.name))
				found = NULL;
			break;
		case ZN_NF_OBJ_ACL:
			found = rte_acl_find_existing(o.name);
			break;
		default:
			continue;
		}
		if (found == NULL || (uintptr_t)found != o.addr) {
			ZN_LOG(WARNING, "NF '%s' left object '%s' (type %u), "
			       "which is gone: not freed", s->ctl.name, o.name,
			       o.type);
			continue;
		}
		switch (o.type) {
		case ZN_NF_OBJ_HASH:
			rte_hash_free((struct rte_hash *)(uintptr_t)found);
			break;
		case ZN_NF_OBJ_LPM:
			rte_lpm_free((struct rte_lpm *)(uintptr_t)found);
			break;
		case ZN_NF_OBJ_LPM6:
			rte_lpm6_free((struct rte_lpm6 *)(uintptr_t)found);
			break;
		case ZN_NF_OBJ_RING:
			rte_ring_free((struct rte_ring *)(uintptr_t)found);
			break;
		case ZN_NF_OBJ_MEMZONE:
			rte_memzone_free(mz);
			break;
		case ZN_NF_OBJ_FT:
			zn_ft_free((struct zn_ft *)(uintptr_t)found);
			break;
		case ZN_NF_OBJ_FIB:
			rte_fib_free((struct rte_fib *)(uintptr_t)found);
			break;
		case ZN_NF_OBJ_FIB6:
			rte_fib6_free((struct rte_fib6 *)(uintptr_t)found);
			break;
		case ZN_NF_OBJ_ACL:
			rte_acl_free((struct rte_acl_ctx *)(uintptr_t)found);
			break;
		}
		freed++;
	}
	memset(&s->objs, 0, sizeof(s->objs));
	if (freed > 0) {
		m->shm->mgr.objs_freed += freed;
		ZN_LOG(INFO, "NF '%s': freed %u DPDK objects it left",
		       s->ctl.name, freed);
	}
}

struct ring_of_arg {
	struct zn_mgr *m;
	unsigned int slot;
};

/* The ring a ledger names, if it is one of this NF's: its RX/TX ring, or
 * a link into it (read) or out of it (written). */
static struct rte_ring *
ring_of(uint16_t id, bool tx, void *arg)
{
	const struct ring_of_arg *a = arg;
	const struct zn_link *lk;

	if (id == 0)
		return tx ? a->m->nf[a->slot].tx : a->m->nf[a->slot].where.rx;
	if (id > ZN_MAX_LINKS)
		return NULL;
	lk = zn_link_own(a->m, id - 1u);
	if (lk == NULL || !lk->used || (tx ? lk->from : lk->to) != a->slot ||
	    a->m->rg_link[id - 1].ring == NULL) {
		uint32_t ph = zn_slot(a->m, a->slot)->ledger.phase;

		/* Idle or owning its burst, the ledger names the link it last
		 * used, which may have been taken back since (its peer left):
		 * nothing of it is in question. */
		if (ph == (tx ? ZN_LEDGER_TX : ZN_LEDGER_RX))
			ZN_LOG(ERR, "NF in slot %u: its ledger names link %u, "
			       "not one of its own: nothing of that burst "
			       "freed", a->slot, id - 1u);
		return NULL;
	}
	return a->m->rg_link[id - 1].ring; /* not lk->ring: NFs write it */
}

uint64_t
zn_reclaim_nf_links(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	uint64_t before = s->exit_drops;

	zn_link_nf_gone(m, slot, free_counted);
	return s->exit_drops - before;
}

/* The lcore cache the PMD freed into what the NF in @p slot sent
 * (lib/nf/nf_port.c zn_nf_ports_thread): its own lcore's; in a bundle
 * (one process, its NFs' slots by pid and start time) the lcore of its
 * first NF's slot, which all of them run as. Of a process's slots only
 * that one's cache can hold anything: each slot's is flushed when the
 * slot is freed (registry.c), and no other thread runs as those lcores. */
static const struct rte_mempool_cache *
sent_cache(const struct zn_mgr *m, unsigned int slot)
{
	const struct rte_mempool_cache *c =
		rte_mempool_default_cache(m->pool, ZN_NF_LCORE_BASE + slot);

	if (c == NULL || c->len != 0 || slot >= ZN_MAX_NFS)
		return c;
	for (unsigned int x = 0; x < ZN_MAX_NFS; x++) {
		const struct rte_mempool_cache *o;

		if (x == slot || !zn_registry_same_process(m, slot, x))
			continue;
		o = rte_mempool_default_cache(m->pool, ZN_NF_LCORE_BASE + x);
		if (o != NULL && o->len != 0)
			return o;
	}
	return c;
}

uint64_t
zn_reclaim_nf(struct zn_mgr *m, unsigned int slot, bool later_links)
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	struct rte_mbuf *pkts[ZN_BURST];
	uint64_t before = s->exit_drops;
	uint16_t port = s->ledger.port;
	uint64_t tx0 = s->ledger.port_tx0;
	unsigned int n, sent, sent_out;

	struct ring_of_arg a = { .m = m, .slot = slot };

	/* A burst it took from a port's RX queue and had not counted yet
	 * (zn_ledger.h): received, then lost as any burst it held. */
	if (port < m->n_ports)
		s->ptx[port].rx += zn_ledger_rx_uncounted(&s->ledger,
							  s->ptx[port].rx);

	/* Its PMD freed what it sent into its lcore's cache (flushed when
	 * the slot is freed, registry.c). */
	n = zn_ledger_reclaim(&s->ledger, ring_of, &a, sent_cache(m, slot),
			      pkts, &sent, &sent_out);
	/* The ledger answers for these, whatever is done with them below:
	 * not among what it took and kept (zn_pool_acct_sweep) */
	zn_pool_acct_forget(m, slot, pkts, n);
	/* What its port took is not lost: counted as sent, unless the NF
	 * counted it itself before it died. */
	if (sent != 0 && port < m->n_ports && s->ptx[port].tx == tx0) {
		s->ptx[port].tx += sent;
		/* A PMD that frees before it counts (net_null) may not
		 * have counted these in its own opackets. */
		m->ports[port].nf_gone.tx_at_exit += sent;
	}
	/* An NF that handed back a bad descriptor named buffers it did not
	 * hold: what its ledger names is its word, and may be another NF's
	 * (a buffer it sent on and then sent again as new). Left where it
	 * is: a leak at most (bounded by its ledger, counted; a group's
	 * audit finds it), never a buffer freed under the NF that holds it,
	 * which would be charged for it when it hands it back. */
	if (m->trust.owner_maps != NULL && n > 0 && zn_police_lied(m, slot)) {
		zn_event("nf.ledger_ignored", "NF '%s' (instance %u) handed "
			 "back bad descriptors: the %u buffers its ledger "
			 "names are not freed", s->ctl.name, slot, n);
		n = sent_out = 0;
	}
	/* Sent: freed, not counted; with --validate through the pools'
	 * maps, not the packets' headers the NF wrote (owner_map.c) */
	if (m->trust.owner_maps != NULL)
		zn_owner_map_free(m, pkts, sent_out, s->ctl.name);
	else
		rte_pktmbuf_free_bulk(pkts, sent_out);
	free_counted(m, s, pkts + sent_out, n - sent_out);
	while ((n = zn_rguard_drain(&m->nf[slot].rx_guard, false, true,
				    (void **)pkts, ZN_BURST)) > 0)
		free_counted(m, s, pkts, n);
	if (!later_links)
		zn_link_nf_gone(m, slot, free_counted);
	/* what it allocated and kept (not packets: not counted as drops) */
	zn_pool_acct_sweep(m, slot);
	zn_fdir_nf_gone(m, slot, s->ctl.name); /* its flow rules */
	/* When the manager stops, its memory goes with it. An NF of a trust
	 * group maps none of the EAL's memory (lib/nf/nf_group.c): what it
	 * made is its process's own, gone with it, and what its slot names
	 * can only be something else's. */
	if (!m->shm->mgr.stopping && m->nf[slot].group == NULL)
		free_objs(m, s);
	return s->exit_drops - before;
}

/* Files the EAL of a secondary process keeps in the runtime directory:
 * "mp_socket_<pid>_<id>" and "fbarray_memseg-..._<pid>". */
static bool
is_file_of_pid(const char *name, const void *arg)
{
	pid_t pid = *(const pid_t *)arg;
	char tag[32];
	size_t n = strlen(name), t;

	snprintf(tag, sizeof(tag), "mp_socket_%d_", (int)pid);
	if (strncmp(name, tag, strlen(tag)) == 0)
		return true;
	t = (size_t)snprintf(tag, sizeof(tag), "_%d", (int)pid);
	return strncmp(name, "fbarray_", 8) == 0 && n > t &&
	       strcmp(name + n - t, tag) == 0;
}

void
zn_reclaim_gc_exited(struct zn_mgr *m)
{
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++) {
		pid_t pid = m->registry->exiting[slot].pid;
		pid_t ns_pid = m->registry->exiting[slot].ns_pid;

		if (pid <= 0 ||
		    zn_proc_alive(pid, m->registry->exiting[slot].start))
			continue;
		/* NFs do not run rte_eal_cleanup (nor can a killed one):
		 * remove the EAL files of the gone process, named with its
		 * pid as it saw it. */
		zn_unlink_matching(m->inst.rundir, is_file_of_pid, &ns_pid);
		m->registry->exiting[slot].pid = 0;
	}
}

bool
zn_registry_exiting(const struct zn_mgr *m)
{
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++)
		if (m->registry->exiting[slot].pid > 0 &&
		    zn_proc_alive(m->registry->exiting[slot].pid,
				  m->registry->exiting[slot].start))
			return true;
	return false;
}

