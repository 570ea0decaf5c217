/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The unprivileged users sandboxed NFs of trust groups run as
 * (sandbox_pvt.h): group g of this instance is uid and gid
 * base + g, where base is a block of ZN_MAX_GROUPS ids from
 * --sandbox-uid-base that no other instance on the host holds (a lock
 * file per block, taken for the manager's life). No such user exists in
 * /etc/passwd: none needs to, the kernel checks numbers. What the NF
 * needs of the host is made its: its group's hugepage file and kick
 * socket (chown); the instance's lock and group list, which it reads,
 * readable (in a directory only root may enter outside the sandbox).
 */

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/mgr.h"
#include "sandbox_pvt.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/shm/zn_kick.h"

#define UID_DIR "/var/run/zeronf/.uids"
#define UID_BLOCKS 4096

static struct {
	int lock;        /* the block's lock file, -1: none claimed */
	uid_t base;
	char path[PATH_MAX];
} U = { .lock = -1 };

int
zn_sandbox_uid(struct zn_mgr *m, int group, uid_t *uid)
{
	uint64_t base = m->cfg.sandbox_uid_base;
	int fd = -EUSERS;

	if (group < 0 || group >= ZN_MAX_GROUPS || base == 0 ||
	    geteuid() != 0)
		return -ENOENT; /* it runs as we do, without capabilities */
	if (U.lock >= 0) {
		*uid = U.base + (uid_t)group;
		return 0;
	}
	if (zn_mkdir_p(UID_DIR, 0700) < 0)
		return -errno;
	for (unsigned int k = 0; k < UID_BLOCKS; k++) {
		if (base + (uint64_t)(k + 1) * ZN_MAX_GROUPS > UINT32_MAX - 1)
			break;
		snprintf(U.path, sizeof(U.path), UID_DIR "/%u", k);
		fd = zn_lock_file(U.path, LOCK_EX);
		if (fd >= 0) {
			U.lock = fd;
			U.base = (uid_t)(base + (uint64_t)k * ZN_MAX_GROUPS);
			*uid = U.base + (uid_t)group;
			return 0;
		}
		if (fd != -EWOULDBLOCK)
			return fd;
	}
	return fd;
}

int
zn_sandbox_uid_prepare(struct zn_mgr *m, int group, uid_t uid)
{
	char path[PATH_MAX + 64];
	static const char *const readable[] = { ZN_LOCK_FILE,
						ZN_GROUPS_FILE };

	if (chown(m->shm->groups[group].path, uid, (gid_t)uid) < 0)
		return -errno;
	snprintf(path, sizeof(path), "%s/" ZN_KICK_GROUP_SOCK_FMT, m->inst.rundir,
		 (unsigned int)group);
	if (chown(path, uid, (gid_t)uid) < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(readable) / sizeof(readable[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", m->inst.rundir, readable[i]);
		if (chmod(path, 0644) < 0)
			return -errno;
	}
	return 0;
}

bool
zn_sandbox_under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	while (n > 1 && dir[n - 1] == '/')
		n--;
	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '/' || path[n] == '\0');
}

int
zn_sandbox_reachable(const char *path, const char *const *binds,
		     unsigned int n_binds)
{
	char p[PATH_MAX], *slash;
	const char *root = NULL;
	struct stat st;

	/* the program: read (an interpreter reads a script) and run */
	if (stat(path, &st) < 0)
		return -errno;
	if ((st.st_mode & (S_IROTH | S_IXOTH)) != (S_IROTH | S_IXOTH))
		return -EACCES;
	/* The directories above it in the sandbox are bwrap's (0755),
	 * but for those of a directory bound whole that holds it */
	for (unsigned int i = 0; i < n_binds; i++)
		if (binds[i] != NULL && zn_sandbox_under(path, binds[i]) &&
		    (root == NULL || strlen(binds[i]) < strlen(root)))
			root = binds[i];
	if (root == NULL)
		return 0;
	zn_strlcpy(p, path, sizeof(p));
	while ((slash = strrchr(p, '/')) != NULL && slash != p &&
	       zn_sandbox_under(p, root) && strcmp(p, root) != 0) {
		*slash = '\0';
		if (stat(p, &st) < 0)
			return -errno;
		if (!(st.st_mode & S_IXOTH))
			return -EACCES;
	}
	return 0;
}

void
zn_sandbox_uid_fini(void)
{
	if (U.lock < 0)
		return;
	unlink(U.path); /* ours: locked (another takes a new one) */
	close(U.lock);
	U.lock = -1;
}
