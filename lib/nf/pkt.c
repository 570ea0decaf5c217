/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include <zeronf/pkt.h>

#include "nf_pvt.h"
#include "../common/zn_flow.h"

/* Set once per process: by zn_nf_open() in an NF, at start in the manager;
 * -1 (invalid) before that. */
int ZN_API zn_pkt_meta_offset = -1;

static zn_flow_reader_fn flow_reader;

void ZN_API
zn_flow_set_reader(zn_flow_reader_fn fn)
{
	flow_reader = fn;
}

uint32_t ZN_API
zn_pkt_flow_hash_compute(struct rte_mbuf *m)
{
	const uint8_t *p;
	uint32_t h, len;

	if (flow_reader == NULL) {
		h = zn_flow_hash_sw(m);
	} else {
		p = flow_reader(m, &len);
		h = p != NULL ? zn_flow_hash_raw(p, len) : 0;
	}

	zn_pkt_set_flow_hash(m, h);
	return h;
}
