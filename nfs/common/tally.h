/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_TALLY_H
#define ZN_TALLY_H

/*
 * Counters an NF keeps locally on its packet thread (plain increments,
 * no shared cache line touched per packet) and publishes as NF counters
 * (zn_nf_counter_add, shown by nf.list) when it chooses: per burst or per
 * tick. What the bundled NFs share; an NF of its own may copy it.
 */

#include <stdint.h>

#include <zeronf/nf.h>

#define TALLY_MAX 32

struct tally {
	unsigned int n;
	int idx[TALLY_MAX];       /* the NF counters */
	uint64_t v[TALLY_MAX];    /* counted here: t->v[C_X]++ */
	uint64_t shown[TALLY_MAX]; /* already added to the NF counters */
};

/** Register @p n counters named @p names (from ops->init).
 *  @return 0, or -ENOSPC / the error of zn_nf_counter_register. */
int tally_register(struct tally *t, struct zn_nf *nf,
		   const char *const *names, unsigned int n);

/** Add what each counter gained since the last call (modulo 2^64: a value
 *  set rather than counted, a gauge, may go down). */
void tally_publish(struct tally *t, struct zn_nf *nf);

#endif /* ZN_TALLY_H */
