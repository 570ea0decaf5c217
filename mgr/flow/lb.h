/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LB_H
#define ZN_LB_H

/* Load balancing across the replicas of a service (lb.c): per-service
 * mode and weights; the service.set command. A source of the routing
 * snapshot (route.h) after the flow director: it fills each snapshot's
 * services, and republishes after a change. Control thread only. */

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <rte_common.h>

#include "../../lib/shm/zn_shm.h"

struct zn_mgr;
struct zn_route;


/** Set a service's mode and weights (weights[slot], 0: default 1). */
int zn_lb_set(struct zn_mgr *m, uint16_t svc, enum zn_lb_mode mode,
	      const uint16_t *weights, char *err, size_t errlen);
json_t *zn_lb_json(struct zn_mgr *m, uint16_t svc);
const char *zn_lb_mode_name(unsigned int mode);
int zn_lb_mode_parse(const char *s);

#define ZN_LB_NONE 0xffff /* bucket without an owner */

/**
 * Give the ZN_LB_BUCKETS buckets to the @p n instances @p inst in
 * proportion to @p weight, keeping every bucket whose owner is still a
 * member and within its share. Pure (unit-tested).
 * @return buckets that changed from one owner to another.
 */
unsigned int zn_lb_buckets_assign(uint16_t *bucket, const uint16_t *inst,
				  const uint32_t *weight, unsigned int n);

#endif /* ZN_LB_H */
