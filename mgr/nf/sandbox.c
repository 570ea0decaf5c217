/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Sandboxed NFs (sandbox.h): the bubblewrap command line of one, and the
 * instance's PID namespace, kept by `zeronf-run --hold-pidns` (spawned on
 * first use, dies with the manager) and joined by each sandbox
 * (bwrap --pidns 3).
 */

#include <dirent.h>
#include <dlfcn.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>



#include <zeronf/nf.h>

#include "../core/mgr.h"
#include "sandbox.h"
#include "sandbox_pvt.h"
#include "arena.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/shm/zn_kick.h"

extern char **environ;

#define PIDNS_FD_MIN 10 /* never 3, where children get it */
/* zeronf-run inside a sandbox: where no directory of the host's can keep
 * the group's user from it */
#define RUN_AS "/.zeronf-run"

static struct {
	pid_t holder;  /* zeronf-run --hold-pidns */
	int ns_fd;     /* its namespace (of its child, pid 1 there) */
} S = { .ns_fd = -1 };

void
zn_sandbox_arena_free(struct zn_arena *a)
{
	free(a);
}

/* A program next to the manager's (the build tree: ../tools/). */
/* @p name beside our executable, else in its build tree's @p sub. */
static int
beside_us(const char *name, const char *sub, char *buf, size_t len)
{
	char exe[PATH_MAX], *dir;
	ssize_t n;

	if (buf == NULL || len == 0)
		return -EINVAL;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = '\0';
	dir = dirname(exe);
	snprintf(buf, len, "%s/%s", dir, name);
	if (access(buf, X_OK) == 0)
		return 0;
	snprintf(buf, len, "%s/../%s/%s", dir, sub, name);
	return access(buf, X_OK) == 0 ? 0 : -ENOENT;
}

int
zn_helper_path(const char *name, char *buf, size_t len)
{
	return beside_us(name, "tools", buf, len);
}

int
zn_nf_program_path(const char *name, char *buf, size_t len)
{
	for (const char *c = name; *c != '\0'; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			return -EINVAL;
	return name[0] == '\0' ? -EINVAL : beside_us(name, "nfs", buf, len);
}

static int
find_in_path(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char copy[4096], *p, *save = NULL;

	zn_strlcpy(copy, path ? path : "/usr/bin:/bin", sizeof(copy));
	for (p = strtok_r(copy, ":", &save); p != NULL;
	     p = strtok_r(NULL, ":", &save)) {
		snprintf(buf, len, "%s/%s", p, name);
		if (access(buf, X_OK) == 0)
			return 0;
	}
	return -ENOENT;
}

/* The process's environment and @p var (the caller frees the array, not
 * the strings), or NULL. */
static char **
env_with(char *var)
{
	size_t n = 0, k = 0, key = strcspn(var, "=") + 1;
	char **env;

	while (environ[n] != NULL)
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (env == NULL)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], var, key) != 0)
			env[k++] = environ[i];
	env[k] = var;
	return env;
}

int
zn_sandbox_slot(struct zn_mgr *m, int fd, char *buf, size_t len,
		char ***envp)
{
	uint16_t slot;
	int rc = zn_slot_claim(m->cfg.instance, &slot);

	if (rc < 0)
		return rc;
	snprintf(buf, len, ZN_SLOT_ENV "=%u:%d", slot, fd);
	*envp = env_with(buf);
	if (*envp == NULL) {
		close(rc);
		return -ENOMEM;
	}
	return rc;
}

int
zn_sandbox_pidns_fd(struct zn_mgr *m)
{
	char helper[PATH_MAX], path[64], kids[64];
	char *argv[] = { helper, (char *)(uintptr_t)"--hold-pidns", NULL };
	posix_spawn_file_actions_t fa;
	uint64_t deadline;
	pid_t child = 0;
	int rc, fd;

	(void)m;
	if (S.ns_fd >= 0)
		return S.ns_fd;
	rc = zn_helper_path("zeronf-run", helper, sizeof(helper));
	if (rc < 0)
		return rc;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addclosefrom_np(&fa, 3);
	rc = posix_spawn(&S.holder, helper, &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (rc != 0)
		return -rc;
	/* Its child is pid 1 of the new namespace: open that one's. */
	snprintf(kids, sizeof(kids), "/proc/%d/task/%d/children",
		 (int)S.holder, (int)S.holder);
	deadline = zn_now_ns() + 2000000000ULL;
	while (child == 0 && zn_now_ns() < deadline) {
		FILE *f = fopen(kids, "r");

		if (f != NULL) {
			if (fscanf(f, "%d", &child) != 1)
				child = 0;
			fclose(f);
		}
		if (child == 0)
			usleep(1000);
	}
	if (child == 0) {
		zn_sandbox_fini(m);
		return -ETIMEDOUT;
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/pid", (int)child);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		zn_sandbox_fini(m);
		return rc;
	}
	S.ns_fd = fcntl(fd, F_DUPFD_CLOEXEC, PIDNS_FD_MIN);
	close(fd);
	if (S.ns_fd < 0) {
		rc = -errno;
		zn_sandbox_fini(m);
		return rc;
	}
	return S.ns_fd;
}

void
zn_sandbox_fini(struct zn_mgr *m)
{
	(void)m;
	zn_sandbox_uid_fini();
	if (S.ns_fd >= 0)
		close(S.ns_fd);
	S.ns_fd = -1;
	if (S.holder > 0) {
		kill(S.holder, SIGKILL);
		waitpid(S.holder, NULL, 0);
	}
	S.holder = 0;
}

/* The directory of libzeronf, if it is not under /usr. */
static const char *
lib_dir(char *buf, size_t len)
{
	Dl_info info;
	char tmp[PATH_MAX];

	if (dladdr((void *)(uintptr_t)zn_nf_open, &info) == 0 ||
	    info.dli_fname == NULL || realpath(info.dli_fname, tmp) == NULL)
		return NULL;
	zn_strlcpy(buf, dirname(tmp), len);
	return strncmp(buf, "/usr/", 5) == 0 ? NULL : buf;
}

static bool
hugefile_of(const char *name, const char *instance)
{
	size_t n = strlen(instance);

	return strncmp(name, instance, n) == 0 &&
	       strncmp(name + n, "map_", 4) == 0;
}

#define ADD(...)                                                            \
	do {                                                                \
		if (argc >= max - 1 ||                                      \
		    (argv[argc] = zn_arena_printf(a, __VA_ARGS__)) == NULL) \
			goto full;                                          \
		argc++;                                                     \
	} while (0)

/* @p st may be written by nobody but root and us: owned by either, by
 * its group only if that is root's or ours, by others only if a sticky
 * directory (they cannot replace what is ours there). */
static bool
owner_only(const struct stat *st)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return false;
	if (S_ISDIR(st->st_mode) && (st->st_mode & S_ISVTX))
		return true;
	if ((st->st_mode & S_IWGRP) && st->st_gid != 0 &&
	    st->st_gid != getegid())
		return false;
	return (st->st_mode & S_IWOTH) == 0;
}

/* @p path and each directory above it (followed) owner_only */
static int
chain_owner_only(const char *path, char *bad, size_t len)
{
	char p[PATH_MAX], *slash;
	struct stat st;

	zn_strlcpy(p, path, sizeof(p));
	for (;;) {
		if (stat(p[0] ? p : "/", &st) < 0)
			return -errno;
		if (!owner_only(&st)) {
			zn_strlcpy(bad, p[0] ? p : "/", len);
			return -EPERM;
		}
		slash = strrchr(p, '/');
		if (slash == NULL || p[0] == '\0')
			return 0;
		*slash = '\0';
	}
}

int
zn_program_check(const struct zn_mgr *m, const char *path, char *err,
		 size_t errlen)
{
	char real[PATH_MAX], bad[PATH_MAX], run[PATH_MAX], huge[PATH_MAX];
	struct stat st;
	int rc;

	if (realpath(path, real) == NULL || stat(real, &st) < 0) {
		rc = -errno;
		snprintf(err, errlen, "binary %.200s: %s", path, strerror(-rc));
		return rc;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "binary %.200s: not a regular file", path);
		return -EPERM;
	}
	/* What sandboxed NFs of no group may write (their bind mounts) */
	if (realpath(m->inst.rundir, run) == NULL)
		zn_strlcpy(run, m->inst.rundir, sizeof(run));
	if (realpath(m->inst.huge_dir, huge) == NULL)
		zn_strlcpy(huge, m->inst.huge_dir, sizeof(huge));
	if (zn_sandbox_under(real, run) || zn_sandbox_under(real, huge)) {
		snprintf(err, errlen, "binary %.200s: in a directory NFs may "
			 "write (the runtime or hugepage directory): refused",
			 path);
		return -EPERM;
	}
	if ((rc = chain_owner_only(real, bad, sizeof(bad))) < 0 ||
	    (rc = chain_owner_only(path, bad, sizeof(bad))) < 0) {
		if (rc == -EPERM)
			snprintf(err, errlen, "binary %.200s: %.200s may be "
				 "written by a user other than root or the "
				 "manager's (chmod go-w, chown): refused",
				 path, bad);
		else
			snprintf(err, errlen, "binary %.200s: %s", path,
				 strerror(-rc));
		return rc;
	}
	return 0;
}

void
zn_sandbox_explain(int rc, const char *binary, char *err, size_t errlen)
{
	if (rc == -ENOENT)
		snprintf(err, errlen, "no bwrap (bubblewrap) in PATH");
	else if (rc == -EACCES)
		snprintf(err, errlen, "sandbox: an NF of a trust group runs as "
			 "a user of its group's (--sandbox-uid-base), who may "
			 "not read and run %.200s: chmod o+rx it, and o+x each "
			 "directory above it within the working directory",
			 binary);
	else if (rc == -EUSERS)
		snprintf(err, errlen, "sandbox: the trust group's user: no "
			 "free block of ids from --sandbox-uid-base, its files "
			 "cannot be made its, or no zeronf-run");
	else if (rc == -E2BIG)
		snprintf(err, errlen, "the sandbox's command line is too "
			 "long (hugepage files: --legacy-mem?)");
	else
		snprintf(err, errlen, "sandbox: %s", strerror(-rc));
}

int
zn_sandbox_argv(struct zn_mgr *m, const char *name, const char *binary,
		const char *cwd, const char *log_dir, int group, char **argv,
		int argc, int max, struct zn_arena **arena)
{
	static const char *const fixed[] = {
		"--unshare-net", "--unshare-ipc", "--unshare-uts",
		"--unshare-cgroup-try",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--ro-bind", "/usr", "/usr",
		"--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64",
		"/lib64", "--symlink", "usr/bin", "/bin", "--symlink",
		"usr/sbin", "/sbin",
		"--perms", "0755", "--dir", "/etc",
		"--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
		"--proc", "/proc", "--dev", "/dev", "--ro-bind", "/sys", "/sys",
		"--perms", "1777", "--tmpfs", "/tmp",
	};
	struct zn_arena *a = malloc(sizeof(*a));
	char bwrap[PATH_MAX], lib[PATH_MAX], run_as[PATH_MAX];
	struct dirent *e;
	DIR *d = NULL;
	uid_t uid = 0;
	int rc;

	if (a == NULL)
		return -ENOMEM;
	a->used = 0;
	*arena = a;
	if (find_in_path("bwrap", bwrap, sizeof(bwrap)) < 0)
		return -ENOENT;
	/* An NF of a trust group: a user of its group's own, not root */
	rc = zn_sandbox_uid(m, group, &uid);
	if (rc == -ENOENT)
		uid = 0, rc = 0;
	else if (rc == 0 && (rc = zn_sandbox_reachable(binary,
			(const char *const[]){ cwd, lib_dir(lib, sizeof(lib)) },
			2)) == 0 &&
		 (rc = zn_helper_path("zeronf-run", run_as,
				      sizeof(run_as))) == 0)
		rc = zn_sandbox_uid_prepare(m, group, uid);
	if (rc < 0)
		return rc == -EACCES ? -EACCES : -EUSERS;
	ADD("%s", bwrap);
	if (group >= 0) {
		/* A PID namespace of its own: no other NF's process to see,
		 * signal, trace or reach through /proc (its root, its
		 * memory, its fds). Nothing of a group NF's EAL is named
		 * after its pid in a file another NF sees (--no-shconf). */
		ADD("--unshare-pid");
	} else {
		/* The instance's, shared with the other NFs of no group
		 * (DPDK secondaries name their files in the runtime
		 * directory after their pids, which must differ there) */
		ADD("--pidns");
		ADD("3");
	}
	ADD("--hostname");
	ADD("%s", name);
	/* System calls it has no use for (sandbox_seccomp.c) */
	ADD("--seccomp");
	ADD("%d", ZN_SANDBOX_SECCOMP_FD);
	for (size_t i = 0; i < RTE_DIM(fixed); i++)
		ADD("%s", fixed[i]);
	if (uid != 0) {
		/* The directories bwrap makes on the way to what it binds
		 * are root's alone (0700): the group's user must pass */
		const char *to[] = { binary, cwd, m->inst.huge_dir, m->inst.rundir,
				     log_dir, lib_dir(lib, sizeof(lib)) };

		for (size_t i = 0; i < RTE_DIM(to); i++)
			for (const char *s = to[i] != NULL ? to[i] + 1 : NULL;
			     s != NULL && (s = strchr(s, '/')) != NULL; s++) {
				ADD("--perms");
				ADD("0755");
				ADD("--dir");
				ADD("%.*s", (int)(s - to[i]), to[i]);
			}
		/* zeronf-run's to become the group's user (which drops
		 * them); the NF's runtime directory as root's */
		ADD("--cap-add");
		ADD("CAP_SETUID");
		ADD("--cap-add");
		ADD("CAP_SETGID");
		ADD("--cap-add");
		ADD("CAP_SETPCAP");
		ADD("--ro-bind");
		ADD("%s", run_as);
		ADD(RUN_AS);
		ADD("--setenv");
		ADD("XDG_RUNTIME_DIR");
		ADD("%.*s", (int)(strlen(m->inst.rundir) - strlen("/dpdk/") -
				  strlen(m->cfg.instance)), m->inst.rundir);
	}
	/* Its working directory (the deployment file's, with the files its
	 * options name) read-only: an NF must not rewrite the deployment
	 * file, a program beside it, or plant a link the manager, root,
	 * would follow. Its writable places are its own /tmp and /dev/shm
	 * (new, empty, gone with it) and the shared memory it maps. */
	ADD("--ro-bind");
	ADD("%s", cwd);
	ADD("%s", cwd);
	ADD("--ro-bind");
	ADD("%s", binary);
	ADD("%s", binary);
	if (lib_dir(lib, sizeof(lib)) != NULL) {
		ADD("--ro-bind");
		ADD("%s", lib);
		ADD("%s", lib);
	}
	/* DPDK's drivers: the pool's only (driver_args). */
	for (const char *const *o = zn_sandbox_driver_args(m); *o != NULL;
	     o++)
		ADD("%s", *o);
	ADD("--tmpfs");
	ADD("%s", m->inst.huge_dir);
	if (group >= 0) {
		/* An NF of a trust group is no secondary of the manager
		 * (lib/nf/nf.c): of the runtime directory it has what
		 * libzeronf reads, and none of the EAL's files there (the
		 * configuration, memory segment lists, multi-process
		 * sockets: each the manager's, or another NF's, to map or
		 * talk to); of the hugepage files, its group's (below). */
		static const char *const zn_files[] = {
			ZN_LOCK_FILE, ZN_GROUPS_FILE,
		};
		unsigned int gi = (unsigned int)group;

		ADD("--tmpfs");
		ADD("%s", m->inst.rundir);
		for (size_t i = 0; i < RTE_DIM(zn_files); i++) {
			/* read (and the lock tested) only */
			ADD("--ro-bind");
			ADD("%s/%s", m->inst.rundir, zn_files[i]);
			ADD("%s/%s", m->inst.rundir, zn_files[i]);
		}
		/* its group's kick socket, not the shared one */
		ADD("--bind");
		ADD("%s/" ZN_KICK_GROUP_SOCK_FMT, m->inst.rundir, gi);
		ADD("%s/" ZN_KICK_GROUP_SOCK_FMT, m->inst.rundir, gi);
		/* No slot's lock file: its launcher claims its slot and
		 * hands it the lock (zn_util.h ZN_SLOT_ENV); with every
		 * free slot's file it could lock them all, and no NF could
		 * start */
	} else {
		/* The runtime directory (the NF's EAL works there), its
		 * sockets masked: the NF talks to the manager through shared
		 * memory and the kick socket only. */
		ADD("--bind");
		ADD("%s", m->inst.rundir);
		ADD("%s", m->inst.rundir);
		ADD("--ro-bind");
		ADD("/dev/null");
		ADD("%s/%s", m->inst.rundir, ZN_CTL_SOCK);
		ADD("--ro-bind-try");
		ADD("/dev/null");
		ADD("%s/dpdk_telemetry.v2", m->inst.rundir);
		/* The instance's hugepage files, and no other. */
		d = opendir(m->inst.huge_dir);
		if (d == NULL)
			return -errno;
		while ((e = readdir(d)) != NULL) {
			if (!hugefile_of(e->d_name, m->cfg.instance))
				continue;
			ADD("--bind");
			ADD("%s/%s", m->inst.huge_dir, e->d_name);
			ADD("%s/%s", m->inst.huge_dir, e->d_name);
		}
		closedir(d);
		d = NULL;
	}
	/* Its trust group's pool, and no other group's (mgr/trust/group.c): the
	 * file another group's packets are in is not in its namespace. */
	if (group >= 0 && group < ZN_MAX_GROUPS && m->shm->groups[group].used) {
		ADD("--bind");
		ADD("%s", m->shm->groups[group].path);
		ADD("%s", m->shm->groups[group].path);
	}
	/* Other NFs' logs, where they are in what it sees: out of sight
	 * (and, in the runtime directory, out of its reach) */
	if (zn_sandbox_under(log_dir, cwd) ||
	    zn_sandbox_under(log_dir, m->inst.rundir)) {
		ADD("--tmpfs");
		ADD("%s", log_dir);
		ADD("--remount-ro");
		ADD("%s", log_dir);
	}
	ADD("--chdir");
	ADD("%s", cwd);
	ADD("--");
	if (uid != 0) {
		ADD(RUN_AS);
		ADD("--user");
		ADD("%u:%u", (unsigned int)uid, (unsigned int)uid);
		ADD("--");
	}
	return argc;
full:
	if (d != NULL)
		closedir(d);
	return -E2BIG;
}
