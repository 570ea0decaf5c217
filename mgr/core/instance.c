/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * One manager instance = one EAL file prefix. This file owns its on-disk
 * state: the runtime directory (/var/run/dpdk/<name>), the instance lock
 * held for the manager's whole life, and the hugepage files <name>map_*.
 *
 * A manager that was killed leaves all of it behind, and DPDK secondaries
 * may still be attached. At start we take the lock; if state is left over
 * we wait (briefly) for this instance's NFs to go - they notice a dead
 * manager within 2 s - and then remove exactly this instance's files:
 * never another instance's, never a blanket rm.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <mntent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "cmd.h"
#include "instance.h"
#include "mgr.h"
#include "subsys.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"

#define HUGETLBFS_MAGIC 0x958458f6
#define STALE_WAIT_NS (5ULL * 1000 * 1000 * 1000)

int
zn_find_huge_dir(char *buf, size_t len)
{
	FILE *f = setmntent("/proc/mounts", "r");
	struct mntent *e;
	int rc = -ENOENT;

	if (f == NULL)
		return -errno;
	while ((e = getmntent(f)) != NULL) {
		if (strcmp(e->mnt_type, "hugetlbfs") != 0)
			continue;
		/* Prefer a mount with the default page size (no pagesize=). */
		if (rc == 0 && hasmntopt(e, "pagesize") != NULL)
			continue;
		zn_strlcpy(buf, e->mnt_dir, len);
		rc = 0;
		if (hasmntopt(e, "pagesize") == NULL)
			break;
	}
	endmntent(f);
	return rc;
}

/* Is <name>map_<digits> (a hugepage file of this instance)? */
static bool
is_hugefile_of(const char *file, const char *name)
{
	size_t n = strlen(name);

	if (strncmp(file, name, n) != 0)
		return false;
	/* DPDK's "<prefix>map_N", and a trust group's "<prefix>tg_N"
	 * (ZN_GROUP_FILE_FMT) */
	if (strncmp(file + n, "map_", 4) == 0)
		file += n + 4;
	else if (strncmp(file + n, "tg_", 3) == 0)
		file += n + 3;
	else
		return false;
	if (*file == '\0')
		return false;
	for (; *file != '\0'; file++)
		if (*file < '0' || *file > '9')
			return false;
	return true;
}

/* Calls fn(path, arg) for each hugepage file of the instance. */
static int
for_each_hugefile(const struct zn_mgr *m, int (*fn)(const char *, void *),
		  void *arg)
{
	DIR *d = opendir(m->inst.huge_dir);
	struct dirent *e;
	char path[PATH_MAX * 2];
	int rc = 0;

	if (d == NULL)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) != NULL && rc == 0) {
		if (!is_hugefile_of(e->d_name, m->cfg.instance))
			continue;
		snprintf(path, sizeof(path), "%s/%s", m->inst.huge_dir, e->d_name);
		rc = fn(path, arg);
	}
	closedir(d);
	return rc;
}

static int
hugefile_busy(const char *path, void *arg)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);

	(void)arg;
	if (fd < 0)
		return 0;
	/* Every DPDK process mapping the page holds a shared lock on it. */
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		close(fd);
		return -EBUSY;
	}
	close(fd);
	return 0;
}

/* Pids of NFs still holding slot locks of this instance. */
static int
live_slots(const struct zn_mgr *m, char *pids, size_t len)
{
	int busy = 0;
	size_t off = 0;

	pids[0] = '\0';
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		char file[32], path[PATH_MAX + 32], buf[32] = "";
		int fd;

		snprintf(file, sizeof(file), ZN_SLOT_LOCK_FMT, s);
		snprintf(path, sizeof(path), "%s/%s", m->inst.rundir, file);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

			buf[n > 0 ? n : 0] = '\0';
			buf[strcspn(buf, "\n")] = '\0';
			if (off < len)
				off += (size_t)snprintf(pids + off, len - off,
							"%s%s", busy ? "," : "",
							buf[0] ? buf : "?");
			busy++;
		}
		close(fd);
	}
	return busy;
}

unsigned int
zn_unlink_matching(const char *dir,
		   bool (*match)(const char *name, const void *arg),
		   const void *arg)
{
	/* @p dir may have been replaced by a link to elsewhere (an NF writes
	 * the runtime directory): not followed, and each name unlinked in
	 * the directory opened */
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *e;
	unsigned int n = 0;

	if (d == NULL) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    !match(e->d_name, arg))
			continue;
		/* an empty directory of a file's name: what a container
		 * runtime makes of a bind mount whose file was gone (an NF
		 * pod restarted while its manager was down: docs/kubernetes.md) */
		if (unlinkat(dirfd(d), e->d_name, 0) == 0 ||
		    (errno == EISDIR &&
		     unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) == 0))
			n++;
	}
	closedir(d);
	return n;
}

static bool
not_the_lock(const char *name, const void *arg)
{
	(void)arg;
	return strcmp(name, ZN_LOCK_FILE) != 0;
}

static bool
hugefile_match(const char *name, const void *instance)
{
	return is_hugefile_of(name, instance);
}

/* Remove every file of the runtime directory except the instance lock. */
static void
clean_rundir(const struct zn_mgr *m)
{
	zn_unlink_matching(m->inst.rundir, not_the_lock, NULL);
}

static int
clean_stale(struct zn_mgr *m)
{
	uint64_t deadline = zn_now_ns() + STALE_WAIT_NS;
	unsigned int removed = 0;
	char pids[256];
	int busy;

	for (;;) {
		busy = live_slots(m, pids, sizeof(pids));
		if (busy == 0 && for_each_hugefile(m, hugefile_busy, NULL) == 0)
			break;
		if (zn_now_ns() > deadline) {
			if (busy > 0)
				ZN_LOG(ERR, "instance '%s': a previous manager "
				       "died and %d of its NFs are still "
				       "running (pid %s); stop them first",
				       m->cfg.instance, busy, pids);
			else
				ZN_LOG(ERR, "instance '%s': hugepage files in "
				       "%s are still mapped by another "
				       "process", m->cfg.instance, m->inst.huge_dir);
			return -EBUSY;
		}
		usleep(50000);
	}
	clean_rundir(m);
	removed = zn_unlink_matching(m->inst.huge_dir, hugefile_match,
				     m->cfg.instance);
	ZN_LOG(NOTICE, "instance '%s': removed stale state of a previous "
	       "manager (%u hugepage files)", m->cfg.instance, removed);
	return 0;
}

static int
hugefile_count(const char *path, void *arg)
{
	(void)path;
	(*(unsigned int *)arg)++;
	return 0;
}

/* Anything left by a previous manager of this name: files in the runtime
 * directory other than the lock, or hugepage files. */
static bool
has_stale_state(const struct zn_mgr *m)
{
	DIR *d = opendir(m->inst.rundir);
	struct dirent *e;
	unsigned int n = 0;

	if (d != NULL) {
		while ((e = readdir(d)) != NULL)
			if (strcmp(e->d_name, ".") != 0 &&
			    strcmp(e->d_name, "..") != 0 &&
			    strcmp(e->d_name, ZN_LOCK_FILE) != 0)
				n++;
		closedir(d);
	}
	for_each_hugefile(m, hugefile_count, &n);
	return n > 0;
}

static void
write_lock_info(struct zn_mgr *m, int ready)
{
	char buf[96];
	uint64_t start = 0;
	int n;

	zn_proc_start_time(getpid(), &start);
	n = snprintf(buf, sizeof(buf), "%d %llu %d\n", (int)getpid(),
		     (unsigned long long)start, ready);
	if (ftruncate(m->inst.lock_fd, 0) == 0)
		(void)!pwrite(m->inst.lock_fd, buf, (size_t)n, 0);
}

int
zn_instance_acquire(struct zn_mgr *m)
{
	struct zn_mgr_lock_info info;
	char path[PATH_MAX + 32];
	int rc;

	if (m->cfg.huge_dir[0] != '\0') {
		struct statfs sfs;

		if (statfs(m->cfg.huge_dir, &sfs) < 0 ||
		    (unsigned long)sfs.f_type != HUGETLBFS_MAGIC) {
			ZN_LOG(ERR, "--huge-dir %s is not a hugetlbfs mount",
			       m->cfg.huge_dir);
			return -EINVAL;
		}
		zn_strlcpy(m->inst.huge_dir, m->cfg.huge_dir, sizeof(m->inst.huge_dir));
	} else if (zn_find_huge_dir(m->inst.huge_dir, sizeof(m->inst.huge_dir)) < 0) {
		ZN_LOG(ERR, "no hugetlbfs mount: run 'make setup' (or mount "
		       "-t hugetlbfs nodev /mnt/huge)");
		return -ENOENT;
	}
	rc = zn_runtime_dir(m->cfg.instance, m->inst.rundir, sizeof(m->inst.rundir));
	if (rc == 0)
		rc = zn_mkdir_p(m->inst.rundir, 0700);
	if (rc < 0) {
		ZN_LOG(ERR, "cannot create %s: %s", m->inst.rundir, strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/%s", m->inst.rundir, ZN_LOCK_FILE);
	m->inst.lock_fd = zn_lock_file(path, LOCK_EX);
	if (m->inst.lock_fd == -EWOULDBLOCK) {
		zn_mgr_probe(m->cfg.instance, &info);
		ZN_LOG(ERR, "instance '%s' is already running (manager pid %d)",
		       m->cfg.instance, (int)info.pid);
		return -EEXIST;
	}
	if (m->inst.lock_fd < 0) {
		ZN_LOG(ERR, "cannot lock %s: %s", path, strerror(-m->inst.lock_fd));
		return m->inst.lock_fd;
	}
	write_lock_info(m, 0);
	if (has_stale_state(m)) {
		rc = clean_stale(m);
		if (rc < 0) {
			close(m->inst.lock_fd);
			m->inst.lock_fd = -1;
			return rc;
		}
	}
	return 0;
}

void
zn_instance_set_ready(struct zn_mgr *m)
{
	write_lock_info(m, 1);
}

void
zn_instance_release(struct zn_mgr *m)
{
	char path[PATH_MAX + 32];

	if (m->inst.lock_fd < 0)
		return;
	clean_rundir(m);
	zn_unlink_matching(m->inst.huge_dir, hugefile_match, m->cfg.instance);
	snprintf(path, sizeof(path), "%s/%s", m->inst.rundir, ZN_LOCK_FILE);
	unlink(path);
	close(m->inst.lock_fd);
	m->inst.lock_fd = -1;
	rmdir(m->inst.rundir);
}

static int
cmd_shutdown(struct zn_cmd_req *req)
{
	req->mgr->shutdown_requested = true;
	req->result = json_pack("{s:b}", "shutting_down", 1);
	return 0;
}

static const struct zn_cmd shutdown_cmd = {
	.name = "shutdown",
	.help = "stop every NF and the manager",
	.result = "{\"shutting_down\": true}",
	.fn = cmd_shutdown,
};
ZN_CMD_REGISTER(shutdown_cmd)

static const struct zn_subsys subsys = {
	.name = "instance", .order = ZN_SUBSYS_INSTANCE,
	.init = zn_instance_acquire, .fini = zn_instance_release,
};
ZN_SUBSYS_REGISTER(subsys)
