/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* group.list: the trust groups, their pools and what crossed them. */

#include <errno.h>

#include <jansson.h>
#include <rte_cycles.h>
#include <rte_mempool.h>

#include "../core/cmd.h"
#include "../core/mgr.h"
#include "../nf/nf_rec.h"
#include "group.h"
#include "owner_map.h"
#include "police.h"
#include "pool_header.h"

/* Packets the workers copied into group @p g's pool (-1: the shared
 * one), and the tsc all copies took. */
static uint64_t
copied_into(const struct zn_mgr *m, int g, uint64_t *cycles)
{
	uint64_t n = 0;

	*cycles = 0;
	for (unsigned int w = 0; w < m->dp.n_workers; w++) {
		n += m->shm->workers[w].stats.copied[g + 1];
		*cycles += m->shm->workers[w].stats.copy_cycles;
	}
	return n;
}

/* Pointers the pool's driver took out of its ring that were no buffer
 * of it, dropped (owner_map.c): pool @p d of m->trust.owner_maps ([0]: the shared one). */
static uint64_t
foreign(const struct zn_mgr *m, unsigned int d)
{
	return m->trust.owner_maps != NULL ?
	       __atomic_load_n(&m->trust.owner_maps[d].foreign, __ATOMIC_RELAXED) : 0;
}

static int
cmd_group_list(struct zn_cmd_req *req)
{
	struct zn_mgr *m = req->mgr;
	json_t *a = json_array();
	uint64_t cycles, total = 0, n, repairs, cut;
	uint64_t shadowed = 0, shadow_rx = 0;

	for (unsigned int i = 0; i < ZN_MAX_GROUPS; i++) {
		const struct zn_shm_group *g = &m->shm->groups[i];
		json_t *nfs;

		if (!g->used)
			continue;
		nfs = json_array();
		for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
			if (zn_nf_state(m, s) != ZN_NF_FREE &&
			    m->nf[s].group == &m->trust.group[i])
				json_array_append_new(nfs, json_integer(s));
		n = copied_into(m, (int)i, &cycles);
		total += n;
		json_array_append_new(a, json_pack(
			"{s:s, s:i, s:s, s:I, s:{s:i, s:i, s:I, s:I}, s:o, s:I}",
			"name", g->name, "id", (int)i, "file", g->path,
			"bytes", (json_int_t)g->len, "pool", "size",
			(int)m->trust.group[i].pool_mgr->size, "in_use",
			(int)(m->trust.group[i].pool_mgr->size - zn_pool_header_avail(m, i)),
			"foreign",
			(json_int_t)foreign(m, i + 1), "header_repairs",
			(json_int_t)m->trust.group[i].header.repairs, "nfs", nfs,
			"copied_in", (json_int_t)n));
	}
	n = copied_into(m, -1, &cycles);
	total += n;
	zn_police_ring_stats(&repairs, &cut);
	for (unsigned int w = 0; w < m->dp.n_workers; w++) {
		shadowed += m->shm->workers[w].stats.shadowed;
		shadow_rx += m->shm->workers[w].stats.shadow_rx;
	}
	req->result = json_pack("{s:o, s:I, s:I, s:f, s:I, s:I, s:I, s:I}",
				"groups", a,
				"shared_pool_foreign", (json_int_t)foreign(m, 0),
				"copied_to_shared", (json_int_t)n,
				"ns_per_copy", total == 0 ? 0.0 :
				(double)cycles * 1e9 /
				(double)rte_get_tsc_hz() / (double)total,
				"ring_repairs", (json_int_t)repairs,
				"ring_waits_cut", (json_int_t)cut,
				"sent_as_headers", (json_int_t)shadowed,
				"received_as_headers", (json_int_t)shadow_rx);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd group_list_cmd = {
	.name = "group.list", .help = "trust groups and their pools",
	.result = "{\"groups\": \"[{name, id, file, bytes, pool: {size, "
		  "in_use, foreign, header_repairs}, nfs, copied_in}]\", "
		  "\"shared_pool_foreign\": \"pointers\", "
		  "\"copied_to_shared\": \"packets\", \"ns_per_copy\": "
		  "\"mean\", \"ring_repairs\": \"count\", "
		  "\"ring_waits_cut\": \"count\", \"sent_as_headers\": "
		  "\"packets\", \"received_as_headers\": \"packets\"}",
	.doc = "A trust group's packet pool is a hugepage file of its own "
	       "(`file`, `bytes`), mapped by the manager and by the NFs of "
	       "the group only (`nfs`: their instances); the file also holds "
	       "those NFs' slots, rings and links, the pool's own structures "
	       "and the group's copy of the routing snapshot "
	       "(docs/security.md). Groups are made at "
	       "start (`--trust-group NAME[:BUFFERS]`). A packet for an NF "
	       "that is not in its pool is copied into the NF's by a worker: "
	       "`copied_in` counts those into a group, `copied_to_shared` "
	       "those into the shared pool (for NFs of no group), "
	       "`ns_per_copy` their mean cost. `foreign` (and "
	       "`shared_pool_foreign`): pointers the pool's free ring held "
	       "that were no buffer of it (an NF freed garbage, or wrote it "
	       "there), dropped as the manager took them out (with "
	       "`--validate on`). The manager uses every pool's free ring "
	       "with the geometry it made it with: `ring_repairs` counts "
	       "the times it wrote back a size, mask or capacity an NF had "
	       "changed (every 50 ms), `ring_waits_cut` the times it stopped "
	       "waiting for another process's operation on a ring to "
	       "finish (after about 4M polls; an NF stuck or lying there). "
	       "The manager gets and puts a group's buffers with its own "
	       "copy of the pool's header; `pool.header_repairs` counts the "
	       "times it wrote back the header the group's NFs use, an NF "
	       "having changed it (every 50 ms). `in_use`: buffers in no "
	       "cache and not in the free ring (NFs' caches as their "
	       "lengths say). Port drivers see a group's buffers through "
	       "headers of the manager's, one paired with each buffer "
	       "(docs/security.md): `sent_as_headers` counts the group "
	       "packets workers sent so, `received_as_headers` those a "
	       "group's port (`--port-group`) received so.",
	.fn = cmd_group_list,
};
ZN_CMD_REGISTER(group_list_cmd)
