/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Maglev's lookup table (maglev.h): the paper's population algorithm
 * (its Pseudocode 1), with weights as turns. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "maglev.h"

bool
maglev_is_prime(uint32_t m)
{
	if (m < 2)
		return false;
	for (uint32_t d = 2; (uint64_t)d * d <= m; d++)
		if (m % d == 0)
			return false;
	return true;
}

int
maglev_init(struct maglev *mg, uint32_t m)
{
	memset(mg, 0, sizeof(*mg));
	if (m < 7 || !maglev_is_prime(m))
		return -EINVAL;
	mg->m = m;
	mg->table = malloc(m * sizeof(*mg->table));
	mg->next = malloc(MAGLEV_MAX_BACKENDS * sizeof(*mg->next));
	if (mg->table == NULL || mg->next == NULL) {
		maglev_free(mg);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < m; i++)
		mg->table[i] = MAGLEV_NONE;
	return 0;
}

void
maglev_free(struct maglev *mg)
{
	free(mg->table);
	free(mg->next);
	memset(mg, 0, sizeof(*mg));
}

/* FNV-1a, 64 bits, from @p seed: the two hashes a backend's permutation
 * comes from. */
static uint64_t
fnv1a(const char *s, uint64_t seed)
{
	uint64_t h = seed;

	for (; *s != '\0'; s++) {
		h ^= (uint8_t)*s;
		h *= 0x100000001b3ull;
	}
	return h;
}

void
maglev_populate(struct maglev *mg, const struct maglev_backend *b,
		unsigned int n)
{
	uint32_t m = mg->m, filled = 0;
	uint64_t offset[MAGLEV_MAX_BACKENDS], skip[MAGLEV_MAX_BACKENDS];
	bool any = false;

	if (n > MAGLEV_MAX_BACKENDS)
		n = MAGLEV_MAX_BACKENDS;
	for (uint32_t i = 0; i < m; i++)
		mg->table[i] = MAGLEV_NONE;
	for (unsigned int i = 0; i < n; i++) {
		offset[i] = fnv1a(b[i].name, 0xcbf29ce484222325ull) % m;
		skip[i] = fnv1a(b[i].name, 0x84222325cbf29ce4ull) % (m - 1) +
			  1;
		mg->next[i] = 0;
		any |= b[i].up && b[i].weight > 0;
	}
	if (!any)
		return;
	while (filled < m) {
		for (unsigned int i = 0; i < n && filled < m; i++) {
			if (!b[i].up)
				continue;
			for (uint32_t w = 0; w < b[i].weight && filled < m;
			     w++) {
				uint64_t c;

				/* its next preferred entry still free */
				do {
					c = (offset[i] + mg->next[i] *
					     skip[i]) % m;
					mg->next[i]++;
				} while (mg->table[c] != MAGLEV_NONE);
				mg->table[c] = (uint16_t)i;
				filled++;
			}
		}
	}
}

static uint32_t
fmix(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

uint32_t
maglev_flow_hash(uint32_t src, uint32_t dst, uint16_t sport,
		 uint16_t dport, uint8_t proto)
{
	uint32_t h = fmix(src ^ 0x9e3779b9u);

	h = fmix(h ^ dst);
	h = fmix(h ^ ((uint32_t)sport << 16 | dport));
	return fmix(h ^ proto);
}
