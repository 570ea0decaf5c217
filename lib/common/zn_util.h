/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_UTIL_H
#define ZN_UTIL_H

/**
 * @file
 * Helpers shared by the manager and libzeronf (not part of the public API):
 * logging, an instance's names, paths and locks, process liveness,
 * strings and numbers. CPU lists are zn_cpus.h's; the kick socket's
 * protocol is lib/shm/zn_kick.h's.
 * All functions return 0 / a count on success and -errno on failure.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sched.h>

#include <rte_log.h>

extern int zn_logtype;

#define ZN_LOG(level, fmt, ...)                                               \
	rte_log(RTE_LOG_##level, zn_logtype, "zeronf: " fmt "\n", ##__VA_ARGS__)

#define ZN_INSTANCE_DEFAULT "zeronf"
#define ZN_LOCK_FILE "zeronf.lock"
/* The instance's trust groups, a line each: "<index> <name> <file>\n";
 * an NF of a group finds its file here (lib/nf/nf_group.c) */
#define ZN_GROUPS_FILE "zeronf-groups"
#define ZN_CTL_SOCK "zeronf.sock"
#define ZN_SLOT_LOCK_FMT "zeronf-nf%u.lock"

/** Build id compiled into this binary (git describe + date). */
extern const char zn_build_id[];

/** Instance names are also EAL file prefixes: [A-Za-z0-9_-]{1,31}. */
bool zn_instance_name_valid(const char *name);

/** DPDK's runtime directory of instance @p name (as EAL computes it). */
int zn_runtime_dir(const char *name, char *buf, size_t len);

/** Where instance @p name's tenants' control sockets are: beside DPDK's
 *  runtime directory, <base>/zeronf/<name> (that one is 0700). */
int zn_tenant_dir(const char *name, char *buf, size_t len);

/** mkdir -p with @p mode for each directory made. 0 or -errno. */
int zn_mkdir_p(const char *dir, mode_t mode);

/** Path of @p file inside the runtime directory of @p name. */
int zn_runtime_path(const char *name, const char *file, char *buf,
		    size_t len);

/** Monotonic clock in ns. */
uint64_t zn_now_ns(void);

/** Start time of process @p pid in clock ticks since boot (field 22 of
 *  /proc/pid/stat): with the pid it identifies a process across pid reuse.
 *  @return 0 and *start set, or -ESRCH. */
int zn_proc_start_time(pid_t pid, uint64_t *start);

/** True if process @p pid exists and started at @p start. */
bool zn_proc_alive(pid_t pid, uint64_t start);

/** pidfd of @p pid (readable once it exits), or -errno. */
int zn_pidfd_open(pid_t pid);

/** True if the pidfd's process has exited (non-blocking poll). */
bool zn_pidfd_exited(int pidfd);

/* zn_file.c: files where another process may have put a link */

/** Open (creating) @p path and take a non-blocking flock. @return fd,
 *  -EWOULDBLOCK if another process holds it, or -errno (-ELOOP: @p path
 *  is a symbolic link, not followed; -EPERM: not a regular file). */
int zn_lock_file(const char *path, int op);

/** Open @p name below the directory @p dirfd as root opens a path that an
 *  NF may have written: no symbolic link anywhere on the way and nothing
 *  outside the directory (openat2 RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
 *  RESOLVE_NO_MAGICLINKS), never blocking on a FIFO, and a regular file
 *  with one link (no hard link to a file elsewhere). @return the fd, or
 *  -errno (-ELOOP: a link on the way; -EPERM: not a plain file). */
int zn_open_beneath(int dirfd, const char *name, int flags, mode_t mode);

/** Claim the first free NF slot of instance @p instance: its lock file
 *  (ZN_SLOT_LOCK_FMT), held while the returned fd is open, so the kernel
 *  releases it however its holder dies. @return the fd (*slot set),
 *  -EBUSY if every slot is taken, or -errno. */
int zn_slot_claim(const char *instance, uint16_t *slot);

/* The slot a launcher claimed for its child: ZN_SLOT_ENV="SLOT:FD", FD
 * the slot's lock file, locked (flock: the lock goes with the open file,
 * the child's too). A sandbox of a trust group has no slot's lock file
 * (mgr/nf/sandbox.c): its NF could lock every free slot, and no NF could
 * start. */
#define ZN_SLOT_ENV "ZERONF_SLOT"
/** The slot given in the environment (taken out of it): the fd, *slot
 *  set; -ENOENT: none given; -EBADF: a bad one. */
int zn_slot_given(uint16_t *slot);

/** Trust group @p group's index and file, from instance @p instance's
 *  list (ZN_GROUPS_FILE). 0, -ENOENT (no such group), or -errno. */
int zn_group_file(const char *instance, const char *group, unsigned int *idx,
		  char *path, size_t len);

/** Content of a manager lock file. */
struct zn_mgr_lock_info {
	pid_t pid;
	uint64_t start_time;
	bool ready;
};

/** State of manager instance @p name, from its lock file. @return 1 if a
 *  live manager holds the lock (info filled), 0 if none does, -errno. */
int zn_mgr_probe(const char *name, struct zn_mgr_lock_info *info);

/** Watch the live manager @p info describes (zn_mgr_probe): its pidfd
 *  where its process is seen here, else (in a PID namespace of one's
 *  own) its instance lock, opened. 0 (one of *pidfd, *lock_fd set, the
 *  other -1) or -ENOTCONN (it is gone; both -1). */
int zn_mgr_watch(const char *name, const struct zn_mgr_lock_info *info,
		 int *pidfd, int *lock_fd);

/** The manager zn_mgr_watch watches lives. */
bool zn_mgr_alive(int pidfd, int lock_fd);

/** Copy with truncation, always NUL-terminated. */
void zn_strlcpy(char *dst, const char *src, size_t size);

/** Parse an unsigned decimal integer in [min, max] (leading zeros are
 * decimal: "010" is 10; no hex, no sign, no spaces). @return 0 or -EINVAL. */
int zn_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** A non-blocking Unix socket of @p type (SOCK_STREAM: listening) bound
 *  to @p path (replaced), mode 0600. @return the fd or -errno. */
int zn_unix_bind(const char *path, int type);

#endif /* ZN_UTIL_H */
