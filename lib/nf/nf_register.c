/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Registration: the slot made ours (what the previous NF of the slot
 * left reset), REGISTER posted and answered, then the rings found and the
 * parts that use them set up (TX, ports, pool accounting). nf.c calls it
 * once; it calls the messages (nf_msg.c) and those parts, none of which
 * calls back. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_ring.h>

#include "nf_pvt.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_util.h"

static bool
reply_ready(void *arg)
{
	struct zn_nf *nf = arg;

	return __atomic_load_n(&nf->s->ctl.reply_gen, __ATOMIC_ACQUIRE) ==
	       nf->gen;
}

/* Ring @p name in the EAL's memory, or -ENOENT. */
static int
by_name(struct rte_ring **r, const char *fmt, unsigned int i)
{
	char name[RTE_RING_NAMESIZE];

	snprintf(name, sizeof(name), fmt, i);
	*r = rte_ring_lookup(name);
	return *r != NULL ? 0 : -ENOENT;
}

/* Ring @p idx (ZN_HOME_*) of our group's file, checked by the name it
 * was made with (mgr/trust/group_home.c): the layout agrees with the manager's. */
static int
in_home(struct zn_nf *nf, struct rte_ring **r, unsigned int idx,
	uint64_t mem)
{
	char name[RTE_RING_NAMESIZE];

	*r = RTE_PTR_ADD(nf->gva, zn_home_ring_off(idx, mem));
	zn_home_ring_name(name, sizeof(name), nf->group - 1, idx);
	return strncmp((*r)->name, name, sizeof(name)) == 0 ? 0 : -EPROTO;
}

/* Every ring we may use, once: ours, the RX rings of NFs we may hand
 * packets to, the links' (mgr/trust/group_home.c, link.c). In the EAL's memory by
 * name for an NF of no group, where our group's file has them for the
 * others. Never the pointers in zn_shm: any NF can write those. */
static int
find_rings(struct zn_nf *nf)
{
	uint64_t mem;
	int rc = 0;

	if (nf->gva == NULL) {
		for (unsigned int i = 0; i < ZN_MAX_NFS && rc == 0; i++)
			rc = by_name(&nf->peer[i].rx, ZN_NF_RX_RING_FMT, i);
		for (unsigned int l = 0; l < ZN_MAX_LINKS && rc == 0; l++)
			rc = by_name(&nf->link_ring[l], ZN_LINK_RING_FMT, l);
		if (rc == 0)
			rc = by_name(&nf->tx, ZN_NF_TX_RING_FMT, nf->slot);
		nf->rx = nf->peer[nf->slot].rx;
		nf->link_mark = nf->shm->link_mark;
		return rc;
	}
	mem = rte_ring_get_memsize(nf->hdr->ring_size);
	if ((int64_t)mem < 0 || zn_home_len(mem, 1) > nf->glen)
		return -EPROTO;
	for (unsigned int i = 0; i < ZN_MAX_NFS && rc == 0; i++)
		rc = in_home(nf, &nf->peer[i].rx, ZN_HOME_RX(i), mem);
	for (unsigned int l = 0; l < ZN_MAX_LINKS && rc == 0; l++)
		rc = in_home(nf, &nf->link_ring[l], ZN_HOME_LINK(l), mem);
	if (rc == 0)
		rc = in_home(nf, &nf->tx, ZN_HOME_TX(nf->slot), mem);
	if (rc < 0)
		ZN_LOG(ERR, "trust group's rings are not where this library "
		       "looks for them (another build of the manager?)");
	nf->rx = nf->peer[nf->slot].rx;
	nf->link_mark = ((struct zn_group_home *)nf->gva)->link_mark;
	return rc;
}

int
zn_nf_register(struct zn_nf *nf)
{
	struct zn_nf_slot *home = nf->gva != NULL ?
		((struct zn_group_home *)nf->gva)->nfs : nf->shm->nfs;
	struct zn_nf_slot *s = &home[nf->slot];
	uint64_t deadline = zn_now_ns() + ZN_REGISTER_TIMEOUT_NS;
	uint64_t start = 0;
	int rc, reply;

	for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
		nf->peer[i].slot = &home[i];
	nf->s = s;
	/* A previous NF in this slot may have died a moment ago: its lock is
	 * released at once, but the manager must recover what its ledger says
	 * before we reset it. Wait until the manager has freed the slot. */
	while (__atomic_load_n(&s->ctl.state, __ATOMIC_ACQUIRE) != ZN_NF_FREE) {
		if (!zn_nf_mgr_alive(nf))
			return -ENOTCONN;
		if (zn_now_ns() > deadline) {
			ZN_LOG(ERR, "slot %u is still being reclaimed",
			       nf->slot);
			return -EBUSY;
		}
		usleep(5000);
	}
	/* Our own lines, left as the previous NF had them. */
	memset(&s->ledger, 0, sizeof(s->ledger));
	memset(&s->stats, 0, sizeof(s->stats));
	memset(&s->hstats, 0, sizeof(s->hstats));
	memset(s->counters, 0, sizeof(s->counters));
	memset(s->counter_names, 0, sizeof(s->counter_names));
	memset(&s->objs, 0, sizeof(s->objs));
	memset(&s->alloc, 0, sizeof(s->alloc));
	zn_nf_cmd_reset(nf);
	/* In a VM, the process the manager sees as ours is the helper's. */
	if (nf->guest)
		start = nf->owner_start;
	else
		zn_proc_start_time(getpid(), &start);
	s->req.service_id = nf->service_id;
	s->req.group = nf->group;
	s->req.n_counters = 0;
	s->req.tx_ports = nf->tx_ports;
	s->req.pid = nf->guest ? nf->owner_pid : (uint32_t)getpid();
	s->req.start_time = start;
	s->req.leaving = 0;
	s->req.exited = 0;
	zn_strlcpy(s->req.name, nf->name, sizeof(s->req.name));
	/* Past the last answer too: a refused registration (its reply_gen)
	 * moves no ctl.gen, and its answer must not pass for ours. */
	nf->gen = RTE_MAX(__atomic_load_n(&s->ctl.gen, __ATOMIC_ACQUIRE),
			  __atomic_load_n(&s->ctl.reply_gen,
					  __ATOMIC_ACQUIRE)) + 1;
	__atomic_store_n(&s->req.gen, nf->gen, __ATOMIC_RELEASE);

	rc = zn_nf_post_msg(nf, ZN_MSG_REGISTER);
	if (rc < 0) {
		ZN_LOG(ERR, "manager message ring is full");
		return rc;
	}
	while (!reply_ready(nf)) {
		zn_nf_wait(nf, &s->db, reply_ready, nf, 50000);
		if (!reply_ready(nf))
			zn_nf_kick_register(nf);
		if (!zn_nf_mgr_alive(nf)) {
			ZN_LOG(ERR, "manager died during registration");
			return -ENOTCONN;
		}
		if (zn_now_ns() > deadline) {
			ZN_LOG(ERR, "manager did not answer the registration");
			return -ETIMEDOUT;
		}
	}
	reply = s->ctl.reply;
	if (reply < 0) {
		ZN_LOG(ERR, "manager refused registration of service %u: %s%s",
		       nf->service_id, strerror(-reply), reply == -EACCES ?
		       " (another tenant's service, or not one of this NF's "
		       "tenant's: see tenant.list)" : "");
		return reply;
	}
	nf->registered = true;
	rc = find_rings(nf);
	if (rc < 0 || s->ctl.worker >= ZN_MAX_WORKERS)
		return -EPROTO;
	nf->wdb = zn_nf_worker_db(nf, s->ctl.worker);
	if (nf->gva != NULL ? ((struct zn_group_home *)nf->gva)->hdr.qsbr ==
			      NULL : nf->shm->rt.qsbr == NULL)
		return -EPROTO;
	zn_nf_tx_init(nf);
	zn_nf_ports_attach(nf);
	zn_nf_acct_attach(nf);
	ZN_LOG(INFO, "NF '%s' registered with '%s': service %u, instance %u",
	       nf->name, nf->instance, nf->service_id, nf->slot);
	return 0;
}
