/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * DPI classifier core: flows in a zn_ft flow table (bidirectional, idle
 * expiry), nDPI 4.2 per flow until classified, ndpiReader-compatible
 * accounting and report. See dpi.h for the semantics.
 */

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include <ndpi_api.h>

#include "dpi.h"

/* ndpiReader 4.2's limits: packets of a flow nDPI may see before it must
 * give up (and guess). */
#define MAX_TCP_DISSECTED 80
#define MAX_UDP_DISSECTED 24

struct dflow {
	struct dpi_counts c;         /* first: see dpi_count() */
	struct ndpi_flow_struct *nd; /* while classifying; then freed */
	ndpi_protocol proto;
	ndpi_confidence_t conf;
	uint64_t id;                 /* creation order, for the report */
	uint16_t dpi_pkts;
	uint8_t done, guessed, tunnel;
	char host[80];
};

struct proto_sum {
	uint64_t pkts, bytes, flows;
};

#define N_PROTOS (NDPI_MAX_SUPPORTED_PROTOCOLS + NDPI_MAX_NUM_CUSTOM_PROTOCOLS)

struct dpi {
	struct ndpi_detection_module_struct *nd;
	struct proto_sum retired[N_PROTOS]; /* of flows gone (expired) */
	struct zn_ft *ft;
	struct dpi_opts o;
	uint64_t last_ms;
	uint64_t next_id;
	struct dpi_stats st;
};

static int
load(struct dpi *d, const char *file,
     int (*fn)(struct ndpi_detection_module_struct *, const char *))
{
	char path[4096];
	FILE *f;

	if (d->o.proto_dir == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/%s", d->o.proto_dir, file);
	f = fopen(path, "r");
	if (f == NULL)
		return 0; /* optional, as for ndpiReader */
	fclose(f);
	if (fn(d->nd, path) < 0) {
		fprintf(stderr, "dpi: cannot load %s\n", path);
		return -EINVAL;
	}
	return 0;
}

static int
load_protos(struct ndpi_detection_module_struct *nd, const char *p)
{
	return ndpi_load_protocols_file(nd, p);
}

struct dpi *
dpi_create(const struct dpi_opts *o)
{
	NDPI_PROTOCOL_BITMASK all;
	struct dpi *d = calloc(1, sizeof(*d));

	if (d == NULL)
		return NULL;
	d->o = *o;
	d->nd = ndpi_init_detection_module(ndpi_no_prefs);
	if (d->nd == NULL) {
		fprintf(stderr, "dpi: nDPI initialisation failed\n");
		goto fail;
	}
	NDPI_BITMASK_SET_ALL(all);
	ndpi_set_protocol_detection_bitmask2(d->nd, &all);
	/* The files ndpiReader is given in nDPI's tests, same order. */
	if (load(d, "protos.txt", load_protos) < 0 ||
	    load(d, "categories.txt", ndpi_load_categories_file) < 0 ||
	    load(d, "risky_domains.txt", ndpi_load_risk_domain_file) < 0 ||
	    load(d, "ja3_fingerprints.csv", ndpi_load_malicious_ja3_file) < 0 ||
	    load(d, "sha1_fingerprints.csv",
		 ndpi_load_malicious_sha1_file) < 0)
		goto fail;
	ndpi_finalize_initialization(d->nd);
	d->ft = zn_ft_create(&ZN_FT_OPTS(.name = o->name,
					 .capacity = o->capacity,
					 .data_size = sizeof(struct dflow),
					 .idle_timeout_ns = o->idle_ms * 1000000,
					 .flags = ZN_FT_F_BIDIR));
	if (d->ft == NULL) {
		fprintf(stderr, "dpi: cannot create a table of %u flows\n",
			o->capacity);
		goto fail;
	}
	return d;
fail:
	dpi_free(d);
	return NULL;
}

static void
release(void *data)
{
	struct dflow *f = data;

	if (f->nd != NULL) {
		ndpi_flow_free(f->nd);
		f->nd = NULL;
	}
}

void
dpi_free(struct dpi *d)
{
	if (d == NULL)
		return;
	if (d->ft != NULL) {
		const struct zn_flow_key *k;
		uint32_t cur = 0;
		void *data;

		while (zn_ft_iterate(d->ft, &cur, &k, &data) >= 0)
			release(data);
		zn_ft_free(d->ft);
	}
	if (d->nd != NULL)
		ndpi_exit_detection_module(d->nd);
	free(d);
}

/* Classification over: keep what the report needs, free nDPI's state. */
static void
complete(struct dpi *d, struct dflow *f)
{
	f->done = 1;
	if (f->proto.app_protocol == NDPI_PROTOCOL_UNKNOWN) {
		uint8_t guessed = 0;

		f->proto = ndpi_detection_giveup(d->nd, f->nd, 1, &guessed);
		f->guessed = guessed;
		d->st.guessed += guessed;
	}
	f->conf = f->nd->confidence;
	memcpy(f->host, f->nd->host_server_name, sizeof(f->host));
	f->host[sizeof(f->host) - 1] = '\0';
	d->st.classified++;
	release(f);
}

int
dpi_process(struct dpi *d, const uint8_t *frame, uint32_t caplen, int dlt,
	    uint64_t ts_ms, struct dpi_verdict *v)
{
	struct dpi_pkt pkt;
	struct zn_ft_hit hit;
	struct dflow *f;
	enum dpi_skip r;
	uint64_t total;
	int dir;

	*v = (struct dpi_verdict){ 0 };
	d->st.packets++;
	/* ndpiReader repairs time going backwards the same way */
	if (ts_ms < d->last_ms)
		ts_ms = d->last_ms;
	d->last_ms = ts_ms;
	r = dpi_parse(frame, caplen, dlt, d->o.decode_tunnels, &pkt);
	if (r != DPI_OK) {
		d->st.skip[r]++;
		return r;
	}
	f = (struct dflow *)dpi_count(d->ft, &pkt, caplen, ts_ms, &hit, &dir);
	if (f == NULL) {
		d->st.table_full++;
		return -ENOSPC;
	}
	if (hit.created) {
		f->id = ++d->next_id;
		f->tunnel = pkt.tunnel;
		d->st.flows++;
	}
	if (!f->done) {
		total = f->c.pkts[0] + f->c.pkts[1];
		bool enough = (pkt.key.proto == 17 && total > MAX_UDP_DISSECTED) ||
			      (pkt.key.proto == 6 && total > MAX_TCP_DISSECTED);

		if (f->nd == NULL) {
			f->nd = ndpi_flow_malloc(SIZEOF_FLOW_STRUCT);
			if (f->nd == NULL)
				return -ENOMEM;
			memset(f->nd, 0, SIZEOF_FLOW_STRUCT);
		}
		f->dpi_pkts++;
		f->proto = ndpi_detection_process_packet(
			d->nd, f->nd, pkt.l3,
			(unsigned short)(pkt.l3_len < 65535u ? pkt.l3_len : 65535u),
			ts_ms);
		if ((enough || f->proto.app_protocol != NDPI_PROTOCOL_UNKNOWN) &&
		    (enough || !ndpi_extra_dissection_possible(d->nd, f->nd))) {
			complete(d, f);
			v->classified_now = true;
		}
	}
	v->master = f->proto.master_protocol;
	v->app = f->proto.app_protocol;
	return DPI_OK;
}

void
dpi_finish(struct dpi *d)
{
	const struct zn_flow_key *k;
	uint32_t cur = 0;
	void *data;

	while (zn_ft_iterate(d->ft, &cur, &k, &data) >= 0) {
		struct dflow *f = data;

		if (!f->done && f->nd != NULL)
			complete(d, f);
	}
}

static inline uint16_t
proto_of(const struct dflow *f)
{
	return f->proto.app_protocol ? f->proto.app_protocol :
				       f->proto.master_protocol;
}

struct expire_arg {
	struct dpi *d;
};

/* A flow leaves: classified (guessing if need be) and kept in the
 * per-protocol totals of the report. */
static void
on_expire(const struct zn_flow_key *key, void *data, void *arg)
{
	struct expire_arg *a = arg;
	struct dflow *f = data;
	uint16_t p;

	(void)key;
	if (!f->done && f->nd != NULL)
		complete(a->d, f);
	p = proto_of(f);
	if (p < N_PROTOS) {
		a->d->retired[p].pkts += f->c.pkts[0] + f->c.pkts[1];
		a->d->retired[p].bytes += f->c.bytes[0] + f->c.bytes[1];
		a->d->retired[p].flows++;
	}
	release(f);
	a->d->st.expired++;
}

int
dpi_expire(struct dpi *d, uint64_t now_ms, uint32_t budget)
{
	struct expire_arg a = { d };

	return zn_ft_expire(d->ft, now_ms * 1000000, budget, on_expire, &a);
}

int
dpi_proto_by_name(struct dpi *d, const char *name)
{
	return ndpi_get_protocol_id(d->nd, (char *)(uintptr_t)name);
}

void
dpi_get_stats(const struct dpi *d, struct dpi_stats *s)
{
	*s = d->st;
}

/* ---------------------------------------------------------- report */

static const char *
l4_name(uint8_t p, char *buf, size_t len)
{
	switch (p) {
	case 6: return "TCP";
	case 17: return "UDP";
	case 1: return "ICMP";
	case 58: return "ICMPV6";
	case 112: return "VRRP";
	case 2: return "IGMP";
	default:
		snprintf(buf, len, "%u", p);
		return buf;
	}
}

static void
endpoint(const struct zn_flow_key *k, bool src, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];

	inet_ntop(k->ip_version == 4 ? AF_INET : AF_INET6,
		  src ? k->src : k->dst, a, sizeof(a));
	if (k->ip_version == 6)
		ndpi_patchIPv6Address(a); /* ndpiReader's spelling */
	snprintf(buf, len, k->ip_version == 4 ? "%s:%u" : "[%s]:%u", a,
		 src ? k->src_port : k->dst_port);
}

static const char *const tunnel_names[] = { "", "GTP:", "CAPWAP:", "TZSP:" };

static void
print_flow(struct dpi *d, FILE *out, unsigned int n, const struct dflow *f)
{
	char l4[8], s[64], t[64], ids[32], name[64];
	const struct zn_flow_key *k = &f->c.first;
	bool bidir = f->c.pkts[1] > 0;

	endpoint(k, true, s, sizeof(s));
	endpoint(k, false, t, sizeof(t));
	fprintf(out, "\t%u\t%s %s %s %s ", n, l4_name(k->proto, l4, sizeof(l4)),
		s, bidir ? "<->" : "->", t);
	if (k->vlan != 0)
		fprintf(out, "[VLAN: %u]", k->vlan);
	fprintf(out, "[proto: %s%s/%s]", tunnel_names[f->tunnel & 3],
		ndpi_protocol2id(d->nd, f->proto, ids, sizeof(ids)),
		ndpi_protocol2name(d->nd, f->proto, name, sizeof(name)));
	fprintf(out, "[%s]", ndpi_is_encrypted_proto(d->nd, f->proto) ?
		"Encrypted" : "ClearText");
	fprintf(out, "[Confidence: %s]", ndpi_confidence_get_name(f->conf));
	fprintf(out, "[cat: %s/%u]",
		ndpi_category_get_name(d->nd, f->proto.category),
		(unsigned int)f->proto.category);
	fprintf(out, "[%" PRIu64 " pkts/%" PRIu64 " bytes %s %" PRIu64
		" pkts/%" PRIu64 " bytes]", f->c.pkts[0], f->c.bytes[0],
		bidir ? "<->" : "->", f->c.pkts[1], f->c.bytes[1]);
	if (f->host[0] != '\0')
		fprintf(out, "[Hostname/SNI: %s]", f->host);
	fputc('\n', out);
}

static int
by_id(const void *a, const void *b)
{
	const struct dflow *x = *(const struct dflow *const *)a;
	const struct dflow *y = *(const struct dflow *const *)b;

	return x->id < y->id ? -1 : x->id > y->id;
}

int
dpi_report(struct dpi *d, FILE *out)
{
	uint32_t n = zn_ft_count(d->ft), m = 0, cur = 0, shown = 0;
	const struct dflow **all = calloc(n ? n : 1, sizeof(*all));
	struct proto_sum *sum = calloc(N_PROTOS, sizeof(*sum));
	uint32_t nproto = N_PROTOS;
	uint64_t tcp_dpi = 0, udp_dpi = 0, other_dpi = 0, nt = 0, nu = 0, no = 0;
	const struct zn_flow_key *k;
	void *data;

	if (all == NULL || sum == NULL) {
		free(all);
		free(sum);
		return -ENOMEM;
	}
	while (m < n && zn_ft_iterate(d->ft, &cur, &k, &data) >= 0)
		all[m++] = data;
	qsort(all, m, sizeof(*all), by_id);
	memcpy(sum, d->retired, sizeof(d->retired));
	for (uint32_t i = 0; i < m; i++) {
		const struct dflow *f = all[i];
		uint16_t p = proto_of(f);

		if (p < nproto) {
			sum[p].pkts += f->c.pkts[0] + f->c.pkts[1];
			sum[p].bytes += f->c.bytes[0] + f->c.bytes[1];
			sum[p].flows++;
		}
		if (f->c.first.proto == 6)
			tcp_dpi += f->dpi_pkts, nt++;
		else if (f->c.first.proto == 17)
			udp_dpi += f->dpi_pkts, nu++;
		else
			other_dpi += f->dpi_pkts, no++;
	}
	fprintf(out, "Guessed flow protos:\t%" PRIu64 "\n\n", d->st.guessed);
	if (nt)
		fprintf(out, "DPI Packets (TCP):\t%" PRIu64 "\t(%.2f pkts/flow)\n",
			tcp_dpi, (double)tcp_dpi / (double)nt);
	if (nu)
		fprintf(out, "DPI Packets (UDP):\t%" PRIu64 "\t(%.2f pkts/flow)\n",
			udp_dpi, (double)udp_dpi / (double)nu);
	if (no)
		fprintf(out, "DPI Packets (other):\t%" PRIu64
			"\t(%.2f pkts/flow)\n", other_dpi,
			(double)other_dpi / (double)no);
	fputc('\n', out);
	for (uint32_t p = 0; p < nproto; p++) {
		ndpi_protocol pr = { .app_protocol = (uint16_t)p };
		char name[64];

		if (sum[p].flows == 0)
			continue;
		fprintf(out, "%s\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n",
			ndpi_protocol2name(d->nd, pr, name, sizeof(name)),
			sum[p].pkts, sum[p].bytes, sum[p].flows);
	}
	fputc('\n', out);
	/* Classified flows first, then the undetected ones, as ndpiReader. */
	for (uint32_t i = 0; i < m; i++)
		if (all[i]->proto.app_protocol || all[i]->proto.master_protocol)
			print_flow(d, out, ++shown, all[i]);
	for (uint32_t i = 0, u = 0; i < m; i++) {
		if (all[i]->proto.app_protocol || all[i]->proto.master_protocol)
			continue;
		if (u == 0)
			fprintf(out, "\n\nUndetected flows:\n");
		print_flow(d, out, ++u, all[i]);
	}
	free(all);
	free(sum);
	return ferror(out) ? -EIO : 0;
}
