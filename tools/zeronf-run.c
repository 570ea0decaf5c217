/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * zeronf-run: what the manager runs when a launched NF is sandboxed or
 * limited; it is not meant to be run by hand.
 *
 *   zeronf-run --hold-pidns
 *       Make a PID namespace and keep it: the namespace's init (pid 1)
 *       only reaps orphans. Both die with the manager (PR_SET_PDEATHSIG),
 *       and the kernel kills what runs in a namespace whose init died.
 *       The sandboxed NFs of an instance join it (bwrap --pidns): they
 *       see no host process, and their pids, which DPDK puts in the names
 *       of the files it shares in the runtime directory, differ.
 *
 *   zeronf-run [--cgroup DIR]... -- PROGRAM [ARGS]
 *       Join each cgroup (cgroup v1: one directory per controller; v2:
 *       one), then exec PROGRAM: everything it starts is inside.
 *
 * Exit status: PROGRAM's; 127 if it cannot be run; 126 for a cgroup that
 * cannot be joined (the reason on stderr).
 */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

static int
hold_pidns(void)
{
	pid_t child;
	int status;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 ||
	    unshare(CLONE_NEWPID) < 0) {
		fprintf(stderr, "zeronf-run: PID namespace: %s\n",
			strerror(errno));
		return 1;
	}
	child = fork();
	if (child < 0) {
		fprintf(stderr, "zeronf-run: fork: %s\n", strerror(errno));
		return 1;
	}
	if (child == 0) {
		sigset_t all;

		/* pid 1 of the namespace: reap whatever is left to it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0); /* the holder is already gone */
		sigfillset(&all);
		sigprocmask(SIG_BLOCK, &all, NULL);
		for (;;)
			if (wait(NULL) < 0 && errno == ECHILD)
				pause();
	}
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static int
join(const char *dir)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, "0\n", 2) != 2) {
		fprintf(stderr, "zeronf-run: cannot join cgroup %s: %s\n", dir,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int
main(int argc, char **argv)
{
	int i;

	if (argc == 2 && strcmp(argv[1], "--hold-pidns") == 0)
		return hold_pidns();
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--cgroup") != 0 || i + 1 >= argc) {
			fprintf(stderr, "usage: zeronf-run --hold-pidns | "
				"zeronf-run [--cgroup DIR]... -- PROGRAM "
				"[ARGS]\n");
			return 2;
		}
		if (join(argv[++i]) < 0)
			return 126;
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "zeronf-run: no program\n");
		return 2;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "zeronf-run: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
