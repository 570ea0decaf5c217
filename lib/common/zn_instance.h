/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_COMMON_INSTANCE_H
#define ZN_COMMON_INSTANCE_H

/*
 * An instance as other processes find it (zn_instance.c): its name, its
 * runtime directory and the files there, the manager's lock (is it up,
 * watching it), NF slots' locks, the trust groups' list. The manager,
 * libzeronf and the helpers all go through these.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define ZN_INSTANCE_DEFAULT "zeronf"
#define ZN_LOCK_FILE "zeronf.lock"
/* The instance's trust groups, a line each: "<index> <name> <file>\n";
 * an NF of a group finds its file here (lib/nf/nf_group.c) */
#define ZN_GROUPS_FILE "zeronf-groups"
#define ZN_CTL_SOCK "zeronf.sock"
#define ZN_SLOT_LOCK_FMT "zeronf-nf%u.lock"

/** Instance names are also EAL file prefixes: [A-Za-z0-9_-]{1,31}. */
bool zn_instance_name_valid(const char *name);

/** DPDK's runtime directory of instance @p name (as EAL computes it). */
int zn_runtime_dir(const char *name, char *buf, size_t len);

/** Where instance @p name's tenants' control sockets are: beside DPDK's
 *  runtime directory, <base>/zeronf/<name> (that one is 0700). */
int zn_tenant_dir(const char *name, char *buf, size_t len);

/** Path of @p file inside the runtime directory of @p name. */
int zn_runtime_path(const char *name, const char *file, char *buf,
		    size_t len);

/** Claim the first free NF slot of instance @p instance: its lock file
 *  (ZN_SLOT_LOCK_FMT), held while the returned fd is open, so the kernel
 *  releases it however its holder dies. @return the fd (*slot set),
 *  -EBUSY if every slot is taken, or -errno. */
int zn_slot_claim(const char *instance, uint16_t *slot);

/* The slot a launcher claimed for its child: ZN_SLOT_ENV="SLOT:FD", FD
 * the slot's lock file, locked (flock: the lock goes with the open file,
 * the child's too); or "SLOT": that slot's lock file, the one a pod has
 * (k8s/deviceplugin mounts it alone), locked here. A sandbox of a trust
 * group has no slot's lock file but the one given (mgr/nf/sandbox.c): its
 * NF could lock every free slot, and no NF could start. */
#define ZN_SLOT_ENV "ZERONF_SLOT"
/** The slot given in the environment (taken out of it): the fd, *slot
 *  set; -ENOENT: none given; -EBADF: a bad one; -EBUSY: "SLOT" is
 *  held. */
int zn_slot_given(const char *instance, uint16_t *slot);

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

#endif /* ZN_COMMON_INSTANCE_H */
