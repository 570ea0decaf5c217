/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_INSTANCE_H
#define ZN_INSTANCE_H

/* One manager instance = one EAL file prefix (instance.c): the instance
 * lock, stale state of a killed manager, the runtime directory and
 * hugepage files; and the shutdown command. */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct zn_mgr;

/** The running instance (m->inst; main.c and instance.c, at start, then
 *  read-only). */
struct zn_instance {
	pid_t pid;
	uint64_t start_ns;
	char rundir[PATH_MAX];   /* its runtime directory (control socket) */
	char huge_dir[PATH_MAX]; /* where its hugepage files are */
	int lock_fd;             /* the instance's lock; -1: not held */
};

/** Take the instance's lock (its runtime directory made), cleaning what a
 *  dead manager of the name left. 0 or -errno (said). */
int zn_instance_acquire(struct zn_mgr *m);
void zn_instance_set_ready(struct zn_mgr *m);
/** Remove the runtime directory and the instance's hugepage files; drop
 *  the lock. Nothing if not held (m->inst.lock_fd -1). */
void zn_instance_release(struct zn_mgr *m);
/** Unlink the files of @p dir whose name @p match accepts. @return count */
unsigned int zn_unlink_matching(const char *dir,
				bool (*match)(const char *name, const void *arg),
				const void *arg);
int zn_find_huge_dir(char *buf, size_t len);

#endif /* ZN_INSTANCE_H */
