/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NF_PVT_H
#define ZN_NF_PVT_H

/* libzeronf internals shared by nf.c (control path) and nf_run.c (hot path).
 * Process-private: nothing here is in shared memory. */

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sched.h>

#include <rte_mempool.h>
#include <rte_ring.h>

#include <zeronf/nf.h>
#include "../shm/zn_shm.h"
#include "../common/zn_route_hot.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_yield.h"

#define ZN_API __attribute__((visibility("default")))

/* Waiting in the packet thread (nf_run.c idle, nf_tx.c blocked): a few
 * polls with rte_pause, then polls separated by sched_yield (when NFs
 * share cores, the one with packets runs; measured 2-3x faster chains on
 * 2 cores than spinning), then sleep until woken. */
#define ZN_IDLE_SPIN 8
#define ZN_IDLE_YIELD (ZN_IDLE_SPIN + 256)
/* A wait for ring room sleeps at most this long: a consumer that makes
 * room rings no one (nf_tx.c; a bundle with a hand-off pending too). */
#define ZN_TX_SLEEP_US 1000


/* The EAL memory of an NF of a trust group (its own, not hugepages: it
 * holds the NF's tables; packets are in the group's file). MB, reserved
 * address space, touched as used. */
#define ZN_NF_OWN_MEM_MB 512

/* How long the NF waits for the manager to answer a leave request. */
#define ZN_NF_LEAVE_TIMEOUT_NS (3ULL * 1000 * 1000 * 1000)
/* How long zn_nf_flow_steer() waits for the manager's answer. */
#define ZN_STEER_TIMEOUT_NS (2ULL * 1000 * 1000 * 1000)

/* The NF of this process once registered, else NULL (in a bundle, the
 * member whose code runs: nf_bundle.c): zn_ft_create tracks the tables
 * it makes for it (zn_nf_obj_track). */
extern struct zn_nf *zn_nf_self;

/* What an NF takes from its pool and keeps (nf_acct.c): the pool's cache
 * of the account's lcore (NULL: not accounted, or not on that lcore), how
 * much of it is known tagged, and whether the NF allocates at all (until
 * then what sits in the cache is left). */
struct zn_nf_acct_state {
	struct rte_mempool_cache *cache;
	uint32_t seen;
	bool allocates;
};

struct zn_bundle;

struct zn_nf {
	struct zn_nf_ops ops; /* copy, zero-extended to our size */
	char instance[ZN_NAME_LEN];
	char name[ZN_NAME_LEN];
	char log_level[64];
	uint16_t service_id;
	uint16_t slot;
	uint64_t tx_ports; /* ZERONF_TX_PORT_P: ports it asks a TX queue of */
	uint32_t gen;
	unsigned int wait_s;
	cpu_set_t cpus;
	bool cpus_set;

	int slot_lock_fd;
	int pid_claim_fd;  /* nf_pid.c: our pid's, or -1 */
	int mgr_pidfd;     /* -1: the manager is watched by mgr_lock_fd */
	int mgr_lock_fd;   /* the manager's instance lock (sandboxed) */
	int kick_fd;

	/* What we read of the manager's state: zn_shm in the EAL's memory
	 * for an NF of no group; for an NF of a trust group, which maps none
	 * of it (shm NULL), the copy in its group's file (zn_group_home
	 * view). Workers' doorbells: w_db[worker * w_db_stride]. */
	struct zn_shm *shm;
	const struct zn_shm_hdr *hdr;
	const uint32_t *stopping;
	const uint32_t *lb_epoch;
	const struct zn_link *links;
	struct zn_doorbell *w_db0;
	size_t w_db_stride;          /* in doorbells */
	struct zn_nf_slot *s;
	/* Every slot's home in our group (zn_shm.h struct zn_group_home),
	 * or zn_shm.nfs for an NF of no group, and its RX ring there: what
	 * we read of NFs we hand packets to over links (always of our
	 * group). s == peer[slot].slot. Then the rings of links (by id),
	 * and where a link's first readable position is (struct
	 * zn_link_mark): our group's, as its file lays them out, or the
	 * EAL's found by name; never the pointers in zn_shm, which any NF
	 * can write (nf_msg.c). */
	struct zn_peer peer[ZN_MAX_NFS];
	struct rte_ring *link_ring[ZN_MAX_LINKS];
	struct zn_link_mark *link_mark;
	struct zn_doorbell *wdb;   /* our worker's, where we ring it */
	struct rte_ring *rx;
	struct rte_ring *tx;
	struct rte_ring *msgq;
	struct rte_mempool *pool;

	/* NF -> NF hand-off (nf_tx.c): the burst being handed on. */
	struct rte_rcu_qsbr *qsbr;  /* the NFs' RCU variable; we are `slot` */
	struct zn_route *const *rt_route; /* the snapshot we read: zn_shm's, */
	const uint64_t *rt_version;       /* or our group's (zn_group_home) */
	struct zn_rctx rc;          /* balancing state */
	struct zn_res res[ZN_BURST];
	bool resolved;              /* res[] hold this burst's decisions */
	bool uniform;               /* res[0] applies to all */
	uint16_t tx_head;           /* held[] before it are handed on */
	uint16_t tx_ring_id;        /* ring of the ledger's tx_pos; 0xffff */
	struct rte_ring *blk_ring;  /* the ring a blocked run waits for */
	uint64_t blocked_since;     /* tsc, 0: not blocked */
	uint64_t stall_cycles;      /* 0: never drop */
	uint64_t cycle_cycles;      /* LOOP_WAIT_US in tsc (nf_tx.c) */
	struct zn_yield yld;        /* the packet thread's (zn_nf_yield) */
	uint16_t rx_next;           /* which inbound ring is read next */
	uint16_t applied;           /* held[] before it: meta set for a
				     * link, action counted (act0) */
	uint8_t act0[ZN_BURST];     /* their actions before that */
	/* No link in use and the last resolved burst had no packet for an
	 * NF, under snapshot fast_ver: then bursts go to the TX ring without
	 * reading a packet (the worker resolves them; see nf_tx.c). */
	unsigned int links_in_use;
	bool fast_ok;
	uint64_t fast_ver;
	unsigned int fast_n;        /* bursts sent so since the last check */
	struct zn_nf_link {
		uint32_t out;       /* links.out[] value this state is for */
		bool in_use;        /* switched to it (ordering rule met) */
		uint64_t asked;     /* tsc of the last request for one */
	} lk[ZN_MAX_NFS];
	/* NF -> port (nf_port.c, nf_tx.c): TX queue + 1 per ZeroNF port
	 * (0: the workers transmit), its DPDK port id here. */
	uint16_t ptxq[ZN_MAX_PORTS];
	uint16_t ptx_pid[ZN_MAX_PORTS];
	unsigned int n_ptxq;
	/* Port RX queues this NF may own (nf_port.c, nf_run.c): ports
	 * attached for it (ptx[p].rx_ok), the one polled next, and whether
	 * the burst held now is one it only passes on (its service is not
	 * the first hop of what entered: the handler does not see it). */
	unsigned int n_prx;
	uint8_t prx_kind[ZN_MAX_PORTS];  /* ZN_PORT_RX_*, 0: not attached */
	struct rte_ring *prx_ring[ZN_MAX_PORTS][ZN_NF_RXQ_MAX]; /* RING's */
	uint16_t prx_next;
	bool prx_owned;             /* the last snapshot gave it queues */
	bool prx_turn;              /* ports first this time (nf_run.c) */
	bool rx_pass;
	/* The burst held now came from a port RX queue: every packet of it
	 * is tagged as ours (nf_acct.c). Untagged only where a run leaves
	 * for another process (nf_tx.c untag_run); what our own port queue
	 * sends is freed into our cache still ours, and stays so. */
	bool burst_tagged;
	uint16_t untag_to;          /* held[] before it: untagged */
	uint32_t prx_sleep_us;      /* idle: port queues polled again */
	/* The pool's cache of our lcore, where a PMD frees what we send
	 * (NULL: none; then each packet sent gets an extra reference). */
	struct rte_mempool_cache *cache;
	/* What this NF takes from the shared pool and keeps, tagged
	 * (nf_acct.c): its own account's state, or in a bundle the first
	 * member's (the process has one account and one lcore cache:
	 * nf_bundle.c); acct_owner: the account is this NF's. */
	struct zn_nf_acct_state acct_own;
	struct zn_nf_acct_state *acct;
	bool acct_owner;
	/* In a bundle (nf_bundle.c): the bundle, what a hand-off waiting
	 * for room calls (the others' turns: set by the bundle, which sits
	 * above this library's packet loop), and whether this NF's packet
	 * turn is under way (then never run from another's wait) */
	struct zn_bundle *bundle;
	int (*assist)(struct zn_nf *nf);
	unsigned int bundle_idx;    /* its place in the turn order */
	bool busy;
	/* held[0, tx_pending) mid-hand-off since a turn that ended waiting
	 * for a member that runs only once it returns (nf_bundle.c assist):
	 * the NF's next turn resumes it before it takes more; 0: none */
	unsigned int tx_pending;

	/* Trust group (nf_group.c): --trust-group, its pool and mapping. */
	char group_name[ZN_NAME_LEN];
	uint32_t group;             /* index + 1; 0: none */
	struct rte_mempool *gpool;
	void *gva;
	size_t glen;
	bool gshared;               /* gva is a bundle's first NF's mapping */

	/* In a VM (nf_guest.c): the helper's process, which the manager
	 * sees as ours, and how we poll. */
	char guest_conf[256];
	bool guest;
	uint32_t owner_pid;
	uint64_t owner_start;
	uint32_t poll_max_us;
	int wake_fd;     /* the helper's wake-ups (-1: we poll) */
	uint64_t idle_since; /* ns, 0: not idle (nf_guest.c) */

	volatile sig_atomic_t stop_req;
	bool leave_sent;
	uint64_t leave_deadline;
	bool eal_ready;
	bool registered;
	bool init_done;
	bool joined;      /* READY sent: the manager routes to us */
	void *priv;
	uint32_t cmd_gen;  /* the last command answered (nf_cmd.c) */
	zn_nf_cmd_fn cmd_fn[ZN_NF_MAX_CMDS];
};

/* nf_run.c: the packet loop in turns, which zn_nf_run and a bundle's
 * thread (nf_bundle.c) take. */
#define ZN_PRX_SLEEP_MIN_US 16 /* owning port RX queues: the first sleep */
#define ZN_PRX_SLEEP_MAX_US 1000 /* and the longest (the workers' default) */
struct zn_nf_loop {
	unsigned int idle;     /* empty polls in a row */
	uint64_t due;          /* tsc ops->poll wants its next turn; 0 none */
	uint64_t shared_until; /* tsc: coalesce until then */
	uint64_t wait_start;   /* tsc: first poll that found too few */
	uint64_t shared_yield, hold, coalesce; /* the constants, in tsc */
	uint64_t tsc_us;
	uint64_t check_cycles, next_check; /* periodic(): tsc */
};
/* Before the first turn, in the packet thread. */
void zn_nf_loop_init(struct zn_nf *nf, struct zn_nf_loop *lp);
/* One turn: a burst taken, handled and handed on (*n: its size, 0:
 * none), then an open command and the periodic checks. @return 0 to go
 * on, 1 once stopped and drained, or -errno as zn_nf_run. Sleeps only
 * while a hand-off waits for room. */
int zn_nf_turn(struct zn_nf *nf, struct zn_nf_loop *lp, unsigned int *n);
/* Work for @p nf (struct zn_nf *): packets, a stop, a command. */
bool zn_nf_rx_ready(void *nf);

/* Control path helpers used by the packet loop (nf.c). */
/* nf_args.c */
int zn_nf_parse_lib_args(struct zn_nf *nf, int argc, char **argv,
			 int *nf_argc, char ***nf_argv);
/* nf_register.c: register in our slot and set up what uses it (nf.c,
 * once). 0 or -errno. */
int zn_nf_register(struct zn_nf *nf);
/* nf_pid.c: a pid no other NF of the instance has (a secondary in a PID
 * namespace of its own); may fork, the parent never returning. */
int zn_nf_pid_claim(struct zn_nf *nf);
/* How long the manager has to answer REGISTER, and READY. */
#define ZN_REGISTER_TIMEOUT_NS (5ULL * 1000 * 1000 * 1000)
/* nf_msg.c */
void zn_nf_kick_register(struct zn_nf *nf);
int zn_nf_send_leave(struct zn_nf *nf);
bool zn_nf_mgr_alive(struct zn_nf *nf);
int zn_nf_join(struct zn_nf *nf);
void zn_nf_kick_manager(struct zn_nf *nf);
int zn_nf_post_msg(struct zn_nf *nf, uint16_t type);

/* nf_tx.c: hand held[0, n) of the ledger on (to NFs directly, or to the
 * TX ring), waiting while a destination is full. 0 or -ENOTCONN.
 * _turn: the same in a packet turn, which in a bundle may end with the
 * hand-off pending (ZN_TX_PENDING, nf->tx_pending) instead of waiting
 * for a member that cannot run before it returns; _resume: carry a
 * pending hand-off on (@p may_pend: as _turn; else it waits). */
#define ZN_TX_PENDING 1
int zn_nf_tx_held(struct zn_nf *nf, unsigned int n);
int zn_nf_tx_turn(struct zn_nf *nf, unsigned int n);
int zn_nf_tx_resume(struct zn_nf *nf, bool may_pend);
void zn_nf_tx_init(struct zn_nf *nf);
/* nf_port.c: attach the ports the manager gave us a TX queue of, and
 * those whose RX queues NFs may own (mgr/port/port_nfrx.c); _thread in
 * the packet thread before it starts; _rx: a burst from an RX queue the
 * snapshot gives us, into the ledger (0: none; nf->rx_pass set if the
 * handler must not see it). */
void zn_nf_ports_attach(struct zn_nf *nf);
unsigned int zn_nf_ports_rx(struct zn_nf *nf);

/* What an NF takes from its pool and keeps (nf_acct.c,
 * mgr/nf/pool_acct.h). attach: once registered (tagged from now on); room:
 * before libzeronf frees up to @p n buffers into cache @p c (flushes it
 * if they would not fit, as the put would, but knowingly); begin/end:
 * around a TX (zn_nf_tx_held); check: now and then when idle. */
void zn_nf_acct_attach(struct zn_nf *nf);
void zn_nf_acct_room(struct zn_nf *nf, struct rte_mempool_cache *c,
		     unsigned int n);
void zn_nf_acct_begin(struct zn_nf *nf);
void zn_nf_acct_end(struct zn_nf *nf);
void zn_nf_acct_check(struct zn_nf *nf);
/* allocating: from now on what sits in our cache is ours (a port's PMD
 * takes from it in our rx_burst). */
void zn_nf_acct_allocating(struct zn_nf *nf);
/* sent_ours: our PMD freed @p k buffers that were ours (tagged) into
 * cache @p c, whose length was @p len0 before: known ours already. */
void zn_nf_acct_sent_ours(struct zn_nf *nf, const struct rte_mempool_cache *c,
			  uint32_t len0, unsigned int k);
void zn_nf_ports_thread(struct zn_nf *nf);

/* nf_calib.c: while on, the EAL's 100 ms TSC calibration sleep takes
 * 10 ms (an NF of a trust group's rte_eal_init only). */
void zn_nf_short_calibration(bool on);

/* nf_pool_ring.c: a pool's free ring, every claim recorded in @p op
 * (struct zn_pool_op); its geometry as the caller trusts it. put: @p cache
 * the caller's lcore cache or NULL; get: @p take(arg, objs, n) runs on what
 * was taken before the range is released. 0 or -ENOBUFS (all or none;
 * a put of more than ZN_POOL_OP_MAX not from the cache goes in parts, a
 * failed part leaves the earlier in). A wait for an earlier claim's
 * commit gives up after @p wait_polls polls, which sleep after a while
 * with @p may_sleep. */
struct zn_ring_geo;  /* lib/common/zn_pool_ops.h */
struct zn_pool_acct; /* the same */
int zn_pool_ring_put(const struct zn_ring_geo *g, struct zn_pool_op *op,
		     void *const *objs, unsigned int n,
		     struct rte_mempool_cache *cache, uint32_t wait_polls,
		     bool may_sleep);
int zn_pool_ring_get(const struct zn_ring_geo *g, struct zn_pool_op *op,
		     void **objs, unsigned int n,
		     void (*take)(void *arg, void **objs, unsigned int n),
		     void *arg, uint32_t wait_polls, bool may_sleep);
/* The record for this thread's next claim (@p a: the NF's own pool's
 * account, whose records are in its slot; NULL: this process's own);
 * _end after the operation. */
struct zn_pool_op *zn_pool_ring_op(const struct zn_pool_acct *a, bool *locked);
void zn_pool_ring_op_end(bool locked);

/* nf_group.c: map the trust group's pool (--trust-group); 0 or -errno
 * (0 without a group). _detach at close. */
int zn_nf_group_attach(struct zn_nf *nf);
/* nf_pool_ops.c: the index of mempool driver @p name in this process,
 * -1: none (indexes are per process). */
int zn_pool_ops_index(const char *name);
/** Worker @p w's doorbell, as this NF rings it. */
static inline struct zn_doorbell *
zn_nf_worker_db(const struct zn_nf *nf, uint32_t w)
{
	return nf->w_db0 + (size_t)w * nf->w_db_stride;
}
void zn_nf_group_detach(struct zn_nf *nf);
/* A bundle's later member: @p first's mapping of their group (nf_bundle.c);
 * 0 (nothing to share without a group) or -errno. */
int zn_nf_group_share(struct zn_nf *nf, const struct zn_nf *first);

/* nf.c: open an NF as zn_nf_open does; @p first: in a bundle, the first
 * member, open already in this process (its EAL, pid claim, group
 * mapping and pool account are shared), else NULL. */
int zn_nf_open_in(int argc, char **argv, const struct zn_nf_ops *ops,
		  struct zn_nf *first, struct zn_nf **nfp);

/* nf_guest.c: an NF in a VM. _open reads --guest's file (slot, helper)
 * and opens the serial port; _map maps the group's BAR; _send sends a
 * frame to the helper. 0 or -errno. */
int zn_nf_guest_open(struct zn_nf *nf);
int zn_nf_guest_map(struct zn_nf *nf, void **va, uint64_t *len,
		    unsigned int *idx);
int zn_nf_guest_send(struct zn_nf *nf, const void *buf, size_t len);
void zn_nf_guest_ring(struct zn_nf *nf, struct zn_doorbell *db);
bool zn_nf_guest_wait(struct zn_nf *nf, struct zn_doorbell *db,
		      bool (*has_work)(void *), void *arg,
		      uint64_t timeout_us);

/* Ring @p db / sleep on it (zn_doorbell.h), in a VM as the guest can. */
static inline void
zn_nf_ring(struct zn_nf *nf, struct zn_doorbell *db)
{
	if (likely(!nf->guest))
		zn_db_ring(db);
	else
		zn_nf_guest_ring(nf, db);
}

static inline bool
zn_nf_wait(struct zn_nf *nf, struct zn_doorbell *db,
	   bool (*has_work)(void *), void *arg, uint64_t timeout_us)
{
	if (likely(!nf->guest))
		return zn_db_wait(db, has_work, arg, timeout_us);
	return zn_nf_guest_wait(nf, db, has_work, arg, timeout_us);
}

/** zn_yield() of the packet thread, its long yields published
 *  (stats.long_yields). */
static inline bool
zn_nf_yield(struct zn_nf *nf, uint64_t *took)
{
	bool yielded = zn_yield(&nf->yld, took);

	if (unlikely(nf->yld.n_long != nf->s->stats.long_yields))
		nf->s->stats.long_yields = nf->yld.n_long;
	return yielded;
}

/* nf_cmd.c: commands (nf.call). _reset at registration; _serve answers
 * an open command, if any, from the packet thread. */
void zn_nf_cmd_reset(struct zn_nf *nf);
void zn_nf_cmd_serve(struct zn_nf *nf);

/* A command is open: the manager moved cmd.gen past what we answered. */
static inline bool
zn_nf_cmd_open(const struct zn_nf *nf)
{
	return __atomic_load_n(&nf->s->cmd.gen, __ATOMIC_ACQUIRE) !=
	       nf->cmd_gen;
}

#endif /* ZN_NF_PVT_H */
