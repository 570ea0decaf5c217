/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LB_H
#define ZN_LB_H

/* Replica load balancing (lb.c) beyond what mgr.h declares. */

#include <stdint.h>

#include "mgr.h"

#define ZN_LB_NONE 0xffff /* bucket without an owner */

/**
 * Give the ZN_LB_BUCKETS buckets to the @p n instances @p inst in
 * proportion to @p weight, keeping every bucket whose owner is still a
 * member and within its share. Pure (unit-tested).
 * @return buckets that changed from one owner to another.
 */
unsigned int zn_lb_buckets_assign(uint16_t *bucket, const uint16_t *inst,
				  const uint32_t *weight, unsigned int n);

/** An instance left: its weight goes back to the default. */
void zn_lb_forget(struct zn_mgr *m, unsigned int slot);

#endif /* ZN_LB_H */
