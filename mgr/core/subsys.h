/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_SUBSYS_H
#define ZN_SUBSYS_H

/*
 * The manager's start-up and teardown (subsys.c). Each subsystem registers
 * its own init and teardown with ZN_SUBSYS_REGISTER next to its code
 * (VPP's VLIB_INIT_FUNCTION, as commands register with cmd.h); main.c runs
 * the inits in the order of enum zn_subsys_order, the one place that order
 * is written, and at exit, or when an init fails, the teardowns of every
 * subsystem it began, the failing one included, in reverse. So a teardown
 * copes with whatever its init left: done, half done, or not begun (the
 * manager starts zeroed, its lock fd -1).
 */

#include <stdbool.h>

struct zn_mgr;

/** Start-up order: each subsystem after those it uses. */
enum zn_subsys_order {
	ZN_SUBSYS_INSTANCE,     /* core/instance.c: the lock, stale state */
	ZN_SUBSYS_LOOP,         /* core/main.c: the event loop */
	ZN_SUBSYS_EAL,          /* core/main.c: DPDK's EAL, lcores */
	ZN_SUBSYS_PRIVATE_HEAP, /* trust/private_heap.c */
	ZN_SUBSYS_NF_RECS,      /* nf/nf_rec.c: the NF slots' records */
	ZN_SUBSYS_SHARED,       /* core/main.c: zn_shm, the pool, msgq */
	ZN_SUBSYS_GROUPS,       /* trust/group.c: trust groups */
	ZN_SUBSYS_TENANTS,      /* tenant/tenant.c */
	ZN_SUBSYS_OWNER_MAPS,   /* trust/owner_map.c (--validate) */
	ZN_SUBSYS_POOL_ACCT,    /* nf/pool_acct.c */
	ZN_SUBSYS_PORTS,        /* port/port.c */
	ZN_SUBSYS_WORKERS,      /* core/main.c: made, not started */
	ZN_SUBSYS_SIGNALS,      /* core/main.c */
	ZN_SUBSYS_REGISTRY,     /* nf/registry.c */
	ZN_SUBSYS_LINKS,        /* nf/link.c */
	ZN_SUBSYS_RING_GUARDS,  /* trust/ring_guard.c */
	ZN_SUBSYS_HOMES,        /* trust/group_home.c */
	ZN_SUBSYS_POLICE,       /* trust/police.c (--validate) */
	ZN_SUBSYS_ROUTE,        /* flow/route.c: the routing snapshot */
	ZN_SUBSYS_FABRIC,       /* fabric/fabric.c: chains across hosts */
	ZN_SUBSYS_FDIR,         /* flow/fdir.c */
	ZN_SUBSYS_LB,           /* flow/lb.c */
	ZN_SUBSYS_OFT,          /* sdn/oft.c: the OpenFlow table */
	ZN_SUBSYS_NF_RXQ,       /* port/port_nfrx.c: who polls the RX queues
				 * NFs may own (a snapshot source, after
				 * every other) */
	ZN_SUBSYS_OFT_IO,       /* sdn/oft_io.c: its packet-in, packet-out */
	ZN_SUBSYS_OFP,          /* sdn/ofp.c: the OpenFlow endpoint */
	ZN_SUBSYS_CTL,          /* core/ctl.c: the control socket */
	ZN_SUBSYS_LAUNCH,       /* nf/launch.c */
	ZN_SUBSYS_POLICY,       /* nf/policy.c */
	ZN_SUBSYS_STATS,        /* telemetry/stats.c */
	ZN_SUBSYS_TELEMETRY,    /* telemetry/telemetry.c */
	ZN_SUBSYS_RUN,          /* core/main.c: workers started, ready; its
				 * teardown stops NFs, workers and ports */
	ZN_SUBSYS_COUNT
};

struct zn_subsys {
	const char *name;
	enum zn_subsys_order order;
	int (*init)(struct zn_mgr *m);  /* 0 or -errno, logged by it */
	void (*fini)(struct zn_mgr *m); /* NULL: nothing to undo */
};

void zn_subsys_register(const struct zn_subsys *s);

/** Register subsystem @p s (a static struct zn_subsys) at load time. */
#define ZN_SUBSYS_REGISTER(s)                                                 \
	static void __attribute__((constructor)) zn_subsys_reg_##s(void)      \
	{                                                                     \
		zn_subsys_register(&(s));                                     \
	}

/** Run every init in order. On a failure: the teardowns of those begun,
 *  in reverse; the failing subsystem's name in *@p failed. With @p fail_at
 *  (a test's: ZN_MGR_FAIL_AT), start-up fails at that subsystem as if its
 *  init had (-ECANCELED). 0 or -errno; -EINVAL: @p fail_at names none. */
int zn_subsys_start(struct zn_mgr *m, const char *fail_at,
		    const char **failed);
/** The teardowns of every subsystem started, in reverse. */
void zn_subsys_stop(struct zn_mgr *m);
/** The subsystems' names in start-up order, one a line (--subsystems). */
void zn_subsys_print(void);

#endif /* ZN_SUBSYS_H */
