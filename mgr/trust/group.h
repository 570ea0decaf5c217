/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_GROUP_H
#define ZN_GROUP_H

/* Trust groups (group.c): a packet pool per group in a hugepage file only
 * the group's NFs map. */

#include <stdbool.h>
#include <stdint.h>

struct zn_mgr;

/** Make --trust-group's groups (after the shared memory). 0 or -errno. */
int zn_group_init(struct zn_mgr *m);
/** Free their pools and files (after the NFs are gone). */
void zn_group_fini(struct zn_mgr *m);
/** An NF's registration names group index + 1 @p g (0: none): valid? */
bool zn_group_valid(const struct zn_mgr *m, uint32_t g);

/** The index of the group called @p name, or -ENOENT. */
int zn_group_find(const struct zn_mgr *m, const char *name);

#endif /* ZN_GROUP_H */
