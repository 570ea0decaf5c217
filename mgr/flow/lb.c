/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Load balancing across the replicas of a service, control side.
 *
 * HASH and WEIGHTED: the flow hash (symmetric, so both directions agree)
 * selects one of 256 buckets, each owned by a replica. Owners are kept
 * across changes: when a replica leaves, only its buckets move (to the
 * replicas furthest below their share), and a replica that joins takes
 * buckets from those above theirs. Every reassigned bucket is counted.
 * WEIGHTED sizes the shares by per-instance weights.
 *
 * LEAST_LOADED: a new flow goes to the replica with the shortest RX ring
 * (NetVM's policy) and stays pinned there (struct zn_lb_pins, lib/shm/zn_shm.h); a
 * pinned flow whose replica left moves to the least loaded survivor at its
 * next packet, counted by the worker that moved it.
 *
 * Unlike OpenNetVM's `rss_hash % n`, none of this needs NIC RSS: the
 * flow hash is the software one when the port gives none.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rte_malloc.h>

#include "../core/cmd.h"
#include "lb.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"
#include "route.h"
#include "../core/subsys.h"

struct lb_svc {
	uint8_t mode;
	uint16_t bucket[ZN_LB_BUCKETS];
	uint64_t moved_buckets;
	struct zn_lb_pins *pins;
};

struct zn_lb {
	uint16_t weight[ZN_MAX_NFS]; /* per instance; 0: default (1) */
	struct lb_svc svc[ZN_MAX_SERVICES];
};

static const char *const mode_names[] = {
	[ZN_LB_HASH] = "hash",
	[ZN_LB_LEAST_LOADED] = "least_loaded",
	[ZN_LB_WEIGHTED] = "weighted",
};

const char *
zn_lb_mode_name(unsigned int mode)
{
	return mode < RTE_DIM(mode_names) ? mode_names[mode] : "?";
}

int
zn_lb_mode_parse(const char *s)
{
	for (unsigned int i = 0; i < RTE_DIM(mode_names); i++)
		if (strcmp(s, mode_names[i]) == 0)
			return (int)i;
	return -EINVAL;
}

unsigned int
zn_lb_buckets_assign(uint16_t *bucket, const uint16_t *inst,
		     const uint32_t *weight, unsigned int n)
{
	unsigned int target[ZN_MAX_REPLICAS], used[ZN_MAX_REPLICAS] = { 0 };
	uint64_t total = 0, rem[ZN_MAX_REPLICAS];
	unsigned int given = 0, moved = 0, next = 0;

	if (n == 0) {
		for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++)
			bucket[b] = ZN_LB_NONE;
		return 0;
	}
	for (unsigned int i = 0; i < n; i++)
		total += weight[i];
	/* Shares by largest remainder, so they sum to ZN_LB_BUCKETS. */
	for (unsigned int i = 0; i < n; i++) {
		uint64_t x = (uint64_t)ZN_LB_BUCKETS * weight[i];

		target[i] = (unsigned int)(x / total);
		rem[i] = x % total;
		given += target[i];
	}
	while (given < ZN_LB_BUCKETS) {
		unsigned int best = 0;

		for (unsigned int i = 1; i < n; i++)
			if (rem[i] > rem[best])
				best = i;
		target[best]++;
		rem[best] = 0;
		given++;
	}
	/* Keep owners that are still members, up to their share. */
	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++) {
		unsigned int i;

		for (i = 0; i < n && inst[i] != bucket[b]; i++)
			;
		if (i < n && used[i] < target[i]) {
			used[i]++;
			continue;
		}
		if (bucket[b] != ZN_LB_NONE)
			moved++;
		bucket[b] = ZN_LB_NONE;
	}
	/* Hand out the rest round-robin, so shares interleave. */
	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++) {
		if (bucket[b] != ZN_LB_NONE)
			continue;
		while (used[next] >= target[next])
			next = (next + 1) % n;
		bucket[b] = inst[next];
		used[next]++;
		next = (next + 1) % n;
	}
	return moved;
}

static uint32_t
weight_of(const struct zn_lb *lb, unsigned int mode, uint16_t slot)
{
	return mode == ZN_LB_WEIGHTED && lb->weight[slot] != 0 ?
		       lb->weight[slot] : 1;
}

/* The snapshot's services (route.h source): rt->svc[] from the running
 * NFs, keeping flows where they are. */
static void
lb_fill(struct zn_mgr *m, struct zn_route *rt)
{
	struct zn_lb *lb = m->lb;

	/* A weight belongs to the NF it was given for: forgotten once its
	 * slot is free (a new NF there starts with the default). */
	for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
		if (zn_nf_state(m, i) == ZN_NF_FREE)
			lb->weight[i] = 0;
	for (unsigned int s = 1; s < ZN_MAX_SERVICES; s++) {
		struct zn_svc_entry *e = &rt->svc[s];
		struct lb_svc *ls = &lb->svc[s];
		uint32_t w[ZN_MAX_REPLICAS];

		for (unsigned int i = 0; i < e->n; i++)
			w[i] = weight_of(lb, ls->mode, e->inst[i]);
		ls->moved_buckets += zn_lb_buckets_assign(ls->bucket, e->inst,
							  w, e->n);
		e->mode = ls->mode;
		memcpy(e->bucket, ls->bucket, sizeof(e->bucket));
		e->pins = ls->pins;
	}
	rt->lb_epoch_idle = (uint16_t)RTE_MAX(1u, RTE_MIN(m->cfg.lb_idle_s,
							  30000u));
}

int
zn_lb_set(struct zn_mgr *m, uint16_t svc, enum zn_lb_mode mode,
	  const uint16_t *weights, char *err, size_t errlen)
{
	struct lb_svc *ls;
	struct zn_lb_pins *old = NULL;

	if (svc == 0 || svc >= ZN_MAX_SERVICES) {
		snprintf(err, errlen, "service: 1..%d", ZN_MAX_SERVICES - 1);
		return -EINVAL;
	}
	ls = &m->lb->svc[svc];
	if (mode == ZN_LB_LEAST_LOADED && ls->pins == NULL) {
		/* Hugepage memory: NF packet threads pin flows too. */
		ls->pins = rte_zmalloc("zn_lb_pins", sizeof(*ls->pins),
				       RTE_CACHE_LINE_SIZE);
		if (ls->pins == NULL)
			return -ENOMEM;
	} else if (mode != ZN_LB_LEAST_LOADED) {
		old = ls->pins; /* freed once no worker can see it */
		ls->pins = NULL;
	}
	if (weights != NULL)
		for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
			if (weights[i] != 0)
				m->lb->weight[i] = weights[i];
	ls->mode = (uint8_t)mode;
	zn_route_publish(m); /* no reader sees the old pins after it */
	rte_free(old);
	ZN_LOG(NOTICE, "service %u: load balancing %s", svc,
	       zn_lb_mode_name(mode));
	return 0;
}

/* Once a second: LEAST_LOADED pins age by epochs. */
static void
lb_tick(void *arg)
{
	struct zn_mgr *m = arg;
	uint32_t e = __atomic_add_fetch(&m->shm->rt.lb_epoch, 1,
					__ATOMIC_RELAXED);

	/* and the copy each trust group's NFs read (zn_group_home view) */
	for (unsigned int g = 0; g < ZN_MAX_GROUPS; g++)
		if (m->trust.group[g].pool != NULL)
			__atomic_store_n(&zn_group_home_at(g)->view.lb_epoch, e,
					 __ATOMIC_RELAXED);
}

json_t *
zn_lb_json(struct zn_mgr *m, uint16_t svc)
{
	const struct lb_svc *ls = &m->lb->svc[svc];
	json_t *share = json_object();
	uint64_t moved_flows = 0;
	unsigned int pinned = 0;
	char key[16];

	for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++) {
		json_t *v;

		if (ls->bucket[b] == ZN_LB_NONE)
			continue;
		snprintf(key, sizeof(key), "%u", ls->bucket[b]);
		v = json_object_get(share, key);
		json_object_set_new(share, key,
				    json_integer(v ? json_integer_value(v) + 1 :
						     1));
	}
	if (ls->pins != NULL) {
		for (unsigned int w = 0; w < ZN_READERS; w++)
			moved_flows += ls->pins->w[w].moved;
		for (unsigned int i = 0; i < ZN_LB_PINS; i++)
			pinned += ls->pins->pin[i] != 0;
	}
	return json_pack("{s:s, s:o, s:I, s:I, s:i}", "lb",
			 zn_lb_mode_name(ls->mode), "buckets", share,
			 "moved_buckets", (json_int_t)ls->moved_buckets,
			 "moved_flows", (json_int_t)moved_flows, "pinned",
			 (int)pinned);
}

/* Make the balancing state and register as a source (after the flow
 *  director). 0 or -errno. */
static int
zn_lb_init(struct zn_mgr *m)
{
	int rc;

	m->lb = calloc(1, sizeof(*m->lb));
	if (m->lb == NULL)
		return -ENOMEM;
	for (unsigned int s = 0; s < ZN_MAX_SERVICES; s++)
		for (unsigned int b = 0; b < ZN_LB_BUCKETS; b++)
			m->lb->svc[s].bucket[b] = ZN_LB_NONE;
	rc = zn_route_add_source(m, lb_fill);
	if (rc == 0 && m->loop != NULL)
		rc = zn_loop_every(m->loop, 1000, lb_tick, m);
	if (rc == 0)
		zn_route_publish(m);
	return rc;
}

static void
zn_lb_fini(struct zn_mgr *m)
{
	if (m->lb == NULL)
		return;
	for (unsigned int s = 0; s < ZN_MAX_SERVICES; s++)
		rte_free(m->lb->svc[s].pins);
	free(m->lb);
	m->lb = NULL;
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

static int
cmd_service_set(struct zn_cmd_req *req)
{
	json_int_t svc = json_integer_value(json_object_get(req->params,
							    "service"));
	json_t *lb = json_object_get(req->params, "lb");
	json_t *wo = json_object_get(req->params, "weights"), *v;
	uint16_t weights[ZN_MAX_NFS];
	const char *k;
	int mode, rc;

	mode = lb ? zn_lb_mode_parse(json_string_value(lb)) : -EINVAL;
	if (mode < 0) {
		snprintf(req->err, sizeof(req->err),
			 "lb: hash, least_loaded or weighted");
		return -EINVAL;
	}
	memset(weights, 0, sizeof(weights));
	json_object_foreach(wo, k, v) {
		uint64_t inst;

		if (zn_parse_uint(k, 0, ZN_MAX_NFS - 1, &inst) < 0 ||
		    !json_is_integer(v) || json_integer_value(v) < 1 ||
		    json_integer_value(v) > 1000) {
			snprintf(req->err, sizeof(req->err),
				 "weights: {\"<instance>\": 1..1000, ...}");
			return -EINVAL;
		}
		weights[inst] = (uint16_t)json_integer_value(v);
		/* A weight for an instance that is not of this service would
		 * be kept and silently never used. */
		if (!zn_slot_serves(zn_slot(req->mgr, inst),
				    (uint16_t)svc)) {
			snprintf(req->err, sizeof(req->err), "weights: "
				 "instance %llu is not a running NF of "
				 "service %lld", (unsigned long long)inst,
				 (long long)svc);
			return -EINVAL;
		}
	}
	rc = zn_lb_set(req->mgr, (uint16_t)svc, (enum zn_lb_mode)mode,
		       wo ? weights : NULL, req->err, sizeof(req->err));
	if (rc < 0)
		return rc;
	req->result = zn_lb_json(req->mgr, (uint16_t)svc);
	json_object_set_new(req->result, "service", json_integer(svc));
	return 0;
}

static const struct zn_cmd service_set_cmd = {
	.name = "service.set",
	.help = "set a service's load balancing (and weights)",
	.params = {
		{ .name = "service", .type = ZN_CMD_INT, .required = true,
		  .bounded = true, .min = 1, .max = ZN_MAX_SERVICES - 1 },
		{ .name = "lb", .type = ZN_CMD_STR, .required = true,
		  .choices = (const char *const[]){ "hash", "least_loaded",
						    "weighted", NULL } },
		{ .name = "weights", .type = ZN_CMD_OBJECT,
		  .desc = "{\"<instance id>\": 1..1000}; unnamed instances "
			  "weigh 1",
		  .schema = "{\"additionalProperties\": {\"type\": "
			    "\"integer\", \"minimum\": 1, \"maximum\": "
			    "1000}}" },
	},
	.result = "{\"lb\": \"mode\", \"buckets\": \"{instance: buckets "
		  "of 256}\", \"moved_buckets\": \"buckets given to another "
		  "instance so far\", \"moved_flows\": \"pinned flows moved "
		  "off a replica that left\", \"pinned\": \"live pins "
		  "(least_loaded)\", \"service\": \"the service\"}",
	.fn = cmd_service_set,
};
ZN_CMD_REGISTER(service_set_cmd)

static const struct zn_subsys subsys = {
	.name = "balancing", .order = ZN_SUBSYS_LB,
	.init = zn_lb_init, .fini = zn_lb_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static void
lb_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->lb_idle_s = 30;
}

static const struct zn_opt lb_opt[] = {
	{ "lb-idle-s", 0, "S", "least_loaded balancing: a flow's pin expires "
	  "after S s\nidle (default 30)", ZN_OPT_UINT,
	  ZN_CFG(lb_idle_s), 1, 30000, NULL },
};

static const struct zn_opts lb_opts = {
	.order = ZN_SUBSYS_LB, .opt = lb_opt, .n = RTE_DIM(lb_opt),
	.defaults = lb_defaults,
};
ZN_OPTIONS_REGISTER(lb_opts)
