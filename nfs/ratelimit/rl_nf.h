/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_RL_NF_H
#define ZN_RL_NF_H

/* The ratelimit NF's state, shared by its packet path (ratelimit.c) and
 * its commands (rl_cmds.c), both on the NF's one thread; made and freed
 * by rl_state.c. */

#include <stdbool.h>
#include <stdint.h>

#include "rl.h"

struct rte_hash;
struct zn_nf;

/* A flow's, source's or destination's bucket in a class. A hash key:
 * aligned for rte_hash_crc's 8-byte loads. */
struct rl_key {
	_Alignas(8) uint8_t cls;
	uint8_t family, proto, pad;
	uint16_t sport, dport;
	uint8_t src[16], dst[16];
};

struct rl_key_slot {
	struct rl_key key;
	struct rl_bucket b;
	uint64_t seen_ns;   /* its last packet */
	bool used;
};

struct rl_nf {
	struct rl_conf conf;
	struct rte_hash *keys;    /* struct rl_key -> slot index */
	struct rl_key_slot *slot;
	uint32_t *free_list;
	uint32_t n_free, cap, in_use, sweep_next;
};

extern struct rl_nf rl;

/** Read and parse config file @p path into @p conf. @return 0 or
 *  -errno, why in @p err. */
int rl_load(const char *path, struct rl_conf *conf, char *err,
	    size_t errlen);

/** The key table of rl.cap keys, named @p name, tracked for @p nf. */
int rl_keys_create(const char *name, struct zn_nf *nf);
void rl_keys_free(struct zn_nf *nf);
/** What rl_keys_free() frees but the rte_hash, left to the manager,
 *  which is stopping. */
void rl_keys_abandon(void);

/** Forget every key of class @p cls (its per-key rate changed). */
void rl_keys_forget_class(unsigned int cls);

/** Nanoseconds an empty bucket of @p s takes to fill (0: no rate). */
uint64_t rl_refill_ns(const struct rl_spec *s);

/** Serve classes.list and class.set. */
int rl_cmds_register(struct zn_nf *nf);

#endif /* ZN_RL_NF_H */
