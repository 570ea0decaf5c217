/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * route_load: how long the router NF's tables (routes.c: rte_fib over
 * rte_rib) take to load a route file, and their lookup rate against
 * rte_lpm's (the router's tables before) on the same sample of addresses,
 * in bursts of 32 as the NF looks up. The rte_lpm table is built from the
 * same file (slowly: rte_lpm_add scans its rules on every add; its time
 * goes to stderr) and every sample address must get the same next hop
 * from both. Prints
 *   {"bench":"route_load","prefixes":N,"load_s":X,"lookup_mpps":Y,
 *    "lpm_lookup_mpps":Z}
 * with the median of 5 loads and of 5 lookup rounds each (interleaved).
 *
 *   zn-route-bench ROUTES SAMPLE   (SAMPLE: one IPv4 address per line)
 */

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_fib.h>
#include <rte_hash.h>
#include <rte_lpm.h>

#include "../nfs/router/routes.h"

#define ROUNDS 5
#define BURST 32
#define LOOKUPS (1u << 23)

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return v[n / 2];
}

static double
secs(uint64_t c)
{
	return (double)c / (double)rte_get_tsc_hz();
}

/* rte_lpm from the same file, next hops as routes.c indexes them. */
static struct rte_lpm *
lpm_build(const char *path, const struct routes *r, uint32_t n)
{
	struct rte_lpm *lpm = rte_lpm_create("bench_lpm", SOCKET_ID_ANY,
		&(struct rte_lpm_config){ .max_rules = n + 16,
					  .number_tbl8s = 1u << 16 });
	char line[256];
	FILE *f = fopen(path, "r");

	if (lpm == NULL || f == NULL)
		return NULL;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *save = NULL, *pfx = strtok_r(line, " \t\r\n", &save);
		char *nh = strtok_r(NULL, " \t\r\n", &save), *slash;
		uint32_t id, a;
		void *idx;

		if (pfx == NULL || nh == NULL || pfx[0] == '#' ||
		    pfx[0] == ';' || strchr(pfx, ':') != NULL ||
		    (slash = strchr(pfx, '/')) == NULL)
			continue;
		*slash = '\0';
		id = (uint32_t)strtoul(nh, NULL, 10);
		if (inet_pton(AF_INET, pfx, &a) != 1 ||
		    rte_hash_lookup_data(r->ids, &id, &idx) < 0)
			continue;
		if (atoi(slash + 1) == 0)
			continue; /* rte_lpm has no /0 */
		rte_lpm_add(lpm, rte_be_to_cpu_32(a),
			    (uint8_t)atoi(slash + 1), (uint32_t)(uintptr_t)idx);
	}
	fclose(f);
	return lpm;
}

int
main(int argc, char **argv)
{
	char prefix[64];
	char *eal[] = { argv[0], "--in-memory", "--no-pci", "-l", "0",
			"--log-level=error", "--no-telemetry", prefix, NULL };
	double load[ROUNDS], fib_rate[ROUNDS], lpm_rate[ROUNDS];
	static uint32_t ips[1u << 16], tmp[BURST];
	uint64_t nh64[BURST];
	uint32_t nh32[BURST], n_ips = 0, prefixes = 0;
	char line[128], err[512];
	struct routes r;
	struct rte_lpm *lpm;
	FILE *f;

	if (argc != 3) {
		fprintf(stderr, "usage: %s ROUTES SAMPLE\n", argv[0]);
		return 2;
	}
	snprintf(prefix, sizeof(prefix), "--file-prefix=znrb%d", getpid());
	if (rte_eal_init((int)RTE_DIM(eal) - 1, eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	f = fopen(argv[2], "r");
	while (f != NULL && n_ips < RTE_DIM(ips) &&
	       fgets(line, sizeof(line), f) != NULL) {
		uint32_t a;

		line[strcspn(line, " \t\r\n")] = '\0';
		if (inet_pton(AF_INET, line, &a) == 1)
			ips[n_ips++] = rte_be_to_cpu_32(a);
	}
	if (f != NULL)
		fclose(f);
	if (n_ips < BURST) {
		fprintf(stderr, "%s: fewer than %d addresses\n", argv[2], BURST);
		return 1;
	}
	n_ips -= n_ips % BURST;
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t t0 = rte_get_tsc_cycles();

		if (routes_load(&r, argv[1], "bench_rt", 0, NULL, err,
				sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		load[i] = secs(rte_get_tsc_cycles() - t0);
		prefixes = r.n_v4 + r.n_v6;
		if (i < ROUNDS - 1)
			routes_free(&r);
	}
	{
		uint64_t t0 = rte_get_tsc_cycles();

		lpm = lpm_build(argv[1], &r, prefixes);
		if (lpm == NULL) {
			fprintf(stderr, "cannot build the rte_lpm table\n");
			return 1;
		}
		fprintf(stderr, "route_load: rte_lpm took %.1f s to load the "
			"same %u routes\n", secs(rte_get_tsc_cycles() - t0),
			prefixes);
	}
	/* Both must agree on every sample address. */
	for (uint32_t i = 0; i < n_ips; i++) {
		uint32_t a = routes_lookup4(&r, ips[i]), b;

		if (rte_lpm_lookup(lpm, ips[i], &b) != 0)
			b = ROUTES_NONE;
		if (a != b) {
			fprintf(stderr, "rte_fib and rte_lpm disagree on "
				"%08x: %u vs %u\n", ips[i], a, b);
			return 1;
		}
	}
	for (int i = 0; i < ROUNDS; i++) {
		uint64_t t0 = rte_get_tsc_cycles(), sink = 0;

		for (uint32_t k = 0; k < LOOKUPS; k += BURST) {
			/* a copy, as the NF gathers a burst's addresses */
			memcpy(tmp, &ips[k % n_ips], sizeof(tmp));
			rte_fib_lookup_bulk(r.v4, tmp, nh64, BURST);
			sink += nh64[k & (BURST - 1)];
		}
		fib_rate[i] = LOOKUPS / secs(rte_get_tsc_cycles() - t0) / 1e6;
		t0 = rte_get_tsc_cycles();
		for (uint32_t k = 0; k < LOOKUPS; k += BURST) {
			memcpy(tmp, &ips[k % n_ips], sizeof(tmp));
			rte_lpm_lookup_bulk(lpm, tmp, nh32, BURST);
			sink += nh32[k & (BURST - 1)];
		}
		lpm_rate[i] = LOOKUPS / secs(rte_get_tsc_cycles() - t0) / 1e6;
		if (sink == 42)
			fputc(' ', stderr);
	}
	printf("{\"bench\":\"route_load\",\"prefixes\":%u,\"load_s\":%.3f,"
	       "\"lookup_mpps\":%.2f,\"lpm_lookup_mpps\":%.2f}\n", prefixes,
	       median(load, ROUNDS), median(fib_rate, ROUNDS),
	       median(lpm_rate, ROUNDS));
	routes_free(&r);
	rte_lpm_free(lpm);
	rte_eal_cleanup();
	return 0;
}
