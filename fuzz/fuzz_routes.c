/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The router's route-file reader and its live route changes
 * (nfs/router/routes.c) on any file: it loads or refuses with a message
 * naming the line; what loads answers lookups, takes adds and removes of
 * the file's own prefixes, and frees everything. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../nfs/router/routes.h"
#include "fuzz_eal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int fd = -1;
static char path[64];

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	fuzz_eal_init((*argv)[0]);
	fd = memfd_create("routes", 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return fd < 0 ? -1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[512], line[128];
	struct routes r;
	FILE *f;

	if (size > 1 << 16 || ftruncate(fd, 0) < 0 ||
	    pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	if (routes_load(&r, path, "fz", 4, NULL, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort(); /* a refusal always says why */
		return 0;
	}
	for (uint32_t i = 0; i < 64; i++)
		(void)routes_lookup4(&r, i * 0x04000001u);
	/* Each prefix of the file: replaced, then removed (or refused). */
	f = fopen(path, "r");
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char *sp = strpbrk(line, " \t");

		if (sp == NULL)
			continue;
		*sp = '\0';
		(void)routes_add(&r, line, 7, err, sizeof(err));
		(void)routes_del(&r, line, err, sizeof(err));
	}
	if (f != NULL)
		fclose(f);
	routes_free(&r);
	return 0;
}
