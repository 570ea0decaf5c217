/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Stats (Long: every view's JSON beside the command that serves it):
 * one JSON view of the shared counters, served as commands (the
 * control socket, and DPDK telemetry, telemetry.c) and logged every
 * --stats-interval-s. Control thread only: the views read the control thread's own state too (the LB pin
 * tables service.set frees, the flow director's chains); the telemetry
 * thread asks the control thread for them. Counters are summed over
 * workers.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <rte_ethdev.h>
#include <rte_version.h>

#include "../core/cmd.h"
#include "../flow/fdir.h"
#include "../flow/lb.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../nf/pool_acct.h"
#include "../port/port.h"
#include "../nf/link.h"
#include "../nf/registry.h"
#include "stats.h"
#include "../tenant/tenant.h"
#include "../datapath/worker.h"
#include "../../lib/common/zn_util.h"
#include "../nf/nf_rec.h"
#include "../core/subsys.h"

static const char *const action_names[ZN_ACT_MAX] = {
	[ZN_ACT_NEXT] = "next",
	[ZN_ACT_DROP] = "drop",
	[ZN_ACT_TO_SERVICE] = "to_service",
	[ZN_ACT_OUT] = "out",
};

static json_t *
jstr(const char *s, size_t max)
{
	json_t *j = json_stringn(s, strnlen(s, max));

	return j ? j : json_string("?");
}

static json_t *
drops_json(const uint64_t *drops)
{
	json_t *o = json_object();

	for (int r = 0; r < ZN_DROP_MAX; r++)
		json_object_set_new(o, zn_drop_reason_name(r),
				    json_integer((json_int_t)drops[r]));
	return o;
}

static json_t *
ring_json(const struct rte_ring *r)
{
	if (r == NULL)
		return json_null();
	return json_pack("{s:I, s:I}", "count",
			 (json_int_t)rte_ring_count(r), "size",
			 (json_int_t)rte_ring_get_capacity(r));
}

static json_t *
nf_json(struct zn_mgr *m, unsigned int slot)
{
	const struct zn_nf_slot *s = zn_slot(m, slot);
	json_t *acts = json_object(), *ctrs = json_object(), *cmds, *o;
	unsigned int nc = s->req.n_counters;

	uint64_t drops[ZN_DROP_MAX], port_tx = 0;
	unsigned int n_out = 0;
	json_t *ports = json_array();

	/* Actions and drops: the worker's count (packets through the TX
	 * ring) plus the NF's own (packets it handed to NFs or ports
	 * directly). */
	for (int a = 0; a < ZN_ACT_MAX; a++)
		json_object_set_new(acts, action_names[a],
				    json_integer((json_int_t)(s->mstats.act[a] +
							      s->hstats.act[a])));
	json_object_set_new(acts, "invalid",
			    json_integer((json_int_t)(s->mstats.act[ZN_ACT_MAX] +
						      s->hstats.act[ZN_ACT_MAX])));
	for (int r = 0; r < ZN_DROP_MAX; r++)
		drops[r] = s->mstats.drops[r] + s->hstats.drops[r];
	for (unsigned int r = 0; r < ZN_MAX_NFS; r++)
		n_out += s->links.out[r] != 0;
	for (unsigned int i = 0; i < nc && i < ZN_NF_MAX_COUNTERS; i++) {
		char name[ZN_COUNTER_NAME_LEN];

		zn_strlcpy(name, s->counter_names[i], sizeof(name));
		/* jansson refuses (and frees the value for) a key that is not
		 * UTF-8: an NF's garbage name is skipped, never sent. */
		if (name[0] != '\0')
			json_object_set_new(ctrs, name,
					    json_integer((json_int_t)s->counters[i]));
	}
	cmds = json_array();
	for (unsigned int i = 0; i < s->cmds.n && i < ZN_NF_MAX_CMDS; i++) {
		json_t *c = jstr(s->cmds.name[i], ZN_CMD_NAME_LEN);

		if (c != NULL)
			json_array_append_new(cmds, c);
	}
	o = json_pack("{s:i, s:i, s:o, s:I, s:s, s:i, s:I, s:I, s:I, s:o, "
		      "s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:o, s:o, s:I, "
		      "s:I, s:o, s:o, s:I, s:I}",
		      "instance", (int)slot, "service", s->ctl.service_id,
		      "name", jstr(s->ctl.name, ZN_NAME_LEN), "pid",
		      (json_int_t)zn_registry_pid(m, slot), "state",
		      zn_nf_state_name(zn_nf_state(m, slot)), "worker",
		      m->nf[slot].worker,
		      "rx", (json_int_t)s->stats.rx, "tx",
		      (json_int_t)s->stats.tx, "bursts",
		      (json_int_t)s->stats.bursts, "actions", acts,
		      "tx_full_waits", (json_int_t)s->stats.tx_full,
		      "created", (json_int_t)s->stats.created,
		      "long_yields", (json_int_t)s->stats.long_yields,
		      "dequeued", (json_int_t)s->mstats.dequeued, "drops",
		      drops_json(drops), "exit_drops",
		      (json_int_t)s->exit_drops, "staged",
		      (json_int_t)s->mstats.staged, "rx_ring",
		      ring_json(m->nf[slot].where.rx), "tx_ring",
		      ring_json(m->nf[slot].tx), "sleeps",
		      (json_int_t)s->db.sleeps, "wakeups",
		      (json_int_t)s->db.wakeups, "counters", ctrs, "commands",
		      cmds, "pool_held", (json_int_t)s->alloc.held,
		      "pool_refused", (json_int_t)s->alloc.refused);
	for (unsigned int p = 0; p < m->n_ports; p++)
		if (s->ptx[p].q != 0) {
			port_tx += s->ptx[p].tx;
			json_array_append_new(ports, json_integer((int)p));
		}
	/* its RX ring's or a link's into it, the fullest (autoscaling) */
	json_object_set_new(o, "input_fill",
			    json_real(zn_link_input_fill(m, slot)));
	json_object_set_new(o, "trust_group", m->nf[slot].group != NULL ?
			    json_string(m->cfg.groups[m->nf[slot].group->idx]
					.name) : json_null());
	json_object_set_new(o, "handoff", json_pack(
		"{s:I, s:I, s:I, s:o, s:I, s:i, s:i, s:I, s:I}",
		"link_tx", (json_int_t)s->hstats.link_tx,
		"link_rx", (json_int_t)s->hstats.link_rx,
		"port_tx", (json_int_t)port_tx, "ports", ports,
		"to_worker", (json_int_t)s->hstats.tx_ring_in,
		"links_out", (int)n_out, "links_in", (int)s->links.n_in,
		"blocked", (json_int_t)s->hstats.blocked,
		"loops_broken", (json_int_t)s->hstats.cycles_broken));
	return o;
}

json_t *
zn_stats_nfs(struct zn_mgr *m)
{
	json_t *a = json_array();

	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++)
		if (zn_nf_state(m, slot) != ZN_NF_FREE)
			json_array_append_new(a, nf_json(m, slot));
	return a;
}

json_t *
zn_stats_services(struct zn_mgr *m)
{
	json_t *by_svc[ZN_MAX_SERVICES] = { 0 }, *a = json_array();

	for (unsigned int slot = 0; slot < ZN_MAX_NFS; slot++) {
		const struct zn_nf_slot *s = zn_slot(m, slot);
		uint16_t svc = s->ctl.service_id;

		if (zn_nf_state(m, slot) != ZN_NF_RUNNING ||
		    svc >= ZN_MAX_SERVICES)
			continue;
		if (by_svc[svc] == NULL)
			by_svc[svc] = json_array();
		json_array_append_new(by_svc[svc], json_integer(slot));
	}
	for (unsigned int svc = 1; svc < ZN_MAX_SERVICES; svc++) {
		json_t *o;

		if (by_svc[svc] == NULL)
			continue;
		o = zn_lb_json(m, (uint16_t)svc);
		json_object_set_new(o, "service", json_integer(svc));
		json_object_set_new(o, "instances", by_svc[svc]);
		json_array_append_new(a, o);
	}
	return a;
}

static void
port_sum(struct zn_mgr *m, unsigned int i, struct zn_port_wstats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (unsigned int w = 0; w < m->dp.n_workers; w++) {
		const struct zn_port_wstats *ws = &m->shm->workers[w].port[i];

		sum->rx += ws->rx;
		sum->tx += ws->tx;
		sum->rx_paused += ws->rx_paused;
		sum->tx_retry += ws->tx_retry;
		for (int r = 0; r < ZN_DROP_MAX; r++)
			sum->drops[r] += ws->drops[r];
	}
	sum->tx += m->ports[i].ctl_tx.tx; /* packet-outs (port_ctltx.c) */
}

static json_t *
port_json(struct zn_mgr *m, unsigned int i)
{
	const struct zn_port *p = &m->ports[i];
	struct zn_port_wstats sum = { 0 };
	struct rte_eth_stats hw = { 0 };
	struct rte_eth_link link = { 0 };
	struct rte_ether_addr mac = { 0 };
	char macs[RTE_ETHER_ADDR_FMT_SIZE];
	json_t *nftx, *nfrx, *o;
	const struct zn_group *g = p->group;

	port_sum(m, i, &sum);
	nftx = zn_port_nftx_json(m, i, &sum);
	nfrx = zn_port_nfrx_json(m, i, &sum);
	rte_eth_stats_get(p->port_id, &hw);
	/* net_af_packet: the kernel's drops its PMD does not count */
	hw.imissed += zn_port_kdrops(&m->ports[i]);
	rte_eth_link_get_nowait(p->port_id, &link);
	rte_eth_macaddr_get(p->port_id, &mac);
	rte_ether_format_addr(macs, sizeof(macs), &mac);
	o = json_pack("{s:i, s:o, s:o, s:o, s:s, s:s, s:b, s:I, s:i, s:i, s:b, "
			 "s:I, s:I, s:I, s:I, s:o, s:o, s:{s:I, s:I, s:I, s:I, "
			 "s:I, s:I, s:I, s:I}}",
			 "port", (int)i, "name", m->cfg.port_name[i][0] ?
			 json_string(m->cfg.port_name[i]) :
			 jstr(p->name, sizeof(p->name)),
			 "device", jstr(p->name, sizeof(p->name)),
			 "devargs", jstr(p->devargs, sizeof(p->devargs)),
			 "driver", p->driver, "mac", macs, "link_up",
			 link.link_status == RTE_ETH_LINK_UP, "speed_mbps",
			 (json_int_t)link.link_speed, "rx_queues", p->nb_rxq,
			 "tx_queues", p->nb_txq + p->nf_txq_n, "rss", p->rss, "rx",
			 (json_int_t)sum.rx, "tx", (json_int_t)sum.tx,
			 "rx_paused", (json_int_t)sum.rx_paused, "tx_retry",
			 (json_int_t)sum.tx_retry, "drops",
			 drops_json(sum.drops), "nf_tx", nftx, "hw",
			 "ipackets",
			 (json_int_t)hw.ipackets, "opackets",
			 (json_int_t)hw.opackets, "ibytes",
			 (json_int_t)hw.ibytes, "obytes", (json_int_t)hw.obytes,
			 "imissed", (json_int_t)hw.imissed, "ierrors",
			 (json_int_t)hw.ierrors, "oerrors",
			 (json_int_t)hw.oerrors, "rx_nombuf",
			 (json_int_t)hw.rx_nombuf);
	/* The trust group whose pool it receives into (mgr/trust/group.c), and
	 * the chain of what enters from it (chain.set with a port). */
	if (o != NULL) {
		struct zn_step steps[ZN_MAX_CHAIN_STEPS];
		unsigned int n = zn_fdir_port_chain(m, i, steps);

		json_object_set_new(o, "trust_group", g != NULL ?
				    json_string(m->cfg.groups[g->idx].name) :
				    json_null());
		json_object_set_new(o, "chain", n != 0 ?
				    zn_cmd_steps_json(steps, n) : json_null());
		/* of tx: packet-outs the control thread sent (port_ctltx.c) */
		json_object_set_new(o, "tx_control",
				    json_integer((json_int_t)p->ctl_tx.tx));
		/* NFs polling its RX queues (port_nfrx.c); what overflowed
		 * there is the PMD's to count (hw imissed, rx_nombuf) */
		json_object_set_new(o, "nf_rx", nfrx);
	} else {
		json_decref(nfrx);
	}
	return o;
}

void
zn_stats_port_report(struct zn_mgr *m, unsigned int i, bool counters,
		     struct zn_port_report *r)
{
	const struct zn_port *p = &m->ports[i];
	struct zn_port_wstats sum;
	struct rte_eth_stats hw = { 0 };
	struct rte_eth_link link = { 0 };
	struct rte_ether_addr mac = { 0 };

	memset(r, 0, sizeof(*r));
	rte_eth_link_get_nowait(p->port_id, &link);
	rte_eth_macaddr_get(p->port_id, &mac);
	snprintf(r->name, sizeof(r->name), "%s", m->cfg.port_name[i][0] ?
		 m->cfg.port_name[i] : p->name);
	memcpy(r->mac, mac.addr_bytes, sizeof(r->mac));
	r->link_up = link.link_status == RTE_ETH_LINK_UP;
	r->speed_mbps = link.link_speed;
	if (!counters)
		return;
	port_sum(m, i, &sum);
	json_decref(zn_port_nftx_json(m, i, &sum)); /* adds the NFs' tx */
	json_decref(zn_port_nfrx_json(m, i, &sum)); /* and their rx */
	rte_eth_stats_get(p->port_id, &hw);
	/* net_af_packet: the kernel's drops its PMD does not count */
	hw.imissed += zn_port_kdrops(&m->ports[i]);
	r->rx = sum.rx;
	r->tx = sum.tx;
	for (int d = 0; d < ZN_DROP_MAX; d++)
		r->drops += sum.drops[d];
	r->ibytes = hw.ibytes;
	r->obytes = hw.obytes;
	r->imissed = hw.imissed;
	r->ierrors = hw.ierrors;
	r->oerrors = hw.oerrors;
}

json_t *
zn_stats_ports(struct zn_mgr *m)
{
	json_t *a = json_array();

	for (unsigned int i = 0; i < m->n_ports; i++)
		json_array_append_new(a, port_json(m, i));
	return a;
}

static json_t *
chain_json(struct zn_mgr *m)
{
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];

	return zn_cmd_steps_json(steps, zn_chain_get(m, steps));
}

json_t *
zn_stats_status(struct zn_mgr *m)
{
	unsigned int size = m->pool->size;
	unsigned int avail = rte_mempool_avail_count(m->pool);
	const struct zn_shm_mgr *g = &m->shm->mgr;
	uint64_t bad, resets, steer_refused;

	zn_registry_msg_stats(m, &bad, &resets, &steer_refused);
	return json_pack("{s:s, s:i, s:s, s:s, s:I, s:b, s:b, s:i, s:i, s:i, "
			 "s:o, s:s, s:s, s:i, s:b, s:b, s:{s:i, s:i, s:i, s:i}, "
			 "s:{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			 "s:I, s:I, s:I}, s:{s:I, s:I}}",
			 "instance", m->cfg.instance, "pid", (int)m->inst.pid,
			 "build", zn_build_id, "dpdk", rte_version(),
			 "uptime_ms",
			 (json_int_t)((zn_now_ns() - m->inst.start_ns) / 1000000),
			 "ready", g->ready != 0, "stopping", g->stopping != 0,
			 "workers", (int)m->dp.n_workers, "ports", m->n_ports,
			 "nfs", (int)zn_registry_active(m), "chain",
			 chain_json(m), "ingress",
			 m->cfg.ingress == ZN_INGRESS_DROP ? "drop" :
							     "backpressure",
			 "handoff", m->cfg.handoff == ZN_HANDOFF_WORKER ?
					    "worker" : "direct",
			 "links", (int)zn_link_count(m),
			 "rx_enabled", m->dp.rx_enabled != 0,
			 "rx_waiting", m->dp.rx_waiting, "pool", "size", (int)size, "available", (int)avail,
			 "in_use", (int)(size - avail), "nf_quota",
			 (int)zn_pool_acct_quota(m, 0), "registry",
			 "registered", (json_int_t)g->nf_registered,
			 "rejected", (json_int_t)g->nf_rejected, "exited",
			 (json_int_t)g->nf_exited, "died",
			 (json_int_t)g->nf_died, "reclaimed",
			 (json_int_t)g->reclaimed, "allocs_returned",
			 (json_int_t)g->allocs_reclaimed, "pool_ops_finished",
			 (json_int_t)g->pool_ops_finished, "objs_freed",
			 (json_int_t)g->objs_freed, "port_scans_refused",
			 (json_int_t)zn_ports_scans_refused(), "bad_messages",
			 (json_int_t)bad, "message_ring_resets",
			 (json_int_t)resets, "steer_refused",
			 (json_int_t)steer_refused, "control",
			 "requests",
			 (json_int_t)m->ctl_requests, "errors",
			 (json_int_t)m->ctl_errors);
}

static json_t *
workers_json(struct zn_mgr *m, uint64_t *drops)
{
	json_t *a = json_array();

	for (unsigned int w = 0; w < m->dp.n_workers; w++) {
		const struct zn_worker_shm *ws = &m->shm->workers[w];

		for (int r = 0; r < ZN_DROP_MAX; r++)
			drops[r] += ws->stats.drops[r];
		json_array_append_new(a, json_pack(
			"{s:i, s:b, s:b, s:b, s:I, s:I, s:I, s:I, s:I, s:I, s:I,"
			" s:I, s:I, s:I, s:I}",
			"worker", (int)w, "rx", m->dp.workers[w]->rx_role, "tx",
			m->dp.workers[w]->tx_role, "online", ws->stats.online != 0,
			"loops", (json_int_t)ws->stats.loops, "busy_loops",
			(json_int_t)ws->stats.busy_loops, "routed",
			(json_int_t)ws->stats.routed, "stalls",
			(json_int_t)ws->stats.stalls, "sleeps",
			(json_int_t)ws->db.sleeps, "wakeups",
			(json_int_t)ws->db.wakeups, "fdir_exact",
			(json_int_t)ws->stats.fdir_exact, "fdir_rule",
			(json_int_t)ws->stats.fdir_rule, "fdir_miss",
			(json_int_t)ws->stats.fdir_miss, "lb_moved",
			(json_int_t)ws->stats.lb_moved, "long_yields",
			(json_int_t)ws->stats.long_yields));
	}
	return a;
}

static json_t *stats_fdir(struct zn_mgr *m);

json_t *
zn_stats_all(struct zn_mgr *m)
{
	uint64_t drops[ZN_DROP_MAX] = { 0 };
	json_t *workers = workers_json(m, drops);

	for (int r = 0; r < ZN_DROP_MAX; r++)
		drops[r] += m->shm->mgr.drops[r];
	/* Drops NFs decided (stalled hand-offs); folded into mgr.drops when
	 * their slot is freed. */
	for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
		if (zn_nf_state(m, s) != ZN_NF_FREE)
			for (int r = 0; r < ZN_DROP_MAX; r++)
				drops[r] += zn_slot(m, s)->hstats.drops[r];
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o}", "status",
			 zn_stats_status(m), "ports", zn_stats_ports(m), "nfs",
			 zn_stats_nfs(m), "services", zn_stats_services(m),
			 "workers", workers, "drops", drops_json(drops),
			 "fdir", stats_fdir(m));
}

static json_t *
stats_fdir(struct zn_mgr *m)
{
	struct zn_fdir_counts c;
	uint64_t hit[3] = { 0, 0, 0 };

	zn_fdir_counts(m, &c);
	for (unsigned int w = 0; w < m->dp.n_workers; w++) {
		hit[0] += m->shm->workers[w].stats.fdir_exact;
		hit[1] += m->shm->workers[w].stats.fdir_rule;
		hit[2] += m->shm->workers[w].stats.fdir_miss;
	}
	return json_pack("{s:i, s:i, s:I, s:I, s:i, s:i, s:I, s:I, s:I,"
			 " s:i, s:i, s:i, s:I, s:I}",
			 "flows", (int)c.flows, "flow_capacity",
			 (int)c.capacity, "flows_added",
			 (json_int_t)c.flows_added, "flows_expired",
			 (json_int_t)c.flows_expired, "rules", (int)c.rules,
			 "chains", (int)c.chains, "exact_hits",
			 (json_int_t)hit[0], "rule_hits", (json_int_t)hit[1],
			 "misses", (json_int_t)hit[2], "nf_flow_quota",
			 (int)c.nf_quota, "tenant_flow_quota",
			 (int)c.tenant_quota, "flows_kept_by_nfs", (int)c.kept,
			 "flows_of_gone_nfs", (json_int_t)c.flows_of_gone_nfs,
			 "flows_over_quota", (json_int_t)c.over_quota);
}

/* ------------------------------------------------------------------ */
/* The periodic log and the commands                                   */

static void
log_stats(void *arg)
{
	json_t *st = zn_stats_all(arg);
	char *s = st ? json_dumps(st, JSON_COMPACT) : NULL;

	if (s != NULL)
		ZN_LOG(NOTICE, "stats %s", s);
	free(s);
	json_decref(st);
}

/* Register the periodic log with the loop. 0 or -errno. */
static int
zn_stats_init(struct zn_mgr *m)
{
	if (m->cfg.stats_interval_s == 0)
		return 0;
	return zn_loop_every(m->loop, m->cfg.stats_interval_s * 1000,
			     log_stats, m);
}

static int
cmd_status(struct zn_cmd_req *req)
{
	req->result = zn_stats_status(req->mgr);
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_port_list(struct zn_cmd_req *req)
{
	req->result = json_pack("{s:o}", "ports", zn_stats_ports(req->mgr));
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_nf_list(struct zn_cmd_req *req)
{
	json_t *nfs = zn_stats_nfs(req->mgr), *nf;
	size_t i = 0;

	/* A tenant's control socket: its NFs only, by its names for them. */
	while (req->tenant != 0 && i < json_array_size(nfs)) {
		nf = json_array_get(nfs, i);
		if (zn_tenant_of_nf(req->mgr, (unsigned int)json_integer_value(
				json_object_get(nf, "instance"))) ==
		    req->tenant) {
			json_object_set_new(nf, "name", json_string(
				zn_tenant_shown_name(req->mgr, req->tenant,
				json_string_value(json_object_get(nf,
								  "name")))));
			i++;
		} else {
			json_array_remove(nfs, i);
		}
	}
	req->result = json_pack("{s:o}", "nfs", nfs);
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_service_list(struct zn_cmd_req *req)
{
	req->result = json_pack("{s:o}", "services",
				zn_stats_services(req->mgr));
	return req->result ? 0 : -ENOMEM;
}

static int
cmd_stats(struct zn_cmd_req *req)
{
	req->result = zn_stats_all(req->mgr);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd status_cmd = {
	.name = "status", .help = "instance summary",
	.result = "{\"instance\": \"name\", \"pid\": \"manager pid\", "
		  "\"build\": \"git describe\", \"dpdk\": \"version\", "
		  "\"uptime_ms\": \"since start\", \"ready\": \"serving\", "
		  "\"stopping\": \"shutting down\", \"workers\": \"data-path "
		  "threads\", \"ports\": \"port count\", \"nfs\": \"NFs not "
		  "yet reclaimed\", \"chain\": \"the default chain\", "
		  "\"ingress\": \"backpressure or drop\", \"handoff\": "
		  "\"direct or worker (--handoff)\", \"links\": \"NF -> NF "
		  "links in use\", \"rx_enabled\": "
		  "\"ports are read\", \"rx_waiting\": \"--rx-when-ready, "
		  "not yet enabled\", \"pool\": \"{size, available, "
		  "in_use, nf_quota}\", \"registry\": \"{registered, "
		  "rejected, exited, died, reclaimed, allocs_returned, "
		  "pool_ops_finished, "
		  "objs_freed, port_scans_refused, bad_messages, "
		  "message_ring_resets, steer_refused}\", "
		  "\"control\": \"{requests, errors}\"}",
	.doc = "`pool.nf_quota`: buffers of the shared pool one NF of no "
	       "group may allocate and keep (--nf-pool-quota; 0: no bound; "
	       "an NF of a trust group: a quarter of its group's pool by "
	       "default). "
	       "`registry.reclaimed`: buffers recovered from dead NFs; "
	       "`allocs_returned`: of those, buffers they had allocated and "
	       "kept; `pool_ops_finished`: operations on their pool's free "
	       "ring NFs died in, finished by the manager (the range they "
	       "had claimed written and committed, their cache's length "
	       "set as they would have); `bad_messages`: NF messages of no known slot or type "
	       "(dropped); `message_ring_resets`: times the NFs' message "
	       "ring's header was found written by an NF and reset; "
	       "`steer_refused`: NFs' flow-rule requests refused over "
	       "--nf-steer-rate (EBUSY); "
	       "`objs_freed`: DPDK objects NFs left behind, freed by the "
	       "manager; `port_scans_refused`: device scans of secondary "
	       "processes answered with no device (the ports are the "
	       "manager's own).",
	.fn = cmd_status,
};
ZN_CMD_REGISTER(status_cmd)

static const struct zn_cmd port_list_cmd = {
	.name = "port.list", .help = "ports with their counters",
	.result = "{\"ports\": \"[port]\"}",
	.doc = "Each port: id, `name` (`--port-name`, the deployment file's; "
	       "else the device's), `device` (DPDK's name), devargs, "
	       "driver, MAC, link, queues, RSS; "
	       "`rx`, `tx` (by the workers and by NFs), `rx_paused`, "
	       "`tx_retry`, `drops` by reason (of packets from this port "
	       "before an NF; `stalled` also for a port that took nothing "
	       "for --stall-ms); `nf_tx`: TX queues for NFs that transmit "
	       "themselves `{queues, first_queue, why_not, tx, tx_at_exit, "
	       "nfs: [{instance, name, queue, attached, tx}]}` (`why_not`: "
	       "null, or why the port has none; `tx_at_exit`: of `tx`, "
	       "packets the port took in the call an NF was killed in: a "
	       "driver that frees before it counts may have missed them in "
	       "`hw`); `nf_rx`: RX queues NFs poll themselves "
	       "(--nf-rx-queues) `{queues, why_not, workers_now, rx, owners: "
	       "[{queue, polled_by, instance, name, rx}]}` (`why_not`: null, "
	       "or why the port has none; `workers_now`: null, or why the "
	       "workers poll them now; `polled_by`: nf, workers, or nobody "
	       "while a queue changes hands; `rx`: of the port's `rx`, what "
	       "NFs took; what overflowed such a queue is the driver's "
	       "`imissed`/`rx_nombuf` in `hw`); `hw`: the device's counters "
	       "(`ipackets`, `opackets`, `imissed`, `rx_nombuf`, ...; "
	       "a net_af_packet port's `imissed` has the kernel's drops at "
	       "its full socket rings, which its driver does not count); "
	       "`trust_group`: the group whose pool it receives into "
	       "(`--port-group`), or null.",
	.fn = cmd_port_list,
};
ZN_CMD_REGISTER(port_list_cmd)

static const struct zn_cmd nf_list_cmd = {
	.name = "nf.list", .help = "NF instances with their counters",
	.flags = ZN_CMD_F_TENANT, /* its NFs only */
	.result = "{\"nfs\": \"[nf]\"}",
	.doc = "Each NF: instance, service, name, pid, state (`starting`: "
	       "registered, its init runs, not yet sent packets; `running`; "
	       "`stopping`; `reclaiming`), worker, `rx`, `tx`, `bursts`, "
	       "`actions` {next, drop, to_service, out}, `tx_full_waits`, "
	       "`long_yields` (yields that lasted a time slice: another thread "
	       "kept the core; enough of them and the NF waits on its doorbell "
	       "for a while instead), "
	       "`created`, `dequeued`, `drops` by reason, `exit_drops`, "
	       "`staged`, `rx_ring`/`tx_ring` `{count, size}`, `input_fill` "
	       "(0..1: the fullest of its RX ring and the links into it, "
	       "what autoscaling reads), `sleeps`, "
	       "`wakeups`, `pool_held` (buffers of its pool the NF "
	       "allocated and keeps: not freed, not sent), `pool_refused` "
	       "(allocations refused at --nf-pool-quota), "
	       "NF-defined `counters`, `commands` the NF serves "
	       "(for `nf.call`), `trust_group` (its name, or null); "
	       "`handoff`: `link_tx`/`link_rx` (packets "
	       "handed to / taken from other NFs directly), `port_tx` "
	       "(transmitted on its own TX queues) and `ports` (those it "
	       "attached), `to_worker` (put on its TX ring), `links_out`, "
	       "`links_in`, `blocked`, `loops_broken`.",
	.fn = cmd_nf_list,
};
ZN_CMD_REGISTER(nf_list_cmd)

static const struct zn_cmd service_list_cmd = {
	.name = "service.list",
	.help = "services and their running instances",
	.result = "{\"services\": \"[{service, instances, lb, buckets, "
		  "moved_buckets, moved_flows, pinned}]\"}",
	.doc = "`buckets`: `{instance: buckets of 256}`.",
	.fn = cmd_service_list,
};
ZN_CMD_REGISTER(service_list_cmd)

static const struct zn_cmd stats_cmd = {
	.name = "stats",
	.help = "everything: status, ports, NFs, workers, drops",
	.result = "{\"status\": \"as status\", \"ports\": \"[port]\", "
		  "\"nfs\": \"[nf]\", \"services\": \"[service]\", "
		  "\"workers\": \"[worker]\", \"drops\": \"{reason: count}\", "
		  "\"fdir\": \"flow director counts\"}",
	.doc = "`drops` totals every reason over all sources; `fdir`: "
	       "`{flows, flow_capacity, flows_added, flows_expired, "
	       "nf_flow_quota, tenant_flow_quota, flows_kept_by_nfs, "
	       "flows_of_gone_nfs (removed with the NF that added them), "
	       "flows_over_quota (refused), rules, "
	       "chains, exact_hits, rule_hits, misses}`.",
	.fn = cmd_stats,
};
ZN_CMD_REGISTER(stats_cmd)

static const struct zn_subsys subsys = {
	.name = "stats_log", .order = ZN_SUBSYS_STATS,
	.init = zn_stats_init,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static const struct zn_opt stats_opt[] = {
	{ "stats-interval", 0, "S", "log a stats line every S seconds (0 = "
	  "off)", ZN_OPT_UINT, ZN_CFG(stats_interval_s),
	  0, 86400, NULL },
};

static const struct zn_opts stats_opts = {
	.order = ZN_SUBSYS_STATS, .opt = stats_opt, .n = RTE_DIM(stats_opt),
};
ZN_OPTIONS_REGISTER(stats_opts)
