/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_SANDBOX_PVT_H
#define ZN_SANDBOX_PVT_H

/* What sandbox.c (the command line, the PID namespace) takes from
 * sandbox_drivers.c (DPDK's driver directory); no other module. */

#include <stddef.h>

struct zn_mgr;

/** The bwrap options showing DPDK's driver directory with the drivers NFs
 *  need only (worked out once). NULL-terminated; empty when the directory
 *  is to be shown as it is. */
const char *const *zn_sandbox_driver_args(const struct zn_mgr *m);

#endif /* ZN_SANDBOX_PVT_H */
