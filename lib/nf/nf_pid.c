/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * A pid of its own in the instance's runtime directory (nf_pvt.h
 * zn_nf_pid_claim), for an NF that is a DPDK secondary in a PID namespace
 * the manager is not in: a Kubernetes pod (k8s/, docs/kubernetes.md) or a
 * sandbox.
 *
 * DPDK 22.11 names a secondary's own files in the runtime directory after
 * its pid, and locks them: the local copies of the memory segment lists
 * (fbarray_memseg-..._PID, eal_memalloc.c) fail "Cannot initialize local
 * memory map" when another live process holds that name. In a PID
 * namespace of its own each pod's NF is pid 1 (or the same small number):
 * the second NF of a node would not start. So the pid is claimed first,
 * by a lock file of ZeroNF's (zeronf-pid-PID.lock, held for the NF's
 * life); an NF whose pid another NF holds forks, and its child claims its
 * own pid, until one is free. The parent stays as the child's waiter
 * (in a pod, the namespace's init): it passes it the signals that stop a
 * process and leaves with its status.
 */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include "nf_pvt.h"
#include "../common/zn_instance.h"
#include "../common/zn_util.h"

#define PID_CLAIM_FMT "zeronf-pid-%d.lock"
#define MAX_FORKS 256 /* pids of other pods' NFs passed over, at most */

static volatile pid_t child_pid;

static void
pass_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

/* The parent's life after the fork: wait for @p child, then leave as it
 * did. Never returns. */
static void __attribute__((noreturn))
wait_child(pid_t child)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT,
				    SIGUSR1, SIGUSR2 };
	struct sigaction sa;
	int st;

	child_pid = child;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = pass_signal;
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	for (;;) {
		pid_t p = waitpid(-1, &st, 0);

		if (p == child)
			break;
		if (p < 0 && errno == ECHILD)
			_exit(1);
		/* another child (as the namespace's init): reaped */
	}
	if (WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		raise(WTERMSIG(st));
		_exit(128 + WTERMSIG(st)); /* init ignores some signals */
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
}

int
zn_nf_pid_claim(struct zn_nf *nf)
{
	for (unsigned int tries = 0; tries <= MAX_FORKS; tries++) {
		char path[PATH_MAX], file[48];
		pid_t child;
		int fd;

		snprintf(file, sizeof(file), PID_CLAIM_FMT, (int)getpid());
		if (zn_runtime_path(nf->instance, file, path, sizeof(path)))
			return -ENAMETOOLONG;
		fd = zn_lock_file(path, LOCK_EX);
		if (fd >= 0) {
			nf->pid_claim_fd = fd;
			if (tries > 0)
				ZN_LOG(INFO, "pid %d: %u pid(s) of other NFs "
				       "passed over", (int)getpid(), tries);
			return 0;
		}
		if (fd != -EWOULDBLOCK)
			return fd;
		/* Another NF has this pid (another namespace): a child of
		 * ours will have another. What the parent holds (the
		 * manager's pidfd or lock) goes with it, nothing to free. */
		fflush(NULL);
		child = fork();
		if (child < 0)
			return -errno;
		if (child > 0)
			wait_child(child);
	}
	ZN_LOG(ERR, "no free pid after %u forks", MAX_FORKS);
	return -EBUSY;
}
