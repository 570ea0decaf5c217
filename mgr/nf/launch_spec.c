/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* What nf.start and nf.update check of a launch's spec: its name, its
 * program, CPUs and options, and a bundle's NFs (docs/architecture.md
 * "Bundles": the NFs one zeronf-bundle process runs, kept for launch.c,
 * which writes their "--nf MODULE:SERVICE:NAME ARGS" at each start). */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../core/cmd.h"
#include "launch_pvt.h"
#include "sandbox.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/common/zn_cpus.h"

bool
launch_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n < LAUNCH_NAME_LEN &&
	       strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			 "0123456789_-") == n;
}

/* What nf.start and nf.update check of a program, its CPUs and its
 * options (@p bin: a path by now). 0 or -errno (err set). */
int
launch_check_spec(struct zn_cmd_req *req, const char *bin, const char *cpus,
		  const json_t *args)
{
	const json_t *v;
	cpu_set_t set;
	size_t i;
	int rc;

	if (bin[0] != '/' || strlen(bin) >= PATH_MAX) {
		snprintf(req->err, sizeof(req->err), "binary: an absolute "
			 "path, or the name of an NF installed with the "
			 "manager");
		return -EINVAL;
	}
	if (access(bin, X_OK) < 0) {
		rc = -errno;
		snprintf(req->err, sizeof(req->err), "binary %s: %s", bin,
			 strerror(errno));
		return rc;
	}
	if (cpus != NULL && cpus[0] != '\0' &&
	    (strlen(cpus) >= sizeof(L.l[0].cpus) ||
	     zn_parse_cpulist(cpus, &set) < 0)) {
		snprintf(req->err, sizeof(req->err), "cpus: a CPU list such "
			 "as 0-3,6");
		return -EINVAL;
	}
	if (json_array_size(args) > LAUNCH_MAX_ARGS) {
		snprintf(req->err, sizeof(req->err), "args: at most %d",
			 LAUNCH_MAX_ARGS);
		return -EINVAL;
	}
	json_array_foreach(args, i, v)
		if (!json_is_string(v) || json_string_length(v) > 4096) {
			snprintf(req->err, sizeof(req->err), "args[%zu]: a "
				 "string of at most 4096 bytes", i);
			return -EINVAL;
		}
	return 0;
}

/* nf.start's "bundle": 1..ZN_BUNDLE_MAX NFs {binary, service, name,
 * args}, each a program (as nf.start's binary) whose module, BINARY.so
 * beside it (nfs/meson.build), zeronf-bundle loads; their options
 * LAUNCH_MAX_ARGS in all. Into @p out (NULL: checked only), *n set.
 * 0 or -errno (err set). */
int
launch_bundle_spec(struct zn_cmd_req *req, const json_t *bun,
		   struct launch_member *out, unsigned int *n)
{
	size_t k, total = 0;
	const json_t *v;
	int rc;

	if (!json_is_array(bun) || json_array_size(bun) == 0 ||
	    json_array_size(bun) > ZN_BUNDLE_MAX) {
		snprintf(req->err, sizeof(req->err), "bundle: 1..%d NFs, each "
			 "{binary, service, name, args}", ZN_BUNDLE_MAX);
		return -EINVAL;
	}
	json_array_foreach(bun, k, v) {
		const char *bin = json_string_value(json_object_get(v, "binary"));
		const char *name = json_string_value(json_object_get(v, "name"));
		const json_t *svc = json_object_get(v, "service");
		const json_t *args = json_object_get(v, "args");
		char path[PATH_MAX], module[PATH_MAX + 4];

		if (!json_is_object(v) || bin == NULL || !json_is_integer(svc) ||
		    json_integer_value(svc) < 1 ||
		    json_integer_value(svc) >= ZN_MAX_SERVICES ||
		    (args != NULL && !json_is_array(args))) {
			snprintf(req->err, sizeof(req->err), "bundle[%zu]: "
				 "{binary, service 1..%d, name, args}", k,
				 ZN_MAX_SERVICES - 1);
			return -EINVAL;
		}
		if (!launch_name_ok(name)) {
			snprintf(req->err, sizeof(req->err), "bundle[%zu].name: "
				 "1..%d characters of [A-Za-z0-9_-]", k,
				 LAUNCH_NAME_LEN - 1);
			return -EINVAL;
		}
		for (size_t j = 0; j < k; j++)
			if (strcmp(name, json_string_value(json_object_get(
					json_array_get(bun, j), "name"))) == 0) {
				snprintf(req->err, sizeof(req->err),
					 "bundle[%zu].name: '%s' twice", k, name);
				return -EINVAL;
			}
		if (strchr(bin, '/') == NULL &&
		    zn_nf_program_path(bin, path, PATH_MAX) == 0)
			bin = path;
		if ((rc = launch_check_spec(req, bin, NULL, args)) < 0) {
			char why[sizeof(req->err)];

			zn_strlcpy(why, req->err, sizeof(why));
			snprintf(req->err, sizeof(req->err), "bundle[%zu]: %.180s",
				 k, why);
			return rc;
		}
		snprintf(module, sizeof(module), "%s.so", bin);
		if (strlen(module) >= PATH_MAX || access(module, R_OK) < 0) {
			snprintf(req->err, sizeof(req->err), "bundle[%zu]: no "
				 "module %.150s (made beside the NF's program)",
				 k, module);
			return -ENOENT;
		}
		total += json_array_size(args);
		if (total > LAUNCH_MAX_ARGS) {
			snprintf(req->err, sizeof(req->err), "bundle: at most "
				 "%d options in all", LAUNCH_MAX_ARGS);
			return -EINVAL;
		}
		if (out == NULL)
			continue;
		struct launch_member *b = &out[k];
		size_t i;

		zn_strlcpy(b->module, module, sizeof(b->module));
		zn_strlcpy(b->name, name, sizeof(b->name));
		b->service = (uint16_t)json_integer_value(svc);
		snprintf(b->spec, sizeof(b->spec), "%s:%u:%s", module,
			 b->service, name);
		json_array_foreach(args, i, svc) {
			b->args[i] = strdup(json_string_value(svc));
			if (b->args[i] == NULL)
				return -ENOMEM;
			b->n_args = (unsigned int)i + 1;
		}
	}
	*n = (unsigned int)json_array_size(bun);
	return 0;
}

/* A bundle's program: zeronf-bundle, beside the manager's NFs, unless
 * nf.start names another. */
const char *
launch_bundle_binary(struct zn_cmd_req *req, const char *bin, char *path)
{
	if (bin != NULL)
		return bin;
	if (zn_nf_program_path("zeronf-bundle", path, PATH_MAX) < 0) {
		snprintf(req->err, sizeof(req->err), "no zeronf-bundle beside "
			 "the manager's NFs: give binary");
		return NULL;
	}
	return path;
}
