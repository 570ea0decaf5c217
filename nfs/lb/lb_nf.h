/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LB_NF_H
#define ZN_LB_NF_H

/* The load balancer NF's configuration and state, shared by its packet
 * path (lb.c) and its commands (lb_cmds.c, where it lives); one thread.
 * Connections are the NAT NF's sessions (nfs/nat/nat_table.c): the
 * client's tuple to the VIP, and the one it leaves with (to the backend
 * in NAT mode; the same in DSR mode, the backend named by xlat.dst). */

#include <stdbool.h>
#include <stdint.h>

#include "maglev.h"
#include "../nat/nat_table.h"

#define LB_MAX_VIPS 16
#define LB_MAX_BACKENDS 256
#define LB_NAME_LEN 32

struct lb_backend {
	char name[LB_NAME_LEN];
	char key[48];            /* ADDR:PORT: its Maglev permutation */
	uint32_t addr;
	uint16_t port;
	uint8_t mac[6];
	bool has_mac;
	uint32_t weight;
	bool up;
	uint64_t conns, packets;
};

struct lb_vip {
	char name[LB_NAME_LEN];
	uint32_t addr;
	uint16_t port;
	uint8_t proto;
	struct lb_backend be[LB_MAX_BACKENDS];
	unsigned int n_be;
	struct maglev mg;
};

struct lb_nf {
	struct lb_vip vip[LB_MAX_VIPS];
	unsigned int n_vip;
	bool dsr;
	uint32_t table_size;
	struct nat_table t;
};

extern struct lb_nf lb;

/** (Re)fill VIP @p v's Maglev table from its backends that are up. */
void lb_populate(struct lb_vip *v);

/** Serve backend.list, backend.set, lb.lookup. */
int lb_cmds_register(struct zn_nf *nf);

#endif /* ZN_LB_NF_H */
