/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_UTIL_H
#define ZN_UTIL_H

/**
 * @file
 * Helpers shared by the manager and libzeronf (not part of the public API):
 * logging, the clock, process liveness, files another process may have
 * touched, strings and numbers. An instance's names, files and locks are
 * zn_instance.h's, CPU lists zn_cpus.h's, the kick socket's protocol
 * lib/shm/zn_kick.h's.
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

/** Build id compiled into this binary (git describe + date). */
extern const char zn_build_id[];

/** mkdir -p with @p mode for each directory made. 0 or -errno. */
int zn_mkdir_p(const char *dir, mode_t mode);

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

/** Copy with truncation, always NUL-terminated. */
void zn_strlcpy(char *dst, const char *src, size_t size);

/** Parse an unsigned decimal integer in [min, max] (leading zeros are
 * decimal: "010" is 10; no hex, no sign, no spaces). @return 0 or -EINVAL. */
int zn_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out);

/** A non-blocking Unix socket of @p type (SOCK_STREAM: listening) bound
 *  to @p path (replaced), mode 0600. @return the fd or -errno. */
int zn_unix_bind(const char *path, int type);

#endif /* ZN_UTIL_H */
