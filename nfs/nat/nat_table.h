/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NAT_TABLE_H
#define ZN_NAT_TABLE_H

/*
 * The NAT's sessions (nat_table.c): each one the tuple its first packet
 * came with (orig) and the one it left with (xlat); found by either
 * direction's tuple as it arrives (orig, or the reply to xlat) in one
 * rte_hash lookup. A packet of direction 0 leaves as xlat, one of
 * direction 1 as the reply to orig. One thread: the NF's.
 */

#include <stdbool.h>
#include <stdint.h>

#include "nat.h"

struct zn_nf;

enum nat_timeout {
	NAT_TO_TCP_SYN, NAT_TO_TCP_EST, NAT_TO_TCP_FIN, NAT_TO_TCP_RST,
	NAT_TO_UDP, NAT_TO_UDP_STREAM, NAT_TO_ICMP, NAT_TO_GENERIC,
	NAT_TO_MAX
};

extern const char *const nat_timeout_names[NAT_TO_MAX];

struct nat_sess {
	struct nat_tuple orig, xlat;
	uint64_t expires;        /* ns; 0: free */
	uint8_t seen;            /* directions seen: bit 0, bit 1 */
	uint8_t fin;             /* FINs seen: bit per direction */
	uint8_t timeout;         /* enum nat_timeout */
	bool dnat;               /* made by a DNAT rule */
	uint8_t mac[6];          /* its first packet's source MAC */
};

struct nat_table {
	struct rte_hash *h;
	struct zn_nf *nf;
	struct nat_sess *s;
	uint32_t *free_list;
	uint32_t n_free, cap, in_use, gc_next;
	uint64_t made;           /* sessions made so far */
	uint64_t to_ns[NAT_TO_MAX];
};

int nat_table_create(struct nat_table *t, const char *name, uint32_t cap,
		     struct zn_nf *nf);
void nat_table_free(struct nat_table *t);
/** What nat_table_free() frees but the rte_hash, left to the manager,
 *  which is stopping. */
void nat_table_abandon(struct nat_table *t);

/** The live session of tuple @p k (as it arrived): its index, and the
 *  direction @p k goes in it. */
bool nat_find(struct nat_table *t, const struct nat_tuple *k, uint64_t now,
	      uint32_t *idx, unsigned int *dir);

/** Whether a session would clash with one whose reply tuple is @p r. */
bool nat_reply_used(struct nat_table *t, const struct nat_tuple *r,
		    uint64_t now);

/** A new session @p orig -> @p xlat. @return its index, or -ENOSPC. */
int nat_add(struct nat_table *t, const struct nat_tuple *orig,
	    const struct nat_tuple *xlat, bool dnat, uint64_t now);

/** Session @p i saw a packet going @p dir with TCP flags @p flags. */
void nat_touch(struct nat_table *t, uint32_t i, unsigned int dir,
	       uint8_t flags, uint64_t now);

void nat_gc(struct nat_table *t, uint64_t now, uint32_t budget);
void nat_flush(struct nat_table *t);

#endif /* ZN_NAT_TABLE_H */
