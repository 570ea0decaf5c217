/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow table's commands (of.flow_mod, of.flows, of.table): the
 * table through the control protocol, for scripts and the CLI, beside
 * OpenFlow itself (ofp_*.c). Their JSON is oft_json.c's; every field and
 * prerequisite is checked here: any client may send these.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "oft.h"
#include "../core/cmd.h"
#include "../core/mgr.h"
#include "../../lib/common/zn_util.h"

static json_t *
err_json(const struct zn_oft_err *e)
{
	return json_pack("{s:s, s:s, s:s}", "type", e->type, "code", e->code,
			 "message", e->msg);
}

/* ---- of.flow_mod ---- */

static const char *const commands[] = { "add", "modify", "modify_strict",
					"delete", "delete_strict" };

static int
mod_parse(json_t *o, struct zn_oft_mod *mod, struct zn_oft_err *e)
{
	json_t *j;
	const char *c = json_string_value(json_object_get(o, "command"));
	int rc;
	uint64_t x;

	memset(mod, 0, sizeof(*mod));
	e->type = "OFPET_BAD_REQUEST";
	e->code = "OFPBRC_EPERM";
	mod->command = 0xff;
	for (unsigned int i = 0; c != NULL && i < RTE_DIM(commands); i++)
		if (strcmp(c, commands[i]) == 0)
			mod->command = (uint8_t)i;
	if (mod->command == 0xff) {
		e->type = "OFPET_FLOW_MOD_FAILED";
		e->code = "OFPFMFC_BAD_COMMAND";
		snprintf(e->msg, sizeof(e->msg), "command: one of add, modify, "
			 "modify_strict, delete, delete_strict");
		return -EINVAL;
	}
	rc = zn_oft_match_parse(json_object_get(o, "match"), &mod->value,
				&mod->mask, e->msg, sizeof(e->msg));
	if (rc < 0) {
		e->type = "OFPET_BAD_MATCH";
		e->code = rc == -ENOENT ? "OFPBMC_BAD_FIELD" :
			  rc == -EPROTO ? "OFPBMC_BAD_PREREQ" :
					  "OFPBMC_BAD_VALUE";
		return rc;
	}
	static const struct { const char *n; uint64_t max, dflt; } nums[] = {
		{ "priority", 0xffff, 0x8000 }, { "idle_timeout", 0xffff, 0 },
		{ "hard_timeout", 0xffff, 0 }, { "flags", 0x1f, 0 },
		{ "out_port", 0xffffffff, ZN_OFPP_ANY },
		{ "buffer_id", 0xffffffff, ZN_OFP_NO_BUFFER },
	};
	uint64_t v[RTE_DIM(nums)];

	for (unsigned int i = 0; i < RTE_DIM(nums); i++) {
		if (zn_oft_json_u64(json_object_get(o, nums[i].n), nums[i].dflt,
			    &v[i]) < 0 || v[i] > nums[i].max) {
			snprintf(e->msg, sizeof(e->msg), "%s: 0..%" PRIu64,
				 nums[i].n, nums[i].max);
			return -EINVAL;
		}
	}
	mod->priority = (uint16_t)v[0];
	mod->idle_timeout = (uint16_t)v[1];
	mod->hard_timeout = (uint16_t)v[2];
	mod->flags = (uint16_t)v[3];
	mod->out_port = (uint32_t)v[4];
	mod->buffer_id = (uint32_t)v[5];
	if (zn_oft_json_u64(json_object_get(o, "cookie"), 0, &mod->cookie) < 0 ||
	    zn_oft_json_u64(json_object_get(o, "cookie_mask"), 0, &x) < 0) {
		snprintf(e->msg, sizeof(e->msg), "cookie, cookie_mask: 64-bit "
			 "numbers (\"0x...\")");
		return -EINVAL;
	}
	mod->cookie_mask = x;
	j = json_object_get(o, "actions");
	if (mod->command <= ZN_OFPFC_MODIFY_STRICT) {
		uint32_t port;

		if (j == NULL) {
			mod->act.verdict = ZN_OFT_DROP;
		} else {
			rc = zn_oft_action_parse(j, &mod->act, &port, e->msg,
					  sizeof(e->msg));
			if (rc == 0 && port != 0 && port != ZN_OFPP_NORMAL) {
				snprintf(e->msg, sizeof(e->msg), "a flow entry "
					 "cannot output to that reserved port "
					 "(docs/sdn.md)");
				rc = -EINVAL;
			}
			if (rc < 0) {
				e->type = "OFPET_BAD_ACTION";
				e->code = "OFPBAC_BAD_OUT_PORT";
				return rc;
			}
		}
	}
	return 0;
}

static int
cmd_flow_mod(struct zn_cmd_req *req)
{
	json_t *mods = json_object_get(req->params, "mods"), *o;
	json_t *res = json_array();
	size_t i;
	unsigned int failed = 0;

	json_array_foreach(mods, i, o) {
		struct zn_oft_mod mod;
		struct zn_oft_err e = { 0 };
		int rc = mod_parse(o, &mod, &e);

		if (rc == 0)
			rc = zn_oft_mod_apply(req->mgr, &mod, &e);
		json_array_append_new(res, rc == 0 ? json_null() : err_json(&e));
		failed += rc != 0;
	}
	zn_oft_commit(req->mgr);
	req->result = json_pack("{s:o, s:i}", "results", res, "failed",
				(int)failed);
	return 0;
}

static const struct zn_cmd flow_mod_cmd = {
	.name = "of.flow_mod",
	.help = "OpenFlow flow mods, in order (a batch)",
	.params = { { .name = "mods", .type = ZN_CMD_ARRAY, .required = true,
		      .schema = "{\"items\": {\"type\": \"object\"}}" } },
	.result = "{\"results\": \"[null | {type, code, message}]: each "
		  "mod's OpenFlow error\", \"failed\": \"how many failed\"}",
	.doc = "A mod: `{command: add|modify|modify_strict|delete|"
	       "delete_strict, match: {FIELD: value or \"value/mask\"}, "
	       "priority, cookie, cookie_mask, idle_timeout, hard_timeout, "
	       "flags, out_port, buffer_id, actions}` as OpenFlow 1.3's "
	       "FLOW_MOD (docs/sdn.md); `actions`: `{type: chain, steps}`, "
	       "`{type: group, group_id}`, `{type: controller, max_len}`, "
	       "`{type: normal}` or `{type: drop}`. All of a batch is in "
	       "force when it answers.",
	.fn = cmd_flow_mod,
};
ZN_CMD_REGISTER(flow_mod_cmd)

/* ---- of.flows ---- */

struct flows_arg {
	json_t *flows;
	unsigned int limit;
	uint64_t packets, bytes;
	unsigned int n;
};

static void
flow_one(struct zn_mgr *m, const struct zn_oft_entry *e, void *arg)
{
	struct flows_arg *a = arg;
	struct zn_oft_entry_info in;

	zn_oft_entry_info(m, e, &in);
	a->packets += in.packets;
	a->bytes += in.bytes;
	if (a->flows == NULL || a->n++ >= a->limit)
		return;
	json_array_append_new(a->flows, zn_oft_entry_json(&in));
}

static int
filter_parse(struct zn_cmd_req *req, struct zn_oft_filter *f)
{
	json_t *p = req->params;
	uint64_t x;
	int rc;

	memset(f, 0, sizeof(*f));
	rc = zn_oft_match_parse(json_object_get(p, "match"), &f->value,
				&f->mask, req->err, sizeof(req->err));
	if (rc < 0)
		return -EINVAL;
	f->strict = json_is_true(json_object_get(p, "strict"));
	if (zn_oft_json_u64(json_object_get(p, "priority"), 0x8000, &x) < 0 ||
	    x > 0xffff)
		goto bad;
	f->priority = (uint16_t)x;
	if (zn_oft_json_u64(json_object_get(p, "out_port"), ZN_OFPP_ANY, &x) < 0 ||
	    x > UINT32_MAX)
		goto bad;
	f->out_port = (uint32_t)x;
	if (zn_oft_json_u64(json_object_get(p, "cookie"), 0, &f->cookie) < 0 ||
	    zn_oft_json_u64(json_object_get(p, "cookie_mask"), 0,
		    &f->cookie_mask) < 0)
		goto bad;
	return 0;
bad:
	snprintf(req->err, sizeof(req->err), "priority, out_port, cookie, "
		 "cookie_mask: numbers in range");
	return -EINVAL;
}

static int
cmd_flows(struct zn_cmd_req *req)
{
	struct zn_oft_filter f;
	struct flows_arg a = { .flows = NULL, .limit = UINT32_MAX };
	json_t *lim = json_object_get(req->params, "limit");
	bool aggregate = json_is_true(json_object_get(req->params,
						      "aggregate"));
	unsigned int n;

	if (filter_parse(req, &f) < 0)
		return -EINVAL;
	if (lim != NULL)
		a.limit = (unsigned int)json_integer_value(lim);
	if (!aggregate)
		a.flows = json_array();
	n = zn_oft_select(req->mgr, &f, flow_one, &a);
	req->result = json_pack("{s:i, s:I, s:I}", "count", (int)n, "packets",
				(json_int_t)a.packets, "bytes",
				(json_int_t)a.bytes);
	if (!aggregate)
		json_object_set_new(req->result, "flows", a.flows);
	return 0;
}

static const struct zn_cmd flows_cmd = {
	.name = "of.flows",
	.help = "OpenFlow table entries (OFPMP_FLOW, OFPMP_AGGREGATE)",
	.params = {
		{ .name = "match", .type = ZN_CMD_OBJECT },
		{ .name = "strict", .type = ZN_CMD_BOOL },
		{ .name = "priority", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = 0xffff },
		{ .name = "out_port", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = UINT32_MAX },
		{ .name = "cookie", .type = ZN_CMD_STR },
		{ .name = "cookie_mask", .type = ZN_CMD_STR },
		{ .name = "aggregate", .type = ZN_CMD_BOOL,
		  .desc = "the sums only" },
		{ .name = "limit", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = INT32_MAX },
	},
	.result = "{\"count\": \"entries selected\", \"packets\": \"their "
		  "packets\", \"bytes\": \"their bytes\", \"flows\": "
		  "\"[{match, priority, cookie, idle_timeout, hard_timeout, "
		  "flags, packets, bytes, duration_ns, actions}]\"}",
	.doc = "Selected as OpenFlow's flow stats request: `match` "
	       "non-strict (entries it covers) or `strict`, `out_port`, "
	       "`cookie`/`cookie_mask`.",
	.fn = cmd_flows,
};
ZN_CMD_REGISTER(flows_cmd)

/* ---- of.table ---- */

static int
cmd_table(struct zn_cmd_req *req)
{
	struct zn_oft_table_stats s;
	bool on, ctl;

	zn_oft_table_stats(req->mgr, &s);
	zn_oft_get_mode(req->mgr, &on, &ctl);
	req->result = json_pack(
		"{s:b, s:b, s:i, s:i, s:i, s:I, s:I, s:I, s:I, s:I, s:I}",
		"on", on, "controller", ctl, "active", (int)s.active,
		"capacity", (int)s.capacity, "subtables", (int)s.subtables,
		"lookups", (json_int_t)s.lookups, "matched",
		(json_int_t)s.matched, "punted", (json_int_t)s.punted,
		"punt_drops", (json_int_t)s.punt_drops, "no_match_drops",
		(json_int_t)s.no_match_drops, "packet_outs",
		(json_int_t)s.packet_outs);
	return 0;
}

static const struct zn_cmd table_cmd = {
	.name = "of.table",
	.help = "the OpenFlow table: mode and counters (OFPMP_TABLE)",
	.result = "{\"on\": \"it classifies port ingress\", \"controller\": "
		  "\"packet-ins may go\", \"active\": \"entries\", "
		  "\"capacity\": \"--of-flows\", \"subtables\": \"distinct "
		  "masks\", \"lookups\": \"packets looked up\", \"matched\": "
		  "\"of those, matched an entry\", \"punted\": \"sent to the "
		  "controller\", \"punt_drops\": \"for the controller, "
		  "dropped (none connected, queue full)\", \"no_match_drops\": "
		  "\"matched nothing\", \"packet_outs\": \"packets a "
		  "packet-out or a flow mod's buffer sent, a copy per "
		  "output\"}",
	.fn = cmd_table,
};
ZN_CMD_REGISTER(table_cmd)
