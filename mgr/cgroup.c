/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * cgroups of launched NFs (sandbox.h): <root>/zeronf/<instance>/<replica>,
 * with cpuset.cpus and a memory limit. cgroup v2 (one hierarchy, the
 * controllers enabled in each parent's subtree_control) or v1 (a cpuset
 * and a memory hierarchy; a v1 cpuset group needs cpus and mems before it
 * takes a process: copied from its parent). zeronf-run joins them before
 * the NF starts, so everything the NF does is inside.
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mgr.h"
#include "sandbox.h"
#include "../lib/common/zn_util.h"

#define V2_ROOT "/sys/fs/cgroup"
#define V1_CPUSET "/sys/fs/cgroup/cpuset"
#define V1_MEMORY "/sys/fs/cgroup/memory"

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

static bool
is_v2(void)
{
	return access(V2_ROOT "/cgroup.controllers", F_OK) == 0;
}

/* mkdir DIR under @p root for each of zeronf, instance, replica; in a v1
 * cpuset hierarchy, give each new group its parent's cpus and mems; in
 * v2, enable the controllers in each parent. */
static int
make_path(const char *root, const char *instance, const char *name,
	  bool v1_cpuset, bool v2, char *out, size_t len)
{
	const char *parts[3] = { "zeronf", instance, name };
	char dir[PATH_MAX], parent[PATH_MAX], val[1024];
	int rc;

	zn_strlcpy(dir, root, sizeof(dir));
	for (int i = 0; i < 3; i++) {
		zn_strlcpy(parent, dir, sizeof(parent));
		if (v2) /* best effort: some may be enabled already */
			(void)put(parent, "cgroup.subtree_control",
				  "+cpuset +memory");
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

int
zn_cgroup_make(struct zn_mgr *m, const char *name, const char *cpus,
	       unsigned int memory_mb, struct zn_cgroup *cg, char *err,
	       size_t errlen)
{
	const char *inst = m->cfg.instance;
	char mem[32];
	int rc;

	memset(cg, 0, sizeof(*cg));
	snprintf(mem, sizeof(mem), "%llu",
		 (unsigned long long)memory_mb << 20);
	if (is_v2()) {
		rc = make_path(V2_ROOT, inst, name, false, true, cg->dirs[0],
			       sizeof(cg->dirs[0]));
		if (rc == 0)
			cg->n = 1;
		if (rc == 0 && cpus != NULL)
			rc = put(cg->dirs[0], "cpuset.cpus", cpus);
		if (rc == 0 && memory_mb != 0)
			rc = put(cg->dirs[0], "memory.max", mem);
	} else {
		rc = make_path(V1_CPUSET, inst, name, true, false, cg->dirs[0],
			       sizeof(cg->dirs[0]));
		if (rc == 0)
			cg->n = 1;
		if (rc == 0 && cpus != NULL)
			rc = put(cg->dirs[0], "cpuset.cpus", cpus);
		if (rc == 0 && memory_mb != 0) {
			rc = make_path(V1_MEMORY, inst, name, false, false,
				       cg->dirs[1], sizeof(cg->dirs[1]));
			if (rc == 0) {
				cg->n = 2;
				rc = put(cg->dirs[1], "memory.limit_in_bytes",
					 mem);
			}
		}
	}
	if (rc < 0) {
		snprintf(err, errlen, "cgroup of %s (cgroup v%d): %s", name,
			 is_v2() ? 2 : 1, strerror(-rc));
		zn_cgroup_remove(cg);
	}
	return rc;
}

void
zn_cgroup_remove(const struct zn_cgroup *cg)
{
	for (unsigned int i = 0; i < cg->n; i++)
		rmdir(cg->dirs[i]);
}

void
zn_cgroup_fini(struct zn_mgr *m)
{
	const char *roots[] = { V2_ROOT, V1_CPUSET, V1_MEMORY };
	char dir[PATH_MAX];

	for (unsigned int i = 0; i < 3; i++) {
		snprintf(dir, sizeof(dir), "%s/zeronf/%s", roots[i],
			 m->cfg.instance);
		rmdir(dir);
		snprintf(dir, sizeof(dir), "%s/zeronf", roots[i]);
		rmdir(dir); /* fails while another instance uses it */
	}
}
