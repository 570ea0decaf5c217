/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NAT_NF_H
#define ZN_NAT_NF_H

/* The NAT NF's configuration and state, shared by its packet path
 * (nat.c) and its commands (nat_cmds.c, where it lives); one thread. */

#include <stdbool.h>
#include <stdint.h>

#include "nat_table.h"

#define NAT_MAX_RULES 64

struct nat_snat {            /* --snat PREFIX=ADDR[:LO-HI] */
	uint32_t net, mask, addr;
	uint16_t lo, hi;
	bool range;              /* ports given: only from them */
};

struct nat_dnat {            /* --dnat ADDR[:PORT]=ADDR2[:PORT2][/PROTO] */
	uint32_t addr, to;
	uint16_t port, to_port;  /* 0: every port, kept */
	uint8_t proto;           /* 0: TCP and UDP (with ports), any */
};

struct nat_netmap {          /* --netmap PREFIX=PREFIX */
	uint32_t from, to, mask;
};

struct nat_portmap {         /* --portmap LO[-HI]=PORT */
	uint16_t lo, hi, to;
};

struct nat_nf {
	struct nat_snat snat[NAT_MAX_RULES];
	struct nat_dnat dnat[NAT_MAX_RULES];
	struct nat_netmap netmap[NAT_MAX_RULES];
	struct nat_portmap portmap[NAT_MAX_RULES];
	unsigned int n_snat, n_dnat, n_netmap, n_portmap;
	struct nat_table t;
	bool reply_mac;          /* --reply-mac learned */
	uint64_t translated_out, translated_in, errors_translated;
};

extern struct nat_nf nat;

/** Rule option @p c ('s' --snat, 'd' --dnat, 'm' --netmap, 'p'
 *  --portmap) with argument @p arg, added to nat. @return 0 or -1. */
int nat_conf_rule(int c, char *arg);

/** Serve nat.list, nat.stats, nat.flush. */
int nat_cmds_register(struct zn_nf *nf);

#endif /* ZN_NAT_NF_H */
