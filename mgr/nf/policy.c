/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Autoscaling and reactions (policy.h). */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <rte_ring.h>

#include "../core/cmd.h"
#include "../core/event.h"
#include "../flow/fdir.h"
#include "launch.h"
#include "link.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "policy.h"
#include "../../lib/common/zn_util.h"
#include "nf_rec.h"
#include "../core/subsys.h"

#define MAX_POLICIES 16
#define NAME_LEN 32

/* Defaults, once: the code uses them and policy.set's schema carries them
 * ("default"), which is where clients (zeronf apply) read them. */
#define D_MIN 1
#define D_MAX 16 /* ZN_MAX_REPLICAS, checked below */
#define D_OUT_FOR_S 3
#define D_IN_OCC 0.01
#define D_IN_FOR_S 10
#define D_FOR_S 2
#define D_REMOVE_S 10
#define STR_(x) #x
#define STR(x) STR_(x)
_Static_assert(D_MAX == ZN_MAX_REPLICAS, "autoscale max defaults to "
	       "ZN_MAX_REPLICAS");

struct scale_policy {
	char nf[NAME_LEN];
	unsigned int min, max;
	double out_occupancy;  /* 0: not used */
	double out_drop_rate;  /* 0: not used */
	double out_for_s;
	double in_occupancy;
	double in_for_s;
	/* state */
	uint64_t out_since, in_since; /* ns, 0: condition false */
	double occupancy, drop_rate;  /* last samples */
};

struct reaction {
	char name[NAME_LEN];
	char watch[NAME_LEN];     /* launched NF whose counter is watched */
	char counter[ZN_COUNTER_NAME_LEN];
	double above;             /* per second */
	double for_s;
	char insert[NAME_LEN];    /* launched NF put into the default chain */
	char after[NAME_LEN];     /* right after this one's step; "": first */
	double remove_after_s;
	/* state */
	bool active;
	uint64_t above_since, below_since;
	uint64_t last_value;
	bool have_last;
	double rate;
};

static struct {
	struct scale_policy scale[MAX_POLICIES];
	unsigned int n_scale;
	struct reaction react[MAX_POLICIES];
	unsigned int n_react;
	uint64_t last_ns;
	uint64_t ingress_drops; /* the previous sample */
} P;

/* Running NF slots of service @p svc: their inputs' mean fill (each its
 * RX ring's or a link's into it, the fullest: link.h). */
static double
occupancy(struct zn_mgr *m, uint16_t svc)
{
	double sum = 0;
	unsigned int n = 0;

	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		const struct zn_nf_slot *sl = zn_slot(m, s);

		if (zn_nf_state(m, s) != ZN_NF_RUNNING ||
		    sl->ctl.service_id != svc)
			continue;
		sum += zn_link_input_fill(m, s);
		n++;
	}
	return n ? sum / n : 0;
}

/* Packets refused at ingress: the chain's first hop full (--ingress
 * drop) or stalled, over every port and worker. */
static uint64_t
ingress_drops(struct zn_mgr *m)
{
	uint64_t n = 0;

	for (unsigned int w = 0; w < m->dp.n_workers; w++)
		for (unsigned int p = 0; p < m->n_ports; p++)
			n += m->shm->workers[w].port[p].drops[ZN_DROP_INGRESS_FULL] +
			     m->shm->workers[w].port[p].drops[ZN_DROP_STALLED];
	return n;
}

/* The counter @p name summed over the running replicas of launched NF
 * @p nf. false: none has it. */
static bool
nf_counter(struct zn_mgr *m, const char *nf, const char *name,
	   uint64_t *value)
{
	bool found = false;

	*value = 0;
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		const struct zn_nf_slot *sl = zn_slot(m, s);
		unsigned int nc = sl->req.n_counters;
		char who[ZN_NAME_LEN];

		zn_strlcpy(who, sl->ctl.name, sizeof(who));
		if (zn_nf_state(m, s) != ZN_NF_RUNNING ||
		    !zn_launch_is_replica(nf, who))
			continue;
		for (unsigned int i = 0; i < nc && i < ZN_NF_MAX_COUNTERS; i++)
			if (strncmp(sl->counter_names[i], name,
				    ZN_COUNTER_NAME_LEN) == 0) {
				*value += sl->counters[i];
				found = true;
			}
	}
	return found;
}

static bool
held(uint64_t *since, bool cond, uint64_t now, double for_s)
{
	if (!cond) {
		*since = 0;
		return false;
	}
	if (*since == 0)
		*since = now;
	return (double)(now - *since) / 1e9 >= for_s;
}

static void
scale_tick(struct zn_mgr *m, struct scale_policy *p, uint64_t now, double dt,
	   uint64_t drops_delta)
{
	uint16_t svc;
	unsigned int n;
	bool out, in;

	if (zn_launch_info(m, p->nf, &svc, &n) < 0)
		return;
	p->occupancy = occupancy(m, svc);
	p->drop_rate = dt > 0 ? drops_delta / dt : 0;
	out = (p->out_occupancy > 0 && p->occupancy >= p->out_occupancy) ||
	      (p->out_drop_rate > 0 && p->drop_rate >= p->out_drop_rate);
	in = !out && p->occupancy <= p->in_occupancy &&
	     (p->out_drop_rate == 0 || p->drop_rate < p->out_drop_rate);
	if (held(&p->out_since, out, now, p->out_for_s) && n < p->max) {
		zn_launch_scale(m, p->nf, n + 1);
		zn_event("scale.out", "%s: %u -> %u replicas (RX rings %.0f%% "
			 "full, %.0f ingress drops/s)", p->nf, n, n + 1,
			 100 * p->occupancy, p->drop_rate);
		p->out_since = 0; /* the next one after for_s again */
	}
	if (held(&p->in_since, in, now, p->in_for_s) && n > p->min) {
		zn_launch_scale(m, p->nf, n - 1);
		zn_event("scale.in", "%s: %u -> %u replicas (RX rings %.0f%% "
			 "full for %.0f s)", p->nf, n, n - 1, 100 * p->occupancy,
			 p->in_for_s);
		p->in_since = 0;
	}
}

/* Where launched NF @p insert goes in a chain: first, or right after the
 * step of launched NF @p after. -1: @p after not there. */
static int
insert_at(struct zn_mgr *m, const struct reaction *r,
	  const struct zn_step *steps, unsigned int n)
{
	uint16_t svc;
	unsigned int rep;

	if (r->after[0] == '\0')
		return 0;
	if (zn_launch_info(m, r->after, &svc, &rep) < 0)
		return -1;
	for (unsigned int i = 0; i < n; i++)
		if (steps[i].type == ZN_STEP_SERVICE && steps[i].host == 0 &&
		    steps[i].id == svc)
			return (int)i + 1;
	return -1;
}

/* @p steps with service @p svc put in at @p at, or taken out from
 * there. false: nothing to do (full, or someone changed the chain
 * meanwhile: left as it is). */
static bool
steps_edit(struct zn_step *steps, unsigned int *n, int at, uint16_t svc,
	   bool put)
{
	if (put) {
		if (*n == ZN_MAX_CHAIN_STEPS)
			return false;
		memmove(steps + at + 1, steps + at,
			(*n - (unsigned int)at) * sizeof(steps[0]));
		steps[at] = (struct zn_step){ .type = ZN_STEP_SERVICE,
					     .id = svc };
		(*n)++;
		return true;
	}
	if (at < (int)*n && *n > 1 && steps[at].type == ZN_STEP_SERVICE &&
	    steps[at].host == 0 && steps[at].id == svc) {
		memmove(steps + at, steps + at + 1,
			(*n - (unsigned int)at - 1) * sizeof(steps[0]));
		(*n)--;
		return true;
	}
	return false;
}

/* Put launched NF @p insert's service into the default chain and every
 * port's chain that has @p after, or take it out. A port's chain that is
 * a service path to other hosts stays on its path with the NF put in
 * (mgr/flow/fdir_chain.c: a path with this host's hops in between). */
static void
chain_edit(struct zn_mgr *m, struct reaction *r, bool put)
{
	struct zn_step steps[ZN_MAX_CHAIN_STEPS + 1];
	unsigned int n = zn_chain_get(m, steps), rep;
	uint16_t svc;
	char err[128];
	int at = insert_at(m, r, steps, n);
	bool any = false;

	if (zn_launch_info(m, r->insert, &svc, &rep) < 0) {
		zn_event("react.failed", "%s: no launched NF '%s'", r->name,
			 r->insert);
		return;
	}
	if (at >= 0 && steps_edit(steps, &n, at, svc, put)) {
		any = true;
		if (zn_chain_set(m, steps, n, err, sizeof(err)) < 0)
			zn_event("react.failed", "%s: %s", r->name, err);
	}
	for (unsigned int p = 0; p < m->n_ports; p++) {
		n = zn_fdir_port_chain(m, p, steps);
		at = n > 0 ? insert_at(m, r, steps, n) : -1;
		if (at < 0)
			continue;
		if (!steps_edit(steps, &n, at, svc, put))
			continue;
		any = true;
		if (zn_fdir_port_chain_set(m, p, steps, n, err,
					   sizeof(err)) < 0)
			zn_event("react.failed", "%s: port %u: %s", r->name, p,
				 err);
	}
	if (!any)
		zn_event("react.failed", "%s: no '%s' in a chain", r->name,
			 r->after);
}

static void
react_tick(struct zn_mgr *m, struct reaction *r, uint64_t now, double dt)
{
	uint64_t v;

	if (!nf_counter(m, r->watch, r->counter, &v)) {
		r->have_last = false;
		return;
	}
	r->rate = r->have_last && dt > 0 && v >= r->last_value ?
		  (v - r->last_value) / dt : 0;
	r->last_value = v;
	r->have_last = true;
	if (!r->active && held(&r->above_since, r->rate > r->above, now,
			       r->for_s)) {
		chain_edit(m, r, true);
		r->active = true;
		r->below_since = 0;
		zn_event("react.insert", "%s: %s put into the chain (%s %s at "
			 "%.0f/s)", r->name, r->insert, r->watch, r->counter,
			 r->rate);
	} else if (r->active &&
		   held(&r->below_since, r->rate <= r->above, now,
			r->remove_after_s)) {
		chain_edit(m, r, false);
		r->active = false;
		r->above_since = 0;
		zn_event("react.remove", "%s: %s taken out of the chain (%s "
			 "%s at %.0f/s for %.0f s)", r->name, r->insert,
			 r->watch, r->counter, r->rate, r->remove_after_s);
	}
}

static void
tick(void *arg)
{
	struct zn_mgr *m = arg;
	uint64_t now = zn_now_ns(), drops = ingress_drops(m);
	double dt = P.last_ns ? (now - P.last_ns) / 1e9 : 0;

	for (unsigned int i = 0; i < P.n_scale; i++)
		scale_tick(m, &P.scale[i], now, dt,
			   P.last_ns ? drops - P.ingress_drops : 0);
	for (unsigned int i = 0; i < P.n_react; i++)
		react_tick(m, &P.react[i], now, dt);
	P.last_ns = now;
	P.ingress_drops = drops;
}

/* Register the once-a-second tick. 0 or -errno. */
static int
zn_policy_init(struct zn_mgr *m)
{
	return zn_loop_every(m->loop, 1000, tick, m);
}

/* ------------------------------------------------------------------ */
/* Commands                                                            */

static double
num(json_t *o, const char *k, double dflt)
{
	json_t *v = json_object_get(o, k);

	return json_is_number(v) ? json_number_value(v) : dflt;
}

static int
name_of(json_t *o, const char *k, char *buf, size_t len, char *err,
	size_t errlen, const char *what)
{
	const char *s = json_string_value(json_object_get(o, k));

	if (s == NULL || s[0] == '\0' || strlen(s) >= len) {
		snprintf(err, errlen, "%s: '%s' must be a launched NF's name",
			 what, k);
		return -EINVAL;
	}
	zn_strlcpy(buf, s, len);
	return 0;
}

static int
cmd_policy_set(struct zn_cmd_req *req)
{
	json_t *sa = json_object_get(req->params, "autoscale");
	json_t *ra = json_object_get(req->params, "reactions"), *o;
	struct scale_policy sc[MAX_POLICIES];
	struct reaction re[MAX_POLICIES];
	char what[32];
	size_t i;

	if (json_array_size(sa) > MAX_POLICIES ||
	    json_array_size(ra) > MAX_POLICIES) {
		snprintf(req->err, sizeof(req->err), "at most %d policies of "
			 "each kind", MAX_POLICIES);
		return -EINVAL;
	}
	memset(sc, 0, sizeof(sc));
	memset(re, 0, sizeof(re));
	json_array_foreach(sa, i, o) {
		struct scale_policy *p = &sc[i];

		snprintf(what, sizeof(what), "autoscale[%zu]", i);
		if (!json_is_object(o) ||
		    name_of(o, "nf", p->nf, sizeof(p->nf), req->err,
			    sizeof(req->err), what) < 0)
			return -EINVAL;
		p->min = (unsigned int)num(o, "min", D_MIN);
		p->max = (unsigned int)num(o, "max", D_MAX);
		p->out_occupancy = num(o, "out_occupancy", 0);
		p->out_drop_rate = num(o, "out_drop_rate", 0);
		p->out_for_s = num(o, "out_for_s", D_OUT_FOR_S);
		p->in_occupancy = num(o, "in_occupancy", D_IN_OCC);
		p->in_for_s = num(o, "in_for_s", D_IN_FOR_S);
		if (p->min > p->max || p->max > ZN_MAX_REPLICAS ||
		    (p->out_occupancy <= 0 && p->out_drop_rate <= 0) ||
		    p->out_occupancy > 1 || p->in_occupancy < 0 ||
		    p->out_for_s < 0 || p->in_for_s < 0 ||
		    !isfinite(p->out_drop_rate)) {
			snprintf(req->err, sizeof(req->err), "%s: min <= max "
				 "<= %d, out_occupancy (0..1] or out_drop_rate "
				 "> 0, times >= 0", what, ZN_MAX_REPLICAS);
			return -EINVAL;
		}
	}
	json_array_foreach(ra, i, o) {
		struct reaction *r = &re[i];

		snprintf(what, sizeof(what), "reactions[%zu]", i);
		if (!json_is_object(o) ||
		    name_of(o, "name", r->name, sizeof(r->name), req->err,
			    sizeof(req->err), what) < 0 ||
		    name_of(o, "watch", r->watch, sizeof(r->watch), req->err,
			    sizeof(req->err), what) < 0 ||
		    name_of(o, "counter", r->counter, sizeof(r->counter),
			    req->err, sizeof(req->err), what) < 0 ||
		    name_of(o, "insert", r->insert, sizeof(r->insert),
			    req->err, sizeof(req->err), what) < 0)
			return -EINVAL;
		if (json_object_get(o, "after") != NULL &&
		    name_of(o, "after", r->after, sizeof(r->after), req->err,
			    sizeof(req->err), what) < 0)
			return -EINVAL;
		r->above = num(o, "above", -1);
		r->for_s = num(o, "for_s", D_FOR_S);
		r->remove_after_s = num(o, "remove_after_s", D_REMOVE_S);
		if (r->above < 0 || r->for_s < 0 || r->remove_after_s < 0 ||
		    !isfinite(r->above)) {
			snprintf(req->err, sizeof(req->err), "%s: above >= 0, "
				 "times >= 0", what);
			return -EINVAL;
		}
	}
	/* Reactions in force are taken back before they are replaced. */
	for (unsigned int k = 0; k < P.n_react; k++)
		if (P.react[k].active)
			chain_edit(req->mgr, &P.react[k], false);
	memcpy(P.scale, sc, sizeof(sc));
	memcpy(P.react, re, sizeof(re));
	P.n_scale = (unsigned int)json_array_size(sa);
	P.n_react = (unsigned int)json_array_size(ra);
	zn_event("policy.set", "%u autoscale policies, %u reactions",
		 P.n_scale, P.n_react);
	req->result = json_pack("{s:i, s:i}", "autoscale", (int)P.n_scale,
				"reactions", (int)P.n_react);
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_policy_list(struct zn_cmd_req *req)
{
	json_t *sa = json_array(), *ra = json_array();

	for (unsigned int i = 0; i < P.n_scale; i++) {
		const struct scale_policy *p = &P.scale[i];

		json_array_append_new(sa, json_pack(
			"{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}",
			"nf", p->nf, "min", (int)p->min, "max", (int)p->max,
			"out_occupancy", p->out_occupancy, "out_drop_rate",
			p->out_drop_rate, "out_for_s", p->out_for_s,
			"in_occupancy", p->in_occupancy, "in_for_s",
			p->in_for_s, "occupancy", p->occupancy, "drop_rate",
			p->drop_rate));
	}
	for (unsigned int i = 0; i < P.n_react; i++) {
		const struct reaction *r = &P.react[i];

		json_array_append_new(ra, json_pack(
			"{s:s, s:s, s:s, s:f, s:f, s:s, s:s, s:f, s:b, s:f}",
			"name", r->name, "watch", r->watch, "counter",
			r->counter, "above", r->above, "for_s", r->for_s,
			"insert", r->insert, "after", r->after,
			"remove_after_s",
			r->remove_after_s, "active", r->active, "rate",
			r->rate));
	}
	req->result = json_pack("{s:o, s:o}", "autoscale", sa, "reactions",
				ra);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd policy_set_cmd = {
	.name = "policy.set",
	.help = "replace the autoscaling policies and reactions",
	.params = {
		{ .name = "autoscale", .type = ZN_CMD_ARRAY,
		  .schema = "{\"maxItems\": 16, \"items\": {\"type\": "
			    "\"object\", \"required\": [\"nf\"], "
			    "\"properties\": {\"nf\": {\"type\": \"string\"}, "
			    "\"min\": {\"type\": \"integer\", \"default\": "
			    STR(D_MIN) "}, \"max\": {\"type\": \"integer\", "
			    "\"default\": " STR(D_MAX) "}, \"out_occupancy\": "
			    "{\"type\": \"number\", \"default\": 0}, "
			    "\"out_drop_rate\": {\"type\": \"number\", "
			    "\"default\": 0}, \"out_for_s\": {\"type\": "
			    "\"number\", \"default\": " STR(D_OUT_FOR_S) "}, "
			    "\"in_occupancy\": {\"type\": \"number\", "
			    "\"default\": " STR(D_IN_OCC) "}, \"in_for_s\": "
			    "{\"type\": \"number\", \"default\": "
			    STR(D_IN_FOR_S) "}}}}" },
		{ .name = "reactions", .type = ZN_CMD_ARRAY,
		  .schema = "{\"maxItems\": 16, \"items\": {\"type\": "
			    "\"object\", \"required\": [\"name\", \"watch\", "
			    "\"counter\", \"above\", \"insert\"], "
			    "\"properties\": {\"name\": {\"type\": "
			    "\"string\"}, \"watch\": {\"type\": \"string\"}, "
			    "\"counter\": {\"type\": \"string\"}, \"above\": "
			    "{\"type\": \"number\"}, \"for_s\": {\"type\": "
			    "\"number\", \"default\": " STR(D_FOR_S) "}, "
			    "\"insert\": {\"type\": \"string\"}, "
			    "\"after\": {\"type\": \"string\", \"default\": "
			    "\"\"}, \"remove_after_s\": {\"type\": "
			    "\"number\", \"default\": " STR(D_REMOVE_S) "}}}}" },
	},
	.result = "{\"autoscale\": \"policies now\", \"reactions\": \"now\"}",
	.doc = "autoscale: a launched NF (`nf`) gets one more replica (up to "
	       "`max`, default " STR(D_MAX) ") when its RX rings were at "
	       "least `out_occupancy` full on average, or ingress drops came "
	       "at `out_drop_rate`/s or more, for `out_for_s` seconds "
	       "(default " STR(D_OUT_FOR_S) "); one less (down to `min`, "
	       "default " STR(D_MIN) ") after `in_for_s` (default "
	       STR(D_IN_FOR_S) ") at or below `in_occupancy` (default "
	       STR(D_IN_OCC) "). "
	       "reactions: when the NF counter `counter` of launched NF "
	       "`watch` grows faster than `above`/s for `for_s` seconds "
	       "(default " STR(D_FOR_S) "), launched NF `insert` is put into "
	       "the default "
	       "chain, first or right after launched NF `after` (a monitor "
	       "placed before the filter keeps seeing the flood); it is taken "
	       "out after `remove_after_s` "
	       "(default " STR(D_REMOVE_S) ") at or below. Sampled once a "
	       "second; every "
	       "decision is an event.",
	.fn = cmd_policy_set,
};
ZN_CMD_REGISTER(policy_set_cmd)

static const struct zn_cmd policy_list_cmd = {
	.name = "policy.list",
	.help = "autoscaling policies and reactions, with what they saw last",
	.result = "{\"autoscale\": \"[policy + occupancy, drop_rate]\", "
		  "\"reactions\": \"[reaction + active, rate]\"}",
	.fn = cmd_policy_list,
};
ZN_CMD_REGISTER(policy_list_cmd)

static const struct zn_subsys subsys = {
	.name = "policies", .order = ZN_SUBSYS_POLICY,
	.init = zn_policy_init,
};
ZN_SUBSYS_REGISTER(subsys)
