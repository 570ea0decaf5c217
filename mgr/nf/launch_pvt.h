/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LAUNCH_PVT_H
#define ZN_LAUNCH_PVT_H

/* The launcher's state, shared by its files (launch.c: supervision,
 * launch_cmds.c: the commands, launch_view.c: what they answer,
 * launch_roll.c: rolling restarts) and no other module. Control thread
 * only. */

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include <zeronf/bundle.h> /* ZN_BUNDLE_MAX */

#include "../../lib/shm/zn_shm.h"
#include "sandbox.h"

struct zn_mgr;

#define LAUNCH_MAX 32
#define LAUNCH_NAME_LEN (ZN_NAME_LEN - 4) /* + ".15" */
#define LAUNCH_MAX_ARGS 64
#define BACKOFF_MIN_NS (100ULL * 1000 * 1000)
#define BACKOFF_MAX_NS (10ULL * 1000 * 1000 * 1000)
#define STABLE_NS (10ULL * 1000 * 1000 * 1000)
/* Failures in a row, each within STABLE_NS of its start, after which a
 * replica is not restarted (R_FAILED) until nf.restart */
#define CRASH_LOOP_MAX 5
#define KILL_AFTER_NS (5ULL * 1000 * 1000 * 1000)
#define TICK_MS 50

enum policy { RESTART_NEVER, RESTART_ON_FAILURE, RESTART_ALWAYS };
extern const char *const policy_names[];

enum rstate {
	R_DOWN = 0,  /* not running, nothing scheduled */
	R_RUNNING,
	R_STOPPING,  /* asked to stop (registry stop, or SIGTERM) */
	R_BACKOFF,   /* restarts at next_ns */
	R_FAILED,    /* gave up: CRASH_LOOP_MAX failures in a row */
};
extern const char *const rstate_names[];

struct launch;

struct replica {
	struct launch *l;
	unsigned int idx;
	uint8_t state;       /* enum rstate */
	bool restart_asked;  /* start again once it exited (nf.restart) */
	pid_t pid;
	int pidfd;
	uint64_t started_ns, next_ns, stop_ns;
	unsigned int fails;  /* failures in a row, each soon after start */
	uint64_t restarts;
	int last_code;       /* exit status, or -signal; INT_MIN: none */
	struct zn_cgroup cg; /* while it runs, if limited */
};

/* An NF of a bundle (nf.start "bundle"): zeronf-bundle's
 * "--nf MODULE:SERVICE:NAME" and that NF's options. */
struct launch_member {
	char spec[PATH_MAX + 48];
	char module[PATH_MAX];
	char name[LAUNCH_NAME_LEN];
	uint16_t service;
	char *args[LAUNCH_MAX_ARGS + 1];
	unsigned int n_args;
};

struct launch {
	bool used;
	bool removing;       /* nf.stop by name: gone once all are down */
	char name[LAUNCH_NAME_LEN];
	char binary[PATH_MAX];
	char *args[LAUNCH_MAX_ARGS + 1]; /* the NF's options, strdup'd */
	unsigned int n_args;
	/* A bundle: its NFs in turn order (binary is zeronf-bundle and
	 * args are none; service is the first NF's), else NULL */
	struct launch_member *bundle;
	unsigned int n_bundle;
	uint16_t service;
	unsigned int replicas; /* wanted */
	char cpus[128];
	unsigned int memory_mb; /* 0: no limit */
	bool sandbox;
	int group;           /* trust group index; -1: none */
	enum policy policy;
	uint64_t starts, restarts, failures;
	struct replica r[ZN_MAX_REPLICAS];
	/* A rolling restart (launch_roll.c): phase 0 none; the replica
	 * restarted now, the surge's index, when this step began */
	struct {
		uint8_t phase;
		unsigned int next, surge;
		uint64_t step_ns;
	} roll;
};

struct launch_state {
	struct zn_mgr *m;
	bool stopping;       /* the manager shuts down: nothing restarts */
	char log_dir[PATH_MAX + 8];
	bool log_dir_ours;   /* made in the runtime dir: removed at exit */
	int log_dirfd;       /* log_dir as opened at start (O_PATH): logs
			      * are opened below it, never through a link */
	struct launch l[LAUNCH_MAX];
};
extern struct launch_state L;

void launch_replica_name(const struct launch *l, unsigned int i, char *buf,
			 size_t len);
/** Spawn replica @p i. 0 or -errno: it stays down (@p err says why). */
int launch_spawn(struct launch *l, unsigned int i, char *err, size_t errlen);
/** Start replica @p i; a failure to spawn is a failure of the replica
 *  (back-off), not of the caller. */
void launch_start_replica(struct launch *l, unsigned int i);
/** Ask replica @p i to stop (the registry, or SIGTERM). */
void launch_stop_replica(struct launch *l, unsigned int i);
void launch_spec_free(struct launch *l);
bool launch_all_down(const struct launch *l);
struct launch *launch_find(const char *name);
/** Want @p n replicas: start the missing, stop those above. */
int launch_set_replicas(struct launch *l, unsigned int n);

/* launch_roll.c: start a rolling restart of @p l (0; -EBUSY: one is on;
 * -ENOSPC: no index left for the surge; its steps run on a timer of
 * their own); _cancel: stop it where it is (the surge stays a replica if
 * the count covers it). */
int launch_roll_start(struct launch *l);
void launch_roll_cancel(struct launch *l, const char *why);

/* launch_spec.c: what nf.start and nf.update check of a name, and of a
 * program, its CPUs and its options (@p bin: a path by now); 0 or -errno
 * (the request's err set). */
struct zn_cmd_req;
bool launch_name_ok(const char *s);
int launch_check_spec(struct zn_cmd_req *req, const char *bin,
		      const char *cpus, const json_t *args);

/* launch_spec.c: nf.start's "bundle" @p bun checked (@p out NULL) or
 * kept in @p out (ZN_BUNDLE_MAX entries), *n its NFs; 0 or -errno (err
 * set). _binary: @p bin, or zeronf-bundle beside the manager's NFs
 * (into @p path), NULL (err set) when there is none. */
int launch_bundle_spec(struct zn_cmd_req *req, const json_t *bun,
		       struct launch_member *out, unsigned int *n);
const char *launch_bundle_binary(struct zn_cmd_req *req, const char *bin,
				 char *path);

/* launch_view.c: @p l as tenant @p t + 1 sees it (0: the operator; names
 * as zn_tenant_shown_name shows them), and the tenant + 1 whose NFs @p l
 * launches (its trust group's), 0: none. */
json_t *launch_json(const struct launch *l, unsigned int t);
unsigned int launch_tenant(const struct launch *l);

#endif /* ZN_LAUNCH_PVT_H */
