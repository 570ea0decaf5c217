/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* An NF's messages to its manager (the message ring, then a kick on the
 * manager's socket) and the answers it waits for in its slot: READY
 * (join), LEAVE, STEER; REGISTER's sequence is nf_register.c's. */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_ring.h>

#include "nf_pvt.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_instance.h"
#include "../common/zn_util.h"
#include "../shm/zn_kick.h"

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
void
zn_nf_kick_register(struct zn_nf *nf)
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
		zn_nf_kick_register(nf);
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
				   n > ZN_MAX_CHAIN_STEPS))
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

