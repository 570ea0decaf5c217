/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_ARENA_H
#define ZN_ARENA_H

/* Strings made together and freed together: a sandbox's command line
 * (sandbox.c, sandbox_drivers.c). */

#include <stddef.h>

#define ARENA_SIZE (256 * 1024)

struct zn_arena {
	size_t used;
	char buf[ARENA_SIZE];
};

/** printf into @p a. @return the string, or NULL when @p a is full. */
char *zn_arena_printf(struct zn_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* ZN_ARENA_H */
