/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The DPI and flowmon packet parser (nfs/dpi/dpi_parse.c) on any bytes:
 * the first byte picks the link type, the second whether tunnels are
 * decoded; every pointer it returns lies inside the frame. */
#include <stdlib.h>

#include "../nfs/dpi/dpi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int dlts[] = {
	DPI_DLT_NULL, DPI_DLT_EN10MB, DPI_DLT_RAW, DPI_DLT_RAW_ALT,
	DPI_DLT_C_HDLC, DPI_DLT_LINUX_SLL, DPI_DLT_PPP, DPI_DLT_PPP_SERIAL,
	DPI_DLT_IPV4, DPI_DLT_IPV6, 105, 127, 276, 999,
};

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dpi_pkt pkt = { 0 };
	const uint8_t *f;
	uint32_t n;

	if (size < 2)
		return 0;
	f = data + 2;
	n = (uint32_t)(size - 2);
	(void)dpi_parse(f, n, dlts[data[0] % (sizeof(dlts) / sizeof(dlts[0]))],
			data[1] & 1, &pkt);
	if (pkt.l3 != NULL && (pkt.l3 < f || pkt.l3 + pkt.l3_len > f + n))
		abort();
	return 0;
}
