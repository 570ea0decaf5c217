/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow endpoint's messages (ofp_pvt.h): each request answered,
 * each async message built, with libopenvswitch's codec: ofptype_decode
 * checks a message's type and length first (every ofputil_decode_* after
 * it relies on that), ofputil_decode_* and ofputil_encode_* do the wire
 * format, struct match and ofpacts are translated here into the table's
 * key and actions and back. docs/sdn.md has the support matrix; what is
 * not supported is answered with the error the spec names.
 *
 * Ports: ZeroNF port P is OpenFlow port P + 1, service S OpenFlow port
 * 0xf000 + S (ZN_OFT_SERVICE_PORT). Actions map onto the table's as
 * follows, anything else refused:
 *   - no output: drop;
 *   - output:CONTROLLER alone: a packet-in (its max_len);
 *   - output:NORMAL alone: the flow director;
 *   - outputs to services, then at most one port: the ZeroNF chain
 *     [svc:S..., port:P - 1] (OpenFlow would copy the packet to each
 *     output: a ZeroNF chain passes one packet through its steps).
 *
 * Long: one handler per message and multipart type, each a few calls to
 * the codec, and the two translations (matches, actions) both ways.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <openvswitch/list.h>
#include <openvswitch/match.h>
#include <openvswitch/meta-flow.h>
#include <openvswitch/ofp-actions.h>
#include <openvswitch/ofp-errors.h>
#include <openvswitch/ofp-flow.h>
#include <openvswitch/ofp-group.h>
#include <openvswitch/ofp-monitor.h>
#include <openvswitch/ofp-msgs.h>
#include <openvswitch/ofp-packet.h>
#include <openvswitch/ofp-port.h>
#include <openvswitch/ofp-protocol.h>
#include <openvswitch/ofp-switch.h>
#include <openvswitch/ofp-table.h>
#include <openvswitch/ofp-util.h>
#include <openvswitch/ofpbuf.h>
#include <openvswitch/vlog.h>
#include <openflow/openflow-1.2.h>
#include <openflow/openflow-common.h>

#include <rte_byteorder.h>
#include <rte_common.h>

#include "oft.h"
#include "ofp_pvt.h"
#include "../core/mgr.h"
#include "../telemetry/stats.h"
#include "../../lib/common/zn_util.h"

#define PROTO OFPUTIL_P_OF13_OXM
/* OpenFlow 1.3's numbers libopenvswitch keeps private (its ofp-msgs.c) */
#define OFPT_HELLO 0
#define OFPT13_MULTIPART_REQUEST 18
#define MULTIPART_HEADER_LEN 16 /* ofp_header, type, flags, pad */
#define PT_ETH 0                /* packet_type: Ethernet (OpenFlow 1.5) */
#define N_BUFFERS 256 /* the table's (oft_pvt.h OFT_BUFFERS) */
#define ALL_PACKET_IN ((1u << OFPR_NO_MATCH) | (1u << OFPR_ACTION) |        \
		       (1u << OFPR_INVALID_TTL))

void
ofp_codec_init(void)
{
	/* its warnings are about the peer's messages, each answered with an
	 * error already */
	vlog_set_levels(NULL, VLF_ANY_DESTINATION, VLL_ERR);
}

static uint32_t
port32(ofp_port_t p)
{
	return ntohl(ofputil_port_to_ofp11(p));
}

static ofp_port_t
port16(uint32_t p)
{
	ofp_port_t out;

	return ofputil_port_from_ofp11(htonl(p), &out) == 0 ? out : OFPP_NONE;
}

static uint64_t
be64(ovs_be64 x)
{
	return rte_be_to_cpu_64((rte_be64_t)x);
}

static ovs_be64
to_be64(uint64_t x)
{
	return (ovs_be64)rte_cpu_to_be_64(x);
}

static ofp_port_t
ofp16(unsigned int p)
{
	return (ofp_port_t)p;
}

static void
bit_set(struct mf_bitmap *b, unsigned int i)
{
	b->bm[i / (8 * sizeof(b->bm[0]))] |= 1UL << (i % (8 * sizeof(b->bm[0])));
}

/* ---- matches ---- */

/* @p mt as the table's value and mask; OFPERR_OFPBMC_BAD_FIELD when it
 * matches a field the table does not. */
int
ofp_key_from_match(const struct match *mt, struct zn_oft_key *v,
	       struct zn_oft_key *k)
{
	const struct flow *f = &mt->flow, *w = &mt->wc.masks;
	struct flow_wildcards rest = mt->wc;
	struct flow *r = &rest.masks;

	memset(v, 0, sizeof(*v));
	memset(k, 0, sizeof(*k));
	if (w->in_port.ofp_port != 0) {
		v->in_port = port32(f->in_port.ofp_port);
		k->in_port = UINT32_MAX;
		r->in_port.ofp_port = 0;
	}
	v->eth_type = ntohs(f->dl_type);
	k->eth_type = ntohs(w->dl_type);
	r->dl_type = 0;
	v->vlan_vid = ntohs(f->vlans[0].tci) & 0x1fff; /* CFI is "present" */
	k->vlan_vid = ntohs(w->vlans[0].tci) & 0x1fff;
	r->vlans[0].tci &= htons(0xe000); /* the PCP: not matched here */
	memcpy(v->eth_dst, f->dl_dst.ea, 6);
	memcpy(k->eth_dst, w->dl_dst.ea, 6);
	memcpy(v->eth_src, f->dl_src.ea, 6);
	memcpy(k->eth_src, w->dl_src.ea, 6);
	memset(&r->dl_dst, 0, sizeof(r->dl_dst));
	memset(&r->dl_src, 0, sizeof(r->dl_src));
	v->ip_proto = f->nw_proto;
	k->ip_proto = w->nw_proto;
	r->nw_proto = 0;
	if (w->nw_src != 0 || w->nw_dst != 0) { /* IPv4, ARP's spa/tpa */
		memcpy(v->ip_src, &f->nw_src, 4);
		memcpy(k->ip_src, &w->nw_src, 4);
		memcpy(v->ip_dst, &f->nw_dst, 4);
		memcpy(k->ip_dst, &w->nw_dst, 4);
		r->nw_src = r->nw_dst = 0;
	} else {
		memcpy(v->ip_src, &f->ipv6_src, 16);
		memcpy(k->ip_src, &w->ipv6_src, 16);
		memcpy(v->ip_dst, &f->ipv6_dst, 16);
		memcpy(k->ip_dst, &w->ipv6_dst, 16);
		memset(&r->ipv6_src, 0, sizeof(r->ipv6_src));
		memset(&r->ipv6_dst, 0, sizeof(r->ipv6_dst));
	}
	v->l4_src = ntohs(f->tp_src);
	k->l4_src = ntohs(w->tp_src);
	v->l4_dst = ntohs(f->tp_dst);
	k->l4_dst = ntohs(w->tp_dst);
	r->tp_src = r->tp_dst = 0;
	v->tcp_flags = ntohs(f->tcp_flags) & 0x0fff;
	k->tcp_flags = ntohs(w->tcp_flags) & 0x0fff;
	r->tcp_flags = 0;
	if (f->packet_type == htonl(PT_ETH)) /* what OpenFlow 1.3 means */
		r->packet_type = 0;
	for (unsigned int i = 0; i < ZN_OFT_KEY_WORDS; i++)
		zn_oft_key_set_word(v, i, zn_oft_key_word(v, i) &
					  zn_oft_key_word(k, i));
	return flow_wildcards_is_catchall(&rest) ? 0 :
						   OFPERR_OFPBMC_BAD_FIELD;
}

void
ofp_match_from_key(const struct zn_oft_key *v, const struct zn_oft_key *k,
	       struct match *mt)
{
	struct flow *f = &mt->flow, *w = &mt->wc.masks;
	static const uint8_t zero[16];

	match_init_catchall(mt);
	if (k->in_port != 0)
		match_set_in_port(mt, port16(v->in_port));
	f->dl_type = htons(v->eth_type);
	w->dl_type = htons(k->eth_type);
	f->vlans[0].tci = htons(v->vlan_vid);
	w->vlans[0].tci = htons(k->vlan_vid);
	memcpy(f->dl_dst.ea, v->eth_dst, 6);
	memcpy(w->dl_dst.ea, k->eth_dst, 6);
	memcpy(f->dl_src.ea, v->eth_src, 6);
	memcpy(w->dl_src.ea, k->eth_src, 6);
	f->nw_proto = v->ip_proto;
	w->nw_proto = k->ip_proto;
	if (v->eth_type == 0x86dd) {
		memcpy(&f->ipv6_src, v->ip_src, 16);
		memcpy(&w->ipv6_src, k->ip_src, 16);
		memcpy(&f->ipv6_dst, v->ip_dst, 16);
		memcpy(&w->ipv6_dst, k->ip_dst, 16);
	} else if (memcmp(k->ip_src, zero, 16) != 0 ||
		   memcmp(k->ip_dst, zero, 16) != 0) {
		memcpy(&f->nw_src, v->ip_src, 4);
		memcpy(&w->nw_src, k->ip_src, 4);
		memcpy(&f->nw_dst, v->ip_dst, 4);
		memcpy(&w->nw_dst, k->ip_dst, 4);
	}
	f->tp_src = htons(v->l4_src);
	w->tp_src = htons(k->l4_src);
	f->tp_dst = htons(v->l4_dst);
	w->tp_dst = htons(k->l4_dst);
	f->tcp_flags = htons(v->tcp_flags);
	w->tcp_flags = htons(k->tcp_flags);
}

/* ---- actions ---- */

struct outs {
	unsigned int n;
	struct { uint32_t port; uint16_t max_len; } o[OFP_MAX_OUTS];
	bool group;           /* a GROUP action (after the outputs) */
	uint32_t group_id;
};

/* The outputs of @p acts, in order (a write-actions set's too: one table,
 * its action set is executed at its end). */
static enum ofperr
outputs_of(const struct ofpact *acts, size_t len, struct outs *out)
{
	const struct ofpact *a;
	enum ofperr err;

	OFPACT_FOR_EACH (a, acts, len) {
		switch (a->type) {
		case OFPACT_OUTPUT:
			if (out->n == OFP_MAX_OUTS)
				return OFPERR_OFPBAC_TOO_MANY;
			out->o[out->n].port =
				port32(ofpact_get_OUTPUT(a)->port);
			out->o[out->n++].max_len =
				ofpact_get_OUTPUT(a)->max_len;
			break;
		case OFPACT_CLEAR_ACTIONS:
			break; /* one table: no action set carried on */
		case OFPACT_WRITE_ACTIONS: {
			const struct ofpact_nest *on =
				ofpact_get_WRITE_ACTIONS(a);

			err = outputs_of(on->actions,
					 ofpact_nest_get_action_len(on), out);
			if (err != 0)
				return err;
			break;
		}
		case OFPACT_GOTO_TABLE:
			return OFPERR_OFPBIC_BAD_TABLE_ID; /* one table */
		case OFPACT_GROUP:
			if (out->group)
				return OFPERR_OFPBAC_BAD_OUT_GROUP;
			out->group = true;
			out->group_id = ofpact_get_GROUP(a)->group_id;
			break;
		case OFPACT_METER:
		case OFPACT_WRITE_METADATA:
			return OFPERR_OFPBIC_UNSUP_INST;
		default:
			return OFPERR_OFPBAC_BAD_TYPE;
		}
	}
	return 0;
}

/* OpenFlow port @p p as a chain step: a ZeroNF port or service. */
static bool
port_step(unsigned int n_ports, uint32_t p, struct zn_step *st)
{
	if (p >= 1 && p <= n_ports) {
		*st = (struct zn_step){ .type = ZN_STEP_PORT,
					.id = (uint16_t)(p - 1) };
		return true;
	}
	if (p > ZN_OFT_SERVICE_PORT(0) &&
	    p <= ZN_OFT_SERVICE_PORT(ZN_STEP_MAX_SERVICE)) {
		*st = (struct zn_step){ .type = ZN_STEP_SERVICE,
					.id = (uint16_t)(p -
						ZN_OFT_SERVICE_PORT(0)) };
		return true;
	}
	return false;
}

/* A flow entry's instructions as the table's action. */
static enum ofperr
action_of(unsigned int n_ports, const struct ofpact *acts, size_t len,
	  struct zn_oft_action *a)
{
	struct outs out = { 0 };
	enum ofperr err = outputs_of(acts, len, &out);

	memset(a, 0, sizeof(*a));
	if (err != 0)
		return err;
	if (out.group) { /* a group alone: its buckets are the chains */
		if (out.n != 0)
			return OFPERR_OFPBAC_BAD_OUT_GROUP;
		a->verdict = ZN_OFT_GROUP;
		a->group_id = out.group_id;
		return 0;
	}
	if (out.n == 0) {
		a->verdict = ZN_OFT_DROP;
		return 0;
	}
	if (out.n == 1 && out.o[0].port == ZN_OFPP_CONTROLLER) {
		a->verdict = ZN_OFT_CONTROLLER;
		a->max_len = out.o[0].max_len;
		return 0;
	}
	if (out.n == 1 && out.o[0].port == ZN_OFPP_NORMAL) {
		a->verdict = ZN_OFT_NORMAL;
		return 0;
	}
	a->verdict = ZN_OFT_CHAIN;
	for (unsigned int i = 0; i < out.n; i++) {
		struct zn_step *st = &a->steps[a->n_steps];

		/* services, then at most one port, last */
		if (a->n_steps == ZN_MAX_CHAIN_STEPS ||
		    !port_step(n_ports, out.o[i].port, st) ||
		    (st->type == ZN_STEP_PORT && i != out.n - 1))
			return OFPERR_OFPBAC_BAD_OUT_PORT;
		a->n_steps++;
	}
	return 0;
}

/* The table's action as OpenFlow actions (apply-actions). */
static void
ofpacts_of(const struct zn_oft_action *a, struct ofpbuf *b)
{
	switch (a->verdict) {
	case ZN_OFT_GROUP:
		ofpact_put_GROUP(b)->group_id = a->group_id;
		break;
	case ZN_OFT_CONTROLLER:
		ofpact_put_OUTPUT(b)->port = OFPP_CONTROLLER;
		((struct ofpact_output *)b->header)->max_len = a->max_len;
		break;
	case ZN_OFT_NORMAL:
		ofpact_put_OUTPUT(b)->port = OFPP_NORMAL;
		break;
	case ZN_OFT_CHAIN:
		for (unsigned int i = 0; i < a->n_steps; i++) {
			const struct zn_step *st = &a->steps[i];

			if (st->type == ZN_STEP_PORT)
				ofpact_put_OUTPUT(b)->port =
					ofp16(st->id + 1);
			else if (st->type == ZN_STEP_SERVICE)
				ofpact_put_OUTPUT(b)->port = ofp16(
					ZN_OFT_SERVICE_PORT(st->id));
		}
		break;
	default:
		break;
	}
}

static enum ofperr
table_error(const struct zn_oft_err *e)
{
	enum ofperr err = e->code != NULL ? ofperr_from_name(e->code) : 0;

	return err != 0 ? err : OFPERR_OFPFMFC_UNKNOWN;
}

/* ---- the flow table ---- */

static const uint16_t ff_bits[][2] = {
	{ OFPUTIL_FF_SEND_FLOW_REM, ZN_OFPFF_SEND_FLOW_REM },
	{ OFPUTIL_FF_CHECK_OVERLAP, ZN_OFPFF_CHECK_OVERLAP },
	{ OFPUTIL_FF_RESET_COUNTS, ZN_OFPFF_RESET_COUNTS },
	{ OFPUTIL_FF_NO_PKT_COUNTS, ZN_OFPFF_NO_PKT_COUNTS },
	{ OFPUTIL_FF_NO_BYT_COUNTS, ZN_OFPFF_NO_BYT_COUNTS },
};

int
ofp_flow_mod_decode(unsigned int n_ports, const struct ofp_header *oh,
		    struct zn_oft_mod *mod)
{
	uint64_t stub[1024 / 8];
	struct ofpbuf ofpacts;
	struct ofputil_flow_mod fm;
	struct match mt;
	enum ofperr err;
	bool del;

	ofpbuf_use_stub(&ofpacts, stub, sizeof(stub));
	err = ofputil_decode_flow_mod(&fm, oh, PROTO, NULL, NULL, &ofpacts,
				      OFPP_MAX, 255);
	if (err != 0)
		goto out_acts;
	memset(mod, 0, sizeof(*mod));
	del = fm.command == OFPFC_DELETE || fm.command == OFPFC_DELETE_STRICT;
	if (fm.command > OFPFC_DELETE_STRICT) {
		err = OFPERR_OFPFMFC_BAD_COMMAND;
		goto out;
	}
	if (fm.table_id != 0 && !(del && fm.table_id == OFPTT_ALL)) {
		err = OFPERR_OFPFMFC_BAD_TABLE_ID; /* one table: 0 */
		goto out;
	}
	minimatch_expand(&fm.match, &mt);
	err = ofp_key_from_match(&mt, &mod->value, &mod->mask);
	if (err != 0)
		goto out;
	mod->command = (uint8_t)fm.command;
	mod->priority = (uint16_t)fm.priority;
	if (fm.command == OFPFC_ADD) {
		mod->cookie = be64(fm.new_cookie);
	} else {
		mod->cookie = be64(fm.cookie);
		mod->cookie_mask = be64(fm.cookie_mask);
	}
	mod->idle_timeout = fm.idle_timeout;
	mod->hard_timeout = fm.hard_timeout;
	for (unsigned int i = 0; i < RTE_DIM(ff_bits); i++)
		if (fm.flags & ff_bits[i][0])
			mod->flags |= ff_bits[i][1];
	mod->out_port = port32(fm.out_port); /* OFPP_ANY: ZN_OFPP_ANY */
	mod->buffer_id = fm.buffer_id;
	mod->by_group = fm.out_group != OFPG_ANY;
	mod->out_group = fm.out_group;
	if (!del)
		err = action_of(n_ports, fm.ofpacts, fm.ofpacts_len,
				&mod->act);
out:
	minimatch_destroy(&fm.match);
out_acts:
	ofpbuf_uninit(&ofpacts);
	return err;
}

static enum ofperr
flow_mod(struct zn_ofp *ep, const struct ofp_header *oh)
{
	struct zn_oft_mod mod;
	struct zn_oft_err e = { 0 };
	enum ofperr err = ofp_flow_mod_decode(ep->m->n_ports, oh, &mod);

	if (err != 0)
		return err;
	ep->mods_pending = true;
	return zn_oft_mod_apply(ep->m, &mod, &e) < 0 ? table_error(&e) : 0;
}

static void
send_replies(struct ofp_session *s, struct ovs_list *replies)
{
	struct ofpbuf *b;

	LIST_FOR_EACH_POP (b, list_node, replies)
		ofp_send(s, b);
}

struct stats_ctx {
	struct ovs_list *replies;
	struct ofputil_aggregate_stats agg;
};

static void
stats_one(struct zn_mgr *m, const struct zn_oft_entry *en, void *arg)
{
	struct stats_ctx *c = arg;
	struct zn_oft_entry_info in;
	struct ofputil_flow_stats fs;
	uint64_t stub[256 / 8];
	struct ofpbuf acts;

	zn_oft_entry_info(m, en, &in);
	if (c->replies == NULL) {
		c->agg.packet_count += in.packets;
		c->agg.byte_count += in.bytes;
		c->agg.flow_count++;
		return;
	}
	ofpbuf_use_stub(&acts, stub, sizeof(stub));
	ofpacts_of(&in.act, &acts);
	memset(&fs, 0, sizeof(fs));
	ofp_match_from_key(&in.value, &in.mask, &fs.match);
	fs.cookie = to_be64(in.cookie);
	fs.priority = in.priority;
	fs.idle_timeout = in.idle_timeout;
	fs.hard_timeout = in.hard_timeout;
	fs.duration_sec = (uint32_t)(in.duration_ns / 1000000000ULL);
	fs.duration_nsec = (uint32_t)(in.duration_ns % 1000000000ULL);
	fs.idle_age = fs.hard_age = -1;
	fs.packet_count = in.packets;
	fs.byte_count = in.bytes;
	fs.ofpacts = acts.data;
	fs.ofpacts_len = acts.size;
	for (unsigned int i = 0; i < RTE_DIM(ff_bits); i++)
		if (in.flags & ff_bits[i][1])
			fs.flags |= ff_bits[i][0];
	ofputil_append_flow_stats_reply(&fs, c->replies, NULL);
	ofpbuf_uninit(&acts);
}

/* OFPMP_FLOW and OFPMP_AGGREGATE. */
static enum ofperr
flow_stats(struct zn_ofp *ep, struct ofp_session *s,
	   const struct ofp_header *oh)
{
	struct ofputil_flow_stats_request fsr;
	struct zn_oft_filter f = { 0 };
	struct stats_ctx c = { 0 };
	struct ovs_list replies;
	enum ofperr err;

	err = ofputil_decode_flow_stats_request(&fsr, oh, NULL, NULL);
	if (err != 0)
		return err;
	if (fsr.table_id != 0 && fsr.table_id != OFPTT_ALL)
		return OFPERR_OFPBRC_BAD_TABLE_ID;
	err = ofp_key_from_match(&fsr.match, &f.value, &f.mask);
	if (err != 0)
		return err;
	f.out_port = port32(fsr.out_port);
	f.cookie = be64(fsr.cookie);
	f.cookie_mask = be64(fsr.cookie_mask);
	f.by_group = fsr.out_group != OFPG_ANY;
	f.out_group = fsr.out_group;
	if (!fsr.aggregate) {
		ofpmp_init(&replies, oh);
		c.replies = &replies;
	}
	zn_oft_select(ep->m, &f, stats_one, &c);
	if (fsr.aggregate)
		ofp_send(s, ofputil_encode_aggregate_stats_reply(&c.agg, oh));
	else
		send_replies(s, &replies);
	return 0;
}

int
ofp_packet_out_decode(unsigned int n_ports, const struct ofp_header *oh,
		      struct ofp_pout *po)
{
	uint64_t stub[1024 / 8];
	struct ofpbuf ofpacts;
	struct ofputil_packet_out p;
	struct outs o = { 0 };
	enum ofperr err;

	memset(po, 0, sizeof(*po));
	ofpbuf_use_stub(&ofpacts, stub, sizeof(stub));
	err = ofputil_decode_packet_out(&p, oh, NULL, &ofpacts);
	if (err == 0)
		err = outputs_of(p.ofpacts, p.ofpacts_len, &o);
	if (err == 0 && o.group)
		err = OFPERR_OFPBAC_BAD_OUT_GROUP; /* not from a packet-out */
	for (unsigned int i = 0; err == 0 && i < o.n; i++) {
		struct zn_oft_output *out = &po->out[i];
		uint32_t port = o.o[i].port;
		struct zn_step st;

		switch (port) {
		case ZN_OFPP_NORMAL:
			out->act.verdict = ZN_OFT_NORMAL;
			/* fall through */
		case ZN_OFPP_FLOOD:
		case ZN_OFPP_ALL:
		case ZN_OFPP_IN_PORT:
		case ZN_OFPP_TABLE:
			out->port = port;
			break;
		default:
			if (!port_step(n_ports, port, &st)) {
				err = OFPERR_OFPBAC_BAD_OUT_PORT;
				break;
			}
			out->act.verdict = ZN_OFT_CHAIN;
			out->act.steps[0] = st;
			out->act.n_steps = 1;
		}
	}
	if (err == 0) {
		po->n_out = o.n;
		po->buffer_id = p.buffer_id;
		po->in_port = port32(p.flow_metadata.flow.in_port.ofp_port);
		po->data = p.packet; /* in the message */
		po->len = p.packet_len;
	}
	ofpbuf_uninit(&ofpacts);
	return err;
}

static enum ofperr
packet_out(struct zn_ofp *ep, const struct ofp_header *oh)
{
	static struct ofp_pout po;
	struct zn_oft_err e = { 0 };
	enum ofperr err = ofp_packet_out_decode(ep->m->n_ports, oh, &po);

	if (err != 0)
		return err;
	ofp_commit(ep); /* TABLE sees every flow mod before it */
	return zn_oft_packet_out(ep->m, po.buffer_id, po.in_port, po.data,
				 po.len, po.out, po.n_out, &e) < 0 ?
	       table_error(&e) : 0;
}

/* ---- groups ---- */

int
ofp_group_mod_decode(unsigned int n_ports, const struct ofp_header *oh,
		     struct zn_oft_group_mod *gm)
{
	struct ofputil_group_mod ogm;
	struct ofputil_bucket *b;
	enum ofperr err = ofputil_decode_group_mod(oh, &ogm);

	if (err != 0)
		return err;
	memset(gm, 0, sizeof(*gm));
	gm->command = ogm.command;
	gm->type = ogm.type;
	gm->group_id = ogm.group_id;
	if (ogm.command > OFPGC11_DELETE)
		err = OFPERR_OFPGMFC_BAD_COMMAND; /* 1.5's: not in 1.3 */
	LIST_FOR_EACH (b, list_node, &ogm.buckets) {
		struct zn_oft_bucket *zb;

		if (err != 0)
			break;
		if (gm->n_buckets == ZN_OFT_GROUP_BUCKETS) {
			err = OFPERR_OFPGMFC_OUT_OF_BUCKETS;
			break;
		}
		zb = &gm->bucket[gm->n_buckets++];
		zb->weight = b->weight;
		err = action_of(n_ports, b->ofpacts, b->ofpacts_len, &zb->act);
		if (err != 0 || zb->act.verdict != ZN_OFT_CHAIN)
			err = OFPERR_OFPGMFC_BAD_BUCKET; /* services, a port */
	}
	ofputil_uninit_group_mod(&ogm);
	return err;
}

static enum ofperr
group_mod(struct zn_ofp *ep, const struct ofp_header *oh)
{
	static struct zn_oft_group_mod gm;
	struct zn_oft_err e = { 0 };
	enum ofperr err = ofp_group_mod_decode(ep->m->n_ports, oh, &gm);

	if (err != 0)
		return err;
	ofp_commit(ep); /* a delete takes the entries that use the group */
	return zn_oft_group_mod(ep->m, &gm, &e) < 0 ? table_error(&e) : 0;
}

struct group_ctx {
	struct ovs_list *replies;
	bool desc;
};

static void
group_one(const struct zn_oft_group_info *g, void *arg)
{
	struct group_ctx *c = arg;

	if (c->desc) {
		struct ofputil_group_desc gd = { .type = g->type,
						 .group_id = g->group_id };
		struct ofputil_bucket bk[ZN_OFT_GROUP_BUCKETS];
		uint64_t stub[ZN_OFT_GROUP_BUCKETS][256 / 8];
		struct ofpbuf acts[ZN_OFT_GROUP_BUCKETS];
		struct ovs_list buckets;

		ovs_list_init(&buckets);
		for (unsigned int b = 0; b < g->n_buckets; b++) {
			ofpbuf_use_stub(&acts[b], stub[b], sizeof(stub[b]));
			ofpacts_of(&g->bucket[b].act, &acts[b]);
			bk[b] = (struct ofputil_bucket){
				.weight = g->bucket[b].weight,
				.watch_port = OFPP_ANY,
				.watch_group = OFPG_ANY, .bucket_id = b,
				.ofpacts = acts[b].data,
				.ofpacts_len = acts[b].size };
			ovs_list_push_back(&buckets, &bk[b].list_node);
		}
		ofputil_append_group_desc_reply(&gd, &buckets, c->replies);
		for (unsigned int b = 0; b < g->n_buckets; b++)
			ofpbuf_uninit(&acts[b]);
	} else {
		struct bucket_counter bc[ZN_OFT_GROUP_BUCKETS];
		struct ofputil_group_stats gs = {
			.group_id = g->group_id, .ref_count = g->ref_count,
			.packet_count = g->packets, .byte_count = g->bytes,
			.duration_sec = (uint32_t)(g->duration_ns /
						   1000000000ULL),
			.duration_nsec = (uint32_t)(g->duration_ns %
						    1000000000ULL),
			.n_buckets = g->n_buckets, .bucket_stats = bc };

		for (unsigned int b = 0; b < g->n_buckets; b++)
			bc[b] = (struct bucket_counter){
				.packet_count = g->bucket_packets[b],
				.byte_count = g->bucket_bytes[b] };
		ofputil_append_group_stats(c->replies, &gs);
	}
}

/* OFPMP_GROUP, OFPMP_GROUP_DESC. */
static enum ofperr
group_stats(struct zn_ofp *ep, struct ofp_session *s,
	    const struct ofp_header *oh, bool desc)
{
	struct ovs_list replies;
	struct group_ctx c = { .replies = &replies, .desc = desc };
	uint32_t id = OFPG_ALL;

	if (desc) {
		id = ofputil_decode_group_desc_request(oh);
	} else {
		enum ofperr err = ofputil_decode_group_stats_request(oh, &id);

		if (err != 0)
			return err;
	}
	ofpmp_init(&replies, oh);
	zn_oft_groups(ep->m, id, group_one, &c);
	send_replies(s, &replies);
	return 0;
}

static void
group_features(struct ofp_session *s, const struct ofp_header *oh)
{
	struct ofputil_group_features gf = {
		.types = (1u << OFPGT11_SELECT) | (1u << OFPGT11_INDIRECT),
		.capabilities = OFPGFC_SELECT_WEIGHT,
		.max_groups = { 0, ZN_OFT_MAX_GROUPS, ZN_OFT_MAX_GROUPS, 0 },
		.ofpacts = { 0, UINT64_C(1) << OFPACT_OUTPUT,
			     UINT64_C(1) << OFPACT_OUTPUT, 0 },
	};

	ofp_send(s, ofputil_encode_group_features_reply(&gf, oh));
}

/* ---- ports ---- */

static void
phy_port(struct zn_ofp *ep, unsigned int i, struct ofputil_phy_port *pp)
{
	struct zn_port_report r;

	zn_stats_port_report(ep->m, i, false, &r);
	memset(pp, 0, sizeof(*pp));
	pp->port_no = ofp16(i + 1);
	memcpy(pp->hw_addr.ea, r.mac, 6);
	memcpy(pp->name, r.name, sizeof(pp->name) - 1); /* 15 characters */
	pp->state = r.link_up ? OFPUTIL_PS_LIVE : OFPUTIL_PS_LINK_DOWN;
	pp->curr_speed = pp->max_speed = r.speed_mbps * 1000; /* kb/s */
}

static enum ofperr
port_stats(struct zn_ofp *ep, struct ofp_session *s,
	   const struct ofp_header *oh)
{
	struct zn_mgr *m = ep->m;
	struct ovs_list replies;
	ofp_port_t want;
	uint64_t age = zn_now_ns() - ep->started_ns;
	unsigned int n = 0;
	enum ofperr err;

	err = ofputil_decode_port_stats_request(oh, &want);
	if (err != 0)
		return err;
	ofpmp_init(&replies, oh);
	for (unsigned int i = 0; i < m->n_ports; i++) {
		struct ofputil_port_stats ps;
		struct zn_port_report r;

		if (want != OFPP_ANY && want != ofp16(i + 1u))
			continue;
		zn_stats_port_report(m, i, true, &r);
		memset(&ps, 0xff, sizeof(ps)); /* all ones: not counted */
		memset(&ps.custom_stats, 0, sizeof(ps.custom_stats));
		ps.port_no = ofp16(i + 1);
		ps.stats.rx_packets = r.rx;
		ps.stats.tx_packets = r.tx;
		ps.stats.rx_bytes = r.ibytes;
		ps.stats.tx_bytes = r.obytes;
		ps.stats.rx_dropped = r.imissed;
		ps.stats.tx_dropped = r.drops;
		ps.stats.rx_errors = r.ierrors;
		ps.stats.tx_errors = r.oerrors;
		ps.duration_sec = (uint32_t)(age / 1000000000ULL);
		ps.duration_nsec = (uint32_t)(age % 1000000000ULL);
		ofputil_append_port_stat(&replies, &ps);
		n++;
	}
	if (want != OFPP_ANY && n == 0) {
		struct ofpbuf *b;

		LIST_FOR_EACH_POP (b, list_node, &replies)
			ofpbuf_delete(b);
		return OFPERR_OFPBRC_BAD_PORT;
	}
	send_replies(s, &replies);
	return 0;
}

static void
port_desc(struct zn_ofp *ep, struct ofp_session *s,
	  const struct ofp_header *oh)
{
	struct ovs_list replies;

	ofpmp_init(&replies, oh);
	for (unsigned int i = 0; i < ep->m->n_ports; i++) {
		struct ofputil_phy_port pp;

		phy_port(ep, i, &pp);
		ofputil_append_port_desc_stats_reply(&pp, &replies);
	}
	send_replies(s, &replies);
}

void
ofp_watch_ports(struct zn_ofp *ep)
{
	for (unsigned int i = 0; i < ep->m->n_ports && i < 256; i++) {
		struct ofputil_port_status ps = { .reason = OFPPR_MODIFY };
		uint8_t now;

		phy_port(ep, i, &ps.desc);
		now = ps.desc.state & OFPUTIL_PS_LINK_DOWN ? 2 : 1;
		if (ep->link[i] == now || ep->link[i] == 0) {
			ep->link[i] = now;
			continue;
		}
		ep->link[i] = now;
		ofp_fan_out(ep, ofputil_encode_port_status(&ps, PROTO),
			    OAM_PORT_STATUS, OFPPR_MODIFY);
	}
}

/* ---- the table's features and statistics ---- */

static const enum mf_field_id matched[] = {
	MFF_IN_PORT_OXM, MFF_ETH_DST, MFF_ETH_SRC, MFF_ETH_TYPE,
	MFF_VLAN_VID, MFF_IP_PROTO, MFF_IPV4_SRC, MFF_IPV4_DST,
	MFF_IPV6_SRC, MFF_IPV6_DST, MFF_TCP_SRC, MFF_TCP_DST, MFF_UDP_SRC,
	MFF_UDP_DST, MFF_SCTP_SRC, MFF_SCTP_DST, MFF_ICMPV4_TYPE,
	MFF_ICMPV4_CODE, MFF_ICMPV6_TYPE, MFF_ICMPV6_CODE, MFF_TCP_FLAGS,
	MFF_ARP_OP, MFF_ARP_SPA, MFF_ARP_TPA,
};
static const enum mf_field_id maskable[] = {
	MFF_ETH_DST, MFF_ETH_SRC, MFF_VLAN_VID, MFF_IPV4_SRC, MFF_IPV4_DST,
	MFF_IPV6_SRC, MFF_IPV6_DST, MFF_TCP_FLAGS, MFF_ARP_SPA, MFF_ARP_TPA,
};

static void
table_features(struct zn_ofp *ep, struct ofputil_table_features *tf)
{
	struct zn_oft_table_stats st;

	zn_oft_table_stats(ep->m, &st);
	memset(tf, 0, sizeof(*tf));
	tf->table_id = 0;
	snprintf(tf->name, sizeof(tf->name), "zeronf");
	tf->max_entries = st.capacity;
	tf->any_properties = true; /* the properties are encoded */
	tf->miss_config = OFPUTIL_TABLE_MISS_DEFAULT;
	tf->supports_eviction = tf->supports_vacancy_events = -1;
	tf->nonmiss.instructions = (1u << OVSINST_OFPIT11_APPLY_ACTIONS) |
				   (1u << OVSINST_OFPIT11_WRITE_ACTIONS) |
				   (1u << OVSINST_OFPIT11_CLEAR_ACTIONS);
	tf->nonmiss.write.ofpacts = tf->nonmiss.apply.ofpacts =
		(UINT64_C(1) << OFPACT_OUTPUT) | (UINT64_C(1) << OFPACT_GROUP);
	tf->miss = tf->nonmiss;
	for (unsigned int i = 0; i < RTE_DIM(matched); i++) {
		bit_set(&tf->match, matched[i]);
		bit_set(&tf->wildcard, matched[i]);
	}
	for (unsigned int i = 0; i < RTE_DIM(maskable); i++)
		bit_set(&tf->mask, maskable[i]);
}

static enum ofperr
table_stats(struct zn_ofp *ep, struct ofp_session *s,
	    const struct ofp_header *oh)
{
	struct zn_oft_table_stats st;
	struct ofputil_table_features tf;
	struct ofputil_table_stats ts = { 0 };
	struct ofpbuf *reply = ofputil_encode_table_stats_reply(oh);

	zn_oft_table_stats(ep->m, &st);
	table_features(ep, &tf);
	ts.active_count = st.active;
	ts.lookup_count = st.lookups;
	ts.matched_count = st.matched;
	ofputil_append_table_stats_reply(reply, &ts, &tf);
	ofp_send(s, reply);
	return 0;
}

static enum ofperr
table_features_request(struct zn_ofp *ep, struct ofp_session *s,
		       const struct ofp_header *oh)
{
	struct ofputil_table_features tf;
	struct ovs_list replies;

	/* a body sets the features: refused, the table is what it is */
	if (ntohs(oh->length) > MULTIPART_HEADER_LEN)
		return OFPERR_OFPTFFC_EPERM;
	table_features(ep, &tf);
	ofpmp_init(&replies, oh);
	ofputil_append_table_features(&tf, NULL, &replies);
	send_replies(s, &replies);
	return 0;
}

static void
desc(struct zn_ofp *ep, struct ofp_session *s, const struct ofp_header *oh)
{
	struct ofpbuf *msg = ofpraw_alloc_stats_reply(oh, 0);
	struct ofp_desc_stats *d = ofpbuf_put_zeros(msg, sizeof(*d));

	snprintf(d->mfr_desc, sizeof(d->mfr_desc), "ZeroNF");
	snprintf(d->hw_desc, sizeof(d->hw_desc), "ZeroNF on DPDK");
	snprintf(d->sw_desc, sizeof(d->sw_desc), "zeronf %s", zn_build_id);
	snprintf(d->dp_desc, sizeof(d->dp_desc), "ZeroNF instance %s",
		 ep->m->cfg.instance);
	ofp_send(s, msg);
}

/* ---- the connection ---- */

struct ofpbuf *
ofp_hello(void)
{
	return ofputil_encode_hello(1u << OFP13_VERSION);
}

static enum ofperr
role_request(struct zn_ofp *ep, struct ofp_session *s,
	     const struct ofp_header *oh)
{
	struct ofputil_role_request rr, reply = { 0 };
	enum ofperr err = ofputil_decode_role_message(oh, &rr);

	if (err != 0)
		return err;
	if (rr.role == OFPCR12_ROLE_PRIMARY || rr.role == OFPCR12_ROLE_SECONDARY) {
		/* a generation id older than the last one seen (modulo 2^64,
		 * as the spec compares them) is stale */
		if (rr.have_generation_id && ep->have_generation &&
		    (int64_t)(rr.generation_id - ep->generation) < 0)
			return OFPERR_OFPRRFC_STALE;
		if (rr.have_generation_id) {
			ep->generation = rr.generation_id;
			ep->have_generation = true;
		}
	}
	if (rr.role == OFPCR12_ROLE_PRIMARY) /* one master (6.3.5) */
		for (struct ofp_session *o = ep->sessions; o; o = o->next)
			if (o != s && o->role == OFPCR12_ROLE_PRIMARY)
				o->role = OFPCR12_ROLE_SECONDARY;
	if (rr.role != OFPCR12_ROLE_NOCHANGE)
		s->role = rr.role;
	reply.role = s->role;
	reply.have_generation_id = ep->have_generation;
	reply.generation_id = ep->generation;
	ofp_send(s, ofputil_encode_role_reply(oh, &reply));
	ofp_update_mode(ep);
	return 0;
}

static enum ofperr
set_config(struct zn_ofp *ep, struct ofp_session *s,
	   const struct ofp_header *oh)
{
	struct ofputil_switch_config cfg;
	enum ofperr err = ofputil_decode_set_config(oh, &cfg);

	if (err != 0)
		return err;
	s->miss_send_len = cfg.miss_send_len;
	s->frag = (uint16_t)cfg.frag;
	if (s->target < 0 && cfg.miss_send_len > 0 &&
	    s->async.primary[OAM_PACKET_IN] == 0) {
		/* a passive connection asking for packet-ins (Open vSwitch's
		 * service connections: ovs-ofctl monitor does this) */
		s->async.primary[OAM_PACKET_IN] = ALL_PACKET_IN;
		ofp_update_mode(ep);
	}
	return 0;
}

/* Messages a slave may not send (OpenFlow 1.3 section 6.3.5). */
static bool
is_write(enum ofptype t)
{
	return t == OFPTYPE_FLOW_MOD || t == OFPTYPE_PACKET_OUT ||
	       t == OFPTYPE_GROUP_MOD || t == OFPTYPE_PORT_MOD ||
	       t == OFPTYPE_TABLE_MOD || t == OFPTYPE_METER_MOD ||
	       t == OFPTYPE_SET_CONFIG;
}

int
ofp_handle(struct zn_ofp *ep, struct ofp_session *s,
	   const struct ofp_header *oh)
{
	struct ofputil_switch_features feat;
	struct ofputil_switch_config cfg;
	struct ofputil_async_cfg ac;
	enum ofperr err;
	enum ofptype t;

	if (oh->type == OFPT_HELLO) {
		uint32_t allowed = 0;

		if (!ofputil_decode_hello(oh, &allowed) ||
		    !(allowed & (1u << OFP13_VERSION))) {
			ofp_send(s, ofperr_encode_hello(
				OFPERR_OFPHFC_INCOMPATIBLE, OFP13_VERSION,
				"ZeroNF speaks OpenFlow 1.3 only"));
			return -1;
		}
		s->hello = true;
		ofp_update_mode(ep);
		return 0;
	}
	if (!s->hello || oh->version != OFP13_VERSION) {
		ofp_send_error(s, OFPERR_OFPBRC_BAD_VERSION, oh);
		return s->hello ? 0 : -1;
	}
	err = ofptype_decode(&t, oh);
	if (err != 0) {
		ofp_send_error(s, err, oh);
		return 0;
	}
	if (t != OFPTYPE_FLOW_MOD)
		ofp_commit(ep); /* what follows sees every mod before it */
	if (is_write(t) && s->role == OFPCR12_ROLE_SECONDARY) {
		ofp_send_error(s, OFPERR_OFPBRC_IS_SECONDARY, oh);
		return 0;
	}
	switch (t) {
	case OFPTYPE_ECHO_REQUEST:
		ofp_send(s, ofputil_encode_echo_reply(oh));
		break;
	case OFPTYPE_ECHO_REPLY:
		break;
	case OFPTYPE_FEATURES_REQUEST:
		memset(&feat, 0, sizeof(feat));
		feat.datapath_id = ep->dpid;
		feat.n_buffers = N_BUFFERS;
		feat.n_tables = 1;
		feat.capabilities = OFPUTIL_C_FLOW_STATS |
				    OFPUTIL_C_TABLE_STATS |
				    OFPUTIL_C_PORT_STATS;
		ofp_send(s, ofputil_encode_switch_features(&feat, PROTO,
							   oh->xid));
		break;
	case OFPTYPE_GET_CONFIG_REQUEST:
		cfg = (struct ofputil_switch_config){
			.frag = s->frag, .invalid_ttl_to_controller = -1,
			.miss_send_len = s->miss_send_len };
		ofp_send(s, ofputil_encode_get_config_reply(oh, &cfg));
		break;
	case OFPTYPE_SET_CONFIG:
		err = set_config(ep, s, oh);
		break;
	case OFPTYPE_BARRIER_REQUEST:
		/* everything before it answered and in force (committed) */
		ofp_send(s, ofpraw_alloc_reply(OFPRAW_OFPT11_BARRIER_REPLY,
					       oh, 0));
		break;
	case OFPTYPE_ROLE_REQUEST:
		err = role_request(ep, s, oh);
		break;
	case OFPTYPE_GET_ASYNC_REQUEST:
		ofp_send(s, ofputil_encode_get_async_reply(oh, &s->async));
		break;
	case OFPTYPE_SET_ASYNC_CONFIG:
		err = ofputil_decode_set_async_config(oh, false, &s->async,
						      &ac);
		if (err == 0) {
			s->async = ac;
			ofp_update_mode(ep);
		}
		break;
	case OFPTYPE_FLOW_MOD:
		err = flow_mod(ep, oh);
		break;
	case OFPTYPE_PACKET_OUT:
		err = packet_out(ep, oh);
		break;
	case OFPTYPE_DESC_STATS_REQUEST:
		desc(ep, s, oh);
		break;
	case OFPTYPE_PORT_DESC_STATS_REQUEST:
		port_desc(ep, s, oh);
		break;
	case OFPTYPE_PORT_STATS_REQUEST:
		err = port_stats(ep, s, oh);
		break;
	case OFPTYPE_TABLE_STATS_REQUEST:
		err = table_stats(ep, s, oh);
		break;
	case OFPTYPE_TABLE_FEATURES_STATS_REQUEST:
		err = table_features_request(ep, s, oh);
		break;
	case OFPTYPE_FLOW_STATS_REQUEST:
	case OFPTYPE_AGGREGATE_STATS_REQUEST:
		err = flow_stats(ep, s, oh);
		break;
	case OFPTYPE_GROUP_MOD:
		err = group_mod(ep, oh);
		break;
	case OFPTYPE_GROUP_STATS_REQUEST:
		err = group_stats(ep, s, oh, false);
		break;
	case OFPTYPE_GROUP_DESC_STATS_REQUEST:
		err = group_stats(ep, s, oh, true);
		break;
	case OFPTYPE_GROUP_FEATURES_STATS_REQUEST:
		group_features(s, oh);
		break;
	default:
		/* docs/sdn.md: what is not supported */
		err = oh->type == OFPT13_MULTIPART_REQUEST ?
		      OFPERR_OFPBRC_BAD_STAT : OFPERR_OFPBRC_BAD_TYPE;
		break;
	}
	if (err != 0)
		ofp_send_error(s, err, oh);
	return 0;
}

/* ---- async messages ---- */

struct ofpbuf *
ofp_encode_packet_in(const struct zn_oft_packet_in *pi)
{
	struct ofputil_packet_in_private pin;
	struct ofp12_packet_in *opi;
	struct ofpbuf *b;

	memset(&pin, 0, sizeof(pin));
	pin.base.packet = (void *)(uintptr_t)pi->data;
	pin.base.packet_len = pi->len;
	match_init_catchall(&pin.base.flow_metadata);
	match_set_in_port(&pin.base.flow_metadata, port16(pi->in_port));
	pin.base.reason = pi->reason;
	pin.base.table_id = 0;
	pin.base.cookie = to_be64(pi->cookie);
	b = ofputil_encode_packet_in_private(&pin, PROTO,
					     OFPUTIL_PACKET_IN_STD);
	/* the codec buffers nothing (Open vSwitch does not): the buffer id
	 * and the whole packet's length are the table's */
	opi = (struct ofp12_packet_in *)((uint8_t *)b->data +
					 sizeof(struct ofp_header));
	opi->buffer_id = htonl(pi->buffer_id);
	opi->total_len = htons((uint16_t)pi->total_len);
	return b;
}

struct ofpbuf *
ofp_encode_flow_removed(const struct zn_oft_entry_info *e, uint8_t reason)
{
	struct ofputil_flow_removed fr;

	memset(&fr, 0, sizeof(fr));
	ofp_match_from_key(&e->value, &e->mask, &fr.match);
	fr.cookie = to_be64(e->cookie);
	fr.priority = e->priority;
	fr.reason = reason;
	fr.table_id = 0;
	fr.duration_sec = (uint32_t)(e->duration_ns / 1000000000ULL);
	fr.duration_nsec = (uint32_t)(e->duration_ns % 1000000000ULL);
	fr.idle_timeout = e->idle_timeout;
	fr.hard_timeout = e->hard_timeout;
	fr.packet_count = e->packets;
	fr.byte_count = e->bytes;
	return ofputil_encode_flow_removed(&fr, PROTO);
}
