/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_TEST_XORSHIFT_H
#define ZN_TEST_XORSHIFT_H

/* The test NFs' deterministic pseudo-random numbers (xorshift64). */

#include <stdint.h>

static inline uint64_t
xorshift64(uint64_t *state)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return *state;
}

#endif /* ZN_TEST_XORSHIFT_H */
