/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Ring ports of a size given, holding a capture before RX starts:
 *
 *   --port net_ringN,zn_ring_size=S[,zn_load=PCAP]
 *
 * A NIC with RSS spreads what arrives over its RX queues by a hash of the
 * flow, and its rings hold what arrived until someone polls them. No
 * device here does both for NFs that own RX queues (port_nfrx.c: only
 * net_null and net_ring qualify, and net_null carries no data), so this is
 * how a capture is put where such a NIC would have put it: DPDK's own
 * net_ring (its RX queue q is ring q), with rings of S entries made here
 * before the driver is probed on them (DPDK 22.11 rte_eth_ring.c,
 * nodeaction=NAME:NODE:ATTACH: the rings of its names that exist),
 * and, after the port is set up, each frame of the capture in the queue
 * the symmetric Toeplitz hash of its IP addresses picks (port.c's key, a
 * 128-entry redirection table as NICs have; non-IP frames to queue 0), in the
 * shared pool's buffers, with the capture's time as the RX timestamp when
 * --rx-timestamp is on (as net_pcap gives it). Whoever polls the queues
 * takes them then: the NFs owning them, or the workers. The queue's loop
 * back (TX queue q is ring q too) is the driver's.
 *
 * So the DPI bench can measure replicas owning RSS queues with no thread
 * of the host making the traffic (bench/apps.py), and tests can give
 * queue-owning replicas real captures split as a NIC splits them.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pcap/pcap.h>
#include <rte_bus_vdev.h>
#include <rte_byteorder.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_kvargs.h>
#include <rte_mbuf.h>
#include <rte_mbuf_dyn.h>
#include <rte_memcpy.h>
#include <rte_ring.h>
#include <rte_thash.h>

#include <zeronf/flow.h>

#include "../core/mgr.h"
#include "port.h"
#include "../../lib/common/zn_flow.h"
#include "../../lib/common/zn_util.h"

#define RING_MAX_RINGS 16 /* RTE_PMD_RING_MAX_RX_RINGS: the driver's */
#define RING_SIZE_MIN 1024u
#define RING_SIZE_MAX (1u << 22)
#define RETA_SIZE 128

static const char *const ring_keys[] = { "zn_ring_size", "zn_load", NULL };

bool
zn_port_ring_spec(const char *devargs)
{
	/* any key of ours: the driver would ignore what it does not know */
	return strncmp(devargs, "net_ring", 8) == 0 &&
	       strstr(devargs, ",zn_") != NULL;
}

/* The keys after the port's name (DPDK's kvargs), NULL if one is not
 * ours: the driver is given none. */
static struct rte_kvargs *
spec_args(const char *devargs)
{
	return rte_kvargs_parse(strchr(devargs, ',') + 1, ring_keys);
}

/* What is wrong with @p kv, NULL: nothing (its size in @p size). */
static const char *
spec_error(const struct rte_kvargs *kv, unsigned long *size)
{
	const char *v;
	char *end;

	if (kv == NULL)
		return "only zn_ring_size= and zn_load= may follow the name";
	v = rte_kvargs_get(kv, "zn_ring_size");
	if (v == NULL)
		return "zn_ring_size: a number";
	errno = 0;
	*size = strtoul(v, &end, 10);
	if (errno != 0 || *end != '\0' || *size < RING_SIZE_MIN ||
	    *size > RING_SIZE_MAX || (*size & (*size - 1)) != 0)
		return "zn_ring_size: a power of two, 1024..4194304";
	return NULL;
}

/* RX queue @p q's ring of port @p port (the driver's name), or NULL. */
static struct rte_ring *
port_ring(const char *port, unsigned int q)
{
	char name[RTE_RING_NAMESIZE];

	return snprintf(name, sizeof(name), ZN_PORT_RX_RING_FMT, q, port) <
	       (int)sizeof(name) ? rte_ring_lookup(name) : NULL;
}

int
zn_port_ring_make(const struct zn_mgr *m, const char *devargs)
{
	/* the port's RX queues (port.c port_setup) */
	unsigned int nq = RTE_MAX(m->cfg.rx_threads, m->cfg.nf_rx_queues);
	char name[RTE_ETH_NAME_MAX_LEN], rng[RTE_RING_NAMESIZE];
	char args[RTE_ETH_NAME_MAX_LEN + 32];
	struct rte_kvargs *kv = spec_args(devargs);
	unsigned long size = 0;
	const char *why = spec_error(kv, &size);
	int rc;

	rte_kvargs_free(kv);
	zn_strlcpy(name, devargs, sizeof(name));
	name[strcspn(name, ",")] = '\0';
	if (why != NULL) {
		ZN_LOG(ERR, "--port %s: %s", devargs, why);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < RING_MAX_RINGS; i++) {
		if (snprintf(rng, sizeof(rng), ZN_PORT_RX_RING_FMT, i, name) >=
		    (int)sizeof(rng)) {
			ZN_LOG(ERR, "--port %s: the name is too long", devargs);
			return -ENAMETOOLONG;
		}
		/* the port's queues hold a capture; the others (the driver
		 * wants all of them) get its default size */
		if (rte_ring_create(rng, i < nq ? (unsigned int)size :
						  RING_SIZE_MIN,
				    (int)rte_socket_id(),
				    RING_F_SP_ENQ | RING_F_SC_DEQ) == NULL) {
			ZN_LOG(ERR, "--port %s: ring %s: %s", devargs, rng,
			       rte_strerror(rte_errno));
			return -rte_errno;
		}
	}
	/* the driver on these rings (its names: ZN_PORT_RX_RING_FMT) */
	snprintf(args, sizeof(args), "nodeaction=%s:%d:ATTACH", name,
		 (int)rte_socket_id());
	rc = rte_vdev_init(name, args);
	if (rc < 0)
		ZN_LOG(ERR, "--port %s: %s", devargs, rte_strerror(-rc));
	return rc;
}

static inline uint32_t
load_be32(const uint8_t *b)
{
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

/* The queue a NIC with the symmetric key would put frame @p d in. */
static unsigned int
rss_queue(const uint8_t *d, uint32_t len, const uint8_t *key,
	  unsigned int nq)
{
	struct zn_flow_key k;
	uint32_t t[8], n = 0, h;

	if (zn_flow_parse(d, len, &k) < 0)
		return 0;
	for (unsigned int i = 0; i < (k.ip_version == 4 ? 1u : 4u); i++)
		t[n++] = load_be32(k.src + 4 * i);
	for (unsigned int i = 0; i < (k.ip_version == 4 ? 1u : 4u); i++)
		t[n++] = load_be32(k.dst + 4 * i);
	/* The addresses alone: a fragmented datagram's fragments carry no
	 * ports (a NIC hashes all of them by address), its reply does, and a
	 * 4-tuple hash would put the two directions in two queues (as
	 * Suricata advises for RSS: addresses only) */
	h = rte_softrss(t, n, key);
	return (h % RETA_SIZE) % nq;
}

/* @p len bytes at @p d in buffers of @p mp, chained as a driver
 * receiving a frame larger than one does (net_pcap's jumbo RX); NULL if
 * the pool ran out. */
static struct rte_mbuf *
frame_copy(struct rte_mempool *mp, const uint8_t *d, uint32_t len)
{
	struct rte_mbuf *first = NULL;

	while (len > 0) {
		struct rte_mbuf *mb = rte_pktmbuf_alloc(mp);
		uint16_t k;

		if (mb == NULL) {
			rte_pktmbuf_free(first);
			return NULL;
		}
		k = (uint16_t)RTE_MIN(len, (uint32_t)rte_pktmbuf_tailroom(mb));
		rte_memcpy(rte_pktmbuf_append(mb, k), d, k);
		d += k;
		len -= k;
		if (first == NULL) {
			first = mb;
		} else if (rte_pktmbuf_chain(first, mb) != 0) {
			rte_pktmbuf_free(mb);
			rte_pktmbuf_free(first);
			return NULL;
		}
	}
	return first;
}

/* The capture at @p path into the RX queues of port @p p (@p ring). */
static int
load(struct zn_mgr *m, struct zn_port *p, const char *path,
     struct rte_ring *const *ring, unsigned int nq, const uint8_t *key)
{
	char err[PCAP_ERRBUF_SIZE];
	struct pcap_pkthdr *h;
	const u_char *d;
	uint64_t n = 0, ts_flag = 0;
	int ts_off = -1, rc = 0, got;
	pcap_t *pc;

	pc = pcap_open_offline(path, err);
	if (pc == NULL) {
		ZN_LOG(ERR, "--port %s: zn_load: %s", p->devargs, err);
		return -ENOENT;
	}
	if (m->cfg.rx_timestamp &&
	    rte_mbuf_dyn_rx_timestamp_register(&ts_off, NULL) == 0) {
		int bit = rte_mbuf_dynflag_lookup(
			RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME, NULL);

		ts_flag = bit >= 0 ? 1ULL << bit : 0;
	}
	while ((got = pcap_next_ex(pc, &h, &d)) == 1) {
		struct rte_mbuf *mb;
		unsigned int q;

		if (h->caplen == 0 || h->caplen > UINT16_MAX)
			continue;
		q = rss_queue(d, h->caplen, key, nq);
		mb = frame_copy(m->pool, d, h->caplen);
		if (mb == NULL) {
			ZN_LOG(ERR, "--port %s: zn_load: frame %" PRIu64
			       " (%u bytes): no buffers in the pool for it "
			       "(--pool-size)", p->devargs, n, h->caplen);
			rc = -ENOBUFS;
			break;
		}
		mb->port = p->port_id;
		if (ts_off >= 0 && ts_flag != 0) {
			*RTE_MBUF_DYNFIELD(mb, ts_off, rte_mbuf_timestamp_t *) =
				(uint64_t)h->ts.tv_sec * 1000000 +
				(uint64_t)h->ts.tv_usec;
			mb->ol_flags |= ts_flag;
		}
		if (rte_ring_sp_enqueue(ring[q], mb) != 0) {
			ZN_LOG(ERR, "--port %s: zn_load: RX queue %u full at "
			       "frame %" PRIu64 " (zn_ring_size)", p->devargs,
			       q, n);
			rte_pktmbuf_free(mb);
			rc = -ENOSPC;
			break;
		}
		n++;
	}
	if (rc == 0 && got == PCAP_ERROR) {
		ZN_LOG(ERR, "--port %s: zn_load: %s", p->devargs,
		       pcap_geterr(pc));
		rc = -EIO;
	}
	pcap_close(pc);
	if (rc == 0)
		ZN_LOG(INFO, "port %s: %" PRIu64 " frames of %s in its %u RX "
		       "queues by RSS", p->name, n, path, nq);
	/* on an error the manager stops (what is loaded goes with its
	 * memory) */
	return rc;
}

int
zn_port_ring_load(struct zn_mgr *m, struct zn_port *p, const uint8_t *key)
{
	struct rte_kvargs *kv = spec_args(p->devargs); /* made: valid */
	const char *path = kv != NULL ? rte_kvargs_get(kv, "zn_load") : NULL;
	struct rte_ring *ring[ZN_NF_RXQ_MAX];
	unsigned int nq = RTE_MIN(p->nb_rxq, (unsigned int)ZN_NF_RXQ_MAX);
	int rc = 0;

	for (unsigned int q = 0; path != NULL && rc == 0 && q < nq; q++)
		if ((ring[q] = port_ring(p->name, q)) == NULL) {
			ZN_LOG(ERR, "--port %s: RX queue %u has no ring",
			       p->devargs, q);
			rc = -ENOENT;
		}
	if (path != NULL && rc == 0)
		rc = load(m, p, path, ring, nq, key);
	rte_kvargs_free(kv);
	return rc;
}

void
zn_port_ring_drain(struct zn_mgr *m)
{
	struct rte_mbuf *b[64];
	struct rte_ring *r;
	unsigned int k;

	for (unsigned int i = 0; i < m->n_ports; i++) {
		if (!zn_port_ring_spec(m->ports[i].devargs))
			continue;
		for (unsigned int q = 0; q < RING_MAX_RINGS; q++) {
			if ((r = port_ring(m->ports[i].name, q)) == NULL)
				continue;
			while ((k = rte_ring_sc_dequeue_burst(
					r, (void **)b, RTE_DIM(b), NULL)) > 0)
				rte_pktmbuf_free_bulk(b, k);
		}
	}
}
