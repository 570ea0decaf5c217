/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* What a launched NF is, as the launcher's commands answer it and
 * launch.list lists it: its spec, its replicas (each with the NF's own
 * pid once it registered) and its counts. */

#include <errno.h>
#include <limits.h>
#include <string.h>

#include <jansson.h>

#include "../core/cmd.h"
#include "launch_pvt.h"
#include "registry.h"
#include "../core/mgr.h"
#include "../tenant/tenant.h"

/* What launch.list says of @p l to tenant @p t + 1 (0: the operator):
 * names as it sees them (zn_tenant_shown_name); a replica's pid is the
 * registered NF's as the kernel named it at registration (a sandboxed
 * NF's own, not bubblewrap's), else the process the launcher spawned. */
/* A bundle's NFs as nf.start was given them; null: not a bundle. */
static json_t *
bundle_json(const struct launch *l)
{
	json_t *a;

	if (l->n_bundle == 0)
		return json_null();
	a = json_array();
	for (unsigned int k = 0; k < l->n_bundle; k++) {
		const struct launch_member *b = &l->bundle[k];
		json_t *args = json_array();

		for (unsigned int i = 0; i < b->n_args; i++)
			json_array_append_new(args, json_string(b->args[i]));
		json_array_append_new(a, json_pack("{s:s, s:i, s:s, s:o}",
						   "name", b->name, "service",
						   b->service, "module",
						   b->module, "args", args));
	}
	return a;
}

/* The names of the NFs replica @p i runs: its own, or a bundle's NFs'
 * (nfs/bundle/bundle.c adds the replica's suffix to each). */
static json_t *
members(const struct launch *l, unsigned int i)
{
	json_t *a = json_array();
	char name[ZN_NAME_LEN];

	if (l->n_bundle == 0) {
		launch_replica_name(l, i, name, sizeof(name));
		json_array_append_new(a, json_string(name));
		return a;
	}
	for (unsigned int k = 0; k < l->n_bundle; k++) {
		if (i == 0)
			snprintf(name, sizeof(name), "%s", l->bundle[k].name);
		else
			snprintf(name, sizeof(name), "%s.%u", l->bundle[k].name,
				 i % ZN_MAX_REPLICAS);
		json_array_append_new(a, json_string(name));
	}
	return a;
}

json_t *
launch_json(const struct launch *l, unsigned int t)
{
	json_t *reps = json_array(), *args = json_array();
	unsigned int running = 0;

	for (unsigned int a = 0; a < l->n_args; a++)
		json_array_append_new(args, json_string(l->args[a]));
	for (unsigned int i = 0; i < ZN_MAX_REPLICAS; i++) {
		const struct replica *r = &l->r[i];
		char name[ZN_NAME_LEN];
		int slot;
		pid_t own;

		if (i >= l->replicas && r->state == R_DOWN)
			continue;
		launch_replica_name(l, i, name, sizeof(name));
		running += r->state == R_RUNNING;
		slot = r->state == R_DOWN ? -1 : zn_registry_find(L.m, name);
		own = slot >= 0 ? zn_registry_pid(L.m, (unsigned int)slot) : 0;
		json_array_append_new(reps, json_pack(
			"{s:s, s:o, s:s, s:i, s:o, s:I, s:o}", "name",
			zn_tenant_shown_name(L.m, t, name), "nfs",
			members(l, i), "state",
			rstate_names[r->state], "pid", own > 0 ? (int)own :
			(int)r->pid, "sandbox_pid", l->sandbox && r->pid > 0 ?
			json_integer(r->pid) : json_null(), "restarts",
			(json_int_t)r->restarts, "last_exit",
			r->last_code == INT_MIN ? json_null() :
						  json_integer(r->last_code)));
	}
	return json_pack("{s:s, s:o, s:s, s:o, s:i, s:i, s:i, s:s, s:s, s:I, "
			 "s:I, s:I, s:o, s:b, s:i, s:b, s:b, s:o}",
			 "name", zn_tenant_shown_name(L.m, t, l->name),
			 "bundle", bundle_json(l),
			 "binary", l->binary, "args", args,
			 "service", l->service, "replicas", (int)l->replicas,
			 "running", (int)running, "cpus", l->cpus, "restart",
			 policy_names[l->policy], "starts",
			 (json_int_t)l->starts, "restarts",
			 (json_int_t)l->restarts, "failures",
			 (json_int_t)l->failures, "instances", reps, "sandbox",
			 l->sandbox, "memory_mb", (int)l->memory_mb, "removing",
			 l->removing, "rolling", l->roll.phase != 0,
			 "trust_group", l->group >= 0 ?
			 json_string(L.m->shm->groups[l->group].name) :
			 json_null());
}

/* The tenant + 1 whose NFs @p l launches (its trust group's), 0: none. */
unsigned int
launch_tenant(const struct launch *l)
{
	return zn_tenant_of_group(L.m, (unsigned int)(l->group + 1));
}

/* nf.start on tenant t's socket (@p t = t + 1): the programs installed
 * with the manager only (a bare name, found beside zeronf-mgr), in its
 * trust group, sandboxed; in its cgroup (launch.c). @p path receives the
 * program's path. 0 or -errno (err set). */
static int
cmd_launch_list(struct zn_cmd_req *req)
{
	json_t *a = json_array();

	for (unsigned int k = 0; k < LAUNCH_MAX; k++)
		if (L.l[k].used && (req->tenant == 0 ||
				    launch_tenant(&L.l[k]) == req->tenant))
			json_array_append_new(a, launch_json(&L.l[k],
							       req->tenant));
	req->result = json_pack("{s:o, s:s}", "launched", a, "log_dir",
				L.log_dir);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd launch_list_cmd = {
	.name = "launch.list",
	.flags = ZN_CMD_F_TENANT, /* its own (tenant_start) */
	.help = "NFs the manager launched, their replicas and restarts",
	.result = "{\"launched\": \"[launched NF, as nf.start answers]\", "
		  "\"log_dir\": \"where their output goes\"}",
	.fn = cmd_launch_list,
};
ZN_CMD_REGISTER(launch_list_cmd)
