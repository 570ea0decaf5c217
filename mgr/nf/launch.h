/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LAUNCH_H
#define ZN_LAUNCH_H

/*
 * NFs the manager launches and supervises itself (launch.c): a launched
 * NF is a named spec (binary, arguments, service, replicas, CPUs, memory,
 * sandbox, restart policy) and its replica processes, started with
 * posix_spawn (through zeronf-run when they are sandboxed or limited),
 * watched by pidfd, restarted on failure with back-off, counted. Commands
 * nf.start, nf.scale, nf.restart, nf.stop (by name) and launch.list.
 * Control thread only.
 */

#include <stdbool.h>
#include <stdint.h>

struct zn_mgr;

/** The manager stops: no more restarts; replicas that never registered
 *  are sent SIGTERM (registered ones the registry stops). */
void zn_launch_stop_all(struct zn_mgr *m);
/** Launched processes still running. */
unsigned int zn_launch_running(const struct zn_mgr *m);
/** The launched NF named @p name: its service and wanted replicas.
 *  0 or -ENOENT. */
int zn_launch_info(const struct zn_mgr *m, const char *name,
		   uint16_t *service, unsigned int *replicas);
/** @p name is the name of a replica of launched NF @p nf. */
bool zn_launch_is_replica(const char *nf, const char *name);
/** Run @p n replicas of it (as nf.scale). 0 or -ENOENT. */
int zn_launch_scale(struct zn_mgr *m, const char *name, unsigned int n);

#endif /* ZN_LAUNCH_H */
