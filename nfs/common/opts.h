/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NF_OPTS_H
#define ZN_NF_OPTS_H

/* What the bundled NFs' option parsers share, and their clock. */

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

/** A decimal option value: digits only (no sign, no spaces, "010" is
 *  10), at most @p max. @return 0, or -EINVAL. */
static inline int
opt_dec(const char *s, uint64_t max, uint64_t *out)
{
	char *end;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || *end != '\0' || *out > max ? -EINVAL : 0;
}

/** Monotonic nanoseconds, at the coarse clock's resolution (a few ms):
 *  what timeouts are counted in, read once a burst. */
static inline uint64_t
coarse_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

#endif /* ZN_NF_OPTS_H */
