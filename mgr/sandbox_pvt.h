/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_SANDBOX_PVT_H
#define ZN_SANDBOX_PVT_H

/* Shared by the sandbox's files (sandbox.c: the command line and the
 * PID namespace, sandbox_drivers.c: DPDK's driver directory) and no
 * other module. */

#include <stddef.h>

struct zn_mgr;

#define ARENA_SIZE (256 * 1024)

/* Strings of one sandbox's command line, freed together. */
struct zn_arena {
	size_t used;
	char buf[ARENA_SIZE];
};

/** printf into @p a. @return the string, or NULL when @p a is full. */
char *zn_arena_printf(struct zn_arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** The bwrap options showing DPDK's driver directory with the drivers NFs
 *  need only (worked out once). NULL-terminated; empty when the directory
 *  is to be shown as it is. */
const char *const *zn_sandbox_driver_args(const struct zn_mgr *m);

#endif /* ZN_SANDBOX_PVT_H */
