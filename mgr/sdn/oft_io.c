/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow table's packets to and from the controller (oft.h):
 * packet-in (workers punt onto the table's ring and wake the control
 * thread, which hands each packet to the listener, the OpenFlow endpoint,
 * keeping the packet for a buffer_id when the entry asked for fewer bytes
 * than it has) and packet-out (a packet from a buffer or the controller,
 * copied per output; to a port, sent from here on the port's queue 0
 * (port_ctltx.c); else, or when that cannot, handed to one worker through
 * its inject ring). Control thread only, but for the rings' other ends.
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <rte_mbuf.h>
#include <rte_ring.h>

#include "oft_pvt.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../core/subsys.h"
#include "../datapath/worker.h"
#include "../flow/fdir.h"
#include "../port/port.h"
#include "../trust/owner_map.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_util.h"

#define BUFFER_KEEP_NS (5ULL * 1000000000ULL) /* an unclaimed buffer */
#define DRAIN_MAX 256 /* punts taken per wake (the rest: the next one) */

static struct zn_oft *
oft(struct zn_mgr *m)
{
	return m->oft;
}

/* ---- packet-in ---- */

static void
buffers_expire(struct zn_mgr *m, uint64_t now)
{
	struct zn_oft *t = oft(m);

	for (unsigned int i = 0; i < OFT_BUFFERS; i++) {
		struct oft_buffer *b = &t->buf[i];

		if (b->m != NULL && now - b->t_ns > BUFFER_KEEP_NS) {
			zn_owner_map_drop(m->trust.owner_maps, &b->m, 1);
			*b = (struct oft_buffer){ 0 };
		}
	}
}

/* Keep @p mb for a later packet-out or flow_mod: its buffer_id. */
static uint32_t
buffer_keep(struct zn_mgr *m, struct rte_mbuf *mb, uint32_t in_port)
{
	struct zn_oft *t = oft(m);
	unsigned int slot = t->buf_seq % OFT_BUFFERS;
	struct oft_buffer *b = &t->buf[slot];
	uint32_t id;

	if (b->m != NULL) /* the oldest goes */
		zn_owner_map_drop(m->trust.owner_maps, &b->m, 1);
	t->buf_seq++;
	/* never 0 nor OFP_NO_BUFFER */
	id = ((t->buf_seq & 0x7fffff) << 8 | slot) + 1;
	*b = (struct oft_buffer){ .m = mb, .id = id, .in_port = in_port,
				  .t_ns = zn_now_ns() };
	return id;
}

/* A packet-in of @p mb for entry @p e (NULL: none), with @p max_len and
 * @p reason, to the listener; the packet is kept in a buffer or freed. */
static void
oft_packet_in(struct zn_mgr *m, struct rte_mbuf *mb, uint32_t in_port,
	      const struct zn_oft_entry *e, uint16_t max_len, uint8_t reason)
{
	struct zn_oft *t = oft(m);
	struct zn_oft_packet_in pi = { .buffer_id = ZN_OFP_NO_BUFFER,
				       .in_port = in_port, .reason = reason,
				       .cookie = e != NULL ? e->cookie :
							     UINT64_MAX };

	pi.data = zn_owner_map_pkt_data(m->trust.owner_maps, mb,
					&pi.total_len);
	if (pi.data == NULL)
		pi.total_len = 0;
	pi.len = pi.total_len;
	if (t->listener.packet_in != NULL && max_len != ZN_OFPCML_NO_BUFFER &&
	    max_len < pi.len) {
		pi.len = max_len;
		pi.buffer_id = buffer_keep(m, mb, in_port);
	}
	if (t->listener.packet_in == NULL ||
	    !t->listener.packet_in(t->listener.arg, &pi))
		t->punt_unsent++; /* no one took it (any more) */
	if (pi.buffer_id == ZN_OFP_NO_BUFFER)
		zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
}

static void
drain(struct zn_mgr *m)
{
	struct zn_oft *t = oft(m);
	struct oft_punt p[32];
	unsigned int n, total = 0;

	if (t == NULL || t->punt == NULL)
		return;
	__atomic_store_n(&t->punt_waiting, 0, __ATOMIC_RELEASE);
	buffers_expire(m, zn_now_ns());
	while (total < DRAIN_MAX &&
	       (n = rte_ring_sc_dequeue_burst_elem(t->punt, p, sizeof(p[0]),
						   RTE_DIM(p), NULL)) > 0) {
		for (unsigned int i = 0; i < n; i++) {
			struct zn_pkt_meta *meta = zn_pkt_meta(p[i].m);

			oft_packet_in(m, p[i].m, (uint32_t)meta->in_port + 1,
				      oft_entry_by_idx(m, p[i].idx),
				      p[i].max_len, p[i].reason);
		}
		total += n;
	}
	if (rte_ring_count(t->punt) > 0) /* the rest, next turn */
		(void)!eventfd_write(t->punt_fd, 1);
}

static void
on_punt(void *arg, uint32_t events)
{
	struct zn_mgr *m = arg;
	eventfd_t v;

	(void)events;
	(void)!eventfd_read(oft(m)->punt_fd, &v);
	drain(m);
}

/* ---- packet-out ---- */

static int
perr(struct zn_oft_err *e, const char *code, int rc, const char *msg)
{
	return zn_oft_err_set(e, "OFPET_BAD_REQUEST", code, rc, msg);
}

static int
aerr(struct zn_oft_err *e, const char *code, int rc, const char *msg)
{
	return zn_oft_err_set(e, "OFPET_BAD_ACTION", code, rc, msg);
}

/* One packet for the worker: @p chain (or the flow director's, @p
 * normal). The ring takes it or it drops. */
static void
inject(struct zn_mgr *m, struct rte_mbuf *mb, uint16_t in_port, int chain,
       bool normal)
{
	struct zn_oft *t = oft(m);
	struct oft_inject in = { .m = mb, .normal = normal };
	struct zn_pkt_meta *meta = zn_pkt_meta(mb);

	*meta = (struct zn_pkt_meta){ .action = ZN_ACT_NEXT,
				      .chain = (uint8_t)chain,
				      .chain_pos = ZN_CHAIN_POS_START,
				      .in_port = in_port };
	if (rte_ring_sp_enqueue_elem(t->inject, &in, sizeof(in)) != 0) {
		zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
		m->shm->mgr.drops[ZN_DROP_INGRESS_FULL]++;
		return;
	}
	t->packet_outs++;
}

/* Chain [port:p]'s id, taken once and kept (packet-outs reuse it). */
static int
port_chain(struct zn_mgr *m, uint16_t port, struct zn_oft_err *e)
{
	int *ids = oft(m)->port_chain;
	struct zn_step st = { .type = ZN_STEP_PORT, .id = port };

	if (ids[port] <= 0) {
		ids[port] = zn_fdir_chain_take(m, &st, 1, e->msg,
					       sizeof(e->msg));
		if (ids[port] < 0)
			return aerr(e, "OFPBAC_BAD_OUT_PORT", ids[port],
				    e->msg);
	}
	return ids[port];
}

/* Send @p mb (owned) to one output. */
static int
output_one(struct zn_mgr *m, struct rte_mbuf *mb, uint32_t in_port,
	   const struct zn_oft_output *o, struct zn_oft_err *e)
{
	uint16_t zin = in_port >= 1 && in_port <= m->n_ports ?
		       (uint16_t)(in_port - 1) : ZN_PORT_NONE;
	int chain;

	switch (o->port) {
	case ZN_OFPP_NORMAL:
		inject(m, mb, zin, 0, true);
		return 0;
	case ZN_OFPP_TABLE: {
		const struct zn_oft_entry *en;
		struct zn_oft_key k;
		const uint8_t *p;
		uint32_t len;

		p = zn_owner_map_pkt_data(m->trust.owner_maps, mb, &len);
		oft_key_of(p != NULL ? p : (const uint8_t *)"", p ? len : 0,
			   in_port, &k);
		en = oft_lookup_ctl(m, &k, len);
		if (en == NULL || en->act_full.verdict == ZN_OFT_DROP) {
			m->shm->mgr.drops[en == NULL ? ZN_DROP_SDN_NO_MATCH :
					    ZN_DROP_CHAIN]++;
			zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
		} else if (en->act_full.verdict == ZN_OFT_CONTROLLER) {
			oft_packet_in(m, mb, in_port, en,
				      en->act_full.max_len, 1);
		} else {
			inject(m, mb, zin, (int)OFT_ACT_CHAIN(en->act),
			       en->act_full.verdict == ZN_OFT_NORMAL);
		}
		return 0;
	}
	case 0:
		break;
	default:
		zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
		return aerr(e, "OFPBAC_BAD_OUT_PORT", -EINVAL,
			    "not an output of a packet-out");
	}
	if (o->act.verdict == ZN_OFT_DROP) {
		zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
		return 0;
	}
	if (o->act.verdict != ZN_OFT_CHAIN) {
		zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
		return aerr(e, "OFPBAC_BAD_OUT_PORT", -EINVAL,
			    "output to the controller from a packet-out");
	}
	if (o->act.n_steps == 1 && o->act.steps[0].type == ZN_STEP_PORT &&
	    o->act.steps[0].id < m->n_ports) {
		if (zn_port_ctl_tx(m, o->act.steps[0].id, mb) == 0) {
			oft(m)->packet_outs++; /* sent here (port_ctltx.c) */
			return 0;
		}
		chain = port_chain(m, o->act.steps[0].id, e);
		if (chain < 0) {
			zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
			return chain;
		}
		inject(m, mb, zin, chain, false);
		return 0;
	}
	chain = zn_fdir_chain_take(m, o->act.steps, o->act.n_steps, e->msg,
				   sizeof(e->msg));
	if (chain < 0) {
		zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
		return aerr(e, "OFPBAC_BAD_OUT_PORT", chain, e->msg);
	}
	inject(m, mb, zin, chain, false);
	/* a freed chain id is reused last: the packet keeps its chain */
	zn_fdir_chain_put(m, (unsigned int)chain);
	return 0;
}

int
zn_oft_mod_apply(struct zn_mgr *m, const struct zn_oft_mod *mod,
		 struct zn_oft_err *e)
{
	struct zn_oft_output out = { .port = ZN_OFPP_TABLE };
	int rc = zn_oft_flow_mod(m, mod, e);

	if (rc < 0 || mod->buffer_id == ZN_OFP_NO_BUFFER ||
	    mod->command > ZN_OFPFC_MODIFY_STRICT)
		return rc;
	zn_oft_commit(m);
	return zn_oft_packet_out(m, mod->buffer_id, ZN_OFPP_ANY, NULL, 0,
				 &out, 1, e);
}

int
zn_oft_packet_out(struct zn_mgr *m, uint32_t buffer_id, uint32_t in_port,
		  const uint8_t *data, size_t len,
		  const struct zn_oft_output *outs, unsigned int n_outs,
		  struct zn_oft_err *e)
{
	struct zn_oft *t = oft(m);
	struct zn_oft_output ex[ZN_MAX_PORTS + 8];
	unsigned int n = 0;
	struct rte_mbuf *mb = NULL;
	struct oft_buffer *b = NULL;
	int rc = 0;

	if (t == NULL)
		return perr(e, "OFPBRC_EPERM", -ENODEV, "no OpenFlow table");
	if (in_port != ZN_OFPP_CONTROLLER && in_port != ZN_OFPP_ANY &&
	    (in_port == 0 || in_port > m->n_ports))
		return perr(e, "OFPBRC_BAD_PORT", -EINVAL, "no such in_port");
	if (buffer_id != ZN_OFP_NO_BUFFER) {
		b = &t->buf[(buffer_id - 1) & 0xff];
		if (b->m == NULL || b->id != buffer_id)
			return perr(e, "OFPBRC_BUFFER_UNKNOWN", -ENOENT,
				    "no such buffer (expired or used)");
		if (in_port == ZN_OFPP_ANY) /* a FLOW_MOD's: where it came in */
			in_port = b->in_port;
	}
	/* FLOOD and ALL: each port but the packet's own; IN_PORT: its own */
	for (unsigned int i = 0; i < n_outs; i++) {
		if (outs[i].port == ZN_OFPP_FLOOD || outs[i].port == ZN_OFPP_ALL) {
			for (uint16_t p = 0; p < m->n_ports; p++) {
				if ((uint32_t)p + 1 == in_port ||
				    n >= RTE_DIM(ex))
					continue;
				ex[n] = (struct zn_oft_output){ 0 };
				ex[n].act.verdict = ZN_OFT_CHAIN;
				ex[n].act.n_steps = 1;
				ex[n].act.steps[0] = (struct zn_step){
					.type = ZN_STEP_PORT, .id = p };
				n++;
			}
		} else if (outs[i].port == ZN_OFPP_IN_PORT) {
			if (in_port == 0 || in_port > m->n_ports)
				return aerr(e, "OFPBAC_BAD_OUT_PORT", -EINVAL,
					    "IN_PORT without an in_port");
			ex[n] = (struct zn_oft_output){ 0 };
			ex[n].act.verdict = ZN_OFT_CHAIN;
			ex[n].act.n_steps = 1;
			ex[n].act.steps[0] = (struct zn_step){
				.type = ZN_STEP_PORT,
				.id = (uint16_t)(in_port - 1) };
			n++;
		} else if (n < RTE_DIM(ex)) {
			ex[n++] = outs[i];
		} else {
			return aerr(e, "OFPBAC_TOO_MANY", -E2BIG,
				    "too many outputs");
		}
	}
	if (b != NULL) {
		mb = b->m;
		*b = (struct oft_buffer){ 0 };
	} else {
		char *d;

		if (len == 0 || len > UINT16_MAX)
			return perr(e, "OFPBRC_BAD_LEN", -EINVAL,
				    "a packet-out without a buffer needs its "
				    "packet");
		mb = rte_pktmbuf_alloc(m->pool);
		if (mb == NULL)
			return perr(e, "OFPBRC_EPERM", -ENOBUFS,
				    "no buffer free in the pool");
		d = rte_pktmbuf_append(mb, (uint16_t)len);
		if (d == NULL) {
			rte_pktmbuf_free(mb);
			return perr(e, "OFPBRC_BAD_LEN", -EMSGSIZE,
				    "the packet is larger than a buffer");
		}
		memcpy(d, data, len);
	}
	if (n == 0) { /* no action: dropped (section 7.3.7) */
		zn_owner_map_drop(m->trust.owner_maps, &mb, 1);
		return 0;
	}
	for (unsigned int i = 0; i < n; i++) {
		struct rte_mbuf *c = mb;

		if (i + 1 < n) {
			c = rte_pktmbuf_copy(mb, m->pool, 0, UINT32_MAX);
			if (c == NULL) {
				m->shm->mgr.drops[ZN_DROP_INGRESS_FULL]++;
				continue;
			}
		}
		if (output_one(m, c, in_port, &ex[i], e) < 0 && rc == 0)
			rc = -EINVAL;
	}
	/* a wake-up for what waits in the ring, none for what went out
	 * from here */
	if (rte_ring_count(t->inject) > 0)
		zn_db_ring(&m->dp.workers[t->inject_worker]->shm->db);
	return rc;
}

/* ---- start-up ---- */

/* After the table (oft.c): the packet-outs' ring and worker, the
 * packet-ins' drain. */
static int
zn_oft_io_init(struct zn_mgr *m)
{
	struct zn_oft *t = oft(m);
	int rc;

	t->inject = rte_ring_create_elem("zn_oft_inject",
					 sizeof(struct oft_inject),
					 OFT_INJECT_RING, SOCKET_ID_ANY,
					 RING_F_SP_ENQ | RING_F_SC_DEQ);
	if (t->inject == NULL) {
		ZN_LOG(ERR, "OpenFlow packet-out ring: out of memory");
		return -ENOMEM;
	}
	/* the first worker takes packet-outs (worker 0 always receives) */
	t->inject_worker = 0;
	if (m->dp.n_workers > 0)
		m->dp.workers[0]->inject = t->inject;
	rc = m->loop != NULL ? zn_loop_watch(m->loop, t->punt_fd, EPOLLIN,
					     on_punt, m) : 0;
	return rc;
}

/* What waits in the rings and buffers goes back to its pool (the workers
 * stopped: they tear down after us). */
static void
zn_oft_io_fini(struct zn_mgr *m)
{
	struct zn_oft *t = oft(m);
	struct oft_punt p;
	struct oft_inject in;

	if (t == NULL)
		return;
	if (m->loop != NULL && t->punt_fd >= 0)
		zn_loop_unwatch(m->loop, t->punt_fd);
	if (t->punt != NULL)
		while (rte_ring_sc_dequeue_elem(t->punt, &p, sizeof(p)) == 0)
			zn_owner_map_drop(m->trust.owner_maps, &p.m, 1);
	if (t->inject != NULL)
		while (rte_ring_sc_dequeue_elem(t->inject, &in,
						sizeof(in)) == 0)
			zn_owner_map_drop(m->trust.owner_maps, &in.m, 1);
	for (unsigned int i = 0; i < OFT_BUFFERS; i++)
		if (t->buf[i].m != NULL)
			zn_owner_map_drop(m->trust.owner_maps, &t->buf[i].m, 1);
	if (m->dp.n_workers > 0 && m->dp.workers[0] != NULL)
		m->dp.workers[0]->inject = NULL;
	rte_ring_free(t->inject);
	t->inject = NULL;
}

static const struct zn_subsys subsys = {
	.name = "openflow_io", .order = ZN_SUBSYS_OFT_IO,
	.init = zn_oft_io_init, .fini = zn_oft_io_fini,
};
ZN_SUBSYS_REGISTER(subsys)
