/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FW_CT_H
#define ZN_FW_CT_H

/*
 * Connection tracking of the firewall NF (fw_ct.c), following the Linux
 * kernel's nf_conntrack as the firewall's rules see it (ct state NEW,
 * ESTABLISHED, RELATED, INVALID): TCP's state machine (with mid-stream
 * pick-up and reopening), UDP, ICMP queries and errors, other protocols
 * by addresses; timeouts as the kernel's defaults. What it deliberately
 * does not follow (TCP window tracking, the SCTP and DCCP machines,
 * helpers) is in docs/nfs/firewall.md. One thread: the NF's.
 */

#include <stdbool.h>
#include <stdint.h>

#include "fw_pkt.h"

struct fw_ct;
struct zn_nf;

/* Timeouts, seconds (the kernel's defaults; --ct-timeout NAME=S). */
enum fw_ct_timeout {
	FW_TO_SYN_SENT, FW_TO_SYN_RECV, FW_TO_ESTABLISHED, FW_TO_FIN_WAIT,
	FW_TO_CLOSE_WAIT, FW_TO_LAST_ACK, FW_TO_TIME_WAIT, FW_TO_CLOSE,
	FW_TO_UDP, FW_TO_UDP_STREAM, FW_TO_ICMP, FW_TO_GENERIC, FW_TO_MAX
};

extern const char *const fw_ct_timeout_names[FW_TO_MAX];

/* What conntrack made of a packet (fw_ct_in), for fw_ct_confirm. */
struct fw_ct_res {
	uint8_t state;       /* one FW_CT_* bit */
	bool pending;        /* a new connection: made if the packet passes */
	uint8_t tcp_state;   /* its first TCP state */
	struct fw_tuple t;   /* ... its original tuple */
};

struct fw_ct_stats {
	uint64_t found, created, expired, full, reopened, deleted;
	uint32_t in_use, capacity;
};

/** A table of @p capacity connections named @p name (its rte_hash,
 *  tracked for @p nf if not NULL). @return 0 or -errno. */
int fw_ct_create(const char *name, uint32_t capacity, struct zn_nf *nf,
		 struct fw_ct **out);
void fw_ct_free(struct fw_ct *ct);
/** What fw_ct_free() frees but the rte_hash, left to the manager, which
 *  is stopping (its memory goes with it). */
void fw_ct_abandon(struct fw_ct *ct);
void fw_ct_set_timeout(struct fw_ct *ct, enum fw_ct_timeout which,
		       uint32_t seconds);

/** Packet @p k at @p now_ns: its state, and the table updated for a
 *  known connection (even if the rules drop the packet, as the kernel's
 *  conntrack does before the filter hook). */
void fw_ct_in(struct fw_ct *ct, const struct fw_pkt *k, uint64_t now_ns,
	      struct fw_ct_res *res);

/** The packet of @p res passed: a new connection is made.
 *  @return 0, or -ENOSPC (table full: the packet is to be dropped). */
int fw_ct_confirm(struct fw_ct *ct, const struct fw_ct_res *res,
		  uint64_t now_ns);

/** Expire up to @p budget connections' worth of the table (a slice per
 *  call, round robin). */
void fw_ct_gc(struct fw_ct *ct, uint64_t now_ns, uint32_t budget);

/** Forget every connection. */
void fw_ct_flush(struct fw_ct *ct);

void fw_ct_get_stats(const struct fw_ct *ct, struct fw_ct_stats *s);

/** Connection @p i of the table, if in use: its tuple, TCP state name
 *  ("" for others), seconds left, whether a reply was seen. */
bool fw_ct_entry(const struct fw_ct *ct, uint32_t i, uint64_t now_ns,
		 struct fw_tuple *t, const char **tcp_state,
		 uint64_t *left_s, bool *replied);

#endif /* ZN_FW_CT_H */
