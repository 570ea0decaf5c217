/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* An instance as other processes find it (zn_instance.h). */

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "zn_instance.h"
#include "zn_util.h"
#include "../shm/zn_shm.h"

bool
zn_instance_name_valid(const char *name)
{
	size_t n = 0;

	if (name == NULL)
		return false;
	for (; name[n] != '\0'; n++) {
		unsigned char c = (unsigned char)name[n];

		if (!isalnum(c) && c != '_' && c != '-')
			return false;
	}
	return n >= 1 && n < ZN_NAME_LEN;
}

/* Mirrors eal_create_runtime_dir() of DPDK 22.11: root uses /var/run,
 * others $XDG_RUNTIME_DIR or /tmp. */
int
zn_runtime_dir(const char *name, char *buf, size_t len)
{
	const char *base = "/var/run";
	int n;

	if (getuid() != 0) {
		const char *xdg = getenv("XDG_RUNTIME_DIR");

		base = xdg != NULL ? xdg : "/tmp";
	}
	n = snprintf(buf, len, "%s/dpdk/%s", base, name);
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int
zn_tenant_dir(const char *name, char *buf, size_t len)
{
	char dpdk[PATH_MAX];
	int n, rc = zn_runtime_dir(name, dpdk, sizeof(dpdk));

	if (rc < 0)
		return rc;
	/* <base>/dpdk/<name> -> <base>/zeronf/<name> */
	dpdk[strlen(dpdk) - strlen(name) - strlen("/dpdk/")] = '\0';
	n = snprintf(buf, len, "%s/zeronf/%s", dpdk, name);
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int
zn_runtime_path(const char *name, const char *file, char *buf, size_t len)
{
	char dir[PATH_MAX];
	int n, rc;

	rc = zn_runtime_dir(name, dir, sizeof(dir));
	if (rc < 0)
		return rc;
	n = snprintf(buf, len, "%s/%s", dir, file);
	return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int
zn_mgr_probe(const char *name, struct zn_mgr_lock_info *info)
{
	char path[PATH_MAX], buf[128];
	unsigned long long start = 0;
	int pid = 0, ready = 0;
	ssize_t n;
	int fd, rc;

	memset(info, 0, sizeof(*info));
	rc = zn_runtime_path(name, ZN_LOCK_FILE, path, sizeof(path));
	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* The manager holds LOCK_EX for its whole life. */
	if (flock(fd, LOCK_SH | LOCK_NB) == 0) {
		close(fd);
		return 0;
	}
	if (errno != EWOULDBLOCK) {
		rc = -errno;
		close(fd);
		return rc;
	}
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	close(fd);
	if (n > 0) {
		buf[n] = '\0';
		if (sscanf(buf, "%d %llu %d", &pid, &start, &ready) < 2)
			pid = 0;
	}
	info->pid = pid;
	info->start_time = start;
	info->ready = ready == 1;
	return 1;
}

/* Write our pid into a slot's lock file @p fd (who holds the slot). */
static void
slot_holder(int fd)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (ftruncate(fd, 0) == 0)
		(void)!pwrite(fd, buf, (size_t)n, 0);
}

/* Slot @p s's lock file, locked and ours (our pid in it): the fd, or
 * -EWOULDBLOCK (another NF's), or -errno. */
static int
slot_lock(const char *instance, unsigned int s)
{
	char path[PATH_MAX], file[32];
	int fd;

	snprintf(file, sizeof(file), ZN_SLOT_LOCK_FMT, s);
	if (zn_runtime_path(instance, file, path, sizeof(path)))
		return -ENAMETOOLONG;
	fd = zn_lock_file(path, LOCK_EX);
	if (fd >= 0)
		slot_holder(fd);
	return fd;
}

int
zn_slot_given(const char *instance, uint16_t *slot)
{
	const char *v = getenv(ZN_SLOT_ENV);
	unsigned int s, fd;
	struct stat st;
	int n = 0;

	if (v == NULL)
		return -ENOENT;
	/* "SLOT": its lock file by name (the only one a pod has: the
	 * device plugin mounts it, k8s/deviceplugin) */
	if (sscanf(v, "%u%n", &s, &n) == 1 && v[n] == '\0') {
		int lfd;

		if (s >= ZN_MAX_NFS)
			return -EBADF;
		lfd = slot_lock(instance, s);
		if (lfd < 0)
			return lfd == -EWOULDBLOCK ? -EBUSY : lfd;
		unsetenv(ZN_SLOT_ENV);
		*slot = (uint16_t)s;
		return lfd;
	}
	if (sscanf(v, "%u:%u", &s, &fd) != 2 || s >= ZN_MAX_NFS ||
	    fd > INT16_MAX || fstat((int)fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    flock((int)fd, LOCK_EX | LOCK_NB) < 0) /* ours: a no-op */
		return -EBADF;
	unsetenv(ZN_SLOT_ENV);
	(void)fcntl((int)fd, F_SETFD, FD_CLOEXEC);
	slot_holder((int)fd);
	*slot = (uint16_t)s;
	return (int)fd;
}

int
zn_slot_claim(const char *instance, uint16_t *slot)
{
	for (unsigned int i = 0; i < ZN_MAX_NFS; i++) {
		int fd = slot_lock(instance, i);

		if (fd == -EWOULDBLOCK)
			continue;
		if (fd >= 0)
			*slot = (uint16_t)i;
		return fd;
	}
	return -EBUSY;
}

int
zn_group_file(const char *instance, const char *group, unsigned int *idx,
	      char *path, size_t len)
{
	char list[PATH_MAX], line[ZN_GROUP_PATH_LEN + ZN_NAME_LEN + 32];
	int rc = -ENOENT;
	FILE *f;

	if (zn_runtime_path(instance, ZN_GROUPS_FILE, list, sizeof(list)) < 0)
		return -ENAMETOOLONG;
	f = fopen(list, "re");
	if (f == NULL)
		return -ENOENT; /* a manager without groups */
	while (rc == -ENOENT && fgets(line, sizeof(line), f) != NULL) {
		char name[ZN_NAME_LEN + 1];
		unsigned int i;
		int at = 0;

		line[strcspn(line, "\n")] = '\0';
		if (sscanf(line, "%u %32s %n", &i, name, &at) != 2 || at == 0 ||
		    i >= ZN_MAX_GROUPS || strcmp(name, group) != 0)
			continue;
		*idx = i;
		if (strlen(line + at) >= len)
			rc = -ENAMETOOLONG;
		else
			rc = (zn_strlcpy(path, line + at, len), 0);
	}
	fclose(f);
	return rc;
}

bool
zn_mgr_alive(int pidfd, int lock_fd)
{
	if (pidfd >= 0)
		return !zn_pidfd_exited(pidfd);
	/* The manager holds its instance lock (LOCK_EX) for its whole life,
	 * so a shared lock taken here means it is gone. Given back at once:
	 * a manager starting anew must get it. */
	if (flock(lock_fd, LOCK_SH | LOCK_NB) == 0) {
		flock(lock_fd, LOCK_UN);
		return false;
	}
	return errno == EWOULDBLOCK || errno == EINTR;
}

int
zn_mgr_watch(const char *name, const struct zn_mgr_lock_info *info,
	     int *pidfd, int *lock_fd)
{
	char path[PATH_MAX];

	*pidfd = *lock_fd = -1;
	/* The manager's pid means something only if its process is seen
	 * here; in a PID namespace of its own (sandboxed) the watcher
	 * watches the manager's instance lock instead. */
	if (zn_proc_alive(info->pid, info->start_time)) {
		*pidfd = zn_pidfd_open(info->pid);
		if (*pidfd >= 0 && zn_proc_alive(info->pid, info->start_time))
			return 0;
	} else if (zn_runtime_path(name, ZN_LOCK_FILE, path,
				   sizeof(path)) == 0) {
		*lock_fd = open(path, O_RDONLY | O_CLOEXEC);
		if (*lock_fd >= 0 && zn_mgr_alive(-1, *lock_fd))
			return 0;
	}
	if (*pidfd >= 0)
		close(*pidfd);
	if (*lock_fd >= 0)
		close(*lock_fd);
	*pidfd = *lock_fd = -1;
	return -ENOTCONN;
}
