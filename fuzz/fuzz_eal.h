/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* Fuzz targets that need DPDK memory (tables): a private primary EAL in
 * the fuzzing process: anonymous memory (--no-huge) and no shared files
 * (--no-shconf; --in-memory refuses --no-huge in 22.11). */
#ifndef ZN_FUZZ_EAL_H
#define ZN_FUZZ_EAL_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <rte_eal.h>

static char fuzz_rundir[4200];

/* The EAL leaves its (empty) runtime directory: removed at exit. */
static void
fuzz_eal_fini(void)
{
	rte_eal_cleanup();
	rmdir(fuzz_rundir);
}

static inline void
fuzz_eal_init(const char *prog)
{
	const char *base = getuid() == 0 ? "/var/run" :
			   getenv("XDG_RUNTIME_DIR") ? getenv("XDG_RUNTIME_DIR") :
			   "/tmp";
	char prefix[64];
	char *argv[] = { (char *)(uintptr_t)prog, "--no-shconf", "--no-huge",
			 "-m", "512", "--no-pci", "-l", "0",
			 "--log-level=crit", "--no-telemetry", prefix, NULL };

	snprintf(prefix, sizeof(prefix), "--file-prefix=znfuzz%d", getpid());
	if (rte_eal_init((int)(sizeof(argv) / sizeof(argv[0])) - 1, argv) < 0) {
		fprintf(stderr, "fuzz: EAL init failed\n");
		abort();
	}
	snprintf(fuzz_rundir, sizeof(fuzz_rundir), "%s/dpdk/znfuzz%d", base,
		 getpid());
	atexit(fuzz_eal_fini);
}

#endif
