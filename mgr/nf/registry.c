/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * NF registry (control thread only). Long: a slot's state machine
 * (register, run, stop, reclaim) kept whole.
 *
 * Life of a slot:  FREE --REGISTER--> RUNNING --stop/LEAVE--> STOPPING
 *                  RUNNING/STOPPING --exit or death--> RECLAIMING --> FREE
 *
 * - REGISTER (message ring): validate, create/reset the slot's rings, watch
 *   the NF's pidfd, publish routing, reply in the slot.
 * - stop (control socket, NF's LEAVE, shutdown): stop routing to the NF,
 *   wait for RCU, then set ctl.stop; the NF drains its RX ring and exits.
 *   Nothing is lost.
 * - exit or death (pidfd readable, watched in the control loop): stop routing,
 *   recover what it held (ledger, and what it allocated and kept, its
 *   lcore's mempool cache flushed: pool_acct.h), free its RX ring, keep
 *   draining its TX ring (those packets were processed and go on), then
 *   free the slot. Every packet lost is counted as "nf_exit".
 */

#include <errno.h>
#include <sys/file.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/epoll.h>
#include <sys/socket.h>

#include <rte_lcore.h>
#include <rte_mempool.h>
#include <rte_rcu_qsbr.h>
#include <rte_ring.h>

#include "../core/event.h"
#include "../flow/fdir.h"
#include "../core/instance.h"
#include "link.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "pool_acct.h"
#include "pool_repair.h"
#include "../port/port.h"
#include "../trust/group.h"
#include "../trust/group_home.h"
#include "registry.h"
#include "../tenant/tenant.h"
#include "registry_pvt.h"
#include "../trust/ring_guard.h"
#include "../flow/route.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/shm/zn_kick.h"
#include "nf_rec.h"
#include "../core/subsys.h"

#define STOP_WARN_NS (5ULL * 1000 * 1000 * 1000)
#define CRED_WAIT_NS (2ULL * 1000 * 1000 * 1000)

static void on_pidfd(void *arg, uint32_t events);

/* The slot's state: ours, then the NF's copy (release: what it is told
 * before, it sees). */
static void
set_state(struct zn_mgr *m, unsigned int slot, uint32_t st)
{
	__atomic_store_n(&m->nf[slot].state, st, __ATOMIC_RELEASE);
	__atomic_store_n(&zn_slot(m, slot)->ctl.state, st, __ATOMIC_RELEASE);
}

/* All NF rings are made at start: no hugepage memory is allocated (and
 * synchronised with every secondary) while NFs come and go. */
static void on_wake(void *arg);

/* Set up the slots' rings, the kick socket, and register with the loop
 *  (m->loop). 0 or -errno. */
static int
zn_registry_init(struct zn_mgr *m)
{
	char name[RTE_RING_NAMESIZE];
	int socket = (int)rte_socket_id(), rc;

	m->registry = calloc(1, sizeof(*m->registry));
	if (m->registry == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i <= ZN_MAX_GROUPS; i++)
		m->registry->kick[i].fd = -1;
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++) {
		m->registry->reg[slot] = (struct zn_nf_reg){
			.m = m, .slot = slot, .pidfd = -1,
			.reclaim_lock = -1 };
		snprintf(name, sizeof(name), ZN_NF_RX_RING_FMT, slot);
		/* Workers enqueue (MP); the NF alone dequeues, with the peek
		 * API, which needs a single-consumer ring. */
		m->nf[slot].where.rx = rte_ring_create(name, m->cfg.ring_size,
						       socket, RING_F_SC_DEQ);
		snprintf(name, sizeof(name), ZN_NF_TX_RING_FMT, slot);
		m->nf[slot].tx = rte_ring_create(name, m->cfg.ring_size,
						 socket,
						 RING_F_SP_ENQ | RING_F_SC_DEQ);
		m->shm->rt.nf_rx[slot] = m->nf[slot].where.rx;
		m->shm->rt.nf_tx[slot] = m->nf[slot].tx;
		if (m->nf[slot].where.rx == NULL || m->nf[slot].tx == NULL) {
			ZN_LOG(ERR, "cannot create NF rings of %u entries "
			       "(raise --mem or lower --ring-size)",
			       m->cfg.ring_size);
			return -ENOMEM;
		}
	}
	rc = zn_registry_kick_open(m);
	if (rc == 0)
		rc = zn_loop_on_wake(m->loop, on_wake, m);
	return rc;
}

static void
zn_registry_fini(struct zn_mgr *m)
{
	struct zn_registry *r = m->registry;

	if (r == NULL)
		return;
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++) {
		if (r->reg[slot].pidfd >= 0) {
			zn_loop_unwatch(m->loop, r->reg[slot].pidfd);
			close(r->reg[slot].pidfd);
		}
		if (r->reg[slot].reclaim_lock >= 0)
			close(r->reg[slot].reclaim_lock);
	}
	zn_registry_kick_close(m);
	free(r);
	m->registry = NULL;
}


/* The answer goes to the home the request was written in (group_home.c). */
static void
reply(struct zn_mgr *m, struct zn_nf_slot *s, uint32_t gen, int rc)
{
	s->ctl.reply = rc;
	__atomic_store_n(&s->ctl.reply_gen, gen, __ATOMIC_RELEASE);
	zn_db_ring(&s->db);
	if (rc < 0)
		m->shm->mgr.nf_rejected++;
}

/* Registered and not leaving: RUNNING, or STARTING (running ops->init). */
static inline bool
nf_live(uint32_t state)
{
	return state == ZN_NF_RUNNING || state == ZN_NF_STARTING;
}

static unsigned int
service_instances(const struct zn_mgr *m, uint16_t svc)
{
	unsigned int n = 0;

	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		if (nf_live(zn_nf_state(m, s)) &&
		    zn_slot(m, s)->ctl.service_id == svc)
			n++;
	return n;
}

static void
do_register(struct zn_mgr *m, unsigned int slot, uint32_t gen, uint8_t grp)
{
	struct zn_group *g = zn_group_by_id(m, grp);
	/* in the home of the group the request says (none: no such group) */
	struct zn_nf_slot *s = grp == 0 || g != NULL ?
			       zn_group_home_slot(m, g, slot) : NULL;
	struct zn_nf_reg *reg = &m->registry->reg[slot];
	struct zn_nf_cred *cred;
	char name[ZN_NAME_LEN], name_err[128];
	uint32_t group;
	uint16_t svc;
	pid_t pid;
	int pidfd, rc;

	if (s == NULL || __atomic_load_n(&s->req.gen, __ATOMIC_ACQUIRE) != gen)
		return; /* superseded request, or no such group's home */
	svc = s->req.service_id;
	/* As the kernel told the group's own kick socket (registry_kick.c) */
	cred = &m->registry->cred[grp][slot];
	if (zn_nf_state(m, slot) != ZN_NF_FREE) {
		reg->pending = true; /* retried once the slot is free */
		reg->pending_gen = gen;
		reg->pending_group = grp;
		return;
	}
	if (!cred->valid || cred->gen != gen) {
		/* Its kick (the NF resends it) is not read yet. */
		uint64_t now = zn_now_ns();

		if (!reg->pending || reg->pending_gen != gen)
			reg->cred_wait_ns = now;
		reg->pending = true;
		reg->pending_gen = gen;
		reg->pending_group = grp;
		if (now - reg->cred_wait_ns < CRED_WAIT_NS)
			return;
		reg->pending = false;
		ZN_LOG(WARNING, "NF in slot %u: registration without "
		       "credentials (no kick from it)", slot);
		reply(m, s, gen, -EPERM);
		return;
	}
	pid = cred->pid;
	cred->valid = false;
	reg->pending = false;
	zn_strlcpy(name, s->req.name, sizeof(name));
	for (const char *c = name; *c != '\0'; c++)
		if (*c < 0x20 || *c > 0x7e) {
			reply(m, s, gen, -EINVAL); /* shown in JSON */
			return;
		}
	if (m->shm->mgr.stopping) {
		reply(m, s, gen, -ESHUTDOWN);
		return;
	}
	if (svc == 0 || svc >= ZN_MAX_SERVICES) {
		ZN_LOG(WARNING, "NF '%s' (pid %d): bad service id %u", name,
		       (int)pid, svc);
		reply(m, s, gen, -EINVAL);
		return;
	}
	/* Read once: the NF can rewrite its request at any time. */
	group = __atomic_load_n(&s->req.group, __ATOMIC_RELAXED);
	if (!zn_group_valid(m, group) || group != grp) {
		ZN_LOG(WARNING, "NF '%s' (pid %d): no trust group %u", name,
		       (int)pid, group);
		reply(m, s, gen, -ENOENT);
		return;
	}
	if (!zn_tenant_svc_ok(m, group, svc, name_err, sizeof(name_err))) {
		ZN_LOG(WARNING, "NF '%s': %s", name, name_err);
		reply(m, s, gen, -EACCES);
		return;
	}
	if (service_instances(m, svc) >= ZN_MAX_REPLICAS) {
		ZN_LOG(WARNING, "NF '%s': service %u already has %d instances",
		       name, svc, ZN_MAX_REPLICAS);
		reply(m, s, gen, -ENOSPC);
		return;
	}
	if (!zn_proc_alive(pid, s->req.start_time)) {
		reply(m, s, gen, -ESRCH);
		return;
	}
	pidfd = zn_pidfd_open(pid);
	if (pidfd < 0) {
		reply(m, s, gen, pidfd);
		return;
	}
	/* Nobody uses a FREE slot's rings; they are empty after a reclaim.
	 * The slot and its rings are now those of its group's home. */
	zn_group_home_move(m, slot, g); /* the group checked: group == grp */
	zn_rguard_reset(&m->nf[slot].rx_guard);
	zn_rguard_reset(&m->nf[slot].tx_guard);
	rc = zn_loop_watch(m->loop, pidfd, EPOLLIN, on_pidfd,
			   &m->registry->reg[slot]);
	if (rc < 0) {
		close(pidfd);
		ZN_LOG(ERR, "NF '%s': cannot set up slot %u: %s", name, slot,
		       strerror(-rc));
		reply(m, s, gen, rc);
		return;
	}
	memset(&s->mstats, 0, sizeof(s->mstats));
	memset(&s->links, 0, sizeof(s->links));
	s->exit_drops = 0;
	m->nf[slot].group = g;
	zn_registry_nf_joined(m, slot, pid); /* links, tenant cgroup */
	zn_route_reader_add(m, slot);
	*reg = (struct zn_nf_reg){ .m = m, .slot = slot, .pidfd = pidfd,
				   .reclaim_lock = -1 };

	s->ctl.service_id = svc;
	s->ctl.worker = m->nf[slot].worker = zn_registry_pick_worker(m);
	s->ctl.pid = (uint32_t)pid;
	m->registry->reg[slot].pid = pid; /* what signals go to */
	s->ctl.ns_pid = s->req.pid;
	s->ctl.start_time = s->req.start_time;
	s->ctl.registered_ns = zn_now_ns();
	s->ctl.group = group;
	s->ctl.pool_quota = zn_pool_acct_quota(m, group);
	s->ctl.stop = 0;
	zn_strlcpy(s->ctl.name, name, sizeof(s->ctl.name));
	zn_port_nftx_assign(m, slot); /* its name said in its events */
	s->ctl.gen = m->nf[slot].gen = gen;
	/* Not a member of its service until its init is done (READY): a
	 * replica that is slow to start must not hold packets (and, with
	 * backpressure, stall the port), one whose init fails must not drop
	 * any. Its TX ring is drained from now on (init may send). */
	set_state(m, slot, ZN_NF_STARTING);
	zn_route_publish(m);
	m->shm->mgr.nf_registered++;
	reply(m, s, gen, 0);
	zn_event("nf.registered", "NF '%s' (pid %d): service %u, instance %u, "
		 "worker %u", name, (int)pid, svc, slot, m->nf[slot].worker);
}

static void
do_ready(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);

	if (zn_nf_state(m, slot) != ZN_NF_STARTING)
		return; /* stopped or died meanwhile */
	set_state(m, slot, ZN_NF_RUNNING);
	zn_route_publish(m);
	zn_db_ring(&s->db); /* the NF waits for this */
	ZN_LOG(INFO, "NF '%s' (instance %u) joined service %u", s->ctl.name,
	       slot, s->ctl.service_id);
}

/* Stop routing to the NF, then tell it to drain and exit. */
static void
begin_stop(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	struct zn_nf_reg *reg = &m->registry->reg[slot];

	if (!nf_live(zn_nf_state(m, slot)))
		return;
	set_state(m, slot, ZN_NF_STOPPING);
	zn_route_publish(m); /* returns once no worker can send to it */
	__atomic_store_n(&s->ctl.stop, 1, __ATOMIC_RELEASE);
	zn_db_ring(&s->db);
	reg->stop_sent = true;
	reg->stop_asked_ns = zn_now_ns();
	ZN_LOG(INFO, "NF '%s' (instance %u) is stopping", s->ctl.name, slot);
}

/* The NF can no longer touch its rings or ledger (it exited or died);
 * its links reclaimed now, or by the caller (@p later_links). */
static void
begin_reclaim(struct zn_mgr *m, unsigned int slot, bool died,
	      bool later_links)
{
	struct zn_nf_slot *s = zn_slot(m, slot);
	struct zn_nf_reg *reg = &m->registry->reg[slot];

	if (!nf_live(zn_nf_state(m, slot)) &&
	    zn_nf_state(m, slot) != ZN_NF_STOPPING)
		return;
	zn_pool_repair_nf(m, slot); /* first: NFs waiting on it hold up RCU */
	zn_port_nfrx_repair(m, slot); /* before its RX queues change hands */
	/* Its packet thread no longer runs: whatever RCU state it left. */
	zn_route_reader_del(m, slot);
	set_state(m, slot, ZN_NF_RECLAIMING);
	zn_route_publish(m); /* nobody sends to its RX ring or links now */

	zn_reclaim_nf(m, slot, later_links);
	if (reg->pidfd >= 0) {
		zn_loop_unwatch(m->loop, reg->pidfd);
		close(reg->pidfd);
		reg->pidfd = -1;
	}
	/* The NF's lock on the slot went with it. Hold it until the slot is
	 * free, so that an NF starting meanwhile takes another slot instead
	 * of waiting for this one (the wait ran past 5 s under churn). */
	if (reg->reclaim_lock < 0) {
		char path[PATH_MAX], file[32];

		snprintf(file, sizeof(file), ZN_SLOT_LOCK_FMT, slot);
		if (zn_runtime_path(m->cfg.instance, file, path,
				    sizeof(path)) == 0)
			reg->reclaim_lock = zn_lock_file(path, LOCK_EX);
	}
	m->registry->exiting[slot].pid = m->registry->reg[slot].pid;
	m->registry->exiting[slot].ns_pid = (pid_t)s->ctl.ns_pid;
	m->registry->exiting[slot].start = s->ctl.start_time;
	if (died) {
		m->shm->mgr.nf_died++;
		ZN_LOG(WARNING, "NF '%s' (pid %u, instance %u) died; %" PRIu64
		       " packets it held or was sent are lost (nf_exit)",
		       s->ctl.name, s->ctl.pid, slot, s->exit_drops);
		zn_event("nf.died", "NF '%s' (pid %u, instance %u): %" PRIu64
			 " packets lost", s->ctl.name, s->ctl.pid, slot,
			 s->exit_drops);
	} else {
		m->shm->mgr.nf_exited++;
		zn_event("nf.left", "NF '%s' (instance %u)", s->ctl.name,
			 slot);
	}
}

/* Free the slot once its TX ring and the worker's stage are empty. */
static void
try_finish(struct zn_mgr *m, unsigned int slot)
{
	struct zn_nf_slot *s = zn_slot(m, slot);

	if (zn_nf_tx_count(m, slot) != 0 || s->mstats.staged != 0)
		return;
	/* A worker may be between dequeuing the ring and recording what it
	 * staged: once every worker passed a quiescent state it is not. */
	zn_route_sync(m);
	if (zn_nf_tx_count(m, slot) != 0 || s->mstats.staged != 0)
		return;
	/* Drops the NF decided itself (stalled) stay in the totals. */
	for (unsigned int r = 0; r < ZN_DROP_MAX; r++)
		m->shm->mgr.drops[r] += s->hstats.drops[r];
	zn_port_nftx_release(m, slot);
	/* A home not in use waits for no one (in_loop, lib/nf/nf_tx.c) */
	s->hstats.blocked_on = s->mstats.blocked_on = 0;
	set_state(m, slot, ZN_NF_FREE);
	zn_route_publish(m); /* lb forgets the slot's weight */
	zn_pool_acct_nf_caches(m, slot); /* the next NF's lcore id */
	if (m->registry->reg[slot].reclaim_lock >= 0)
		close(m->registry->reg[slot].reclaim_lock);
	m->registry->reg[slot] = (struct zn_nf_reg){ .m = m, .slot = slot,
						     .pidfd = -1,
						     .reclaim_lock = -1 };
}

/* A message of an NF (from the ring or the kick socket): every field is
 * the NF's word, checked. */
static void
handle_msg(struct zn_mgr *m, const struct zn_msg *msg)
{
	struct zn_nf_slot *s;
	bool ours;

	if (msg->slot >= ZN_MAX_NFS) {
		zn_registry_bad_msg(m, "slot", msg->slot);
		return;
	}
	s = zn_slot(m, msg->slot);
	/* From the NF registered there: generations count per home, so the
	 * group tells an earlier NF of another group apart */
	ours = m->nf[msg->slot].gen == msg->gen &&
	       zn_group_id(m->nf[msg->slot].group) == msg->group;
	switch (msg->type) {
	case ZN_MSG_REGISTER:
		do_register(m, msg->slot, msg->gen, msg->group);
		break;
	case ZN_MSG_LEAVE:
		if (ours)
			begin_stop(m, msg->slot);
		break;
	case ZN_MSG_READY:
		if (ours)
			do_ready(m, msg->slot);
		break;
	case ZN_MSG_LINK:
		if (ours)
			zn_link_request(m, msg->slot);
		break;
	case ZN_MSG_STEER:
		/* Only from a registered NF of this generation; the answer
		 * goes to the request's own generation. */
		if (!ours || !nf_live(zn_nf_state(m, msg->slot)))
			break;
		s->steer_reply.rc = zn_registry_steer_allowed(m, msg->slot) ?
				    zn_fdir_steer(m, msg->slot) : -EBUSY;
		__atomic_store_n(&s->steer_reply.gen, s->steer.gen,
				 __ATOMIC_RELEASE);
		zn_db_ring(&s->db);
		break;
	default:
		zn_registry_bad_msg(m, "type", msg->type);
		break;
	}
}

static void
handle_msgs(struct zn_mgr *m)
{
	struct zn_msg msg[32];
	unsigned int n;

	/* The ring is in the EAL's memory: NFs of no group's only (an NF
	 * of a group sends on its group's kick socket) */
	while ((n = zn_registry_ring_msgs(m, msg, RTE_DIM(msg))) > 0)
		for (unsigned int i = 0; i < n; i++)
			if (msg[i].group == 0)
				handle_msg(m, &msg[i]);
	for (unsigned int i = 0; i <= ZN_MAX_GROUPS; i++) {
		struct zn_kick_sock *k = &m->registry->kick[i];

		while (k->tail != k->head)
			handle_msg(m, &k->sent[k->tail++ % ZN_KICK_MSGS]);
	}
}

void
zn_registry_poll(struct zn_mgr *m)
{
	uint64_t now;

	handle_msgs(m);
	zn_reclaim_gc_exited(m);
	zn_link_gc(m);
	now = zn_now_ns();
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++) {
		struct zn_nf_slot *s = zn_slot(m, slot);
		struct zn_nf_reg *reg = &m->registry->reg[slot];

		switch (zn_nf_state(m, slot)) {
		case ZN_NF_FREE:
			if (reg->pending)
				do_register(m, slot, reg->pending_gen,
					    reg->pending_group);
			break;
		case ZN_NF_RUNNING:
		case ZN_NF_STARTING:
		case ZN_NF_STOPPING:
			if (__atomic_load_n(&s->req.exited, __ATOMIC_ACQUIRE))
				begin_reclaim(m, slot, false, false);
			else if (reg->stop_sent && reg->stop_asked_ns != 0 &&
				 now - reg->stop_asked_ns > STOP_WARN_NS) {
				ZN_LOG(WARNING, "NF '%s' (pid %u) has not "
				       "stopped after 5 s", s->ctl.name,
				       s->ctl.pid);
				reg->stop_asked_ns = 0;
			}
			break;
		case ZN_NF_RECLAIMING:
			try_finish(m, slot);
			break;
		default:
			break;
		}
	}
}

/* The NF's process is gone: readable the instant it dies. A process of
 * several NFs (a bundle, lib/nf/nf_bundle.c) is gone for all of them at
 * once, the same process by pid and start time: first the ring
 * operations of each finished (before anything waits for the NFs:
 * another NF may wait for a commit the process left in the records of
 * its pool account, its first NF's slot's), then each reclaimed, and
 * their links last (one's ledger may name the link into another, mid
 * hand-off: it must be there to say how much went on it). */
static void
on_pidfd(void *arg, uint32_t events)
{
	const struct zn_nf_reg *reg = arg;
	struct zn_mgr *m = reg->m;
	unsigned int slot = reg->slot, n = 0;
	uint16_t gone[ZN_MAX_NFS];

	(void)events;
	for (unsigned int x = 0; x < ZN_MAX_NFS; x++)
		if (x == slot || (m->registry->reg[x].pidfd >= 0 &&
				  zn_registry_same_process(m, slot, x)))
			gone[n++] = (uint16_t)x;
	for (unsigned int i = 0; i < n; i++)
		if (gone[i] != slot)
			zn_pool_repair_nf(m, gone[i]);
	for (unsigned int i = 0; i < n; i++)
		begin_reclaim(m, gone[i],
			      !__atomic_load_n(&zn_slot(m, gone[i])->req.exited,
					       __ATOMIC_ACQUIRE), true);
	for (unsigned int i = 0; i < n; i++) {
		zn_reclaim_nf_links(m, gone[i]);
		try_finish(m, gone[i]);
	}
}

int
zn_registry_stop_nf(struct zn_mgr *m, unsigned int slot)
{
	if (slot >= ZN_MAX_NFS || !nf_live(zn_nf_state(m, slot)))
		return -ENOENT;
	begin_stop(m, slot);
	return 0;
}

void
zn_registry_stop_all(struct zn_mgr *m)
{
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++)
		begin_stop(m, slot);
}

unsigned int
zn_registry_active(const struct zn_mgr *m)
{
	unsigned int n = 0;

	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++)
		if (zn_nf_state(m, slot) != ZN_NF_FREE)
			n++;
	return n;
}

/* --rx-when-ready: enable port RX once every service of --chain has a
 * running NF (once; rx.set decides from then on). */
static void
rx_when_ready(struct zn_mgr *m)
{
	bool up[ZN_MAX_SERVICES] = { false };

	if (!m->dp.rx_waiting)
		return;
	for (unsigned int i = 0; i < ZN_MAX_NFS; i++) {
		const struct zn_nf_slot *s = zn_slot(m, i);

		if (zn_nf_state(m, i) == ZN_NF_RUNNING && s->ctl.service_id < ZN_MAX_SERVICES)
			up[s->ctl.service_id] = true;
	}
	for (unsigned int h = 0; h < m->cfg.chain_len; h++)
		if (m->cfg.chain[h].type == ZN_STEP_SERVICE &&
		    !up[m->cfg.chain[h].id])
			return;
	m->dp.rx_waiting = false;
	zn_ports_rx_set(m, true);
	ZN_LOG(NOTICE, "every service of the chain has a running NF: port "
	       "RX enabled (--rx-when-ready)");
}

/* After every wake-up of the control loop: messages, liveness, slots in
 * reclaim (polled every 10 ms while any is, else at least every 100 ms:
 * the loop's longest wait). */
static void
on_wake(void *arg)
{
	struct zn_mgr *m = arg;
	bool busy = false;

	zn_registry_poll(m);
	rx_when_ready(m);
	for (unsigned int s = 0; s < ZN_MAX_NFS && !busy; s++)
		busy = zn_nf_state(m, s) == ZN_NF_RECLAIMING ||
		       m->registry->reg[s].pending;
	if (busy)
		zn_loop_wake_within(m->loop, 10);
}

int
zn_registry_find(const struct zn_mgr *m, const char *name)
{
	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++) {
		const struct zn_nf_slot *s = zn_slot(m, slot);

		if (nf_live(zn_nf_state(m, slot)) &&
		    strncmp(s->ctl.name, name, sizeof(s->ctl.name)) == 0)
			return (int)slot;
	}
	return -ENOENT;
}

static const struct zn_subsys subsys = {
	.name = "registry", .order = ZN_SUBSYS_REGISTRY,
	.init = zn_registry_init, .fini = zn_registry_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static void
registry_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->nf_steer_rate = 20000;
}

static const struct zn_opt registry_opt[] = {
	{ "nf-steer-rate", 0, "N", "flow-rule requests one NF may make a "
	  "second (a\nsecond's worth at once; EBUSY past it); default\n20000; "
	  "0 = none", ZN_OPT_UINT, ZN_CFG(nf_steer_rate),
	  0, 10000000, NULL },
};

static const struct zn_opts registry_opts = {
	.order = ZN_SUBSYS_REGISTRY, .opt = registry_opt,
	.n = RTE_DIM(registry_opt), .defaults = registry_defaults,
};
ZN_OPTIONS_REGISTER(registry_opts)
