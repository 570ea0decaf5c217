/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The registry's kick sockets: NFs of no trust group poke the shared one
 * after posting a message on the ring (registry.c handles the messages
 * after the wake-up); NFs of a group send their messages whole on their
 * group's own. */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "loop.h"
#include "mgr.h"
#include "registry.h"
#include "registry_pvt.h"
#include "../lib/common/zn_util.h"

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

	snprintf(path, sizeof(path), "%s/%s", m->rundir, file);
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

int
zn_registry_kick_open(struct zn_mgr *m)
{
	struct zn_kick_sock *k = m->registry->kick;
	int rc = kick_open(m, &k[0], ZN_KICK_SOCK);

	for (unsigned int g = 0; g < ZN_MAX_GROUPS && rc == 0; g++) {
		char file[64];

		if (m->gpool[g] == NULL)
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
