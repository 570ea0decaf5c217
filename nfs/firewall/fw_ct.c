/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Connection tracking (fw_ct.h). A connection is one entry of a private
 * array and two keys in an rte_hash (its original tuple and its reply
 * tuple, each naming the entry and the direction), so a packet of either
 * direction is found with one lookup. Expiry is lazy (a packet that
 * finds an expired entry removes it) plus a slice of the table per tick.
 *
 * The TCP state machine is the kernel's as observable from its rules
 * (its transition table, written out below from the behaviour
 * nf_conntrack_proto_tcp.c documents: which packet moves a connection
 * where, which are ignored, which are invalid), with the kernel's
 * default tcp_loose=1 (an ACK of an unknown connection picks it up) and
 * without window tracking (as its tcp_be_liberal=1 but for the checks
 * that need no window: an RST before what the other side acknowledged,
 * a SYN/ACK answering an ignored SYN).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <zeronf/zeronf.h>

#include "fw_ct.h"
#include "fw_rules.h"

const char *const fw_ct_timeout_names[FW_TO_MAX] = {
	"tcp_syn_sent", "tcp_syn_recv", "tcp_established", "tcp_fin_wait",
	"tcp_close_wait", "tcp_last_ack", "tcp_time_wait", "tcp_close",
	"udp", "udp_stream", "icmp", "generic",
};

static const uint32_t default_timeouts[FW_TO_MAX] = {
	120, 60, 432000, 120, 60, 30, 120, 10, 30, 120, 30, 600,
};

/* TCP connection states, the kernel's order. */
enum { NO, SS, SR, ES, FW, CW, LA, TW, CL, S2, N_TCP, IV = N_TCP, IG };
static const char *const tcp_names[N_TCP] = {
	"NONE", "SYN_SENT", "SYN_RECV", "ESTABLISHED", "FIN_WAIT",
	"CLOSE_WAIT", "LAST_ACK", "TIME_WAIT", "CLOSE", "SYN_SENT2",
};
/* Which timeout each state runs on. */
static const uint8_t tcp_to[N_TCP] = {
	FW_TO_SYN_SENT, FW_TO_SYN_SENT, FW_TO_SYN_RECV, FW_TO_ESTABLISHED,
	FW_TO_FIN_WAIT, FW_TO_CLOSE_WAIT, FW_TO_LAST_ACK, FW_TO_TIME_WAIT,
	FW_TO_CLOSE, FW_TO_SYN_SENT,
};

/* A segment's class: what moves the machine. */
enum { I_SYN, I_SYNACK, I_FIN, I_ACK, I_RST, I_NONE, N_IDX };

/*
 * Where a segment of each class takes a connection in each state, by
 * direction (0: the opener's, 1: the reply's). IV: invalid (the state
 * stays, the packet is INVALID); IG: ignored (the state stays, the
 * packet keeps its connection's state; a SYN/ACK that answers an ignored
 * SYN resynchronises, see tcp()).
 */
static const uint8_t tcp_next[2][N_IDX][N_TCP] = {
	{ /* from the opener; by state NO SS SR ES FW CW LA TW CL S2 */
		[I_SYN]    = { SS, SS, IG, IG, IG, IG, IG, SS, SS, S2 },
		[I_SYNACK] = { IV, IV, SR, IV, IV, IV, IV, IV, IV, SR },
		[I_FIN]    = { IV, IV, FW, FW, LA, LA, LA, TW, CL, IV },
		[I_ACK]    = { ES, IV, ES, ES, CW, CW, TW, TW, CL, IV },
		[I_RST]    = { IV, CL, CL, CL, CL, CL, CL, CL, CL, CL },
		[I_NONE]   = { IV, IV, IV, IV, IV, IV, IV, IV, IV, IV },
	},
	{ /* from the other side */
		[I_SYN]    = { IV, S2, IV, IV, IV, IV, IV, SS, IV, S2 },
		[I_SYNACK] = { IV, SR, IG, IG, IG, IG, IG, IG, IG, SR },
		[I_FIN]    = { IV, IV, FW, FW, LA, LA, LA, TW, CL, IV },
		[I_ACK]    = { IV, IG, SR, ES, CW, CW, TW, TW, CL, IG },
		[I_RST]    = { IV, CL, CL, CL, CL, CL, CL, CL, CL, CL },
		[I_NONE]   = { IV, IV, IV, IV, IV, IV, IV, IV, IV, IV },
	},
};

#define F_REPLIED 0x01
#define F_ASSURED 0x02
#define F_CLOSE_INIT0 0x04 /* a FIN started the close, per direction */
#define F_MAXACK0 0x10     /* maxack[dir] set, per direction */

struct conn {
	struct fw_tuple orig;
	uint64_t expires;      /* ns; 0: free */
	uint32_t maxack[2];    /* highest ACK each side sent */
	uint32_t last_end;     /* seq + len of the last segment */
	uint8_t tcp;           /* TCP state */
	uint8_t flags;
	uint8_t last_idx, last_dir;
	uint8_t timeout;       /* enum fw_ct_timeout */
};

struct fw_ct {
	struct rte_hash *h;
	struct zn_nf *nf;
	struct conn *c;
	uint32_t *free_list;
	uint32_t n_free, cap, gc_next;
	uint64_t to_ns[FW_TO_MAX];
	struct fw_ct_stats st;
};

#define P_TCP 6
#define P_UDP 17

int
fw_ct_create(const char *name, uint32_t capacity, struct zn_nf *nf,
	     struct fw_ct **out)
{
	struct fw_ct *ct = calloc(1, sizeof(*ct));

	if (ct == NULL || capacity == 0)
		goto nomem;
	ct->cap = capacity;
	ct->nf = nf;
	ct->c = calloc(capacity, sizeof(*ct->c));
	ct->free_list = malloc(capacity * sizeof(uint32_t));
	if (ct->c == NULL || ct->free_list == NULL)
		goto nomem;
	for (uint32_t i = 0; i < capacity; i++)
		ct->free_list[i] = capacity - 1 - i;
	ct->n_free = capacity;
	for (unsigned int i = 0; i < FW_TO_MAX; i++)
		ct->to_ns[i] = default_timeouts[i] * 1000000000ull;
	ct->h = rte_hash_create(&(struct rte_hash_parameters){
		/* two keys a connection; rte_hash wants a bucket at least */
		.name = name, .entries = RTE_MAX(2 * capacity, 64u),
		.key_len = sizeof(struct fw_tuple), .hash_func = rte_hash_crc,
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE });
	if (ct->h == NULL)
		goto nomem;
	if (nf != NULL)
		(void)zn_nf_obj_track(nf, ZN_NF_OBJ_HASH, name, ct->h);
	ct->st.capacity = capacity;
	*out = ct;
	return 0;
nomem:
	fw_ct_free(ct);
	return -ENOMEM;
}

void
fw_ct_free(struct fw_ct *ct)
{
	if (ct == NULL)
		return;
	if (ct->h != NULL) {
		if (ct->nf != NULL)
			zn_nf_obj_untrack(ct->nf, ct->h);
		rte_hash_free(ct->h);
	}
	free(ct->c);
	free(ct->free_list);
	free(ct);
}

void
fw_ct_abandon(struct fw_ct *ct)
{
	if (ct == NULL)
		return;
	free(ct->c);
	free(ct->free_list);
	free(ct);
}

void
fw_ct_set_timeout(struct fw_ct *ct, enum fw_ct_timeout which, uint32_t s)
{
	if (which < FW_TO_MAX)
		ct->to_ns[which] = s * 1000000000ull;
}

static void
del(struct fw_ct *ct, uint32_t i)
{
	struct conn *c = &ct->c[i];
	struct fw_tuple r;

	rte_hash_del_key(ct->h, &c->orig);
	if (fw_tuple_reply(&c->orig, &r))
		rte_hash_del_key(ct->h, &r);
	c->expires = 0;
	ct->free_list[ct->n_free++] = i;
	ct->st.in_use--;
}

/* The connection @p t belongs to, if alive: its index and the
 * direction of @p t in it. */
static bool
find(struct fw_ct *ct, const struct fw_tuple *t, uint64_t now,
     uint32_t *idx, unsigned int *dir)
{
	void *data;
	uintptr_t v;

	if (rte_hash_lookup_data(ct->h, t, &data) < 0)
		return false;
	v = (uintptr_t)data;
	*idx = (uint32_t)(v >> 1);
	*dir = (unsigned int)(v & 1);
	if (ct->c[*idx].expires <= now) {
		del(ct, *idx);
		ct->st.expired++;
		return false;
	}
	return true;
}

static unsigned int
tcp_index(uint8_t f)
{
	if (f & FW_TCP_RST)
		return I_RST;
	if (f & FW_TCP_SYN)
		return (f & FW_TCP_ACK) ? I_SYNACK : I_SYN;
	if (f & FW_TCP_FIN)
		return I_FIN;
	if (f & FW_TCP_ACK)
		return I_ACK;
	return I_NONE;
}

/* Serial number arithmetic (RFC 1982): a before b. */
static inline bool
before(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static uint32_t
seg_end(const struct fw_pkt *k)
{
	return k->seq + k->payload + !!(k->tcp_flags & FW_TCP_SYN) +
	       !!(k->tcp_flags & FW_TCP_FIN);
}

/* What a connection's first packet makes of it: the state it opens in,
 * or IV. */
static uint8_t
first_state(const struct fw_pkt *k)
{
	if (k->proto == P_TCP)
		return tcp_next[0][tcp_index(k->tcp_flags)][NO];
	if (k->proto == (k->family == 4 ? 1 : 58))
		return fw_icmp_is_query(k->family, k->icmp_type) ? NO : IV;
	return NO;
}

static void
pend(const struct fw_pkt *k, uint8_t tcp, struct fw_ct_res *res)
{
	res->state = FW_CT_NEW;
	res->pending = true;
	res->tcp_state = tcp;
	res->t = k->t;
}

/* A TCP segment of connection @p i, direction @p dir. @return the
 * packet's state, or 0: the connection is gone, look again as new. */
static uint8_t
tcp(struct fw_ct *ct, uint32_t i, unsigned int dir, const struct fw_pkt *k,
    uint8_t state)
{
	struct conn *c = &ct->c[i];
	unsigned int idx = tcp_index(k->tcp_flags);
	uint8_t old = c->tcp, nw = tcp_next[dir][idx][old];

	if (nw == SS && old >= TW) {
		/* A SYN on a closed connection: reopened if it was closed
		 * by a FIN, or reset by this side (RFC 1122 4.2.2.13) */
		if ((c->flags & (F_CLOSE_INIT0 | F_CLOSE_INIT0 << 1)) ||
		    (c->last_dir == dir && c->last_idx == I_RST)) {
			del(ct, i);
			ct->st.reopened++;
			return 0;
		}
		nw = IG;
	}
	if (nw == IG) {
		if (idx == I_SYNACK && c->last_idx == I_SYN &&
		    c->last_dir != dir && k->ack == c->last_end) {
			/* answers a SYN we ignored: both ends are in sync,
			 * we were not */
			nw = SR;
		} else {
			c->last_idx = (uint8_t)idx;
			c->last_dir = (uint8_t)dir;
			c->last_end = seg_end(k);
			return state;
		}
	}
	if (nw == IV)
		return FW_CT_INVALID;
	if (nw == CL && idx == I_RST) {
		if ((c->flags & (F_MAXACK0 << !dir)) &&
		    before(k->seq, c->maxack[!dir]))
			return FW_CT_INVALID; /* before what was acked */
		if ((((c->flags & F_REPLIED) && c->last_idx == I_SYN) ||
		     (!(c->flags & F_ASSURED) && c->last_idx == I_ACK)) &&
		    (k->tcp_flags & FW_TCP_ACK) && k->ack == c->last_end) {
			/* resets what we let through as a pick-up: gone */
			del(ct, i);
			ct->st.deleted++;
			return FW_CT_INVALID;
		}
	}
	if (k->tcp_flags & FW_TCP_ACK) {
		if (!(c->flags & (F_MAXACK0 << dir)) ||
		    before(c->maxack[dir], k->ack))
			c->maxack[dir] = k->ack;
		c->flags |= (uint8_t)(F_MAXACK0 << dir);
	}
	if (nw == FW && old != FW)
		c->flags |= (uint8_t)(F_CLOSE_INIT0 << dir);
	c->tcp = nw;
	if (!(c->flags & F_REPLIED) && idx == I_RST) {
		/* reset before any reply: no connection was made */
		del(ct, i);
		ct->st.deleted++;
		return state;
	}
	if ((c->flags & F_REPLIED) && (old == SR || old == ES) && nw == ES)
		c->flags |= F_ASSURED;
	c->timeout = tcp_to[nw];
	c->last_idx = (uint8_t)idx;
	c->last_dir = (uint8_t)dir;
	c->last_end = seg_end(k);
	return state;
}

void
fw_ct_in(struct fw_ct *ct, const struct fw_pkt *k, uint64_t now,
	 struct fw_ct_res *res)
{
	uint32_t i;
	unsigned int dir;
	uint8_t icmp = k->family == 4 ? 1 : 58;

	res->pending = false;
	res->state = FW_CT_INVALID;
	if (k->l4_err != FW_L4_OK || (k->frag && !k->frag_first))
		return;
	if (k->proto == icmp) {
		if (k->family == 4 && k->icmp_type > 18)
			return;
		/* neighbour discovery and MLD: link-local signalling the
		 * kernel does not track (nor find invalid) */
		if (k->family == 6 && ((k->icmp_type >= 130 &&
					k->icmp_type <= 136) ||
				       k->icmp_type == 143)) {
			res->state = FW_CT_UNTRACKED;
			return;
		}
		if (k->icmp_error) {
			unsigned int len = k->family == 4 ? 4 : 16;

			/* related: a reply to a packet of a connection,
			 * sent back to that packet's source */
			if (k->inner_ok && memcmp(k->t.dst, k->inner.src,
						   len) == 0 &&
			    find(ct, &k->inner, now, &i, &dir)) {
				ct->st.found++;
				res->state = FW_CT_RELATED;
			}
			return;
		}
	}
	for (unsigned int again = 0; again < 2; again++) {
		struct conn *c;
		uint8_t st;

		if (!find(ct, &k->t, now, &i, &dir)) {
			uint8_t s0 = first_state(k);

			if (s0 != IV)
				pend(k, s0, res);
			return;
		}
		ct->st.found++;
		c = &ct->c[i];
		st = dir == 1 || (c->flags & F_REPLIED) ? FW_CT_ESTABLISHED :
							   FW_CT_NEW;
		if (k->proto == P_TCP) {
			st = tcp(ct, i, dir, k, st);
			if (st == 0)
				continue; /* reopened: a new connection */
			res->state = st;
			if (st == FW_CT_INVALID || c->expires == 0)
				return; /* or gone (reset) */
		}
		/* a valid reply: the connection has seen one */
		if (dir == 1)
			c->flags |= F_REPLIED;
		if (k->proto == P_UDP) {
			c->timeout = (c->flags & F_REPLIED) ? FW_TO_UDP_STREAM :
							      FW_TO_UDP;
		}
		c->expires = now + ct->to_ns[c->timeout];
		res->state = st;
		return;
	}
}

int
fw_ct_confirm(struct fw_ct *ct, const struct fw_ct_res *res, uint64_t now)
{
	struct fw_tuple r;
	struct conn *c;
	uint32_t i;
	unsigned int dir;

	if (!res->pending)
		return 0;
	/* made since by a packet of the same burst: nothing to do */
	if (find(ct, &res->t, now, &i, &dir))
		return 0;
	if (ct->n_free == 0) {
		fw_ct_gc(ct, now, ct->cap);
		if (ct->n_free == 0) {
			ct->st.full++;
			return -ENOSPC;
		}
	}
	i = ct->free_list[--ct->n_free];
	c = &ct->c[i];
	memset(c, 0, sizeof(*c));
	c->orig = res->t;
	c->tcp = res->tcp_state;
	if (res->t.proto == P_TCP) {
		c->timeout = tcp_to[c->tcp];
		c->last_idx = c->tcp == SS ? I_SYN : I_ACK;
	} else if (res->t.proto == P_UDP) {
		c->timeout = FW_TO_UDP;
	} else if (res->t.proto == (res->t.family == 4 ? 1 : 58)) {
		c->timeout = FW_TO_ICMP;
	} else {
		c->timeout = FW_TO_GENERIC;
	}
	if (rte_hash_add_key_data(ct->h, &c->orig,
				  (void *)(uintptr_t)((uintptr_t)i << 1)) < 0)
		goto full;
	if (fw_tuple_reply(&c->orig, &r) &&
	    rte_hash_add_key_data(ct->h, &r,
				  (void *)(uintptr_t)((uintptr_t)i << 1 | 1))
		    < 0) {
		rte_hash_del_key(ct->h, &c->orig);
		goto full;
	}
	c->expires = now + ct->to_ns[c->timeout];
	ct->st.in_use++;
	ct->st.created++;
	return 0;
full:
	ct->free_list[ct->n_free++] = i;
	ct->st.full++;
	return -ENOSPC;
}

void
fw_ct_gc(struct fw_ct *ct, uint64_t now, uint32_t budget)
{
	for (uint32_t n = 0; n < budget && n < ct->cap; n++) {
		uint32_t i = ct->gc_next;

		ct->gc_next = (ct->gc_next + 1) % ct->cap;
		if (ct->c[i].expires != 0 && ct->c[i].expires <= now) {
			del(ct, i);
			ct->st.expired++;
		}
	}
}

void
fw_ct_flush(struct fw_ct *ct)
{
	for (uint32_t i = 0; i < ct->cap; i++)
		if (ct->c[i].expires != 0) {
			del(ct, i);
			ct->st.deleted++;
		}
}

void
fw_ct_get_stats(const struct fw_ct *ct, struct fw_ct_stats *s)
{
	*s = ct->st;
}

bool
fw_ct_entry(const struct fw_ct *ct, uint32_t i, uint64_t now,
	    struct fw_tuple *t, const char **tcp_state, uint64_t *left_s,
	    bool *replied)
{
	const struct conn *c;

	if (i >= ct->cap)
		return false;
	c = &ct->c[i];
	if (c->expires == 0 || c->expires <= now)
		return false;
	*t = c->orig;
	*tcp_state = c->orig.proto == P_TCP ? tcp_names[c->tcp] : "";
	*left_s = (c->expires - now) / 1000000000ull;
	*replied = (c->flags & F_REPLIED) != 0;
	return true;
}
