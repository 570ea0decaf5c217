/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_PORT_H
#define ZN_PORT_H

/* Ports (port.c): the manager's, set up at start; never an NF's
 * (port_private.c). */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <rte_ethdev.h>
#include <rte_spinlock.h>

#include "../../lib/shm/zn_shm.h"
#include "../core/args.h"

struct zn_mgr;
struct zn_group;

/* Descriptors asked for each worker's TX queue (a driver may round up;
 * port_headers.c counts on twice this at most) */
#define ZN_PORT_TXD 1024

struct zn_port {
	uint16_t port_id;
	uint16_t nb_rxq;
	uint16_t nb_txq;
	bool rss;
	bool started;
	bool closed;                      /* zn_ports_close */
	struct zn_group *group;           /* its trust group (port.c, at
					   * start; --port-group), NULL: none */
	char name[RTE_ETH_NAME_MAX_LEN];
	char devargs[ZN_DEVARGS_LEN];
	char driver[64];
	rte_spinlock_t txq_lock[ZN_MAX_WORKERS]; /* used if txq shared */
	bool txq_shared;
	/* The control thread sends on queue 0 too (port_ctltx.c): from
	 * ctl_tx.on, workers take txq_lock[0] as if it were shared. */
	struct {
		bool on;          /* workers read it (atomic) */
		bool ready;       /* they all have seen it: sends may start */
		uint64_t token;   /* the workers' RCU token of `on` */
		uint64_t tx;      /* packets it sent (port.list's tx) */
	} ctl_tx;
	/* NF -> port (port_nftx.c): queues [nf_txq_first, + nf_txq_n) */
	uint16_t nf_txq_first;
	uint16_t nf_txq_n;
	const char *nf_tx_why;            /* why none, for port.list */
	uint16_t txq_owner[ZN_MAX_NFS];   /* by queue - first: slot + 1 */
	/* NFs owning RX queues (port_nfrx.c): queues [0, nf_rxq_n), how
	 * the driver receives (ZN_PORT_RX_*), its rings (ZN_PORT_RX_RING) */
	uint16_t nf_rxq_n;
	uint16_t nf_rx_kind;
	struct rte_ring *nf_rx_ring[ZN_NF_RXQ_MAX];
	const char *nf_rx_why;            /* why none, for port.list */
	const char *nf_rx_now;            /* why the workers poll them now
					   * (port_nfrx.c fill), NULL: NFs */
	struct {
		uint64_t rx;              /* received by NFs themselves */
		uint64_t tx, tx_retry, stalled;
		uint64_t tx_at_exit;      /* of tx: taken in the call an
					   * NF died in (reclaim.c) */
	} nf_gone;                        /* of NFs whose slot was freed */
	/* net_af_packet: the PMD's packet sockets and what the kernel
	 * dropped at them (port_kdrops.c; the control thread's) */
	struct {
		int fds[16];
		unsigned int n_fds;
		uint64_t total;
	} kdrops;
};

/** The PMD's packet sockets of a started net_af_packet port (others:
 * none), for zn_port_kdrops(). */
void zn_port_kdrops_find(struct zn_port *p);
/** Packets the kernel dropped at them so far (their rings full), which
 * DPDK 22.11's PMD does not count; control thread only. */
uint64_t zn_port_kdrops(struct zn_port *p);

/** Ring ports the manager makes (port_ring.c): does --port @p devargs
 *  ask for one (net_ring... with a zn_ key)? Then it is not the EAL's to
 *  probe. */
bool zn_port_ring_spec(const char *devargs);
/** Make it: its rings, then the driver on them. 0 or -errno (said). */
int zn_port_ring_make(const struct zn_mgr *m, const char *devargs);
/** Port @p p set up: the capture its zn_load= names in its RX queues, by
 *  the symmetric RSS of @p key (40 bytes). 0 (also: nothing to load) or
 *  -errno (said). */
int zn_port_ring_load(struct zn_mgr *m, struct zn_port *p,
		      const uint8_t *key);
/** The RX queues of every such port emptied into the pool: at exit, once
 *  no worker and no NF polls them (what nobody took is not lost). */
void zn_port_ring_drain(struct zn_mgr *m);

/** Read the ports or not (rx.set, --rx-paused, --rx-when-ready,
 *  shutdown): the workers and the NFs owning RX queues. */
void zn_ports_rx_set(struct zn_mgr *m, bool on);
/** Stop and close the ports (shutdown, teardown: again, nothing). */
void zn_ports_close(struct zn_mgr *m);
/* port_private.c: secondaries never probe the manager's ports. _early()
 * before rte_eal_init(), _late() after it; scans_refused counts the
 * secondaries' scans answered with no device. */
void zn_ports_private_early(void);
int zn_ports_private_late(void);
uint64_t zn_ports_scans_refused(void);
/* port_ctltx.c: the control thread sends @p mb (owned) on port @p i
 * itself (packet-outs: no worker to wake). @return 0: sent, -EAGAIN: not
 * yet (the first call begins it: the workers lock the queue from their
 * next burst) or the queue is full, -ENOTSUP: not this port or buffer
 * (a trust group's); then @p mb is still the caller's, for a worker. */
struct rte_mbuf;
int zn_port_ctl_tx(struct zn_mgr *m, unsigned int i, struct rte_mbuf *mb);

/* port_nftx.c: NF -> port hand-off. _plan while setting a port up (the
 * number of NF queues to add), _publish once it runs, _assign at an NF's
 * registration, _release when its slot is free, _json for port.list
 * (adds the NFs' transmissions to @p sum). */
struct rte_eth_dev_info;
struct zn_port_wstats;
unsigned int zn_port_nftx_plan(struct zn_mgr *m, struct zn_port *p,
			       const struct rte_eth_dev_info *info);
void zn_port_nftx_publish(struct zn_mgr *m, unsigned int i);
void zn_port_nftx_assign(struct zn_mgr *m, unsigned int slot);
void zn_port_nftx_release(struct zn_mgr *m, unsigned int slot);
json_t *zn_port_nftx_json(struct zn_mgr *m, unsigned int i,
			  struct zn_port_wstats *sum);

/* port_nfrx.c: NFs that own port RX queues. _plan while setting a port up
 * (before the RSS decision: how many RX queues it gets), _json for
 * port.list (adds the NFs' receptions to @p sum); who polls each queue
 * it fills into every routing snapshot itself (a source, route.h). */
void zn_port_nfrx_plan(struct zn_mgr *m, struct zn_port *p,
		       const struct rte_eth_dev_info *info);
json_t *zn_port_nfrx_json(struct zn_mgr *m, unsigned int i,
			  struct zn_port_wstats *sum);
/** Port RX turned on: the NFs that may own queues polled at once (their
 *  doorbells rung). */
void zn_port_nfrx_wake(struct zn_mgr *m);
/** The NF in @p slot is dead: a burst it was taking from a ring-backed RX
 *  queue is made one it held, the ring's half-done dequeue undone
 *  (zn_ledger_port_rx_finish). Before the snapshot that gives its
 *  queues to others. */
void zn_port_nfrx_repair(struct zn_mgr *m, unsigned int slot);

#endif /* ZN_PORT_H */
