/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* NSH and its tunnels (lib/common/zn_nsh.c) on any frame: no read past it
 * (ASan: the frame copied to its exact size); a frame taken for NSH has
 * its inner packet inside it, and its NSH written back reads the same
 * (zn_nsh_put and zn_nsh_parse agree on every field); plain VXLAN's
 * inner frame is inside the frame too (zn_vxlan_decap). */
#include <stdlib.h>
#include <string.h>

#include <rte_ether.h>

#include "../lib/common/zn_nsh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = malloc(size ? size : 1);
	uint8_t b[ZN_NSH_BASE_LEN + ZN_NSH_CTX_MAX];
	struct zn_nsh h, g;
	enum zn_nsh_encap e;
	size_t off;
	uint32_t src, vni;
	int n;

	memcpy(copy, data, size);
	if (zn_nsh_decap(copy, size, &e, &h, &off, &src) == 0) {
		if (off > size || e < ZN_NSH_VXLAN_GPE || e > ZN_NSH_ETHERNET)
			abort();
		n = zn_nsh_put(b, sizeof(b), &h);
		if (n != (int)zn_nsh_len(&h) ||
		    zn_nsh_parse(b, (size_t)n, &g) != n ||
		    g.spi != h.spi || g.si != h.si || g.ttl != h.ttl ||
		    g.md_type != h.md_type || g.next_proto != h.next_proto ||
		    g.oam != h.oam || g.ctx_len != h.ctx_len ||
		    memcmp(g.ctx, h.ctx, h.ctx_len) != 0)
			abort();
	}
	if (zn_vxlan_decap(copy, size, &vni, &off, &src) == 0 &&
	    (off + RTE_ETHER_HDR_LEN > size || vni > 0xffffff))
		abort();
	free(copy);
	return 0;
}
