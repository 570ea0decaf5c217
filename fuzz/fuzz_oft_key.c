/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The OpenFlow table's packet key (mgr/sdn/oft_hot.c oft_key_of) on any
 * bytes: no read past the end (ASan), and what it fills follows the
 * frame: the subtable byte and padding stay 0, fields of a protocol the
 * frame is not stay 0. */
#include <stdlib.h>
#include <string.h>

#include "../mgr/sdn/oft_pvt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint32_t len = size > 65535 ? 65535 : (uint32_t)size;
	uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees */
	struct zn_oft_key k;

	memcpy(copy, data, len);
	oft_key_of(copy, len, 7, &k);
	free(copy);
	if (k.in_port != 7 || k.sub != 0 || k.pad != 0)
		abort();
	if (len < 14 && (k.eth_type != 0 || k.vlan_vid != 0))
		abort();
	if (k.eth_type != 0x0800 && k.eth_type != 0x86dd &&
	    (k.l4_src != 0 || k.l4_dst != 0 || k.tcp_flags != 0))
		abort();
	if (k.ip_proto != 6 && k.tcp_flags != 0)
		abort();
	return 0;
}
