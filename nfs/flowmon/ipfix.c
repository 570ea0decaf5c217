/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* flowmon's IPFIX export (RFC 7011) over UDP: one template per IP version,
 * the reverse direction as RFC 5103's reverse elements, templates again
 * in every message sent a second or more after the last (a collector may
 * have missed them). */

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "flowmon.h"

/* IPFIX flowEndReason (IANA) by enum fm_end: idle timeout 1, end of flow
 * 3, forced end 4 */
static const uint8_t end_ipfix[] = { 4, 1, 3, 3 };

#define PEN_REVERSE 29305u /* RFC 5103 reverse information elements */
#define TMPL_V4 256
#define TMPL_V6 257

struct ie {
	uint16_t id, len;
	bool rev;
};

/* The record layout (both templates; addresses 4 or 16 bytes). */
static const struct ie ies_v4[] = {
	{ 8, 4, false }, { 12, 4, false }, { 7, 2, false }, { 11, 2, false },
	{ 4, 1, false }, { 58, 2, false }, { 152, 8, false }, { 153, 8, false },
	{ 2, 8, false }, { 1, 8, false }, { 6, 2, false },
	{ 2, 8, true }, { 1, 8, true }, { 6, 2, true }, { 136, 1, false },
};
static const struct ie ies_v6[] = {
	{ 27, 16, false }, { 28, 16, false }, { 7, 2, false }, { 11, 2, false },
	{ 4, 1, false }, { 58, 2, false }, { 152, 8, false }, { 153, 8, false },
	{ 2, 8, false }, { 1, 8, false }, { 6, 2, false },
	{ 2, 8, true }, { 1, 8, true }, { 6, 2, true }, { 136, 1, false },
};
#define N_IES (sizeof(ies_v4) / sizeof(ies_v4[0]))


static inline uint8_t *
put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
	return p + 2;
}

static inline uint8_t *
put32(uint8_t *p, uint32_t v)
{
	return put16(put16(p, (uint16_t)(v >> 16)), (uint16_t)v);
}

static inline uint8_t *
put64(uint8_t *p, uint64_t v)
{
	return put32(put32(p, (uint32_t)(v >> 32)), (uint32_t)v);
}

static void
close_set(struct fm_ipfix *x)
{
	if (x->set_off != 0)
		put16(x->msg + x->set_off + 2,
		      (uint16_t)(x->msg_len - x->set_off));
	x->set_off = 0;
}

void
fm_ipfix_flush(struct flowmon *fm)
{
	struct fm_ipfix *x = &fm->ipfix;
	struct timespec ts;

	if (x->msg_len == 0)
		return;
	close_set(x);
	clock_gettime(CLOCK_REALTIME, &ts);
	put16(x->msg, 10);
	put16(x->msg + 2, (uint16_t)x->msg_len);
	put32(x->msg + 4, (uint32_t)ts.tv_sec);
	put32(x->msg + 8, x->seq);
	put32(x->msg + 12, x->odid);
	if (send(x->fd, x->msg, x->msg_len, 0) < 0)
		fm->tally.v[C_IPFIX_ERR]++;
	else
		fm->tally.v[C_IPFIX_MSGS]++;
	x->msg_len = 0;
}

static void
add_template(struct fm_ipfix *x, uint16_t id, const struct ie *ies)
{
	uint8_t *p = x->msg + x->msg_len;

	p = put16(p, 2); /* template set */
	p = put16(p, (uint16_t)(4 + 4 + N_IES * 4 + 4 * 3));
	p = put16(p, id);
	p = put16(p, N_IES);
	for (size_t i = 0; i < N_IES; i++) {
		p = put16(p, (uint16_t)(ies[i].id | (ies[i].rev ? 0x8000 : 0)));
		p = put16(p, ies[i].len);
		if (ies[i].rev)
			p = put32(p, PEN_REVERSE);
	}
	x->msg_len = (size_t)(p - x->msg);
}

/* Open a message; templates go first in every one sent a second or more
 * after the last (UDP: a collector may have missed them). */
static void
open_msg(struct flowmon *fm)
{
	struct fm_ipfix *x = &fm->ipfix;

	x->msg_len = 16;
	if (fm->fr.last_ms >= x->last_tmpl + 1000 || x->last_tmpl == 0) {
		add_template(x, TMPL_V4, ies_v4);
		add_template(x, TMPL_V6, ies_v6);
		x->last_tmpl = fm->fr.last_ms ? fm->fr.last_ms : 1;
	}
}

void
fm_ipfix_record(struct flowmon *fm, const struct fm_rec *r, enum fm_end why)
{
	struct fm_ipfix *x = &fm->ipfix;
	bool v6 = r->c.first.ip_version == 6;
	uint16_t tmpl = v6 ? TMPL_V6 : TMPL_V4;
	/* addresses, ports, proto, vlan, start, end, 3 + 3 counters, reason */
	size_t rl = (v6 ? 32 : 8) + 2 + 2 + 1 + 2 + 8 + 8 + 8 + 8 + 2 + 8 + 8 +
		    2 + 1;
	uint8_t *p;

	if (x->msg_len != 0 && x->msg_len + rl + 4 > FM_MSG_MAX)
		fm_ipfix_flush(fm);
	if (x->msg_len == 0)
		open_msg(fm);
	if (x->set_off == 0 || x->set_tmpl != tmpl) {
		close_set(x);
		x->set_off = x->msg_len;
		x->set_tmpl = tmpl;
		put16(x->msg + x->msg_len, tmpl);
		x->msg_len += 4;
	}
	p = x->msg + x->msg_len;
	memcpy(p, r->c.first.src, v6 ? 16 : 4);
	p += v6 ? 16 : 4;
	memcpy(p, r->c.first.dst, v6 ? 16 : 4);
	p += v6 ? 16 : 4;
	p = put16(p, r->c.first.src_port);
	p = put16(p, r->c.first.dst_port);
	*p++ = r->c.first.proto;
	p = put16(p, r->c.first.vlan);
	p = put64(p, r->c.first_ms);
	p = put64(p, r->c.last_ms);
	p = put64(p, r->c.pkts[0]);
	p = put64(p, r->c.bytes[0]);
	p = put16(p, r->flags[0]);
	p = put64(p, r->c.pkts[1]);
	p = put64(p, r->c.bytes[1]);
	p = put16(p, r->flags[1]);
	*p++ = end_ipfix[why];
	x->msg_len = (size_t)(p - x->msg);
}

int
fm_ipfix_open(struct flowmon *fm, const char *hostport)
{
	char host[256], *colon;
	struct addrinfo hints = { .ai_socktype = SOCK_DGRAM }, *ai;
	int rc;

	snprintf(host, sizeof(host), "%s", hostport);
	colon = strrchr(host, ':');
	if (colon == NULL)
		return -EINVAL;
	*colon = '\0';
	rc = getaddrinfo(host[0] == '[' ? host + 1 : host, colon + 1, &hints,
			 &ai);
	if (rc != 0) {
		fprintf(stderr, "flowmon: %s: %s\n", hostport, gai_strerror(rc));
		return -EINVAL;
	}
	fm->ipfix.fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fm->ipfix.fd < 0 ||
	    connect(fm->ipfix.fd, ai->ai_addr, ai->ai_addrlen) < 0)
		rc = -errno;
	freeaddrinfo(ai);
	return rc;
}

