/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_STATS_H
#define ZN_STATS_H

/* Views of the manager as JSON (stats.c): served as the commands status,
 * port.list, nf.list, service.list and stats (registered there), and
 * logged every --stats-interval-s. Control thread only. */

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

struct zn_mgr;

json_t *zn_stats_status(struct zn_mgr *m);
json_t *zn_stats_ports(struct zn_mgr *m);
/** What OpenFlow reports of port @p i (mgr/sdn/ofp_msgs.c): its name,
 *  MAC, link and speed; packets its workers and NFs received and sent,
 *  drops of what it received; the device's bytes and errors (those with
 *  @p counters only: the rest is cheap enough to look at every second). */
struct zn_port_report {
	char name[64];
	uint8_t mac[6];
	bool link_up;
	uint32_t speed_mbps;
	uint64_t rx, tx, drops;
	uint64_t ibytes, obytes, imissed, ierrors, oerrors;
};
void zn_stats_port_report(struct zn_mgr *m, unsigned int i, bool counters,
			  struct zn_port_report *r);
json_t *zn_stats_nfs(struct zn_mgr *m);
json_t *zn_stats_services(struct zn_mgr *m);
json_t *zn_stats_all(struct zn_mgr *m);

#endif /* ZN_STATS_H */
