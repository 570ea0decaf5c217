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
 *   zeronf-run [--cgroup DIR]... [--user UID:GID] -- PROGRAM [ARGS]
 *       Join each cgroup (cgroup v1: one directory per controller; v2:
 *       one), then exec PROGRAM: everything it starts is inside. With
 *       --user (inside a sandbox: bwrap leaves it CAP_SETUID,
 *       CAP_SETGID and CAP_SETPCAP only), become that user and group
 *       first, with no supplementary groups, an empty bounding set and
 *       no inheritable capability: changing from uid 0 clears the
 *       others, and the sandbox's no_new_privs keeps them off.
 *
 * Exit status: PROGRAM's; 127 if it cannot be run; 126 for a cgroup that
 * cannot be joined or a user that cannot be become (the reason on
 * stderr).
 */

#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <sys/syscall.h>
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

/* Become @p spec ("UID:GID", neither 0), for good. */
static int
become(const char *spec)
{
	unsigned long uid, gid;
	char *end;

	errno = 0;
	uid = strtoul(spec, &end, 10);
	if (errno != 0 || *end != ':' || uid == 0 || uid >= 0xffffffffUL)
		goto bad;
	gid = strtoul(end + 1, &end, 10);
	if (errno != 0 || *end != '\0' || gid == 0 || gid >= 0xffffffffUL)
		goto bad;
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct none[2] = { { 0 } };

	/* Nothing left to regain, whatever runs later */
	for (int c = 0; c < 64; c++)
		if (prctl(PR_CAPBSET_DROP, c, 0, 0, 0) < 0 && errno != EINVAL) {
			fprintf(stderr, "zeronf-run: cannot drop capability "
				"%d from the bounding set: %s\n", c,
				strerror(errno));
			return -1;
		}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return -1;
	if (setgroups(0, NULL) < 0 ||
	    setresgid((gid_t)gid, (gid_t)gid, (gid_t)gid) < 0 ||
	    setresuid((uid_t)uid, (uid_t)uid, (uid_t)uid) < 0) {
		fprintf(stderr, "zeronf-run: cannot become %s: %s\n", spec,
			strerror(errno));
		return -1;
	}
	if (syscall(SYS_capset, &hdr, none) < 0) {
		fprintf(stderr, "zeronf-run: capset: %s\n", strerror(errno));
		return -1;
	}
	/* no way back: a capability kept would say otherwise */
	if (setresuid(0, 0, 0) == 0 || getuid() != (uid_t)uid ||
	    getegid() != (gid_t)gid) {
		fprintf(stderr, "zeronf-run: %s did not stick\n", spec);
		return -1;
	}
	return 0;
bad:
	fprintf(stderr, "zeronf-run: bad --user %s (UID:GID, not 0)\n", spec);
	return -1;
}

int
main(int argc, char **argv)
{
	const char *user = NULL;
	int i;

	if (argc == 2 && strcmp(argv[1], "--hold-pidns") == 0)
		return hold_pidns();
	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--user") == 0 && i + 1 < argc) {
			user = argv[++i];
			continue;
		}
		if (strcmp(argv[i], "--cgroup") != 0 || i + 1 >= argc) {
			fprintf(stderr, "usage: zeronf-run --hold-pidns | "
				"zeronf-run [--cgroup DIR]... [--user UID:GID] "
				"-- PROGRAM [ARGS]\n");
			return 2;
		}
		if (join(argv[++i]) < 0)
			return 126;
	}
	if (user != NULL && become(user) < 0)
		return 126;
	if (i + 1 >= argc) {
		fprintf(stderr, "zeronf-run: no program\n");
		return 2;
	}
	execvp(argv[i + 1], argv + i + 1);
	fprintf(stderr, "zeronf-run: %s: %s\n", argv[i + 1], strerror(errno));
	return 127;
}
