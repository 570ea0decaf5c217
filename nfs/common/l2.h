/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_L2_H
#define ZN_L2_H

/* An Ethernet frame's L3: past the header and any 802.1Q / 802.1ad tags,
 * bounds checked (router, monitor, firewall, nat, lb). The dpi and flowmon NFs parse frames
 * the way capture tools do instead (nfs/dpi/dpi_parse.c). */

#include <stdint.h>

#include <rte_ether.h>

#define L2_MAX_TAGS 2 /* QinQ */

struct l2 {
	uint16_t ethertype; /* of the L3 header, host order */
	uint16_t off;       /* where it starts */
	uint8_t tags;       /* VLAN tags passed */
};

/** Walk the first @p len bytes of a frame. @return 0, or -1 if the frame
 *  ends inside its Ethernet header or a tag (a runt). */
static inline int
l2_walk(const uint8_t *p, uint32_t len, struct l2 *l)
{
	uint32_t off = RTE_ETHER_HDR_LEN;
	uint16_t et;

	l->tags = 0;
	if (len < off)
		return -1;
	et = (uint16_t)(p[12] << 8 | p[13]);
	while ((et == RTE_ETHER_TYPE_VLAN || et == RTE_ETHER_TYPE_QINQ) &&
	       l->tags < L2_MAX_TAGS) {
		if (len < off + 4)
			return -1;
		et = (uint16_t)(p[off + 2] << 8 | p[off + 3]);
		off += 4;
		l->tags++;
	}
	l->ethertype = et;
	l->off = (uint16_t)off;
	return 0;
}

#endif /* ZN_L2_H */
