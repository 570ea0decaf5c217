/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_ARGS_H
#define ZN_ARGS_H

/*
 * The manager's configuration: its command line (args.c). Each subsystem
 * registers its own options beside its code (ZN_OPTIONS_REGISTER, as VPP's
 * VLIB_CONFIG_FUNCTION): how each is parsed into struct zn_mgr_cfg, its
 * default, its --help text, and the checks across options once all are
 * read. args.c parses the command line with them and prints --help from
 * them, subsystem by subsystem in start-up order (subsys.h).
 */

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <zeronf/step.h>

#include "../../lib/shm/zn_shm.h"
#include "subsys.h"

enum zn_ingress_policy {
	ZN_INGRESS_BACKPRESSURE = 0, /* hold; stop polling the port */
	ZN_INGRESS_DROP = 1,         /* drop what the first hop cannot take */
};

enum zn_handoff {
	ZN_HANDOFF_DIRECT = 0, /* NFs hand packets to NFs (links) */
	ZN_HANDOFF_WORKER = 1, /* every hop crosses a worker (as before) */
};

#define ZN_MAX_PORT_ARGS ZN_MAX_PORTS
#define ZN_DEVARGS_LEN 512
#define ZN_MAX_SLICES 64

struct zn_mgr_cfg {
	char instance[ZN_NAME_LEN];
	char devargs[ZN_MAX_PORT_ARGS][ZN_DEVARGS_LEN];
	unsigned int n_devargs;
	struct zn_step chain[ZN_MAX_CHAIN_STEPS];
	unsigned int chain_len;
	unsigned int of_flows;      /* OpenFlow table entries (sdn/oft.c) */
	unsigned int rx_threads;
	unsigned int tx_threads;
	cpu_set_t cpus;
	bool cpus_set;
	unsigned int pool_size;
	unsigned int ring_size;
	unsigned int mem_mb;
	enum zn_ingress_policy ingress;
	enum zn_handoff handoff;
	unsigned int nf_tx_queues;  /* per port, for NF -> port */
	unsigned int nf_rx_queues;  /* per port, for NFs that own them */
	bool nf_tx_by_request;      /* only to NFs that ask (req.tx_ports) */
	bool validate;              /* check NFs' descriptors (owner_map.c) */
	unsigned int bad_desc_limit; /* kill an NF past it; 0: never */
	unsigned int stall_ms;
	unsigned int idle_sleep_us;
	unsigned int stats_interval_s;
	unsigned int flow_capacity; /* exact flow rules */
	unsigned int flow_idle_s;   /* exact rules expire; 0: never */
	unsigned int nf_flow_quota; /* exact rules an NF holds; 0: none;
				     * UINT_MAX: default (fdir.c) */
	unsigned int tenant_flow_quota; /* a tenant's, as nf_flow_quota */
	unsigned int nf_steer_rate; /* an NF's flow-rule requests a second;
				     * 0: none */
	unsigned int nf_pool_quota; /* shared-pool buffers an NF takes and
				     * keeps; 0: none; UINT_MAX: default
				     * (pool_acct.c) */
	unsigned int lb_idle_s;     /* LEAST_LOADED pins expire */
	bool fdir_rehash;           /* naive per-hop rehash (benchmark) */
	bool rx_timestamp;          /* RX timestamp offload where offered */
	bool rx_paused;
	bool rx_when_ready;         /* RX once --chain's services are up */
	bool print_schema;          /* --schema: print it and exit */
	bool print_subsystems;      /* --subsystems: their start-up order */
	bool check;                 /* --check: these options and the
				     * requests on stdin checked, nothing
				     * started (zn_cmd_check_requests) */
	bool clean;                 /* --clean: a dead manager's files of
				     * this instance removed (its hugepage
				     * files, runtime directory), then exit */
	/* --trust-group NAME[:BUFFERS] (mgr/trust/group.c) */
	struct zn_group_cfg {
		char name[ZN_NAME_LEN];
		unsigned int n_mbufs;
	} groups[ZN_MAX_GROUPS];
	unsigned int n_groups;
	/* --port-group P=NAME: port P receives into group NAME's pool
	 * (index + 1 into groups[]; 0: the shared pool) */
	unsigned int port_group[ZN_MAX_PORT_ARGS];
	char port_group_name[ZN_MAX_PORT_ARGS][ZN_NAME_LEN];
	/* --port-name P=NAME: port P's name (status, "port:NAME" in the
	 * CLI); "" none */
	char port_name[ZN_MAX_PORT_ARGS][ZN_NAME_LEN];
	/* --tenant NAME=GROUP[,services=LO-HI] and --slice (mgr/tenant/tenant.c) */
	struct zn_tenant_cfg {
		char name[ZN_NAME_LEN];
		char group_name[ZN_NAME_LEN];
		unsigned int group;      /* index + 1 into groups[] */
		uint16_t svc_lo, svc_hi; /* its service ids; 0, 0: none */
		int uid;                 /* its control socket's owner, -1:
					  * the manager's user */
		unsigned int cpu_pct;    /* its launched NFs' CPU time, % of
					  * one CPU; 0: no limit */
		unsigned int mem_mb;     /* their memory; 0: no limit */
	} tenants[ZN_MAX_TENANTS];
	unsigned int n_tenants;
	struct zn_slice_cfg {
		uint8_t kind;            /* enum zn_slice_kind (tenant.h) */
		uint8_t tenant;          /* index into tenants[] */
		uint16_t port;
		uint16_t vlan;
		uint8_t v6, plen;        /* prefix: IPv6?, length */
		uint8_t mac[6];
		uint8_t addr[16];        /* prefix, host bits zero */
		char tenant_name[ZN_NAME_LEN];
	} slices[ZN_MAX_SLICES];
	unsigned int n_slices;
	char huge_dir[PATH_MAX];
	char log_dir[PATH_MAX];     /* launched NFs' output; "": rundir/logs */
	unsigned int sandbox_uid_base; /* sandboxed group NFs' users from
					* here (sandbox_uid.c); 0: none */
	char cgroup_root[PATH_MAX]; /* launched NFs' cgroups; "": default */
	char log_level[64];
	int eal_argc;    /* extra EAL args after "--" */
	char **eal_argv;
};

/** One option. */
struct zn_opt {
	const char *name;  /* --NAME */
	char short_name;   /* -C too, or 0 */
	const char *arg;   /* its argument in --help ("N"); NULL: none */
	const char *help;  /* --help's text, lines split by "\n" */
	enum zn_opt_kind {
		ZN_OPT_FLAG,  /* sets the bool at `field` */
		ZN_OPT_UINT,  /* the unsigned int at `field`, min..max */
		ZN_OPT_PARSE, /* parse() */
	} kind;
	size_t field;      /* offsetof(struct zn_mgr_cfg, ...) */
	unsigned int min, max;
	/* the argument (NULL without one) into @p cfg: 0, or -EINVAL said
	 * on stderr ("PROG: --NAME ...") */
	int (*parse)(const char *prog, const char *arg,
		     struct zn_mgr_cfg *cfg);
};

/** Where option field @p f is in struct zn_mgr_cfg (struct zn_opt's
 *  `field`). */
#define ZN_CFG(f) offsetof(struct zn_mgr_cfg, f)

/** A subsystem's options. */
struct zn_opts {
	enum zn_subsys_order order; /* --help lists them in this order */
	const struct zn_opt *opt;
	unsigned int n;
	/* the defaults of its fields (before any option); NULL: zero */
	void (*defaults)(struct zn_mgr_cfg *cfg);
	/* once every option is read: what spans several (a port an option
	 * names exists, ...). 0, or -EINVAL said. NULL: none */
	int (*check)(const char *prog, struct zn_mgr_cfg *cfg);
};

void zn_opts_register(const struct zn_opts *o);

/** Register @p o (a static struct zn_opts) at load time. */
#define ZN_OPTIONS_REGISTER(o)                                                \
	static void __attribute__((constructor)) zn_opts_reg_##o(void)        \
	{                                                                     \
		zn_opts_register(&(o));                                       \
	}

/** @p arg as an unsigned number min..max into @p out; else -EINVAL, said
 *  ("PROG: OPT must be MIN..MAX, not 'ARG'"). */
int zn_opt_uint(const char *prog, const char *opt, const char *arg,
		uint64_t min, uint64_t max, unsigned int *out);
/** --OPT P=NAME (--port-name, --port-group): NAME into @p names[P], each
 *  port once; else -EINVAL, said. */
int zn_opt_port_name(const char *prog, const char *opt, const char *arg,
		     char (*names)[ZN_NAME_LEN]);

/** Parse the manager command line. @return 0, -ECANCELED (help shown)
 *  or -EINVAL (message printed). */
int zn_mgr_parse_args(struct zn_mgr_cfg *cfg, int argc, char **argv);
/** The options, described, subsystem by subsystem. */
void zn_mgr_usage(const char *prog, FILE *out);

#endif /* ZN_ARGS_H */
