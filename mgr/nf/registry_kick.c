/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The registry's kick sockets: NFs of no trust group poke the shared one
 * after posting a message on the ring (registry.c handles the messages
 * after the wake-up); NFs of a group send their messages whole on their
 * group's own. */

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../core/loop.h"
#include "../core/mgr.h"
#include "registry.h"
#include "registry_pvt.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/shm/zn_kick.h"

/* For the wake hook (registry.c), after the ring's messages. */
static void
keep(struct zn_kick_sock *ks, const struct zn_msg *msg)
{
	if (ks->head - ks->tail >= ZN_KICK_MSGS) {
		if (!ks->full_logged)
			ZN_LOG(WARNING, "%u messages wait on kick socket %u: "
			       "later ones are dropped (the NFs ask again or "
			       "time out)", ZN_KICK_MSGS, ks->group);
		ks->full_logged = true;
		return;
	}
	ks->sent[ks->head++ % ZN_KICK_MSGS] = *msg;
	ks->full_logged = false;
}

/* An NF posted a message (it is handled in the wake hook). A REGISTER
 * kick carries the slot and generation; its credentials, filled in by the
 * kernel (SO_PASSCRED), give the NF's pid as this process sees it: the
 * NF's own word for it (req.pid) is only its pid in its own namespace.
 * What comes on a trust group's socket is of that group's NFs: a
 * message naming another group is dropped, a registration's
 * credentials count for a registration in that group only (cred[]). */
static void
on_kick(void *arg, uint32_t events)
{
	struct zn_kick_sock *ks = arg;
	struct zn_mgr *m = ks->m;
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} cm;
	uint8_t data[64];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	(void)events;
	/* At most a queue's worth per call: a flood leaves the control
	 * thread to its other work (the socket stays readable: called
	 * again) */
	for (unsigned int got = 0; got < ZN_KICK_MSGS; got++) {
		struct cmsghdr *c;
		struct ucred uc = { .pid = 0 };
		struct zn_msg msg = { .type = 0 };
		uint16_t slot;
		uint32_t gen;

		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		n = recvmsg(ks->fd, &mh, MSG_DONTWAIT);
		if (n <= 0)
			break;
		if (!(n == ZN_KICK_REGISTER_LEN &&
		      data[0] == ZN_KICK_REGISTER) &&
		    !(n == ZN_KICK_MSG_LEN && data[0] == ZN_KICK_MSG))
			continue;
		for (c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c))
			if (c->cmsg_level == SOL_SOCKET &&
			    c->cmsg_type == SCM_CREDENTIALS)
				memcpy(&uc, CMSG_DATA(c), sizeof(uc));
		if (data[0] == ZN_KICK_MSG) {
			memcpy(&msg, data + 1, sizeof(msg));
			if (msg.group != ks->group)
				continue;
			slot = msg.slot;
			gen = msg.gen;
		} else {
			memcpy(&slot, data + 1, sizeof(slot));
			memcpy(&gen, data + 3, sizeof(gen));
		}
		if (slot < ZN_MAX_NFS && uc.pid > 0 &&
		    (data[0] == ZN_KICK_REGISTER ||
		     msg.type == ZN_MSG_REGISTER))
			m->registry->cred[ks->group][slot] =
				(struct zn_nf_cred){ .valid = true, .gen = gen,
						     .pid = uc.pid };
		/* A message other than REGISTER is from the process that
		 * registered in the slot, as the kernel names the sender:
		 * another NF knowing the slot and generation cannot make the
		 * manager stop or link it (the ring cannot tell, the socket
		 * can). */
		if (data[0] == ZN_KICK_MSG &&
		    (msg.type == ZN_MSG_REGISTER ||
		     (slot < ZN_MAX_NFS && uc.pid > 0 &&
		      uc.pid == m->registry->reg[slot].pid)))
			keep(ks, &msg);
	}
}

static int
kick_open(struct zn_mgr *m, struct zn_kick_sock *ks, const char *file)
{
	char path[PATH_MAX + 64];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", m->inst.rundir, file);
	ks->m = m;
	ks->fd = zn_unix_bind(path, SOCK_DGRAM);
	if (ks->fd < 0) {
		rc = ks->fd;
		ZN_LOG(ERR, "kick socket %s: %s", path, strerror(-rc));
		return rc;
	}
	rc = setsockopt(ks->fd, SOL_SOCKET, SO_PASSCRED, &(int){ 1 },
			sizeof(int)) < 0 ? -errno : 0;
	if (rc == 0)
		rc = zn_loop_watch(m->loop, ks->fd, EPOLLIN, on_kick, ks);
	return rc;
}

void
zn_registry_bad_msg(struct zn_mgr *m, const char *what, unsigned int v)
{
	uint64_t n = ++m->registry->bad_msgs;

	if ((n & (n - 1)) == 0) /* the 1st, 2nd, 4th, ...: not a flood */
		ZN_LOG(WARNING, "bad message from an NF: %s %u (%" PRIu64
		       " so far)", what, v, n);
}

unsigned int
zn_registry_ring_msgs(struct zn_mgr *m, struct zn_msg *out, unsigned int n)
{
	struct zn_rguard *g = &m->registry->msgq;
	struct rte_ring *r = g->ring;
	void *slots[64];
	uint32_t tail = __atomic_load_n(&r->prod.tail, __ATOMIC_ACQUIRE);

	_Static_assert(sizeof(struct zn_msg) == sizeof(void *),
		       "a message is one ring slot");
	/* Positions no producer could have left (an NF wrote them), or a
	 * geometry not as made: everything in it dropped, the header as
	 * made, so that NFs can post again. */
	if (tail - g->head > g->made.capacity || r->mask != g->made.mask ||
	    r->size != g->made.size || r->capacity != g->made.capacity ||
	    __atomic_load_n(&r->prod.head, __ATOMIC_RELAXED) - tail >
	    g->made.capacity) {
		m->registry->msgq_resets++;
		zn_registry_bad_msg(m, "message ring header reset, at", tail);
		memcpy(r, &g->made, offsetof(struct rte_ring, prod));
		r->prod.head = r->prod.tail = g->head;
		r->cons.head = r->cons.tail = g->head;
		return 0;
	}
	n = zn_rguard_sc_dequeue(g, slots, RTE_MIN(n, RTE_DIM(slots)));
	memcpy(out, slots, n * sizeof(*out));
	return n;
}

void
zn_registry_msg_stats(const struct zn_mgr *m, uint64_t *bad,
		      uint64_t *resets, uint64_t *steer_refused)
{
	*bad = m->registry->bad_msgs;
	*resets = m->registry->msgq_resets;
	*steer_refused = m->registry->steer_refused;
}

bool
zn_registry_steer_allowed(struct zn_mgr *m, unsigned int slot)
{
	const uint64_t rate = m->cfg.nf_steer_rate, full = rate * 1000000000ULL;
	uint64_t now = zn_now_ns(), *tokens = &m->registry->steer[slot].tokens;
	uint64_t *at = &m->registry->steer[slot].at_ns;

	if (rate == 0)
		return true;
	/* A slot's first request (or its first in a second): a full bucket */
	if (now - *at >= 1000000000ULL || *at == 0)
		*tokens = full;
	else
		*tokens = RTE_MIN(full, *tokens + (now - *at) * rate);
	*at = now;
	if (*tokens < 1000000000ULL) {
		m->registry->steer_refused++;
		return false;
	}
	*tokens -= 1000000000ULL;
	return true;
}

int
zn_registry_kick_open(struct zn_mgr *m)
{
	struct zn_kick_sock *k = m->registry->kick;
	int rc = kick_open(m, &k[0], ZN_KICK_SOCK);

	/* made by main.c, before any NF could have written it */
	zn_rguard_init(&m->registry->msgq, m->msgq);
	for (unsigned int g = 0; g < ZN_MAX_GROUPS && rc == 0; g++) {
		char file[64];

		if (m->trust.group[g].pool == NULL)
			continue;
		snprintf(file, sizeof(file), ZN_KICK_GROUP_SOCK_FMT, g);
		k[g + 1].group = (uint8_t)(g + 1);
		rc = kick_open(m, &k[g + 1], file);
	}
	return rc;
}

void
zn_registry_kick_close(struct zn_mgr *m)
{
	for (unsigned int i = 0; i <= ZN_MAX_GROUPS; i++) {
		struct zn_kick_sock *ks = &m->registry->kick[i];

		if (ks->fd < 0)
			continue;
		zn_loop_unwatch(m->loop, ks->fd);
		close(ks->fd);
		ks->fd = -1;
	}
}
