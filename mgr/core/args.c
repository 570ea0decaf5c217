/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The manager command line. Chains use the one step parser (zeronf/step.h). */

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "args.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/common/zn_cpus.h"

static int
parse_u(const char *prog, const char *opt, const char *arg, uint64_t min,
	uint64_t max, unsigned int *out)
{
	uint64_t v;

	if (zn_parse_uint(arg, min, max, &v)) {
		fprintf(stderr, "%s: %s must be %llu..%llu, not '%s'\n", prog,
			opt, (unsigned long long)min, (unsigned long long)max,
			arg);
		return -EINVAL;
	}
	*out = (unsigned int)v;
	return 0;
}

/* --trust-group NAME[:BUFFERS]: a name (as an instance name) used once. */
static int
parse_group(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	struct zn_group_cfg *g;
	const char *colon = strchr(arg, ':');
	size_t n = colon != NULL ? (size_t)(colon - arg) : strlen(arg);

	if (cfg->n_groups >= ZN_MAX_GROUPS) {
		fprintf(stderr, "%s: at most %u --trust-group\n", prog,
			ZN_MAX_GROUPS);
		return -EINVAL;
	}
	g = &cfg->groups[cfg->n_groups];
	if (n == 0 || n >= sizeof(g->name)) {
		fprintf(stderr, "%s: --trust-group '%s': a name of 1..%zu "
			"characters first\n", prog, arg, sizeof(g->name) - 1);
		return -EINVAL;
	}
	memcpy(g->name, arg, n);
	g->name[n] = '\0';
	if (!zn_instance_name_valid(g->name)) {
		fprintf(stderr, "%s: --trust-group: bad name '%s' (letters, "
			"digits, '_', '-')\n", prog, g->name);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < cfg->n_groups; i++)
		if (strcmp(cfg->groups[i].name, g->name) == 0) {
			fprintf(stderr, "%s: --trust-group '%s' given twice\n",
				prog, g->name);
			return -EINVAL;
		}
	g->n_mbufs = 8191;
	if (colon != NULL &&
	    parse_u(prog, "--trust-group's BUFFERS", colon + 1, 1023,
		    1u << 22, &g->n_mbufs) < 0)
		return -EINVAL;
	cfg->n_groups++;
	return 0;
}

/* --port-group P=NAME and --port-name P=NAME: NAME into @p names[P]
 * (a group is checked against --trust-group once all options are read,
 * resolve_ports). */
static int
parse_port_name(const char *prog, const char *opt, const char *arg,
		char (*names)[ZN_NAME_LEN])
{
	const char *eq = strchr(arg, '=');
	char num[16];
	uint64_t p;

	if (eq == NULL || eq == arg || (size_t)(eq - arg) >= sizeof(num) ||
	    strlen(eq + 1) == 0 || strlen(eq + 1) >= ZN_NAME_LEN) {
		bool group = strcmp(opt, "--port-group") == 0;

		fprintf(stderr, "%s: %s '%s': PORT=%s, such as 0=%s\n", prog,
			opt, arg, group ? "GROUP" : "NAME", group ? "red" : "wan");
		return -EINVAL;
	}
	memcpy(num, arg, (size_t)(eq - arg));
	num[eq - arg] = '\0';
	if (zn_parse_uint(num, 0, ZN_MAX_PORT_ARGS - 1, &p)) {
		fprintf(stderr, "%s: %s: bad port '%s'\n", prog, opt, num);
		return -EINVAL;
	}
	if (names[p][0] != '\0') {
		fprintf(stderr, "%s: %s: port %u given twice\n", prog, opt,
			(unsigned int)p);
		return -EINVAL;
	}
	zn_strlcpy(names[p], eq + 1, ZN_NAME_LEN);
	return 0;
}

/* A port's name: what a chain step "port:NAME" says (not a number). */
static bool
port_name_ok(const char *s)
{
	bool digits = true;

	for (const char *c = s; *c != '\0'; c++) {
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			return false;
		digits = digits && isdigit((unsigned char)*c);
	}
	return !digits;
}

static int
resolve_port_names(const char *prog, struct zn_mgr_cfg *cfg)
{
	for (unsigned int p = 0; p < ZN_MAX_PORT_ARGS; p++) {
		const char *name = cfg->port_name[p];

		if (name[0] == '\0')
			continue;
		if (p >= cfg->n_devargs || !port_name_ok(name)) {
			fprintf(stderr, "%s: --port-name %u=%s: %s\n", prog, p,
				name, p >= cfg->n_devargs ? "no such port" :
				"a name of [A-Za-z0-9_-], not a number");
			return -EINVAL;
		}
		for (unsigned int q = 0; q < p; q++)
			if (strcmp(cfg->port_name[q], name) == 0) {
				fprintf(stderr, "%s: --port-name: ports %u and "
					"%u are both '%s'\n", prog, q, p, name);
				return -EINVAL;
			}
	}
	return 0;
}

static int
resolve_port_groups(const char *prog, struct zn_mgr_cfg *cfg)
{
	for (unsigned int p = 0; p < ZN_MAX_PORT_ARGS; p++) {
		const char *name = cfg->port_group_name[p];
		unsigned int g;

		if (name[0] == '\0')
			continue;
		if (p >= cfg->n_devargs) {
			fprintf(stderr, "%s: --port-group names port %u but "
				"only %u port(s) are given\n", prog, p,
				cfg->n_devargs);
			return -EINVAL;
		}
		for (g = 0; g < cfg->n_groups; g++)
			if (strcmp(cfg->groups[g].name, name) == 0)
				break;
		if (g == cfg->n_groups) {
			fprintf(stderr, "%s: --port-group %u=%s: no "
				"--trust-group %s\n", prog, p, name, name);
			return -EINVAL;
		}
		cfg->port_group[p] = g + 1;
	}
	return 0;
}

int
zn_mgr_parse_args(struct zn_mgr_cfg *cfg, int argc, char **argv)
{
	enum {
		O_RX = 256, O_TX, O_CPUS, O_POOL, O_RING, O_MEM, O_INGRESS,
		O_STALL, O_IDLE, O_STATS, O_HUGE, O_LOG, O_RXPAUSED, O_FLOWCAP,
		O_FLOWIDLE, O_LBIDLE, O_REHASH, O_RXTS, O_RXREADY, O_SCHEMA,
		O_CHECK, O_CLEAN, O_SUBSYS,
		O_LOGDIR, O_CGROOT, O_HANDOFF, O_NFTXQ, O_GROUP, O_PGROUP, O_PNAME,
		O_VALIDATE, O_BADDESC, O_TENANT, O_SLICE, O_NFQUOTA,
		O_TQUOTA, O_PQUOTA, O_UIDBASE, O_STEERRATE,
	};
	static const struct option longopts[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "port", required_argument, NULL, 'p' },
		{ "chain", required_argument, NULL, 'c' },
		{ "rx-threads", required_argument, NULL, O_RX },
		{ "tx-threads", required_argument, NULL, O_TX },
		{ "cpus", required_argument, NULL, O_CPUS },
		{ "pool-size", required_argument, NULL, O_POOL },
		{ "ring-size", required_argument, NULL, O_RING },
		{ "mem", required_argument, NULL, O_MEM },
		{ "ingress", required_argument, NULL, O_INGRESS },
		{ "stall-ms", required_argument, NULL, O_STALL },
		{ "handoff", required_argument, NULL, O_HANDOFF },
		{ "nf-tx-queues", required_argument, NULL, O_NFTXQ },
		{ "trust-group", required_argument, NULL, O_GROUP },
		{ "port-group", required_argument, NULL, O_PGROUP },
		{ "port-name", required_argument, NULL, O_PNAME },
		{ "validate", required_argument, NULL, O_VALIDATE },
		{ "bad-desc-limit", required_argument, NULL, O_BADDESC },
		{ "tenant", required_argument, NULL, O_TENANT },
		{ "slice", required_argument, NULL, O_SLICE },
		{ "idle-sleep-us", required_argument, NULL, O_IDLE },
		{ "stats-interval", required_argument, NULL, O_STATS },
		{ "huge-dir", required_argument, NULL, O_HUGE },
		{ "log-level", required_argument, NULL, O_LOG },
		{ "rx-paused", no_argument, NULL, O_RXPAUSED },
		{ "rx-when-ready", no_argument, NULL, O_RXREADY },
		{ "flow-capacity", required_argument, NULL, O_FLOWCAP },
		{ "flow-idle-s", required_argument, NULL, O_FLOWIDLE },
		{ "nf-flow-quota", required_argument, NULL, O_NFQUOTA },
		{ "tenant-flow-quota", required_argument, NULL, O_TQUOTA },
		{ "nf-pool-quota", required_argument, NULL, O_PQUOTA },
		{ "nf-steer-rate", required_argument, NULL, O_STEERRATE },
		{ "lb-idle-s", required_argument, NULL, O_LBIDLE },
		{ "fdir-rehash", no_argument, NULL, O_REHASH },
		{ "rx-timestamp", no_argument, NULL, O_RXTS },
		{ "schema", no_argument, NULL, O_SCHEMA },
		{ "subsystems", no_argument, NULL, O_SUBSYS },
		{ "check", no_argument, NULL, O_CHECK },
		{ "clean", no_argument, NULL, O_CLEAN },
		{ "log-dir", required_argument, NULL, O_LOGDIR },
		{ "sandbox-uid-base", required_argument, NULL, O_UIDBASE },
		{ "cgroup-root", required_argument, NULL, O_CGROOT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *prog = argv[0];
	char err[160];
	int opt, my_argc = argc, rc;

	memset(cfg, 0, sizeof(*cfg));
	zn_strlcpy(cfg->instance, ZN_INSTANCE_DEFAULT, sizeof(cfg->instance));
	cfg->rx_threads = 1;
	cfg->pool_size = 16383;
	cfg->ring_size = 1024;
	cfg->mem_mb = 256;
	cfg->stall_ms = 2000;
	cfg->nf_tx_queues = 8;
	cfg->validate = true;
	cfg->bad_desc_limit = 64;
	cfg->idle_sleep_us = 1000;
	cfg->flow_capacity = 1u << 18;
	cfg->flow_idle_s = 300;
	cfg->nf_flow_quota = UINT_MAX;
	cfg->tenant_flow_quota = UINT_MAX;
	cfg->nf_pool_quota = UINT_MAX;
	cfg->nf_steer_rate = 20000;
	cfg->sandbox_uid_base = 1515061248u; /* 0x5a4e0000 */
	cfg->lb_idle_s = 30;
	zn_strlcpy(cfg->log_level, "notice", sizeof(cfg->log_level));

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			my_argc = i;
			cfg->eal_argc = argc - i - 1;
			cfg->eal_argv = argv + i + 1;
			break;
		}

	optind = 0;
	while ((opt = getopt_long(my_argc, argv, "i:p:c:h", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (!zn_instance_name_valid(optarg)) {
				fprintf(stderr, "%s: bad instance name '%s' "
					"(1-%d of A-Z a-z 0-9 _ -)\n", prog,
					optarg, ZN_NAME_LEN - 1);
				return -EINVAL;
			}
			zn_strlcpy(cfg->instance, optarg,
				   sizeof(cfg->instance));
			break;
		case 'p':
			if (cfg->n_devargs >= ZN_MAX_PORT_ARGS ||
			    strlen(optarg) >= ZN_DEVARGS_LEN ||
			    optarg[0] == '\0') {
				fprintf(stderr, "%s: bad or too many --port\n",
					prog);
				return -EINVAL;
			}
			zn_strlcpy(cfg->devargs[cfg->n_devargs++], optarg,
				   ZN_DEVARGS_LEN);
			break;
		case 'c':
			rc = zn_steps_parse_err(optarg, cfg->chain,
					    ZN_MAX_CHAIN_STEPS, err, sizeof(err));
			if (rc < 0) {
				fprintf(stderr, "%s: --chain: %s\n", prog, err);
				return -EINVAL;
			}
			cfg->chain_len = (unsigned int)rc;
			break;
		case O_RX:
			if (parse_u(prog, "--rx-threads", optarg, 1,
				    ZN_MAX_WORKERS, &cfg->rx_threads))
				return -EINVAL;
			break;
		case O_TX:
			if (parse_u(prog, "--tx-threads", optarg, 0,
				    ZN_MAX_WORKERS - 1, &cfg->tx_threads))
				return -EINVAL;
			break;
		case O_CPUS:
			if (zn_cpus_option(prog, optarg, &cfg->cpus) < 0)
				return -EINVAL;
			cfg->cpus_set = true;
			break;
		case O_POOL:
			if (parse_u(prog, "--pool-size", optarg, 1023,
				    16u << 20, &cfg->pool_size))
				return -EINVAL;
			break;
		case O_RING:
			if (parse_u(prog, "--ring-size", optarg, 64, 1u << 20,
				    &cfg->ring_size))
				return -EINVAL;
			if (cfg->ring_size & (cfg->ring_size - 1)) {
				fprintf(stderr, "%s: --ring-size must be a "
					"power of 2\n", prog);
				return -EINVAL;
			}
			break;
		case O_MEM:
			if (parse_u(prog, "--mem", optarg, 32, 1u << 20,
				    &cfg->mem_mb))
				return -EINVAL;
			break;
		case O_INGRESS:
			if (strcmp(optarg, "backpressure") == 0) {
				cfg->ingress = ZN_INGRESS_BACKPRESSURE;
			} else if (strcmp(optarg, "drop") == 0) {
				cfg->ingress = ZN_INGRESS_DROP;
			} else {
				fprintf(stderr, "%s: --ingress is backpressure "
					"or drop\n", prog);
				return -EINVAL;
			}
			break;
		case O_HANDOFF:
			if (strcmp(optarg, "direct") == 0) {
				cfg->handoff = ZN_HANDOFF_DIRECT;
			} else if (strcmp(optarg, "worker") == 0) {
				cfg->handoff = ZN_HANDOFF_WORKER;
			} else {
				fprintf(stderr, "%s: --handoff is direct or "
					"worker\n", prog);
				return -EINVAL;
			}
			break;
		case O_NFTXQ:
			if (parse_u(prog, "--nf-tx-queues", optarg, 0,
				    ZN_MAX_NFS, &cfg->nf_tx_queues))
				return -EINVAL;
			break;
		case O_GROUP:
			if (parse_group(prog, optarg, cfg) < 0)
				return -EINVAL;
			break;
		case O_VALIDATE:
			if (strcmp(optarg, "on") != 0 &&
			    strcmp(optarg, "off") != 0) {
				fprintf(stderr, "%s: --validate must be on or "
					"off, not '%s'\n", prog, optarg);
				return -EINVAL;
			}
			cfg->validate = strcmp(optarg, "on") == 0;
			break;
		case O_BADDESC:
			if (parse_u(prog, "--bad-desc-limit", optarg, 0,
				    1u << 30, &cfg->bad_desc_limit))
				return -EINVAL;
			break;
		case O_PGROUP:
			if (parse_port_name(prog, "--port-group", optarg,
					    cfg->port_group_name) < 0)
				return -EINVAL;
			break;
		case O_PNAME:
			if (parse_port_name(prog, "--port-name", optarg,
					    cfg->port_name) < 0)
				return -EINVAL;
			break;
		case O_TENANT:
			if (zn_tenant_parse(prog, optarg, cfg) < 0)
				return -EINVAL;
			break;
		case O_SLICE:
			if (zn_slice_parse(prog, optarg, cfg) < 0)
				return -EINVAL;
			break;
		case O_STALL:
			if (parse_u(prog, "--stall-ms", optarg, 0, 3600000,
				    &cfg->stall_ms))
				return -EINVAL;
			break;
		case O_IDLE:
			if (parse_u(prog, "--idle-sleep-us", optarg, 1, 1000000,
				    &cfg->idle_sleep_us))
				return -EINVAL;
			break;
		case O_STATS:
			if (parse_u(prog, "--stats-interval", optarg, 0, 86400,
				    &cfg->stats_interval_s))
				return -EINVAL;
			break;
		case O_FLOWCAP:
			if (parse_u(prog, "--flow-capacity", optarg, 8,
				    1u << 26, &cfg->flow_capacity))
				return -EINVAL;
			break;
		case O_NFQUOTA:
			if (parse_u(prog, "--nf-flow-quota", optarg, 0,
				    1u << 26, &cfg->nf_flow_quota))
				return -EINVAL;
			break;
		case O_STEERRATE:
			if (parse_u(prog, "--nf-steer-rate", optarg, 0,
				    10000000, &cfg->nf_steer_rate))
				return -EINVAL;
			break;
		case O_PQUOTA:
			if (parse_u(prog, "--nf-pool-quota", optarg, 0,
				    16u << 20, &cfg->nf_pool_quota))
				return -EINVAL;
			break;
		case O_TQUOTA:
			if (parse_u(prog, "--tenant-flow-quota", optarg, 0,
				    1u << 26, &cfg->tenant_flow_quota))
				return -EINVAL;
			break;
		case O_FLOWIDLE:
			if (parse_u(prog, "--flow-idle-s", optarg, 0, 1u << 24,
				    &cfg->flow_idle_s))
				return -EINVAL;
			break;
		case O_LBIDLE:
			if (parse_u(prog, "--lb-idle-s", optarg, 1, 30000,
				    &cfg->lb_idle_s))
				return -EINVAL;
			break;
		case O_RXTS:
			cfg->rx_timestamp = true;
			break;
		case O_SCHEMA:
			cfg->print_schema = true;
			break;
		case O_SUBSYS:
			cfg->print_subsystems = true;
			break;
		case O_CHECK:
			cfg->check = true;
			break;
		case O_CLEAN:
			cfg->clean = true;
			break;
		case O_UIDBASE:
			if (parse_u(prog, "--sandbox-uid-base", optarg, 0,
				    4000000000u, &cfg->sandbox_uid_base))
				return -EINVAL;
			if (cfg->sandbox_uid_base != 0 &&
			    cfg->sandbox_uid_base < 65536) {
				fprintf(stderr, "%s: --sandbox-uid-base %u: "
					"below 65536 (users of the system)\n",
					prog, cfg->sandbox_uid_base);
				return -EINVAL;
			}
			break;
		case O_LOGDIR:
			if (optarg[0] == '\0' ||
			    strlen(optarg) >= sizeof(cfg->log_dir) - 40) {
				fprintf(stderr, "%s: --log-dir: a directory "
					"path\n", prog);
				return -EINVAL;
			}
			zn_strlcpy(cfg->log_dir, optarg, sizeof(cfg->log_dir));
			break;
		case O_CGROOT: {
			struct stat st;

			if (optarg[0] != '/' ||
			    strlen(optarg) >= sizeof(cfg->cgroup_root) - 80 ||
			    stat(optarg, &st) < 0 || !S_ISDIR(st.st_mode)) {
				fprintf(stderr, "%s: --cgroup-root: an existing "
					"directory, absolute path\n", prog);
				return -EINVAL;
			}
			zn_strlcpy(cfg->cgroup_root, optarg,
				   sizeof(cfg->cgroup_root));
			break;
		}
		case O_REHASH:
			cfg->fdir_rehash = true;
			break;
		case O_HUGE:
			zn_strlcpy(cfg->huge_dir, optarg,
				   sizeof(cfg->huge_dir));
			break;
		case O_LOG:
			if (zn_log_level_option(prog, optarg, cfg->log_level,
						sizeof(cfg->log_level)) < 0)
				return -EINVAL;
			break;
		case O_RXPAUSED:
			cfg->rx_paused = true;
			break;
		case O_RXREADY:
			cfg->rx_when_ready = true;
			break;
		case 'h':
			zn_mgr_usage(prog, stdout);
			return -ECANCELED;
		default: /* getopt said what */
			fprintf(stderr, "%s: --help lists the options\n",
				prog);
			return -EINVAL;
		}
	}
	if (optind < my_argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
			argv[optind]);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < cfg->n_devargs; i++)
		for (unsigned int j = 0; j < i; j++) {
			size_t a = strcspn(cfg->devargs[i], ","),
			       b = strcspn(cfg->devargs[j], ",");

			if (a == b && strncmp(cfg->devargs[i],
					      cfg->devargs[j], a) == 0) {
				fprintf(stderr, "%s: port %u and port %u are "
					"both device '%.*s' (give each -p a "
					"name of its own: net_null0, "
					"net_null1, ...)\n", prog, j, i,
					(int)a, cfg->devargs[i]);
				return -EINVAL;
			}
		}
	if (cfg->rx_threads + cfg->tx_threads > ZN_MAX_WORKERS) {
		fprintf(stderr, "%s: at most %d threads in all\n", prog,
			ZN_MAX_WORKERS);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < cfg->chain_len; i++)
		if (cfg->chain[i].type == ZN_STEP_PORT &&
		    cfg->chain[i].id >= cfg->n_devargs) {
			fprintf(stderr, "%s: --chain names port %u but only %u "
				"port(s) are given\n", prog, cfg->chain[i].id,
				cfg->n_devargs);
			return -EINVAL;
		}
	if (resolve_port_groups(prog, cfg) < 0 ||
	    resolve_port_names(prog, cfg) < 0)
		return -EINVAL;
	return zn_tenant_resolve(prog, cfg);
}
