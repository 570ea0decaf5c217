/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Flow table lookup cost as the table grows: for 1k, 10k, 100k and 1M
 * flows, lookups of present keys in bursts of 32 (as the data path does)
 * and one by one, over two working sets: uniformly random over the whole
 * table (memory-bound once the table outgrows the caches) and a fixed set
 * of 10k active flows (what the table's own structure costs). Prints one
 * JSON object per table size with medians of 5 rounds. A DPDK primary with
 * --in-memory: no files are left behind.
 */

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_malloc.h>

#include <zeronf/flow.h>

#define LOOKUPS (1u << 21)
#define ROUNDS 5
#define BURST 32

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct zn_flow_key
key_n(uint32_t i)
{
	struct zn_flow_key k = { .ip_version = 4, .proto = 17,
				 .src_port = (uint16_t)(i * 7),
				 .dst_port = 53 };

	memcpy(k.src, &i, 4);
	k.dst[0] = 10;
	return k;
}

int
main(int argc, char **argv)
{
	static const uint32_t sizes[] = { 1000, 10000, 100000, 1000000 };
	char prefix[64];
	char *eal[] = { argv[0], "--in-memory", "--no-pci", "-l", "0",
			"--log-level=error", "--no-telemetry", prefix, NULL };
	struct zn_flow_key *keys;
	uint32_t *hashes, *order;

	(void)argc;
	snprintf(prefix, sizeof(prefix), "--file-prefix=znftb%d", getpid());
	if (rte_eal_init(8, eal) < 0) {
		fprintf(stderr, "EAL init failed\n");
		return 1;
	}
	keys = malloc(sizeof(*keys) * 1000000);
	hashes = malloc(sizeof(*hashes) * 1000000);
	order = malloc(sizeof(*order) * LOOKUPS);
	for (uint32_t i = 0; i < 1000000; i++) {
		keys[i] = key_n(i);
		hashes[i] = zn_flow_key_hash(&keys[i]);
	}
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		uint32_t n = sizes[s];
		char name[32];
		double burst_ns[ROUNDS], single_ns[ROUNDS], hot_ns[ROUNDS];
		uint32_t hot = n < 10000 ? n : 10000;
		struct zn_ft *ft;
		uint64_t hits = 0;

		snprintf(name, sizeof(name), "ftb%u", n);
		ft = zn_ft_create(&ZN_FT_OPTS(.name = name, .capacity = n,
					      .data_size = 16));
		if (ft == NULL) {
			fprintf(stderr, "cannot create a table of %u\n", n);
			return 1;
		}
		for (uint32_t i = 0; i < n; i++)
			zn_ft_add(ft, &keys[i], hashes[i], 0, NULL);
		srand(n);
		for (uint32_t i = 0; i < LOOKUPS; i++)
			order[i] = (uint32_t)rand() % n;
		for (int r = 0; r < ROUNDS; r++) {
			struct zn_ft_hit h[BURST];
			const struct zn_flow_key *kp[BURST];
			uint32_t hp[BURST];
			uint64_t t0 = rte_rdtsc();

			for (uint32_t i = 0; i < LOOKUPS; i += BURST) {
				for (int j = 0; j < BURST; j++) {
					kp[j] = &keys[order[i + j]];
					hp[j] = hashes[order[i + j]];
				}
				hits += zn_ft_lookup_burst(ft, kp, hp, BURST, 0,
							   h);
			}
			burst_ns[r] = (double)(rte_rdtsc() - t0) * 1e9 /
				      rte_get_tsc_hz() / LOOKUPS;
			t0 = rte_rdtsc();
			for (uint32_t i = 0; i < LOOKUPS; i++)
				hits += zn_ft_lookup(ft, &keys[order[i]],
						     hashes[order[i]], 0,
						     NULL) >= 0;
			single_ns[r] = (double)(rte_rdtsc() - t0) * 1e9 /
				       rte_get_tsc_hz() / LOOKUPS;
			t0 = rte_rdtsc();
			for (uint32_t i = 0; i < LOOKUPS; i += BURST) {
				for (int j = 0; j < BURST; j++) {
					uint32_t x = order[i + j] % hot;

					kp[j] = &keys[x];
					hp[j] = hashes[x];
				}
				hits += zn_ft_lookup_burst(ft, kp, hp, BURST, 0,
							   h);
			}
			hot_ns[r] = (double)(rte_rdtsc() - t0) * 1e9 /
				    rte_get_tsc_hz() / LOOKUPS;
		}
		qsort(hot_ns, ROUNDS, sizeof(double), cmp_double);
		qsort(burst_ns, ROUNDS, sizeof(double), cmp_double);
		qsort(single_ns, ROUNDS, sizeof(double), cmp_double);
		printf("{\"bench\": \"flowtable\", \"flows\": %u, "
		       "\"ns_per_lookup_burst\": %.1f, "
		       "\"ns_per_lookup\": %.1f, "
		       "\"ns_per_lookup_burst_10k_active\": %.1f, "
		       "\"hit_rate\": %.3f}\n",
		       n, burst_ns[ROUNDS / 2], single_ns[ROUNDS / 2],
		       hot_ns[ROUNDS / 2],
		       (double)hits / (3.0 * ROUNDS * LOOKUPS));
		fflush(stdout);
		zn_ft_free(ft);
	}
	/* --in-memory still creates the (empty) runtime directory */
	snprintf(prefix, sizeof(prefix), "%s", rte_eal_get_runtime_dir());
	rte_eal_cleanup();
	rmdir(prefix);
	return 0;
}
