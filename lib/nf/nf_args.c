/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* libzeronf's own options (before "--"), checked with one clear line per
 * mistake; what follows goes to the NF's parse_args. */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nf_pvt.h"
#include "../common/zn_nf_options.h"
#include "../common/zn_instance.h"
#include "../common/zn_util.h"
#include "../common/zn_cpus.h"

static void
lib_usage(const struct zn_nf *nf, const char *prog, FILE *out)
{
	fprintf(out,
		"Usage: %s [options] [-- NF options]\n"
		"ZeroNF network function '%s'.\n\n"
		"Options:\n"
		"  -i, --instance NAME   manager instance (default $ZERONF_INSTANCE"
		" or '" ZN_INSTANCE_DEFAULT "')\n"
		"  -s, --service ID      service id to register, 1..%u%s\n"
		"  -n, --name NAME       instance name shown in stats\n"
		"      --cpus LIST       CPUs the NF may run on (default: all "
		"allowed)\n"
		"      --trust-group G   join the manager's trust group G "
		"(map its pool)\n"
		"      --log-level LVL   EAL/ZeroNF log level (default notice)\n"
		"      --wait SECONDS    wait for the manager to come up\n"
		"      --guest FILE      in a ZeroNF VM: its helper's handles "
		"(set by the VM's init)\n"
		"  -h, --help            this help\n",
		prog, nf->ops.name, ZN_MAX_SERVICES - 1,
		nf->ops.default_service ? "" : " (required)");
	if (nf->ops.usage != NULL) {
		fprintf(out, "\nNF options (after --):\n");
		nf->ops.usage(out);
	}
}

static bool
name_valid(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return n > 0 && n < ZN_NAME_LEN;
}

/* The ports an NF in a pod asks a TX queue of its own on: the device
 * plugin sets ZERONF_TX_PORT_P=1 for each port P whose queue resource
 * (zeronf.dev/txq-NAME) the pod has (k8s/deviceplugin). 0 or -EINVAL. */
static int
tx_ports_env(const char *prog, uint64_t *mask)
{
	static const char pre[] = "ZERONF_TX_PORT_";
	const size_t pl = sizeof(pre) - 1;

	*mask = 0;
	for (char **e = environ; *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		char num[8];
		uint64_t p;

		if (strncmp(*e, pre, pl) != 0 || eq == NULL)
			continue;
		if ((size_t)(eq - *e) - pl >= sizeof(num)) {
			fprintf(stderr, "%s: bad %s\n", prog, *e);
			return -EINVAL;
		}
		memcpy(num, *e + pl, (size_t)(eq - *e) - pl);
		num[(size_t)(eq - *e) - pl] = '\0';
		if (zn_parse_uint(num, 0, ZN_MAX_PORTS - 1, &p) < 0) {
			fprintf(stderr, "%s: bad %s (a port 0..%d)\n", prog,
				*e, ZN_MAX_PORTS - 1);
			return -EINVAL;
		}
		if (strcmp(eq + 1, "1") == 0)
			*mask |= 1ull << p;
	}
	return 0;
}

/* Parse library options; on success nf_argc and nf_argv describe the NF's
 * own arguments (argv[0] kept). Returns 0, -ECANCELED after --help, or
 * -EINVAL. */
int
zn_nf_parse_lib_args(struct zn_nf *nf, int argc, char **argv, int *nf_argc,
	       char ***nf_argv)
{
	static const struct option longopts[] = {
		ZN_NF_LONG_OPTIONS,
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("ZERONF_INSTANCE");
	const char *prog = argc > 0 ? argv[0] : nf->ops.name;
	int lib_argc = argc, opt, rc;
	uint64_t v;

	zn_strlcpy(nf->instance, env != NULL ? env : ZN_INSTANCE_DEFAULT,
		   sizeof(nf->instance));
	/* a trust group's NF in a pod: the device plugin says which
	 * (k8s/deviceplugin); -g overrides */
	env = getenv("ZERONF_GROUP");
	if (env != NULL) {
		if (!zn_instance_name_valid(env)) {
			fprintf(stderr, "%s: bad ZERONF_GROUP '%s'\n", prog, env);
			return -EINVAL;
		}
		zn_strlcpy(nf->group_name, env, sizeof(nf->group_name));
	}
	rc = tx_ports_env(prog, &nf->tx_ports);
	if (rc < 0)
		return rc;
	zn_strlcpy(nf->name, nf->ops.name, sizeof(nf->name));
	zn_strlcpy(nf->log_level, "notice", sizeof(nf->log_level));
	nf->service_id = nf->ops.default_service;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			lib_argc = i;
			break;
		}

	optind = 0; /* full getopt reset (GNU) */
	opterr = 1;
	while ((opt = getopt_long(lib_argc, argv, ZN_NF_SHORT_OPTIONS, longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (!zn_instance_name_valid(optarg)) {
				fprintf(stderr, "%s: bad instance name '%s'\n",
					prog, optarg);
				return -EINVAL;
			}
			zn_strlcpy(nf->instance, optarg, sizeof(nf->instance));
			break;
		case 's':
			if (zn_parse_uint(optarg, 1, ZN_MAX_SERVICES - 1, &v)) {
				fprintf(stderr,
					"%s: service id must be 1..%u, not '%s'\n",
					prog, ZN_MAX_SERVICES - 1, optarg);
				return -EINVAL;
			}
			nf->service_id = (uint16_t)v;
			break;
		case 'n':
			if (!name_valid(optarg)) {
				fprintf(stderr, "%s: name must be 1..%d "
					"printable ASCII characters\n", prog,
					ZN_NAME_LEN - 1);
				return -EINVAL;
			}
			zn_strlcpy(nf->name, optarg, sizeof(nf->name));
			break;
		case 'c':
			if (zn_cpus_option(prog, optarg, &nf->cpus) < 0)
				return -EINVAL;
			nf->cpus_set = true;
			break;
		case 'l':
			if (zn_log_level_option(prog, optarg, nf->log_level,
						sizeof(nf->log_level)) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (zn_parse_uint(optarg, 0, 3600, &v)) {
				fprintf(stderr, "%s: bad --wait '%s'\n", prog,
					optarg);
				return -EINVAL;
			}
			nf->wait_s = (unsigned int)v;
			break;
		case 'g':
			if (!zn_instance_name_valid(optarg)) {
				fprintf(stderr, "%s: bad trust group name "
					"'%s'\n", prog, optarg);
				return -EINVAL;
			}
			zn_strlcpy(nf->group_name, optarg,
				   sizeof(nf->group_name));
			break;
		case 'G':
			if (strlen(optarg) >= sizeof(nf->guest_conf)) {
				fprintf(stderr, "%s: --guest: path too long\n",
					prog);
				return -EINVAL;
			}
			zn_strlcpy(nf->guest_conf, optarg,
				   sizeof(nf->guest_conf));
			break;
		case 'h':
			lib_usage(nf, prog, stdout);
			return -ECANCELED;
		default: /* getopt said what */
			fprintf(stderr, "%s: --help lists the options\n",
				prog);
			return -EINVAL;
		}
	}
	if (optind < lib_argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (NF options go "
			"after --)\n", prog, argv[optind]);
		return -EINVAL;
	}
	if (nf->service_id == 0) {
		fprintf(stderr, "%s: --service is required\n", prog);
		return -EINVAL;
	}

	/* NF arguments: argv[0] followed by everything after "--". */
	*nf_argc = 1 + (lib_argc < argc ? argc - lib_argc - 1 : 0);
	*nf_argv = calloc((size_t)*nf_argc + 1, sizeof(char *));
	if (*nf_argv == NULL)
		return -ENOMEM;
	(*nf_argv)[0] = argv[0];
	for (int i = 1; i < *nf_argc; i++)
		(*nf_argv)[i] = argv[lib_argc + i];
	return 0;
}

