/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* An NF's messages to its manager (the message ring, then a kick on the
 * manager's socket) and the answers it waits for in its slot: REGISTER,
 * READY (join), LEAVE, STEER. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_ring.h>

#include "nf_pvt.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_util.h"

#define ZN_REGISTER_TIMEOUT_NS (5ULL * 1000 * 1000 * 1000)

/* The manager's kick socket for us: our trust group's own (the only one
 * a group's sandbox has; the manager takes what comes there as of that
 * group), or the shared one. */
static int
kick_addr(const struct zn_nf *nf, struct sockaddr_un *sa)
{
	char file[64];

	*sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
	if (nf->group != 0)
		snprintf(file, sizeof(file), ZN_KICK_GROUP_SOCK_FMT,
			 nf->group - 1);
	else
		snprintf(file, sizeof(file), "%s", ZN_KICK_SOCK);
	if (nf->kick_fd < 0)
		return -ENOTCONN;
	return zn_runtime_path(nf->instance, file, sa->sun_path,
			       sizeof(sa->sun_path));
}

static void
kick(struct zn_nf *nf, const void *buf, size_t len)
{
	struct sockaddr_un sa;

	if (nf->guest) { /* the helper sends it on (nf_guest.c) */
		(void)zn_nf_guest_send(nf, buf, len);
		return;
	}
	if (kick_addr(nf, &sa) < 0)
		return;
	(void)!sendto(nf->kick_fd, buf, len, MSG_DONTWAIT,
		      (struct sockaddr *)&sa, sizeof(sa));
}

void
zn_nf_kick_manager(struct zn_nf *nf)
{
	/* Best effort: the manager also scans its ring periodically. */
	kick(nf, "k", 1);
}

/* The kick that goes with REGISTER: the manager reads the NF's pid from
 * its credentials. Resent while the NF waits for the answer (a datagram
 * dropped on a full socket would leave the request unanswered). */
static void
kick_register(struct zn_nf *nf)
{
	uint8_t b[ZN_KICK_REGISTER_LEN] = { ZN_KICK_REGISTER };
	uint16_t slot = (uint16_t)nf->slot;
	uint32_t gen = nf->gen;

	memcpy(b + 1, &slot, sizeof(slot));
	memcpy(b + 3, &gen, sizeof(gen));
	kick(nf, b, sizeof(b));
}

/* An NF of a trust group maps no message ring (it is in the EAL's
 * memory): the message itself goes on the kick socket. A full socket
 * says so (EAGAIN, never a silent drop): tried again for up to 100 ms,
 * then the same answer as a full ring. */
static int
send_msg(struct zn_nf *nf, const struct zn_msg *msg)
{
	uint8_t b[ZN_KICK_MSG_LEN] = { ZN_KICK_MSG };
	struct sockaddr_un sa;

	memcpy(b + 1, msg, sizeof(*msg));
	if (nf->guest)
		return zn_nf_guest_send(nf, b, sizeof(b));
	if (kick_addr(nf, &sa) < 0)
		return -ENOTCONN;
	for (unsigned int i = 0; i < 100; i++) {
		if (sendto(nf->kick_fd, b, sizeof(b), MSG_DONTWAIT,
			   (struct sockaddr *)&sa, sizeof(sa)) ==
		    (ssize_t)sizeof(b))
			return 0;
		if (errno != EAGAIN && errno != EINTR)
			return -errno;
		usleep(1000);
	}
	return -ENOBUFS;
}

int
zn_nf_post_msg(struct zn_nf *nf, uint16_t type)
{
	struct zn_msg msg = { .type = (uint8_t)type, .group = (uint8_t)nf->group,
			      .slot = nf->slot, .gen = nf->gen };

	if (nf->msgq == NULL)
		return send_msg(nf, &msg);
	if (rte_ring_mp_enqueue_elem(nf->msgq, &msg, sizeof(msg)) < 0)
		return -ENOBUFS;
	if (type == ZN_MSG_REGISTER)
		kick_register(nf);
	else
		zn_nf_kick_manager(nf);
	return 0;
}

bool
zn_nf_mgr_alive(struct zn_nf *nf)
{
	/* In a VM: the helper watches the manager and ends the VM with it. */
	if (nf->guest)
		return true;
	return zn_mgr_alive(nf->mgr_pidfd, nf->mgr_lock_fd);
}

int
zn_nf_send_leave(struct zn_nf *nf)
{
	struct zn_nf_slot *s = nf->s;

	__atomic_store_n(&s->req.leaving, 1, __ATOMIC_RELEASE);
	nf->leave_sent = true;
	nf->leave_deadline = zn_now_ns() + ZN_NF_LEAVE_TIMEOUT_NS;
	return zn_nf_post_msg(nf, ZN_MSG_LEAVE);
}

static bool
not_starting(void *arg)
{
	struct zn_nf *nf = arg;

	return __atomic_load_n(&nf->s->ctl.state, __ATOMIC_ACQUIRE) !=
	       ZN_NF_STARTING;
}

/* Join our service (READY) and wait until the manager routes to us, so
 * that packets we sent (from init) and that come back find us. Once. */
int
zn_nf_join(struct zn_nf *nf)
{
	uint64_t deadline = zn_now_ns() + ZN_REGISTER_TIMEOUT_NS;
	int rc;

	if (nf->joined)
		return 0;
	nf->joined = true;
	rc = zn_nf_post_msg(nf, ZN_MSG_READY);
	if (rc < 0) {
		ZN_LOG(ERR, "manager message ring is full");
		return rc;
	}
	while (!not_starting(nf)) {
		zn_nf_wait(nf, &nf->s->db, not_starting, nf, 50000);
		if (!zn_nf_mgr_alive(nf))
			return -ENOTCONN;
		if (zn_now_ns() > deadline) {
			ZN_LOG(ERR, "manager did not let the NF join");
			return -ETIMEDOUT;
		}
	}
	return 0; /* RUNNING, or already asked to stop: the loop drains */
}

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
 * was made with (mgr/trust/home.c): the layout agrees with the manager's. */
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
 * packets to, the links' (mgr/trust/home.c, link.c). In the EAL's memory by
 * name for an NF of no group, where our group's file has them for the
 * others. Never the pointers in zn_shm: any NF can write those. */
static int
find_rings(struct zn_nf *nf)
{
	uint64_t mem;
	int rc = 0;

	if (nf->gva == NULL) {
		for (unsigned int i = 0; i < ZN_MAX_NFS && rc == 0; i++)
			rc = by_name(&nf->peer_rx[i], ZN_NF_RX_RING_FMT, i);
		for (unsigned int l = 0; l < ZN_MAX_LINKS && rc == 0; l++)
			rc = by_name(&nf->link_ring[l], ZN_LINK_RING_FMT, l);
		if (rc == 0)
			rc = by_name(&nf->tx, ZN_NF_TX_RING_FMT, nf->slot);
		nf->rx = nf->peer_rx[nf->slot];
		nf->link_mark = nf->shm->link_mark;
		return rc;
	}
	mem = rte_ring_get_memsize(nf->hdr->ring_size);
	if ((int64_t)mem < 0 || zn_home_len(mem, 1) > nf->glen)
		return -EPROTO;
	for (unsigned int i = 0; i < ZN_MAX_NFS && rc == 0; i++)
		rc = in_home(nf, &nf->peer_rx[i], ZN_HOME_RX(i), mem);
	for (unsigned int l = 0; l < ZN_MAX_LINKS && rc == 0; l++)
		rc = in_home(nf, &nf->link_ring[l], ZN_HOME_LINK(l), mem);
	if (rc == 0)
		rc = in_home(nf, &nf->tx, ZN_HOME_TX(nf->slot), mem);
	if (rc < 0)
		ZN_LOG(ERR, "trust group's rings are not where this library "
		       "looks for them (another build of the manager?)");
	nf->rx = nf->peer_rx[nf->slot];
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
		nf->peer[i] = &home[i];
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
			kick_register(nf);
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
	zn_nf_self = nf;
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

struct steer_wait {
	struct zn_nf *nf;
	uint32_t gen;
};

static bool
steer_answered(void *arg)
{
	const struct steer_wait *sw = arg;

	return __atomic_load_n(&sw->nf->s->steer_reply.gen,
			       __ATOMIC_ACQUIRE) == sw->gen;
}

/* One request at a time, answered in the slot (zn_shm.h, steer). */
static int
steer_request(struct zn_nf *nf, uint8_t op, const struct zn_flow_key *key,
	      const struct zn_step *steps, unsigned int n, unsigned int flags)
{
	struct zn_steer_req *rq;
	struct steer_wait sw = { .nf = nf };
	uint64_t deadline;
	int rc;

	if (nf == NULL || key == NULL || !nf->registered ||
	    (key->ip_version != 4 && key->ip_version != 6) ||
	    (flags & ~(unsigned int)(ZN_STEER_F_BOTH | ZN_STEER_F_KEEP)) != 0)
		return -EINVAL;
	if (op == ZN_STEER_ADD && (steps == NULL || n == 0 ||
				   n > ZN_MAX_CHAIN_HOPS))
		return -EINVAL;
	rq = &nf->s->steer;
	rq->op = op;
	rq->flags = (uint8_t)flags;
	rq->n_steps = (uint8_t)n;
	rq->key = *key;
	if (n > 0)
		memcpy(rq->steps, steps, n * sizeof(*steps));
	sw.gen = rq->gen + 1;
	__atomic_store_n(&rq->gen, sw.gen, __ATOMIC_RELEASE);
	rc = zn_nf_post_msg(nf, ZN_MSG_STEER);
	if (rc < 0)
		return rc;
	deadline = zn_now_ns() + ZN_STEER_TIMEOUT_NS;
	while (!steer_answered(&sw)) {
		/* Short spins first: the answer usually takes microseconds. */
		zn_nf_wait(nf, &nf->s->db, steer_answered, &sw, 1000);
		if (!zn_nf_mgr_alive(nf))
			return -ENOTCONN;
		if (zn_now_ns() > deadline)
			return -ETIMEDOUT;
	}
	return nf->s->steer_reply.rc;
}

bool ZN_API
zn_nf_manager_stopping(const struct zn_nf *nf)
{
	return nf != NULL && nf->stopping != NULL &&
	       __atomic_load_n(nf->stopping, __ATOMIC_ACQUIRE) != 0;
}

int ZN_API
zn_nf_flow_steer(struct zn_nf *nf, const struct zn_flow_key *key,
		 const struct zn_step *steps, unsigned int n,
		 unsigned int flags)
{
	return steer_request(nf, ZN_STEER_ADD, key, steps, n, flags);
}

int ZN_API
zn_nf_flow_unsteer(struct zn_nf *nf, const struct zn_flow_key *key,
		   unsigned int flags)
{
	return steer_request(nf, ZN_STEER_DEL, key, NULL, 0, flags);
}

