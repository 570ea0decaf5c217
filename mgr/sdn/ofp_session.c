/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow endpoint's sessions as the message handlers see them
 * (ofp_pvt.h): a connection's output queue, which async messages it takes,
 * and what follows from who is connected (the table's mode) or from what
 * they sent (flow mods committed). Below both ofp.c (connections) and
 * ofp_msgs.c (messages): it calls neither.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openvswitch/ofp-errors.h>
#include <openvswitch/ofp-msgs.h>
#include <openvswitch/ofpbuf.h>
#include <openflow/openflow-1.2.h>

#include "oft.h"
#include "ofp_pvt.h"

/* A connection that failed is closed by the reaper (on_wake), after the
 * callback that found it out: a handler may be running for it, or
 * iterating over the connections. */
void
ofp_session_fail(struct ofp_session *s)
{
	s->broken = true;
	s->closing = true;
}

/* ---- output ---- */

static int
tx_room(struct ofp_session *s, size_t n)
{
	if (s->tx_off > 0 && s->tx_off == s->tx_len)
		s->tx_off = s->tx_len = 0;
	if (s->tx_len + n > s->tx_cap) {
		size_t cap = s->tx_cap ? s->tx_cap : 65536;
		uint8_t *p;

		if (s->tx_off > 0) { /* the written part goes first */
			memmove(s->tx, s->tx + s->tx_off,
				s->tx_len - s->tx_off);
			s->tx_len -= s->tx_off;
			s->tx_off = 0;
		}
		while (s->tx_len + n > cap)
			cap *= 2;
		if (cap != s->tx_cap) {
			p = realloc(s->tx, cap);
			if (p == NULL)
				return -ENOMEM;
			s->tx = p;
			s->tx_cap = cap;
		}
	}
	return 0;
}

void
ofp_tx_put(struct ofp_session *s, const void *p, size_t n)
{
	if (s->fd < 0 || s->closing)
		return;
	if (tx_room(s, n) < 0) {
		ofp_session_fail(s);
		return;
	}
	memcpy(s->tx + s->tx_len, p, n);
	s->tx_len += n;
	s->msgs_out++;
}

void
ofp_send(struct ofp_session *s, struct ofpbuf *msg)
{
	if (msg == NULL)
		return;
	ofpmsg_update_length(msg);
	ofp_tx_put(s, msg->data, msg->size);
	ofpbuf_delete(msg);
}

void
ofp_send_error(struct ofp_session *s, int ofperr, const struct ofp_header *oh)
{
	ofp_send(s, ofperr_encode_reply((enum ofperr)ofperr, oh));
}

/* The reasons for which @p s takes async messages of type @p oam (its
 * role's half of its async configuration); none before HELLO or once
 * closing. */
static uint32_t
async_mask(const struct ofp_session *s, int oam)
{
	if (!s->hello || s->closing)
		return 0;
	return (s->role == OFPCR12_ROLE_SECONDARY ? s->async.secondary :
						    s->async.primary)[oam];
}

static bool
wants(const struct ofp_session *s, int oam, unsigned int reason)
{
	return reason < 32 && (async_mask(s, oam) & (1u << reason)) != 0;
}

bool
ofp_takes(const struct ofp_session *s, int oam)
{
	return async_mask(s, oam) != 0;
}

unsigned int
ofp_fan_out(struct zn_ofp *ep, struct ofpbuf *msg, int oam,
	    unsigned int reason)
{
	unsigned int n = 0;

	ofpmsg_update_length(msg);
	for (struct ofp_session *s = ep->sessions; s != NULL; s = s->next) {
		if (!wants(s, oam, reason))
			continue;
		if (s->tx_len - s->tx_off > OFP_TX_ASYNC_MAX) {
			s->async_dropped++;
			continue;
		}
		ofp_tx_put(s, msg->data, msg->size);
		n++;
	}
	ofpbuf_delete(msg);
	return n;
}

/* ---- the table's mode ---- */

void
ofp_update_mode(struct zn_ofp *ep)
{
	bool ctl = false, takers = false, on;

	for (struct ofp_session *s = ep->sessions; s != NULL; s = s->next) {
		ctl |= s->target >= 0 && s->hello;
		takers |= ofp_takes(s, OAM_PACKET_IN);
	}
	on = ep->configured &&
	     (ctl || ep->n_targets == 0 || !ep->standalone);
	zn_oft_set_mode(ep->m, on, takers);
}

void
ofp_commit(struct zn_ofp *ep)
{
	if (ep->mods_pending) {
		zn_oft_commit(ep->m);
		ep->mods_pending = false;
	}
}

