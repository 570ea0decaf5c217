/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_TELEMETRY_H
#define ZN_TELEMETRY_H

/* DPDK telemetry (telemetry.c): /zeronf/... commands on the instance's
 * dpdk_telemetry.v2 socket, answered by running control commands
 * (cmd.h) on the control thread. */

struct zn_mgr;


#endif /* ZN_TELEMETRY_H */
