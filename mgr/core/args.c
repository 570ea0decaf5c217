/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The manager command line: parsed with the options every subsystem
 * registered (args.h), --help printed from them. The core's own options
 * (the instance, the default chain, memory, logging, what to print) are
 * here; chains use the one step parser (zeronf/step.h).
 */

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "args.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_cpus.h"
#include "../../lib/common/zn_util.h"

#define MAX_OPTS 96       /* every subsystem's, together */
#define HELP_COLUMN 26    /* where --help's texts start */

static const struct zn_opts *sets[ZN_SUBSYS_COUNT + 4];
static unsigned int n_sets;

void
zn_opts_register(const struct zn_opts *o)
{
	unsigned int i = n_sets;

	if (n_sets == RTE_DIM(sets))
		return; /* caught: its options are unknown, --help lacks them */
	/* kept in order (stable: a subsystem's sets as they registered) */
	while (i > 0 && sets[i - 1]->order > o->order) {
		sets[i] = sets[i - 1];
		i--;
	}
	sets[i] = o;
	n_sets++;
}

int
zn_opt_uint(const char *prog, const char *opt, const char *arg,
	    uint64_t min, uint64_t max, unsigned int *out)
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

/* (a group is checked against --trust-group once all options are read,
 * group.c) */
int
zn_opt_port_name(const char *prog, const char *opt, const char *arg,
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

/* ---- Parsing ---- */

/* Option @p o, given @p arg (NULL: none), into @p cfg. */
static int
apply(const char *prog, const struct zn_opt *o, const char *arg,
      struct zn_mgr_cfg *cfg)
{
	char opt[64];
	void *field = (char *)cfg + o->field;

	switch (o->kind) {
	case ZN_OPT_FLAG:
		*(bool *)field = true;
		return 0;
	case ZN_OPT_UINT:
		snprintf(opt, sizeof(opt), "--%s", o->name);
		return zn_opt_uint(prog, opt, arg, o->min, o->max, field);
	case ZN_OPT_PARSE:
		return o->parse(prog, arg, cfg);
	}
	return -EINVAL;
}

int
zn_mgr_parse_args(struct zn_mgr_cfg *cfg, int argc, char **argv)
{
	static struct option longopts[MAX_OPTS + 1];
	static const struct zn_opt *which[MAX_OPTS];
	char shorts[2 * MAX_OPTS + 1] = "";
	const char *prog = argv[0];
	unsigned int n = 0;
	int opt, my_argc = argc;

	memset(cfg, 0, sizeof(*cfg));
	for (unsigned int s = 0; s < n_sets; s++) {
		if (sets[s]->defaults != NULL)
			sets[s]->defaults(cfg);
		for (unsigned int i = 0; i < sets[s]->n; i++) {
			const struct zn_opt *o = &sets[s]->opt[i];
			size_t k = strlen(shorts);

			if (n == MAX_OPTS)
				return -ENOSPC; /* a build with more: raise it */
			longopts[n] = (struct option){ o->name,
				o->arg != NULL ? required_argument :
				no_argument, NULL, 256 + (int)n };
			which[n++] = o;
			if (o->short_name != 0) {
				shorts[k++] = o->short_name;
				if (o->arg != NULL)
					shorts[k++] = ':';
				shorts[k] = '\0';
			}
		}
	}
	longopts[n] = (struct option){ NULL, 0, NULL, 0 };

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			my_argc = i;
			cfg->eal_argc = argc - i - 1;
			cfg->eal_argv = argv + i + 1;
			break;
		}
	optind = 0;
	while ((opt = getopt_long(my_argc, argv, shorts, longopts, NULL)) !=
	       -1) {
		const struct zn_opt *o = NULL;
		int rc;

		if (opt >= 256 && opt < 256 + (int)n)
			o = which[opt - 256];
		for (unsigned int i = 0; o == NULL && opt > 0 && opt < 256 &&
		     i < n; i++)
			if (which[i]->short_name == opt)
				o = which[i];
		if (o == NULL) { /* getopt said what */
			fprintf(stderr, "%s: --help lists the options\n",
				prog);
			return -EINVAL;
		}
		rc = apply(prog, o, optarg, cfg);
		if (rc < 0)
			return rc; /* said; -ECANCELED: --help shown */
	}
	if (optind < my_argc) {
		fprintf(stderr, "%s: unexpected argument '%s'\n", prog,
			argv[optind]);
		return -EINVAL;
	}
	for (unsigned int s = 0; s < n_sets; s++)
		if (sets[s]->check != NULL && sets[s]->check(prog, cfg) < 0)
			return -EINVAL;
	return 0;
}

void
zn_mgr_usage(const char *prog, FILE *out)
{
	fprintf(out, "Usage: %s [options] [-- extra EAL options]\n"
		"ZeroNF manager: owns the ports and the packet pool, moves "
		"packets between\nports and NF processes.\n\n", prog);
	for (unsigned int s = 0; s < n_sets; s++)
		for (unsigned int i = 0; i < sets[s]->n; i++) {
			const struct zn_opt *o = &sets[s]->opt[i];
			const char *line = o->help;
			char col[96];
			int w;

			if (o->short_name != 0)
				w = snprintf(col, sizeof(col), "  -%c, --%s%s%s",
					     o->short_name, o->name,
					     o->arg ? " " : "",
					     o->arg ? o->arg : "");
			else
				w = snprintf(col, sizeof(col), "      --%s%s%s",
					     o->name, o->arg ? " " : "",
					     o->arg ? o->arg : "");
			/* the text beside the option, or under it */
			if (w < HELP_COLUMN)
				fprintf(out, "%-*s", HELP_COLUMN, col);
			else if (w <= HELP_COLUMN + 2)
				fprintf(out, "%s  ", col);
			else
				fprintf(out, "%s\n%*s", col, HELP_COLUMN, "");
			for (;;) {
				size_t len = strcspn(line, "\n");

				fprintf(out, "%.*s\n", (int)len, line);
				if (line[len] == '\0')
					break;
				line += len + 1;
				fprintf(out, "%*s", HELP_COLUMN, "");
			}
		}
}

/* ---- The core's options ---- */

static int
opt_instance(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (!zn_instance_name_valid(arg)) {
		fprintf(stderr, "%s: bad instance name '%s' (1-%d of A-Z a-z "
			"0-9 _ -)\n", prog, arg, ZN_NAME_LEN - 1);
		return -EINVAL;
	}
	zn_strlcpy(cfg->instance, arg, sizeof(cfg->instance));
	return 0;
}

static int
opt_chain(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	char err[160];
	int rc = zn_steps_parse_err(arg, cfg->chain, ZN_MAX_CHAIN_STEPS, err,
				    sizeof(err));

	if (rc < 0) {
		fprintf(stderr, "%s: --chain: %s\n", prog, err);
		return -EINVAL;
	}
	cfg->chain_len = (unsigned int)rc;
	return 0;
}

static int
opt_ring_size(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (zn_opt_uint(prog, "--ring-size", arg, 64, 1u << 20,
			&cfg->ring_size) < 0)
		return -EINVAL;
	if (cfg->ring_size & (cfg->ring_size - 1)) {
		fprintf(stderr, "%s: --ring-size must be a power of 2\n", prog);
		return -EINVAL;
	}
	return 0;
}

static int
opt_huge_dir(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	RTE_SET_USED(prog);
	zn_strlcpy(cfg->huge_dir, arg, sizeof(cfg->huge_dir));
	return 0;
}

static int
opt_log_level(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	return zn_log_level_option(prog, arg, cfg->log_level,
				   sizeof(cfg->log_level));
}

static int
opt_help(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	RTE_SET_USED(arg);
	RTE_SET_USED(cfg);
	zn_mgr_usage(prog, stdout);
	return -ECANCELED;
}

static void
core_defaults(struct zn_mgr_cfg *cfg)
{
	zn_strlcpy(cfg->instance, ZN_INSTANCE_DEFAULT, sizeof(cfg->instance));
	cfg->pool_size = 16383;
	cfg->ring_size = 1024;
	cfg->mem_mb = 256;
	zn_strlcpy(cfg->log_level, "notice", sizeof(cfg->log_level));
}

/* The default chain names ports that exist. */
static int
core_check(const char *prog, struct zn_mgr_cfg *cfg)
{
	for (unsigned int i = 0; i < cfg->chain_len; i++)
		if (cfg->chain[i].type == ZN_STEP_PORT &&
		    cfg->chain[i].id >= cfg->n_devargs) {
			fprintf(stderr, "%s: --chain names port %u but only %u "
				"port(s) are given\n", prog, cfg->chain[i].id,
				cfg->n_devargs);
			return -EINVAL;
		}
	return 0;
}

static const struct zn_opt core_opt[] = {
	{ "instance", 'i', "NAME", "instance name = EAL file prefix "
	  "(default '" ZN_INSTANCE_DEFAULT "')", ZN_OPT_PARSE,
	  .parse = opt_instance },
	{ "chain", 'c', "HOPS", "default chain, e.g. 1,2,port:0 (hops: ID "
	  "or svc:ID,\nport:P, drop; up to " RTE_STR(ZN_MAX_CHAIN_STEPS) ")",
	  ZN_OPT_PARSE, .parse = opt_chain },
	{ "pool-size", 0, "N", "packet buffers (default 16383)", ZN_OPT_UINT,
	  ZN_CFG(pool_size), 1023, 16u << 20, NULL },
	{ "ring-size", 0, "N", "NF ring size, power of 2 (default 1024)",
	  ZN_OPT_PARSE, .parse = opt_ring_size },
	{ "mem", 0, "MB", "hugepage memory, reserved at start (default 256)",
	  ZN_OPT_UINT, ZN_CFG(mem_mb), 32, 1u << 20, NULL },
	{ "huge-dir", 0, "DIR", "hugetlbfs mount (default: found in "
	  "/proc/mounts)", ZN_OPT_PARSE, .parse = opt_huge_dir },
	{ "log-level", 0, "LVL", "log level (default notice)", ZN_OPT_PARSE,
	  .parse = opt_log_level },
};

static const struct zn_opts core_opts = {
	.order = ZN_SUBSYS_INSTANCE, .opt = core_opt,
	.n = RTE_DIM(core_opt), .defaults = core_defaults,
	.check = core_check,
};
ZN_OPTIONS_REGISTER(core_opts)

/* What to do instead of running: listed last */
static const struct zn_opt mode_opt[] = {
	{ "schema", 0, NULL, "print the control protocol's schema (JSON) and "
	  "exit", ZN_OPT_FLAG, ZN_CFG(print_schema), 0, 0, NULL },
	{ "subsystems", 0, NULL, "print the subsystems in start-up order and "
	  "exit\n(teardown is the reverse; docs/hacking.md)", ZN_OPT_FLAG,
	  ZN_CFG(print_subsystems), 0, 0, NULL },
	{ "clean", 0, NULL, "remove what a manager of this instance that "
	  "died\nleft (hugepage files, runtime directory), and exit",
	  ZN_OPT_FLAG, ZN_CFG(clean), 0, 0, NULL },
	{ "check", 0, NULL, "check these options and the requests on "
	  "stdin\n(a JSON array; zeronf validate uses it), start nothing",
	  ZN_OPT_FLAG, ZN_CFG(check), 0, 0, NULL },
	{ "help", 'h', NULL, "this help", ZN_OPT_PARSE, .parse = opt_help },
};

static const struct zn_opts mode_opts = {
	.order = ZN_SUBSYS_RUN, .opt = mode_opt, .n = RTE_DIM(mode_opt),
};
ZN_OPTIONS_REGISTER(mode_opts)
