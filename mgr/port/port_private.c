/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The manager's ports are its own: no secondary process probes them.
 *
 * A DPDK secondary's vdev bus scan asks the primary for its virtual
 * devices over the multi-process channel ("bus_vdev_mp") and then probes
 * each one itself. For most PMDs that probe is not harmless: net_pcap in a
 * secondary re-parses its arguments from the primary's private data, cut
 * to 63 characters, and opens rx/tx pcap files again (a tx_pcap is opened
 * for writing: truncated; a cut path may even name the input capture, or a
 * cut "infinite_rx" makes it call strtol(NULL)); net_tap pulls queue fds
 * into the secondary. NFs never drive ports, so the manager answers that
 * request itself with an empty list: a secondary then probes nothing.
 *
 * The reply mirrors the vdev bus's message (drivers/bus/vdev/vdev.c in
 * DPDK 22.11: struct vdev_param, types 1 = request, 3 = reply); the
 * secondary only reads the count. The action is registered before
 * rte_eal_init() so that no request is ever answered by the bus's own
 * handler: the bus's registration then fails with EEXIST, which it
 * accepts. Should that ever fail, it is swapped in after init, before the
 * instance is marked ready (NFs wait for ready before their EAL init).
 */

#include <errno.h>
#include <string.h>

#include <rte_dev.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_string_fns.h>

#include "../core/mgr.h"
#include "port.h"
#include "../../lib/common/zn_util.h"

#define VDEV_MP_KEY "bus_vdev_mp"
#define VDEV_SCAN_REQ 1
#define VDEV_SCAN_REP 3

struct vdev_param {
	int type;
	int num;
	char name[RTE_DEV_NAME_MAX_LEN];
};

static bool private_early;
static uint64_t scans_refused;

static int
vdev_scan_refuse(const struct rte_mp_msg *msg, const void *peer)
{
	const struct vdev_param *in = (const void *)msg->param;
	struct rte_mp_msg resp;
	struct vdev_param *out = (void *)resp.param;

	if (msg->len_param < (int)sizeof(in->type) ||
	    in->type != VDEV_SCAN_REQ)
		return 0;
	memset(&resp, 0, sizeof(resp));
	strlcpy(resp.name, VDEV_MP_KEY, sizeof(resp.name));
	resp.len_param = sizeof(*out);
	out->type = VDEV_SCAN_REP;
	out->num = 0;
	__atomic_fetch_add(&scans_refused, 1, __ATOMIC_RELAXED);
	if (rte_mp_reply(&resp, peer) < 0)
		ZN_LOG(WARNING, "cannot answer a secondary's device scan: %s",
		       rte_strerror(rte_errno));
	return 0;
}

void
zn_ports_private_early(void)
{
	private_early = rte_mp_action_register(VDEV_MP_KEY,
					       vdev_scan_refuse) == 0;
}

int
zn_ports_private_late(void)
{
	if (private_early)
		return 0;
	rte_mp_action_unregister(VDEV_MP_KEY);
	if (rte_mp_action_register(VDEV_MP_KEY, vdev_scan_refuse) < 0) {
		ZN_LOG(ERR, "cannot keep the ports from secondary processes: "
		       "%s", rte_strerror(rte_errno));
		return -rte_errno;
	}
	return 0;
}

uint64_t
zn_ports_scans_refused(void)
{
	return __atomic_load_n(&scans_refused, __ATOMIC_RELAXED);
}
