/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_STATS_H
#define ZN_STATS_H

/* Views of the manager as JSON (stats.c): served as the commands status,
 * port.list, nf.list, service.list and stats (registered there), and
 * logged every --stats-interval-s. Control thread only. */

#include <jansson.h>

struct zn_mgr;

json_t *zn_stats_status(struct zn_mgr *m);
json_t *zn_stats_ports(struct zn_mgr *m);
json_t *zn_stats_nfs(struct zn_mgr *m);
json_t *zn_stats_services(struct zn_mgr *m);
json_t *zn_stats_all(struct zn_mgr *m);

#endif /* ZN_STATS_H */
