/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Tenants' commands: tenant.list (their chains: fdir.c). */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>

#include "../core/mgr.h"
#include "../core/cmd.h"
#include "../flow/fdir.h"
#include "tenant.h"
#include "../nf/nf_rec.h"

/* ------------------------------------------------------------------ */
/* tenant.list                                                         */

static json_t *
slice_json(const struct zn_slice_cfg *s)
{
	char a[INET6_ADDRSTRLEN + 8], v[INET6_ADDRSTRLEN];

	switch (s->kind) {
	case ZN_SLICE_VLAN:
		return json_pack("{s:i, s:i}", "port", s->port, "vlan",
				 s->vlan);
	case ZN_SLICE_MAC:
		snprintf(a, sizeof(a), "%02x:%02x:%02x:%02x:%02x:%02x",
			 s->mac[0], s->mac[1], s->mac[2], s->mac[3], s->mac[4],
			 s->mac[5]);
		return json_pack("{s:i, s:s}", "port", s->port, "mac", a);
	case ZN_SLICE_PREFIX:
		inet_ntop(s->v6 ? AF_INET6 : AF_INET, s->addr, v, sizeof(v));
		snprintf(a, sizeof(a), "%s/%u", v, s->plen);
		return json_pack("{s:i, s:s}", "port", s->port, "prefix", a);
	default:
		return json_pack("{s:i}", "port", s->port);
	}
}

/* The tenant's NFs' counters, summed; @p n their count. */
static json_t *
nf_sums(const struct zn_mgr *m, unsigned int t, unsigned int *n)
{
	uint64_t rx = 0, tx = 0, drops = 0;

	*n = 0;
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		const struct zn_nf_slot *ns = zn_slot(m, s);

		if (zn_nf_state(m, s) == ZN_NF_FREE ||
		    zn_tenant_of_nf(m, s) != t + 1)
			continue;
		(*n)++;
		rx += ns->stats.rx; /* as the NFs say (nf.list) */
		tx += ns->stats.tx;
		for (unsigned int r = 0; r < ZN_DROP_MAX; r++)
			drops += ns->mstats.drops[r] + ns->hstats.drops[r];
	}
	return json_pack("{s:I, s:I, s:I}", "rx", (json_int_t)rx, "tx",
			 (json_int_t)tx, "drops", (json_int_t)drops);
}

static json_t *
tenant_json(struct zn_mgr *m, unsigned int t)
{
	const struct zn_tenant_cfg *c = &m->cfg.tenants[t];
	struct zn_tenant_wstats sum = { 0 };
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	json_t *slices = json_array();
	unsigned int n_nfs;
	json_t *nfs = nf_sums(m, t, &n_nfs);

	for (unsigned int i = 0; i < m->cfg.n_slices; i++)
		if (m->cfg.slices[i].tenant == t)
			json_array_append_new(slices,
					      slice_json(&m->cfg.slices[i]));
	for (unsigned int w = 0; w < ZN_MAX_WORKERS; w++) {
		const struct zn_tenant_wstats *ws = &m->shm->workers[w].tenant[t];

		sum.rx += ws->rx;
		sum.rx_bytes += ws->rx_bytes;
		sum.ingress_full += ws->ingress_full;
		sum.no_chain += ws->no_chain;
		sum.cross += ws->cross;
	}
	return json_pack(
		"{s:s, s:i, s:s, s:[i,i], s:o, s:o, s:i, s:o, s:{s:I, s:I, "
		"s:I, s:I, s:I}}", "name", c->name, "id", (int)t, "group",
		c->group_name, "services", c->svc_lo, c->svc_hi, "slices",
		slices, "chain", zn_cmd_steps_json(steps, zn_fdir_tenant_chain(
						   m, t, steps)),
		"n_nfs", (int)n_nfs, "nfs", nfs, "counters", "rx",
		(json_int_t)sum.rx, "rx_bytes", (json_int_t)sum.rx_bytes,
		"ingress_full", (json_int_t)sum.ingress_full, "no_chain",
		(json_int_t)sum.no_chain, "cross_tenant",
		(json_int_t)sum.cross);
}

static int
cmd_tenant_list(struct zn_cmd_req *req)
{
	json_t *a = json_array();

	for (unsigned int t = 0; t < req->mgr->cfg.n_tenants; t++)
		if (req->tenant == 0 || req->tenant == t + 1)
			json_array_append_new(a, tenant_json(req->mgr, t));
	req->result = json_pack("{s:o}", "tenants", a);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd tenant_list_cmd = {
	.name = "tenant.list",
	.help = "tenants: their slices, chain and counters",
	.flags = ZN_CMD_F_TENANT, /* its own only */
	.result = "{\"tenants\": \"[{name, id, group, services: [lo, hi], "
		  "slices: [{port, vlan | mac | prefix}], chain: [step], "
		  "n_nfs, nfs: {rx, tx, drops}, counters: {rx, rx_bytes, "
		  "ingress_full, no_chain, cross_tenant}}]\"}",
	.doc = "Tenants are made at start (`--tenant NAME=GROUP[,services="
	       "LO-HI]`, `--slice TENANT:PORT[:vlan=V|:mac=M|:prefix=A/L]`)."
	       " `counters`: packets its slices received (`rx`), of those "
	       "dropped because its first hop was full (`ingress_full`: a "
	       "sliced port waits for no tenant) or it has no chain "
	       "(`no_chain`), and its NFs' packets dropped for going to "
	       "another tenant (`cross_tenant`). `nfs`: its NFs' counters "
	       "summed. Its chain is set with `chain.set` and `tenant`. On a "
	       "tenant's control socket: that tenant only.",
	.fn = cmd_tenant_list,
};
ZN_CMD_REGISTER(tenant_list_cmd)
