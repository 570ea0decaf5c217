/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Strings made together and freed together (arena.h). */

#include <stdarg.h>
#include <stdio.h>

#include "arena.h"

char *
zn_arena_printf(struct zn_arena *a, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(a->buf + a->used, ARENA_SIZE - a->used, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= ARENA_SIZE - a->used)
		return NULL;
	a->used += (size_t)n + 1;
	return a->buf + a->used - (size_t)n - 1;
}
