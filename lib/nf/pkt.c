/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include <zeronf/pkt.h>

#include "nf_pvt.h"
#include "../common/zn_flow.h"

/* Set once per process: by zn_nf_open() in an NF, at start in the manager;
 * -1 (invalid) before that. */
int ZN_API zn_pkt_meta_offset = -1;

uint32_t ZN_API
zn_pkt_flow_hash_compute(struct rte_mbuf *m)
{
	uint32_t h = zn_flow_hash_sw(m);

	zn_pkt_set_flow_hash(m, h);
	return h;
}
