/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Unit test runner: an EAL primary without hugepages or shared config
 * (--no-huge --no-shconf), so it needs no set-up and leaves no files. */

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_eal.h>

#include "zn_test.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/common/zn_cpus.h"

static struct zn_test *tests;
int zn_test_failures;

void
zn_test_register(struct zn_test *t)
{
	struct zn_test **p = &tests;

	while (*p != NULL)
		p = &(*p)->next;
	*p = t;
}

int
main(int argc, char **argv)
{
	char prefix[64], lcores[300], cpus[256];
	char *eal[] = { argv[0], "--no-huge", "--no-shconf", "--no-pci",
			"-m", "1024", "--log-level=error", lcores,
			prefix, "--no-telemetry", NULL };
	int ran = 0, failed = 0;
	cpu_set_t set;

	sched_getaffinity(0, sizeof(set), &set);
	zn_format_cpulist(&set, cpus, sizeof(cpus));
	snprintf(lcores, sizeof(lcores), "--lcores=0@(%s)", cpus);
	snprintf(prefix, sizeof(prefix), "--file-prefix=zn-unit-%d",
		 (int)getpid());
	if (rte_eal_init((int)(sizeof(eal) / sizeof(eal[0])) - 1, eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	for (struct zn_test *t = tests; t != NULL; t = t->next) {
		int before = zn_test_failures;
		bool selected = argc <= 1;

		for (int i = 1; i < argc; i++)
			selected |= strcmp(argv[i], t->name) == 0;
		if (!selected)
			continue;
		t->fn();
		ran++;
		if (zn_test_failures != before) {
			failed++;
			printf("FAIL %s\n", t->name);
		} else {
			printf("ok   %s\n", t->name);
		}
	}
	rte_eal_cleanup();
	if (zn_runtime_dir(prefix + strlen("--file-prefix="), cpus,
			   sizeof(cpus)) == 0)
		rmdir(cpus);
	if (ran == 0) {
		fprintf(stderr, "no test matched\n");
		return 1;
	}
	printf("%d tests, %d failed\n", ran, failed);
	return failed ? 1 : 0;
}
