/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * cgroups of launched NFs (sandbox.h): <root>/zeronf/<instance>/<replica>,
 * with cpuset.cpus and a memory limit. cgroup v2 (one hierarchy, the
 * controllers enabled in each parent's subtree_control) or v1 (a cpuset
 * and a memory hierarchy; a v1 cpuset group needs cpus and mems before it
 * takes a process: copied from its parent). zeronf-run joins them before
 * the NF starts, so everything the NF does is inside. A tenant's NF that
 * something else started joins its tenant's "outside" group when it
 * registers (zn_cgroup_adopt).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/mgr.h"
#include "sandbox.h"
#include "../../lib/common/zn_util.h"

#define DEFAULT_ROOT "/sys/fs/cgroup"

static int
put(const char *dir, const char *file, const char *val)
{
	char path[PATH_MAX + 64];
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		rc = -errno;
	close(fd);
	return rc;
}

static int
get(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX + 64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* --cgroup-root: a cgroup v2 directory, or v1's mount directory. */
static const char *
root_of(const struct zn_mgr *m)
{
	return m->cfg.cgroup_root[0] ? m->cfg.cgroup_root : DEFAULT_ROOT;
}

static bool
is_v2(const char *root)
{
	char path[PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/cgroup.controllers", root);
	return access(path, F_OK) == 0;
}

/* A v2 limit file that is not there: its controller is not enabled for
 * the group. Said where: the root when it does not have the controller
 * at all (bound to a v1 hierarchy, not delegated), else the replica's
 * parent (enabling it there failed); with what that one has. */
static bool
has_word(const char *list, const char *w)
{
	size_t n = strlen(w);

	for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return true;
	return false;
}

static void
v2_missing(const char *root, const char *dir, const char *ctl, char *err,
	   size_t errlen)
{
	char where[PATH_MAX], have[256];
	char *slash;

	zn_strlcpy(where, root, sizeof(where));
	if (get(where, "cgroup.controllers", have, sizeof(have)) == 0 &&
	    has_word(have, ctl)) {
		zn_strlcpy(where, dir, sizeof(where));
		slash = strrchr(where, '/');
		if (slash != NULL)
			*slash = '\0';
		if (get(where, "cgroup.controllers", have, sizeof(have)) < 0)
			have[0] = '\0';
	}
	snprintf(err, errlen, "cgroup v2: the %s controller is not available "
		 "in %s (it has: %s): enable it in the parents' "
		 "cgroup.subtree_control, or give --cgroup-root a directory "
		 "that has it", ctl, where, have[0] ? have : "none");
}

/* mkdir DIR under @p root for each of zeronf, instance, the tenant's
 * (tenant-NAME, when @p tenant is not NULL: its NFs' limits together),
 * replica; in a v1 cpuset hierarchy, give each new group its parent's
 * cpus and mems; in v2, enable the controllers in each parent. */
static int
make_path(const char *root, const char *instance, const char *tenant,
	  const char *name, bool v1_cpuset, bool v2, char *out, size_t len)
{
	const char *parts[4] = { "zeronf", instance, tenant, name };
	char dir[PATH_MAX], parent[PATH_MAX], val[1024];
	int rc;

	zn_strlcpy(dir, root, sizeof(dir));
	for (int i = 0; i < 4; i++) {
		if (parts[i] == NULL)
			continue;
		zn_strlcpy(parent, dir, sizeof(parent));
		if (v2) /* best effort: some may be enabled already */
			(void)put(parent, "cgroup.subtree_control",
				  "+cpuset +memory +cpu");
		if ((size_t)snprintf(dir, sizeof(dir), "%s/%s", parent,
				     parts[i]) >= sizeof(dir))
			return -ENAMETOOLONG;
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			return -errno;
		if (v1_cpuset) {
			for (int k = 0; k < 2; k++) {
				const char *f = k ? "cpuset.mems" :
						    "cpuset.cpus";

				rc = get(dir, f, val, sizeof(val));
				if (rc == 0 && val[0] != '\0')
					continue;
				rc = get(parent, f, val, sizeof(val));
				if (rc == 0)
					rc = put(dir, f, val);
				if (rc < 0)
					return rc;
			}
		}
	}
	zn_strlcpy(out, dir, len);
	return 0;
}

/* A tenant's limits, on the group above its NFs' (@p replica's parent):
 * v2 cpu.max and memory.max there; v1 the cpu and memory hierarchies'
 * own directories (@p cpu, @p mem), made by the caller. */
static int
tenant_limits(const struct zn_tenant_cfg *t, bool v2, const char *replica,
	      const char *cpu, const char *mem, char *err, size_t errlen,
	      const char *root)
{
	char dir[PATH_MAX], v[64];
	int rc = 0;

	if (t->cpu_pct != 0) {
		zn_strlcpy(dir, v2 ? replica : cpu, sizeof(dir));
		*strrchr(dir, '/') = '\0';
		/* PCT % of one CPU in each 100 ms */
		snprintf(v, sizeof(v), v2 ? "%u 100000" : "%u",
			 t->cpu_pct * 1000);
		rc = put(dir, v2 ? "cpu.max" : "cpu.cfs_quota_us", v);
		if (rc == -ENOENT && v2)
			v2_missing(root, replica, "cpu", err, errlen);
	}
	if (rc == 0 && t->mem_mb != 0) {
		zn_strlcpy(dir, v2 ? replica : mem, sizeof(dir));
		*strrchr(dir, '/') = '\0';
		snprintf(v, sizeof(v), "%llu",
			 (unsigned long long)t->mem_mb << 20);
		rc = put(dir, v2 ? "memory.max" : "memory.limit_in_bytes", v);
		if (rc == -ENOENT && v2)
			v2_missing(root, replica, "memory", err, errlen);
	}
	return rc;
}

int
zn_cgroup_make(struct zn_mgr *m, const char *name, const char *cpus,
	       unsigned int memory_mb, int tenant, struct zn_cgroup *cg,
	       char *err, size_t errlen)
{
	const struct zn_tenant_cfg *t = tenant >= 0 ?
					&m->cfg.tenants[tenant] : NULL;
	const char *inst = m->cfg.instance, *root = root_of(m);
	char mem[32], v1[PATH_MAX + 16], tdir[ZN_NAME_LEN + 8];
	const char *td = NULL;
	bool v2 = is_v2(root), v1_mem, v1_cpu;
	int rc;

	memset(cg, 0, sizeof(*cg));
	err[0] = '\0';
	if (t != NULL) {
		snprintf(tdir, sizeof(tdir), "tenant-%s", t->name);
		td = tdir;
	}
	snprintf(mem, sizeof(mem), "%llu",
		 (unsigned long long)memory_mb << 20);
	if (v2) {
		rc = make_path(root, inst, td, name, false, true, cg->dirs[0],
			       sizeof(cg->dirs[0]));
		if (rc == 0)
			cg->n = 1;
		if (rc == 0 && cpus != NULL &&
		    (rc = put(cg->dirs[0], "cpuset.cpus", cpus)) == -ENOENT)
			v2_missing(root, cg->dirs[0], "cpuset", err, errlen);
		if (rc == 0 && memory_mb != 0 &&
		    (rc = put(cg->dirs[0], "memory.max", mem)) == -ENOENT)
			v2_missing(root, cg->dirs[0], "memory", err, errlen);
		if (rc == 0 && t != NULL)
			rc = tenant_limits(t, true, cg->dirs[0], NULL, NULL,
					   err, errlen, root);
	} else {
		v1_mem = memory_mb != 0 || (t != NULL && t->mem_mb != 0);
		v1_cpu = t != NULL && t->cpu_pct != 0;
		snprintf(v1, sizeof(v1), "%s/cpuset", root);
		rc = make_path(v1, inst, td, name, true, false, cg->dirs[0],
			       sizeof(cg->dirs[0]));
		if (rc == 0)
			cg->n = 1;
		if (rc == 0 && cpus != NULL)
			rc = put(cg->dirs[0], "cpuset.cpus", cpus);
		if (rc == 0 && v1_mem) {
			snprintf(v1, sizeof(v1), "%s/memory", root);
			rc = make_path(v1, inst, td, name, false, false,
				       cg->dirs[cg->n], sizeof(cg->dirs[0]));
			if (rc == 0 && ++cg->n && memory_mb != 0)
				rc = put(cg->dirs[cg->n - 1],
					 "memory.limit_in_bytes", mem);
		}
		if (rc == 0 && v1_cpu) {
			snprintf(v1, sizeof(v1), "%s/cpu", root);
			rc = make_path(v1, inst, td, name, false, false,
				       cg->dirs[cg->n], sizeof(cg->dirs[0]));
			if (rc == 0)
				cg->n++;
		}
		if (rc == 0 && t != NULL)
			rc = tenant_limits(t, false, NULL,
					   v1_cpu ? cg->dirs[cg->n - 1] : NULL,
					   v1_mem ? cg->dirs[1] : NULL, err,
					   errlen, root);
	}
	if (rc < 0) {
		if (err[0] == '\0')
			snprintf(err, errlen, "cgroup of %s (cgroup v%d under "
				 "%s): %s", name, v2 ? 2 : 1, root,
				 strerror(-rc));
		zn_cgroup_remove(cg);
		zn_cgroup_fini(m);
	}
	return rc;
}

void
zn_cgroup_remove(const struct zn_cgroup *cg)
{
	for (unsigned int i = 0; i < cg->n; i++)
		rmdir(cg->dirs[i]);
}

/* Is process @p pid in a cgroup under @p want (a path from the root,
 * ending in '/')? Reads /proc/PID/cgroup: a line per hierarchy. */
static bool
in_cgroup(pid_t pid, const char *want)
{
	char path[64], buf[4096];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, want) != NULL;
}

int
zn_cgroup_adopt(struct zn_mgr *m, int tenant, pid_t pid, char *err,
		size_t errlen)
{
	const struct zn_tenant_cfg *t = &m->cfg.tenants[tenant];
	char want[ZN_NAME_LEN * 2 + 32], v[16];
	struct zn_cgroup cg;
	int rc;

	err[0] = '\0';
	if (t->cpu_pct == 0 && t->mem_mb == 0)
		return 0; /* no limits to hold it to */
	snprintf(want, sizeof(want), "/zeronf/%s/tenant-%s/", m->cfg.instance,
		 t->name);
	if (in_cgroup(pid, want))
		return 0; /* launched by nf.start: in its replica's group */
	rc = zn_cgroup_make(m, "outside", NULL, 0, tenant, &cg, err, errlen);
	snprintf(v, sizeof(v), "%d", (int)pid);
	for (unsigned int i = 0; rc == 0 && i < cg.n; i++)
		rc = put(cg.dirs[i], "cgroup.procs", v);
	if (rc < 0 && err[0] == '\0')
		snprintf(err, errlen, "cannot move it into %s: %s",
			 cg.dirs[0], strerror(-rc));
	return rc;
}

/* Remove this instance's cgroup @p dir: busy while a process of ours
 * in it is still exiting (an NF that left moments ago: its parent may not
 * have reaped it yet), so tried again until @p until (ns). */
static void
rmdir_ours(const char *dir, uint64_t until)
{
	while (rmdir(dir) < 0 && errno == EBUSY && zn_now_ns() < until)
		usleep(10000);
}

void
zn_cgroup_fini(struct zn_mgr *m)
{
	const char *sub[] = { "", "/cpuset", "/memory", "/cpu" };
	uint64_t until = zn_now_ns() + 1000000000ULL;
	char dir[PATH_MAX + 64];

	/* Each fails while in use (another replica, another instance). */
	for (unsigned int i = 0; i < 4; i++) {
		for (unsigned int t = 0; t < m->cfg.n_tenants; t++) {
			snprintf(dir, sizeof(dir), "%s%s/zeronf/%s/tenant-%s/"
				 "outside", root_of(m), sub[i],
				 m->cfg.instance, m->cfg.tenants[t].name);
			rmdir_ours(dir, until);
			*strrchr(dir, '/') = '\0';
			rmdir_ours(dir, until);
		}
		snprintf(dir, sizeof(dir), "%s%s/zeronf/%s", root_of(m),
			 sub[i], m->cfg.instance);
		rmdir_ours(dir, until);
		snprintf(dir, sizeof(dir), "%s%s/zeronf", root_of(m), sub[i]);
		rmdir(dir);
	}
}
