/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The flow director's flow-key parser (lib/common/zn_flow.c) on any
 * bytes: the fast path and the general walk must agree, and the hash of
 * a key equals the hash of its reverse (symmetric). */
#include <stdlib.h>
#include <string.h>

#include "../lib/common/zn_flow.h"
#include <zeronf/flow.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zn_flow_key a, b, r;
	uint32_t len = size > 65535 ? 65535 : (uint32_t)size;
	int ra, rb;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	ra = zn_flow_parse(data, len, &a);
	rb = zn_flow_parse_walk(data, len, &b);
	if (ra != rb || (ra == 0 && memcmp(&a, &b, sizeof(a)) != 0))
		abort();
	if (ra == 0) {
		zn_flow_key_reverse(&a, &r);
		if (zn_flow_key_hash(&a) != zn_flow_key_hash(&r))
			abort();
		(void)zn_flow_hash_raw(data, len);
	}
	return 0;
}
