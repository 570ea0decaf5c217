/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZERONF_NF_H
#define ZERONF_NF_H

/**
 * @file
 * libzeronf: the life of a network function.
 *
 * An NF is a DPDK secondary process attached to one manager instance. It
 * describes itself with one struct zn_nf_ops and one ZN_NF_REGISTER() line;
 * the library parses the command line, joins the manager, registers the NF's
 * service, calls ops->burst once per burst of packets, sleeps when idle and
 * leaves cleanly on SIGINT/SIGTERM, on a stop from the manager, or when the
 * manager dies.
 *
 * Error convention: functions returning int return 0 (or a count) on success
 * and a negative errno value on failure. The library never exits the process
 * and never installs signal handlers except in zn_nf_main().
 *
 * Command line of an NF built with ZN_NF_REGISTER():
 *
 *     my-nf [library options] [-- NF options]
 *
 * Exit status of zn_nf_main(): 0 after a clean stop, 1 on an error, 2 on a
 * usage error (an option the library or the NF rejected, also from
 * ops->init with -EINVAL), 3 when the manager is gone.
 *
 * Library options: --instance/-i NAME (manager instance, default "zeronf" or
 * $ZERONF_INSTANCE), --service/-s ID, --name/-n NAME, --cpus LIST,
 * --log-level LEVEL, --wait SECONDS (wait for the manager to appear),
 * --help/-h. Everything after "--" goes to ops->parse_args.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <rte_mbuf.h>

#include <zeronf/flow.h>
#include <zeronf/pkt.h>
#include <zeronf/step.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Version of the NF <-> manager contract (lib/shm/zn_shm.h); an NF
 *  refuses a manager whose ABI version differs. Overridable only so that
 *  tests can build a deliberately incompatible library. */
#ifndef ZN_ABI_VERSION
#define ZN_ABI_VERSION 20
#endif

/** Most packets the library hands to ops->burst at once. */
#define ZN_BURST 128u

/** Opaque handle of a running NF. */
struct zn_nf;

/**
 * What an NF is. Only name and burst are required. Set .sz to
 * sizeof(struct zn_nf_ops) (ZN_NF_OPS_INIT does) so that fields added later
 * do not break NFs built against an older header.
 */
struct zn_nf_ops {
	size_t sz;
	/** Default NF name (also the program name in messages). */
	const char *name;
	/** Service ID used when --service is not given (0: required). */
	uint16_t default_service;
	/** Parse NF options (those after "--"). argv[0] is the program name.
	 *  Return 0 or -errno (the NF then exits with a usage message). */
	int (*parse_args)(struct zn_nf *nf, int argc, char **argv);
	/** Print NF options for --help. */
	void (*usage)(FILE *out);
	/** Called once registered, before the manager sends the NF packets:
	 *  the NF joins its service when init returns 0. 0 or -errno. */
	int (*init)(struct zn_nf *nf);
	/** Called once per burst: set an action on each packet. */
	void (*burst)(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n);
	/** Called about every 100 ms, busy or idle (optional). */
	void (*tick)(struct zn_nf *nf, uint64_t now_ns);
	/** Called after the last burst (optional). */
	void (*fini)(struct zn_nf *nf);
	/** Generators (optional): called on every turn of the packet loop,
	 *  busy or idle, with the TSC (rte_rdtsc()); it may make and send
	 *  packets (zn_nf_send). Returns the TSC at which it next has work,
	 *  or 0 for none planned: an idle NF does not sleep past it (it spins
	 *  or yields when that is under 50 us away). As OpenNetVM's
	 *  callback handler, for packet generators. */
	uint64_t (*poll)(struct zn_nf *nf, uint64_t now_tsc);
};

/** Defines main() for an NF described by @p ops, and zn_nf_module_ops(),
 *  by which zeronf-bundle finds @p ops in the NF built as a shared module
 *  (include/zeronf/bundle.h). */
#define ZN_NF_REGISTER(ops)                                                   \
	__attribute__((visibility("default")))                                \
	const struct zn_nf_ops *zn_nf_module_ops(void)                        \
	{                                                                     \
		return &(ops);                                                \
	}                                                                     \
	int main(int argc, char **argv)                                       \
	{                                                                     \
		return zn_nf_main(argc, argv, &(ops));                        \
	}

/**
 * Whole life of an NF: zn_nf_open(), SIGINT/SIGTERM handlers that call
 * zn_nf_stop(), zn_nf_run(), zn_nf_close(). Returns a process exit status:
 * 0 after a clean stop, 1 on error, 2 on a usage error, 3 when the manager
 * is gone.
 */
int zn_nf_main(int argc, char **argv, const struct zn_nf_ops *ops);

/**
 * Join the manager and register the NF. Parses the library options of
 * argv and passes what follows "--" to ops->parse_args.
 *
 * @return 0 and *nfp set, or
 *   -EINVAL bad option (a message was printed), -ENOTCONN no live manager
 *   instance, -EPROTO manager not compatible (ABI, layout, DPDK version,
 *   mempool ops), -EBUSY no free NF slot, -ETIMEDOUT manager did not answer,
 *   -ENOMEM, or another -errno from the EAL.
 */
int zn_nf_open(int argc, char **argv, const struct zn_nf_ops *ops,
	       struct zn_nf **nfp);

/**
 * Run the packet loop until the NF is stopped.
 * @return 0 after a clean stop (all received packets were handed back),
 *   -ENOTCONN if the manager died, -ETIMEDOUT if it did not acknowledge a
 *   stop request.
 */
int zn_nf_run(struct zn_nf *nf);

/** Ask the NF to stop. Async-signal-safe; zn_nf_run() then returns once
 *  the manager has stopped sending packets and the NF has drained them. */
void zn_nf_stop(struct zn_nf *nf);

/** Leave the manager and release the NF slot. The EAL stays initialised
 *  (it cannot be initialised twice in a process): call it when done,
 *  typically just before exiting. Buffers the NF allocated from the
 *  shared pool and still keeps (not freed, not sent) are put back by the
 *  manager: do not use them afterwards. */
void zn_nf_close(struct zn_nf *nf);

/**
 * Send packets the NF made itself (for example with
 * rte_pktmbuf_alloc(zn_nf_pktmbuf_pool(nf))). Their metadata must be set
 * (zn_pkt_meta_init() then an action). Blocks while the NF's TX ring is
 * full. Only from the thread running zn_nf_run() or from ops->init.
 * @return number sent (n), or -ENOTCONN if the manager died meanwhile.
 */
int zn_nf_send(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n);

/** DPDK objects an NF can leave to the manager (zn_nf_obj_track). */
enum zn_nf_obj_type {
	ZN_NF_OBJ_HASH = 1,   /* rte_hash: rte_hash_free */
	ZN_NF_OBJ_LPM = 2,    /* rte_lpm: rte_lpm_free */
	ZN_NF_OBJ_LPM6 = 3,   /* rte_lpm6: rte_lpm6_free */
	ZN_NF_OBJ_RING = 4,   /* rte_ring: rte_ring_free */
	ZN_NF_OBJ_MEMZONE = 5, /* rte_memzone: rte_memzone_free */
	ZN_NF_OBJ_FT = 6,     /* zn_ft: zn_ft_free (tracked by zn_ft_create) */
	ZN_NF_OBJ_FIB = 7,    /* rte_fib: rte_fib_free */
	ZN_NF_OBJ_FIB6 = 8,   /* rte_fib6: rte_fib6_free */
	ZN_NF_OBJ_ACL = 9,    /* rte_acl_ctx: rte_acl_free */
};

/**
 * What an NF makes in DPDK's shared memory (tables, rings) outlives its
 * process: if the NF dies, or leaves without freeing it, it is lost to
 * every later NF. Tracked objects are freed by the manager once the NF
 * died or left (after ops->fini): untrack an object before freeing it
 * yourself, and do not use a tracked object after zn_nf_close().
 * Flow tables (zn_ft_create) made in an NF are tracked already. The
 * manager finds the object by @p name and frees it only if it is still
 * at @p obj. A crash between creating an object and tracking it leaks it.
 * From one thread at a time (the NF's: init, tick, burst).
 * @return 0, -EINVAL (type, name longer than 31 bytes, NULL obj),
 *   -ENOSPC (16 tracked), -ENOENT (untrack: not tracked).
 */
int zn_nf_obj_track(struct zn_nf *nf, enum zn_nf_obj_type type,
		    const char *name, const void *obj);
int zn_nf_obj_untrack(struct zn_nf *nf, const void *obj);

/**
 * Register an NF counter, served with the NF's stats (ctl "nf.list",
 * telemetry /zeronf/nf). Only from ops->init or before.
 * @return counter index (>= 0), or -ENOSPC, -EINVAL.
 */
int zn_nf_counter_register(struct zn_nf *nf, const char *name);

/** Add @p v to NF counter @p idx (hot path, no checks beyond the index). */
void zn_nf_counter_add(struct zn_nf *nf, int idx, uint64_t v);

/**
 * A command the NF serves, called through the manager's control method
 * nf.call {"instance": N, "command": NAME, "args": {...}}. @p args is the
 * call's args as JSON text ("{}" when it had none). The handler writes
 * the result, JSON text, into @p reply (at most @p len bytes with the
 * NUL; an empty reply is the result {}), or returns -errno with a
 * one-line message in @p reply. It runs on the NF's packet thread
 * between two bursts, so it may change what ops->burst reads without
 * locks; a call that takes long holds the NF's packets meanwhile.
 */
typedef int (*zn_nf_cmd_fn)(struct zn_nf *nf, const char *args, char *reply,
			    size_t len);

/**
 * Serve command @p name (1..31 characters of [a-z0-9._-]) with @p fn.
 * Only from ops->init or before.
 * @return 0, -EINVAL (name), -EEXIST, -ENOSPC (16 commands).
 */
int zn_nf_cmd_register(struct zn_nf *nf, const char *name, zn_nf_cmd_fn fn);

/** zn_nf_flow_steer() / zn_nf_flow_unsteer(): the reverse direction too. */
#define ZN_STEER_F_BOTH 0x1
/** zn_nf_flow_steer(): the rule outlives the NF (else the manager removes
 *  an NF's rules when it exits or dies). Rules kept so by all NFs together
 *  are bounded by the manager's --nf-flow-quota. */
#define ZN_STEER_F_KEEP 0x2

/**
 * Steer a flow: install an exact flow-director rule sending packets of
 * @p key (and, with ZN_STEER_F_BOTH, of its reverse) along @p steps.
 * Synchronous: when it returns 0 the rule is in force for every packet of
 * the flow that enters the manager from a port afterwards (packets already
 * past ingress keep the chain they had). Replaces an existing rule of the
 * same key. Blocks for a manager round trip (tens of microseconds): call
 * it once per flow, not per packet. Exact rules expire after the
 * manager's --flow-idle-s of no traffic, and go when the NF does unless
 * ZN_STEER_F_KEEP. An NF holds at most --nf-flow-quota rules (a
 * direction counts one), a tenant's NFs and socket together at most
 * --tenant-flow-quota. An NF's requests (steer and unsteer) are served
 * at most --nf-steer-rate a second on average (a second's worth at once).
 * @return 0, -EINVAL (bad step or count 1..ZN_MAX_CHAIN_STEPS), -ENOSPC
 *   (flow table or chain table full), -EDQUOT (a quota), -EBUSY (over
 *   its rate: try again later), -ETIMEDOUT, -ENOTCONN.
 */
int zn_nf_flow_steer(struct zn_nf *nf, const struct zn_flow_key *key,
		     const struct zn_step *steps, unsigned int n,
		     unsigned int flags);

/** Remove the rule of @p key (and its reverse with ZN_STEER_F_BOTH).
 *  @return 0, -ENOENT (no rule), -EBUSY (over its rate), -ETIMEDOUT,
 *  -ENOTCONN. */
int zn_nf_flow_unsteer(struct zn_nf *nf, const struct zn_flow_key *key,
		       unsigned int flags);

/**
 * True once the manager is shutting down. An NF's ops->fini may then skip
 * freeing hugepage memory (rte_free, zn_ft_free): the manager's memory
 * goes away with it. When the manager keeps running, free it (or leave
 * tracked objects to the manager, zn_nf_obj_track). Frees are cheap: the
 * manager reserves all its memory at start, so none unmaps pages.
 */
bool zn_nf_manager_stopping(const struct zn_nf *nf);

/** NF private data pointer, for the NF's own state. */
void *zn_nf_priv(const struct zn_nf *nf);
void zn_nf_set_priv(struct zn_nf *nf, void *priv);

uint16_t zn_nf_instance_id(const struct zn_nf *nf);
uint16_t zn_nf_service_id(const struct zn_nf *nf);
const char *zn_nf_name(const struct zn_nf *nf);
/** The pool NFs create packets from: the trust group's when the NF is in
 *  one (zn_nf_group_pool), else the shared one. From it an NF may
 *  allocate and keep at most the manager's --nf-pool-quota
 *  buffers (allocations past it fail as on an empty pool; nf.list's
 *  pool_held and pool_refused); what it sends or frees no longer counts,
 *  and what it keeps when it dies or leaves is put back. */
struct rte_mempool *zn_nf_pktmbuf_pool(const struct zn_nf *nf);
/** The pool of the NF's trust group (--trust-group NAME): buffers only
 *  the group's NFs map; NULL when the NF is in none. */
struct rte_mempool *zn_nf_group_pool(const struct zn_nf *nf);
/** Number of ports the manager owns. */
uint16_t zn_nf_port_count(const struct zn_nf *nf);
/** MAC address of the manager's port @p port. 0 or -ENODEV. */
int zn_nf_port_mac(const struct zn_nf *nf, uint16_t port, uint8_t mac[6]);

#ifdef __cplusplus
}
#endif

#endif /* ZERONF_NF_H */
