/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_OFT_PVT_H
#define ZN_OFT_PVT_H

/* The OpenFlow table's state, shared by its files (oft.h says which does
 * what) and no other module. Workers read the published view, the
 * entries' `act` and write their own counters; everything else is the
 * control thread's. */

#include <stdbool.h>
#include <stdint.h>

#include <rte_common.h>

#include "oft.h"
#include "../../lib/shm/zn_shm.h"

struct rte_hash;
struct rte_ring;

#define OFT_MAX_SUBTABLES 255 /* sub ids 1..255 in a key's `sub` */
#define OFT_PUNT_RING 1024    /* packet-ins waiting for the control thread */
#define OFT_INJECT_RING 1024  /* packet-outs waiting for the worker */
#define OFT_BUFFERS 256       /* packets kept for a buffer_id */

/* An entry's act word, what workers read of it (one atomic load):
 * verdict | chain << 8 | max_len << 16. */
#define OFT_ACT(verdict, chain, max_len)                                     \
	((uint32_t)(verdict) | (uint32_t)(chain) << 8 |                      \
	 (uint32_t)(max_len) << 16)
#define OFT_ACT_VERDICT(a) ((a) & 0xff)
#define OFT_ACT_CHAIN(a) (((a) >> 8) & 0xff)
#define OFT_ACT_MAX_LEN(a) ((a) >> 16)

struct zn_oft_entry {
	/* read by workers */
	uint32_t act;       /* OFT_ACT */
	uint16_t priority;
	uint16_t flags;     /* ZN_OFPFF_* (NO_PKT/BYT_COUNTS: not counted) */
	uint32_t idx;       /* its counters: cnt[worker][idx] */
	bool table_miss;    /* priority 0, every field wildcarded */
	uint8_t pad[3];
	/* control thread */
	struct zn_oft_key value, mask;
	uint8_t sub;        /* subtable index + 1 */
	bool linked;        /* in the hash (the head of its match), or
			     * behind the head in `next_same` */
	struct zn_oft_entry *next_same; /* same match, lower priority */
	uint64_t cookie;
	uint16_t idle_timeout, hard_timeout;
	struct zn_oft_action act_full; /* its chain's steps, for reports */
	uint64_t created_ns;
	uint64_t idle_since_tsc;   /* last hit as of the last check */
	uint64_t base_packets, base_bytes; /* the counters' values at
					     * creation (idx reused) */
	uint64_t carry_packets, carry_bytes; /* from an entry it replaced */
	struct zn_oft_entry *next_free; /* freed after the next sync */
};

/* A worker's counters of an entry (its own line of them: no sharing). */
struct oft_count {
	uint64_t packets;
	uint64_t bytes;
	uint64_t used_tsc; /* the last hit */
};

/* A group as the workers read it (immutable; replaced whole, the old
 * one freed after a sync): slot (the flow hash's top byte) -> bucket,
 * bucket -> chain. */
struct oft_gview {
	uint8_t slot[256];
	uint8_t chain[ZN_OFT_GROUP_BUCKETS];
};

/* A worker's counts of a group's buckets. */
struct oft_gcount {
	uint64_t packets, bytes;
};
#define OFT_GCOUNT_IDX(g, b) ((g) * ZN_OFT_GROUP_BUCKETS + (b))
#define OFT_GCOUNTS ((ZN_OFT_MAX_GROUPS + 1) * ZN_OFT_GROUP_BUCKETS)

/* A group (oft_group.c): index g in the table's groups[] (1..255, what an
 * entry's act word names). Control thread. */
struct oft_group {
	uint32_t id;
	uint8_t type;
	unsigned int n_buckets;
	struct zn_oft_bucket bucket[ZN_OFT_GROUP_BUCKETS];
	int chain[ZN_OFT_GROUP_BUCKETS]; /* taken (zn_fdir_chain_take) */
	uint16_t slot_owner[256];        /* bucket per slot (lb.h's) */
	uint32_t ref_count;
	uint64_t created_ns;
	uint64_t base_packets[ZN_OFT_GROUP_BUCKETS]; /* counts at creation */
	uint64_t base_bytes[ZN_OFT_GROUP_BUCKETS];
};

/* A worker's table counters. */
struct oft_wstats {
	uint64_t lookups, matched, punted, punt_drops, no_match;
} __rte_cache_aligned;

/* What workers read (immutable once published; the hash changes in
 * place, lock-free). */
struct zn_oft_view {
	struct rte_hash *hash;
	struct oft_count *cnt[ZN_MAX_WORKERS];
	struct oft_wstats *wst;      /* [worker] */
	struct oft_gview *const *gv; /* [group]: the table's, loaded
				      * atomically (NULL: gone) */
	struct oft_gcount *gcnt[ZN_MAX_WORKERS]; /* [OFT_GCOUNTS] */
	struct rte_ring *punt;       /* elements: struct oft_punt */
	int punt_fd;                 /* eventfd the control thread watches */
	uint32_t *punt_waiting;      /* 1: the control thread was woken */
	bool controller;             /* packet-ins may go; else dropped */
	uint16_t n_sub;
	struct oft_view_sub {
		struct zn_oft_key mask;  /* its `sub` set: the key's */
		uint16_t max_priority;
	} sub[]; /* highest max_priority first */
};

/* A packet for the controller: the mbuf and the entry that sent it. */
struct oft_punt {
	struct rte_mbuf *m;
	uint32_t idx;     /* the entry's counters index */
	uint16_t max_len;
	uint8_t reason;   /* OFPR_NO_MATCH (0) or OFPR_ACTION (1) */
	uint8_t pad;
};

/* A packet-out for the injecting worker: preset chain or NORMAL. */
struct oft_inject {
	struct rte_mbuf *m;
	uint64_t normal; /* 1: through the flow director */
};

struct oft_sub {
	struct zn_oft_key mask;
	uint32_t n;            /* entries (heads and behind) */
	bool published;        /* in the view workers read */
	uint16_t pub_max;      /* its highest priority there (an upper
				* bound: deletes leave it) */
};

struct oft_buffer {
	struct rte_mbuf *m;
	uint32_t id;           /* ((seq << 8) | index), 0 unused */
	uint32_t in_port;
	uint64_t t_ns;
};

struct zn_oft {
	bool on, controller;
	uint32_t capacity;
	struct rte_hash *hash;
	struct zn_oft_entry **by_idx;  /* [capacity] */
	uint32_t *free_idx;            /* stack */
	uint32_t n_free;
	uint32_t active;
	struct oft_sub sub[OFT_MAX_SUBTABLES];
	struct oft_count *cnt[ZN_MAX_WORKERS];
	struct oft_wstats *wst;
	unsigned int n_workers;
	struct zn_oft_view *view;      /* published (NULL: table off) */
	bool view_dirty;               /* a subtable or priority changed */
	bool need_sync;                /* something to free after a sync */
	struct zn_oft_entry *to_free;
	int32_t *pos_to_free;          /* hash key positions */
	uint32_t n_pos_to_free;
	uint64_t removed;              /* entries removed (any reason) */
	/* packet-in / packet-out (oft_io.c) */
	struct rte_ring *punt;
	int punt_fd;                   /* eventfd: a punt is waiting (-1) */
	uint32_t punt_waiting;
	struct rte_ring *inject;       /* to the injecting worker */
	unsigned int inject_worker;
	struct oft_buffer buf[OFT_BUFFERS];
	uint32_t buf_seq;
	/* groups (oft_group.c) */
	struct oft_group *group[ZN_OFT_MAX_GROUPS + 1]; /* [0] unused */
	struct oft_gview *gv[ZN_OFT_MAX_GROUPS + 1];    /* what workers read */
	struct oft_gcount *gcnt[ZN_MAX_WORKERS];
	struct zn_oft_listener listener;
	uint64_t punt_unsent;          /* punted, no one took it by then */
	uint64_t packet_outs;
	int port_chain[ZN_MAX_PORTS]; /* chain [port:p] packet-outs use */
};

/* oft.c */
const struct zn_oft_entry *oft_entry_by_idx(struct zn_mgr *m, uint32_t idx);
/** Look @p key up in the control thread (a packet-out to TABLE): the
 *  entry it hits or NULL; counted as a hit. */
const struct zn_oft_entry *oft_lookup_ctl(struct zn_mgr *m,
					  const struct zn_oft_key *key,
					  uint32_t len);

/* oft_group.c: the groups below the entries (oft.c calls it, not the
 * other way). _find: the index of group @p id, or -ENOENT. _ref, _unref:
 * a flow entry's use. _set: add or replace (modify) one; _remove: gone
 * once no entry uses it (oft.c deleted them). _init, _fini: its memory. */
int oft_group_find(const struct zn_oft *t, uint32_t id);
void oft_group_ref(struct zn_oft *t, unsigned int g);
void oft_group_unref(struct zn_oft *t, unsigned int g);
int oft_group_set(struct zn_mgr *m, const struct zn_oft_group_mod *gm,
		  struct zn_oft_err *e);
void oft_group_remove(struct zn_mgr *m, unsigned int g);
int oft_group_init(struct zn_oft *t);
void oft_group_fini(struct zn_mgr *m);

/* oft_hot.c: a packet's key (what a match can read of it); the
 * highest-priority entry of each of @p n keys (at most 64) in view @p v,
 * or NULL (the workers' lookup; the control thread's for a packet-out to
 * TABLE). */
void oft_key_of(const uint8_t *p, uint32_t len, uint32_t in_port,
		struct zn_oft_key *k);
void oft_search(const struct zn_oft_view *v, const struct zn_oft_key *keys,
		unsigned int n, const struct zn_oft_entry **best);


#endif /* ZN_OFT_PVT_H */
