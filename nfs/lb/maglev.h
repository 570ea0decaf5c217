/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_MAGLEV_H
#define ZN_MAGLEV_H

/*
 * Maglev consistent hashing (Eisenbud et al., "Maglev: A Fast and
 * Reliable Software Network Load Balancer", NSDI 2016, section 3.4): a
 * lookup table of M entries (M prime) filled from each backend's
 * permutation of the table (offset and skip from two hashes of its name),
 * the backends taking turns, so that each gets M/N entries (within one)
 * and a backend leaving moves few flows of the others. Weights: a
 * backend of weight w takes w entries a turn. No DPDK: the unit tests
 * measure it alone (tests/unit/test_maglev.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAGLEV_NONE 0xffff
#define MAGLEV_M_DEFAULT 65537 /* the paper's table size */
#define MAGLEV_MAX_BACKENDS 4096

struct maglev_backend {
	const char *name;   /* what its permutation is drawn from */
	uint32_t weight;    /* entries a turn, 1..100 */
	bool up;            /* down: no entry */
};

struct maglev {
	uint32_t m;
	uint16_t *table;    /* backend index, or MAGLEV_NONE (none up) */
	uint32_t *next;     /* scratch: each backend's place in its list */
};

/** A table of @p m entries (@p m prime, >= 7). @return 0 or -errno. */
int maglev_init(struct maglev *mg, uint32_t m);
void maglev_free(struct maglev *mg);

/** Fill the table from @p n backends (those up). */
void maglev_populate(struct maglev *mg, const struct maglev_backend *b,
		     unsigned int n);

static inline uint16_t
maglev_lookup(const struct maglev *mg, uint32_t hash)
{
	return mg->table[hash % mg->m];
}

/** Whether @p m is prime. */
bool maglev_is_prime(uint32_t m);

/** A flow's hash: its protocol, addresses and ports (as they come, not
 *  direction-free), mixed (murmur3's finaliser). */
uint32_t maglev_flow_hash(uint32_t src, uint32_t dst, uint16_t sport,
			  uint16_t dport, uint8_t proto);

#endif /* ZN_MAGLEV_H */
