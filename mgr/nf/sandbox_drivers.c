/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * What a sandbox shows of DPDK's driver directory (sandbox_pvt.h): only
 * the drivers an NF needs, worked out once from what this process loaded.
 */

#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

#include <link.h>

#include <rte_bus_vdev.h>
#include <rte_eal.h>
#include <rte_mempool.h>

#include "../core/mgr.h"
#include "sandbox_pvt.h"
#include "arena.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_util.h"

/*
 * DPDK's driver directory (RTE_EAL_PMD_PATH): every process's EAL loads
 * all of it, 250 drivers in Debian's build, 60 ms of an NF's start
 * (measured: 121 -> 61 ms to registered). An NF needs none but the packet
 * pool's mempool driver, linked anyway (meson.build: its ops index is then
 * the same in every process). A sandbox sees that directory with only the
 * files of that driver. The EAL does not export the path; its library
 * carries it as "DPDK_PLUGIN_PATH=<dir>" for DPDK's dpdk-pmdinfo.py, read
 * the same way here. Not found (a static DPDK, another build): the
 * sandbox shows the directory as it is.
 */
static const char *
driver_dir(void)
{
	static const char key[] = "DPDK_PLUGIN_PATH=";
	static char dir[PATH_MAX];
	static bool done;
	Dl_info info;
	char *buf = NULL, *p;
	struct stat st;
	ssize_t n = 0;
	int fd = -1;

	if (done)
		return dir[0] ? dir : NULL;
	done = true;
	if (dladdr((void *)(uintptr_t)rte_eal_init, &info) == 0 ||
	    info.dli_fname == NULL)
		return NULL;
	fd = open(info.dli_fname, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0 ||
	    st.st_size > (64 << 20) ||
	    (buf = malloc((size_t)st.st_size + 1)) == NULL)
		goto out;
	while (n < st.st_size) {
		ssize_t r = read(fd, buf + n, (size_t)(st.st_size - n));

		if (r <= 0)
			goto out;
		n += r;
	}
	buf[n] = '\0';
	p = memmem(buf, (size_t)n, key, sizeof(key) - 1);
	if (p != NULL && p[sizeof(key) - 1] == '/' &&
	    realpath(p + sizeof(key) - 1, dir) == NULL)
		dir[0] = '\0';
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return dir[0] ? dir : NULL;
}

/* The file of the pool's mempool driver, if it lies in @p dir and is the
 * ring driver: the one linked (meson.build), whose ops have the same
 * index in every process. Another (the EAL's --mbuf-pool-ops-name) is
 * numbered by its place in the directory: a sandbox then shows the whole
 * directory, as the manager saw it. */
static int
pool_driver(const struct zn_mgr *m, const char *dir, char *buf, size_t len)
{
	const struct rte_mempool_ops *ops =
		rte_mempool_get_ops(m->pool->ops_index);
	char real[PATH_MAX];
	size_t n = strlen(dir);
	Dl_info info;

	/* libzeronf's zn_ring runs over DPDK's ring driver: that file. */
	if (ops != NULL && strcmp(ops->name, ZN_POOL_OPS) == 0)
		ops = zn_pool_ops_ring();

	if (ops == NULL ||
	    dladdr((void *)(uintptr_t)ops->alloc, &info) == 0 ||
	    info.dli_fname == NULL || realpath(info.dli_fname, real) == NULL ||
	    strncmp(real, dir, n) != 0 || real[n] != '/' ||
	    strncmp(real + n + 1, "librte_mempool_ring.so", 22) != 0)
		return -ENOENT;
	zn_strlcpy(buf, real, len);
	return 0;
}

/* The drivers a sandboxed NF needs from the directory (real paths): the
 * pool's, the vdev bus (linked, meson.build), the PMD of each port NFs
 * transmit on themselves (lib/nf/nf_port.c loads it), and whatever of the
 * directory these need in turn (net_null needs the PCI bus): found from
 * the libraries as this process loaded them (their DT_NEEDED). */
#define KEEP_MAX 16
struct keep {
	char path[KEEP_MAX][PATH_MAX];
	unsigned int n;
};

static bool
keep_has(const struct keep *k, const char *real)
{
	for (unsigned int i = 0; i < k->n; i++)
		if (strcmp(k->path[i], real) == 0)
			return true;
	return false;
}

static void
keep_add(struct keep *k, const char *dir, const char *file)
{
	size_t n = strlen(dir);
	char real[PATH_MAX];
	struct link_map *lm = NULL;
	const char *strtab = NULL;
	void *h;

	if (file == NULL || realpath(file, real) == NULL ||
	    strncmp(real, dir, n) != 0 || real[n] != '/' ||
	    keep_has(k, real) || k->n >= KEEP_MAX)
		return;
	zn_strlcpy(k->path[k->n++], real, PATH_MAX);
	h = dlopen(real, RTLD_LAZY | RTLD_NOLOAD);
	if (h == NULL)
		return;
	if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm != NULL) {
		for (const ElfW(Dyn) *d = lm->l_ld; d->d_tag != DT_NULL; d++)
			if (d->d_tag == DT_STRTAB)
				strtab = (const char *)d->d_un.d_ptr;
		for (const ElfW(Dyn) *d = lm->l_ld;
		     strtab != NULL && d->d_tag != DT_NULL; d++) {
			struct link_map *dm = NULL;
			void *dh;

			if (d->d_tag != DT_NEEDED)
				continue;
			dh = dlopen(strtab + d->d_un.d_val,
				    RTLD_LAZY | RTLD_NOLOAD);
			if (dh == NULL)
				continue;
			if (dlinfo(dh, RTLD_DI_LINKMAP, &dm) == 0 && dm != NULL)
				keep_add(k, dir, dm->l_name);
			dlclose(dh);
		}
	}
	dlclose(h);
}

/*
 * The bwrap options showing DPDK's driver directory with only the drivers
 * NFs need (keep_add), worked out on the first sandbox (neither the pool,
 * the ports nor the directory change while the manager runs: a sandbox
 * then costs no walk of the directory's hundreds of entries). Every name
 * in the directory that leads to one of their files stays (the linker
 * reaches it through a chain of symbolic links). The EAL refuses a directory others may write:
 * 0755, then read-only. NULL-terminated; empty when the directory is to
 * be shown as it is (not found, another pool driver, too many names).
 */
#define DRV_OPTS_MAX 96
const char *const *
zn_sandbox_driver_args(const struct zn_mgr *m)
{
	static struct {
		bool done;
		const char *opt[DRV_OPTS_MAX + 1];
		struct zn_arena a;
	} D;
	const char *drivers = driver_dir();
	static struct keep keep;
	char pool_so[PATH_MAX];
	struct dirent *e;
	unsigned int n = 0;
	Dl_info info;
	DIR *d;

	if (D.done)
		return D.opt;
	D.done = true;
	if (drivers == NULL ||
	    pool_driver(m, drivers, pool_so, sizeof(pool_so)) < 0 ||
	    (d = opendir(drivers)) == NULL)
		return D.opt;
	keep_add(&keep, drivers, pool_so);
	if (dladdr((void *)(uintptr_t)rte_vdev_init, &info) != 0)
		keep_add(&keep, drivers, info.dli_fname);
	for (unsigned int i = 0; i < m->n_ports; i++)
		if (m->shm->ports[i].nf_txq_n != 0)
			keep_add(&keep, drivers, m->shm->ports[i].driver_so);
#define OPT(...)                                                            \
	do {                                                                \
		if (n >= DRV_OPTS_MAX ||                                    \
		    (D.opt[n] = zn_arena_printf(&D.a, __VA_ARGS__)) == NULL)         \
			goto full;                                          \
		n++;                                                        \
	} while (0)
	OPT("--perms");
	OPT("0755");
	OPT("--tmpfs");
	OPT("%s", drivers);
	while ((e = readdir(d)) != NULL) {
		char path[PATH_MAX], real[PATH_MAX], link[PATH_MAX];
		ssize_t len;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", drivers, e->d_name);
		if (realpath(path, real) == NULL || !keep_has(&keep, real))
			continue;
		len = readlink(path, link, sizeof(link) - 1);
		if (len > 0) {
			link[len] = '\0';
			OPT("--symlink");
			OPT("%s", link);
		} else {
			OPT("--ro-bind");
			OPT("%s", path);
		}
		OPT("%s", path);
	}
	OPT("--remount-ro");
	OPT("%s", drivers);
#undef OPT
	closedir(d);
	D.opt[n] = NULL;
	return D.opt;
full:
	closedir(d);
	D.opt[0] = NULL;
	return D.opt;
}
