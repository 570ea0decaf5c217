/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_INSTANCE_H
#define ZN_INSTANCE_H

/* One manager instance = one EAL file prefix (instance.c): the instance
 * lock, stale state of a killed manager, the runtime directory and
 * hugepage files; and the shutdown command. */

#include <stdbool.h>
#include <stddef.h>

struct zn_mgr;

int zn_instance_acquire(struct zn_mgr *m);
void zn_instance_set_ready(struct zn_mgr *m);
void zn_instance_release(struct zn_mgr *m);
/** Unlink the files of @p dir whose name @p match accepts. @return count */
unsigned int zn_unlink_matching(const char *dir,
				bool (*match)(const char *name, const void *arg),
				const void *arg);
int zn_find_huge_dir(char *buf, size_t len);

#endif /* ZN_INSTANCE_H */
