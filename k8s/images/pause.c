/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The pod sandbox's process (containerd's sandbox_image, built by
 * scripts/cluster.sh into a FROM-scratch image: the registry's
 * registry.k8s.io/pause cannot be pulled here). What Kubernetes' own
 * build/pause/linux/pause.c does: hold the pod's namespaces, reap
 * children when it is their init (a shared PID namespace), leave on
 * SIGINT/SIGTERM.
 */

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static void
leave(int sig)
{
	_exit(128 + sig);
}

static void
reap(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

int
main(int argc, char **argv)
{
	struct sigaction sa;

	if (argc > 1 && strcmp(argv[1], "-v") == 0) {
		puts("zeronf pause 3.10");
		return 0;
	}
	if (getpid() != 1)
		fprintf(stderr, "pause: not PID 1: children are not reaped\n");
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = leave;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sa.sa_handler = reap;
	sa.sa_flags = SA_NOCLDSTOP;
	sigaction(SIGCHLD, &sa, NULL);
	for (;;)
		pause();
	return 1;
}
