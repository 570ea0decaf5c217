/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Control commands of the flow director's rules (flow.*, rule.*; the
 * chains' are fdir_chain_cmds.c's): JSON in, one call of fdir.c, JSON
 * out. A request that fails validation
 * changes nothing; a batch (flow.add) is validated whole first. The
 * parameters' schema is declared with each command (cmd.h). */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../core/cmd.h"
#include "fdir.h"
#include "fdir_pvt.h"
#include "../core/mgr.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_flow.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/shm/zn_shm.h"

struct flow_item {
	struct zn_flow_key key;
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	unsigned int n;
	bool both;
};

/* Validate a whole flows array before changing anything. */
static struct flow_item *
parse_flows(struct zn_cmd_req *req, bool want_chain, size_t *count)
{
	static const char *const add_keys[] = { "flow", "chain", "both", NULL };
	static const char *const del_keys[] = { "flow", "both", NULL };
	json_t *a = json_object_get(req->params, "flows"), *it;
	size_t i, n = json_array_size(a);
	struct flow_item *items;
	char e[200];

	if (n == 0 || n > 100000) {
		snprintf(req->err, sizeof(req->err),
			 "flows: 1..100000 items expected");
		return NULL;
	}
	items = calloc(n, sizeof(*items));
	if (items == NULL)
		return NULL;
	json_array_foreach(a, i, it) {
		json_t *both = json_object_get(it, "both");
		int rc;

		if (zn_fdir_check_keys(it, want_chain ? add_keys : del_keys, "item", e,
			       sizeof(e)) < 0 ||
		    zn_fdir_parse_flow(json_object_get(it, "flow"), &items[i].key, e,
			       sizeof(e)) < 0)
			goto bad;
		if (both != NULL && !json_is_boolean(both)) {
			snprintf(e, sizeof(e), "both must be true or false");
			goto bad;
		}
		items[i].both = json_is_true(both);
		if (!want_chain)
			continue;
		rc = zn_cmd_parse_steps(json_object_get(it, "chain"), "chain",
				       items[i].steps, e, sizeof(e));
		if (rc < 0)
			goto bad;
		items[i].n = (unsigned int)rc;
	}
	*count = n;
	return items;
bad:
	snprintf(req->err, sizeof(req->err), "flows[%zu]: %s", i, e);
	free(items);
	return NULL;
}

/* flow.add and flow.del's .check: every item parses. */
static int
check_flows(struct zn_cmd_req *req, bool want_chain)
{
	size_t n;
	struct flow_item *items = parse_flows(req, want_chain, &n);

	free(items);
	return items != NULL ? 0 : req->err[0] ? -EINVAL : -ENOMEM;
}

static int
check_flow_add(struct zn_cmd_req *req)
{
	return check_flows(req, true);
}

static int
check_flow_del(struct zn_cmd_req *req)
{
	return check_flows(req, false);
}

static int
cmd_flow_add(struct zn_cmd_req *req)
{
	size_t n, added = 0;
	struct flow_item *items = parse_flows(req, true, &n);
	int rc = 0;

	if (items == NULL)
		return req->err[0] ? -EINVAL : -ENOMEM;
	for (size_t i = 0; i < n && rc == 0 && req->tenant != 0; i++)
		rc = zn_tenant_steps_check(req->mgr, (int)req->tenant - 1,
					  items[i].steps, items[i].n, req->err,
					  sizeof(req->err));
	for (size_t i = 0; i < n && rc == 0; i++) {
		struct zn_flow_key keys[2] = { items[i].key };

		zn_flow_key_reverse(&items[i].key, &keys[1]);
		for (unsigned int d = 0; d < (items[i].both ? 2u : 1u); d++) {
			rc = zn_fdir_flow_add(req->mgr, &keys[d],
					      items[i].steps, items[i].n,
					      req->tenant, ZN_FDIR_BY_SOCKET,
					      items[i].both, req->err,
					      sizeof(req->err));
			if (rc < 0)
				break;
			added++;
		}
	}
	free(items);
	if (rc < 0) /* capacity: what was added stays, and is reported */
		snprintf(req->err + strlen(req->err),
			 sizeof(req->err) - strlen(req->err),
			 " (%zu entries added before)", added);
	else
		req->result = json_pack("{s:I}", "added", (json_int_t)added);
	return rc;
}

/* Whose rules a request may delete: a tenant's socket its own, the
 * operator's anyone's. */
static unsigned int
owner(const struct zn_cmd_req *req)
{
	return req->tenant != 0 ? req->tenant : ZN_FDIR_ANY_OWNER;
}

static int
cmd_flow_del(struct zn_cmd_req *req)
{
	size_t n, deleted = 0, missing = 0;
	struct flow_item *items = parse_flows(req, false, &n);

	if (items == NULL)
		return req->err[0] ? -EINVAL : -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct zn_flow_key keys[2] = { items[i].key };

		zn_flow_key_reverse(&items[i].key, &keys[1]);
		for (unsigned int d = 0; d < (items[i].both ? 2u : 1u); d++) {
			int rc = zn_fdir_flow_del(req->mgr, &keys[d],
						  owner(req));

			if (rc < 0) {
				missing++;
				continue;
			}
			deleted += (size_t)rc;
			if (rc == 2) /* its pair went with it */
				break;
		}
	}
	free(items);
	req->result = json_pack("{s:I, s:I}", "deleted", (json_int_t)deleted,
				"missing", (json_int_t)missing);
	return 0;
}

/* A rule's owner in a reply: its tenant's name, or null (the operator). */
static json_t *
tenant_name(const struct zn_mgr *m, unsigned int tenant)
{
	return tenant != 0 && tenant <= m->cfg.n_tenants ?
	       json_string(m->cfg.tenants[tenant - 1].name) : json_null();
}

static int
cmd_flow_list(struct zn_cmd_req *req)
{
	json_t *lim = json_object_get(req->params, "limit"), *a;
	json_int_t limit = lim ? json_integer_value(lim) : 1000;
	const struct zn_flow_key *key;
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	unsigned int chain, tenant, by;
	uint32_t cursor = 0;
	struct zn_fdir_counts c;
	int own = 0;

	if (limit < 0) {
		snprintf(req->err, sizeof(req->err), "limit must be >= 0");
		return -EINVAL;
	}
	a = json_array();
	/* A tenant's socket: its own rules, and how many (not the table's) */
	while ((req->tenant != 0 || (json_int_t)json_array_size(a) < limit) &&
	       zn_fdir_flow_iterate(req->mgr, &cursor, &key, &chain,
				    &tenant, &by) >= 0) {
		if (req->tenant != 0 && tenant != req->tenant)
			continue;
		own++;
		if ((json_int_t)json_array_size(a) >= limit)
			continue;
		json_array_append_new(a, json_pack(
			"{s:o, s:i, s:o, s:o, s:s}", "flow",
			zn_fdir_flow_json(key), "chain_id", (int)chain, "chain",
			zn_cmd_steps_json(steps, zn_fdir_chain_steps(req->mgr, chain,
							      steps)),
			"tenant", tenant_name(req->mgr, tenant), "by",
			by == ZN_FDIR_BY_SOCKET ? "socket" :
			by == ZN_FDIR_BY_KEPT ? "kept" : "nf"));
	}
	zn_fdir_counts(req->mgr, &c);
	req->result = json_pack("{s:i, s:i, s:o}", "count", req->tenant ? own :
				(int)c.flows, "capacity", (int)c.capacity,
				"flows", a);
	return 0;
}

/* rule.add's parameters: the match into @p r, the chain into @p steps.
 * @return the chain's length, or -errno (req->err set). */
static int
parse_rule(struct zn_cmd_req *req, struct zn_fdir_rule *r,
	   struct zn_step *steps)
{
	json_t *prio = json_object_get(req->params, "priority");
	json_int_t p;
	int n;

	if (zn_fdir_parse_match(json_object_get(req->params, "match"), r,
				req->err, sizeof(req->err)) < 0)
		return -EINVAL;
	n = zn_cmd_parse_steps(json_object_get(req->params, "chain"), "chain",
			      steps, req->err, sizeof(req->err));
	p = prio ? json_integer_value(prio) : 0;
	r->priority = p < 0 || p > ZN_FDIR_MAX_PRIORITY ? -1 : (int32_t)p;
	r->tenant = (uint8_t)req->tenant;
	return n;
}

static int
check_rule_add(struct zn_cmd_req *req)
{
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	struct zn_fdir_rule r;
	int n = parse_rule(req, &r, steps);

	return n < 0 ? n : 0;
}

static int
cmd_rule_add(struct zn_cmd_req *req)
{
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	struct zn_fdir_rule r;
	int n = parse_rule(req, &r, steps), id;

	if (n < 0)
		return n;
	id = req->tenant == 0 ? 0 :
	     zn_tenant_steps_check(req->mgr, (int)req->tenant - 1, steps,
				  (unsigned int)n, req->err, sizeof(req->err));
	if (id < 0)
		return id;
	id = zn_fdir_rule_add(req->mgr, &r, steps, (unsigned int)n, req->err,
			      sizeof(req->err));
	if (id < 0)
		return id;
	req->result = json_pack("{s:i, s:o}", "id", id, "warnings",
				fdir_idle_services(req->mgr, steps, (unsigned int)n));
	return 0;
}

static int
cmd_rule_del(struct zn_cmd_req *req)
{
	json_int_t id = json_integer_value(json_object_get(req->params, "id"));
	int rc;

	if (id <= 0 || id > UINT32_MAX) {
		snprintf(req->err, sizeof(req->err), "id: a rule id");
		return -EINVAL;
	}
	rc = zn_fdir_rule_del(req->mgr, (uint32_t)id, owner(req));
	if (rc == -ENOENT)
		snprintf(req->err, sizeof(req->err), "no rule %lld",
			 (long long)id);
	else if (rc < 0)
		snprintf(req->err, sizeof(req->err), "cannot rebuild the "
			 "rules: %s", strerror(-rc));
	if (rc < 0)
		return rc;
	req->result = json_pack("{s:I}", "deleted", id);
	return 0;
}

static int
cmd_rule_list(struct zn_cmd_req *req)
{
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	unsigned int n;
	const struct zn_fdir_rule *r = zn_fdir_rules(req->mgr, &n);
	json_t *a = json_array();

	for (unsigned int i = 0; i < n; i++)
		if (req->tenant == 0 || r[i].tenant == req->tenant)
			json_array_append_new(a, json_pack(
				"{s:i, s:i, s:o, s:i, s:o, s:o}", "id",
				(int)r[i].id, "priority", (int)r[i].priority,
				"match", zn_fdir_match_json(&r[i]), "chain_id",
				r[i].chain, "chain", zn_cmd_steps_json(
					steps, zn_fdir_chain_steps(
						req->mgr, r[i].chain, steps)),
				"tenant", tenant_name(req->mgr, r[i].tenant)));
	req->result = json_pack("{s:o}", "rules", a);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Registration, with the parameters' schema                           */

#define STEPS_SCHEMA                                                         \
	"{\"minItems\": 1, \"maxItems\": 32, \"items\": {\"type\": "         \
	"\"string\", \"pattern\": \"" ZN_STEP_PATTERN "\"}}"
#define STEPS_SCHEMA_TYPED                                                   \
	"{\"type\": \"array\", \"minItems\": 1, \"maxItems\": 32, \"items\": " \
	"{\"type\": \"string\", \"pattern\": "                               \
	"\"" ZN_STEP_PATTERN "\"}}"
#define PROTO_SCHEMA                                                         \
	"{\"oneOf\": [{\"type\": \"string\", \"enum\": [\"icmp\", \"tcp\", "  \
	"\"udp\", \"gre\", \"esp\", \"icmpv6\", \"sctp\"]}, {\"type\": "      \
	"\"integer\", \"minimum\": 0, \"maximum\": 255}]}"
#define PORT_SCHEMA "{\"type\": \"integer\", \"minimum\": 0, \"maximum\": 65535}"
#define FLOW_SCHEMA                                                          \
	"{\"type\": \"object\", \"properties\": {\"proto\": " PROTO_SCHEMA    \
	", \"src\": {\"type\": \"string\", \"description\": \"IPv4 or IPv6 " \
	"address\"}, \"dst\": {\"type\": \"string\"}, \"sport\": "           \
	PORT_SCHEMA ", \"dport\": " PORT_SCHEMA ", \"vlan\": {\"type\": "    \
	"\"integer\", \"minimum\": 0, \"maximum\": 4095}}, \"required\": "   \
	"[\"proto\", \"src\", \"dst\", \"sport\", \"dport\"], "              \
	"\"additionalProperties\": false}"
#define RANGE_SCHEMA                                                         \
	"{\"oneOf\": [" PORT_SCHEMA ", {\"type\": \"string\", \"pattern\": "  \
	"\"^[0-9]+-[0-9]+$\"}]}"

static const struct zn_cmd flow_add_cmd = {
	.name = "flow.add",
	.flags = ZN_CMD_F_TENANT, /* its own rules */
	.help = "add or replace exact flow rules (a batch)",
	.params = { { .name = "flows", .type = ZN_CMD_ARRAY, .required = true,
		      .schema = "{\"minItems\": 1, \"items\": {\"type\": "
				"\"object\", \"properties\": {\"flow\": "
				FLOW_SCHEMA ", \"chain\": " STEPS_SCHEMA_TYPED
				", \"both\": {\"type\": \"boolean\", "
				"\"description\": \"also the reverse "
				"direction\"}}, \"required\": [\"flow\", "
				"\"chain\"], \"additionalProperties\": "
				"false}}" } },
	.result = "{\"added\": \"entries added (both: 2 per item)\"}",
	.doc = "`flow`: `{proto, src, dst, sport, dport, vlan?}` (proto a "
	       "name or number, addresses IPv4 or IPv6); `chain`: hops as "
	       "in `chain.set`; `both`: the reverse direction too. The batch "
	       "is validated whole before anything changes; an existing rule "
	       "of the same key is replaced.",
	.fn = cmd_flow_add,
	.check = check_flow_add,
};
ZN_CMD_REGISTER(flow_add_cmd)

static const struct zn_cmd flow_del_cmd = {
	.name = "flow.del",
	.flags = ZN_CMD_F_TENANT, /* its own rules */
	.help = "remove exact flow rules",
	.params = { { .name = "flows", .type = ZN_CMD_ARRAY, .required = true,
		      .schema = "{\"minItems\": 1, \"items\": {\"type\": "
				"\"object\", \"properties\": {\"flow\": "
				FLOW_SCHEMA ", \"both\": {\"type\": "
				"\"boolean\"}}, \"required\": [\"flow\"], "
				"\"additionalProperties\": false}}" } },
	.result = "{\"deleted\": \"entries removed\", \"missing\": "
		  "\"entries that were not there\"}",
	.doc = "A flow added with `both` goes with its reverse: deleting "
	       "either direction deletes the pair.",
	.fn = cmd_flow_del,
	.check = check_flow_del,
};
ZN_CMD_REGISTER(flow_del_cmd)

static const struct zn_cmd flow_list_cmd = {
	.name = "flow.list",
	.flags = ZN_CMD_F_TENANT, /* its own rules */
	.help = "exact flow rules (up to limit, default 1000)",
	.params = { { .name = "limit", .type = ZN_CMD_INT, .bounded = true,
		      .min = 0, .max = INT64_MAX } },
	.result = "{\"count\": \"rules in the table\", \"capacity\": "
		  "\"--flow-capacity\", \"flows\": \"[{flow, chain_id, "
		  "chain, tenant, by}]\"}",
	.doc = "`by`: who added it: `socket` (flow.add: the CLI, the API, "
	       "apply), `nf` (an NF steering; gone with it) or `kept` (an "
	       "NF's, asked to outlive it).",
	.fn = cmd_flow_list,
};
ZN_CMD_REGISTER(flow_list_cmd)

static const struct zn_cmd rule_add_cmd = {
	.name = "rule.add",
	.flags = ZN_CMD_F_TENANT, /* its own rules */
	.help = "add a wildcard rule: match -> chain, by priority",
	.params = {
		{ .name = "match", .type = ZN_CMD_OBJECT, .required = true,
		  .schema = "{\"properties\": {\"ip\": {\"enum\": [4, 6]}, "
			    "\"proto\": " PROTO_SCHEMA ", \"src\": {\"type\": "
			    "\"string\", \"description\": \"address or "
			    "prefix\"}, \"dst\": {\"type\": \"string\"}, "
			    "\"sport\": " RANGE_SCHEMA ", \"dport\": "
			    RANGE_SCHEMA "}, \"additionalProperties\": "
			    "false}" },
		{ .name = "chain", .type = ZN_CMD_ARRAY, .required = true,
		  .schema = STEPS_SCHEMA },
		{ .name = "priority", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = ZN_FDIR_MAX_PRIORITY,
		  .desc = "higher wins; equal: the older rule" },
	},
	.result = "{\"id\": \"the rule id\", \"warnings\": \"[text]: its "
		  "services that no NF serves now\"}",
	.doc = "`match`: `{ip?, proto?, src?, dst?, sport?, dport?}` "
	       "(prefixes `\"10.0.0.0/8\"`, ports `80` or "
	       "`\"1000-2000\"`; without addresses or `ip` the rule applies "
	       "to IPv4 and IPv6). Rules are explained in "
	       "docs/architecture.md (\"Flow director\").",
	.fn = cmd_rule_add,
	.check = check_rule_add,
};
ZN_CMD_REGISTER(rule_add_cmd)

static const struct zn_cmd rule_del_cmd = {
	.name = "rule.del",
	.flags = ZN_CMD_F_TENANT, /* its own rules */
	.help = "remove a wildcard rule",
	.params = { { .name = "id", .type = ZN_CMD_INT, .required = true,
		      .bounded = true, .min = 1, .max = UINT32_MAX } },
	.result = "{\"deleted\": \"the id\"}",
	.fn = cmd_rule_del,
};
ZN_CMD_REGISTER(rule_del_cmd)

static const struct zn_cmd rule_list_cmd = {
	.name = "rule.list",
	.flags = ZN_CMD_F_TENANT, /* its own rules */
	.help = "wildcard rules",
	.result = "{\"rules\": \"[{id, priority, match, chain_id, chain}]\"}",
	.fn = cmd_rule_list,
};
ZN_CMD_REGISTER(rule_list_cmd)
