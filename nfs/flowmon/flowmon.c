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
	C_IPFIX_MSGS, C_IPFIX_ERR, C_MAX
};
static const char *const cnames[C_MAX] = {
	"packets", "flows", "exported", "active", "table_full", "not_flow",
	"ipfix_msgs", "ipfix_errors",
};

static struct frames fr = FRAMES_INIT(1u << 16, 60000);
static const char *json_path, *ipfix_addr;
static FILE *json;
static int ipfix_fd = -1;
static uint32_t ipfix_seq, ipfix_odid = 1;
static uint64_t ipfix_last_tmpl;
static struct zn_ft *ft;
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

static void
account(const uint8_t *data, uint32_t len)
{
	/* as ndpiReader, time never goes back: the latest packet time seen,
	 * this one's included */
	uint64_t ts = fr.last_ms;
	struct dpi_pkt pkt;
	struct zn_ft_hit hit;
	struct rec *r;
	int dir;

	cnt[C_PACKETS]++;
	if (dpi_parse(data, len, fr.dlt, fr.tunnels, &pkt) != DPI_OK) {
		cnt[C_NOT_FLOW]++;
		return;
	}
	r = (struct rec *)dpi_count(ft, &pkt, len, ts, &hit, &dir);
	if (r == NULL) {
		cnt[C_FULL]++;
		return;
	}
	cnt[C_FLOWS] += hit.created;
	r->flags[dir] |= tcp_flags(&pkt);
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
		account(data, len);
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
		"  -x, --ipfix HOST:PORT flow records as IPFIX over UDP\n");
	frames_usage(o, &fr);
}

static int
fm_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "json", required_argument, NULL, 'j' },
		{ "ipfix", required_argument, NULL, 'x' },
		FRAMES_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c;

	(void)nf;
	while ((c = getopt_long(argc, argv, "j:x:" FRAMES_SHORTOPTS, lo,
				NULL)) != -1) {
		if (c == 'j')
			json_path = optarg;
		else if (c == 'x')
			ipfix_addr = optarg;
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
