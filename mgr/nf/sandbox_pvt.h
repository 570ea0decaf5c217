/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_SANDBOX_PVT_H
#define ZN_SANDBOX_PVT_H

/* What sandbox.c (the command line, the PID namespace) takes from
 * sandbox_drivers.c (DPDK's driver directory) and sandbox_uid.c (the
 * users NFs of trust groups run as); no other module. */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct zn_mgr;

/** The bwrap options showing DPDK's driver directory with the drivers NFs
 *  need only (worked out once). NULL-terminated; empty when the directory
 *  is to be shown as it is. */
const char *const *zn_sandbox_driver_args(const struct zn_mgr *m);

/** The uid (and gid) a sandboxed NF of trust group @p group runs as:
 *  0, or -ENOENT: it runs as the manager's user (no group, no
 *  --sandbox-uid-base, the manager not root); other -errno: no block of
 *  ids could be claimed. */
int zn_sandbox_uid(struct zn_mgr *m, int group, uid_t *uid);
/** What an NF of @p group running as @p uid needs of the host, made
 *  its: 0 or -errno. At each spawn (the files may have been made again). */
int zn_sandbox_uid_prepare(struct zn_mgr *m, int group, uid_t uid);
/** May a user with no claim on it (others' permission bits) read and
 *  run the program at @p path in a sandbox where it is bound at that path
 *  and so are the directories @p binds (whole; n_binds of them, NULL
 *  entries skipped): the file itself, and the directories from the
 *  outermost bind that holds it down to it (the others on the way are
 *  bwrap's own, 0755). 0, -EACCES, -errno. */
int zn_sandbox_reachable(const char *path, const char *const *binds,
			 unsigned int n_binds);
/** Is @p path @p dir or below it? */
bool zn_sandbox_under(const char *path, const char *dir);
/** Give the claimed block back (the manager stops). */
void zn_sandbox_uid_fini(void);

#endif /* ZN_SANDBOX_PVT_H */
