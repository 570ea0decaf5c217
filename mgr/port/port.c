/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Ports: any DPDK ethdev. The EAL probes them from the command line (vdev
 * devargs as --vdev, PCI addresses as -a, see main.c); here each --port is
 * found by name, in --port order (ZeroNF port i = i-th --port), and
 * configured with what the device supports: as many RX queues as RX
 * threads (RSS with a symmetric key when there are several), one TX queue
 * per worker or a shared, locked one.
 */

#include <ctype.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include <rte_ethdev.h>

#include "../core/cmd.h"
#include "../core/mgr.h"
#include "port.h"
#include "../core/subsys.h"
#include "../trust/port_headers.h"
#include "../../lib/common/zn_util.h"

#define NB_RXD 1024

/* Symmetric Toeplitz key: both directions of a flow hash alike. */
static uint8_t rss_key_sym[52] = {
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d,
	0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d,
	0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
	0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a, 0x6d, 0x5a,
};

static int
find_port(const char *devargs, uint16_t *port_id)
{
	char name[RTE_ETH_NAME_MAX_LEN];
	uint16_t pid;

	zn_strlcpy(name, devargs, sizeof(name));
	name[strcspn(name, ",")] = '\0';
	if (rte_eth_dev_get_port_by_name(name, port_id) == 0)
		return 0;
	/* PCI ports may be named differently from their address. */
	RTE_ETH_FOREACH_DEV(pid) {
		struct rte_eth_dev_info info;

		if (rte_eth_dev_info_get(pid, &info) == 0 &&
		    info.device != NULL &&
		    strcmp(rte_dev_name(info.device), name) == 0) {
			*port_id = pid;
			return 0;
		}
	}
	return -ENODEV;
}

static int
port_setup(struct zn_mgr *m, struct zn_port *p)
{
	struct rte_eth_conf conf = { 0 };
	struct rte_eth_dev_info info;
	uint16_t nb_rxd = NB_RXD, nb_txd = ZN_PORT_TXD, nb_nftxq;
	int socket = rte_eth_dev_socket_id(p->port_id);
	struct rte_mempool *rxpool;
	int rc;

	rc = rte_eth_dev_info_get(p->port_id, &info);
	if (rc < 0)
		return rc;
	zn_strlcpy(p->driver, info.driver_name ? info.driver_name : "?",
		   sizeof(p->driver));
	rte_eth_dev_get_name_by_port(p->port_id, p->name);
	if (socket < 0)
		socket = (int)rte_socket_id();

	p->nb_rxq = (uint16_t)RTE_MIN(m->cfg.rx_threads,
				      (unsigned int)info.max_rx_queues);
	p->nb_txq = (uint16_t)RTE_MIN(m->dp.n_workers,
				      (unsigned int)info.max_tx_queues);
	/* A port may be TX-only (net_pcap with only tx_pcap), never neither. */
	if (p->nb_txq == 0)
		return -ENOTSUP;
	/* NFs that poll RX queues themselves: how many queues (RSS below) */
	zn_port_nfrx_plan(m, p, &info);
	p->txq_shared = p->nb_txq < m->dp.n_workers;
	for (unsigned int i = 0; i < ZN_MAX_WORKERS; i++)
		rte_spinlock_init(&p->txq_lock[i]);

	if (p->nb_rxq > 1 && info.flow_type_rss_offloads != 0) {
		conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf.rx_adv_conf.rss_conf.rss_hf =
			(RTE_ETH_RSS_IP | RTE_ETH_RSS_TCP | RTE_ETH_RSS_UDP) &
			info.flow_type_rss_offloads;
		if (info.hash_key_size > 0 &&
		    info.hash_key_size <= sizeof(rss_key_sym)) {
			conf.rx_adv_conf.rss_conf.rss_key = rss_key_sym;
			conf.rx_adv_conf.rss_conf.rss_key_len =
				info.hash_key_size;
		}
		p->rss = true;
		if (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_RSS_HASH)
			conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_RSS_HASH;
	}
	nb_nftxq = (uint16_t)zn_port_nftx_plan(m, p, &info);
	if (info.tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS)
		conf.txmode.offloads |= RTE_ETH_TX_OFFLOAD_MULTI_SEGS;
	/* The driver registers the timestamp dynfield and flag; NFs look
	 * them up by name (net_pcap: the capture time, for the DPI NF). */
	if (m->cfg.rx_timestamp &&
	    (info.rx_offload_capa & RTE_ETH_RX_OFFLOAD_TIMESTAMP))
		conf.rxmode.offloads |= RTE_ETH_RX_OFFLOAD_TIMESTAMP;

	rc = rte_eth_dev_configure(p->port_id, p->nb_rxq,
				   (uint16_t)(p->nb_txq + nb_nftxq), &conf);
	if (rc < 0)
		return rc;
	rc = rte_eth_dev_adjust_nb_rx_tx_desc(p->port_id, &nb_rxd, &nb_txd);
	if (rc < 0)
		return rc;
	/* A port of a trust group fills the group's pool: its packets reach
	 * the group's NFs without a copy (mgr/trust/group.c), its PMD taking
	 * buffers through the manager's header of it (pool_header.c). */
	rxpool = p->group != NULL ? p->group->pool_mgr : m->pool;
	/* with --validate, through headers of the manager's (port_headers.h) */
	if (zn_port_headers_port(m, (uint16_t)(p - m->ports)))
		rxpool = p->group->port_headers->mp;
	for (uint16_t q = 0; q < p->nb_rxq; q++) {
		rc = rte_eth_rx_queue_setup(p->port_id, q, nb_rxd,
					    (unsigned int)socket, NULL, rxpool);
		if (rc < 0)
			return rc;
	}
	for (uint16_t q = 0; q < p->nb_txq + nb_nftxq; q++) {
		rc = rte_eth_tx_queue_setup(p->port_id, q, nb_txd,
					    (unsigned int)socket, NULL);
		if (rc < 0)
			return rc;
	}
	/* Not every vdev has promiscuous mode; that is fine. */
	rte_eth_promiscuous_enable(p->port_id);
	/* The RX queues are deliberately not flushed: a net_pcap port's
	 * first packets are already there. */
	rc = rte_eth_dev_start(p->port_id);
	if (rc < 0)
		return rc;
	p->started = true;
	zn_port_kdrops_find(p);
	return 0;
}

static int
ports_init(struct zn_mgr *m)
{
	for (unsigned int i = 0; i < m->cfg.n_devargs; i++) {
		struct zn_port *p = &m->ports[i];
		int rc;

		zn_strlcpy(p->devargs, m->cfg.devargs[i], sizeof(p->devargs));
		p->group = zn_group_by_id(m, m->cfg.port_group[i]);
		if (zn_port_ring_spec(p->devargs) &&
		    (rc = zn_port_ring_make(m, p->devargs)) < 0)
			return rc;
		rc = find_port(p->devargs, &p->port_id);
		if (rc < 0) {
			ZN_LOG(ERR, "port %u (%s): no such device was probed",
			       i, p->devargs);
			return rc;
		}
		m->n_ports = (uint16_t)(i + 1);
		rc = port_setup(m, p);
		if (rc < 0) {
			ZN_LOG(ERR, "port %u (%s): setup failed: %s", i,
			       p->devargs, strerror(-rc));
			return rc;
		}
		zn_port_nftx_publish(m, i);
		if (zn_port_ring_spec(p->devargs) &&
		    (rc = zn_port_ring_load(m, p, rss_key_sym)) < 0)
			return rc;
		ZN_LOG(INFO, "port %u: %s (%s), %u RX / %u TX queues%s%s, "
		       "%u TX queues for NFs, %u RX queues NFs may own", i,
		       p->name, p->driver, p->nb_rxq, p->nb_txq,
		       p->rss ? ", RSS" : "",
		       p->txq_shared ? ", shared TX queue" : "", p->nf_txq_n,
		       p->nf_rxq_n);
	}
	return 0;
}

void
zn_ports_close(struct zn_mgr *m)
{
	for (unsigned int i = 0; i < m->n_ports; i++) {
		struct zn_port *p = &m->ports[i];

		if (p->closed)
			continue;
		if (p->started) {
			rte_eth_dev_stop(p->port_id);
			p->started = false;
		}
		rte_eth_dev_close(p->port_id);
		p->closed = true;
	}
}

void
zn_ports_rx_set(struct zn_mgr *m, bool on)
{
	m->dp.rx_enabled = on;
	if (m->shm != NULL) { /* NFs owning RX queues (port_nfrx.c) */
		__atomic_store_n(&m->shm->mgr.port_rx, on ? 1u : 0u,
				 __ATOMIC_RELEASE);
		if (on)
			zn_port_nfrx_wake(m);
	}
}

/* Port RX for the whole instance: paused (--rx-paused, rx.set false)
 * ports are not polled; what they receive waits in (or overflows) their
 * RX rings, counted by the port. */
static int
cmd_rx_set(struct zn_cmd_req *req)
{
	bool on = json_is_true(json_object_get(req->params, "enabled"));

	zn_ports_rx_set(req->mgr, on);
	req->mgr->dp.rx_waiting = false; /* the operator decides now */
	ZN_LOG(NOTICE, "port RX %s", on ? "enabled" : "paused");
	req->result = json_pack("{s:b}", "enabled", on);
	return 0;
}

static const struct zn_cmd rx_set_cmd = {
	.name = "rx.set",
	.help = "enable or pause reading from all ports",
	.params = { { .name = "enabled", .type = ZN_CMD_BOOL,
		      .required = true } },
	.result = "{\"enabled\": \"true or false\"}",
	.doc = "Start a manager with `--rx-paused` (or `--rx-when-ready`) to "
	       "bring NFs up first.",
	.fn = cmd_rx_set,
};
ZN_CMD_REGISTER(rx_set_cmd)

/* The ports set up and started, each one's MAC in zn_shm's header. */
static int
ports_start(struct zn_mgr *m)
{
	int rc = ports_init(m);

	if (rc < 0)
		return rc;
	m->shm->hdr.n_ports = m->n_ports;
	for (uint16_t p = 0; p < m->n_ports; p++) {
		struct rte_ether_addr mac = { 0 };

		rte_eth_macaddr_get(m->ports[p].port_id, &mac);
		memcpy(m->shm->hdr.port_mac[p], mac.addr_bytes, 6);
	}
	return 0;
}

static const struct zn_subsys subsys = {
	.name = "ports", .order = ZN_SUBSYS_PORTS,
	.init = ports_start, .fini = zn_ports_close,
};
ZN_SUBSYS_REGISTER(subsys)

/* ---- Options ---- */

static int
opt_port(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (cfg->n_devargs >= ZN_MAX_PORT_ARGS ||
	    strlen(arg) >= ZN_DEVARGS_LEN || arg[0] == '\0') {
		fprintf(stderr, "%s: bad or too many --port\n", prog);
		return -EINVAL;
	}
	zn_strlcpy(cfg->devargs[cfg->n_devargs++], arg, ZN_DEVARGS_LEN);
	return 0;
}

static int
opt_port_name(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	return zn_opt_port_name(prog, "--port-name", arg, cfg->port_name);
}

static int
opt_ingress(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (strcmp(arg, "backpressure") == 0) {
		cfg->ingress = ZN_INGRESS_BACKPRESSURE;
	} else if (strcmp(arg, "drop") == 0) {
		cfg->ingress = ZN_INGRESS_DROP;
	} else {
		fprintf(stderr, "%s: --ingress is backpressure or drop\n",
			prog);
		return -EINVAL;
	}
	return 0;
}

static void
port_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->nf_tx_queues = 8;
}

/* A port's name: what a chain step "port:NAME" says (not a number). */
static bool
port_name_ok(const char *s)
{
	bool digits = true;

	for (const char *c = s; *c != '\0'; c++) {
		if (!isalnum((unsigned char)*c) && *c != '_' && *c != '-')
			return false;
		digits = digits && isdigit((unsigned char)*c);
	}
	return !digits;
}

/* Each port a device of its own; each name a port's, once. */
static int
port_check(const char *prog, struct zn_mgr_cfg *cfg)
{
	for (unsigned int i = 0; i < cfg->n_devargs; i++)
		for (unsigned int j = 0; j < i; j++) {
			size_t a = strcspn(cfg->devargs[i], ","),
			       b = strcspn(cfg->devargs[j], ",");

			if (a == b && strncmp(cfg->devargs[i],
					      cfg->devargs[j], a) == 0) {
				fprintf(stderr, "%s: port %u and port %u are "
					"both device '%.*s' (give each -p a "
					"name of its own: net_null0, "
					"net_null1, ...)\n", prog, j, i,
					(int)a, cfg->devargs[i]);
				return -EINVAL;
			}
		}
	for (unsigned int p = 0; p < ZN_MAX_PORT_ARGS; p++) {
		const char *name = cfg->port_name[p];

		if (name[0] == '\0')
			continue;
		if (p >= cfg->n_devargs || !port_name_ok(name)) {
			fprintf(stderr, "%s: --port-name %u=%s: %s\n", prog, p,
				name, p >= cfg->n_devargs ? "no such port" :
				"a name of [A-Za-z0-9_-], not a number");
			return -EINVAL;
		}
		for (unsigned int q = 0; q < p; q++)
			if (strcmp(cfg->port_name[q], name) == 0) {
				fprintf(stderr, "%s: --port-name: ports %u and "
					"%u are both '%s'\n", prog, q, p, name);
				return -EINVAL;
			}
	}
	return 0;
}

static const struct zn_opt port_opt[] = {
	{ "port", 'p', "DEVARGS", "add a port: a vdev "
	  "(net_pcap0,rx_pcap=in.pcap,tx_pcap=out.pcap)\nor a PCI address; "
	  "repeat for more ports; net_ringN,zn_ring_size=S,zn_load=PCAP:\n"
	  "RX rings of S holding PCAP at start, by RSS",
	  ZN_OPT_PARSE, .parse = opt_port },
	{ "port-name", 0, "P=NAME", "port P's name (status; chains say "
	  "port:NAME)", ZN_OPT_PARSE, .parse = opt_port_name },
	{ "nf-tx-queues", 0, "N", "TX queues per port for NFs that transmit "
	  "themselves\n(net_null, net_tap; 0: the workers transmit all;\n"
	  "default 8)", ZN_OPT_UINT, ZN_CFG(nf_tx_queues), 0, ZN_MAX_NFS, NULL },
	{ "nf-rx-queues", 0, "N", "RX queues per port that NFs may poll "
	  "themselves: the first\nservice of the port's chain owns them, "
	  "queue q its q-th\nreplica (net_null, net_ring; default 0: the "
	  "workers poll all)", ZN_OPT_UINT, ZN_CFG(nf_rx_queues), 0,
	  ZN_NF_RXQ_MAX, NULL },
	{ "nf-tx-queues-by-request", 0, NULL, "give those queues only to NFs "
	  "that ask for one\n(ZERONF_TX_PORT_P, a device plugin's; default: "
	  "first come)", ZN_OPT_FLAG, ZN_CFG(nf_tx_by_request), 0, 0, NULL },
	{ "ingress", 0, "MODE", "backpressure (hold, stop polling) or drop "
	  "(default\nbackpressure)", ZN_OPT_PARSE, .parse = opt_ingress },
	{ "rx-paused", 0, NULL, "start with port RX paused (enable it with "
	  "the\ncontrol method rx.set)", ZN_OPT_FLAG, ZN_CFG(rx_paused), 0, 0,
	  NULL },
	{ "rx-when-ready", 0, NULL, "start with port RX paused until every "
	  "service of\n--chain has a running NF (then enabled, once)",
	  ZN_OPT_FLAG, ZN_CFG(rx_when_ready), 0, 0, NULL },
	{ "rx-timestamp", 0, NULL, "RX timestamps (mbuf dynfield) where the "
	  "port has them;\nnet_pcap: capture time in us", ZN_OPT_FLAG,
	  ZN_CFG(rx_timestamp), 0, 0, NULL },
};

static const struct zn_opts port_opts = {
	.order = ZN_SUBSYS_PORTS, .opt = port_opt, .n = RTE_DIM(port_opt),
	.defaults = port_defaults, .check = port_check,
};
ZN_OPTIONS_REGISTER(port_opts)
