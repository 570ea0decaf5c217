/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The load balancer's Maglev hashing (nfs/lb/maglev.c) on its own: 1M
 * random flows spread within 1 % of even; a backend leaving moves few
 * flows of the others (the paper's near-minimal disruption); weights give
 * shares in proportion. */
#include <stdio.h>
#include <string.h>

#include "../../nfs/lb/maglev.h"
#include "xorshift.h"
#include "zn_test.h"

#define FLOWS 1000000

static char names[MAGLEV_MAX_BACKENDS][32];

static void
backends(struct maglev_backend *b, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "10.1.%u.%u:80", i / 250,
			 i % 250 + 1);
		b[i] = (struct maglev_backend){ names[i], 1, true };
	}
}

static uint32_t
flow(uint64_t *x)
{
	return maglev_flow_hash((uint32_t)xorshift64(x), 0xc6336401u,
				(uint16_t)xorshift64(x), 80, 6);
}

ZN_TEST(maglev_spreads_a_million_flows_within_1pct)
{
	struct maglev_backend b[10];
	uint32_t count[10] = { 0 }, entries[10] = { 0 };
	uint64_t x = 0x9e3779b97f4a7c15ull * 1;
	struct maglev mg;

	ZT_EQ(maglev_init(&mg, MAGLEV_M_DEFAULT), 0);
	backends(b, 10);
	maglev_populate(&mg, b, 10);
	for (uint32_t i = 0; i < mg.m; i++)
		entries[mg.table[i]]++;
	for (unsigned int i = 0; i < 10; i++) /* M/N, within one */
		ZT_CHECK(entries[i] == 6553 || entries[i] == 6554);
	for (uint32_t f = 0; f < FLOWS; f++)
		count[maglev_lookup(&mg, flow(&x))]++;
	for (unsigned int i = 0; i < 10; i++) {
		double dev = ((double)count[i] - FLOWS / 10.0) / (FLOWS / 10.0);

		ZT_CHECK(dev < 0.01 && dev > -0.01);
	}
	maglev_free(&mg);
}

/* The paper (section 3.4, figure 12): with M = 65537, a backend leaving
 * changes the entries it had and a few more; consistent hashing's ideal
 * moves only its own. Measured here on 1M flows: 100 backends, one
 * leaves: its 1 % move, and at most 1 % more (0.65 % here). */
ZN_TEST(maglev_a_backend_leaving_moves_few_other_flows)
{
	static struct maglev_backend b[100];
	uint64_t x = 0x9e3779b97f4a7c15ull * 2;
	struct maglev a, c;
	uint32_t own = 0, others = 0;

	ZT_EQ(maglev_init(&a, MAGLEV_M_DEFAULT), 0);
	ZT_EQ(maglev_init(&c, MAGLEV_M_DEFAULT), 0);
	backends(b, 100);
	maglev_populate(&a, b, 100);
	b[17].up = false;
	maglev_populate(&c, b, 100);
	for (uint32_t f = 0; f < FLOWS; f++) {
		uint32_t h = flow(&x);
		uint16_t before = maglev_lookup(&a, h), after =
			maglev_lookup(&c, h);

		ZT_CHECK(after != 17);
		if (before == 17)
			own++;
		else if (after != before)
			others++;
	}
	printf("  maglev: 1 of 100 backends leaves: %.3f %% of flows were "
	       "its, %.3f %% of the others' moved\n", 100.0 * own / FLOWS,
	       100.0 * others / FLOWS);
	ZT_CHECK(own > FLOWS / 100 * 9 / 10 && own < FLOWS / 100 * 11 / 10);
	ZT_CHECK(others < FLOWS / 100);
	maglev_free(&a);
	maglev_free(&c);
}

ZN_TEST(maglev_weights_give_shares_in_proportion)
{
	struct maglev_backend b[3];
	uint32_t count[3] = { 0 };
	uint64_t x = 0x9e3779b97f4a7c15ull * 3;
	struct maglev mg;

	ZT_EQ(maglev_init(&mg, MAGLEV_M_DEFAULT), 0);
	backends(b, 3);
	b[1].weight = 2;
	b[2].weight = 3;
	maglev_populate(&mg, b, 3);
	for (uint32_t f = 0; f < FLOWS; f++)
		count[maglev_lookup(&mg, flow(&x))]++;
	for (unsigned int i = 0; i < 3; i++) {
		double want = FLOWS * (i + 1) / 6.0;

		ZT_CHECK(count[i] > want * 0.99 && count[i] < want * 1.01);
	}
	/* none up: no entry */
	for (unsigned int i = 0; i < 3; i++)
		b[i].up = false;
	maglev_populate(&mg, b, 3);
	ZT_EQ(maglev_lookup(&mg, 12345), MAGLEV_NONE);
	maglev_free(&mg);
	ZT_CHECK(maglev_init(&mg, 65536) < 0); /* not prime */
}
