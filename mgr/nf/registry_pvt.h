/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_REGISTRY_PVT_H
#define ZN_REGISTRY_PVT_H

/* The registry's own state, shared by its files (registry.c, reclaim.c)
 * and no other module. */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "../trust/ring_guard.h"
#include "../../lib/shm/zn_shm.h"
#include "../../lib/shm/zn_kick.h"

struct zn_mgr;

#define ZN_KICK_MSGS 256 /* per socket; a power of 2 */

struct zn_nf_reg {
	struct zn_mgr *m;
	unsigned int slot;
	int pidfd;
	pid_t pid;             /* as the kernel told it (ctl.pid says the
				* same, in memory the NF can write) */
	bool pending;          /* REGISTER waiting for the slot to be free */
	uint32_t pending_gen;
	uint8_t pending_group; /* the home it was written in (group_home.c) */
	bool stop_sent;        /* ctl.stop set */
	uint64_t stop_asked_ns; /* when; 0 once the slow stop was logged */
	int reclaim_lock;      /* the slot's lock file, held while the slot
				* is reclaimed (-1: not held) */
	uint64_t cred_wait_ns; /* REGISTER waiting for its kick since */
};

/* What the kernel said of the sender of a REGISTER kick (on_kick). */
struct zn_nf_cred {
	bool valid;
	uint32_t gen;
	pid_t pid;   /* in the manager's PID namespace */
};

/* A kick socket: the shared one ([0]) or a trust group's, with the
 * messages that came on it (on_kick), handled with the ring's after the
 * wake-up (registry.c): one group's flood fills its own queue only */
struct zn_kick_sock {
	struct zn_mgr *m;
	int fd;
	uint8_t group; /* index + 1; 0: the shared one */
	bool full_logged;
	uint32_t head, tail;
	struct zn_msg sent[ZN_KICK_MSGS];
};

struct zn_registry {
	struct zn_nf_reg reg[ZN_MAX_NFS];
	/* NFs that left: a process may still be in its EAL cleanup */
	struct {
		pid_t pid;      /* the manager's view: is it still running */
		pid_t ns_pid;   /* the NF's own: its EAL's file names */
		uint64_t start;
	} exiting[ZN_MAX_NFS];
	/* By the kick socket it came on ([0]: the shared one, [g + 1]:
	 * group g's), so that one group's kicks cannot stand for, nor
	 * overwrite, another's registration's */
	struct zn_nf_cred cred[1 + ZN_MAX_GROUPS][ZN_MAX_NFS];
	struct zn_kick_sock kick[1 + ZN_MAX_GROUPS]; /* fd -1: none */
	/* The message ring of NFs of no group (m->msgq), which they write
	 * whole: read with the geometry it was made with (ring_guard.h) */
	struct zn_rguard msgq;
	uint64_t bad_msgs;     /* messages of no known slot or type */
	/* Each slot's steer requests (--nf-steer-rate): a token bucket */
	struct {
		uint64_t at_ns;    /* when tokens was right */
		uint64_t tokens;   /* requests it may make now, x 1e9 */
	} steer[ZN_MAX_NFS];
	uint64_t steer_refused;
	uint64_t msgq_resets;  /* the ring's header found garbage, reset */
};

/* registry_kick.c: make the kick sockets and watch them (0 or -errno),
 * close them. */
int zn_registry_kick_open(struct zn_mgr *m);
/* registry_kick.c: up to @p n messages from the message ring into @p out
 * (NFs of no group), however its header was written; a message refused
 * (@p what: why), counted and logged now and then. */
unsigned int zn_registry_ring_msgs(struct zn_mgr *m, struct zn_msg *out,
				   unsigned int n);
void zn_registry_bad_msg(struct zn_mgr *m, const char *what, unsigned int v);
/* registry_kick.c: may the NF in @p slot have a steer request served now
 * (--nf-steer-rate)? Counts it if so, the refusal if not. */
bool zn_registry_steer_allowed(struct zn_mgr *m, unsigned int slot);
void zn_registry_kick_close(struct zn_mgr *m);
/* registry_nf.c: an NF just registered in @p slot (process @p pid): what
 * is set up beside its slot (no links into it yet; a tenant's NF started
 * outside the manager joins its tenant's cgroup). */
void zn_registry_nf_joined(struct zn_mgr *m, unsigned int slot, pid_t pid);
/* registry_nf.c: the worker a new NF's TX ring goes to. */
uint16_t zn_registry_pick_worker(const struct zn_mgr *m);
/* reclaim.c: remove the EAL files of NFs whose processes are gone. */
void zn_reclaim_gc_exited(struct zn_mgr *m);

#endif /* ZN_REGISTRY_PVT_H */
