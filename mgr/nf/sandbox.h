/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_SANDBOX_H
#define ZN_SANDBOX_H

/*
 * Sandboxes and limits of launched NFs (sandbox.c, cgroup.c), used by
 * launch.c.
 *
 * A sandboxed NF runs under bubblewrap: its own mount, network, IPC, UTS
 * and cgroup namespaces; a PID namespace of its own for an NF of a trust
 * group, the instance's for NFs of no group (one for all of them: DPDK
 * names their shared files after their pids, which must differ); no
 * capability at all (uid 0 without capabilities is enough for a DPDK
 * secondary: measured), and for an NF of a trust group a user of its
 * group's own (sandbox_uid.c, tools/zeronf-run.c --user); a seccomp
 * filter (sandbox_seccomp.c); a file system
 * of /usr read-only, its program and
 * libzeronf, a new /proc, /dev and /tmp, /sys read-only, the instance's
 * runtime directory with the control and telemetry sockets masked, the
 * instance's hugepage files only (a group's NF: its group's file and
 * kick socket), DPDK's driver directory with the pool's mempool driver
 * only, and its working directory read-only (the launched NFs' logs
 * hidden).
 * Limits (CPUs, memory) are cgroups (v1 or v2), joined by zeronf-run
 * before the NF starts.
 */

#include <stdbool.h>
#include <stddef.h>

struct zn_mgr;

/* sandbox.c */
/** Append bwrap and its options for NF @p name of program @p binary,
 *  working in @p cwd (read-only there), of trust group @p group (index;
 *  -1: none), the launched NFs' logs in @p log_dir (hidden), to @p argv
 *  (from @p argc; at most @p max). Strings are allocated in @p arena
 *  (zn_sandbox_arena_free after the spawn). @return the new argc, or
 *  -errno (ENOENT: no bwrap). For an NF of no group, the instance's
 *  namespace fd must be passed to the child as fd 3
 *  (zn_sandbox_pidns_fd); an NF of a group gets a namespace of its own. */
struct zn_arena;
int zn_sandbox_argv(struct zn_mgr *m, const char *name, const char *binary,
		    const char *cwd, const char *log_dir, int group,
		    char **argv, int argc, int max, struct zn_arena **arena);
void zn_sandbox_arena_free(struct zn_arena *a);
/** What zn_sandbox_argv's -errno @p rc means, for program @p binary. */
void zn_sandbox_explain(int rc, const char *binary, char *err,
			size_t errlen);
/** Claim an NF slot for a sandbox of a trust group, which has no slot's
 *  lock file (its NF could lock them all): @return the lock's fd (locked;
 *  the caller passes it to the child as @p fd and closes its own), and
 *  in @p envp the environment that tells the NF (ZN_SLOT_ENV, written in
 *  @p buf; free the array, not the strings). -errno: none free. */
int zn_sandbox_slot(struct zn_mgr *m, int fd, char *buf, size_t len,
		    char ***envp);
/** The seccomp filter of a sandbox (sandbox_seccomp.c), for bwrap to
 *  read from fd ZN_SANDBOX_SECCOMP_FD of the child (zn_sandbox_argv asks
 *  for it there): a new fd to dup there (the caller closes its own), or
 *  -errno. */
#define ZN_SANDBOX_SECCOMP_FD 4
int zn_sandbox_seccomp_fd(void);
/** The instance's PID namespace (started on first use). fd or -errno. */
int zn_sandbox_pidns_fd(struct zn_mgr *m);
/** A program next to zeronf-mgr (or in the build tree's tools/). */
int zn_helper_path(const char *name, char *buf, size_t len);
/** An NF program installed with the manager, by its bare name
 *  ([A-Za-z0-9_-]): beside zeronf-mgr, or in its build tree's nfs/. */
int zn_nf_program_path(const char *name, char *buf, size_t len);
/** Whether the manager may launch @p path: a regular file that neither it
 *  nor a directory above it (the link's and the real path's) may be
 *  written by another user than root or the manager's (their groups'
 *  members too; a directory others write only if sticky), nor in a
 *  directory bound writable into a sandbox (the runtime or hugepage
 *  directory). Checked at each spawn: a program an NF could rewrite would
 *  run as the next replica, perhaps unsandboxed. 0, or -errno with the
 *  reason in @p err. */
int zn_program_check(const struct zn_mgr *m, const char *path, char *err,
		     size_t errlen);
/** Stop the namespace's holder (the manager stops). */
void zn_sandbox_fini(struct zn_mgr *m);

/* cgroup.c */
struct zn_cgroup {
	char dirs[3][512]; /* the directories to join (v1: cpuset, memory,
			    * cpu) */
	unsigned int n;
};
/** Make the cgroup(s) of replica @p name with CPUs @p cpus (may be NULL)
 *  and @p memory_mb (0: none), under tenant @p tenant's group (index; -1:
 *  none) that holds its NFs' CPU and memory limits together (--tenant
 *  cpu=, mem=). 0, or -errno with a reason in @p err. */
int zn_cgroup_make(struct zn_mgr *m, const char *name, const char *cpus,
		   unsigned int memory_mb, int tenant, struct zn_cgroup *cg,
		   char *err, size_t errlen);
/** Tenant @p tenant's NF, process @p pid, started outside the manager:
 *  into the tenant's group "outside" (its limits hold for all its NFs),
 *  unless it is in one of the tenant's groups already (nf.start's) or the
 *  tenant has no limits. 0, or -errno with a reason in @p err. */
int zn_cgroup_adopt(struct zn_mgr *m, int tenant, pid_t pid, char *err,
		    size_t errlen);
/** Remove them (their processes are gone). */
void zn_cgroup_remove(const struct zn_cgroup *cg);
/** Remove the instance's cgroup directories (the manager stops). */
void zn_cgroup_fini(struct zn_mgr *m);

#endif /* ZN_SANDBOX_H */
