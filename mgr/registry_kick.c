/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The registry's kick socket: NFs of no trust group poke it after
 * posting a message on the ring (registry.c handles the messages after
 * the wake-up); NFs of a group send their messages here whole. */

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "mgr.h"
#include "registry.h"
#include "registry_pvt.h"
#include "../lib/common/zn_util.h"

/* For the wake hook (registry.c), after the ring's messages. */
static void
keep(struct zn_registry *r, const struct zn_msg *msg)
{
	if (r->sent_head - r->sent_tail >= ZN_KICK_MSGS) {
		if (!r->sent_full_logged)
			ZN_LOG(WARNING, "%u messages of NFs of trust groups "
			       "wait: later ones are dropped (the NFs ask "
			       "again or time out)", ZN_KICK_MSGS);
		r->sent_full_logged = true;
		return;
	}
	r->sent[r->sent_head++ % ZN_KICK_MSGS] = *msg;
	r->sent_full_logged = false;
}

/* An NF posted a message (it is handled in the wake hook). A REGISTER
 * kick carries the slot and generation; its credentials, filled in by the
 * kernel (SO_PASSCRED), give the NF's pid as this process sees it: the
 * NF's own word for it (req.pid) is only its pid in its own namespace. */
void
zn_registry_on_kick(void *arg, uint32_t events)
{
	struct zn_mgr *m = arg;
	union {
		char buf[CMSG_SPACE(sizeof(struct ucred))];
		struct cmsghdr align;
	} cm;
	uint8_t data[64];
	struct iovec iov = { .iov_base = data, .iov_len = sizeof(data) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	(void)events;
	for (;;) {
		struct cmsghdr *c;
		struct ucred uc = { .pid = 0 };
		struct zn_msg msg = { .type = 0 };
		uint16_t slot;
		uint32_t gen;

		mh.msg_control = cm.buf;
		mh.msg_controllen = sizeof(cm.buf);
		n = recvmsg(m->registry->kick_fd, &mh, MSG_DONTWAIT);
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
			slot = msg.slot;
			gen = msg.gen;
		} else {
			memcpy(&slot, data + 1, sizeof(slot));
			memcpy(&gen, data + 3, sizeof(gen));
		}
		if (slot < ZN_MAX_NFS && uc.pid > 0 &&
		    (data[0] == ZN_KICK_REGISTER ||
		     msg.type == ZN_MSG_REGISTER))
			m->registry->cred[slot] = (struct zn_nf_cred){
				.valid = true, .gen = gen, .pid = uc.pid };
		/* A message other than REGISTER is from the process that
		 * registered in the slot, as the kernel names the sender:
		 * another NF knowing the slot and generation cannot make the
		 * manager stop or link it (the ring cannot tell, the socket
		 * can). */
		if (data[0] == ZN_KICK_MSG &&
		    (msg.type == ZN_MSG_REGISTER ||
		     (slot < ZN_MAX_NFS && uc.pid > 0 &&
		      uc.pid == m->registry->reg[slot].pid)))
			keep(m->registry, &msg);
	}
}
