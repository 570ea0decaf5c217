/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow table, control side (oft.h): entries and OpenFlow 1.3's
 * flow_mod semantics (section 6.4), the subtables and the view workers
 * read, timeouts, counters. Control thread only.
 *
 * Changes and readers: the hash (rte_hash, lock-free readers) changes in
 * place; which subtables exist and their order is the view, replaced
 * whole and published with the routing snapshot at zn_oft_commit(). An
 * entry removed from the hash, its key position and its chain reference
 * are given back only after a sync (no worker holds it then); a modified
 * entry's old chain at once (entry_set_actions says why). A new
 * entry's chain reaches the workers (zn_fdir_chain_take publishes it)
 * before the entry does.
 *
 * Long: OpenFlow's table semantics (add, modify, delete, strict or not,
 * overlap, counters kept or reset, timeouts and the events they send) are
 * one concern over one set of entries; split, each half would reach into
 * the other's lists.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_ring.h>

#include "oft_pvt.h"
#include "../core/args.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../core/subsys.h"
#include "../datapath/worker.h"
#include "../flow/fdir.h"
#include "../flow/route.h"
#include "../../lib/common/zn_util.h"

#define TICK_MS 200 /* timeouts are checked this often */

static struct zn_oft *
oft(struct zn_mgr *m)
{
	return m->oft;
}

/* ---- keys ---- */

#define W(k, i) zn_oft_key_word((k), (i))

static bool
key_eq(const struct zn_oft_key *a, const struct zn_oft_key *b)
{
	return memcmp(a, b, sizeof(*a)) == 0;
}

/* Request (rv, rm) covers entry (ev, em): every packet the entry matches,
 * the request matches (a non-strict modify or delete's test). */
static bool
covers(const struct zn_oft_key *rv, const struct zn_oft_key *rm,
       const struct zn_oft_key *ev, const struct zn_oft_key *em)
{
	for (unsigned int i = 0; i < ZN_OFT_KEY_WORDS; i++)
		if ((W(rm, i) & ~W(em, i)) != 0 ||
		    (W(ev, i) & W(rm, i)) != W(rv, i))
			return false;
	return true;
}

/* Some packet matches both (CHECK_OVERLAP). */
static bool
overlaps(const struct zn_oft_key *av, const struct zn_oft_key *am,
	 const struct zn_oft_key *bv, const struct zn_oft_key *bm)
{
	for (unsigned int i = 0; i < ZN_OFT_KEY_WORDS; i++)
		if (((W(av, i) ^ W(bv, i)) & W(am, i) & W(bm, i)) != 0)
			return false;
	return true;
}

static bool
key_zero(const struct zn_oft_key *k)
{
	for (unsigned int i = 0; i < ZN_OFT_KEY_WORDS; i++)
		if (W(k, i) != 0)
			return false;
	return true;
}

/* ---- counters ---- */

static void
counts(const struct zn_oft *t, uint32_t idx, uint64_t *pk, uint64_t *by,
       uint64_t *used)
{
	*pk = *by = 0;
	if (used != NULL)
		*used = 0;
	for (unsigned int w = 0; w < t->n_workers; w++) {
		const struct oft_count *c = &t->cnt[w][idx];

		*pk += __atomic_load_n(&c->packets, __ATOMIC_RELAXED);
		*by += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
		if (used != NULL)
			*used = RTE_MAX(*used, __atomic_load_n(&c->used_tsc,
							       __ATOMIC_RELAXED));
	}
}

static void
entry_counts(const struct zn_oft *t, const struct zn_oft_entry *e,
	     uint64_t *pk, uint64_t *by)
{
	counts(t, e->idx, pk, by, NULL);
	*pk = *pk - e->base_packets + e->carry_packets;
	*by = *by - e->base_bytes + e->carry_bytes;
}

void
zn_oft_set_listener(struct zn_mgr *m, const struct zn_oft_listener *l)
{
	struct zn_oft *t = oft(m);

	if (t != NULL)
		t->listener = l != NULL ? *l : (struct zn_oft_listener){ 0 };
}

static void
flow_removed(struct zn_mgr *m, const struct zn_oft_entry *e,
		 uint8_t reason)
{
	struct zn_oft *t = oft(m);
	struct zn_oft_entry_info in;

	if (t->listener.flow_removed == NULL)
		return;
	zn_oft_entry_info(m, e, &in);
	t->listener.flow_removed(t->listener.arg, &in, reason);
}

/* ---- the view ---- */

static void
oft_fill(struct zn_mgr *m, struct zn_route *rt)
{
	struct zn_oft *t = oft(m);

	rt->oft = t != NULL && t->on ? t->view : NULL;
}

static int
view_cmp(const void *a, const void *b)
{
	const struct oft_view_sub *x = a, *y = b;

	return (int)y->max_priority - (int)x->max_priority;
}

/* Rebuild the view from the subtables and publish it; the old one is
 * freed once no worker reads it (zn_route_publish syncs). */
static int
view_publish(struct zn_mgr *m)
{
	struct zn_oft *t = oft(m);
	struct zn_oft_view *v, *old = t->view;
	uint16_t maxp[OFT_MAX_SUBTABLES] = { 0 };
	unsigned int n = 0;

	for (uint32_t i = 0; i < t->capacity; i++) {
		const struct zn_oft_entry *e = t->by_idx[i];

		if (e != NULL && e->priority > maxp[e->sub - 1])
			maxp[e->sub - 1] = e->priority;
	}
	v = calloc(1, sizeof(*v) + OFT_MAX_SUBTABLES * sizeof(v->sub[0]));
	if (v == NULL)
		return -ENOMEM;
	v->hash = t->hash;
	memcpy(v->cnt, t->cnt, sizeof(v->cnt));
	v->wst = t->wst;
	v->gv = t->gv;
	memcpy(v->gcnt, t->gcnt, sizeof(v->gcnt));
	v->punt = t->punt;
	v->punt_fd = t->punt_fd;
	v->punt_waiting = &t->punt_waiting;
	v->controller = t->controller;
	for (unsigned int s = 0; s < OFT_MAX_SUBTABLES; s++) {
		t->sub[s].published = t->sub[s].n != 0;
		t->sub[s].pub_max = maxp[s];
		if (t->sub[s].n == 0)
			continue;
		v->sub[n].mask = t->sub[s].mask;
		v->sub[n].mask.sub = (uint8_t)(s + 1);
		v->sub[n].max_priority = maxp[s];
		n++;
	}
	v->n_sub = (uint16_t)n;
	qsort(v->sub, n, sizeof(v->sub[0]), view_cmp);
	t->view = v;
	t->view_dirty = false;
	zn_route_publish(m); /* syncs: no worker reads `old` after */
	free(old);
	return 0;
}

/* ---- entries ---- */

static void
hash_key(const struct zn_oft_entry *e, struct zn_oft_key *k)
{
	*k = e->value;
	k->sub = e->sub;
}

static int
sub_find(struct zn_oft *t, const struct zn_oft_key *mask, bool make)
{
	int free_s = -1;

	for (int s = 0; s < OFT_MAX_SUBTABLES; s++) {
		if (t->sub[s].n == 0) {
			if (free_s < 0)
				free_s = s;
			continue;
		}
		if (key_eq(&t->sub[s].mask, mask))
			return s;
	}
	if (!make || free_s < 0)
		return -ENOENT;
	t->sub[free_s].mask = *mask;
	t->view_dirty = true;
	return free_s;
}

/* The head of @p e's match (the entry the hash holds for it), or NULL. */
static struct zn_oft_entry *
head_of(struct zn_oft *t, const struct zn_oft_key *value,
	const struct zn_oft_key *mask)
{
	struct zn_oft_key k = *value;
	void *data;
	int s = sub_find(t, mask, false);

	if (s < 0)
		return NULL;
	k.sub = (uint8_t)(s + 1);
	if (rte_hash_lookup_data(t->hash, &k, &data) < 0)
		return NULL;
	return data;
}

static uint32_t
out_port_of(const struct zn_oft_action *a, unsigned int i)
{
	const struct zn_step *st = &a->steps[i];

	return st->type == ZN_STEP_PORT ? (uint32_t)st->id + 1 :
	       st->type == ZN_STEP_SERVICE ? ZN_OFT_SERVICE_PORT(st->id) : 0;
}

/* Has an output to OpenFlow port @p port (a delete's or stats' filter). */
static bool
outputs_to(const struct zn_oft_entry *e, uint32_t port)
{
	const struct zn_oft_action *a = &e->act_full;

	if (port == ZN_OFPP_ANY)
		return true;
	switch (a->verdict) {
	case ZN_OFT_CONTROLLER:
		return port == ZN_OFPP_CONTROLLER;
	case ZN_OFT_NORMAL:
		return port == ZN_OFPP_NORMAL;
	case ZN_OFT_CHAIN:
		for (unsigned int i = 0; i < a->n_steps; i++)
			if (out_port_of(a, i) == port)
				return true;
		return false;
	default:
		return false;
	}
}

static void
free_later(struct zn_oft *t, struct zn_oft_entry *e)
{
	e->next_free = t->to_free;
	t->to_free = e;
	t->need_sync = true;
}

/* Take @p e out of the hash (or its match's list) and the table; it is
 * freed at the commit. */
static void
entry_unlink(struct zn_mgr *m, struct zn_oft_entry *e, int reason)
{
	struct zn_oft *t = oft(m);
	struct zn_oft_entry *head = head_of(t, &e->value, &e->mask);
	struct zn_oft_key k;

	if (reason >= 0 && (e->flags & ZN_OFPFF_SEND_FLOW_REM))
		flow_removed(m, e, (uint8_t)reason);
	hash_key(e, &k);
	if (head == e) {
		if (e->next_same != NULL) {
			/* the next priority of this match takes its place */
			rte_hash_add_key_data(t->hash, &k, e->next_same);
		} else {
			int32_t pos = rte_hash_del_key(t->hash, &k);

			if (pos >= 0)
				t->pos_to_free[t->n_pos_to_free++] = pos;
		}
	} else if (head != NULL) {
		struct zn_oft_entry *p = head;

		while (p->next_same != NULL && p->next_same != e)
			p = p->next_same;
		if (p->next_same == e)
			p->next_same = e->next_same;
	}
	t->sub[e->sub - 1].n--;
	if (t->sub[e->sub - 1].n == 0)
		t->view_dirty = true;
	t->by_idx[e->idx] = NULL;
	t->active--;
	t->removed++;
	free_later(t, e);
}

static int
entry_insert(struct zn_oft *t, struct zn_oft_entry *e)
{
	struct zn_oft_entry *head = head_of(t, &e->value, &e->mask);
	struct zn_oft_key k;
	int rc;

	hash_key(e, &k);
	if (head == NULL || e->priority > head->priority) {
		e->next_same = head;
		rc = rte_hash_add_key_data(t->hash, &k, e);
		if (rc < 0)
			return rc;
	} else {
		struct zn_oft_entry *p = head;

		while (p->next_same != NULL &&
		       p->next_same->priority > e->priority)
			p = p->next_same;
		e->next_same = p->next_same;
		p->next_same = e;
	}
	return 0;
}

const struct zn_oft_entry *
oft_entry_by_idx(struct zn_mgr *m, uint32_t idx)
{
	struct zn_oft *t = oft(m);

	return t != NULL && idx < t->capacity ? t->by_idx[idx] : NULL;
}

/* The chain of an entry's action, taken, or its group's index, used (0:
 * none needed). */
static int
act_take(struct zn_mgr *m, const struct zn_oft_action *a,
	 struct zn_oft_err *e)
{
	int id;

	if (a->verdict == ZN_OFT_GROUP) {
		id = oft_group_find(oft(m), a->group_id);
		if (id < 0) {
			snprintf(e->msg, sizeof(e->msg), "no group %u",
				 a->group_id);
			return zn_oft_err_set(e, "OFPET_BAD_ACTION",
					      "OFPBAC_BAD_OUT_GROUP", id,
					      e->msg);
		}
		oft_group_ref(oft(m), (unsigned int)id);
		return id;
	}
	if (a->verdict != ZN_OFT_CHAIN)
		return 0;
	id = zn_fdir_chain_take(m, a->steps, a->n_steps, e->msg,
				sizeof(e->msg));
	if (id < 0) {
		e->type = "OFPET_BAD_ACTION";
		e->code = id == -ENOSPC ? "OFPBAC_TOO_MANY" :
					  "OFPBAC_BAD_OUT_PORT";
	}
	return id;
}

/* Give back what act_take took for an act word's verdict and chain. */
static void
act_put(struct zn_mgr *m, unsigned int verdict, int chain)
{
	if (chain <= 0)
		return;
	if (verdict == ZN_OFT_CHAIN)
		zn_fdir_chain_put(m, (unsigned int)chain);
	else if (verdict == ZN_OFT_GROUP)
		oft_group_unref(oft(m), (unsigned int)chain);
}

static uint32_t
act_word(const struct zn_oft_action *a, int chain)
{
	return OFT_ACT(a->verdict, chain, a->verdict == ZN_OFT_CONTROLLER ?
					  a->max_len : 0);
}

static int
fm_err(struct zn_oft_err *e, const char *code, int rc, const char *msg)
{
	return zn_oft_err_set(e, "OFPET_FLOW_MOD_FAILED", code, rc, msg);
}

/* Counters' base: an entry starts at 0 (its index's counters go on). */
static void
entry_reset_counts(struct zn_oft *t, struct zn_oft_entry *e)
{
	counts(t, e->idx, &e->base_packets, &e->base_bytes, NULL);
	e->carry_packets = e->carry_bytes = 0;
	e->idle_since_tsc = rte_rdtsc();
}

/* New actions for @p e (its chain @p chain taken); workers see them with
 * one store. The old chain's reference goes at once: a freed chain id is
 * reused last, so a packet already given it keeps its hops. */
static void
entry_set_actions(struct zn_mgr *m, struct zn_oft_entry *e,
		  const struct zn_oft_action *a, int chain)
{
	uint32_t old = e->act;

	e->act_full = *a;
	__atomic_store_n(&e->act, act_word(a, chain), __ATOMIC_RELEASE);
	act_put(m, OFT_ACT_VERDICT(old), (int)OFT_ACT_CHAIN(old));
}

/* The entry of exactly this match and priority, or NULL: found through
 * the hash (its match's list), not by a scan. */
static struct zn_oft_entry *
entry_exact(struct zn_oft *t, const struct zn_oft_key *value,
	    const struct zn_oft_key *mask, uint16_t priority)
{
	for (struct zn_oft_entry *e = head_of(t, value, mask); e != NULL;
	     e = e->next_same)
		if (e->priority == priority)
			return e;
	return NULL;
}

static int
flow_add(struct zn_mgr *m, const struct zn_oft_mod *mod,
	 struct zn_oft_err *er)
{
	struct zn_oft *t = oft(m);
	struct zn_oft_entry *e, *same = entry_exact(t, &mod->value, &mod->mask,
						    mod->priority);
	int chain, s, rc;

	if (mod->flags & ZN_OFPFF_CHECK_OVERLAP) {
		for (uint32_t i = 0; i < t->capacity; i++) {
			const struct zn_oft_entry *o = t->by_idx[i];

			if (o != NULL && o != same &&
			    o->priority == mod->priority &&
			    overlaps(&o->value, &o->mask, &mod->value,
				     &mod->mask))
				return fm_err(er, "OFPFMFC_OVERLAP", -EEXIST,
					   "overlaps an entry of the same "
					   "priority");
		}
	}
	if (same == NULL && t->n_free == 0)
		return fm_err(er, "OFPFMFC_TABLE_FULL",
			   -ENOSPC, "the table is full (--of-flows)");
	chain = act_take(m, &mod->act, er);
	if (chain < 0)
		return chain;
	if (same != NULL) {
		/* Replaced (section 6.4): its duration restarts; counters
		 * kept unless RESET_COUNTS. */
		if (mod->flags & ZN_OFPFF_RESET_COUNTS)
			entry_reset_counts(t, same);
		same->cookie = mod->cookie;
		same->idle_timeout = mod->idle_timeout;
		same->hard_timeout = mod->hard_timeout;
		same->flags = mod->flags;
		same->created_ns = zn_now_ns();
		same->idle_since_tsc = rte_rdtsc();
		entry_set_actions(m, same, &mod->act, chain);
		return 0;
	}
	s = sub_find(t, &mod->mask, true);
	if (s < 0) {
		act_put(m, mod->act.verdict, chain);
		return fm_err(er, "OFPFMFC_TABLE_FULL",
			   -ENOSPC, "too many distinct masks (255 subtables)");
	}
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		act_put(m, mod->act.verdict, chain);
		return fm_err(er, "OFPFMFC_UNKNOWN",
			   -ENOMEM, "out of memory");
	}
	e->idx = t->free_idx[--t->n_free];
	e->priority = mod->priority;
	e->flags = mod->flags;
	e->value = mod->value;
	e->mask = mod->mask;
	e->sub = (uint8_t)(s + 1);
	e->table_miss = mod->priority == 0 && key_zero(&mod->mask);
	e->cookie = mod->cookie;
	e->idle_timeout = mod->idle_timeout;
	e->hard_timeout = mod->hard_timeout;
	e->act_full = mod->act;
	e->created_ns = zn_now_ns();
	e->act = act_word(&mod->act, chain);
	entry_reset_counts(t, e);
	rc = entry_insert(t, e);
	if (rc < 0) {
		t->free_idx[t->n_free++] = e->idx;
		free(e);
		act_put(m, mod->act.verdict, chain);
		return fm_err(er, "OFPFMFC_TABLE_FULL",
			   rc, "the table's hash is full");
	}
	t->sub[s].n++;
	t->by_idx[e->idx] = e;
	t->active++;
	/* the view changes only for a subtable new to it, or a priority
	 * above what it says of the subtable (it stops searching there) */
	if (!t->sub[s].published || e->priority > t->sub[s].pub_max)
		t->view_dirty = true;
	return 0;
}

static bool
cookie_ok(const struct zn_oft_entry *e, uint64_t cookie, uint64_t mask)
{
	return ((e->cookie ^ cookie) & mask) == 0;
}

/* Entries a modify or delete (or a stats request) selects. */
static bool
selected(const struct zn_oft_entry *e, const struct zn_oft_filter *f)
{
	if (!cookie_ok(e, f->cookie, f->cookie_mask) ||
	    !outputs_to(e, f->out_port))
		return false;
	if (f->by_group && (e->act_full.verdict != ZN_OFT_GROUP ||
			    e->act_full.group_id != f->out_group))
		return false;
	if (f->strict)
		return e->priority == f->priority && key_eq(&e->mask, &f->mask) &&
		       key_eq(&e->value, &f->value);
	return covers(&f->value, &f->mask, &e->value, &e->mask);
}

/* Call @p fn on each entry @p f selects (@p fn may unlink it): a strict
 * filter's one entry found through the hash, else every entry tested.
 * @return 0, or the first negative @p fn returned (it stops there). */
typedef int oft_each_fn(struct zn_mgr *m, struct zn_oft_entry *e, void *arg);

static int
each_selected(struct zn_mgr *m, const struct zn_oft_filter *f,
	      oft_each_fn *fn, void *arg)
{
	struct zn_oft *t = oft(m);
	int rc;

	if (f->strict) {
		struct zn_oft_entry *e = entry_exact(t, &f->value, &f->mask,
						     f->priority);

		return e != NULL && selected(e, f) ? fn(m, e, arg) : 0;
	}
	for (uint32_t i = 0; i < t->capacity; i++) {
		struct zn_oft_entry *e = t->by_idx[i];

		if (e != NULL && selected(e, f) && (rc = fn(m, e, arg)) < 0)
			return rc;
	}
	return 0;
}

struct select_arg {
	zn_oft_entry_fn *fn;
	void *arg;
	unsigned int n;
};

static int
select_one(struct zn_mgr *m, struct zn_oft_entry *e, void *arg)
{
	struct select_arg *a = arg;

	if (a->fn != NULL)
		a->fn(m, e, a->arg);
	a->n++;
	return 0;
}

unsigned int
zn_oft_select(struct zn_mgr *m, const struct zn_oft_filter *f,
	      zn_oft_entry_fn *fn, void *arg)
{
	struct select_arg a = { .fn = fn, .arg = arg };

	if (oft(m) != NULL)
		each_selected(m, f, select_one, &a);
	return a.n;
}

/* What a modify or delete selects (OpenFlow 1.3 section 6.4). */
static struct zn_oft_filter
mod_filter(const struct zn_oft_mod *mod, bool strict, uint32_t out_port)
{
	return (struct zn_oft_filter){
		.value = mod->value, .mask = mod->mask, .strict = strict,
		.priority = mod->priority, .out_port = out_port,
		.by_group = mod->by_group && mod->command >= ZN_OFPFC_DELETE,
		.out_group = mod->out_group,
		.cookie = mod->cookie, .cookie_mask = mod->cookie_mask,
	};
}

struct modify_arg {
	const struct zn_oft_mod *mod;
	struct zn_oft_err *er;
};

static int
modify_one(struct zn_mgr *m, struct zn_oft_entry *e, void *arg)
{
	struct modify_arg *a = arg;
	int chain = act_take(m, &a->mod->act, a->er);

	if (chain < 0)
		return chain;
	if (a->mod->flags & ZN_OFPFF_RESET_COUNTS)
		entry_reset_counts(oft(m), e);
	entry_set_actions(m, e, &a->mod->act, chain);
	return 0;
}

static int
delete_one(struct zn_mgr *m, struct zn_oft_entry *e, void *arg)
{
	(void)arg;
	entry_unlink(m, e, ZN_OFPRR_DELETE);
	return 0;
}

static int
flow_modify(struct zn_mgr *m, const struct zn_oft_mod *mod,
	    struct zn_oft_err *er)
{
	struct zn_oft_filter f = mod_filter(
		mod, mod->command == ZN_OFPFC_MODIFY_STRICT, ZN_OFPP_ANY);
	struct modify_arg a = { .mod = mod, .er = er };

	/* None selected: nothing (OpenFlow 1.3 no longer adds one). */
	return each_selected(m, &f, modify_one, &a);
}

static int
flow_delete(struct zn_mgr *m, const struct zn_oft_mod *mod)
{
	struct zn_oft_filter f = mod_filter(
		mod, mod->command == ZN_OFPFC_DELETE_STRICT, mod->out_port);

	return each_selected(m, &f, delete_one, NULL);
}

int
zn_oft_flow_mod(struct zn_mgr *m, const struct zn_oft_mod *mod,
		struct zn_oft_err *er)
{
	if (oft(m) == NULL)
		return fm_err(er, "OFPFMFC_UNKNOWN",
			   -ENODEV, "no OpenFlow table");
	for (unsigned int i = 0; i < ZN_OFT_KEY_WORDS; i++)
		if ((W(&mod->value, i) & ~W(&mod->mask, i)) != 0)
			return zn_oft_err_set(er, "OFPET_BAD_MATCH",
					      "OFPBMC_BAD_WILDCARDS", -EINVAL,
					      "a value has bits its mask has "
					      "not");
	switch (mod->command) {
	case ZN_OFPFC_ADD:
		return flow_add(m, mod, er);
	case ZN_OFPFC_MODIFY:
	case ZN_OFPFC_MODIFY_STRICT:
		return flow_modify(m, mod, er);
	case ZN_OFPFC_DELETE:
	case ZN_OFPFC_DELETE_STRICT:
		return flow_delete(m, mod);
	default:
		return fm_err(er, "OFPFMFC_BAD_COMMAND",
			   -EINVAL, "unknown command");
	}
}

/* Group @p g deleted: the entries that use it go first (reason
 * GROUP_DELETE), freed before the index can be another group's. */
static void
group_delete(struct zn_mgr *m, unsigned int g)
{
	struct zn_oft *t = oft(m);

	for (uint32_t i = 0; i < t->capacity; i++) {
		struct zn_oft_entry *e = t->by_idx[i];

		if (e != NULL && OFT_ACT_VERDICT(e->act) == ZN_OFT_GROUP &&
		    OFT_ACT_CHAIN(e->act) == g)
			entry_unlink(m, e, ZN_OFPRR_GROUP_DELETE);
	}
	zn_oft_commit(m);
	oft_group_remove(m, g);
}

int
zn_oft_group_mod(struct zn_mgr *m, const struct zn_oft_group_mod *gm,
		 struct zn_oft_err *er)
{
	struct zn_oft *t = oft(m);
	int g;

	if (t == NULL)
		return zn_oft_err_set(er, "OFPET_GROUP_MOD_FAILED",
				      "OFPGMFC_UNKNOWN", -ENODEV,
				      "no OpenFlow table");
	switch (gm->command) {
	case ZN_OFPGC_ADD:
	case ZN_OFPGC_MODIFY:
		return oft_group_set(m, gm, er);
	case ZN_OFPGC_DELETE:
		/* a group that is not there: nothing to do, no error
		 * (OpenFlow 1.3 section 6.7) */
		if (gm->group_id == ZN_OFPG_ALL) {
			for (unsigned int i = 1; i <= ZN_OFT_MAX_GROUPS; i++)
				if (t->group[i] != NULL)
					group_delete(m, i);
		} else if ((g = oft_group_find(t, gm->group_id)) > 0) {
			group_delete(m, (unsigned int)g);
		}
		return 0;
	default:
		return zn_oft_err_set(er, "OFPET_GROUP_MOD_FAILED",
				      "OFPGMFC_BAD_COMMAND", -EINVAL,
				      "unknown command");
	}
}

void
zn_oft_commit(struct zn_mgr *m)
{
	struct zn_oft *t = oft(m);

	if (t == NULL)
		return;
	if (t->view_dirty)
		view_publish(m); /* syncs */
	else if (t->need_sync)
		zn_route_sync(m);
	if (!t->need_sync)
		return;
	for (uint32_t i = 0; i < t->n_pos_to_free; i++)
		rte_hash_free_key_with_position(t->hash, t->pos_to_free[i]);
	t->n_pos_to_free = 0;
	while (t->to_free != NULL) {
		struct zn_oft_entry *e = t->to_free;

		t->to_free = e->next_free;
		act_put(m, OFT_ACT_VERDICT(e->act), (int)OFT_ACT_CHAIN(e->act));
		t->free_idx[t->n_free++] = e->idx;
		free(e);
	}
	t->need_sync = false;
}

void
zn_oft_entry_info(struct zn_mgr *m, const struct zn_oft_entry *e,
		  struct zn_oft_entry_info *o)
{
	struct zn_oft *t = oft(m);

	o->value = e->value;
	o->mask = e->mask;
	o->priority = e->priority;
	o->idle_timeout = e->idle_timeout;
	o->hard_timeout = e->hard_timeout;
	o->flags = e->flags;
	o->cookie = e->cookie;
	entry_counts(t, e, &o->packets, &o->bytes);
	o->duration_ns = zn_now_ns() - e->created_ns;
	o->act = e->act_full;
}

void
zn_oft_table_stats(struct zn_mgr *m, struct zn_oft_table_stats *s)
{
	struct zn_oft *t = oft(m);

	memset(s, 0, sizeof(*s));
	if (t == NULL)
		return;
	s->active = t->active;
	s->capacity = t->capacity;
	for (unsigned int i = 0; i < OFT_MAX_SUBTABLES; i++)
		s->subtables += t->sub[i].n != 0;
	for (unsigned int w = 0; w < t->n_workers; w++) {
		const struct oft_wstats *ws = &t->wst[w];

		s->lookups += ws->lookups;
		s->matched += ws->matched;
		s->punted += ws->punted;
		s->punt_drops += ws->punt_drops;
		s->no_match_drops += ws->no_match;
	}
	s->punt_drops += t->punt_unsent;
	s->packet_outs = t->packet_outs;
}

void
zn_oft_set_mode(struct zn_mgr *m, bool on, bool controller)
{
	struct zn_oft *t = oft(m);

	if (t == NULL || (t->on == on && t->controller == controller))
		return;
	t->on = on;
	t->controller = controller;
	view_publish(m);
}

void
zn_oft_get_mode(struct zn_mgr *m, bool *on, bool *controller)
{
	struct zn_oft *t = oft(m);

	*on = t != NULL && t->on;
	*controller = t != NULL && t->controller;
}

const struct zn_oft_entry *
oft_lookup_ctl(struct zn_mgr *m, const struct zn_oft_key *key, uint32_t len)
{
	struct zn_oft *t = oft(m);
	const struct zn_oft_entry *best;

	if (t->view_dirty) /* a batch's changes, not yet published */
		view_publish(m);
	oft_search(t->view, key, 1, &best);
	if (best != NULL) {
		/* counted as the control thread's (an entry's carry) */
		struct zn_oft_entry *e = t->by_idx[best->idx];

		e->carry_packets++;
		e->carry_bytes += len;
	}
	return best;
}

/* ---- timeouts ---- */

static void
oft_tick(void *arg)
{
	struct zn_mgr *m = arg;
	struct zn_oft *t = oft(m);
	uint64_t now_ns = zn_now_ns(), now_tsc = rte_rdtsc();
	uint64_t hz = rte_get_tsc_hz();
	bool any = false;

	for (uint32_t i = 0; i < t->capacity; i++) {
		struct zn_oft_entry *e = t->by_idx[i];
		uint64_t pk, by, used;

		if (e == NULL || (e->idle_timeout == 0 && e->hard_timeout == 0))
			continue;
		if (e->hard_timeout != 0 &&
		    now_ns - e->created_ns >= e->hard_timeout * 1000000000ULL) {
			entry_unlink(m, e, ZN_OFPRR_HARD_TIMEOUT);
			any = true;
			continue;
		}
		if (e->idle_timeout == 0)
			continue;
		counts(t, e->idx, &pk, &by, &used);
		if (used > e->idle_since_tsc)
			e->idle_since_tsc = used;
		/* (a worker's last hit may be later than now_tsc) */
		if (now_tsc > e->idle_since_tsc &&
		    now_tsc - e->idle_since_tsc >= e->idle_timeout * hz) {
			entry_unlink(m, e, ZN_OFPRR_IDLE_TIMEOUT);
			any = true;
		}
	}
	if (any)
		zn_oft_commit(m);
}

/* ---- start-up ---- */

static int
zn_oft_init(struct zn_mgr *m)
{
	struct zn_oft *t = calloc(1, sizeof(*t));
	char name[RTE_HASH_NAMESIZE];
	struct rte_hash_parameters p = {
		.name = name,
		.entries = RTE_MAX(m->cfg.of_flows, 8u),
		.key_len = sizeof(struct zn_oft_key),
		/* in shared memory, as every DPDK object in a shared list
		 * (private_heap.c says why) */
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF |
			      RTE_HASH_EXTRA_FLAGS_EXT_TABLE,
	};
	int rc;

	if (t == NULL)
		return -ENOMEM;
	m->oft = t;
	t->punt_fd = -1;
	t->capacity = m->cfg.of_flows;
	t->n_workers = m->dp.n_workers;
	snprintf(name, sizeof(name), "zn_oft");
	t->hash = rte_hash_create(&p);
	t->by_idx = calloc(t->capacity, sizeof(*t->by_idx));
	t->free_idx = calloc(t->capacity, sizeof(*t->free_idx));
	/* every key position the hash has may wait for a sync */
	t->pos_to_free = t->hash == NULL ? NULL :
			 calloc((size_t)rte_hash_max_key_id(t->hash) + 1,
				sizeof(*t->pos_to_free));
	/* counters in the process's own memory: no NF maps it */
	t->wst = aligned_alloc(RTE_CACHE_LINE_SIZE,
			       ZN_MAX_WORKERS * sizeof(*t->wst));
	if (t->wst != NULL)
		memset(t->wst, 0, ZN_MAX_WORKERS * sizeof(*t->wst));
	if (t->hash == NULL || t->by_idx == NULL || t->free_idx == NULL ||
	    t->pos_to_free == NULL || t->wst == NULL) {
		ZN_LOG(ERR, "OpenFlow table of %u entries: %s", t->capacity,
		       t->hash == NULL ? rte_strerror(rte_errno) :
		       "out of memory");
		return -ENOMEM;
	}
	for (unsigned int w = 0; w < t->n_workers; w++) {
		t->cnt[w] = calloc(t->capacity, sizeof(struct oft_count));
		if (t->cnt[w] == NULL) {
			ZN_LOG(ERR, "OpenFlow table counters: out of memory "
			       "(more --mem or fewer --of-flows)");
			return -ENOMEM;
		}
	}
	if (oft_group_init(t) < 0) {
		ZN_LOG(ERR, "OpenFlow group counters: out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->capacity; i++)
		t->free_idx[i] = t->capacity - 1 - i;
	t->n_free = t->capacity;
	t->punt_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	t->punt = rte_ring_create_elem("zn_oft_punt", sizeof(struct oft_punt),
				       OFT_PUNT_RING, SOCKET_ID_ANY,
				       RING_F_SC_DEQ);
	if (t->punt == NULL || t->punt_fd < 0) {
		ZN_LOG(ERR, "OpenFlow packet-in ring: out of memory");
		return -ENOMEM;
	}
	rc = zn_route_add_source(m, oft_fill);
	if (rc == 0 && m->loop != NULL)
		rc = zn_loop_every(m->loop, TICK_MS, oft_tick, m);
	if (rc == 0)
		rc = view_publish(m);
	return rc;
}

static void
zn_oft_fini(struct zn_mgr *m)
{
	struct zn_oft *t = oft(m);

	if (t == NULL)
		return;
	rte_ring_free(t->punt); /* emptied by oft_io.c's teardown */
	if (t->punt_fd >= 0)
		close(t->punt_fd);
	for (uint32_t i = 0; t->by_idx != NULL && i < t->capacity; i++)
		free(t->by_idx[i]);
	while (t->to_free != NULL) {
		struct zn_oft_entry *e = t->to_free;

		t->to_free = e->next_free;
		free(e);
	}
	oft_group_fini(m);
	rte_hash_free(t->hash);
	for (unsigned int w = 0; w < ZN_MAX_WORKERS; w++)
		free(t->cnt[w]);
	free(t->wst);
	free(t->by_idx);
	free(t->free_idx);
	free(t->pos_to_free);
	free(t->view);
	free(t);
	m->oft = NULL;
}

static const struct zn_subsys subsys = {
	.name = "openflow_table", .order = ZN_SUBSYS_OFT,
	.init = zn_oft_init, .fini = zn_oft_fini,
};
ZN_SUBSYS_REGISTER(subsys)

static void
oft_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->of_flows = 65536;
}

static const struct zn_opt oft_opt[] = {
	{ "of-flows", 0, "N", "OpenFlow table entries at most (default "
	  "65536)", ZN_OPT_UINT, ZN_CFG(of_flows), 8, 1u << 24, NULL },
};

static const struct zn_opts oft_opts = {
	.order = ZN_SUBSYS_OFT, .opt = oft_opt, .n = RTE_DIM(oft_opt),
	.defaults = oft_defaults,
};
ZN_OPTIONS_REGISTER(oft_opts)
