/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The NAT's sessions (nat_table.h): an rte_hash of both directions'
 * tuples over a private array; timeouts as the kernel's conntrack's
 * defaults, a session's TCP close seen from its FINs and RSTs. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <zeronf/zeronf.h>

#include "nat_table.h"

const char *const nat_timeout_names[NAT_TO_MAX] = {
	"tcp_syn", "tcp_established", "tcp_fin", "tcp_rst", "udp",
	"udp_stream", "icmp", "generic",
};

static const uint32_t default_s[NAT_TO_MAX] = {
	120, 432000, 120, 10, 30, 120, 30, 600,
};

int
nat_table_create(struct nat_table *t, const char *name, uint32_t cap,
		 struct zn_nf *nf)
{
	memset(t, 0, sizeof(*t));
	t->cap = cap;
	t->nf = nf;
	for (unsigned int i = 0; i < NAT_TO_MAX; i++)
		t->to_ns[i] = default_s[i] * 1000000000ull;
	t->s = calloc(cap, sizeof(*t->s));
	t->free_list = malloc(cap * sizeof(*t->free_list));
	if (t->s == NULL || t->free_list == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < cap; i++)
		t->free_list[i] = cap - 1 - i;
	t->n_free = cap;
	t->h = rte_hash_create(&(struct rte_hash_parameters){
		.name = name, .entries = RTE_MAX(2 * cap, 64u),
		.key_len = sizeof(struct nat_tuple),
		.hash_func = rte_hash_crc, .socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE });
	if (t->h == NULL)
		return -ENOMEM;
	if (nf != NULL)
		(void)zn_nf_obj_track(nf, ZN_NF_OBJ_HASH, name, t->h);
	return 0;
}

void
nat_table_free(struct nat_table *t)
{
	if (t->h != NULL) {
		if (t->nf != NULL)
			zn_nf_obj_untrack(t->nf, t->h);
		rte_hash_free(t->h);
	}
	free(t->s);
	free(t->free_list);
	memset(t, 0, sizeof(*t));
}

void
nat_table_abandon(struct nat_table *t)
{
	free(t->s);
	free(t->free_list);
	memset(t, 0, sizeof(*t));
}

static void
del(struct nat_table *t, uint32_t i)
{
	struct nat_sess *s = &t->s[i];
	struct nat_tuple r = nat_reply(&s->xlat);

	rte_hash_del_key(t->h, &s->orig);
	rte_hash_del_key(t->h, &r);
	s->expires = 0;
	t->free_list[t->n_free++] = i;
	t->in_use--;
}

bool
nat_find(struct nat_table *t, const struct nat_tuple *k, uint64_t now,
	 uint32_t *idx, unsigned int *dir)
{
	void *data;

	if (rte_hash_lookup_data(t->h, k, &data) < 0)
		return false;
	*idx = (uint32_t)((uintptr_t)data >> 1);
	*dir = (unsigned int)((uintptr_t)data & 1);
	if (t->s[*idx].expires <= now) {
		del(t, *idx);
		return false;
	}
	return true;
}

bool
nat_reply_used(struct nat_table *t, const struct nat_tuple *r, uint64_t now)
{
	uint32_t i;
	unsigned int d;

	return nat_find(t, r, now, &i, &d);
}

static uint8_t
first_timeout(uint8_t proto)
{
	return proto == 6 ? NAT_TO_TCP_SYN : proto == 17 ? NAT_TO_UDP :
	       proto == 1 ? NAT_TO_ICMP : NAT_TO_GENERIC;
}

int
nat_add(struct nat_table *t, const struct nat_tuple *orig,
	const struct nat_tuple *xlat, bool dnat, uint64_t now)
{
	struct nat_tuple r = nat_reply(xlat);
	struct nat_sess *s;
	uint32_t i;

	if (t->n_free == 0) {
		nat_gc(t, now, t->cap);
		if (t->n_free == 0)
			return -ENOSPC;
	}
	i = t->free_list[--t->n_free];
	s = &t->s[i];
	memset(s, 0, sizeof(*s));
	s->orig = *orig;
	s->xlat = *xlat;
	s->dnat = dnat;
	s->seen = 1;
	s->timeout = first_timeout(orig->proto);
	if (rte_hash_add_key_data(t->h, &s->orig,
				  (void *)(uintptr_t)((uintptr_t)i << 1)) < 0)
		goto full;
	if (rte_hash_add_key_data(t->h, &r,
				  (void *)(uintptr_t)((uintptr_t)i << 1 | 1))
	    < 0) {
		rte_hash_del_key(t->h, &s->orig);
		goto full;
	}
	s->expires = now + t->to_ns[s->timeout];
	t->in_use++;
	t->made++;
	return (int)i;
full:
	t->free_list[t->n_free++] = i;
	return -ENOSPC;
}

void
nat_touch(struct nat_table *t, uint32_t i, unsigned int dir, uint8_t flags,
	  uint64_t now)
{
	struct nat_sess *s = &t->s[i];

	s->seen |= (uint8_t)(1u << dir);
	if (s->orig.proto == 6) {
		if (flags & 0x04)          /* RST */
			s->timeout = NAT_TO_TCP_RST;
		else if (flags & 0x01)     /* FIN */
			s->fin |= (uint8_t)(1u << dir);
		if (s->timeout != NAT_TO_TCP_RST)
			s->timeout = s->fin ? NAT_TO_TCP_FIN :
				     s->seen == 3 ? NAT_TO_TCP_EST :
						    NAT_TO_TCP_SYN;
	} else if (s->orig.proto == 17) {
		s->timeout = s->seen == 3 ? NAT_TO_UDP_STREAM : NAT_TO_UDP;
	}
	s->expires = now + t->to_ns[s->timeout];
}

void
nat_gc(struct nat_table *t, uint64_t now, uint32_t budget)
{
	for (uint32_t n = 0; n < budget && n < t->cap; n++) {
		uint32_t i = t->gc_next;

		t->gc_next = (t->gc_next + 1) % t->cap;
		if (t->s[i].expires != 0 && t->s[i].expires <= now)
			del(t, i);
	}
}

void
nat_flush(struct nat_table *t)
{
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->s[i].expires != 0)
			del(t, i);
}
