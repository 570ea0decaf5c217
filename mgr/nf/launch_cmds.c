/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The launcher's commands: nf.start, nf.scale, nf.restart, nf.update,
 * nf.remove. Their parameters are checked here, a spec's program, options
 * and bundle in launch_spec.c; launch.c does the work, and
 * launch_view.c says what a launched NF is (launch.list, the answers). */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/cmd.h"
#include "../core/event.h"
#include "../trust/group.h"
#include "launch.h"
#include "launch_pvt.h"
#include "../core/mgr.h"
#include "sandbox.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/common/zn_cpus.h"

static int
tenant_start(struct zn_cmd_req *req, unsigned int t, const char **bin,
	     char *path, const char **grp)
{
	const struct zn_tenant_cfg *c = &req->mgr->cfg.tenants[t - 1];
	int rc;

	if (*grp != NULL && strcmp(*grp, c->group_name) != 0) {
		snprintf(req->err, sizeof(req->err), "trust_group: tenant %s's "
			 "NFs are in its group, %s", c->name, c->group_name);
		return -EPERM;
	}
	*grp = c->group_name;
	if ((rc = zn_nf_program_path(*bin, path, PATH_MAX)) < 0) {
		snprintf(req->err, sizeof(req->err), "binary: a tenant starts "
			 "the NFs installed with the manager, by name (such as "
			 "zeronf-forward)");
		return -EPERM;
	}
	*bin = path;
	return 0;
}

/* @p l's options, @p args (checked) copied in place of what it had. */
static int
set_args(struct launch *l, const json_t *args)
{
	char *copy[LAUNCH_MAX_ARGS + 1] = { NULL };
	const json_t *v;
	size_t i;

	json_array_foreach(args, i, v)
		if ((copy[i] = strdup(json_string_value(v))) == NULL) {
			while (i-- > 0)
				free(copy[i]);
			return -ENOMEM;
		}
	for (unsigned int a = 0; a < l->n_args; a++)
		free(l->args[a]);
	memcpy(l->args, copy, sizeof(copy));
	l->n_args = (unsigned int)json_array_size(args);
	return 0;
}

/* nf.start's .check, with no manager: the name, the program (a bare
 * name looked up as fn does), the CPU list (also against the CPUs this
 * process may use: the replica's own --cpus refuses the others at its
 * start, by the same function) and the options. */
static int
check_nf_start(struct zn_cmd_req *req)
{
	json_t *p = req->params, *bun = json_object_get(p, "bundle");
	const char *bin = json_string_value(json_object_get(p, "binary"));
	const char *cpus = json_string_value(json_object_get(p, "cpus"));
	char path[PATH_MAX];
	unsigned int n;
	cpu_set_t set;
	int rc;

	if (!launch_name_ok(json_string_value(json_object_get(p, "name")))) {
		snprintf(req->err, sizeof(req->err), "name: 1..%d characters "
			 "of [A-Za-z0-9_-]", LAUNCH_NAME_LEN - 1);
		return -EINVAL;
	}
	if (bun != NULL && ((rc = launch_bundle_spec(req, bun, NULL, &n)) < 0 ||
			    (bin = launch_bundle_binary(req, bin, path)) == NULL))
		return bun == NULL || rc < 0 ? rc : -ENOENT;
	if (bin == NULL || (bun == NULL &&
			    json_object_get(p, "service") == NULL)) {
		snprintf(req->err, sizeof(req->err), "binary and service, or "
			 "bundle");
		return -EINVAL;
	}
	if (strchr(bin, '/') == NULL &&
	    zn_nf_program_path(bin, path, PATH_MAX) == 0)
		bin = path;
	rc = launch_check_spec(req, bin, cpus, json_object_get(p, "args"));
	if (rc == 0 && cpus != NULL && cpus[0] != '\0' &&
	    zn_parse_cpulist(cpus, &set) == 0 &&
	    zn_cpulist_allowed(&set, path, sizeof(path)) < 0) {
		snprintf(req->err, sizeof(req->err), "cpus: %.200s", path);
		rc = -EINVAL;
	}
	return rc;
}

static int
cmd_nf_start(struct zn_cmd_req *req)
{
	json_t *p = req->params, *args = json_object_get(p, "args");
	const char *name = json_string_value(json_object_get(p, "name"));
	const char *bin = json_string_value(json_object_get(p, "binary"));
	const char *cpus = json_string_value(json_object_get(p, "cpus"));
	const char *pol = json_string_value(json_object_get(p, "restart"));
	const char *grp = json_string_value(json_object_get(p,
							    "trust_group"));
	int group = -1;
	json_t *rep = json_object_get(p, "replicas");
	json_t *bun = json_object_get(p, "bundle");
	uint16_t svc = (uint16_t)json_integer_value(json_object_get(p,
								    "service"));
	unsigned int n_members = 0;
	struct launch *l = NULL;
	char path[PATH_MAX], scoped[ZN_NAME_LEN];
	int rc;

	if (bun != NULL) {
		/* One address space: no sandbox can stand between its NFs,
		 * and a tenant's NFs are sandboxed (docs/security.md) */
		if (req->tenant != 0 || json_is_true(json_object_get(p,
								"sandbox"))) {
			snprintf(req->err, sizeof(req->err), "bundle: its NFs "
				 "share one process, which is not sandboxed "
				 "(nor a tenant's)");
			return -EOPNOTSUPP;
		}
		if ((rc = launch_bundle_spec(req, bun, NULL, &n_members)) < 0)
			return rc;
		if ((bin = launch_bundle_binary(req, bin, path)) == NULL)
			return -ENOENT;
		svc = (uint16_t)json_integer_value(json_object_get(
			json_array_get(bun, 0), "service"));
	}
	if (bin == NULL || (bun == NULL &&
			    json_object_get(p, "service") == NULL)) {
		snprintf(req->err, sizeof(req->err), "binary and service, or "
			 "bundle");
		return -EINVAL;
	}
	if (req->tenant != 0 &&
	    (rc = tenant_start(req, req->tenant, &bin, path, &grp)) < 0)
		return rc;
	/* A bare name: an NF installed with the manager (zeronf-forward) */
	if (req->tenant == 0 && bin != NULL && strchr(bin, '/') == NULL &&
	    zn_nf_program_path(bin, path, PATH_MAX) == 0)
		bin = path;

	if (!launch_name_ok(name)) {
		snprintf(req->err, sizeof(req->err), "name: 1..%d characters "
			 "of [A-Za-z0-9_-]", LAUNCH_NAME_LEN - 1);
		return -EINVAL;
	}
	/* A tenant's names are its own: kept as "TENANT:NAME" */
	if (zn_tenant_scoped_name(req->mgr, req->tenant, name, scoped,
				  LAUNCH_NAME_LEN) < 0) {
		snprintf(req->err, sizeof(req->err), "name: with the tenant's "
			 "name and a colon before it, at most %d characters",
			 LAUNCH_NAME_LEN - 1);
		return -EINVAL;
	}
	if (launch_find(scoped) != NULL) {
		snprintf(req->err, sizeof(req->err), "an NF named '%s' is "
			 "already launched (nf.scale, nf.restart)", name);
		return -EEXIST;
	}
	if ((rc = launch_check_spec(req, bin, cpus, args)) < 0)
		return rc;
	if (grp != NULL && (group = zn_group_find(req->mgr, grp)) < 0) {
		snprintf(req->err, sizeof(req->err), "trust_group: the "
			 "manager has no trust group '%.64s' (group.list)", grp);
		return -ENOENT;
	}
	/* Said now, not by each replica's refused registration. */
	if (!zn_tenant_svc_ok(req->mgr, (uint32_t)(group + 1), svc,
			      req->err, sizeof(req->err)))
		return -EACCES;
	for (unsigned int k = 0; k < n_members; k++)
		if (!zn_tenant_svc_ok(req->mgr, (uint32_t)(group + 1),
				      (uint16_t)json_integer_value(
					      json_object_get(json_array_get(
						      bun, k), "service")),
				      req->err, sizeof(req->err)))
			return -EACCES;
	for (unsigned int k = 0; k < LAUNCH_MAX && l == NULL; k++)
		if (!L.l[k].used)
			l = &L.l[k];
	if (l == NULL) {
		snprintf(req->err, sizeof(req->err), "%d NFs launched already",
			 LAUNCH_MAX);
		return -ENOSPC;
	}
	memset(l, 0, sizeof(*l));
	l->used = true;
	zn_strlcpy(l->name, scoped, sizeof(l->name));
	zn_strlcpy(l->binary, bin, sizeof(l->binary));
	zn_strlcpy(l->cpus, cpus ? cpus : "", sizeof(l->cpus));
	l->service = svc;
	if (bun != NULL) {
		l->bundle = calloc(n_members, sizeof(*l->bundle));
		if (l->bundle == NULL ||
		    launch_bundle_spec(req, bun, l->bundle, &l->n_bundle) < 0) {
			if (l->bundle != NULL)
				l->n_bundle = n_members; /* args to free */
			launch_spec_free(l);
			return -ENOMEM;
		}
	}
	l->sandbox = json_is_true(json_object_get(p, "sandbox")) ||
		     req->tenant != 0;
	l->group = group;
	l->memory_mb = (unsigned int)json_integer_value(
		json_object_get(p, "memory_mb"));
	l->policy = pol == NULL ? RESTART_ON_FAILURE :
		    strcmp(pol, "never") == 0 ? RESTART_NEVER :
		    strcmp(pol, "always") == 0 ? RESTART_ALWAYS :
						 RESTART_ON_FAILURE;
	if (set_args(l, args) < 0) {
		launch_spec_free(l);
		return -ENOMEM;
	}
	for (unsigned int r = 0; r < ZN_MAX_REPLICAS; r++)
		l->r[r] = (struct replica){ .l = l, .idx = r, .pidfd = -1,
					    .last_code = INT_MIN };
	/* The first replica is spawned before the command answers: an NF
	 * that cannot start at all (its sandbox, its cgroup) is the
	 * command's error, not a replica retried every 10 s. */
	rc = launch_spawn(l, 0, req->err, sizeof(req->err));
	if (rc < 0) {
		launch_spec_free(l);
		return rc;
	}
	launch_set_replicas(l, rep ? (unsigned int)json_integer_value(rep) : 1);
	req->result = launch_json(l, req->tenant);
	return req->result ? 0 : -ENOMEM;
}

static struct launch *
named(struct zn_cmd_req *req)
{
	const char *name = json_string_value(json_object_get(req->params,
							     "name"));
	char scoped[ZN_NAME_LEN];
	struct launch *l = zn_tenant_scoped_name(req->mgr, req->tenant, name,
						 scoped, sizeof(scoped)) == 0 ?
			   launch_find(scoped) : NULL;

	if (l != NULL && req->tenant != 0 && launch_tenant(l) != req->tenant)
		l = NULL; /* another's: not there for a tenant */
	if (l == NULL)
		snprintf(req->err, sizeof(req->err), "no launched NF named "
			 "'%.64s'", name);
	else if (l->removing)
		snprintf(req->err, sizeof(req->err), "'%.64s' is being "
			 "removed (its replicas are stopping)", name);
	return l != NULL && !l->removing ? l : NULL;
}

static int
cmd_nf_scale(struct zn_cmd_req *req)
{
	struct launch *l = named(req);
	unsigned int n = (unsigned int)json_integer_value(
		json_object_get(req->params, "replicas"));

	if (l == NULL)
		return -ENOENT;
	launch_roll_cancel(l, "scaled");
	if (n != l->replicas)
		zn_event("nf.scale", "%s: %u -> %u replicas", l->name,
			 l->replicas, n);
	launch_set_replicas(l, n);
	req->result = launch_json(l, req->tenant);
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_nf_restart(struct zn_cmd_req *req)
{
	struct launch *l = named(req);

	int rc;

	if (l == NULL)
		return -ENOENT;
	zn_event("nf.restart", "%s: every replica", l->name);
	/* Rolling when one runs (launch_roll.c); else each started again */
	for (unsigned int i = 0; i < l->replicas; i++)
		if (l->r[i].state == R_RUNNING) {
			rc = launch_roll_start(l);
			if (rc < 0) {
				snprintf(req->err, sizeof(req->err), "%s",
					 rc == -EBUSY ? "a rolling restart is "
					 "on" : "no replica index left for a "
					 "rolling restart");
				return rc;
			}
			goto done;
		}
	for (unsigned int i = 0; i < l->replicas; i++) {
		struct replica *r = &l->r[i];

		if (r->state == R_STOPPING) {
			r->restart_asked = true;
		} else {
			r->fails = 0; /* a failed one gets another run */
			launch_start_replica(l, i);
		}
	}
done:
	req->result = launch_json(l, req->tenant);
	return req->result ? 0 : -ENOMEM;
}

/* nf.update: a launched NF's program, options, CPUs, restart policy,
 * sandbox or memory limit changed in place, then a rolling restart (what
 * runs then is the new spec): a replacement without a moment with no
 * replica (mgr/nf/launch_roll.c). Its service and trust group stay. */
static int
cmd_nf_update(struct zn_cmd_req *req)
{
	json_t *p = req->params, *args = json_object_get(p, "args");
	const char *bin = json_string_value(json_object_get(p, "binary"));
	const char *cpus = json_string_value(json_object_get(p, "cpus"));
	const char *pol = json_string_value(json_object_get(p, "restart"));
	json_t *sb = json_object_get(p, "sandbox");
	json_t *mem = json_object_get(p, "memory_mb");
	struct launch *l = named(req);
	char path[PATH_MAX];
	int rc;

	if (l == NULL)
		return -ENOENT;
	if (l->roll.phase != 0) {
		snprintf(req->err, sizeof(req->err), "a rolling restart is on");
		return -EBUSY;
	}
	if (l->n_bundle != 0 && (args != NULL || json_is_true(sb))) {
		snprintf(req->err, sizeof(req->err), "a bundle's NFs and their "
			 "options change by nf.remove and nf.start; it is not "
			 "sandboxed");
		return -EOPNOTSUPP;
	}
	if (bin == NULL)
		bin = l->binary;
	else if (req->tenant != 0 || strchr(bin, '/') == NULL) {
		if (zn_nf_program_path(bin, path, PATH_MAX) < 0) {
			snprintf(req->err, sizeof(req->err), "binary: the name "
				 "of an NF installed with the manager%s",
				 req->tenant ? "" : ", or an absolute path");
			return req->tenant ? -EPERM : -EINVAL;
		}
		bin = path;
	}
	if ((rc = launch_check_spec(req, bin, cpus, args)) < 0)
		return rc;
	if (args != NULL && set_args(l, args) < 0)
		return -ENOMEM;
	if (bin != l->binary)
		zn_strlcpy(l->binary, bin, sizeof(l->binary));
	if (cpus != NULL)
		zn_strlcpy(l->cpus, cpus, sizeof(l->cpus));
	if (pol != NULL)
		l->policy = strcmp(pol, "never") == 0 ? RESTART_NEVER :
			    strcmp(pol, "always") == 0 ? RESTART_ALWAYS :
							 RESTART_ON_FAILURE;
	if (sb != NULL && req->tenant == 0)
		l->sandbox = json_is_true(sb);
	if (mem != NULL)
		l->memory_mb = (unsigned int)json_integer_value(mem);
	zn_event("nf.update", "%s: spec changed; rolling restart", l->name);
	for (unsigned int i = 0; i < l->replicas; i++)
		if (l->r[i].state == R_RUNNING &&
		    (rc = launch_roll_start(l)) < 0) {
			snprintf(req->err, sizeof(req->err), "changed, but no "
				 "rolling restart (%s): nf.restart", strerror(-rc));
			return rc;
		} else if (l->r[i].state == R_RUNNING) {
			break;
		}
	req->result = launch_json(l, req->tenant);
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_nf_remove(struct zn_cmd_req *req)
{
	struct launch *l = named(req);

	if (l == NULL)
		return -ENOENT;
	l->removing = true;
	for (unsigned int i = 0; i < ZN_MAX_REPLICAS; i++)
		launch_stop_replica(l, i);
	req->result = launch_json(l, req->tenant);
	if (launch_all_down(l)) {
		zn_event("nf.removed", "%s", l->name);
		launch_spec_free(l);
	}
	return req->result ? 0 : -ENOMEM;
}

static const char *const policy_choices[] = { "never", "on-failure",
					      "always", NULL };

#define NAME_PARAM                                                          \
	{ .name = "name", .type = ZN_CMD_STR, .required = true,             \
	  .desc = "the launched NF's name" }
#define LAUNCH_RESULT                                                       \
	"{\"name\": \"its name\", \"binary\": \"path\", \"args\": \"its "   \
	"options\", \"service\": \"id\", \"replicas\": \"wanted\", "        \
	"\"running\": \"running now\", \"cpus\": \"CPU list or empty\", "   \
	"\"restart\": \"policy\", \"starts\": \"processes started\", "      \
	"\"restarts\": \"of them, restarts\", \"failures\": \"exits with "  \
	"a failure\", \"instances\": \"[{name, state, pid (the NF's own "  \
	"once registered), sandbox_pid (bubblewrap's, sandboxed), "       \
	"restarts, last_exit}]\", \"sandbox\": \"sandboxed\", "            \
	"\"memory_mb\": "                                                  \
	"\"limit, 0: none\", \"removing\": \"nf.remove'd, replicas "     \
	"still stopping\", \"rolling\": \"a rolling restart is on\", "    \
	"\"trust_group\": \"its group, or null\"}"

static const struct zn_cmd nf_start_cmd = {
	.name = "nf.start",
	.flags = ZN_CMD_F_TENANT, /* its own (tenant_start) */
	.help = "launch an NF and supervise it (replicas, restart policy)",
	.params = {
		NAME_PARAM,
		{ .name = "binary", .type = ZN_CMD_STR,
		  .desc = "absolute path of the NF program, or the name of "
			  "an NF installed with the manager (not writable "
			  "by other users: checked at each start); required "
			  "but with bundle (then zeronf-bundle)" },
		{ .name = "service", .type = ZN_CMD_INT,
		  .bounded = true, .min = 1, .max = ZN_MAX_SERVICES - 1,
		  .desc = "required but with bundle (then its first NF's)" },
		{ .name = "bundle", .type = ZN_CMD_ARRAY,
		  .desc = "NFs run in one thread of each replica, in this "
			  "order (include/zeronf/bundle.h)",
		  .schema = "{\"minItems\": 1, \"maxItems\": "
			    RTE_STR(ZN_BUNDLE_MAX) ", \"items\": {\"type\": "
			    "\"object\", \"required\": [\"binary\", "
			    "\"service\", \"name\"], \"properties\": {"
			    "\"binary\": {\"type\": \"string\"}, "
			    "\"service\": {\"type\": \"integer\"}, "
			    "\"name\": {\"type\": \"string\"}, "
			    "\"args\": {\"type\": \"array\", \"items\": "
			    "{\"type\": \"string\"}}}}}" },
		{ .name = "args", .type = ZN_CMD_ARRAY,
		  .desc = "the NF's own options (after --)",
		  .schema = "{\"maxItems\": 64, \"items\": {\"type\": "
			    "\"string\"}}" },
		{ .name = "replicas", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = ZN_MAX_REPLICAS, .desc = "default 1" },
		{ .name = "cpus", .type = ZN_CMD_STR,
		  .desc = "CPUs the replicas run on, e.g. 0-3,6" },
		{ .name = "restart", .type = ZN_CMD_STR,
		  .desc = "default on-failure", .choices = policy_choices },
		{ .name = "sandbox", .type = ZN_CMD_BOOL,
		  .desc = "run it in a sandbox (bubblewrap; docs/operations.md)" },
		{ .name = "trust_group", .type = ZN_CMD_STR,
		  .desc = "the trust group it joins (group.list); sandboxed, "
			  "it can open no other group's memory" },
		{ .name = "memory_mb", .type = ZN_CMD_INT, .bounded = true,
		  .min = 16, .max = 1048576,
		  .desc = "memory limit of each replica (a cgroup)" },
	},
	.result = LAUNCH_RESULT,
	.doc = "Replica *i* is named `NAME.i` (replica 0: `NAME`) and runs "
	       "`BINARY -i INSTANCE -s SERVICE -n NAME.i [--cpus CPUS] "
	       "[--trust-group G] -- "
	       "ARGS`; its output goes to `<log dir>/<replica>.log`. A replica "
	       "that fails is restarted after a back-off that doubles from "
	       "100 ms to 10 s while it keeps failing within 10 s of its "
	       "start; after 5 such failures in a row it is left down "
	       "(state `failed`, event `nf.gave_up`) until nf.restart. "
	       "With `bundle` [{binary, service, name, args}, ...] (at most "
	       "8 NFs, 64 options in all) each replica is one process, "
	       "`zeronf-bundle -i INSTANCE -s SERVICE -n NAME.i -- --nf "
	       "BINARY.so:SERVICE:NAME ARGS ...`, whose NFs (named NAME of "
	       "each, `.i` added for replica i) run in one thread in that "
	       "order, each burst carried through them (docs/architecture.md "
	       "\"Bundles\"); not sandboxed, not a tenant's; its NFs stop and "
	       "restart together.",
	.fn = cmd_nf_start,
	.check = check_nf_start,
};
ZN_CMD_REGISTER(nf_start_cmd)

static const struct zn_cmd nf_scale_cmd = {
	.name = "nf.scale",
	.flags = ZN_CMD_F_TENANT, /* its own (tenant_start) */
	.help = "run a launched NF with this many replicas",
	.params = {
		NAME_PARAM,
		{ .name = "replicas", .type = ZN_CMD_INT, .required = true,
		  .bounded = true, .min = 0, .max = ZN_MAX_REPLICAS },
	},
	.result = LAUNCH_RESULT,
	.doc = "Replicas above the number are stopped (they drain their "
	       "packets first); new ones are started.",
	.fn = cmd_nf_scale,
};
ZN_CMD_REGISTER(nf_scale_cmd)

static const struct zn_cmd nf_restart_cmd = {
	.name = "nf.restart",
	.flags = ZN_CMD_F_TENANT, /* its own (tenant_start) */
	.help = "restart each replica of a launched NF, rolling",
	.params = { NAME_PARAM },
	.result = LAUNCH_RESULT,
	.doc = "Rolling while a replica runs (mgr/nf/launch_roll.c): an extra "
	       "replica (the next index) starts first; once it runs, each "
	       "replica in turn is stopped (it drains; its flows move to the "
	       "others) and started again, the next once it runs; then the "
	       "extra one stops. The service never lacks a replica. "
	       "`rolling` is true meanwhile (another nf.restart is refused: "
	       "EBUSY; nf.scale stops the roll where it is); events "
	       "`nf.roll`, `nf.rolled`, or `nf.roll_stopped` when a replica "
	       "does not come back (the extra one then goes on serving). "
	       "With none running, each is started.",
	.fn = cmd_nf_restart,
};
ZN_CMD_REGISTER(nf_restart_cmd)

static const struct zn_cmd nf_update_cmd = {
	.name = "nf.update",
	.flags = ZN_CMD_F_TENANT, /* its own (tenant_start) */
	.help = "change a launched NF's program, options, CPUs, restart "
		"policy, sandbox or memory limit, then restart it, rolling",
	.params = {
		NAME_PARAM,
		{ .name = "binary", .type = ZN_CMD_STR,
		  .desc = "as nf.start's" },
		{ .name = "args", .type = ZN_CMD_ARRAY,
		  .desc = "the NF's own options (after --), all of them",
		  .schema = "{\"maxItems\": 64, \"items\": {\"type\": "
			    "\"string\"}}" },
		{ .name = "cpus", .type = ZN_CMD_STR,
		  .desc = "a CPU list; \"\": none" },
		{ .name = "restart", .type = ZN_CMD_STR,
		  .choices = policy_choices },
		{ .name = "sandbox", .type = ZN_CMD_BOOL },
		{ .name = "memory_mb", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = 1048576, .desc = "0: no limit" },
	},
	.result = LAUNCH_RESULT,
	.doc = "What is not given stays. The replicas then restart rolling "
	       "(nf.restart): each runs the new spec, and the service never "
	       "lacks a replica. Its service and trust group cannot change "
	       "(nf.remove, then nf.start).",
	.fn = cmd_nf_update,
};
ZN_CMD_REGISTER(nf_update_cmd)

static const struct zn_cmd nf_remove_cmd = {
	.name = "nf.remove",
	.flags = ZN_CMD_F_TENANT, /* its own (tenant_start) */
	.help = "stop every replica of a launched NF and forget it",
	.params = { NAME_PARAM },
	.result = LAUNCH_RESULT,
	.fn = cmd_nf_remove,
};
ZN_CMD_REGISTER(nf_remove_cmd)
