/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Chains across hosts, the control side (fabric.h): this host's fabric
 * port, id and address (fabric.set), its peers (fabric.peer.set,
 * fabric.peer.del), what they counted (fabric.show), and the view the
 * workers read, republished on every change. Twice a second it looks at
 * what the workers heard from each peer (answers to their ARP probes,
 * tunnel packets): a peer not heard for ZN_FABRIC_DEAD_MS is down (its
 * hops' packets drop as peer_down) until it is heard again; a peer
 * configured without a MAC address takes the one its answers give.
 * Long: the state, the view made of it, the tick that keeps it current
 * and the four commands that change and show it are one concern (their
 * parameter tables are most of the length).
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "fabric.h"
#include "../core/cmd.h"
#include "../core/event.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../core/subsys.h"
#include "../flow/route.h"
#include "../../lib/common/zn_util.h"

#define NAME_LEN 32

struct fabric_peer {
	bool set;
	bool down;                   /* the operator's word */
	bool nsh;
	enum zn_nsh_encap encap;
	uint32_t ip;                 /* network order; 0: none (Ethernet) */
	struct rte_ether_addr mac;   /* configured, else learned; 0: none */
	bool mac_learned;            /* from its ARP answers */
	uint32_t vni;
	uint16_t mtu;
	char name[NAME_LEN];
	/* liveness (tick): heard within ZN_FABRIC_DEAD_MS, or configured
	 * less long ago than that */
	bool alive;
	uint64_t since;              /* tsc: configured */
	uint64_t heard;              /* tsc: last heard, by any worker */
};

struct zn_fabric {
	bool on;
	uint16_t port;
	uint8_t host;
	uint32_t ip;
	struct rte_ether_addr mac;
	struct fabric_peer peer[ZN_FABRIC_HOSTS];
	struct zn_fabric_wstats *wst; /* [n_workers], for good */
	unsigned int n_workers;
	struct zn_fabric_view *view;  /* the published one, NULL: none */
};

static const char *const encap_names[] = {
	[ZN_NSH_VXLAN_GPE] = "vxlan-gpe", [ZN_NSH_VXLAN] = "vxlan",
	[ZN_NSH_ETHERNET] = "ethernet",
};

/* The outer headers of a packet to @p p: tunnel and NSH with ZeroNF's
 * MD type 2 header (fabric_hot.c writes exactly these). */
static uint16_t
outer_len(const struct fabric_peer *p)
{
	if (!p->nsh)
		return ZN_VXLAN_LEN;
	return (uint16_t)(zn_nsh_outer_len(p->encap) + ZN_NSH_BASE_LEN + 4 +
			  ZN_NSH_TLV_FLOW_LEN);
}

/* Is @p p probed by ARP (and so watched, its MAC address learned)? It
 * needs an IPv4 address to ask for: not an Ethernet peer. */
static bool
probed(const struct fabric_peer *p)
{
	return p->ip != 0 && p->encap != ZN_NSH_ETHERNET;
}

/* Do @p p's hops' packets go: not marked down, heard lately, its MAC
 * address known? */
static bool
peer_up(const struct fabric_peer *p)
{
	return !p->down && p->alive && !rte_is_zero_ether_addr(&p->mac);
}

static void
fabric_fill(struct zn_mgr *m, struct zn_route *rt)
{
	rt->fabric = m->fabric != NULL ? m->fabric->view : NULL;
}

/* A new view from the configuration, published; the old one freed once
 * no worker reads it (zn_route_publish syncs). */
static int
view_publish(struct zn_mgr *m)
{
	struct zn_fabric *f = m->fabric;
	struct zn_fabric_view *v = NULL, *old = f->view;

	if (f->on) {
		v = calloc(1, sizeof(*v));
		if (v == NULL)
			return -ENOMEM;
		v->port = f->port;
		v->host = f->host;
		v->ip = f->ip;
		v->mac = f->mac;
		v->wst = f->wst;
		v->probe_cycles = rte_get_tsc_hz() * ZN_FABRIC_PROBE_MS / 1000;
		for (unsigned int h = 1; h < ZN_FABRIC_HOSTS; h++) {
			const struct fabric_peer *p = &f->peer[h];
			struct zn_fabric_peer *q = &v->peer[h];

			if (!p->set)
				continue;
			v->peers[v->n_peers++] = (uint8_t)h;
			q->probe = probed(p);
			q->up = peer_up(p);
			q->nsh = p->nsh;
			q->mtu = p->mtu;
			q->outer = outer_len(p);
			q->t.encap = p->encap;
			memcpy(q->t.src_mac, &f->mac, 6);
			memcpy(q->t.dst_mac, &p->mac, 6);
			q->t.src_ip = f->ip;
			q->t.dst_ip = p->ip;
			q->t.vni = p->vni;
		}
	}
	f->view = v;
	zn_route_publish(m); /* syncs: no worker reads `old` after */
	free(old);
	return 0;
}

int
zn_fabric_step_check(const struct zn_mgr *m, const struct zn_step *step,
		     bool last, char *err, size_t errlen)
{
	const struct zn_fabric *f = m->fabric;
	const struct fabric_peer *p;

	if (step->host == 0)
		return 0;
	if (f == NULL || !f->on) {
		snprintf(err, errlen, "host %u: this host is on no fabric "
			 "(fabric.set)", step->host);
		return -EINVAL;
	}
	if (step->host == f->host) {
		snprintf(err, errlen, "host %u is this host: write the hop "
			 "without @%u", step->host, step->host);
		return -EINVAL;
	}
	p = &f->peer[step->host];
	if (!p->set) {
		snprintf(err, errlen, "host %u is no peer (fabric.peer.set)",
			 step->host);
		return -EINVAL;
	}
	if (!p->nsh && (!last || step->type != ZN_STEP_PORT || step->id != 0)) {
		snprintf(err, errlen, "host %u is a plain VXLAN end point: "
			 "only a chain's last hop, \"port:0@%u\", goes there",
			 step->host, step->host);
		return -EINVAL;
	}
	return 0;
}

/* ---- liveness ---- */

static void
fabric_tick(void *arg)
{
	struct zn_mgr *m = arg;
	struct zn_fabric *f = m->fabric;
	uint64_t now = rte_get_tsc_cycles();
	uint64_t dead = rte_get_tsc_hz() * ZN_FABRIC_DEAD_MS / 1000;
	bool changed = false;

	if (!f->on)
		return;
	for (unsigned int h = 1; h < ZN_FABRIC_HOSTS; h++) {
		struct fabric_peer *p = &f->peer[h];
		uint64_t heard = 0, mac = 0;
		bool alive;

		if (!p->set || !probed(p))
			continue;
		for (unsigned int w = 0; w < f->n_workers; w++) {
			const struct zn_fabric_pstats *s = &f->wst[w].peer[h];
			uint64_t t = __atomic_load_n(&s->seen,
						     __ATOMIC_RELAXED);
			uint64_t a = __atomic_load_n(&s->mac, __ATOMIC_RELAXED);

			if (t > heard) {
				heard = t;
				mac = a != 0 ? a : mac;
			}
		}
		if (heard > p->heard)
			p->heard = heard;
		if (mac != 0 && (rte_is_zero_ether_addr(&p->mac) ||
				 p->mac_learned) &&
		    memcmp(&mac, &p->mac, 6) != 0) {
			memcpy(&p->mac, &mac, 6);
			p->mac_learned = true;
			changed = true;
		}
		alive = now - RTE_MAX(p->heard, p->since) < dead;
		if (alive != p->alive) {
			p->alive = alive;
			changed = true;
			zn_event(alive ? "fabric.peer_up" : "fabric.peer_down",
				 "host %u (%s): %s", h, p->name,
				 alive ? "heard again" :
				 "not heard for " RTE_STR(ZN_FABRIC_DEAD_MS)
				 " ms");
		}
	}
	if (changed)
		view_publish(m);
}

/* ---- commands ---- */

static int
parse_ip(json_t *j, const char *name, uint32_t *ip, char *err, size_t len)
{
	const char *s = json_string_value(j);

	if (s == NULL || inet_pton(AF_INET, s, ip) != 1 || *ip == 0) {
		snprintf(err, len, "%s: an IPv4 address", name);
		return -EINVAL;
	}
	return 0;
}

static int
cmd_fabric_set(struct zn_cmd_req *req)
{
	struct zn_mgr *m = req->mgr;
	struct zn_fabric *f = m->fabric;
	json_t *prm = req->params;
	unsigned int port, host;
	struct rte_ether_addr mac;
	uint32_t ip;
	int rc;

	if (json_is_true(json_object_get(prm, "off"))) {
		f->on = false;
		return view_publish(m);
	}
	if (json_object_get(prm, "port") == NULL ||
	    json_object_get(prm, "host") == NULL ||
	    json_object_get(prm, "ip") == NULL) {
		snprintf(req->err, sizeof(req->err), "port, host and ip (or "
			 "off)");
		return -EINVAL;
	}
	port = (unsigned int)json_integer_value(json_object_get(prm, "port"));
	host = (unsigned int)json_integer_value(json_object_get(prm, "host"));
	rc = parse_ip(json_object_get(prm, "ip"), "ip", &ip, req->err,
		      sizeof(req->err));
	if (rc < 0)
		return rc;
	if (port >= m->n_ports) {
		snprintf(req->err, sizeof(req->err), "port %u: the manager "
			 "has %u ports", port, m->n_ports);
		return -EINVAL;
	}
	if (f->peer[host].set) {
		snprintf(req->err, sizeof(req->err), "host %u is a peer "
			 "(fabric.peer.del it first)", host);
		return -EEXIST;
	}
	rc = rte_eth_macaddr_get(m->ports[port].port_id, &mac);
	if (rc < 0) {
		snprintf(req->err, sizeof(req->err), "port %u: no MAC "
			 "address (%s)", port, strerror(-rc));
		return rc;
	}
	f->port = (uint16_t)port;
	f->host = (uint8_t)host;
	f->ip = ip;
	f->mac = mac;
	f->on = true;
	return view_publish(m);
}

static int
cmd_peer_set(struct zn_cmd_req *req)
{
	struct zn_fabric *f = req->mgr->fabric;
	json_t *prm = req->params, *j;
	unsigned int host = (unsigned int)json_integer_value(
		json_object_get(prm, "host"));
	const char *encap = json_string_value(json_object_get(prm, "encap"));
	struct fabric_peer p = { .set = true, .nsh = true,
				 .encap = ZN_NSH_VXLAN_GPE,
				 .mtu = ZN_FABRIC_MTU_DEFAULT };
	int rc;

	if (f->on && host == f->host) {
		snprintf(req->err, sizeof(req->err), "host %u is this host",
			 host);
		return -EINVAL;
	}
	for (unsigned int e = 1; encap != NULL && e < RTE_DIM(encap_names);
	     e++)
		if (strcmp(encap, encap_names[e]) == 0)
			p.encap = (enum zn_nsh_encap)e;
	if ((j = json_object_get(prm, "nsh")) != NULL)
		p.nsh = json_is_true(j);
	p.down = json_is_true(json_object_get(prm, "down"));
	if (!p.nsh && p.encap != ZN_NSH_VXLAN) {
		snprintf(req->err, sizeof(req->err), "a peer without NSH is "
			 "a plain VXLAN end point: encap vxlan");
		return -EINVAL;
	}
	if (p.encap != ZN_NSH_ETHERNET || json_object_get(prm, "ip")) {
		rc = parse_ip(json_object_get(prm, "ip"), "ip", &p.ip,
			      req->err, sizeof(req->err));
		if (rc < 0)
			return rc;
	}
	if (json_object_get(prm, "mac") != NULL &&
	    (rte_ether_unformat_addr(json_string_value(json_object_get(
		prm, "mac")) ?: "", &p.mac) < 0 ||
	     !rte_is_unicast_ether_addr(&p.mac))) {
		snprintf(req->err, sizeof(req->err), "mac: the peer's fabric "
			 "port's unicast address, aa:bb:cc:dd:ee:ff");
		return -EINVAL;
	}
	if (rte_is_zero_ether_addr(&p.mac) && !probed(&p)) {
		snprintf(req->err, sizeof(req->err), "mac: needed for an "
			 "Ethernet peer (no IPv4 address to find it by)");
		return -EINVAL;
	}
	if ((j = json_object_get(prm, "vni")) != NULL)
		p.vni = (uint32_t)json_integer_value(j);
	if ((j = json_object_get(prm, "mtu")) != NULL)
		p.mtu = (uint16_t)json_integer_value(j);
	if (outer_len(&p) - RTE_ETHER_HDR_LEN + RTE_ETHER_MIN_LEN > p.mtu) {
		snprintf(req->err, sizeof(req->err), "mtu %u: less than the "
			 "encapsulation (%u bytes) and a minimal frame", p.mtu,
			 outer_len(&p) - RTE_ETHER_HDR_LEN);
		return -EINVAL;
	}
	snprintf(p.name, sizeof(p.name), "%s",
		 json_string_value(json_object_get(prm, "name")) ?: "");
	p.alive = true; /* until not heard for ZN_FABRIC_DEAD_MS */
	p.since = rte_get_tsc_cycles();
	f->peer[host] = p;
	return view_publish(req->mgr);
}

static int
cmd_peer_del(struct zn_cmd_req *req)
{
	struct zn_fabric *f = req->mgr->fabric;
	unsigned int host = (unsigned int)json_integer_value(
		json_object_get(req->params, "host"));

	if (!f->peer[host].set) {
		snprintf(req->err, sizeof(req->err), "no peer %u", host);
		return -ENOENT;
	}
	memset(&f->peer[host], 0, sizeof(f->peer[host]));
	return view_publish(req->mgr);
}

static json_t *
ip_json(uint32_t ip)
{
	char buf[INET_ADDRSTRLEN];

	return ip != 0 && inet_ntop(AF_INET, &ip, buf, sizeof(buf)) ?
	       json_string(buf) : json_null();
}

static json_t *
mac_json(const struct rte_ether_addr *a)
{
	char buf[RTE_ETHER_ADDR_FMT_SIZE];

	rte_ether_format_addr(buf, sizeof(buf), a);
	return json_string(buf);
}

static int
cmd_fabric_show(struct zn_cmd_req *req)
{
	struct zn_fabric *f = req->mgr->fabric;
	json_t *peers = json_array(), *in;
	struct zn_fabric_wstats sum = { 0 };

	for (unsigned int w = 0; w < f->n_workers; w++) {
		const struct zn_fabric_wstats *s = &f->wst[w];

		sum.malformed += s->malformed;
		sum.no_path += s->no_path;
		sum.stranger += s->stranger;
		sum.ttl += s->ttl;
		sum.arp += s->arp;
		sum.probes += s->probes;
		sum.answers += s->answers;
		for (unsigned int h = 1; h < ZN_FABRIC_HOSTS; h++) {
			const struct zn_fabric_pstats *a = &s->peer[h];
			struct zn_fabric_pstats *b = &sum.peer[h];

			b->tx += a->tx;
			b->tx_bytes += a->tx_bytes;
			b->rx += a->rx;
			b->rx_bytes += a->rx_bytes;
			b->mtu_drops += a->mtu_drops;
			b->down_drops += a->down_drops;
		}
	}
	for (unsigned int h = 1; h < ZN_FABRIC_HOSTS; h++) {
		const struct fabric_peer *p = &f->peer[h];
		const struct zn_fabric_pstats *s = &sum.peer[h];

		if (!p->set)
			continue;
		json_array_append_new(peers, json_pack(
			"{s:i, s:s, s:o, s:o, s:b, s:s, s:b, s:i, s:i, s:b, "
			"s:b, s:b, s:I, s:I, s:I, s:I, s:{s:I, s:I}}",
			"host", h, "name", p->name, "ip", ip_json(p->ip),
			"mac", rte_is_zero_ether_addr(&p->mac) ? json_null() :
			mac_json(&p->mac), "mac_learned", p->mac_learned,
			"encap", encap_names[p->encap], "nsh", p->nsh, "vni",
			p->vni, "mtu", p->mtu, "up", peer_up(p), "down",
			p->down,
			"alive", p->alive, "tx", s->tx,
			"tx_bytes", s->tx_bytes, "rx", s->rx, "rx_bytes",
			s->rx_bytes, "drops", "nsh_mtu", s->mtu_drops,
			"peer_down", s->down_drops));
	}
	in = json_pack("{s:I, s:I, s:I, s:I, s:I}", "nsh_malformed",
		       sum.malformed, "nsh_no_path", sum.no_path,
		       "nsh_stranger", sum.stranger, "nsh_ttl", sum.ttl,
		       "arp_answered", sum.arp);
	req->result = json_pack(
		"{s:I, s:I, s:o, s:o, s:o}", "probes_sent", sum.probes,
		"arp_answers_taken", sum.answers, "fabric",
		f->on ?
		json_pack("{s:i, s:i, s:o, s:o}", "port", f->port, "host",
			  f->host, "ip", ip_json(f->ip), "mac",
			  mac_json(&f->mac)) : json_null(),
		"peers", peers, "ingress", in);
	return 0;
}

static const struct zn_cmd fabric_set_cmd = {
	.name = "fabric.set",
	.help = "put this host on a fabric: its port, host id and address "
		"(or take it off)",
	.params = {
		{ .name = "port", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = ZN_MAX_PORTS - 1,
		  .desc = "the fabric port: tunnels leave and arrive there" },
		{ .name = "host", .type = ZN_CMD_INT, .bounded = true,
		  .min = 1, .max = ZN_STEP_MAX_HOST,
		  .desc = "this host's id, the same in every host's chains "
			  "(\"svc:S@HOST\")" },
		{ .name = "ip", .type = ZN_CMD_STR,
		  .desc = "this host's IPv4 address on the fabric (the "
			  "tunnels' outer source; ARP for it is answered)" },
		{ .name = "off", .type = ZN_CMD_BOOL,
		  .desc = "true: no fabric (hops elsewhere drop as "
			  "peer_down; peers are kept)" },
	},
	.result = "{}",
	.fn = cmd_fabric_set,
};
ZN_CMD_REGISTER(fabric_set_cmd)

static const char *const encap_choices[] = { "vxlan-gpe", "vxlan",
					      "ethernet", NULL };

static const struct zn_cmd peer_set_cmd = {
	.name = "fabric.peer.set",
	.help = "add or replace a peer: another host of the fabric",
	.params = {
		{ .name = "host", .type = ZN_CMD_INT, .required = true,
		  .bounded = true, .min = 1, .max = ZN_STEP_MAX_HOST,
		  .desc = "its host id" },
		{ .name = "ip", .type = ZN_CMD_STR,
		  .desc = "its fabric IPv4 address (not with encap ethernet)" },
		{ .name = "mac", .type = ZN_CMD_STR,
		  .desc = "its fabric port's MAC address (or the next "
			  "router's); by default learned from its answers to "
			  "ARP (needed for encap ethernet)" },
		{ .name = "encap", .type = ZN_CMD_STR, .choices = encap_choices,
		  .desc = "vxlan-gpe (default; UDP 4790), vxlan (UDP 4789) "
			  "or ethernet (EtherType 0x894F)" },
		{ .name = "vni", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = 0xffffff, .desc = "VXLAN's VNI (0)" },
		{ .name = "mtu", .type = ZN_CMD_INT, .bounded = true,
		  .min = 68, .max = 65535,
		  .desc = "the fabric's IP MTU towards it (1500): a packet "
			  "too large once encapsulated drops as nsh_mtu" },
		{ .name = "nsh", .type = ZN_CMD_BOOL,
		  .desc = "false: a plain VXLAN end point (a kernel's vxlan "
			  "device): a chain's last hop \"port:0@HOST\" sends "
			  "its packets there without NSH" },
		{ .name = "down", .type = ZN_CMD_BOOL,
		  .desc = "true: its hops' packets drop as peer_down" },
		{ .name = "name", .type = ZN_CMD_STR,
		  .desc = "for people (fabric.show)" },
	},
	.result = "{}",
	.fn = cmd_peer_set,
};
ZN_CMD_REGISTER(peer_set_cmd)

static const struct zn_cmd peer_del_cmd = {
	.name = "fabric.peer.del",
	.help = "remove a peer (its hops' packets drop as peer_down)",
	.params = {
		{ .name = "host", .type = ZN_CMD_INT, .required = true,
		  .bounded = true, .min = 1, .max = ZN_STEP_MAX_HOST,
		  .desc = "its host id" },
	},
	.result = "{}",
	.fn = cmd_peer_del,
};
ZN_CMD_REGISTER(peer_del_cmd)

static const struct zn_cmd fabric_show_cmd = {
	.name = "fabric.show",
	.help = "this host's fabric, its peers and what each counted",
	.result = "{\"fabric\": \"{port, host, ip, mac} or null\", "
		  "\"peers\": \"[{host, name, ip, mac (null: not known yet), "
		  "mac_learned, encap, nsh, vni, mtu, up (its hops' packets "
		  "go), down (the operator's), alive (heard lately), tx, "
		  "tx_bytes, rx, rx_bytes, drops: {nsh_mtu, peer_down}}]\", "
		  "\"ingress\": \"{nsh_malformed, nsh_no_path, nsh_stranger, "
		  "nsh_ttl, arp_answered}\", \"probes_sent\": \"ARP "
		  "requests to peers: packets the manager made (sent out of "
		  "the fabric port, in its tx)\", \"arp_answers_taken\": "
		  "\"the peers' answers: in the fabric port's rx, taken by "
		  "the manager (no NF sees them)\"}",
	.fn = cmd_fabric_show,
};
ZN_CMD_REGISTER(fabric_show_cmd)

/* ---- start-up ---- */

static int
zn_fabric_init(struct zn_mgr *m)
{
	struct zn_fabric *f = calloc(1, sizeof(*f));

	if (f == NULL)
		return -ENOMEM;
	m->fabric = f;
	f->n_workers = m->dp.n_workers;
	/* private memory, as the view: no NF maps it */
	f->wst = aligned_alloc(RTE_CACHE_LINE_SIZE, RTE_MAX(f->n_workers, 1u) *
			       sizeof(*f->wst));
	if (f->wst == NULL) {
		ZN_LOG(ERR, "fabric counters: out of memory");
		return -ENOMEM;
	}
	memset(f->wst, 0, RTE_MAX(f->n_workers, 1u) * sizeof(*f->wst));
	if (m->loop != NULL &&
	    zn_loop_every(m->loop, ZN_FABRIC_PROBE_MS / 2, fabric_tick, m) < 0)
		return -ENOMEM;
	return zn_route_add_source(m, fabric_fill);
}

static void
zn_fabric_fini(struct zn_mgr *m)
{
	struct zn_fabric *f = m->fabric;

	if (f == NULL)
		return;
	free(f->view);
	free(f->wst);
	free(f);
	m->fabric = NULL;
}

static const struct zn_subsys subsys = {
	.name = "fabric", .order = ZN_SUBSYS_FABRIC,
	.init = zn_fabric_init, .fini = zn_fabric_fini,
};
ZN_SUBSYS_REGISTER(subsys)
