/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_SHM_H
#define ZN_SHM_H

/**
 * @file
 * The shared-memory contract between the manager and its NFs: the ONLY
 * definition of every structure that more than one process reads. Long:
 * the whole contract in one header, by design.
 *
 * Rules, checked by review and by tests/unit/test_misc.c (shm_layout):
 * - every cache line has one named writer, written next to it ("writer:");
 *   the one exception is the futex word of a doorbell, which any waker
 *   updates with an atomic read-modify-write;
 * - no process-private pointer is stored here. mbuf pointers are fine:
 *   DPDK maps hugepage memory at the same address in every process;
 * - rings, the packet pool and this zone are found by name (ZN_*_NAME), in
 *   the namespace of one manager instance (its EAL --file-prefix);
 * - changing any layout here bumps ZN_ABI_VERSION (include/zeronf/nf.h),
 *   and an NF refuses a manager whose ABI version or layout size differs.
 */

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <rte_common.h>
#include <rte_config.h>

#include <zeronf/flow.h>
#include <zeronf/nf.h>
#include <zeronf/step.h>

#define ZN_SHM_MAGIC 0x31304e466f72655aULL /* "ZeroNF01" */

#define ZN_SHM_NAME "zn_shm"
#define ZN_POOL_NAME "zn_pktmbuf_pool"
#define ZN_MSG_RING_NAME "zn_msg"
#define ZN_NF_RX_RING_FMT "zn_nf%u_rx"
#define ZN_NF_TX_RING_FMT "zn_nf%u_tx"
/* Rings in a trust group's file (struct zn_group_home): group index, slot */
#define ZN_HOME_RX_RING_FMT "zn_g%u_nf%u_rx"
#define ZN_HOME_TX_RING_FMT "zn_g%u_nf%u_tx"
#define ZN_HOME_LINK_RING_FMT "zn_g%u_link%u"
#define ZN_LINK_RING_FMT "zn_link%u"    /* in the EAL's memory, by link id */

#define ZN_NAME_LEN 32
#define ZN_BUILD_ID_LEN 64
#define ZN_MAX_NFS 96
/** Manager threads use EAL lcores below this; the NF in slot s runs as
 *  lcore ZN_NF_LCORE_BASE + s, so that no two processes ever share an
 *  lcore id (the mempool's per-lcore caches live in shared memory). */
#define ZN_NF_LCORE_BASE 24
#define ZN_MAX_WORKERS 16
#define ZN_MAX_SERVICES 256 /* service ids 1..255 */
#define ZN_MAX_REPLICAS 16
/* ZN_MAX_CHAIN_STEPS (32): public, in zeronf/step.h */
#define ZN_MAX_CHAINS 256 /* chain ids 0..255 (0: the default chain) */
#define ZN_SPI_MAP_SLOTS 512 /* twice the chains: probes stay short */

/** Where service path @p spi's probe starts in zn_route.spi_map
 *  (Fibonacci hashing; the map is open-addressed, linear probing). */
static inline unsigned int
zn_spi_slot(uint32_t spi)
{
	return (unsigned int)((spi * 2654435769u) >> 23) &
	       (ZN_SPI_MAP_SLOTS - 1);
}
#define ZN_MAX_PORTS RTE_MAX_ETHPORTS
#define ZN_NF_MAX_COUNTERS 16
#define ZN_COUNTER_NAME_LEN 24
#define ZN_NF_MAX_OBJS 16      /* DPDK objects an NF leaves to the manager */
#define ZN_OBJ_NAME_LEN 32     /* RTE_MEMZONE_NAMESIZE, RTE_HASH_NAMESIZE */
#define ZN_NF_MAX_CMDS 16      /* commands an NF serves (nf.call) */
#define ZN_CMD_NAME_LEN 32
#define ZN_CMD_TEXT_LEN 8192   /* a command's args, its reply: JSON text */
/* NF -> NF links (zn_link.h): single-producer single-consumer rings from
 * one NF to another, made from a pool at start and given on demand. */
#define ZN_MAX_LINKS 256
#define ZN_MAX_LINKS_IN 64     /* links into one NF */
#define ZN_PORT_NAME_LEN 64    /* RTE_ETH_NAME_MAX_LEN */
#define ZN_WAIT_TX_RING 0xffffffffu /* hstats.blocked_on */
#define ZN_PORT_SO_LEN 256
/* NFs that own port RX queues (mgr/port/port_nfrx.c): queues of one port
 * NFs may own, and queues one NF owns at most */
#define ZN_NF_RXQ_MAX 16
#define ZN_NF_RXQ_PER_NF 4
#define ZN_RXQ_WORKERS 0     /* zn_route.rxq_nf: the workers poll it */
#define ZN_RXQ_NOBODY 0xff   /* zn_route.rxq_nf: changing hands */
/* zn_shm_port.nf_rx_kind: how the driver's rx_burst gets its packets */
#define ZN_PORT_RX_ALLOC 1   /* allocated from the pool in the call */
#define ZN_PORT_RX_RING 2    /* dequeued from a single-consumer rte_ring
			      * named ZN_PORT_RX_RING_FMT (queue, device) */
#define ZN_PORT_RX_RING_FMT "ETH_RXTX%u_%s" /* DPDK 22.11 net_ring's */
/* Trust groups (mgr/trust/group.c): each group's packet pool lives in a
 * hugepage file of its own, mapped at a fixed address by the manager and
 * by the group's NFs only (an NF of another group has nothing there). */
#define ZN_MAX_GROUPS 16
#define ZN_GROUP_VA_BASE 0x500000000000ULL
#define ZN_GROUP_VA_STRIDE (64ULL << 30) /* the most one group may map */
#define ZN_GROUP_FILE_FMT "%stg_%u"       /* instance, group index */
#define ZN_GROUP_PATH_LEN 256
#define ZN_GROUP_HEAP_FMT "zn_heap_tg%u"  /* group index */
/* Tenants (mgr/tenant/tenant.c): a trust group each, with its slices of ports */
#define ZN_MAX_TENANTS ZN_MAX_GROUPS
/* Readers of the routing snapshot: workers 0..ZN_MAX_WORKERS-1, then the
 * packet thread of the NF in slot s (per-reader counters are indexed so).
 * Workers report to the manager's RCU variable, which also guards the
 * exact flow table; NFs to their own (zn_shm_route.qsbr, thread id = slot),
 * so that a dead NF never holds back the flow table's reclamation. */
#define ZN_READER_NF(s) (ZN_MAX_WORKERS + (s))
#define ZN_READERS (ZN_MAX_WORKERS + ZN_MAX_NFS)
/* A packet making more NF hops than this is in a routing loop. */
#define ZN_HOP_LIMIT 64

_Static_assert(ZN_NF_LCORE_BASE + ZN_MAX_NFS <= RTE_MAX_LCORE,
	       "NF lcores must fit in RTE_MAX_LCORE");
_Static_assert(ZN_MAX_PORTS <= 64, "an NF's req.tx_ports is a bit a port");
_Static_assert(ZN_MAX_WORKERS + 1 <= ZN_NF_LCORE_BASE,
	       "manager lcores must stay below the NF lcores");

/** Why a packet was dropped. Every drop is counted under one of these. */
enum zn_drop_reason {
	ZN_DROP_NF = 0,       /* an NF set ZN_ACT_DROP */
	ZN_DROP_CHAIN,        /* a chain hop is "drop" */
	ZN_DROP_CHAIN_END,    /* NEXT past the last hop of the chain */
	ZN_DROP_NO_INSTANCE,  /* the service has no running instance */
	ZN_DROP_BAD_ACTION,   /* unknown action, service or port */
	ZN_DROP_HOP_LIMIT,    /* too many hops: a routing loop */
	ZN_DROP_INGRESS_FULL, /* first hop full ("--ingress drop" policy) */
	ZN_DROP_STALLED,      /* destination made no progress for stall_ms */
	ZN_DROP_NF_EXIT,      /* held by / queued for an NF that died */
	ZN_DROP_SHUTDOWN,     /* in flight when the manager shut down */
	ZN_DROP_BAD_DESC,     /* an NF handed back what is not a packet of
			       * its pool (mgr/trust/owner_map.c): not freed, counted */
	ZN_DROP_NO_TENANT,    /* from a sliced port: no tenant's slice
			       * matches it, or its tenant has no chain */
	ZN_DROP_CROSS_TENANT, /* an NF of one tenant sent it to another
			       * tenant's service or port (mgr/tenant/tenant.c) */
	ZN_DROP_SDN_NO_MATCH, /* the OpenFlow table is on and no entry
			       * matched it (mgr/sdn/oft.h) */
	ZN_DROP_SDN_PUNT,     /* for the controller: none is connected, or
			       * the packet-in queue is full */
	/* Chains across hosts (mgr/fabric/fabric.h, docs/multihost.md) */
	ZN_DROP_NSH_MALFORMED, /* a tunnel or NSH that does not parse, or
				* NSH not carrying Ethernet */
	ZN_DROP_NSH_NO_PATH,  /* NSH from no peer, for another host, of an
			       * unknown path, index 0 or an index past the
			       * path or not at a hop of this host; or a
			       * chain with hops elsewhere but no path */
	ZN_DROP_NSH_TTL,      /* NSH whose TTL ran out: a loop of hosts */
	ZN_DROP_NSH_MTU,      /* too large for its peer's MTU once
			       * encapsulated (or no headroom for it) */
	ZN_DROP_PEER_DOWN,    /* its next hop's host is no peer (not
			       * configured, or marked down), or no fabric */
	ZN_DROP_MAX
};

/** The counter name of drop reason @p r (NULL past ZN_DROP_MAX). */
static inline const char *
zn_drop_reason_name(unsigned int r)
{
	static const char *const names[ZN_DROP_MAX] = {
		[ZN_DROP_NF] = "nf",
		[ZN_DROP_CHAIN] = "chain",
		[ZN_DROP_CHAIN_END] = "chain_end",
		[ZN_DROP_NO_INSTANCE] = "no_instance",
		[ZN_DROP_BAD_ACTION] = "bad_action",
		[ZN_DROP_HOP_LIMIT] = "hop_limit",
		[ZN_DROP_INGRESS_FULL] = "ingress_full",
		[ZN_DROP_STALLED] = "stalled",
		[ZN_DROP_NF_EXIT] = "nf_exit",
		[ZN_DROP_SHUTDOWN] = "shutdown",
		[ZN_DROP_BAD_DESC] = "bad_descriptor",
		[ZN_DROP_NO_TENANT] = "no_tenant",
		[ZN_DROP_CROSS_TENANT] = "cross_tenant",
		[ZN_DROP_SDN_NO_MATCH] = "sdn_no_match",
		[ZN_DROP_SDN_PUNT] = "sdn_punt",
		[ZN_DROP_NSH_MALFORMED] = "nsh_malformed",
		[ZN_DROP_NSH_NO_PATH] = "nsh_no_path",
		[ZN_DROP_NSH_TTL] = "nsh_ttl",
		[ZN_DROP_NSH_MTU] = "nsh_mtu",
		[ZN_DROP_PEER_DOWN] = "peer_down",
	};

	return r < ZN_DROP_MAX ? names[r] : NULL;
}

/**
 * A doorbell: how a sleeping thread is woken by another process.
 * The sleeper announces itself in `sleeping`, re-checks its queues, then
 * futex-waits on `seq`; a producer, after publishing work, checks
 * `sleeping` and, if set, claims it (CAS 1->0), bumps `seq` and wakes. See
 * zn_doorbell.h for the protocol and why no wake-up is lost.
 */
struct zn_doorbell {
	/* writer: any waker (atomic RMW only) */
	uint32_t seq;
	uint32_t sleeping; /* set by the sleeper, cleared by sleeper or waker */
	/* writer: the sleeper */
	uint64_t sleeps __rte_cache_aligned;   /* times it went to sleep */
	uint64_t wakeups;  /* sleeps ended by a wake (not a timeout) */
} __rte_cache_aligned;

/* ---------------------------------------------------------------------- */
/* Header. writer: manager, before `ready` is set; read-only afterwards. */
struct zn_shm_hdr {
	uint64_t magic;
	uint32_t abi_version;
	uint32_t shm_size;       /* sizeof(struct zn_shm) */
	uint32_t slot_size;      /* sizeof(struct zn_nf_slot) */
	uint32_t max_nfs;
	char build_id[ZN_BUILD_ID_LEN];
	char dpdk_version[ZN_NAME_LEN * 2];
	char instance[ZN_NAME_LEN];
	char pool_name[ZN_NAME_LEN];
	char pool_ops[ZN_NAME_LEN]; /* mempool ops name, per-process index! */
	int32_t pool_ops_index;
	int32_t meta_offset;        /* zn_pkt_meta dynfield offset */
	uint32_t ring_size;
	uint32_t n_workers;
	uint16_t n_ports;
	uint16_t pad0;
	uint32_t mgr_pid;
	uint32_t stall_ms;          /* --stall-ms: NFs drop after it too */
	uint64_t mgr_start_time;    /* /proc/<pid>/stat starttime */
	uint8_t port_mac[ZN_MAX_PORTS][6]; /* by ZeroNF port index */
	/* Who took which buffer of the shared pool (mgr/nf/pool_acct.h): one
	 * byte per 2^acct_shift bytes of the pool's memory from acct_lo,
	 * acct_n of them, at acct_tags (EAL memory, the same address in
	 * every process; acct_tags 0: not kept), and where in each such
	 * window a buffer starts (acct_starts: acct_n uint16_t, 0xffff:
	 * none), so that an NF reads only buffers of the pool. */
	uint64_t acct_tags;
	uint64_t acct_starts;
	uint64_t acct_lo;
	uint32_t acct_n;
	uint32_t acct_shift;
} __rte_cache_aligned;

/* A trust group. writer: manager, at start; read-only after. */
struct zn_shm_group {
	uint32_t used;               /* 1: defined */
	uint32_t n_mbufs;            /* buffers of its pool */
	uint64_t va;                 /* where its file is mapped, everywhere */
	uint64_t len;                /* bytes mapped */
	uint64_t home_len;           /* of which the NFs' homes, first */
	uint64_t heap_len;           /* then the pool's own structures (an
				      * rte_malloc heap, ZN_GROUP_HEAP_FMT),
				      * then its buffers */
	uint64_t page_sz;
	char name[ZN_NAME_LEN];
	char pool[ZN_NAME_LEN];      /* its rte_mempool's name */
	char path[ZN_GROUP_PATH_LEN]; /* its hugepage file */
} __rte_cache_aligned;

/* Manager state. writer: manager control thread. */
struct zn_shm_mgr {
	uint32_t ready;     /* 1 once NFs may register */
	uint32_t stopping;  /* 1 once shutdown began: NFs must leave */
	uint32_t port_rx;   /* 1: ports are read (rx.set); NFs owning RX
			     * queues read them only then */
	uint32_t pad;
	uint64_t nf_registered;  /* registrations accepted */
	uint64_t nf_rejected;    /* registrations refused */
	uint64_t nf_exited;      /* NFs that left cleanly */
	uint64_t nf_died;        /* NFs found dead (crash, kill -9) */
	uint64_t reclaimed;      /* buffers recovered from dead NFs */
	uint64_t allocs_reclaimed; /* of those: buffers gone NFs allocated
				    * from the shared pool and kept */
	uint64_t objs_freed;     /* DPDK objects freed for gone NFs */
	uint64_t pool_ops_finished; /* ring operations of dead NFs
				     * finished (mgr/nf/pool_repair.c) */
	uint64_t drops[ZN_DROP_MAX]; /* drops counted by the control thread */
} __rte_cache_aligned;

/* Per-port counters of one worker. writer: that worker. */
struct zn_port_wstats {
	uint64_t rx;        /* packets received from the port */
	uint64_t tx;        /* packets transmitted on the port */
	uint64_t rx_paused; /* polls skipped: ingress backpressure */
	uint64_t tx_retry;  /* tx bursts that could not send everything */
	uint64_t drops[ZN_DROP_MAX]; /* drops of packets from this port's
				      * RX, before they reached an NF */
} __rte_cache_aligned;

/* One manager worker thread. */
struct zn_worker_shm {
	struct zn_doorbell db; /* the worker sleeps here; NFs ring it */
	/* writer: the worker */
	struct {
		uint64_t loops;
		uint64_t busy_loops;
		uint64_t routed;   /* packets moved from an NF or port */
		uint64_t stalls;   /* flushes that left packets staged */
		uint64_t fdir_exact; /* ingress packets: exact rule hit */
		uint64_t fdir_rule;  /* ingress packets: wildcard rule hit */
		uint64_t fdir_miss;  /* ingress packets: default chain */
		uint64_t lb_moved;   /* pinned flows moved off a replica */
		uint64_t drops[ZN_DROP_MAX];
		uint32_t online;   /* 1 while the worker runs */
		uint32_t long_yields; /* lib/common/zn_yield.h */
		/* Packets copied across a trust boundary (mgr/trust/group.c) into
		 * group g's pool ([g + 1]) or the shared one ([0]); the tsc
		 * it took; copies put off, the pool being empty. */
		uint64_t copied[ZN_MAX_GROUPS + 1];
		uint64_t copy_cycles;
		uint64_t copy_waits;
		/* Trust groups' packets sent to ports, and received by a
		 * group's port, as the manager's headers (mgr/trust/port_headers.h) */
		uint64_t shadowed;
		uint64_t shadow_rx;
	} stats __rte_cache_aligned;
	struct zn_port_wstats port[ZN_MAX_PORTS];
	/* Per tenant (mgr/tenant/tenant.c). writer: the worker. */
	struct zn_tenant_wstats {
		uint64_t rx;           /* packets its slices received */
		uint64_t rx_bytes;
		uint64_t ingress_full; /* of those, dropped: its first hop
					* was full (a sliced port never
					* waits for one tenant) */
		uint64_t no_chain;     /* dropped: it has no chain */
		uint64_t cross;        /* its NFs' packets dropped as
					* cross_tenant */
	} tenant[ZN_MAX_TENANTS] __rte_cache_aligned;
} __rte_cache_aligned;

enum zn_nf_state {
	ZN_NF_FREE = 0,    /* slot unused */
	ZN_NF_RUNNING,     /* registered, receives packets */
	ZN_NF_STOPPING,    /* leaving: no new packets, draining */
	ZN_NF_RECLAIMING,  /* gone: the manager recovers its buffers */
	ZN_NF_STARTING,    /* registered, running ops->init: its TX ring is
			    * drained, nothing is sent to it until READY */
};

/**
 * Ownership ledger of an NF's data path. writer: the NF's packet thread.
 * It records which packets the NF holds so that the manager can recover
 * every one of them, without double frees, whatever instant the NF dies at.
 * The commit points are the consumer tail of the ring it reads (its RX
 * ring or a link into it) and the producer tail of the ring it writes (its
 * TX ring or a link out of it). See zn_ledger.h.
 */
struct zn_ledger {
	uint32_t phase;     /* enum zn_ledger_phase */
	uint32_t held_n;    /* packets in held[] */
	uint32_t rx_expect; /* cons.tail of rx_ring once this burst is taken;
			     * from a port: the low half of ptx[port].rx
			     * before it (zn_ledger.h) */
	uint16_t rx_ring;   /* 0: the RX ring; l + 1: link l;
			     * ZN_LEDGER_RX_PORT: an RX queue of `port` */
	uint16_t port;      /* port of a run to a port, or of the RX queue
			     * the burst came from (zn_ledger.h) */
	uint16_t rx_queue;  /* that RX queue */
	uint16_t pad[3];
	/* TX: one word, so that a crash never sees half of it:
	 * base (bits 0-31): the producer tail of ring when off was written;
	 * ring (32-47): 0: the TX ring, l + 1: link l; off (48-63): held[]
	 * before off are handed over. Handed over: off + (tail - base). */
	uint64_t tx_pos;
	uint64_t port_tx0;  /* ptx[port].tx before that run: reclaim counts
			     * what the port took if the NF did not */
	struct rte_mbuf *held[ZN_BURST];
} __rte_cache_aligned;

/**
 * An NF's operation on its pool's free ring, in flight (lib/nf/
 * nf_pool_ring.c), as the manager needs it to finish it if the NF dies
 * in it (mgr/nf/pool_repair.c): a ring shared by several processes is
 * jammed by one that dies between claiming a range of it and committing
 * that range (the others wait for its tail for ever), and a dead NF's
 * cache flushed twice puts buffers in the pool twice.
 *   INTENT: it is about to claim [head, head + n) (a compare-and-swap
 *           from head), or just did;
 *   CLAIMED: [head, head + n) is its; committed once the side's tail
 *           passed head.
 * A put's objects: the top n of its lcore's cache (cache != 0: the
 * cache, len its length before; at commit it drops to len - n), else
 * objs[0, n). A get tags what it takes (as the NF's) before it commits.
 */
#define ZN_POOL_OP_MAX 64
enum zn_pool_op_step {
	ZN_POOL_OP_IDLE = 0,
	ZN_POOL_OP_INTENT,
	ZN_POOL_OP_CLAIMED,
};

struct zn_pool_op {
	uint32_t step;  /* enum zn_pool_op_step */
	uint32_t put;   /* 1: an enqueue, 0: a dequeue */
	uint32_t head;
	uint32_t n;
	uint64_t ring;  /* the pool's free ring (address) */
	uint64_t cache; /* a put from its cache: the cache (address) */
	uint32_t len;
	uint32_t pad;
	uint64_t objs[ZN_POOL_OP_MAX];
} __rte_cache_aligned;

/** One NF slot. The slot index is the NF's instance id. */
struct zn_nf_slot {
	/* writer: manager control thread (registry) */
	struct {
		uint32_t state;      /* enum zn_nf_state */
		uint32_t gen;        /* registration generation */
		int32_t reply;       /* 0 or -errno for request reply_gen */
		uint32_t reply_gen;
		uint32_t stop;       /* 1: no more packets come; drain, exit */
		uint16_t service_id;
		uint16_t worker;     /* worker that drains the TX ring */
		uint32_t pid;        /* in the manager's PID namespace (from
				      * the kernel: SCM_CREDENTIALS) */
		uint32_t ns_pid;     /* in the NF's own (its EAL's file names) */
		uint64_t start_time;
		uint64_t registered_ns;
		uint32_t group;      /* trust group index + 1 (req.group, checked) */
		uint32_t pool_quota; /* buffers of the shared pool it may
				      * take and keep (alloc.held); 0: any */
		char name[ZN_NAME_LEN];
		/* Port TX queue of its own per port (NF -> port hand-off):
		 * q + 1, 0: none (the workers transmit for it). Set before
		 * the registration reply, kept until the slot is FREE. */
		uint16_t txq[ZN_MAX_PORTS];
	} ctl __rte_cache_aligned;

	/* writer: the NF, control path */
	struct {
		uint32_t gen;        /* request generation */
		uint16_t service_id;
		uint16_t n_counters;
		uint32_t pid;        /* getpid(): in the NF's PID namespace */
		uint32_t leaving;    /* 1: the NF asks to leave */
		uint32_t exited;     /* 1: drained, the NF is gone */
		uint32_t group;      /* trust group index + 1; 0: none */
		uint64_t start_time;
		/* Ports (bit P: port P) it asks a TX queue of its own on
		 * (ZERONF_TX_PORT_P, the device plugin's); 0: as the manager
		 * gives them (--nf-tx-queues-by-request: none). */
		uint64_t tx_ports;
		char name[ZN_NAME_LEN];
	} req __rte_cache_aligned;

	/* writer: the NF, control path (names of NF counters) */
	char counter_names[ZN_NF_MAX_COUNTERS][ZN_COUNTER_NAME_LEN]
		__rte_cache_aligned;

	/* writer: the NF, control path (zn_nf_obj_track); read by the
	 * control thread once the NF left or died. Named DPDK objects the NF
	 * made in shared memory, which outlive its process: the manager frees
	 * those still listed. addr: the object's address (the same in every
	 * process), checked against what the name finds. type 0: unused. */
	struct {
		uint32_t n;          /* entries in use or freed: [0, n) */
		uint32_t pad;
		struct zn_nf_obj {
			uint32_t type;   /* enum zn_nf_obj_type, 0: none */
			uint32_t pad;
			uint64_t addr;
			char name[ZN_OBJ_NAME_LEN];
		} obj[ZN_NF_MAX_OBJS];
	} objs __rte_cache_aligned;

	/* writer: the NF packet thread */
	struct zn_ledger ledger;

	/* writer: the NF packet thread */
	struct {
		uint64_t rx;        /* packets received */
		uint64_t tx;        /* packets handed back (all actions) */
		uint64_t bursts;
		uint64_t tx_full;   /* waits for TX ring space */
		uint64_t created;   /* packets the NF made (zn_nf_send) */
		uint64_t long_yields; /* yields that lasted a time slice:
				       * it then waits on its doorbell
				       * (lib/nf/nf_pvt.h zn_nf_yield) */
	} stats __rte_cache_aligned;

	/* writer: the NF's mempool driver, any thread of the NF (atomic
	 * RMW; lib/nf/nf_pool_ops.c): buffers it took from the shared pool
	 * and keeps (not freed, not handed on: their tags say its slot),
	 * and takes refused at ctl.pool_quota */
	struct {
		uint64_t held;
		uint64_t refused;
	} alloc __rte_cache_aligned;

	/* writer: the NF's mempool driver: [0] its lcore's thread, [1] any
	 * other thread, one at a time (lib/nf/nf_pool_ring.c) */
	struct zn_pool_op pool_op[2];

	/* writer: the NF packet thread */
	uint64_t counters[ZN_NF_MAX_COUNTERS] __rte_cache_aligned;

	/* writer: the worker that drains this NF's TX ring (ctl.worker),
	 * reset by the control thread while the slot is FREE */
	struct {
		uint64_t dequeued;   /* packets taken from the TX ring */
		uint64_t act[ZN_ACT_MAX + 1]; /* actions the NF set; [MAX]:
					       * invalid ones. Counted here so
					       * the NF never reads metadata */
		uint64_t drops[ZN_DROP_MAX];
		uint32_t staged;     /* packets dequeued but not yet delivered */
		uint32_t blocked_on; /* r + 1: they wait for room in slot r's
				      * RX ring; 0: not waiting for an NF */
		uint64_t delivered;  /* packets of the TX ring gone on (or
				      * dropped): == hstats.tx_ring_in means
				      * the worker holds none of the NF's */
	} mstats __rte_cache_aligned;

	/* writer: the control thread, on reclaim */
	uint64_t exit_drops __rte_cache_aligned; /* packets lost when it died */

	/* writer: manager control thread (link.c): the NF's links. A link is
	 * used only as the routing snapshot and these say; changed only with
	 * an RCU grace period between taking a link away and reusing it. */
	struct {
		/* to slot r: 0 none, else ZN_LINK_OUT(link gen, link id) */
		uint32_t out[ZN_MAX_NFS];
		uint16_t n_in;
		uint16_t in[ZN_MAX_LINKS_IN]; /* link ids into this NF */
	} links __rte_cache_aligned;

	/* writer: the NF packet thread: its own routing (NF -> NF hand-off) */
	struct {
		uint64_t want[(ZN_MAX_NFS + 63) / 64]; /* links asked for */
		uint64_t tx_ring_in;  /* packets put on its TX ring */
		uint64_t link_tx;     /* packets handed to other NFs directly */
		uint64_t link_rx;     /* packets taken from links into it */
		uint64_t blocked;     /* flushes that left packets held */
		uint32_t blocked_on;  /* r + 1: waiting for room in the link
				       * to slot r; ZN_WAIT_TX_RING: in its
				       * TX ring (mstats.blocked_on says for
				       * whom the worker waits); 0: neither */
		uint32_t pad;
		uint64_t cycles_broken; /* waits found to be a loop of NFs */
		uint64_t lb_moved;    /* pinned flows moved off a replica */
		uint64_t act[ZN_ACT_MAX + 1]; /* actions of link_tx packets
					       * (the worker counts the TX
					       * ring's) */
		uint64_t drops[ZN_DROP_MAX];  /* drops it decided (stalled) */
	} hstats __rte_cache_aligned;

	/* writer: the NF (zn_nf_flow_steer); read once req.steer_gen moves */
	struct zn_steer_req {
		uint32_t gen;
		uint8_t op;       /* enum zn_steer_op */
		uint8_t flags;    /* ZN_STEER_F_* */
		uint8_t n_steps;
		uint8_t pad;
		struct zn_flow_key key;
		struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	} steer __rte_cache_aligned;

	/* writer: manager control thread: the answer to steer.gen */
	struct {
		uint32_t gen;
		int32_t rc;
	} steer_reply __rte_cache_aligned;

	/* writer: the NF, control path (zn_nf_cmd_register): the commands
	 * it serves, for nf.call; reset by the NF when it registers */
	struct {
		uint32_t n;
		uint32_t pad;
		char name[ZN_NF_MAX_CMDS][ZN_CMD_NAME_LEN];
	} cmds __rte_cache_aligned;

	/* writer: manager control thread (nf.call): a command for the NF.
	 * name, len and text are written first, then gen moves (release);
	 * only while cmd_reply.gen == gen (the NF answered the last one). */
	struct {
		uint32_t gen;
		uint32_t len;       /* bytes of text */
		char name[ZN_CMD_NAME_LEN];
		char text[ZN_CMD_TEXT_LEN]; /* args, a JSON object */
	} cmd __rte_cache_aligned;

	/* writer: the NF packet thread: the answer to cmd.gen. rc, len and
	 * text first, then gen = cmd.gen (release); then it kicks the
	 * manager. At registration the NF sets gen = cmd.gen (none open). */
	struct {
		uint32_t gen;
		int32_t rc;         /* 0: text is the result (JSON); -errno:
				     * text is a message */
		uint32_t len;
		uint32_t pad;
		char text[ZN_CMD_TEXT_LEN];
	} cmd_reply __rte_cache_aligned;

	/* writer: the NF packet thread: what it transmitted itself on port
	 * p (ZeroNF port index), on queue q - 1 (0: not attached), and what
	 * it received itself from RX queues of p it owned (port_nfrx.c) */
	struct zn_nf_ptx {
		uint64_t tx;       /* packets the port took */
		uint64_t tx_retry; /* bursts it did not take whole */
		uint64_t stalled;  /* dropped: the port took nothing for
				    * --stall-ms (also in hstats.drops) */
		uint64_t rx;       /* packets taken from its RX queues */
		uint32_t q;
		uint32_t rx_ok;    /* 1: attached, may own its RX queues
				    * (written at registration) */
	} ptx[ZN_MAX_PORTS] __rte_cache_aligned;

	struct zn_doorbell db; /* the NF sleeps here; workers ring it */
} __rte_cache_aligned;

enum zn_steer_op {
	ZN_STEER_ADD = 1,
	ZN_STEER_DEL = 2,
};

/* ---------------------------------------------------------------------- */
/* Routing: the snapshot every worker and NF packet thread resolves
 * packets with (lib/common/zn_route_hot.h). Built by the manager's
 * control thread (mgr/flow/route.c) in hugepage memory, published with one
 * store, then read-only until every reader passed an RCU quiescent state
 * (rte_rcu_qsbr, readers ZN_READER_*); LEAST_LOADED pins aside (readers
 * CAS them). */

/* Load balancing across the replicas of a service (mgr/flow/lb.c). */
enum zn_lb_mode {
	ZN_LB_HASH = 0,         /* flow affinity: bucket of the flow hash */
	ZN_LB_LEAST_LOADED = 1, /* new flows to the shortest backlog, pinned */
	ZN_LB_WEIGHTED = 2,     /* like HASH, buckets in proportion to weights */
};

#define ZN_LB_BUCKETS 256          /* HASH/WEIGHTED: hash >> 24 */
#define ZN_LB_PIN_BITS 16          /* LEAST_LOADED: pins by hash >> 16 */
#define ZN_LB_PINS (1u << ZN_LB_PIN_BITS)

/* LEAST_LOADED pin table of one service: entry = epoch << 16 | (slot + 1),
 * 0 = free. Readers claim entries with a CAS (both directions of a flow
 * share the flow hash, hence the entry); an entry not refreshed for
 * idle_epochs epochs (seconds, advanced by the control thread) is free
 * again. Flows sharing the top 16 bits of their hash share a pin. */
struct zn_lb_pins {
	struct {
		uint64_t moved; /* writer: that reader (ZN_READER_*) */
	} w[ZN_READERS] __rte_cache_aligned;
	uint32_t pin[ZN_LB_PINS] __rte_cache_aligned;
};

struct zn_svc_entry {
	uint16_t n;                     /* running instances */
	uint8_t mode;                   /* enum zn_lb_mode */
	uint16_t inst[ZN_MAX_REPLICAS]; /* instance (slot) ids */
	uint16_t bucket[ZN_LB_BUCKETS]; /* HASH/WEIGHTED: slot per bucket */
	struct zn_lb_pins *pins;        /* LEAST_LOADED (hugepage memory) */
};

struct zn_chain {
	uint16_t len; /* 0: unused id */
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
};

struct zn_ft;
struct rte_acl_ctx;
struct zn_oft_view;
struct zn_fabric_view;
struct rte_rcu_qsbr;
struct rte_ring;

struct zn_route {
	uint64_t version;
	uint16_t n_ports;
	/* Flow director (workers only): chains by id (0: the default chain),
	 * wildcard rules (rte_acl, IPv4 and IPv6) and the exact flow table
	 * (concurrent rte_hash, changed in place). */
	struct zn_chain chains[ZN_MAX_CHAINS];
	struct rte_acl_ctx *acl[2];     /* [0] IPv4, [1] IPv6; NULL: none */
	struct zn_ft *exact;
	/* The OpenFlow table (mgr/sdn/oft.h) while it is on: it classifies
	 * port ingress in place of the above (workers only) */
	const struct zn_oft_view *oft;
	/* Chains across hosts (mgr/fabric/fabric.h; workers only): the
	 * fabric port, peers and tunnels, NULL while there is no fabric */
	const struct zn_fabric_view *fabric;
	/* Service paths (RFC 8300's SPI, mgr/flow/fdir_path.c): a chain's
	 * path id (0: none), each of its hops' position on the path (a
	 * chain may be its path with hops of this host put in: those have
	 * none, 0xff), and path id -> the path's own chain by open
	 * addressing (spi 0: an empty slot) */
	uint32_t chain_spi[ZN_MAX_CHAINS];
	uint8_t path_pos[ZN_MAX_CHAINS][ZN_MAX_CHAIN_STEPS];
	struct {
		uint32_t spi;
		uint32_t chain;
	} spi_map[ZN_SPI_MAP_SLOTS];
	bool rehash_every_hop;          /* naive mode: no NF -> NF hand-off */
	bool direct;                    /* NFs may hand packets to NFs */
	uint16_t lb_epoch_idle;         /* LEAST_LOADED pin idle epochs */
	/* Chain of a port's packets that no rule matched, 0: the default
	 * (workers only) */
	uint8_t port_chain[ZN_MAX_PORTS];
	uint16_t n_port_chains;         /* ports with one */
	/* Chain of a tenant's packets from its slices that no rule matched,
	 * 0: none, they drop as no_tenant (workers only; mgr/tenant/tenant.c) */
	uint8_t tenant_chain[ZN_MAX_TENANTS];
	struct zn_svc_entry svc[ZN_MAX_SERVICES];
	uint16_t nf_svc[ZN_MAX_NFS];    /* service of a running NF, else 0 */
	uint8_t nf_group[ZN_MAX_NFS];   /* its trust group + 1, 0: none: an
					 * NF maps the slot and rings of its
					 * own group's NFs only */
	uint16_t n_drain[ZN_MAX_WORKERS];
	uint16_t drain[ZN_MAX_WORKERS][ZN_MAX_NFS]; /* TX rings to drain */
	/* Port RX queues NFs own (mgr/port/port_nfrx.c): who polls queue q
	 * of port p: ZN_RXQ_WORKERS, an NF (slot + 1) or, while it changes
	 * hands, nobody (ZN_RXQ_NOBODY); and each NF's queues, in order.
	 * An NF polls a queue only while it reads a snapshot that gives it
	 * the queue, a worker likewise: a queue changes hands over two
	 * snapshots (route.c), so no two threads ever poll it at once. */
	uint8_t rxq_nf[ZN_MAX_PORTS][ZN_NF_RXQ_MAX];
	uint8_t n_nf_rxq[ZN_MAX_NFS];
	struct zn_nf_rxq {
		uint8_t port;
		uint8_t queue;
		uint8_t chain;     /* what enters there takes this chain, */
		uint8_t pad;       /* whose first hop is the NF's service */
	} nf_rxq[ZN_MAX_NFS][ZN_NF_RXQ_PER_NF];
};

/* writer: manager control thread. The snapshot pointer moves on every
 * publish; the rest is set before `ready`. */
struct zn_shm_route {
	struct zn_route *route;      /* the live snapshot */
	uint64_t version;            /* its version, stored after it */
	uint32_t lb_epoch;           /* seconds: LEAST_LOADED pin ageing */
	uint32_t pad;
	struct rte_rcu_qsbr *qsbr;   /* NF readers: thread id = slot */
	struct rte_ring *nf_rx[ZN_MAX_NFS];
	struct rte_ring *nf_tx[ZN_MAX_NFS];
} __rte_cache_aligned;

/* One NF -> NF link. writer: manager control thread. */
struct zn_link {
	uint16_t from;  /* sender slot */
	uint16_t to;    /* receiver slot */
	uint16_t used;  /* 1: given to from -> to */
	uint16_t gen;   /* times given: a sender tells a new link from the
			 * one it had by (gen, id) */
	struct rte_ring *ring; /* SP/SC: the sender alone enqueues */
};

/* Where a link may start being read (writer: the link's sender, before
 * its first packet on it): the receiver reads a link only once it has
 * taken from its RX ring everything up to `rx_mark` (its producer tail
 * when the sender switched from the worker to the link), so the packets
 * of a flow that went through the worker come first. */
struct zn_link_mark {
	uint32_t rx_mark;
	uint32_t pad;
} __rte_cache_aligned;

/* A sender's links.out[] entry: (gen << 16) | (link id + 1), never 0. */
#define ZN_LINK_OUT(gen, id) (((uint32_t)(gen) << 16) | ((uint32_t)(id) + 1u))
#define ZN_LINK_OUT_ID(o) (((o) & 0xffffu) - 1u)

/** The whole shared zone, one per manager instance. */
/* A port as an NF sees it, for transmitting on it itself (NF -> port
 * hand-off, mgr/port/port.c). writer: manager control thread, before `ready`. */
struct zn_shm_port {
	char name[ZN_PORT_NAME_LEN]; /* ethdev name: what the NF attaches */
	char driver_so[ZN_PORT_SO_LEN]; /* the PMD's shared object, loaded
					 * by an NF whose EAL did not (a
					 * sandbox shows only the pool's) */
	uint16_t port_id;     /* DPDK port id (the same in every process) */
	uint16_t nf_txq_first; /* queues [first, first + n) are NFs' */
	uint16_t nf_txq_n;    /* 0: the workers transmit everything */
	uint16_t nf_rxq_n;    /* RX queues [0, n) NFs may own (port_nfrx.c);
			       * 0: the workers poll it */
	uint16_t nf_rx_kind;  /* ZN_PORT_RX_*, with nf_rxq_n */
	uint16_t pad[3];
};

struct zn_shm {
	struct zn_shm_hdr hdr;
	struct zn_shm_port ports[ZN_MAX_PORTS];
	struct zn_shm_mgr mgr;
	struct zn_shm_route rt;
	struct zn_link links[ZN_MAX_LINKS] __rte_cache_aligned;
	struct zn_link_mark link_mark[ZN_MAX_LINKS];
	struct zn_worker_shm workers[ZN_MAX_WORKERS];
	struct zn_nf_slot nfs[ZN_MAX_NFS];
	struct zn_shm_group groups[ZN_MAX_GROUPS];
};

/*
 * A trust group's file (mgr/trust/group.c) begins with the homes of its NFs: an
 * NF of group g has its slot, its RX and TX rings and the links between
 * it and other NFs of g there, not in the EAL's memory that every NF
 * maps, so an NF of another group has no address for them. Each slot index has a home in every group (and one in
 * zn_shm.nfs for NFs of no group); the registry says which one slot s uses
 * now (the group of the NF that registered in it). Then the pool.
 */
struct zn_group_home {
	/* What an NF of the group reads of the manager's state: its NFs map
	 * nothing of the manager's but this file (lib/nf/nf_group.c), so
	 * the manager keeps here a copy of what they need of zn_shm.
	 * writer: manager control thread (group_home.c, link.c, lb.c, main.c) */
	struct {
		struct zn_shm_hdr hdr;       /* before the group is `used` */
		struct zn_shm_group group;   /* this group, as in zn_shm */
		uint32_t stopping;           /* zn_shm.mgr.stopping */
		uint32_t lb_epoch;           /* zn_shm.rt.lb_epoch */
		/* links between the group's NFs, as in zn_shm.links */
		struct zn_link links[ZN_MAX_LINKS] __rte_cache_aligned;
	} view __rte_cache_aligned;
	/* The doorbell of each worker for this group's NFs: a worker sleeps
	 * on its own (zn_shm.workers[w].db) and these together
	 * (futex_waitv, zn_doorbell.h). writer: any waker, the worker */
	struct zn_doorbell wdb[ZN_MAX_WORKERS];
	/* writer: manager, before the group is `used` */
	struct {
		/* the group's pool: its header, lcore caches and free ring
		 * are in the same file (the pool's heap), so that the group's
		 * NFs find it without DPDK's list of pools, whose other
		 * entries (other groups' pools) they do not map */
		struct rte_mempool *pool;
		/* The group's copy of the NFs' routing snapshot and the RCU
		 * variable its NFs report to (thread id = slot), in the
		 * pool's heap (mgr/flow/route.c): an NF outside the group can
		 * neither mislead them nor hold one online (the manager
		 * kills a reader stuck online for 2 s) */
		struct zn_route *route;
		uint64_t version;
		struct rte_rcu_qsbr *qsbr;
	} hdr __rte_cache_aligned;
	struct zn_nf_slot nfs[ZN_MAX_NFS];
	struct zn_link_mark link_mark[ZN_MAX_LINKS]; /* of its links */
};

/** Group index @p g's file, where every process maps it. */
static inline struct zn_group_home *
zn_group_home_at(unsigned int g)
{
	return (struct zn_group_home *)(uintptr_t)(ZN_GROUP_VA_BASE +
						   (uint64_t)g *
						   ZN_GROUP_VA_STRIDE);
}

/* The rings of a home, by index: slot s's RX and TX rings, then link l's
 * (links join NFs of one group only: theirs is in the group's file). */
#define ZN_HOME_RX(s) (2u * (s))
#define ZN_HOME_TX(s) (2u * (s) + 1u)
#define ZN_HOME_LINK(l) (2u * ZN_MAX_NFS + (l))
#define ZN_HOME_RINGS (2u * ZN_MAX_NFS + ZN_MAX_LINKS)

/** Where ring @p idx (ZN_HOME_*) of @p ring_mem bytes
 *  (rte_ring_get_memsize) starts in a group's file. */
static inline uint64_t
zn_home_ring_off(unsigned int idx, uint64_t ring_mem)
{
	return RTE_ALIGN_CEIL(sizeof(struct zn_group_home),
			      RTE_CACHE_LINE_SIZE) +
	       (uint64_t)idx * RTE_ALIGN_CEIL(ring_mem, RTE_CACHE_LINE_SIZE);
}

/** The name ring @p idx (ZN_HOME_*) of group index @p g's home is made
 *  with (mgr/trust/group_home.c), and an NF checks it by (lib/nf/nf_msg.c). */
static inline void
zn_home_ring_name(char *buf, size_t len, unsigned int g, unsigned int idx)
{
	if (idx >= ZN_HOME_LINK(0))
		snprintf(buf, len, ZN_HOME_LINK_RING_FMT, g,
			 idx - ZN_HOME_LINK(0));
	else if (idx % 2)
		snprintf(buf, len, ZN_HOME_TX_RING_FMT, g, idx / 2);
	else
		snprintf(buf, len, ZN_HOME_RX_RING_FMT, g, idx / 2);
}

/** Bytes of a group file before its pool (page @p pg aligned). */
static inline uint64_t
zn_home_len(uint64_t ring_mem, uint64_t pg)
{
	return RTE_ALIGN_CEIL(zn_home_ring_off(ZN_HOME_RINGS, ring_mem), pg);
}

/** Messages on the manager's message ring (ZN_MSG_RING_NAME). */
enum zn_msg_type {
	ZN_MSG_REGISTER = 1, /* slot's req is filled: register it */
	ZN_MSG_LEAVE = 2,    /* the NF in slot asks to leave */
	ZN_MSG_STEER = 3,    /* slot's steer request is filled */
	ZN_MSG_READY = 4,    /* the NF in slot finished ops->init */
	ZN_MSG_LINK = 5,     /* the NF in slot wants links (hstats.want) */
};

struct zn_msg {
	uint8_t type;
	uint8_t group;  /* the sender's trust group + 1 (0: none): which
			 * home of the slot it writes (struct zn_group_home) */
	uint16_t slot;
	uint32_t gen;
};
_Static_assert(sizeof(struct zn_msg) == 8, "zn_msg is one ring element");

/** The NF in slot @p s is starting or running, of service @p svc. */
static inline bool
zn_slot_serves(const struct zn_nf_slot *s, uint16_t svc)
{
	uint32_t state = __atomic_load_n(&s->ctl.state, __ATOMIC_ACQUIRE);

	return (state == ZN_NF_RUNNING || state == ZN_NF_STARTING) &&
	       s->ctl.service_id == svc;
}

#endif /* ZN_SHM_H */
