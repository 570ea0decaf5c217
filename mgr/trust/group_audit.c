/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * `group.audit`: make a trust group's pool whole again once the group has
 * no NF. What the owner map cannot see (owner_map.h) lands in the pool: a
 * buffer an NF freed in its own process and also handed back is in the
 * pool twice (the pool then hands it out twice); a hostile NF can write
 * anything into its pool's free ring (it maps the ring); a buffer an NF
 * allocated and kept outside its ledger is lost when it dies. With the
 * group empty, nothing but the pool should hold its buffers: the workers
 * empty their caches of it and say what they still hold (group_audit_hot.c),
 * the control thread empties its own, then the free ring is taken out
 * whole, every entry checked against the map of the pool's buffers
 * (something else: dropped), each buffer kept once, and put back. What is
 * neither in the ring nor held is missing: counted, and with `force` put
 * back as the pool made it (only the operator knows that no device still
 * holds one: a NIC's TX ring releases buffers late).
 *
 * Control thread only; the pool's mempool ops (ring) are multi-producer:
 * a late free by a PMD meanwhile lands in the ring after what was taken.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_mempool.h>

#include "../core/mgr.h"
#include "../core/cmd.h"
#include "owner_map.h"
#include "../core/event.h"
#include "group.h"
#include "port_headers.h"
#include "../datapath/worker.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"

#define ASK_TIMEOUT_MS 1000
#define CHUNK 256

struct audit {
	struct rte_mempool *mp;
	const struct zn_owner_map *d;
	unsigned int g;
	uint8_t *seen;      /* by (p - lo) >> own_shift */
	void **keep;        /* buffers to put back, each once */
	unsigned int n_keep, cap;
	unsigned int twice, foreign, missing, recovered;
	bool force;
};

/* Why the group's buffers may be elsewhere than the pool, or NULL. */
static const char *
busy(const struct zn_mgr *m, unsigned int g)
{
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		if (zn_nf_state(m, s) != ZN_NF_FREE &&
		    m->nf[s].group == &m->trust.group[g])
			return "it has NFs (stop them first)";
	for (uint16_t p = 0; p < m->n_ports; p++)
		if (m->ports[p].group == &m->trust.group[g])
			return "a port receives into its pool";
	return NULL;
}

/* Every worker empties its cache of @p a's pool; how many of the pool's
 * buffers they hold, or -ETIMEDOUT. */
static int
ask_workers(struct zn_mgr *m, const struct audit *a)
{
	struct timespec ts = { 0, 100000 };
	unsigned int held = 0;

	for (unsigned int i = 0; i < m->dp.n_workers; i++) {
		struct zn_worker *w = m->dp.workers[i];

		w->audit_mp = a->mp;
		w->audit_hdrs = m->trust.group[a->g].port_headers != NULL ?
				m->trust.group[a->g].port_headers->mp : NULL;
		w->audit_lo = a->d->lo;
		w->audit_hi = a->d->hi;
		__atomic_store_n(&w->audit_req, w->audit_req + 1,
				 __ATOMIC_RELEASE);
		zn_db_ring(&m->shm->workers[i].db);
	}
	for (unsigned int i = 0; i < m->dp.n_workers; i++) {
		struct zn_worker *w = m->dp.workers[i];

		for (unsigned int t = 0; zn_audit_pending(w); t++) {
			if (t > ASK_TIMEOUT_MS * 10)
				return -ETIMEDOUT;
			nanosleep(&ts, NULL);
		}
		held += w->audit_held;
	}
	return (int)held;
}

static void
keep(struct audit *a, void *obj)
{
	uintptr_t p = (uintptr_t)obj;
	size_t i;

	if (!zn_owner_map_real(a->d, obj)) {
		a->foreign++; /* not a buffer of the pool: dropped */
		return;
	}
	i = (p - a->d->lo) >> a->d->own_shift;
	if (a->seen[i]) {
		a->twice++;
		return;
	}
	a->seen[i] = 1;
	if (a->n_keep < a->cap)
		a->keep[a->n_keep++] = obj;
}

/* Every buffer of the pool, from the manager's map (DPDK's list of a
 * pool's objects runs through headers in the buffers, which NFs write),
 * not seen in the ring: missing. */
static void
find_missing(struct audit *a)
{
	const struct zn_owner_map *d = a->d;

	for (size_t i = 0; i <= (d->hi - d->lo) >> d->own_shift; i++) {
		void *obj;

		if (d->own[i].start == ZN_OWN_NONE || a->seen[i])
			continue;
		obj = (void *)(d->lo + (i << d->own_shift) + d->own[i].start);
		a->missing++;
		if (!a->force)
			continue;
		a->recovered++;
		keep(a, zn_owner_map_restore(d, obj));
	}
}

/* Take the free ring out whole, keep each buffer once, put them back. */
static int
rebuild(struct audit *a)
{
	struct rte_mempool_cache *c = rte_mempool_default_cache(
		a->mp, rte_lcore_id());
	void *objs[CHUNK];
	unsigned int n = CHUNK;

	if (c != NULL) /* reclaim frees from this thread */
		rte_mempool_cache_flush(c, a->mp);
	/* All or nothing per call (a ring): halve until even one fails,
	 * the ring is empty then (its count is not in DPDK's API). */
	while (n > 0) {
		if (rte_mempool_ops_dequeue_bulk(a->mp, objs, n) < 0) {
			n /= 2;
			continue;
		}
		for (unsigned int i = 0; i < n; i++)
			keep(a, objs[i]);
	}
	find_missing(a);
	/* Nobody holds one: none is handed out (owner_map.h). */
	for (size_t i = 0; i <= (a->d->hi - a->d->lo) >> a->d->own_shift; i++)
		a->d->own[i].owner = 0;
	for (unsigned int i = 0; i < a->n_keep; i += CHUNK)
		if (rte_mempool_ops_enqueue_bulk(a->mp, a->keep + i,
						 RTE_MIN((unsigned int)CHUNK,
							 a->n_keep - i)) < 0)
			return -ENOSPC; /* never: the ring holds the pool */
	return 0;
}

static int
cmd_group_audit(struct zn_cmd_req *req)
{
	struct zn_mgr *m = req->mgr;
	const char *name = json_string_value(json_object_get(req->params,
							     "group"));
	struct audit a = { .force = json_is_true(json_object_get(
				  req->params, "force")) };
	const char *why;
	int g = zn_group_find(m, name), held, rc;

	if (g < 0) {
		snprintf(req->err, sizeof(req->err), "no trust group '%s'",
			 name);
		return -ENOENT;
	}
	if (m->trust.owner_maps == NULL) {
		snprintf(req->err, sizeof(req->err), "an audit reads the map "
			 "of the pool's buffers: needs --validate on");
		return -ENOTSUP;
	}
	if ((why = busy(m, (unsigned int)g)) != NULL) {
		snprintf(req->err, sizeof(req->err), "group '%s': %s", name,
			 why);
		return -EBUSY;
	}
	a.mp = m->trust.group[g].pool_mgr; /* the manager's header (pool_header.c) */
	a.g = (unsigned int)g;
	a.d = &m->trust.owner_maps[g + 1];
	held = ask_workers(m, &a);
	if (held != 0) {
		snprintf(req->err, sizeof(req->err), held < 0 ?
			 "the workers did not answer" : "the workers still "
			 "hold %d of its buffers (in flight): try again", held);
		return held < 0 ? held : -EAGAIN;
	}
	a.cap = a.mp->size;
	a.seen = calloc(((a.d->hi - a.d->lo) >> a.d->own_shift) + 1, 1);
	a.keep = calloc(a.cap, sizeof(*a.keep));
	rc = a.seen != NULL && a.keep != NULL ? rebuild(&a) : -ENOMEM;
	free(a.seen);
	free(a.keep);
	if (rc < 0)
		return rc;
	if (a.twice + a.foreign + a.recovered != 0)
		zn_event("group.audit", "trust group '%s': %u buffers freed "
			 "twice, %u foreign pointers, %u missing, %u put back",
			 name, a.twice, a.foreign, a.missing, a.recovered);
	req->result = json_pack("{s:s, s:i, s:i, s:i, s:i, s:i, s:i}",
				"group", name, "size", (int)a.mp->size,
				"free", (int)a.n_keep, "freed_twice",
				(int)a.twice, "foreign", (int)a.foreign,
				"missing", (int)a.missing, "recovered",
				(int)a.recovered);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd group_audit_cmd = {
	.name = "group.audit",
	.help = "make an empty trust group's pool whole again",
	.params = {
		{ .name = "group", .type = ZN_CMD_STR, .required = true,
		  .desc = "the trust group" },
		{ .name = "force", .type = ZN_CMD_BOOL,
		  .desc = "also put back the buffers found nowhere (only when "
			  "no device can still hold one)" },
	},
	.result = "{\"group\": \"name\", \"size\": \"buffers\", \"free\": "
		  "\"buffers in the pool now\", \"freed_twice\": \"copies "
		  "dropped\", \"foreign\": \"pointers that were no buffer of "
		  "it, dropped\", \"missing\": \"buffers found nowhere\", "
		  "\"recovered\": \"of those, put back (force)\"}",
	.doc = "For a group with no NF and no port of its own (`EBUSY` "
	       "otherwise). What the owner map cannot see ends in the pool: "
	       "a buffer an NF freed in its own process and also handed "
	       "back is there twice, a hostile NF may write anything into "
	       "its pool's free ring, a buffer an NF kept outside its ledger "
	       "is lost when it dies. The workers empty their caches of the "
	       "pool (`EAGAIN` while they still hold its packets), then the "
	       "free ring is rebuilt: each buffer once, anything else "
	       "dropped. `missing` buffers are in neither; `force` puts them "
	       "back as the pool made them. Event `group.audit` when "
	       "something was repaired. docs/security.md \"Descriptors\".",
	.fn = cmd_group_audit,
};
ZN_CMD_REGISTER(group_audit_cmd)
