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

#include "../lib/shm/zn_shm.h"

struct zn_mgr;

struct zn_nf_reg {
	struct zn_mgr *m;
	unsigned int slot;
	int pidfd;
	bool pending;          /* REGISTER waiting for the slot to be free */
	uint32_t pending_gen;
	bool stop_sent;        /* ctl.stop set */
	uint64_t stop_asked_ns; /* when; 0 once the slow stop was logged */
	int reclaim_lock;      /* the slot's lock file, held while the slot
				* is reclaimed (-1: not held) */
};

struct zn_registry {
	struct zn_nf_reg reg[ZN_MAX_NFS];
	/* NFs that left: a process may still be in its EAL cleanup */
	struct {
		pid_t pid;
		uint64_t start;
	} exiting[ZN_MAX_NFS];
	int kick_fd; /* NFs poke it after posting a message */
};

/* reclaim.c: remove the EAL files of NFs whose processes are gone. */
void zn_reclaim_gc_exited(struct zn_mgr *m);

#endif /* ZN_REGISTRY_PVT_H */
