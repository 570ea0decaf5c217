/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The ratelimit NF's commands (nf.call, docs/nfs/ratelimit.md), on its
 * packet thread between two bursts. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <zeronf/zeronf.h>

#include "rl_nf.h"
#include "../common/reply.h"

static const char *const per_names[] = { "", "flow", "src", "dst" };

static void
amount(char *out, size_t n, const struct rl_spec *s, bool burst)
{
	if (s->rate == 0)
		snprintf(out, n, "%s", "");
	else if (burst)
		snprintf(out, n, s->unit == RL_BITS ? "%" PRIu64 "b" :
			 "%" PRIu64 "p", s->unit == RL_BITS ? s->burst / 8 :
			 s->burst);
	else
		snprintf(out, n, "%" PRIu64 "%s", s->rate,
			 s->unit == RL_BITS ? "bit" : "pps");
}

/* classes.list: each class's rates and what it passed and dropped. */
static int
cmd_classes_list(struct zn_nf *nf, const char *args, char *reply,
		 size_t len)
{
	json_t *o = json_object(), *a = json_array();

	(void)nf;
	(void)args;
	for (unsigned int i = 0; i <= rl.conf.n; i++) {
		const struct rl_class *c = &rl.conf.c[i];
		char r[32], b[32], pr[32], pb[32];

		if (i == rl.conf.n && !rl.conf.has_default)
			break;
		amount(r, sizeof(r), &c->agg, false);
		amount(b, sizeof(b), &c->agg, true);
		amount(pr, sizeof(pr), &c->each, false);
		amount(pb, sizeof(pb), &c->each, true);
		json_array_append_new(a, json_pack(
			"{s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I, s:I, "
			"s:I}", "name", c->name, "rate", r, "burst", b, "per",
			per_names[c->per], "per_rate", pr, "per_burst", pb,
			"passed", (json_int_t)c->passed, "passed_bytes",
			(json_int_t)c->passed_bytes, "dropped_class",
			(json_int_t)c->dropped_class, "dropped_per",
			(json_int_t)c->dropped_per, "dropped_full",
			(json_int_t)c->dropped_full));
	}
	json_object_set_new(o, "classes", a);
	json_object_set_new(o, "keys", json_integer(rl.in_use));
	json_object_set_new(o, "capacity", json_integer(rl.cap));
	return reply_json(o, reply, len);
}

/* One of rate/burst/per_rate/per_burst of class.set into @p s. */
static int
set_amount(json_t *a, const char *key, bool burst, struct rl_spec *s,
	   char *reply, size_t len)
{
	json_t *v = json_object_get(a, key);
	uint64_t units;
	uint8_t unit;

	if (v == NULL)
		return 0;
	if (!json_is_string(v) ||
	    rl_parse_amount(json_string_value(v), burst, &unit, &units) < 0 ||
	    (!burst && units == 0)) {
		snprintf(reply, len, "class.set: %s: want %s", key, burst ?
			 "N p (packets) or N b/kb/mb (bytes)" :
			 "N pps/kpps/mpps or N bit/kbit/mbit/gbit");
		return -EINVAL;
	}
	if (burst && (s->rate == 0 || unit != s->unit)) {
		snprintf(reply, len, "class.set: %s: %s", key, s->rate == 0 ?
			 "no rate to burst" : "packets for a rate in pps, "
			 "bytes for one in bits");
		return -EINVAL;
	}
	if (burst) {
		s->burst = units;
	} else {
		bool was = s->rate != 0 && s->unit == unit;

		s->unit = unit;
		s->rate = units;
		if (!was)
			s->burst = rl_default_burst(s);
	}
	return 0;
}

/* class.set {"name": N, "rate": R, "burst": B, "per_rate": R2,
 * "per_burst": B2}: new rates for a class, from the next packet. The
 * class's bucket keeps its tokens (cut to the new burst); its flows'
 * start again full. */
static int
cmd_class_set(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a = json_loads(args, 0, NULL);
	const char *name = json_string_value(json_object_get(a, "name"));
	struct rl_class *c = NULL;
	struct rl_spec agg, each;
	unsigned int ci;
	int rc;

	(void)nf;
	for (ci = 0; name != NULL && ci <= rl.conf.n; ci++)
		if (strcmp(rl.conf.c[ci].name, name) == 0 &&
		    (ci < rl.conf.n || rl.conf.has_default)) {
			c = &rl.conf.c[ci];
			break;
		}
	if (c == NULL) {
		snprintf(reply, len, "class.set: no class '%s'", name ? name :
			 "(name missing)");
		json_decref(a);
		return -ENOENT;
	}
	agg = c->agg;
	each = c->each;
	rc = set_amount(a, "rate", false, &agg, reply, len);
	if (rc == 0)
		rc = set_amount(a, "burst", true, &agg, reply, len);
	if (rc == 0 && c->per == RL_PER_NONE &&
	    (json_object_get(a, "per_rate") ||
	     json_object_get(a, "per_burst"))) {
		snprintf(reply, len, "class.set: class '%s' has no per", name);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = set_amount(a, "per_rate", false, &each, reply, len);
	if (rc == 0)
		rc = set_amount(a, "per_burst", true, &each, reply, len);
	json_decref(a);
	if (rc < 0)
		return rc;
	c->agg = agg;
	if (c->bucket.tokens > agg.burst * 1000000000ull)
		c->bucket.tokens = agg.burst * 1000000000ull;
	if (memcmp(&each, &c->each, sizeof(each)) != 0) {
		c->each = each;
		rl_keys_forget_class(ci);
	}
	return cmd_classes_list(nf, "{}", reply, len);
}

int
rl_cmds_register(struct zn_nf *nf)
{
	int rc = zn_nf_cmd_register(nf, "classes.list", cmd_classes_list);

	return rc == 0 ? zn_nf_cmd_register(nf, "class.set", cmd_class_set) :
			 rc;
}
