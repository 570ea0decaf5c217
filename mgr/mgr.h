/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_MGR_H
#define ZN_MGR_H

/*
 * Manager-private state (process-local; shared state is in zn_shm.h).
 *
 * Threads:
 * - the control thread (EAL main lcore): options, ports, NF registry,
 *   control socket, NF liveness, signals. Sleeps in epoll.
 * - workers (EAL lcores 1..n): the data path (worker.c). RX and TX work
 *   can share a worker or be split (--rx-threads / --tx-threads).
 *
 * Workers read the routing state through one immutable snapshot (struct
 * zn_route) that the control thread replaces and reclaims with DPDK's
 * QSBR RCU: a worker reports a quiescent state between bursts and goes
 * offline while it sleeps.
 */

#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>
#include <rte_spinlock.h>

#include "../lib/shm/zn_shm.h"

/* ------------------------------------------------------------------ */
/* Configuration (args.c)                                              */

enum zn_ingress_policy {
	ZN_INGRESS_BACKPRESSURE = 0, /* hold; stop polling the port */
	ZN_INGRESS_DROP = 1,         /* drop what the first hop cannot take */
};

enum zn_hop_type {
	ZN_HOP_SERVICE = 1,
	ZN_HOP_PORT = 2,
	ZN_HOP_DROP = 3,
};

struct zn_hop {
	uint8_t type; /* enum zn_hop_type */
	uint16_t id;  /* service or port id */
};

#define ZN_MAX_PORT_ARGS ZN_MAX_PORTS
#define ZN_DEVARGS_LEN 512

struct zn_mgr_cfg {
	char instance[ZN_NAME_LEN];
	char devargs[ZN_MAX_PORT_ARGS][ZN_DEVARGS_LEN];
	unsigned int n_devargs;
	struct zn_hop chain[ZN_MAX_CHAIN_HOPS];
	unsigned int chain_len;
	unsigned int rx_threads;
	unsigned int tx_threads;
	cpu_set_t cpus;
	bool cpus_set;
	unsigned int pool_size;
	unsigned int ring_size;
	unsigned int mem_mb;
	enum zn_ingress_policy ingress;
	unsigned int stall_ms;
	unsigned int idle_sleep_us;
	unsigned int stats_interval_s;
	unsigned int flow_capacity; /* exact flow rules */
	unsigned int flow_idle_s;   /* exact rules expire; 0: never */
	unsigned int lb_idle_s;     /* LEAST_LOADED pins expire */
	bool fdir_rehash;           /* naive per-hop rehash (benchmark) */
	bool rx_timestamp;          /* RX timestamp offload where offered */
	bool rx_paused;
	bool rx_when_ready;         /* RX once --chain's services are up */
	char huge_dir[PATH_MAX];
	char log_level[64];
	int eal_argc;    /* extra EAL args after "--" */
	char **eal_argv;
};

/** Parse the manager command line. @return 0, -ECANCELED (help shown)
 *  or -EINVAL (message printed). */
int zn_mgr_parse_args(struct zn_mgr_cfg *cfg, int argc, char **argv);

/** Parse a chain "1,svc:2,port:0,drop". @return hop count or -EINVAL. */
int zn_chain_parse(const char *s, struct zn_hop *hops, unsigned int max,
		   char *err, size_t errlen);

/** Format one hop as "svc:1" / "port:0" / "drop". */
void zn_hop_format(const struct zn_hop *hop, char *buf, size_t len);

/** Parse one hop. @return 0 or -EINVAL. */
int zn_hop_parse(const char *s, struct zn_hop *hop);

/* ------------------------------------------------------------------ */
/* Routing snapshot (route.c): immutable once published.               */

/* Load balancing across the replicas of a service. */
enum zn_lb_mode {
	ZN_LB_HASH = 0,         /* flow affinity: bucket of the flow hash */
	ZN_LB_LEAST_LOADED = 1, /* new flows to the shortest RX ring, pinned */
	ZN_LB_WEIGHTED = 2,     /* like HASH, buckets in proportion to weights */
};

#define ZN_LB_BUCKETS 256          /* HASH/WEIGHTED: hash >> 24 */
#define ZN_LB_PIN_BITS 16          /* LEAST_LOADED: pins by hash >> 16 */
#define ZN_LB_PINS (1u << ZN_LB_PIN_BITS)

/* LEAST_LOADED pin table of one service: entry = epoch << 16 | (slot + 1),
 * 0 = free. Workers claim entries with a CAS (both directions of a flow
 * share the flow hash, hence the entry); an entry not refreshed for
 * idle_epochs epochs (seconds, advanced by the control thread) is free
 * again. Flows sharing the top 16 bits of their hash share a pin. */
struct zn_lb_pins {
	struct {
		uint64_t moved; /* writer: that worker */
	} w[ZN_MAX_WORKERS] __rte_cache_aligned;
	uint32_t pin[ZN_LB_PINS] __rte_cache_aligned;
};

struct zn_svc_entry {
	uint16_t n;                     /* running instances */
	uint8_t mode;                   /* enum zn_lb_mode */
	uint16_t inst[ZN_MAX_REPLICAS]; /* instance (slot) ids */
	uint16_t bucket[ZN_LB_BUCKETS]; /* HASH/WEIGHTED: slot per bucket */
	struct zn_lb_pins *pins;        /* LEAST_LOADED */
};

struct zn_chain {
	uint16_t len; /* 0: unused id */
	struct zn_hop hops[ZN_MAX_CHAIN_HOPS];
};

struct zn_ft;
struct rte_acl_ctx;

struct zn_route {
	uint64_t version;
	uint16_t n_ports;
	/* Flow director: chains by id (0: the default chain), wildcard rules
	 * (rte_acl, IPv4 and IPv6, rebuilt and republished on change) and
	 * the exact flow table (concurrent rte_hash, changed in place). */
	struct zn_chain chains[ZN_MAX_CHAINS];
	struct rte_acl_ctx *acl[2];     /* [0] IPv4, [1] IPv6; NULL: none */
	struct zn_ft *exact;
	bool rehash_every_hop;          /* naive mode (benchmark baseline) */
	uint16_t lb_epoch_idle;         /* LEAST_LOADED pin idle epochs */
	struct zn_svc_entry svc[ZN_MAX_SERVICES];
	uint16_t nf_svc[ZN_MAX_NFS];    /* service of a running NF, else 0 */
	uint16_t n_drain[ZN_MAX_WORKERS];
	uint16_t drain[ZN_MAX_WORKERS][ZN_MAX_NFS]; /* TX rings to drain */
};

/* Where a packet goes, decided once and kept while it waits in a stage.
 * Applying it to the packet's metadata is idempotent, so a delivery that
 * only partly succeeds can be retried. */
enum zn_res_type {
	ZN_RES_NF = 1,
	ZN_RES_PORT = 2,
	ZN_RES_DROP = 3,
};

struct zn_res {
	uint8_t type;  /* enum zn_res_type */
	uint8_t pos;   /* NF: chain position the packet is at there */
	uint8_t hops;  /* NF: hop count the packet will have there */
	uint8_t reason; /* DROP: enum zn_drop_reason */
	uint16_t svc;  /* NF: service (to re-pick an instance) */
	uint16_t id;   /* NF: instance; PORT: port */
};

/* ------------------------------------------------------------------ */
/* Ports (port.c)                                                      */

struct zn_port {
	uint16_t port_id;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	bool rss;
	bool started;
	char name[RTE_ETH_NAME_MAX_LEN];
	char devargs[ZN_DEVARGS_LEN];
	char driver[64];
	rte_spinlock_t txq_lock[ZN_MAX_WORKERS]; /* used if txq shared */
	bool txq_shared;
};

/* ------------------------------------------------------------------ */
/* Workers (worker.c)                                                  */

#define ZN_STAGE_SZ (2 * ZN_BURST)
#define ZN_TXBUF_SZ (2 * ZN_BURST)
#define ZN_MAX_RXQ_PER_WORKER 64

/* Packets taken from one source (an NF's TX ring or a port queue), in
 * order, not yet delivered: head-of-line order keeps flows in order. */
struct zn_stage {
	uint16_t head;
	uint16_t tail;
	bool uniform;           /* res[0] applies to every packet */
	uint64_t blocked_since; /* tsc of the first failed delivery, or 0 */
	struct rte_mbuf *pkts[ZN_STAGE_SZ];
	struct zn_res res[ZN_STAGE_SZ];
};

struct zn_txbuf {
	uint16_t n;
	uint64_t blocked_since;
	struct rte_mbuf *pkts[ZN_TXBUF_SZ];
};

struct zn_rxq {
	uint16_t port;
	uint16_t queue;
	struct zn_stage stage;
};

struct zn_mgr;

struct zn_worker {
	unsigned int id;
	unsigned int lcore;
	bool rx_role;
	bool tx_role;
	struct zn_mgr *mgr;
	struct zn_worker_shm *shm;
	unsigned int n_rxq;
	struct zn_rxq rxq[ZN_MAX_RXQ_PER_WORKER];
	uint16_t txq[ZN_MAX_PORTS];           /* TX queue id per port */
	struct zn_txbuf txbuf[ZN_MAX_PORTS];
	struct zn_stage nf_stage[ZN_MAX_NFS]; /* per drained NF */
	uint64_t stall_cycles; /* 0: never drop stalled packets */
	uint64_t now;          /* tsc at the top of the loop */
	uint64_t now_ns;       /* wall clock, set when the fdir needs it */
	unsigned int lb_rr;    /* LEAST_LOADED tie-breaking */
	/* LEAST_LOADED: flows this worker pinned to each slot lately, halved
	 * every lb_decay_cycles; each counts as one queued packet. */
	uint64_t lb_decay_cycles;
	uint64_t lb_decay_at;
	uint32_t lb_fresh[ZN_MAX_NFS];
};

int zn_worker_main(void *arg);

/** Decide where a packet goes. Does not change the packet; may pin its
 *  flow to a replica (LEAST_LOADED). @p w may be NULL (tests): then
 *  LEAST_LOADED services balance by hash. */
struct zn_res zn_route_resolve(struct zn_worker *w, const struct zn_route *rt,
			       struct rte_mbuf *m);

/* ------------------------------------------------------------------ */
/* NF registry (registry.c), control-thread only.                      */

struct zn_nf_reg {
	int pidfd;
	bool pending;          /* REGISTER waiting for the slot to be free */
	uint32_t pending_gen;
	bool stop_sent;        /* ctl.stop set */
	uint64_t stop_asked_ns; /* when; 0 once the slow stop was logged */
	int reclaim_lock;      /* the slot's lock file, held while the slot
				* is reclaimed (-1: not held) */
};

/* ------------------------------------------------------------------ */
/* The manager                                                         */

struct zn_mgr {
	struct zn_mgr_cfg cfg;
	pid_t pid;
	uint64_t start_ns;

	struct zn_shm *shm;
	struct rte_mempool *pool;
	struct rte_ring *msgq;
	struct rte_ring *nf_rx[ZN_MAX_NFS];
	struct rte_ring *nf_tx[ZN_MAX_NFS];

	struct zn_port ports[ZN_MAX_PORTS];
	uint16_t n_ports;

	/* Routing: the live snapshot (workers), and what it is built from
	 * (control thread; cfg_lock also held by telemetry readers). */
	struct zn_route *route;       /* published: read by workers */
	struct zn_route *route_spare; /* the next to publish (route.c) */
	struct rte_rcu_qsbr *qsbr;
	pthread_mutex_t cfg_lock;
	uint64_t route_version;
	struct zn_fdir *fdir;       /* rules and chains (fdir.c) */
	struct zn_lb *lb;           /* per-service balancing state (lb.c) */
	volatile uint32_t lb_epoch; /* seconds; LEAST_LOADED pin ageing */

	struct zn_worker *workers[ZN_MAX_WORKERS];
	unsigned int n_workers;
	volatile int rx_enabled; /* 0 during shutdown: stop polling ports */
	bool rx_waiting;         /* --rx-when-ready, not yet enabled */
	volatile int quit;       /* workers exit */

	struct zn_nf_reg reg[ZN_MAX_NFS];
	/* NFs that left: a process may still be in its EAL cleanup */
	struct {
		pid_t pid;
		uint64_t start;
	} exiting[ZN_MAX_NFS];

	/* control thread I/O (ctl.c) */
	int epfd;
	int sigfd;
	int ctl_fd;
	int kick_fd;
	int lock_fd;
	bool shutdown_requested;
	char rundir[PATH_MAX];
	char huge_dir[PATH_MAX];
	uint64_t ctl_requests;
	uint64_t ctl_errors;
};

/* instance.c: instance lock, stale state, cleanup */
int zn_instance_acquire(struct zn_mgr *m);
void zn_instance_set_ready(struct zn_mgr *m);
void zn_instance_release(struct zn_mgr *m);
/** --rx-when-ready: enable port RX once every service of --chain has a
 *  running NF (once; rx.set decides from then on). Control thread. */
void zn_registry_rx_when_ready(struct zn_mgr *m);
/** NF @p slot is starting or running, of service @p svc. */
bool zn_registry_serves(struct zn_mgr *m, unsigned int slot, uint16_t svc);
/** Unlink the files of @p dir whose name @p match accepts. @return count */
unsigned int zn_unlink_matching(const char *dir,
				bool (*match)(const char *name, const void *arg),
				const void *arg);
int zn_find_huge_dir(char *buf, size_t len);

/* port.c */
int zn_ports_init(struct zn_mgr *m);
void zn_ports_close(struct zn_mgr *m);
/* port_private.c: secondaries never probe the manager's ports. _early()
 * before rte_eal_init(), _late() after it; scans_refused counts the
 * secondaries' scans answered with no device. */
void zn_ports_private_early(void);
int zn_ports_private_late(void);
uint64_t zn_ports_scans_refused(void);

/* route.c */
int zn_route_init(struct zn_mgr *m);
/** Rebuild the snapshot from the registry and chain, publish it and wait
 *  until no worker can still see the old one. Control thread only. */
void zn_route_publish(struct zn_mgr *m);
void zn_route_fini(struct zn_mgr *m);

/* fdir.c: flow director rules (control thread) */
int zn_fdir_init(struct zn_mgr *m);
void zn_fdir_fini(struct zn_mgr *m);
/** Fill the snapshot's flow-director part (chains, ACL, exact table). */
void zn_fdir_fill(struct zn_mgr *m, struct zn_route *rt);
/** Default chain (chain 0): set (validated, published) or read. */
int zn_chain_set(struct zn_mgr *m, const struct zn_hop *hops,
		 unsigned int n, char *err, size_t errlen);
unsigned int zn_chain_get(struct zn_mgr *m, struct zn_hop *hops);
/** Periodic work: expire idle exact rules. */
void zn_fdir_tick(struct zn_mgr *m, uint64_t now_ns);
/** Handle an NF's steering request (ZN_MSG_STEER). @return 0 or -errno */
int zn_fdir_steer(struct zn_mgr *m, unsigned int slot);
/** Classify packets entering from a port: set each one's chain id. */
void zn_fdir_classify(struct zn_worker *w, const struct zn_route *rt,
		      struct rte_mbuf **pkts, unsigned int n);

/* lb.c: per-service load balancing (control thread) */
int zn_lb_init(struct zn_mgr *m);
void zn_lb_fini(struct zn_mgr *m);
/** Fill rt->svc[] from the running NFs, keeping flows where they are. */
void zn_lb_fill(struct zn_mgr *m, struct zn_route *rt);
/** Set a service's mode and weights (weights[slot], 0: default 1). */
int zn_lb_set(struct zn_mgr *m, uint16_t svc, enum zn_lb_mode mode,
	      const uint16_t *weights, char *err, size_t errlen);
void zn_lb_tick(struct zn_mgr *m);
struct json_t *zn_lb_json(struct zn_mgr *m, uint16_t svc);
const char *zn_lb_mode_name(unsigned int mode);
int zn_lb_mode_parse(const char *s);

/* registry.c */
int zn_registry_init(struct zn_mgr *m);
/** True while a process of an NF that left still runs. */
bool zn_registry_exiting(const struct zn_mgr *m);
void zn_registry_poll(struct zn_mgr *m);
void zn_registry_on_pidfd(struct zn_mgr *m, unsigned int slot);
int zn_registry_stop_nf(struct zn_mgr *m, unsigned int slot);
void zn_registry_stop_all(struct zn_mgr *m);
unsigned int zn_registry_active(const struct zn_mgr *m);
bool zn_pool_owns(const struct zn_mgr *m, const struct rte_mbuf *mb);

/* ctl.c: control thread event loop and control socket */
int zn_ctl_init(struct zn_mgr *m);
int zn_ctl_run(struct zn_mgr *m);
void zn_ctl_fini(struct zn_mgr *m);
int zn_ctl_watch_pidfd(struct zn_mgr *m, int fd, unsigned int slot);

/* stats.c: one JSON view, also served through DPDK telemetry */
struct json_t;
struct json_t *zn_stats_status(struct zn_mgr *m);
struct json_t *zn_stats_ports(struct zn_mgr *m);
struct json_t *zn_stats_nfs(struct zn_mgr *m);
struct json_t *zn_stats_services(struct zn_mgr *m);
struct json_t *zn_stats_all(struct zn_mgr *m);
struct json_t *zn_stats_fdir(struct zn_mgr *m);
struct json_t *zn_chain_json(struct zn_mgr *m);
struct json_t *zn_hops_json(const struct zn_hop *hops, unsigned int n);
int zn_telemetry_init(struct zn_mgr *m);
/** Control thread: build the view the telemetry thread waits for. */
void zn_telemetry_serve(struct zn_mgr *m);
const char *zn_nf_state_name(uint32_t state);

#endif /* ZN_MGR_H */
