/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * NFs launched and supervised by the manager (launch.h). Long: a
 * replica's whole life (spawn, watch, back-off, stop, reap) in one place.
 *
 * A replica is spawned with posix_spawn: default signal dispositions and
 * an empty mask (the manager blocks SIGINT/SIGTERM and ignores SIGPIPE),
 * a session of its own, stdin from /dev/null, stdout and stderr appended
 * to <log dir>/<replica>.log (opened below the directory as opened at
 * start, through no symbolic link, a plain file of its own: the manager
 * is root and an NF may have written there), and no other fd of the
 * manager but, as fd 3, the instance's PID namespace (a sandbox of no
 * group) or its slot's lock (a sandbox of a group). DPDK opens its
 * hugepage and runtime files without O_CLOEXEC: an NF holding them
 * would hold their locks after the manager died. Its pidfd, in the
 * control loop, says when it exits; the manager reaps it and decides:
 *
 *   restart policy   exit 0     failure (exit != 0, signal)
 *   never            stays down stays down
 *   on-failure       stays down restarted after a back-off
 *   always           restarted  restarted after a back-off
 *
 * The back-off doubles from 100 ms to 10 s with each failure that came
 * less than 10 s after its start, and starts over after a replica ran
 * longer. Every launch, exit and restart is an event (event.h).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../core/cmd.h"
#include "../core/event.h"
#include "../core/instance.h"
#include "launch.h"
#include "launch_pvt.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "registry.h"
#include "sandbox.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_util.h"
#include "../core/subsys.h"

extern char **environ;

void
launch_replica_name(const struct launch *l, unsigned int i, char *buf, size_t len)
{
	/* LAUNCH_NAME_LEN leaves room for ".15" */
	if (i == 0)
		snprintf(buf, len, "%s", l->name);
	else
		snprintf(buf, len, "%.*s.%u", LAUNCH_NAME_LEN - 1, l->name,
			 i % ZN_MAX_REPLICAS);
}

void
launch_log_path(const struct launch *l, unsigned int i, char *buf, size_t len)
{
	char name[ZN_NAME_LEN];

	launch_replica_name(l, i, name, sizeof(name));
	snprintf(buf, len, "%s/%s.log", L.log_dir, name);
}

struct launch_state L;
const char *const policy_names[] = { "never", "on-failure", "always" };
const char *const rstate_names[] = { "down", "running", "stopping",
				     "backoff", "failed" };

static void on_exit_fd(void *arg, uint32_t events);

/* What runs before the NF: zeronf-run joining the replica's cgroups, then
 * bwrap for a sandbox. @return argc, or -errno (reason in @p err). */
static int
prefix(struct launch *l, struct replica *r, const char *name, char **argv,
       int max, char *helper, char *cwd, struct zn_arena **arena,
       char *err, size_t errlen)
{
	int argc = 0, rc;
	/* A tenant's NF: in its tenant's cgroup, whose limits hold for all
	 * its NFs together (docs/security.md "Tenants"). */
	int tenant = (int)zn_tenant_of_group(L.m, (unsigned int)(l->group + 1))
		     - 1;
	const struct zn_tenant_cfg *t = tenant >= 0 ?
					&L.m->cfg.tenants[tenant] : NULL;

	if (l->memory_mb != 0 || (l->sandbox && l->cpus[0] != '\0') ||
	    (t != NULL && (t->cpu_pct != 0 || t->mem_mb != 0))) {
		rc = zn_cgroup_make(L.m, name, l->cpus[0] ? l->cpus : NULL,
				    l->memory_mb, tenant, &r->cg, err, errlen);
		if (rc < 0)
			return rc;
		if (zn_helper_path("zeronf-run", helper, PATH_MAX) < 0) {
			snprintf(err, errlen, "no zeronf-run next to "
				 "zeronf-mgr");
			return -ENOENT;
		}
		argv[argc++] = helper;
		for (unsigned int k = 0; k < r->cg.n; k++) {
			argv[argc++] = (char *)(uintptr_t)"--cgroup";
			argv[argc++] = r->cg.dirs[k];
		}
		argv[argc++] = (char *)(uintptr_t)"--";
	}
	if (!l->sandbox)
		return argc;
	if (getcwd(cwd, PATH_MAX) == NULL)
		return -errno;
	rc = l->group >= 0 ? 0 : zn_sandbox_pidns_fd(L.m);
	if (rc < 0) {
		snprintf(err, errlen, "the instance's PID namespace: %s",
			 strerror(-rc));
		return rc;
	}
	rc = zn_sandbox_argv(L.m, name, l->binary, cwd, L.log_dir, l->group,
			     argv, argc, max, arena);
	if (rc < 0)
		zn_sandbox_explain(rc, l->binary, err, errlen);
	return rc;
}

int
launch_spawn(struct launch *l, unsigned int i, char *err, size_t errlen)
{
	struct replica *r = &l->r[i];
	char name[ZN_NAME_LEN], svc[8], path[PATH_MAX + 64];
	char svc_log[ZN_NAME_LEN + 8], helper[PATH_MAX], cwd[PATH_MAX];
	char slot_env[48], **envp = environ;
	int slot_fd = -1;
	/* the NF's options, or a bundle's NFs' (2 words each, their options
	 * LAUNCH_MAX_ARGS in all: launch_cmds.c) */
	char *argv[2 * LAUNCH_MAX_ARGS + 2 * ZN_BUNDLE_MAX + 512];
	struct zn_arena *arena = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	int argc, logfd, rc, pidfd, filter = -1;
	bool pidns;
	pid_t pid;

	launch_replica_name(l, i, name, sizeof(name));
	snprintf(svc, sizeof(svc), "%u", l->service);
	rc = zn_program_check(L.m, l->binary, err, errlen);
	if (rc < 0)
		return rc;
	argc = prefix(l, r, name, argv, (int)RTE_DIM(argv) -
		      2 * LAUNCH_MAX_ARGS - 2 * ZN_BUNDLE_MAX - 16, helper, cwd,
		      &arena, err, errlen);
	if (argc < 0) {
		zn_sandbox_arena_free(arena);
		zn_cgroup_remove(&r->cg);
		return argc;
	}
	argv[argc++] = l->binary;
	argv[argc++] = (char *)(uintptr_t)"-i";
	argv[argc++] = L.m->cfg.instance;
	argv[argc++] = (char *)(uintptr_t)"-s";
	argv[argc++] = svc;
	argv[argc++] = (char *)(uintptr_t)"-n";
	argv[argc++] = name;
	if (l->cpus[0] != '\0') {
		argv[argc++] = (char *)(uintptr_t)"--cpus";
		argv[argc++] = l->cpus;
	}
	if (l->group >= 0) {
		argv[argc++] = (char *)(uintptr_t)"--trust-group";
		argv[argc++] = L.m->shm->groups[l->group].name;
	}
	if (l->n_args > 0 || l->n_bundle > 0) {
		argv[argc++] = (char *)(uintptr_t)"--";
		for (unsigned int a = 0; a < l->n_args; a++)
			argv[argc++] = l->args[a];
	}
	/* A bundle (nfs/bundle/bundle.c): each NF's module checked as a
	 * program is (the bundle runs its code) */
	for (unsigned int k = 0; k < l->n_bundle; k++) {
		const struct launch_member *b = &l->bundle[k];

		rc = zn_program_check(L.m, b->module, err, errlen);
		if (rc < 0) {
			zn_sandbox_arena_free(arena);
			zn_cgroup_remove(&r->cg);
			return rc;
		}
		argv[argc++] = (char *)(uintptr_t)"--nf";
		argv[argc++] = (char *)(uintptr_t)b->spec;
		for (unsigned int a = 0; a < b->n_args; a++)
			argv[argc++] = b->args[a];
	}
	argv[argc] = NULL;

	/* A sandbox of a trust group has no slot's lock file: the slot is
	 * claimed here and its lock handed to the NF as fd 3 */
	if (l->sandbox && l->group >= 0 &&
	    (slot_fd = zn_sandbox_slot(L.m, 3, slot_env, sizeof(slot_env),
				       &envp)) < 0) {
		rc = slot_fd;
		snprintf(err, errlen, "no NF slot: %s", strerror(-rc));
		goto out;
	}
	if (l->sandbox && (filter = zn_sandbox_seccomp_fd()) < 0) {
		rc = filter;
		snprintf(err, errlen, "sandbox: seccomp filter: %s",
			 strerror(-rc));
		goto out;
	}
	launch_log_path(l, i, path, sizeof(path));
	snprintf(svc_log, sizeof(svc_log), "%s.log", name);
	logfd = zn_open_beneath(L.log_dirfd, svc_log, O_WRONLY | O_CREAT |
				O_APPEND, 0644);
	if (logfd < 0) {
		rc = logfd;
		snprintf(err, errlen, "%.200s: %s", path,
			 rc == -ELOOP || rc == -EPERM || rc == -ENXIO ?
			 "not a plain file of its own (a link?): refused" :
			 strerror(-rc));
		goto out;
	}
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGCHLD);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, logfd, 1);
	posix_spawn_file_actions_adddup2(&fa, logfd, 2);
	/* NFs of no group: the instance's PID namespace, bwrap --pidns 3;
	 * of a group: the slot claimed for it, fd 3 */
	pidns = l->sandbox && l->group < 0;
	if (pidns)
		posix_spawn_file_actions_adddup2(&fa,
						 zn_sandbox_pidns_fd(L.m), 3);
	else if (slot_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, slot_fd, 3);
	if (filter >= 0) /* bwrap reads it, then closes it */
		posix_spawn_file_actions_adddup2(&fa, filter,
						 ZN_SANDBOX_SECCOMP_FD);
	posix_spawn_file_actions_addclosefrom_np(&fa, filter >= 0 ?
		ZN_SANDBOX_SECCOMP_FD + 1 : pidns || slot_fd >= 0 ? 4 : 3);
	posix_spawnattr_init(&at);
	posix_spawnattr_setsigmask(&at, &none);
	posix_spawnattr_setsigdefault(&at, &dfl);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
				 POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSID);
	rc = posix_spawn(&pid, argv[0], &fa, &at, argv, envp);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(logfd);
	if (rc != 0) {
		rc = -rc;
		snprintf(err, errlen, "%s: %s", argv[0], strerror(-rc));
		goto out;
	}
	pidfd = zn_pidfd_open(pid);
	if (pidfd >= 0 &&
	    zn_loop_watch(L.m->loop, pidfd, EPOLLIN, on_exit_fd, r) < 0) {
		close(pidfd);
		pidfd = -1;
	}
	if (pidfd < 0) {
		/* Not watched, it could not be supervised: not left behind. */
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		rc = -EMFILE;
		snprintf(err, errlen, "cannot watch it");
		goto out;
	}
	r->pid = pid;
	r->pidfd = pidfd;
	r->state = R_RUNNING;
	r->restart_asked = false;
	r->started_ns = zn_now_ns();
	l->starts++;
	zn_event("nf.launch", "%s (pid %d): %s, service %u%s", name, (int)pid,
		 l->binary, l->service, l->sandbox ? ", sandboxed" : "");
	rc = 0;
out:
	zn_sandbox_arena_free(arena);
	if (envp != environ)
		free(envp);
	if (slot_fd >= 0)
		close(slot_fd); /* the NF's now: the lock stays with it */
	if (filter >= 0)
		close(filter);
	if (rc < 0)
		zn_cgroup_remove(&r->cg);
	return rc;
}

/* Start a replica that should run; a failure to spawn counts as a failure
 * of the replica (back-off), not of the command. */
void
launch_start_replica(struct launch *l, unsigned int i)
{
	struct replica *r = &l->r[i];
	char err[256] = "";
	int rc = launch_spawn(l, i, err, sizeof(err));

	if (rc < 0) {
		char name[ZN_NAME_LEN];

		launch_replica_name(l, i, name, sizeof(name));
		r->fails++;
		l->failures++;
		r->state = r->fails >= CRASH_LOOP_MAX ? R_FAILED : R_BACKOFF;
		r->next_ns = zn_now_ns() + BACKOFF_MAX_NS;
		zn_event(r->state == R_FAILED ? "nf.gave_up" : "nf.spawn_failed",
			 "%s: %s (%s)", name, err[0] ? err : strerror(-rc),
			 r->state == R_FAILED ? "left down" : "again in 10 s");
	}
}

/* Ask replica @p i to stop: the registry stops a registered NF (it drains
 * its packets); one not registered yet gets SIGTERM. */
void
launch_stop_replica(struct launch *l, unsigned int i)
{
	struct replica *r = &l->r[i];
	char name[ZN_NAME_LEN];
	int slot;

	if (r->state == R_BACKOFF || r->state == R_FAILED) {
		r->state = R_DOWN;
		return;
	}
	if (r->state != R_RUNNING)
		return;
	launch_replica_name(l, i, name, sizeof(name));
	slot = zn_registry_find(L.m, name);
	if (slot < 0 || zn_registry_stop_nf(L.m, (unsigned int)slot) < 0)
		kill(r->pid, SIGTERM);
	r->state = R_STOPPING;
	r->stop_ns = zn_now_ns();
}

void
launch_spec_free(struct launch *l)
{
	for (unsigned int a = 0; a < l->n_args; a++)
		free(l->args[a]);
	for (unsigned int k = 0; k < l->n_bundle; k++)
		for (unsigned int a = 0; a < l->bundle[k].n_args; a++)
			free(l->bundle[k].args[a]);
	free(l->bundle);
	memset(l, 0, sizeof(*l));
}

bool
launch_all_down(const struct launch *l)
{
	for (unsigned int i = 0; i < ZN_MAX_REPLICAS; i++)
		if (l->r[i].state != R_DOWN && l->r[i].state != R_FAILED)
			return false;
	return true;
}

/* A replica's process exited: reap it, then restart it or not. */
static void
on_exit_fd(void *arg, uint32_t events)
{
	struct replica *r = arg;
	struct launch *l = r->l;
	siginfo_t si = { 0 };
	char name[ZN_NAME_LEN], how[48];
	uint64_t now = zn_now_ns(), delay;
	bool failed, asked = r->state == R_STOPPING;

	(void)events;
	if (waitid((idtype_t)P_PIDFD, (id_t)r->pidfd, &si,
		   WEXITED | WNOHANG) < 0 || si.si_pid == 0)
		return; /* not yet (spurious) */
	zn_loop_unwatch(L.m->loop, r->pidfd);
	close(r->pidfd);
	r->pidfd = -1;
	r->pid = 0;
	zn_cgroup_remove(&r->cg);
	memset(&r->cg, 0, sizeof(r->cg));
	launch_replica_name(l, r->idx, name, sizeof(name));
	if (si.si_code == CLD_EXITED) {
		r->last_code = si.si_status;
		snprintf(how, sizeof(how), "exit %d", si.si_status);
	} else {
		r->last_code = -si.si_status;
		snprintf(how, sizeof(how), "signal %d", si.si_status);
	}
	failed = si.si_code != CLD_EXITED || si.si_status != 0;
	if (failed && !asked)
		l->failures++;
	r->state = R_DOWN;
	if (L.stopping || l->removing || (asked && !r->restart_asked) ||
	    r->idx >= l->replicas) {
		zn_event("nf.exit", "%s: %s", name, how);
		if (l->removing && launch_all_down(l)) {
			zn_event("nf.removed", "%s", l->name);
			launch_spec_free(l);
		}
		return;
	}
	if (r->restart_asked) {
		zn_event("nf.exit", "%s: %s; restarting", name, how);
		r->restarts++;
		l->restarts++;
		launch_start_replica(l, r->idx);
		return;
	}
	if (l->policy == RESTART_NEVER ||
	    (l->policy == RESTART_ON_FAILURE && !failed)) {
		zn_event("nf.exit", "%s: %s; not restarted (restart: %s)",
			 name, how, policy_names[l->policy]);
		return;
	}
	/* Back-off: a replica that fails soon after each start waits
	 * longer each time; one that ran a while starts over. */
	r->fails = now - r->started_ns < STABLE_NS ? r->fails + 1 : 1;
	if (r->fails >= CRASH_LOOP_MAX) {
		r->state = R_FAILED;
		zn_event("nf.gave_up", "%s: %s; %u failures in a row, each "
			 "soon after its start: left down", name, how, r->fails);
		return;
	}
	delay = BACKOFF_MIN_NS << RTE_MIN(r->fails - 1, 10u);
	if (delay > BACKOFF_MAX_NS)
		delay = BACKOFF_MAX_NS;
	r->state = R_BACKOFF;
	r->next_ns = now + delay;
	zn_event("nf.exit", "%s: %s; restart in %" PRIu64 " ms", name, how,
		 delay / 1000000);
}

/* Every TICK_MS: restarts due, stops that take too long. */
static void
tick(void *arg)
{
	uint64_t now = zn_now_ns();

	(void)arg;
	for (unsigned int k = 0; k < LAUNCH_MAX; k++) {
		struct launch *l = &L.l[k];

		if (!l->used)
			continue;
		for (unsigned int i = 0; i < ZN_MAX_REPLICAS; i++) {
			struct replica *r = &l->r[i];

			if (r->state == R_BACKOFF && now >= r->next_ns &&
			    !L.stopping) {
				r->restarts++;
				l->restarts++;
				launch_start_replica(l, i);
			} else if (r->state == R_STOPPING &&
				   now - r->stop_ns > KILL_AFTER_NS) {
				kill(r->pid, SIGKILL);
				r->stop_ns = now; /* once more, later */
			}
		}
	}
}

/* Register with the loop (restart timer). 0 or -errno. */
static int
zn_launch_init(struct zn_mgr *m)
{
	int rc;

	L.m = m;
	if (m->cfg.log_dir[0] == '/') {
		zn_strlcpy(L.log_dir, m->cfg.log_dir, sizeof(L.log_dir));
	} else if (m->cfg.log_dir[0] != '\0') {
		char cwd[PATH_MAX];

		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return -errno;
		if ((size_t)snprintf(L.log_dir, sizeof(L.log_dir), "%.*s/%.*s",
				     PATH_MAX / 2, cwd, PATH_MAX / 2,
				     m->cfg.log_dir) >= sizeof(L.log_dir))
			return -ENAMETOOLONG;
	} else {
		snprintf(L.log_dir, sizeof(L.log_dir), "%.*s/logs",
			 PATH_MAX - 1, m->inst.rundir);
		L.log_dir_ours = true;
	}
	if ((mkdir(L.log_dir, 0755) < 0 && errno != EEXIST) ||
	    (L.log_dirfd = open(L.log_dir, O_PATH | O_DIRECTORY |
				O_CLOEXEC)) < 0) {
		rc = -errno;
		ZN_LOG(ERR, "log directory %s: %s", L.log_dir, strerror(errno));
		return rc;
	}
	return zn_loop_every(m->loop, TICK_MS, tick, NULL);
}

void
zn_launch_stop_all(struct zn_mgr *m)
{
	(void)m;
	L.stopping = true;
	for (unsigned int k = 0; k < LAUNCH_MAX; k++)
		for (unsigned int i = 0; L.l[k].used && i < ZN_MAX_REPLICAS;
		     i++)
			launch_stop_replica(&L.l[k], i);
}

unsigned int
zn_launch_running(const struct zn_mgr *m)
{
	unsigned int n = 0;

	(void)m;
	for (unsigned int k = 0; k < LAUNCH_MAX; k++)
		for (unsigned int i = 0; L.l[k].used && i < ZN_MAX_REPLICAS;
		     i++)
			n += L.l[k].r[i].pid > 0;
	return n;
}

static bool
is_log(const char *name, const void *arg)
{
	size_t n = strlen(name);

	(void)arg;
	return n > 4 && strcmp(name + n - 4, ".log") == 0;
}

/* Kill (SIGKILL) and reap what still runs; free the specs. */
static void
zn_launch_fini(struct zn_mgr *m)
{
	(void)m;
	if (L.m == NULL)
		return; /* never begun */
	for (unsigned int k = 0; k < LAUNCH_MAX; k++) {
		struct launch *l = &L.l[k];

		for (unsigned int i = 0; l->used && i < ZN_MAX_REPLICAS; i++) {
			struct replica *r = &l->r[i];

			if (r->pid > 0) {
				kill(r->pid, SIGKILL);
				waitpid(r->pid, NULL, 0);
			}
			zn_cgroup_remove(&r->cg);
			if (r->pidfd >= 0 && r->pid > 0) {
				zn_loop_unwatch(L.m->loop, r->pidfd);
				close(r->pidfd);
			}

		}
		if (l->used)
			launch_spec_free(l);
	}
	zn_sandbox_fini(L.m);
	zn_cgroup_fini(L.m);
	/* Our own directory, in the runtime dir: every log of this run,
	 * of NFs still launched or removed before. */
	if (L.log_dir_ours) {
		zn_unlink_matching(L.log_dir, is_log, NULL);
		rmdir(L.log_dir);
	}
	if (L.log_dirfd > 0)
		close(L.log_dirfd);
	L.log_dirfd = -1;
}


struct launch *
launch_find(const char *name)
{
	for (unsigned int k = 0; k < LAUNCH_MAX; k++)
		if (L.l[k].used && strcmp(L.l[k].name, name) == 0)
			return &L.l[k];
	return NULL;
}

int
launch_set_replicas(struct launch *l, unsigned int n)
{
	unsigned int old = l->replicas;

	l->replicas = n;
	for (unsigned int i = 0; i < ZN_MAX_REPLICAS; i++) {
		struct replica *r = &l->r[i];

		if (i < n && r->state == R_DOWN && (i >= old || r->pid == 0))
			launch_start_replica(l, i);
		else if (i < n && r->state == R_STOPPING)
			r->restart_asked = true; /* wanted again: on its exit */
		else if (i >= n)
			launch_stop_replica(l, i);
	}
	return 0;
}


int
zn_launch_info(const struct zn_mgr *m, const char *name, uint16_t *service,
	       unsigned int *replicas)
{
	const struct launch *l = launch_find(name);

	(void)m;
	if (l == NULL || l->removing)
		return -ENOENT;
	*service = l->service;
	*replicas = l->replicas;
	return 0;
}

int
zn_launch_scale(struct zn_mgr *m, const char *name, unsigned int n)
{
	struct launch *l = launch_find(name);

	(void)m;
	if (l == NULL || l->removing || n > ZN_MAX_REPLICAS)
		return -ENOENT;
	return launch_set_replicas(l, n);
}

bool
zn_launch_is_replica(const char *nf, const char *name)
{
	const struct launch *l = launch_find(nf);
	char r[ZN_NAME_LEN];

	for (unsigned int i = 0; l != NULL && i < ZN_MAX_REPLICAS; i++) {
		launch_replica_name(l, i, r, sizeof(r));
		if (strcmp(r, name) == 0)
			return true;
	}
	return false;
}

static const struct zn_subsys subsys = {
	.name = "launcher", .order = ZN_SUBSYS_LAUNCH,
	.init = zn_launch_init, .fini = zn_launch_fini,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static int
opt_log_dir(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (arg[0] == '\0' || strlen(arg) >= sizeof(cfg->log_dir) - 40) {
		fprintf(stderr, "%s: --log-dir: a directory path\n", prog);
		return -EINVAL;
	}
	zn_strlcpy(cfg->log_dir, arg, sizeof(cfg->log_dir));
	return 0;
}

static int
opt_cgroup_root(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	struct stat st;

	if (arg[0] != '/' || strlen(arg) >= sizeof(cfg->cgroup_root) - 80 ||
	    stat(arg, &st) < 0 || !S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: --cgroup-root: an existing directory, "
			"absolute path\n", prog);
		return -EINVAL;
	}
	zn_strlcpy(cfg->cgroup_root, arg, sizeof(cfg->cgroup_root));
	return 0;
}

static int
opt_uid_base(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (zn_opt_uint(prog, "--sandbox-uid-base", arg, 0, 4000000000u,
			&cfg->sandbox_uid_base) < 0)
		return -EINVAL;
	if (cfg->sandbox_uid_base != 0 && cfg->sandbox_uid_base < 65536) {
		fprintf(stderr, "%s: --sandbox-uid-base %u: below 65536 (users "
			"of the system)\n", prog, cfg->sandbox_uid_base);
		return -EINVAL;
	}
	return 0;
}

static void
launch_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->sandbox_uid_base = 1515061248u; /* 0x5a4e0000 */
}

static const struct zn_opt launch_opt[] = {
	{ "log-dir", 0, "DIR", "output of the NFs the manager launches "
	  "(nf.start;\ndefault: the runtime directory, removed at exit)",
	  ZN_OPT_PARSE, .parse = opt_log_dir },
	{ "sandbox-uid-base", 0, "N", "sandboxed NFs of trust group g run as "
	  "uid and gid\nN + 16 k + g (k: a block no other instance holds);\n"
	  "default 1515061248; 0 = as the manager's user", ZN_OPT_PARSE,
	  .parse = opt_uid_base },
	{ "cgroup-root", 0, "DIR", "launched NFs' cgroups go in "
	  "DIR/zeronf/<instance>:\na cgroup v2 directory (one delegated to "
	  "ZeroNF),\nor one holding v1's cpuset and memory hierarchies\n"
	  "(default /sys/fs/cgroup)", ZN_OPT_PARSE, .parse = opt_cgroup_root },
};

static const struct zn_opts launch_opts = {
	.order = ZN_SUBSYS_LAUNCH, .opt = launch_opt, .n = RTE_DIM(launch_opt),
	.defaults = launch_defaults,
};
ZN_OPTIONS_REGISTER(launch_opts)
