/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow table's groups (oft.h "Groups"): select groups onto the
 * balancing ZeroNF's services use for their replicas. A group's buckets
 * are chains (services, then at most one port), each taken from the flow
 * director like an entry's; the 256 slots of the flow hash's top byte are
 * shared among the buckets in proportion to their weights by
 * zn_lb_buckets_assign (mgr/flow/lb.h: a modify moves only the slots it
 * must), so both directions of a flow, which share the symmetric hash,
 * take one bucket. Workers read a group as one immutable struct oft_gview
 * through an atomic pointer: a change builds a new one, swaps it in, and
 * frees the old after a sync. Control thread only, but for the counts
 * each worker writes for itself.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oft_pvt.h"
#include "../core/mgr.h"
#include "../flow/fdir.h"
#include "../flow/lb.h"
#include "../flow/route.h"
#include "../../lib/common/zn_util.h"

static int
gerr(struct zn_oft_err *e, const char *code, int rc, const char *msg)
{
	return zn_oft_err_set(e, "OFPET_GROUP_MOD_FAILED", code, rc, msg);
}

int
oft_group_find(const struct zn_oft *t, uint32_t id)
{
	for (unsigned int g = 1; g <= ZN_OFT_MAX_GROUPS; g++)
		if (t->group[g] != NULL && t->group[g]->id == id)
			return (int)g;
	return -ENOENT;
}

void
oft_group_ref(struct zn_oft *t, unsigned int g)
{
	t->group[g]->ref_count++;
}

void
oft_group_unref(struct zn_oft *t, unsigned int g)
{
	if (t->group[g] != NULL && t->group[g]->ref_count > 0)
		t->group[g]->ref_count--;
}

static void
counts(const struct zn_oft *t, unsigned int g, unsigned int b, uint64_t *pk,
       uint64_t *by)
{
	*pk = *by = 0;
	for (unsigned int w = 0; w < t->n_workers; w++) {
		*pk += t->gcnt[w][OFT_GCOUNT_IDX(g, b)].packets;
		*by += t->gcnt[w][OFT_GCOUNT_IDX(g, b)].bytes;
	}
}

static void
chains_put(struct zn_mgr *m, const int *chain, unsigned int n)
{
	for (unsigned int b = 0; b < n; b++)
		if (chain[b] > 0)
			zn_fdir_chain_put(m, (unsigned int)chain[b]);
}

/* Swap group @p g's view for @p nv (NULL: none); the old one freed once
 * no worker reads it. */
static void
gview_swap(struct zn_mgr *m, unsigned int g, struct oft_gview *nv)
{
	struct zn_oft *t = m->oft;
	struct oft_gview *old = t->gv[g];

	__atomic_store_n(&t->gv[g], nv, __ATOMIC_RELEASE);
	zn_route_sync(m);
	free(old);
}

int
oft_group_set(struct zn_mgr *m, const struct zn_oft_group_mod *gm,
	      struct zn_oft_err *e)
{
	struct zn_oft *t = m->oft;
	struct oft_group *grp, *old;
	struct oft_gview *nv;
	uint16_t inst[ZN_OFT_GROUP_BUCKETS];
	uint32_t weight[ZN_OFT_GROUP_BUCKETS];
	unsigned int n = gm->n_buckets, live = 0;
	int g = oft_group_find(t, gm->group_id);

	if (gm->type != ZN_OFPGT_SELECT && gm->type != ZN_OFPGT_INDIRECT)
		return gerr(e, "OFPGMFC_BAD_TYPE", -EINVAL, "select and "
			    "indirect groups only: a ZeroNF chain passes one "
			    "packet on (docs/sdn.md)");
	if (gm->group_id > ZN_OFPG_MAX)
		return gerr(e, "OFPGMFC_INVALID_GROUP", -EINVAL,
			    "a reserved group id");
	if (n > ZN_OFT_GROUP_BUCKETS)
		return gerr(e, "OFPGMFC_OUT_OF_BUCKETS", -ENOSPC,
			    "at most 32 buckets");
	if (gm->type == ZN_OFPGT_INDIRECT && n != 1)
		return gerr(e, "OFPGMFC_INVALID_GROUP", -EINVAL,
			    "an indirect group has one bucket");
	for (unsigned int b = 0; b < n; b++)
		live += gm->type == ZN_OFPGT_INDIRECT ||
			gm->bucket[b].weight > 0;
	if (n > 0 && live == 0)
		return gerr(e, "OFPGMFC_BAD_BUCKET", -EINVAL,
			    "every bucket's weight is 0");
	if (gm->command == ZN_OFPGC_ADD && g > 0)
		return gerr(e, "OFPGMFC_GROUP_EXISTS", -EEXIST,
			    "a group of that id exists");
	if (gm->command == ZN_OFPGC_MODIFY && g < 0)
		return gerr(e, "OFPGMFC_UNKNOWN_GROUP", -ENOENT,
			    "no group of that id");
	if (g < 0) { /* a free index */
		for (g = 1; g <= ZN_OFT_MAX_GROUPS && t->group[g] != NULL; g++)
			;
		if (g > ZN_OFT_MAX_GROUPS)
			return gerr(e, "OFPGMFC_OUT_OF_GROUPS", -ENOSPC,
				    "at most 255 groups");
	}
	old = t->group[g];
	grp = calloc(1, sizeof(*grp));
	nv = calloc(1, sizeof(*nv));
	if (grp == NULL || nv == NULL) {
		free(grp);
		free(nv);
		return gerr(e, "OFPGMFC_UNKNOWN", -ENOMEM, "out of memory");
	}
	grp->id = gm->group_id;
	grp->type = gm->type;
	grp->n_buckets = n;
	for (unsigned int b = 0; b < n; b++) {
		const struct zn_oft_action *a = &gm->bucket[b].act;

		grp->bucket[b] = gm->bucket[b];
		grp->chain[b] = a->verdict != ZN_OFT_CHAIN ? 0 :
				zn_fdir_chain_take(m, a->steps, a->n_steps,
						   e->msg, sizeof(e->msg));
		if (a->verdict != ZN_OFT_CHAIN || grp->chain[b] < 0) {
			int rc = grp->chain[b] < 0 ? grp->chain[b] : -EINVAL;

			grp->chain[b] = 0;
			chains_put(m, grp->chain, b);
			free(grp);
			free(nv);
			return gerr(e, "OFPGMFC_BAD_BUCKET", rc,
				    a->verdict != ZN_OFT_CHAIN ?
				    "a bucket outputs to services, then at "
				    "most one port" : e->msg);
		}
		inst[b] = (uint16_t)b;
		weight[b] = gm->type == ZN_OFPGT_INDIRECT ? 1 :
			    gm->bucket[b].weight;
		nv->chain[b] = (uint8_t)grp->chain[b];
	}
	/* a modify keeps the slots of the buckets that stay (their flows
	 * stay where they were) */
	if (old != NULL)
		memcpy(grp->slot_owner, old->slot_owner,
		       sizeof(grp->slot_owner));
	else
		for (unsigned int i = 0; i < 256; i++)
			grp->slot_owner[i] = ZN_LB_NONE;
	for (unsigned int i = 0; i < 256; i++)
		if (grp->slot_owner[i] != ZN_LB_NONE &&
		    (grp->slot_owner[i] >= n ||
		     weight[grp->slot_owner[i]] == 0))
			grp->slot_owner[i] = ZN_LB_NONE;
	if (n > 0) {
		/* buckets of weight 0 take no slot */
		uint16_t li[ZN_OFT_GROUP_BUCKETS];
		uint32_t lw[ZN_OFT_GROUP_BUCKETS];
		unsigned int k = 0;

		for (unsigned int b = 0; b < n; b++)
			if (weight[b] > 0) {
				li[k] = inst[b];
				lw[k++] = weight[b];
			}
		zn_lb_buckets_assign(grp->slot_owner, li, lw, k);
	}
	for (unsigned int i = 0; i < 256; i++)
		nv->slot[i] = (uint8_t)(grp->slot_owner[i] == ZN_LB_NONE ? 0 :
					grp->slot_owner[i]);
	if (n == 0) {
		free(nv); /* no bucket: its packets drop */
		nv = NULL;
	}
	grp->created_ns = old != NULL ? old->created_ns : zn_now_ns();
	grp->ref_count = old != NULL ? old->ref_count : 0;
	for (unsigned int b = 0; b < ZN_OFT_GROUP_BUCKETS; b++) {
		if (old != NULL && b < old->n_buckets) {
			grp->base_packets[b] = old->base_packets[b];
			grp->base_bytes[b] = old->base_bytes[b];
		} else { /* a new bucket counts from 0 */
			counts(t, (unsigned int)g, b, &grp->base_packets[b],
			       &grp->base_bytes[b]);
		}
	}
	t->group[g] = grp;
	gview_swap(m, (unsigned int)g, nv);
	if (old != NULL) {
		chains_put(m, old->chain, old->n_buckets);
		free(old);
	}
	return 0;
}

void
oft_group_remove(struct zn_mgr *m, unsigned int g)
{
	struct zn_oft *t = m->oft;
	struct oft_group *grp = t->group[g];

	if (grp == NULL)
		return;
	t->group[g] = NULL;
	gview_swap(m, g, NULL);
	chains_put(m, grp->chain, grp->n_buckets);
	free(grp);
}

unsigned int
zn_oft_groups(struct zn_mgr *m, uint32_t group_id,
	      void (*fn)(const struct zn_oft_group_info *g, void *arg),
	      void *arg)
{
	struct zn_oft *t = m->oft;
	unsigned int order[ZN_OFT_MAX_GROUPS], n = 0;

	if (t == NULL)
		return 0;
	for (unsigned int g = 1; g <= ZN_OFT_MAX_GROUPS; g++)
		if (t->group[g] != NULL &&
		    (group_id == ZN_OFPG_ALL || t->group[g]->id == group_id))
			order[n++] = g;
	for (unsigned int i = 1; i < n; i++) /* by id: few, insertion */
		for (unsigned int j = i; j > 0 && t->group[order[j - 1]]->id >
						   t->group[order[j]]->id; j--) {
			unsigned int x = order[j];

			order[j] = order[j - 1];
			order[j - 1] = x;
		}
	for (unsigned int i = 0; i < n; i++) {
		const struct oft_group *grp = t->group[order[i]];
		struct zn_oft_group_info in = {
			.group_id = grp->id, .type = grp->type,
			.n_buckets = grp->n_buckets,
			.ref_count = grp->ref_count,
			.duration_ns = zn_now_ns() - grp->created_ns,
		};

		memcpy(in.bucket, grp->bucket, sizeof(in.bucket));
		for (unsigned int b = 0; b < grp->n_buckets; b++) {
			counts(t, order[i], b, &in.bucket_packets[b],
			       &in.bucket_bytes[b]);
			in.bucket_packets[b] -= grp->base_packets[b];
			in.bucket_bytes[b] -= grp->base_bytes[b];
			in.packets += in.bucket_packets[b];
			in.bytes += in.bucket_bytes[b];
		}
		fn(&in, arg);
	}
	return n;
}

int
oft_group_init(struct zn_oft *t)
{
	for (unsigned int w = 0; w < t->n_workers; w++) {
		t->gcnt[w] = calloc(OFT_GCOUNTS, sizeof(*t->gcnt[w]));
		if (t->gcnt[w] == NULL)
			return -ENOMEM;
	}
	return 0;
}

void
oft_group_fini(struct zn_mgr *m)
{
	struct zn_oft *t = m->oft;

	/* the chains go with the flow director (as the entries' do) */
	for (unsigned int g = 1; g <= ZN_OFT_MAX_GROUPS; g++) {
		free(t->group[g]);
		free(t->gv[g]);
		t->group[g] = NULL;
		t->gv[g] = NULL;
	}
	for (unsigned int w = 0; w < ZN_MAX_WORKERS; w++) {
		free(t->gcnt[w]);
		t->gcnt[w] = NULL;
	}
}
