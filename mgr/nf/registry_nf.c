/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* What the rest of the manager asks the registry of one NF: its state's
 * name, and its process. An NF can write its own slot (ctl.pid with the
 * rest): a signal goes through the pidfd the registry opened when the NF
 * registered, never to a pid read from shared memory. */

#include <errno.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "../core/mgr.h"
#include "../core/event.h"
#include "registry.h"
#include "registry_pvt.h"
#include "sandbox.h"
#include "../tenant/tenant.h"
#include "../datapath/worker.h"
#include "nf_rec.h"

const char *
zn_nf_state_name(uint32_t state)
{
	switch (state) {
	case ZN_NF_FREE:
		return "free";
	case ZN_NF_RUNNING:
		return "running";
	case ZN_NF_STOPPING:
		return "stopping";
	case ZN_NF_RECLAIMING:
		return "reclaiming";
	case ZN_NF_STARTING:
		return "starting";
	default:
		return "?";
	}
}

pid_t
zn_registry_pid(const struct zn_mgr *m, unsigned int slot)
{
	return slot < ZN_MAX_NFS && m->registry != NULL ?
	       m->registry->reg[slot].pid : 0;
}

bool
zn_registry_same_process(const struct zn_mgr *m, unsigned int a,
			 unsigned int b)
{
	pid_t pid = zn_registry_pid(m, a);

	return pid > 0 && pid == zn_registry_pid(m, b) &&
	       zn_slot(m, a)->ctl.start_time == zn_slot(m, b)->ctl.start_time;
}

int
zn_registry_kill(struct zn_mgr *m, unsigned int slot, int sig)
{
	const struct zn_nf_reg *r;

	if (slot >= ZN_MAX_NFS || m->registry == NULL)
		return -EINVAL;
	r = &m->registry->reg[slot];
	if (r->pidfd < 0)
		return -ESRCH; /* gone, and reclaimed */
#ifdef SYS_pidfd_send_signal
	if (syscall(SYS_pidfd_send_signal, r->pidfd, sig, NULL, 0) == 0)
		return 0;
	if (errno != ENOSYS)
		return -errno;
#endif
	/* No pidfd signals (Linux < 5.1): the pid the kernel gave us, while
	 * the pidfd still holds the slot (the pid cannot be reused before
	 * the registry reaps it). */
	return r->pid > 0 && kill(r->pid, sig) == 0 ? 0 : -errno;
}

void
zn_registry_nf_joined(struct zn_mgr *m, unsigned int slot, pid_t pid)
{
	unsigned int t;
	char err[256];

	if (slot >= ZN_MAX_NFS)
		return; /* never: the registry's own slot number */
	t = zn_tenant_of_nf(m, slot);
	m->nf[slot].linked_in = false; /* no link into it yet */
	m->nf[slot].linked_out = false; /* nor out of it */
	if (t == 0 || zn_cgroup_adopt(m, (int)t - 1, pid, err,
				      sizeof(err)) == 0)
		return;
	/* It runs, but its tenant's limits do not hold for it. */
	zn_event("nf.cgroup", "NF in slot %u (pid %d) of tenant '%s' is in "
		 "none of its tenant's cgroups: %s", slot, (int)pid,
		 m->cfg.tenants[t - 1].name, err);
}

/* The worker with the fewest NFs whose TX rings it drains. */
uint16_t
zn_registry_pick_worker(const struct zn_mgr *m)
{
	unsigned int load[ZN_MAX_WORKERS] = { 0 }, best = UINT32_MAX;
	uint16_t pick = 0;

	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		if (zn_nf_state(m, s) != ZN_NF_FREE)
			load[m->nf[s].worker]++;
	for (unsigned int w = 0; w < m->dp.n_workers; w++)
		if (m->dp.workers[w]->tx_role && load[w] < best) {
			best = load[w];
			pick = (uint16_t)w;
		}
	return pick;
}
