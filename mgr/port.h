/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_PORT_H
#define ZN_PORT_H

/* Ports (port.c): the manager's, set up at start; never an NF's
 * (port_private.c). */

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_spinlock.h>

#include "../lib/shm/zn_shm.h"
#include "args.h"

struct zn_mgr;

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

int zn_ports_init(struct zn_mgr *m);
void zn_ports_close(struct zn_mgr *m);
/* port_private.c: secondaries never probe the manager's ports. _early()
 * before rte_eal_init(), _late() after it; scans_refused counts the
 * secondaries' scans answered with no device. */
void zn_ports_private_early(void);
int zn_ports_private_late(void);
uint64_t zn_ports_scans_refused(void);

#endif /* ZN_PORT_H */
