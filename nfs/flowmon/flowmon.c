/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * flowmon: bidirectional flow records (NetFlow/IPFIX style). Flows are
 * those of ndpiReader 4.2 (the frame parsing of the dpi NF, dpi_parse()):
 * (innermost VLAN, IP protocol, two endpoints), the client being the
 * sender of the first packet, bytes being whole frames. Each record has
 * first/last seen, packets, bytes and TCP flags per direction, and why it
 * ended: idle (expired), fin (FIN seen both ways), rst, or active (still
 * open at exit). Records go out as JSON lines (--json) and as IPFIX over
 * UDP (--ipfix HOST:PORT, RFC 7011, reverse elements of RFC 5103) when a
 * flow expires and, for all open flows, at exit. Every packet passes on.
 * See README.md.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <zeronf/zeronf.h>

#include "../dpi/dpi.h"
#include "../dpi/frames.h"

enum end_reason { END_ACTIVE, END_IDLE, END_FIN, END_RST };
static const char *const end_names[] = { "active", "idle", "fin", "rst" };
/* IPFIX flowEndReason (IANA): idle timeout 1, end of flow 3, forced 4 */
static const uint8_t end_ipfix[] = { 4, 1, 3, 3 };

struct rec {
	struct dpi_counts c;        /* first: see dpi_count() */
	uint8_t flags[2];           /* TCP flags seen, per direction */
};

enum {
	C_PACKETS, C_FLOWS, C_EXPORTED, C_ACTIVE, C_FULL, C_NOT_FLOW,
	C_IPFIX_MSGS, C_IPFIX_ERR, C_DECAP, C_FRAG_LOST, C_MAX
};
static const char *const cnames[C_MAX] = {
	"packets", "flows", "exported", "active", "table_full", "not_flow",
	"ipfix_msgs", "ipfix_errors", "decapsulated", "fragments_lost",
};

static struct frames fr = FRAMES_INIT(1u << 16, 60000);
static const char *json_path, *ipfix_addr;
static FILE *json;
static int ipfix_fd = -1;
static uint32_t ipfix_seq, ipfix_odid = 1;
static uint64_t ipfix_last_tmpl;
static struct zn_ft *ft;
static bool decap; /* --decap */
static int cidx[C_MAX];
static uint64_t cnt[C_MAX], shown[C_MAX];

/* --------------------------------------------------------------- IPFIX */

#define PEN_REVERSE 29305u /* RFC 5103 reverse information elements */
#define TMPL_V4 256
#define TMPL_V6 257
#define MSG_MAX 1400

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

static uint8_t msg[MSG_MAX];
static size_t msg_len;     /* 0: no message open */
static size_t set_off;     /* open data set's header, 0: none */
static uint16_t set_tmpl;

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
close_set(void)
{
	if (set_off != 0)
		put16(msg + set_off + 2, (uint16_t)(msg_len - set_off));
	set_off = 0;
}

static void
ipfix_flush(void)
{
	struct timespec ts;

	if (msg_len == 0)
		return;
	close_set();
	clock_gettime(CLOCK_REALTIME, &ts);
	put16(msg, 10);
	put16(msg + 2, (uint16_t)msg_len);
	put32(msg + 4, (uint32_t)ts.tv_sec);
	put32(msg + 8, ipfix_seq);
	put32(msg + 12, ipfix_odid);
	if (send(ipfix_fd, msg, msg_len, 0) < 0)
		cnt[C_IPFIX_ERR]++;
	else
		cnt[C_IPFIX_MSGS]++;
	msg_len = 0;
}

static void
add_template(uint16_t id, const struct ie *ies)
{
	uint8_t *p = msg + msg_len;

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
	msg_len = (size_t)(p - msg);
}

/* Open a message; templates go first in every one sent a second or more
 * after the last (UDP: a collector may have missed them). */
static void
open_msg(void)
{
	msg_len = 16;
	if (fr.last_ms >= ipfix_last_tmpl + 1000 || ipfix_last_tmpl == 0) {
		add_template(TMPL_V4, ies_v4);
		add_template(TMPL_V6, ies_v6);
		ipfix_last_tmpl = fr.last_ms ? fr.last_ms : 1;
	}
}

static void
ipfix_record(const struct rec *r, enum end_reason why)
{
	bool v6 = r->c.first.ip_version == 6;
	uint16_t tmpl = v6 ? TMPL_V6 : TMPL_V4;
	/* addresses, ports, proto, vlan, start, end, 3 + 3 counters, reason */
	size_t rl = (v6 ? 32 : 8) + 2 + 2 + 1 + 2 + 8 + 8 + 8 + 8 + 2 + 8 + 8 +
		    2 + 1;
	uint8_t *p;

	if (msg_len != 0 && msg_len + rl + 4 > MSG_MAX)
		ipfix_flush();
	if (msg_len == 0)
		open_msg();
	if (set_off == 0 || set_tmpl != tmpl) {
		close_set();
		set_off = msg_len;
		set_tmpl = tmpl;
		put16(msg + msg_len, tmpl);
		msg_len += 4;
	}
	p = msg + msg_len;
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
	msg_len = (size_t)(p - msg);
}

static int
ipfix_open(const char *hostport)
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
	ipfix_fd = socket(ai->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (ipfix_fd < 0 || connect(ipfix_fd, ai->ai_addr, ai->ai_addrlen) < 0)
		rc = -errno;
	freeaddrinfo(ai);
	return rc;
}

/* ------------------------------------------------------------ records */

static void
json_record(const struct rec *r, enum end_reason why)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	int af = r->c.first.ip_version == 4 ? AF_INET : AF_INET6;

	inet_ntop(af, r->c.first.src, s, sizeof(s));
	inet_ntop(af, r->c.first.dst, d, sizeof(d));
	fprintf(json, "{\"src\":\"%s\",\"sport\":%u,\"dst\":\"%s\","
		"\"dport\":%u,\"proto\":%u,\"vlan\":%u,\"first_ms\":%" PRIu64
		",\"last_ms\":%" PRIu64 ",\"pkts\":[%" PRIu64 ",%" PRIu64
		"],\"bytes\":[%" PRIu64 ",%" PRIu64 "],\"tcp_flags\":[%u,%u],"
		"\"end\":\"%s\"}\n", s, r->c.first.src_port, d,
		r->c.first.dst_port, r->c.first.proto, r->c.first.vlan, r->c.first_ms,
		r->c.last_ms, r->c.pkts[0], r->c.pkts[1], r->c.bytes[0], r->c.bytes[1],
		r->flags[0], r->flags[1], end_names[why]);
}

static enum end_reason
reason(const struct rec *r, bool expired)
{
	if ((r->flags[0] | r->flags[1]) & 0x04)
		return END_RST;
	if ((r->flags[0] & 0x01) && (r->flags[1] & 0x01))
		return END_FIN;
	return expired ? END_IDLE : END_ACTIVE;
}

static void
export(const struct rec *r, bool expired)
{
	enum end_reason why = reason(r, expired);

	if (json != NULL)
		json_record(r, why);
	if (ipfix_fd >= 0)
		ipfix_record(r, why);
	cnt[C_EXPORTED]++;
}

static void
on_expire(const struct zn_flow_key *key, void *data, void *arg)
{
	(void)key;
	(void)arg;
	export(data, true);
}

/* TCP flags of the frame's L4 header (dpi_parse found the L3 header). */
static uint8_t
tcp_flags(const struct dpi_pkt *p)
{
	const uint8_t *l3 = p->l3, *l4;
	uint32_t off;

	if (p->key.proto != 6)
		return 0;
	if (p->key.ip_version == 4) {
		off = (uint32_t)(l3[0] & 0xf) * 4;
	} else {
		off = 40; /* extension headers: not for TCP flags */
		if (l3[6] != 6)
			return 0;
	}
	if (off + 14 > p->l3_len)
		return 0;
	l4 = l3 + off;
	return l4[13];
}

/* The link type of what an EtherType names in a tunnel (GRE, Geneve):
 * IPv4, IPv6 or Ethernet (transparent bridging), else -1. */
static int
etype_dlt(uint16_t type)
{
	switch (type) {
	case 0x0800:
		return DPI_DLT_IPV4;
	case 0x86dd:
		return DPI_DLT_IPV6;
	case 0x6558:
		return DPI_DLT_EN10MB;
	default:
		return -1;
	}
}

#define DLT_IEEE802_11 105
#define DLT_IEEE802_11_RADIO 127

/* --decap: what is inside a GRE header (RFC 2784/2890; version 1:
 * PPTP's, RFC 2637), or NULL for a payload not decoded. */
static const uint8_t *
gre_inner(const uint8_t *h, uint32_t left, uint32_t *len, int *dlt)
{
	uint16_t flags, type;
	uint32_t hl = 4;

	if (left < 4)
		return NULL;
	flags = dpi_rd16(h);
	type = dpi_rd16(h + 2);
	switch (flags & 7) {
	case 0:
		hl += (flags & 0x8000 ? 4 : 0) + (flags & 0x2000 ? 4 : 0) +
		      (flags & 0x1000 ? 4 : 0); /* checksum, key, sequence */
		break;
	case 1: /* key (call id) always; sequence, acknowledgment */
		hl += 4 + (flags & 0x1000 ? 4 : 0) + (flags & 0x0080 ? 4 : 0);
		break;
	default:
		return NULL;
	}
	switch (type) {
	case 0x0800:
	case 0x86dd:
	case 0x6558:
		*dlt = etype_dlt(type);
		break;
	case 0x88be: /* ERSPAN type II (type I: no sequence, no header) */
		*dlt = DPI_DLT_EN10MB;
		hl += flags & 0x1000 ? 8 : 0;
		break;
	case 0x22eb: /* ERSPAN type III, and its optional subheader */
		*dlt = DPI_DLT_EN10MB;
		if (left < hl + 12)
			return NULL;
		hl += 12 + (h[hl + 11] & 1 ? 8 : 0);
		break;
	case 0x880b: /* PPP (PPTP): address and control, then protocol */
		if (left < hl + 4)
			return NULL;
		if (h[hl] == 0xff && h[hl + 1] == 0x03)
			hl += 2;
		if (h[hl] == 0x21 || h[hl] == 0x57) { /* compressed */
			*dlt = h[hl] == 0x21 ? DPI_DLT_IPV4 : DPI_DLT_IPV6;
			hl += 1;
		} else if (h[hl] == 0 && (h[hl + 1] == 0x21 ||
					  h[hl + 1] == 0x57)) {
			*dlt = h[hl + 1] == 0x21 ? DPI_DLT_IPV4 : DPI_DLT_IPV6;
			hl += 2;
		} else {
			return NULL;
		}
		break;
	default:
		if (type < 0x8200 || type > 0x8300)
			return NULL;
		*dlt = DLT_IEEE802_11; /* Aruba's WLAN GRE: 802.11 frames */
		break;
	}
	if (left < hl)
		return NULL;
	*len = left - hl;
	return h + hl;
}

/* The link type of a bare IP packet at @p h, or -1. */
static int
ip_dlt(const uint8_t *h, uint32_t left)
{
	if (left < 20)
		return -1;
	return h[0] >> 4 == 4 ? DPI_DLT_IPV4 :
	       h[0] >> 4 == 6 && left >= 40 ? DPI_DLT_IPV6 : -1;
}

/* GTPv1-U (3GPP TS 29.281): a G-PDU's payload, after the optional fields
 * and the extension headers. */
static const uint8_t *
gtp_inner(const uint8_t *h, uint32_t left, uint32_t *len, int *dlt)
{
	uint32_t hl = 8;

	if (left < 8 || h[0] >> 5 != 1 || !(h[0] & 0x10) || h[1] != 0xff)
		return NULL;
	if (h[0] & 0x07) {
		hl += 4;
		if (left < hl)
			return NULL;
		/* next extension header type: last byte of the 4 */
		for (uint8_t next = (h[0] & 0x04) ? h[hl - 1] : 0; next != 0;) {
			uint32_t el;

			if (left <= hl || (el = (uint32_t)h[hl] * 4) == 0 ||
			    left < hl + el)
				return NULL;
			hl += el;
			next = h[hl - 1];
		}
	}
	if ((*dlt = ip_dlt(h + hl, left - hl)) < 0)
		return NULL;
	*len = left - hl;
	return h + hl;
}

/* Teredo (RFC 4380): IPv6 after optional authentication and origin
 * indication headers; an IPv6 header whose length matches, as Zeek asks.
 * Off port 3544 (a client talks to its relay from any port), as Zeek's
 * signature: a header, or an address in the Teredo prefix 2001::/32. */
static const uint8_t *
teredo_inner(const uint8_t *h, uint32_t left, bool port, uint32_t *len,
	     int *dlt)
{
	static const uint8_t prefix[4] = { 0x20, 0x01, 0x00, 0x00 };
	uint32_t hl = 0;

	if (left >= 4 && h[0] == 0 && h[1] == 1)
		hl += 4u + h[2] + h[3] + 8 + 1;
	if (left >= hl + 8 && h[hl] == 0 && h[hl + 1] == 0)
		hl += 8;
	if (left < hl + 40 || h[hl] >> 4 != 6 ||
	    (uint32_t)dpi_rd16(h + hl + 4) + 40 != left - hl)
		return NULL;
	if (!port && hl == 0 && memcmp(h + 8, prefix, 4) != 0 &&
	    memcmp(h + 24, prefix, 4) != 0)
		return NULL;
	*dlt = DPI_DLT_IPV6;
	*len = left - hl;
	return h + hl;
}

/* AYIYA (draft-massar-v6ops-ayiya): forwarded IPv4 or IPv6, after the
 * identity and the signature. */
static const uint8_t *
ayiya_inner(const uint8_t *h, uint32_t left, uint32_t *len, int *dlt)
{
	uint32_t hl;

	if (left < 8 || (h[2] & 0x0f) != 1 || (h[3] != 4 && h[3] != 41))
		return NULL;
	hl = 8 + (1u << (h[0] >> 4)) + (uint32_t)(h[1] >> 4) * 4;
	if (left < hl || ip_dlt(h + hl, left - hl) < 0)
		return NULL;
	*dlt = h[3] == 4 ? DPI_DLT_IPV4 : DPI_DLT_IPV6;
	*len = left - hl;
	return h + hl;
}

/* --decap, as Zeek: the packet inside VXLAN (UDP port 4789), Geneve (6081),
 * GTP-U (2152), Teredo (3544), AYIYA (5072), GRE (IP protocol 47, or in
 * UDP 4754) is counted in its own flow; a UDP tunnel is a flow too, a GRE
 * one is not (*outer = false). NULL: not a tunnel decoded here. IPv6
 * extension headers are not looked into. */
static const uint8_t *
tunnel_inner(const struct dpi_pkt *p, uint32_t *len, int *dlt, bool *outer)
{
	const uint8_t *l4, *h;
	uint32_t off, left, opt;
	uint16_t type;

	*outer = true;
	if (p->key.ip_version == 4) {
		off = (uint32_t)(p->l3[0] & 0xf) * 4;
	} else {
		off = 40;
		if (p->l3_len < 40 || p->l3[6] != p->key.proto)
			return NULL;
	}
	if (off >= p->l3_len)
		return NULL;
	l4 = p->l3 + off;
	left = p->l3_len - off;
	if (p->key.proto == 47) {
		*outer = false;
		return gre_inner(l4, left, len, dlt);
	}
	if (p->key.proto != 17 || left < 16)
		return NULL;
	h = l4 + 8;
	left -= 8;
	switch (p->key.dst_port) {
	case 4789: /* VXLAN: flags (I: VNI valid), VNI; Ethernet */
		if (!(h[0] & 0x08))
			return NULL;
		*dlt = DPI_DLT_EN10MB;
		*len = left - 8;
		return h + 8;
	case 6081: /* Geneve: options length, protocol type */
		opt = (uint32_t)(h[0] & 0x3f) * 4;
		type = dpi_rd16(h + 2);
		if (left < 8 + opt || (*dlt = etype_dlt(type)) < 0)
			return NULL;
		*len = left - 8 - opt;
		return h + 8 + opt;
	case 4754: /* GRE in UDP (RFC 8086) */
		return gre_inner(h, left, len, dlt);
	case 5072:
		return ayiya_inner(h, left, len, dlt);
	default:
		break;
	}
	if (p->key.src_port == 2152 || p->key.dst_port == 2152)
		return gtp_inner(h, left, len, dlt);
	if (p->key.src_port == 5072)
		return ayiya_inner(h, left, len, dlt);
	return teredo_inner(h, left, p->key.src_port == 3544 ||
			    p->key.dst_port == 3544, len, dlt);
}

#define DECAP_DEPTH 4 /* tunnels in tunnels, at most */
#define L2_BUF 16384   /* strip_l2: frames up to this length */

/* --decap, Zeek's link layers that ndpiReader does not parse: Cisco
 * FabricPath (a 16-byte header before the frame), 802.1ah PBB (I-TAG,
 * then the customer's frame) and VN-Tag (802.1Qbh: 6 bytes after the MACs
 * or a VLAN tag). Returns the frame without them, in @p buf where bytes
 * must go from its middle (the packet itself is never changed), or NULL
 * if there are none. */
static const uint8_t *
strip_l2(const uint8_t *data, uint32_t *len, uint8_t *buf)
{
	const uint8_t *f = data;
	uint32_t n = *len, off = 12;
	bool changed = false, in_buf = false;

	for (unsigned int k = 0; k < 8 && off + 2 <= n; k++) {
		uint16_t t = dpi_rd16(f + off);

		if (t == 0x8100 || t == 0x88a8 || t == 0x9100) {
			off += 4;
		} else if (t == 0x8903 && off == 12 && n >= 16 + 14) {
			f += 16; /* FabricPath: the classic frame follows */
			n -= 16;
			changed = true;
		} else if (t == 0x88e7 && off + 6 + 14 <= n) {
			f += off + 6; /* PBB: the customer's MACs follow */
			n -= off + 6;
			off = 12;
			changed = true;
		} else if (t == 0x8926 && off + 8 <= n && n <= L2_BUF) {
			if (in_buf) {
				memmove((uint8_t *)(uintptr_t)f + off,
					f + off + 6, n - off - 6);
			} else {
				memcpy(buf, f, off);
				memcpy(buf + off, f + off + 6, n - off - 6);
				f = buf;
				in_buf = true;
			}
			n -= 6;
			changed = true;
		} else {
			break;
		}
	}
	if (!changed)
		return NULL;
	*len = n;
	return f;
}

static void account_ip(const uint8_t *data, uint32_t plen, uint32_t len,
		       int dlt, unsigned int depth, bool tracked);

/* What LLC/SNAP at @p p (@p n bytes) carries, to account_ip(); false if
 * it is not SNAP or carries no IP. */
static bool
snap_account(const uint8_t *p, uint32_t n, uint32_t len, unsigned int depth)
{
	int d;

	if (n < 8 || p[0] != 0xaa || p[1] != 0xaa ||
	    (d = etype_dlt(dpi_rd16(p + 6))) < 0)
		return false;
	account_ip(p + 8, n - 8, len, d, depth, false);
	return true;
}

/* --decap: 802.11 data frames (link type 105, or 127: behind a radiotap
 * header; Aruba's GRE carries them too), parsed as Zeek parses them: data
 * frames only, not the subtypes without data; the fourth address when both
 * DS bits are set; the QoS field; protected frames skipped; then LLC/SNAP,
 * or with the QoS field's A-MSDU bit each subframe's (DA, SA, length,
 * LLC/SNAP, padding to 4 bytes): one packet each, as Zeek counts them.
 * Returns false if no packet was found in the frame. */
static bool
wifi_account(const uint8_t *p, uint32_t n, uint32_t len, int dlt,
	     unsigned int depth)
{
	uint32_t off = 0, h = 24, i;
	const uint8_t *w;
	bool amsdu = false, any = false;

	if (dlt == DLT_IEEE802_11_RADIO) {
		if (n < 4)
			return false;
		off = (uint32_t)p[2] | (uint32_t)p[3] << 8; /* little endian */
	}
	if (n < off + h)
		return false;
	w = p + off;
	n -= off;
	if (!((w[0] >> 2) & 0x02) || ((w[0] >> 4) & 0x04))
		return false; /* management, control; null-data subtypes */
	if ((w[1] & 0x03) == 0x03)
		h += 6;
	if ((w[0] >> 4) & 0x08) { /* QoS data */
		if (n < h + 2)
			return false;
		amsdu = (w[h] & 0x80) != 0;
		h += 2;
	}
	if ((w[1] & 0x40) || n < h)
		return false; /* encrypted */
	if (!amsdu)
		return snap_account(w + h, n - h, len, depth);
	for (i = h; i + 14 <= n;) {
		uint32_t m = dpi_rd16(w + i + 12);

		i += 14;
		if (m > n - i)
			break;
		any |= snap_account(w + i, m, m, depth);
		i += m + (4 - (14 + m) % 4) % 4;
	}
	return any;
}

/* The IP packet inside a tunnel whose outer packet is a first IPv4
 * fragment is cut by the fragmentation, not by the capture: its headers
 * are whole. Zeek reassembles and counts it once; flowmon counts the first
 * fragment once (ndpiReader's rule), so the inner packet too: from a copy
 * of its headers whose IP length says what is there. NULL: not such. */
static const uint8_t *
uncut(const uint8_t *data, uint32_t *len, int dlt, uint8_t *buf,
      uint32_t size)
{
	uint32_t n = RTE_MIN(*len, size);

	if (dlt == DPI_DLT_IPV4 && n >= 20 &&
	    (uint32_t)dpi_rd16(data + 2) > *len) {
		memcpy(buf, data, n);
		buf[2] = (uint8_t)(n >> 8);
		buf[3] = (uint8_t)n;
	} else if (dlt == DPI_DLT_IPV6 && n >= 40 &&
		   (uint32_t)dpi_rd16(data + 4) + 40 > *len) {
		memcpy(buf, data, n);
		buf[4] = (uint8_t)((n - 40) >> 8);
		buf[5] = (uint8_t)(n - 40);
	} else {
		return NULL;
	}
	*len = n;
	return buf;
}

/*
 * --decap: fragmented IPv4 datagrams as Zeek counts them. Zeek reassembles
 * and counts a datagram once, when its last missing fragment arrives; one
 * that never completes it never sees. Here the first fragment (what the
 * datagram's flow and any tunnel inside are parsed from) waits in a small
 * table until the datagram's other fragments are in, then counts as the
 * datagram. Datagrams still incomplete when the table is full go, oldest
 * first, uncounted ("fragments_lost"). Without --decap, or for a first
 * fragment too big to keep, the first fragment counts at once
 * (ndpiReader's rule). IPv6 fragments are not tracked.
 */
#define FRAG_SLOTS 64
#define FRAG_KEEP 2048 /* a first fragment up to this size waits */
#define FRAG_PIECES 48

struct frag {
	uint64_t age;        /* 0: free */
	uint8_t addrs[8];    /* source, destination */
	uint16_t id;
	uint8_t proto;
	bool have_first;
	uint32_t total;      /* payload bytes; 0 until the last fragment */
	uint32_t got;        /* payload bytes of distinct fragments */
	uint16_t offs[FRAG_PIECES];
	uint16_t n_offs;
	/* the first fragment, as account_ip() is to see it */
	int dlt;
	unsigned int depth;
	uint32_t plen, len;
	uint8_t data[FRAG_KEEP];
};

static struct frag frags[FRAG_SLOTS];
static uint64_t frag_age;
static bool frag_replaying; /* counting a kept datagram: see frag_track */

static struct frag *
frag_find(const uint8_t *ip)
{
	struct frag *f, *free_slot = NULL, *oldest = &frags[0];

	for (f = frags; f < frags + FRAG_SLOTS; f++) {
		if (f->age == 0) {
			free_slot = free_slot ? free_slot : f;
			continue;
		}
		if (f->id == dpi_rd16(ip + 4) && f->proto == ip[9] &&
		    memcmp(f->addrs, ip + 12, 8) == 0)
			return f;
		if (f->age < oldest->age)
			oldest = f;
	}
	if (free_slot == NULL) {
		if (oldest->have_first)
			cnt[C_FRAG_LOST]++; /* a datagram that never completed */
		free_slot = oldest;
	}
	f = free_slot;
	memset(f, 0, offsetof(struct frag, data));
	f->age = ++frag_age;
	memcpy(f->addrs, ip + 12, 8);
	f->id = dpi_rd16(ip + 4);
	f->proto = ip[9];
	return f;
}

/* Note a fragment (IPv4 header @p ip); true once the datagram is whole. */
static bool
frag_piece(struct frag *f, const uint8_t *ip)
{
	uint16_t fo = dpi_rd16(ip + 6);
	uint32_t off = (uint32_t)(fo & 0x1fff) * 8;
	uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4, tot = dpi_rd16(ip + 2);
	uint32_t n = tot > ihl ? tot - ihl : 0;
	bool dup = false;

	for (unsigned int i = 0; i < f->n_offs; i++)
		dup |= f->offs[i] == (fo & 0x1fff);
	if (!dup && f->n_offs < FRAG_PIECES) {
		f->offs[f->n_offs++] = (uint16_t)(fo & 0x1fff);
		f->got += n;
	}
	if (!(fo & 0x2000))
		f->total = off + n; /* the last fragment */
	return f->have_first && f->total != 0 && f->got >= f->total;
}

/* A fragment seen by account_ip(): true if it was taken care of here
 * (held, or counted with its datagram). */
static bool
frag_track(const uint8_t *data, uint32_t plen, uint32_t len, int dlt,
	   unsigned int depth, enum dpi_skip rc, const struct dpi_pkt *pkt)
{
	const uint8_t *ip = pkt->l3;
	struct frag *f;

	if (ip == NULL || pkt->l3_len < 20 || (ip[0] >> 4) != 4 ||
	    (dpi_rd16(ip + 6) & 0x3fff) == 0 || (rc == DPI_OK && plen >
						   FRAG_KEEP))
		return false; /* not a fragment we track */
	if (rc != DPI_OK && rc != DPI_SKIP_FRAGMENT)
		return false;
	if (frag_replaying) {
		/* A fragment inside a datagram being counted from its kept
		 * first fragment (nested in a tunnel): only a crafted packet
		 * does that. Not tracked: kept in its own slot it overwrote
		 * what was being read (memcpy onto itself), or completed its
		 * datagram again and again (a stack overflow), and two such
		 * datagrams could do it to each other. Found by fuzzing; the
		 * input is fuzz/regress/flowmon/fragment-inside-its-own-datagram. */
		cnt[C_NOT_FLOW]++;
		return true;
	}
	f = frag_find(ip);
	if (rc == DPI_OK) { /* the first fragment: keep it */
		memcpy(f->data, data, plen);
		f->plen = plen;
		f->len = len;
		f->dlt = dlt;
		f->depth = depth;
		f->have_first = true;
	} else {
		cnt[C_NOT_FLOW]++; /* as a later fragment always was */
	}
	if (frag_piece(f, ip)) {
		/* Kept (never the oldest) while a fragment inside it may look
		 * for a slot, then free. */
		f->age = UINT64_MAX;
		frag_replaying = true;
		account_ip(f->data, f->plen, f->len, f->dlt, f->depth, true);
		frag_replaying = false;
		f->age = 0;
	}
	return true;
}

static void
account(const uint8_t *data, uint32_t len, int dlt, unsigned int depth,
	bool cut)
{
	uint8_t buf[256];
	static uint8_t l2buf[L2_BUF];
	uint32_t plen = len; /* what is parsed; len: bytes counted */

	if (depth == 0)
		cnt[C_PACKETS]++;
	if (cut) {
		const uint8_t *u = uncut(data, &plen, dlt, buf, sizeof(buf));

		data = u != NULL ? u : data;
		len = plen;
	}
	if (decap && depth == 0 && dlt == DPI_DLT_EN10MB) {
		const uint8_t *u = strip_l2(data, &plen, l2buf);

		data = u != NULL ? u : data;
	} else if (decap && (dlt == DLT_IEEE802_11 ||
			     dlt == DLT_IEEE802_11_RADIO)) {
		if (!wifi_account(data, plen, len, dlt, depth))
			cnt[C_NOT_FLOW]++;
		return;
	}
	account_ip(data, plen, len, dlt, depth, false);
}

/* A frame past its link-layer extras: @p plen bytes to parse, @p len
 * bytes to count. @p tracked: a first fragment whose datagram is whole. */
static void
account_ip(const uint8_t *data, uint32_t plen, uint32_t len, int dlt,
	   unsigned int depth, bool tracked)
{
	/* as ndpiReader, time never goes back: the latest packet time seen,
	 * this one's included */
	uint64_t ts = fr.last_ms;
	const uint8_t *inner = NULL;
	uint32_t ilen = 0;
	int idlt = 0;
	bool outer = true;
	struct dpi_pkt pkt;
	struct zn_ft_hit hit;
	struct rec *r;
	enum dpi_skip rc;
	int dir;

	/* --decap: tunnels as Zeek, not ndpiReader, looks into them */
	rc = dpi_parse(data, plen, dlt, fr.tunnels && !decap, &pkt);
	if (decap && !tracked &&
	    frag_track(data, plen, len, dlt, depth, rc, &pkt))
		return;
	if (rc != DPI_OK) {
		cnt[C_NOT_FLOW]++;
		return;
	}
	if (decap && depth < DECAP_DEPTH)
		inner = tunnel_inner(&pkt, &ilen, &idlt, &outer);
	if (outer) {
		r = (struct rec *)dpi_count(ft, &pkt, len, ts, &hit, &dir);
		if (r == NULL) {
			cnt[C_FULL]++;
		} else {
			cnt[C_FLOWS] += hit.created;
			r->flags[dir] |= tcp_flags(&pkt);
		}
	}
	if (inner != NULL) {
		cnt[C_DECAP]++;
		account(inner, ilen, idlt, depth + 1,
			pkt.key.ip_version == 4 && (pkt.l3[6] & 0x20));
	}
}

static void
fm_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = frames_now_ms();

	(void)nf;
	for (uint16_t i = 0; i < n; i++) {
		uint64_t ts;
		uint32_t len;
		const uint8_t *data = frames_get(&fr, pkts[i], now, &len, &ts);

		(void)ts; /* in fr.last_ms */
		account(data, len, fr.dlt, 0, false);
	}
}

static void
sync_counters(struct zn_nf *nf)
{
	cnt[C_ACTIVE] = zn_ft_count(ft);
	frames_publish(nf, cidx, cnt, shown, C_MAX);
}

static void
fm_tick(struct zn_nf *nf, uint64_t now_ns)
{
	(void)now_ns;
	/* Idle time is measured on packet time: the clock, or the capture
	 * time of the latest packet when replaying. */
	if (fr.idle_ms > 0)
		zn_ft_expire(ft, frames_expiry_ms(&fr) * 1000000, 4096,
			     on_expire, NULL);
	if (ipfix_fd >= 0)
		ipfix_flush();
	if (json != NULL)
		fflush(json);
	sync_counters(nf);
}

static int
fm_init(struct zn_nf *nf)
{
	char name[32];

	for (int c = 0; c < C_MAX; c++) {
		cidx[c] = zn_nf_counter_register(nf, cnames[c]);
		if (cidx[c] < 0)
			return cidx[c];
	}
	if (json_path != NULL) {
		json = fopen(json_path, "w");
		if (json == NULL) {
			fprintf(stderr, "flowmon: %s: %s\n", json_path,
				strerror(errno));
			return -errno;
		}
	}
	if (ipfix_addr != NULL && ipfix_open(ipfix_addr) < 0) {
		fprintf(stderr, "flowmon: cannot export to %s\n", ipfix_addr);
		return -EINVAL;
	}
	ipfix_odid = zn_nf_instance_id(nf) + 1u;
	snprintf(name, sizeof(name), "flowmon_%u", zn_nf_instance_id(nf));
	ft = zn_ft_create(&ZN_FT_OPTS(.name = name, .capacity = fr.capacity,
				      .data_size = sizeof(struct rec),
				      .idle_timeout_ns = fr.idle_ms * 1000000,
				      .flags = ZN_FT_F_BIDIR));
	if (ft == NULL) {
		fprintf(stderr, "flowmon: cannot create a table of %u flows\n",
			fr.capacity);
		return -ENOMEM;
	}
	frames_start(&fr, "flowmon");
	return 0;
}

static void
fm_fini(struct zn_nf *nf)
{
	const struct zn_flow_key *k;
	uint32_t cur = 0;
	void *data;

	if (ft != NULL) {
		while (zn_ft_iterate(ft, &cur, &k, &data) >= 0)
			export(data, false);
		if (ipfix_fd >= 0)
			ipfix_flush();
		sync_counters(nf);
		if (!zn_nf_manager_stopping(nf))
			zn_ft_free(ft);
	}
	if (json != NULL)
		fclose(json);
	if (ipfix_fd >= 0)
		close(ipfix_fd);
}

static void
fm_usage(FILE *o)
{
	fprintf(o,
		"  -j, --json FILE       flow records as JSON lines\n"
		"  -x, --ipfix HOST:PORT flow records as IPFIX over UDP\n"
		"  -D, --decap           also a flow for what VXLAN, Geneve and "
		"GRE carry (Zeek's way)\n");
	frames_usage(o, &fr);
}

static int
fm_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "ipfix", required_argument, NULL, 'x' },
		{ "decap", no_argument, NULL, 'D' },
		FRAMES_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "j:x:D" FRAMES_SHORTOPTS, lo,
				NULL)) != -1) {
		if (c == 'j')
			json_path = optarg;
		else if (c == 'x')
			ipfix_addr = optarg;
		else if (c == 'D')
			decap = true;
		else if (frames_option(&fr, c, optarg) != 0)
			return -EINVAL;
	}
	return optind == argc ? 0 : -EINVAL;
}

static const struct zn_nf_ops fm_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "flowmon",
	.parse_args = fm_parse,
	.usage = fm_usage,
	.init = fm_init,
	.burst = fm_burst,
	.tick = fm_tick,
	.fini = fm_fini,
};

ZN_NF_REGISTER(fm_ops)
