/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Control commands of the chains (chain.get, chain.set): the default
 * chain, a port's and a tenant's; fdir_chain.c keeps the chain table
 * they and the rules name. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../core/cmd.h"
#include "fdir.h"
#include "fdir_pvt.h"
#include "../core/mgr.h"
#include "../tenant/tenant.h"
#include "../../lib/shm/zn_shm.h"
#include "../nf/nf_rec.h"

/* Steps to a service that no running NF serves: said with the answer
 * (their packets drop as no_instance until one registers), not refused:
 * a chain may be set before its NFs start. */
json_t *
fdir_idle_services(const struct zn_mgr *m, const struct zn_step *steps,
		   unsigned int n)
{
	json_t *w = json_array();

	for (unsigned int i = 0; i < n; i++) {
		unsigned int slot;

		if (steps[i].type != ZN_STEP_SERVICE)
			continue;
		for (slot = 0; slot < ZN_MAX_NFS; slot++)
			if (zn_nf_state(m, slot) == ZN_NF_RUNNING &&
			    zn_slot(m, slot)->ctl.service_id == steps[i].id)
				break;
		if (slot < ZN_MAX_NFS)
			continue;
		json_array_append_new(w, json_sprintf(
			"svc:%u: no NF serves it now: its packets drop "
			"(no_instance) until one does", steps[i].id));
	}
	return w;
}

/* The chain a request names by "tenant": *@p out its index, or -1 when
 * none. 0, or -errno with err set (no such tenant; on a tenant's control
 * socket, anything but its own chain). */
static int
tenant_param(struct zn_cmd_req *req, int *out)
{
	json_t *t = json_object_get(req->params, "tenant");
	bool port = json_object_get(req->params, "port") != NULL;
	unsigned int own = req->tenant;

	*out = t != NULL ? zn_tenant_find(req->mgr, json_string_value(t)) : -1;
	if (own != 0) { /* a tenant's control socket: its own chain */
		if (!port && (t == NULL || *out == (int)own - 1)) {
			*out = (int)own - 1;
			return 0;
		}
		snprintf(req->err, sizeof(req->err), "tenant %s's control "
			 "socket sets its own chain only",
			 req->mgr->cfg.tenants[own - 1].name);
		return -EPERM;
	}
	if (t != NULL && port) {
		snprintf(req->err, sizeof(req->err), "a port's chain or a "
			 "tenant's, not both");
		return -EINVAL;
	}
	if (t != NULL && *out < 0) {
		snprintf(req->err, sizeof(req->err), "no tenant '%s'",
			 json_string_value(t));
		return -ENOENT;
	}
	return 0;
}

static int
cmd_chain_get(struct zn_cmd_req *req)
{
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	json_t *port = json_object_get(req->params, "port");
	int t, rc = tenant_param(req, &t);

	if (rc < 0)
		return rc;
	if (t >= 0)
		req->result = json_pack(
			"{s:s, s:o}", "tenant", req->mgr->cfg.tenants[t].name,
			"hops",
			zn_cmd_steps_json(steps, zn_fdir_tenant_chain(
				req->mgr, (unsigned int)t, steps)));
	else if (port != NULL)
		req->result = json_pack(
			"{s:O, s:o}", "port", port, "hops",
			zn_cmd_steps_json(steps, zn_fdir_port_chain(
				req->mgr, (unsigned int)json_integer_value(port),
				steps)));
	else
		req->result = json_pack("{s:o}", "hops", zn_cmd_steps_json(
					steps, zn_chain_get(req->mgr, steps)));
	return req->result ? 0 : -ENOMEM;
}

/* chain.set's steps: [] only for a port or a tenant (none again).
 * @return their count, or -EINVAL (req->err set). */
static int
parse_hops(struct zn_cmd_req *req, bool tenant, struct zn_step *chain)
{
	json_t *steps = json_object_get(req->params, "hops");

	if ((json_object_get(req->params, "port") == NULL && !tenant) ||
	    json_array_size(steps) != 0)
		return zn_cmd_parse_steps(steps, "hops", chain, req->err,
					  sizeof(req->err));
	return 0;
}

static int
check_chain_set(struct zn_cmd_req *req)
{
	struct zn_step chain[ZN_MAX_CHAIN_STEPS];
	int n = parse_hops(req, json_object_get(req->params, "tenant") != NULL,
			   chain);

	return n < 0 ? n : 0;
}

static int
cmd_chain_set(struct zn_cmd_req *req)
{
	struct zn_step chain[ZN_MAX_CHAIN_STEPS];
	json_t *port = json_object_get(req->params, "port");
	int n, t, rc = tenant_param(req, &t);

	if (rc < 0)
		return rc;
	n = parse_hops(req, t >= 0, chain);
	if (n < 0)
		return n;
	if (t >= 0)
		rc = zn_fdir_tenant_chain_set(req->mgr, (unsigned int)t, chain,
					      (unsigned int)n, req->err,
					      sizeof(req->err));
	else if (port != NULL)
		rc = zn_fdir_port_chain_set(
			req->mgr, (unsigned int)json_integer_value(port), chain,
			(unsigned int)n, req->err, sizeof(req->err));
	else
		rc = zn_chain_set(req->mgr, chain, (unsigned int)n, req->err,
				  sizeof(req->err));
	if (rc < 0)
		return rc;
	rc = cmd_chain_get(req);
	if (rc == 0 && req->result != NULL)
		json_object_set_new_nocheck(req->result, "warnings",
					    fdir_idle_services(req->mgr, chain,
							  (unsigned int)n));
	return rc;
}

/* ------------------------------------------------------------------ */
/* Registration, with the parameters' schema                           */

#define STEPS_SCHEMA_0                                                       \
	"{\"maxItems\": 32, \"items\": {\"type\": "                         \
	"\"string\", \"pattern\": \"" ZN_STEP_PATTERN "\"}}"
#define CHAIN_PORT_PARAM                                                     \
	{ .name = "port", .type = ZN_CMD_INT, .bounded = true, .min = 0,      \
	  .max = ZN_MAX_PORTS - 1,                                            \
	  .desc = "a port's chain: packets entering from it that no flow "    \
		  "rule matches take it instead of the default chain" },     \
	{ .name = "tenant", .type = ZN_CMD_STR,                               \
	  .desc = "a tenant's chain (tenant.list): its packets that no flow " \
		  "rule matches take it; only its services and ports" }

static const struct zn_cmd chain_get_cmd = {
	.name = "chain.get",
	.help = "the default chain, or a port's or a tenant's",
	.flags = ZN_CMD_F_TENANT, /* its own */
	.params = { CHAIN_PORT_PARAM },
	.result = "{\"hops\": \"[step] ([] for a port or tenant: none)\", "
		  "\"port\": \"if asked\", \"tenant\": \"if asked\"}",
	.fn = cmd_chain_get,
};
ZN_CMD_REGISTER(chain_get_cmd)

static const struct zn_cmd chain_set_cmd = {
	.name = "chain.set",
	.flags = ZN_CMD_F_TENANT, /* its own */
	.help = "replace the default chain, or a port's or a tenant's "
		"(while traffic flows)",
	.params = { { .name = "hops", .type = ZN_CMD_ARRAY, .required = true,
		      .desc = "\"svc:ID\" (or \"ID\"), \"port:P\", \"drop\"; "
			      "1..32 hops; [] with a port: its packets take "
			      "the default chain again; with a tenant: its "
			      "packets drop (no_tenant)",
		      .schema = STEPS_SCHEMA_0 },
		    CHAIN_PORT_PARAM },
	.result = "{\"hops\": \"[step]: the chain now\", \"warnings\": "
		  "\"[text]: its services that no NF serves now\"}",
	.fn = cmd_chain_set,
	.check = check_chain_set,
};
ZN_CMD_REGISTER(chain_set_cmd)

