/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The load balancer's Maglev table (nfs/lb/maglev.c) on any set of
 * backends: names, weights and health from the input (a byte: the
 * table size's choice; then per backend a byte of weight and health and
 * a name of up to 15 bytes). Every entry names a backend that is up, or
 * none when none is; every backend up gets entries. (Its packet path is
 * the NAT's reader and rewriter: fuzz_nat.c.) */
#include <stdlib.h>
#include <string.h>

#include "../nfs/lb/maglev.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t sizes[] = { 7, 251, 4099, 65537 };
	static char names[64][16];
	struct maglev_backend b[64];
	static uint32_t got[64];
	unsigned int n = 0;
	struct maglev mg;
	bool any = false;

	if (size < 1 || maglev_init(&mg, sizes[data[0] % 4]) < 0)
		return 0;
	data++;
	size--;
	while (size >= 2 && n < 64) {
		size_t l = data[1] % 16;

		if (l > size - 2)
			l = size - 2;
		memcpy(names[n], data + 2, l);
		names[n][l] = '\0';
		b[n] = (struct maglev_backend){ names[n], data[0] % 101,
						(data[0] & 0x80) == 0 };
		any |= b[n].up && b[n].weight > 0;
		data += 2 + l;
		size -= 2 + l;
		n++;
	}
	maglev_populate(&mg, b, n);
	memset(got, 0, sizeof(got));
	for (uint32_t i = 0; i < mg.m; i++) {
		uint16_t e = mg.table[i];

		if (!any ? e != MAGLEV_NONE :
			   e >= n || !b[e].up || b[e].weight == 0)
			abort();
		if (e != MAGLEV_NONE)
			got[e]++;
	}
	for (unsigned int i = 0; any && mg.m >= 64 * 100 && i < n; i++)
		if (b[i].up && b[i].weight > 0 && got[i] == 0)
			abort();
	maglev_free(&mg);
	return 0;
}
