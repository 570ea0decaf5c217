/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Control commands. Each is an adapter from JSON to one action function
 * of the manager (route.c, registry.c, stats.c), which the CLI, REST API
 * and tests all reach through this one socket. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_version.h>

#include "ctl.h"
#include "../lib/common/zn_util.h"

static int
cmd_version(struct zn_ctl_req *req)
{
	req->result = json_pack("{s:s, s:i, s:i, s:s, s:s, s:i}", "protocol",
				"zeronf-ctl", "major", ZN_CTL_MAJOR, "minor",
				ZN_CTL_MINOR, "build", zn_build_id, "dpdk",
				rte_version(), "abi", ZN_ABI_VERSION);
	return 0;
}

static int cmd_help(struct zn_ctl_req *req);

static int
cmd_status(struct zn_ctl_req *req)
{
	req->result = zn_stats_status(req->mgr);
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_port_list(struct zn_ctl_req *req)
{
	req->result = json_pack("{s:o}", "ports", zn_stats_ports(req->mgr));
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_nf_list(struct zn_ctl_req *req)
{
	req->result = json_pack("{s:o}", "nfs", zn_stats_nfs(req->mgr));
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_service_list(struct zn_ctl_req *req)
{
	req->result = json_pack("{s:o}", "services",
				zn_stats_services(req->mgr));
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_stats(struct zn_ctl_req *req)
{
	req->result = zn_stats_all(req->mgr);
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_chain_get(struct zn_ctl_req *req)
{
	req->result = json_pack("{s:o}", "hops", zn_chain_json(req->mgr));
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_chain_set(struct zn_ctl_req *req)
{
	struct zn_hop chain[ZN_MAX_CHAIN_HOPS];
	int n = zn_ctl_parse_hops(json_object_get(req->params, "hops"), "hops",
				  chain, req->err, sizeof(req->err));
	int rc;

	if (n < 0)
		return n;
	rc = zn_chain_set(req->mgr, chain, (unsigned int)n, req->err,
			  sizeof(req->err));
	if (rc < 0)
		return rc;
	return cmd_chain_get(req);
}

static int
cmd_nf_stop(struct zn_ctl_req *req)
{
	json_int_t id = json_integer_value(json_object_get(req->params,
							   "instance"));
	int rc;

	if (id < 0 || id >= ZN_MAX_NFS) {
		snprintf(req->err, sizeof(req->err), "instance: 0..%d",
			 ZN_MAX_NFS - 1);
		return -EINVAL;
	}
	rc = zn_registry_stop_nf(req->mgr, (unsigned int)id);
	if (rc < 0) {
		snprintf(req->err, sizeof(req->err),
			 "no running NF with instance id %lld", (long long)id);
		return rc;
	}
	req->result = json_pack("{s:I, s:s}", "instance", (json_int_t)id,
				"state", "stopping");
	return 0;
}

static int
cmd_rx_set(struct zn_ctl_req *req)
{
	bool on = json_is_true(json_object_get(req->params, "enabled"));

	req->mgr->rx_enabled = on;
	req->mgr->rx_waiting = false; /* the operator decides now */
	ZN_LOG(NOTICE, "port RX %s", on ? "enabled" : "paused");
	req->result = json_pack("{s:b}", "enabled", on);
	return 0;
}

static int
cmd_shutdown(struct zn_ctl_req *req)
{
	req->mgr->shutdown_requested = true;
	req->result = json_pack("{s:b}", "shutting_down", 1);
	return 0;
}

static const struct zn_ctl_cmd cmds[] = {
	{ "version", "protocol, build and DPDK versions", { { 0 } },
	  cmd_version },
	{ "help", "list methods", { { 0 } }, cmd_help },
	{ "status", "instance summary", { { 0 } }, cmd_status },
	{ "port.list", "ports with their counters", { { 0 } }, cmd_port_list },
	{ "nf.list", "NF instances with their counters", { { 0 } },
	  cmd_nf_list },
	{ "service.list", "services and their running instances", { { 0 } },
	  cmd_service_list },
	{ "stats", "everything: status, ports, NFs, workers, drops", { { 0 } },
	  cmd_stats },
	{ "chain.get", "the default chain", { { 0 } }, cmd_chain_get },
	{ "chain.set", "replace the default chain (while traffic flows)",
	  { { "hops", JSON_ARRAY, true } }, cmd_chain_set },
	{ "nf.stop", "stop an NF: it drains its packets and exits",
	  { { "instance", JSON_INTEGER, true } }, cmd_nf_stop },
	{ "nf.call", "call a command an NF serves (nf.list: commands); "
	  "its answer is the result",
	  { { "instance", JSON_INTEGER, true },
	    { "command", JSON_STRING, true },
	    { "args", JSON_OBJECT, false } }, zn_cmd_nf_call },
	{ "rx.set", "enable or pause reading from all ports",
	  { { "enabled", ZN_CTL_BOOL, true } }, cmd_rx_set },
	{ "shutdown", "stop every NF and the manager", { { 0 } },
	  cmd_shutdown },
	{ "flow.add", "add or replace exact flow rules (a batch)",
	  { { "flows", JSON_ARRAY, true } }, zn_cmd_flow_add },
	{ "flow.del", "remove exact flow rules",
	  { { "flows", JSON_ARRAY, true } }, zn_cmd_flow_del },
	{ "flow.list", "exact flow rules (up to limit, default 1000)",
	  { { "limit", JSON_INTEGER, false } }, zn_cmd_flow_list },
	{ "rule.add", "add a wildcard rule: match -> chain, by priority",
	  { { "match", JSON_OBJECT, true }, { "chain", JSON_ARRAY, true },
	    { "priority", JSON_INTEGER, false } }, zn_cmd_rule_add },
	{ "rule.del", "remove a wildcard rule",
	  { { "id", JSON_INTEGER, true } }, zn_cmd_rule_del },
	{ "rule.list", "wildcard rules", { { 0 } }, zn_cmd_rule_list },
	{ "service.set", "set a service's load balancing (and weights)",
	  { { "service", JSON_INTEGER, true }, { "lb", JSON_STRING, true },
	    { "weights", JSON_OBJECT, false } }, zn_cmd_service_set },
};

static int
cmd_help(struct zn_ctl_req *req)
{
	json_t *list = json_array();

	for (size_t i = 0; i < RTE_DIM(cmds); i++) {
		json_t *params = json_array();

		for (int p = 0; p < ZN_CTL_MAX_PARAMS && cmds[i].params[p].name;
		     p++)
			json_array_append_new(params,
					      json_string(cmds[i].params[p].name));
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:o}", "method",
						cmds[i].method, "help",
						cmds[i].help, "params", params));
	}
	req->result = json_pack("{s:o}", "methods", list);
	return 0;
}

const struct zn_ctl_cmd *
zn_ctl_find(const char *method)
{
	for (size_t i = 0; i < RTE_DIM(cmds); i++)
		if (strcmp(cmds[i].method, method) == 0)
			return &cmds[i];
	return NULL;
}

static const char *
type_name(int type)
{
	switch (type) {
	case JSON_INTEGER:
		return "an integer";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_OBJECT:
		return "an object";
	case ZN_CTL_BOOL:
		return "true or false";
	default:
		return "a value";
	}
}

int
zn_ctl_check_params(struct zn_ctl_req *req, const struct zn_ctl_cmd *cmd)
{
	const char *key;
	json_t *val;

	json_object_foreach(req->params, key, val) {
		const struct zn_ctl_param *p = NULL;

		for (int i = 0; i < ZN_CTL_MAX_PARAMS && cmd->params[i].name;
		     i++)
			if (strcmp(cmd->params[i].name, key) == 0)
				p = &cmd->params[i];
		if (p == NULL) {
			snprintf(req->err, sizeof(req->err),
				 "%s: unknown parameter '%s'", cmd->method,
				 key);
			return -EINVAL;
		}
		if (p->type == ZN_CTL_BOOL ? !json_is_boolean(val) :
					     (int)json_typeof(val) != p->type) {
			snprintf(req->err, sizeof(req->err),
				 "%s: '%s' must be %s", cmd->method, key,
				 type_name(p->type));
			return -EINVAL;
		}
	}
	for (int i = 0; i < ZN_CTL_MAX_PARAMS && cmd->params[i].name; i++)
		if (cmd->params[i].required &&
		    json_object_get(req->params, cmd->params[i].name) == NULL) {
			snprintf(req->err, sizeof(req->err),
				 "%s: missing parameter '%s'", cmd->method,
				 cmd->params[i].name);
			return -EINVAL;
		}
	return 0;
}
