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
 * See README.md. This file: the NF (options, the packet loop, records
 * out); its parts are named in flowmon.h.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zeronf/zeronf.h>

#include "flowmon.h"

static const char *const end_names[] = { "active", "idle", "fin", "rst" };

static const char *const cnames[C_MAX] = {
	"packets", "flows", "exported", "active", "table_full", "not_flow",
	"ipfix_msgs", "ipfix_errors", "decapsulated", "fragments_lost",
};

static void
json_record(FILE *json, const struct fm_rec *r, enum fm_end why)
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

static enum fm_end
reason(const struct fm_rec *r, bool expired)
{
	if ((r->flags[0] | r->flags[1]) & 0x04)
		return FM_END_RST;
	if ((r->flags[0] & 0x01) && (r->flags[1] & 0x01))
		return FM_END_FIN;
	return expired ? FM_END_IDLE : FM_END_ACTIVE;
}

void
fm_export(struct flowmon *fm, const struct fm_rec *r, bool expired)
{
	enum fm_end why = reason(r, expired);

	if (fm->json != NULL)
		json_record(fm->json, r, why);
	if (fm->ipfix.fd >= 0)
		fm_ipfix_record(fm, r, why);
	fm->tally.v[C_EXPORTED]++;
}

static void
on_expire(const struct zn_flow_key *key, void *data, void *arg)
{
	(void)key;
	fm_export(arg, data, true);
}

static void
fm_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	struct flowmon *fm = zn_nf_priv(nf);
	uint64_t now = frames_now_ms();

	for (uint16_t i = 0; i < n; i++) {
		uint64_t ts;
		uint32_t len;
		const uint8_t *data = frames_get(&fm->fr, pkts[i], now, &len,
						 &ts);

		(void)ts; /* in fr.last_ms */
		fm_account(fm, data, len, fm->fr.dlt, 0, false);
	}
}

static void
sync_counters(struct zn_nf *nf, struct flowmon *fm)
{
	fm->tally.v[C_ACTIVE] = zn_ft_count(fm->ft);
	tally_publish(&fm->tally, nf);
}

static void
fm_tick(struct zn_nf *nf, uint64_t now_ns)
{
	struct flowmon *fm = zn_nf_priv(nf);

	(void)now_ns;
	/* Idle time is measured on packet time: the clock, or the capture
	 * time of the latest packet when replaying. */
	if (fm->fr.idle_ms > 0)
		zn_ft_expire(fm->ft, frames_expiry_ms(&fm->fr) * 1000000, 4096,
			     on_expire, fm);
	if (fm->ipfix.fd >= 0)
		fm_ipfix_flush(fm);
	if (fm->json != NULL)
		fflush(fm->json);
	sync_counters(nf, fm);
}

static int
fm_init(struct zn_nf *nf)
{
	struct flowmon *fm = zn_nf_priv(nf);
	char name[32];
	int rc = tally_register(&fm->tally, nf, cnames, C_MAX);

	if (rc < 0)
		return rc;
	if (fm->json_path != NULL) {
		fm->json = fopen(fm->json_path, "w");
		if (fm->json == NULL) {
			fprintf(stderr, "flowmon: %s: %s\n", fm->json_path,
				strerror(errno));
			return -errno;
		}
	}
	if (fm->ipfix_addr != NULL &&
	    fm_ipfix_open(fm, fm->ipfix_addr) < 0) {
		fprintf(stderr, "flowmon: cannot export to %s\n",
			fm->ipfix_addr);
		return -EINVAL;
	}
	fm->ipfix.odid = zn_nf_instance_id(nf) + 1u;
	snprintf(name, sizeof(name), "flowmon_%u", zn_nf_instance_id(nf));
	fm->ft = zn_ft_create(&ZN_FT_OPTS(
		.name = name, .capacity = fm->fr.capacity,
		.data_size = sizeof(struct fm_rec),
		.idle_timeout_ns = fm->fr.idle_ms * 1000000,
		.flags = ZN_FT_F_BIDIR));
	if (fm->ft == NULL) {
		fprintf(stderr, "flowmon: cannot create a table of %u flows\n",
			fm->fr.capacity);
		return -ENOMEM;
	}
	frames_start(&fm->fr, "flowmon");
	return 0;
}

static void
fm_fini(struct zn_nf *nf)
{
	struct flowmon *fm = zn_nf_priv(nf);
	const struct zn_flow_key *k;
	uint32_t cur = 0;
	void *data;

	if (fm == NULL)
		return;
	if (fm->ft != NULL) {
		while (zn_ft_iterate(fm->ft, &cur, &k, &data) >= 0)
			fm_export(fm, data, false);
		if (fm->ipfix.fd >= 0)
			fm_ipfix_flush(fm);
		sync_counters(nf, fm);
		if (!zn_nf_manager_stopping(nf))
			zn_ft_free(fm->ft);
	}
	if (fm->json != NULL)
		fclose(fm->json);
	if (fm->ipfix.fd >= 0)
		close(fm->ipfix.fd);
	zn_nf_set_priv(nf, NULL);
}

static void
fm_usage(FILE *o)
{
	const struct frames defaults = FRAMES_INIT(1u << 16, 60000);

	fprintf(o,
		"  -j, --json FILE       flow records as JSON lines\n"
		"  -x, --ipfix HOST:PORT flow records as IPFIX over UDP\n"
		"  -D, --decap           also a flow for what VXLAN, Geneve and "
		"GRE carry (Zeek's way)\n");
	frames_usage(o, &defaults);
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
	/* One NF per process: its state is this process's one struct,
	 * reached through the NF's private pointer like any NF's. */
	static struct flowmon state;
	struct flowmon *fm = &state;
	int c;

	fm->fr = (struct frames)FRAMES_INIT(1u << 16, 60000);
	fm->ipfix.fd = -1;
	fm->ipfix.odid = 1;
	zn_nf_set_priv(nf, fm);
	while ((c = getopt_long(argc, argv, "j:x:D" FRAMES_SHORTOPTS, lo,
				NULL)) != -1) {
		if (c == 'j')
			fm->json_path = optarg;
		else if (c == 'x')
			fm->ipfix_addr = optarg;
		else if (c == 'D')
			fm->decap = true;
		else if (frames_option(&fm->fr, c, optarg) != 0)
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
