/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * dpi: classify flows with nDPI (the DPI VNF of the SR-IOV/DPDK paper).
 * Every packet passes on (NEXT); a flow's packets go through nDPI only
 * until it is classified. Rules "--steer PROTO=CHAIN" install a flow
 * director rule for a flow (both directions) once it is classified as
 * PROTO (its application or master protocol name, e.g. TLS, YouTube,
 * DNS): its later packets take CHAIN (svc:S, port:P, drop) instead of
 * passing here. The flow report (ndpiReader -w format) is written to
 * --report at exit and whenever the NF gets SIGUSR1. See README.md.
 */

#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <zeronf/zeronf.h>

#include "dpi.h"
#include "../common/frames.h"
#include "../common/tally.h"

#define MAX_RULES 32

struct rule {
	int proto;                  /* nDPI protocol id */
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	unsigned int n_steps;
};

enum {
	C_PACKETS, C_FLOWS, C_CLASSIFIED, C_GUESSED, C_EXPIRED, C_FULL,
	C_NOT_IP, C_FRAGMENT, C_TRUNCATED, C_SHORT, C_BAD_L2, C_STEERED,
	C_STEER_FAILED, C_MAX
};

static const char *const cnames[C_MAX] = {
	"packets", "flows", "classified", "guessed", "expired", "table_full",
	"not_ip", "fragment", "truncated", "short", "bad_l2", "steered",
	"steer_failed",
};

static struct frames fr = FRAMES_INIT(1u << 16, 180000);
static const char *report_path, *proto_dir;
static char *rule_text[MAX_RULES];
static unsigned int n_rule_text;
static struct rule rules[MAX_RULES];
static unsigned int n_rules;
static struct dpi *dpi;
static struct tally tally;
static volatile sig_atomic_t report_req;

static void
steer(struct zn_nf *nf, struct rte_mbuf *m, const struct dpi_verdict *v)
{
	struct zn_flow_key key;

	for (unsigned int i = 0; i < n_rules; i++) {
		if (rules[i].proto != v->app && rules[i].proto != v->master)
			continue;
		/* The flow director sees the packet as it is on the wire. */
		if (zn_flow_key_from_pkt(m, &key) < 0 ||
		    zn_nf_flow_steer(nf, &key, rules[i].steps,
				     rules[i].n_steps, ZN_STEER_F_BOTH) < 0)
			tally.v[C_STEER_FAILED]++;
		else
			tally.v[C_STEERED]++;
		return;
	}
}

static void
sync_counters(struct zn_nf *nf)
{
	struct dpi_stats s;
	uint64_t *now = tally.v;

	dpi_get_stats(dpi, &s);
	now[C_PACKETS] = s.packets;
	now[C_FLOWS] = s.flows;
	now[C_CLASSIFIED] = s.classified;
	now[C_GUESSED] = s.guessed;
	now[C_EXPIRED] = s.expired;
	now[C_FULL] = s.table_full;
	now[C_NOT_IP] = s.skip[DPI_SKIP_NOT_IP];
	now[C_FRAGMENT] = s.skip[DPI_SKIP_FRAGMENT];
	now[C_TRUNCATED] = s.skip[DPI_SKIP_TRUNCATED];
	now[C_SHORT] = s.skip[DPI_SKIP_SHORT];
	now[C_BAD_L2] = s.skip[DPI_SKIP_BAD_L2];
	/* steered and steer_failed are counted where they happen */
	tally_publish(&tally, nf);
}

static void
dpi_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	uint64_t now = frames_now_ms();

	for (uint16_t i = 0; i < n; i++) {
		struct rte_mbuf *m = pkts[i];
		struct dpi_verdict v;
		uint64_t ts;
		uint32_t len;
		const uint8_t *data = frames_get(&fr, m, now, &len, &ts);

		dpi_process(dpi, data, len, fr.dlt, ts, &v);
		if (v.classified_now && n_rules > 0)
			steer(nf, m, &v);
	}
}

static int
write_report(void)
{
	FILE *f;
	int rc;

	if (report_path == NULL)
		return 0;
	f = fopen(report_path, "w");
	if (f == NULL) {
		fprintf(stderr, "dpi: cannot write %s: %s\n", report_path,
			strerror(errno));
		return -errno;
	}
	rc = dpi_report(dpi, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	return rc;
}

static void
dpi_tick(struct zn_nf *nf, uint64_t now_ns)
{
	(void)now_ns;
	/* Idle time is packet time: the clock, or when replaying with
	 * capture times, the latest packet's. */
	if (fr.idle_ms > 0)
		dpi_expire(dpi, frames_expiry_ms(&fr), 4096);
	sync_counters(nf);
	if (report_req) {
		report_req = 0;
		write_report();
	}
}

static void
on_usr1(int sig)
{
	(void)sig;
	report_req = 1;
}

static int
dpi_init(struct zn_nf *nf)
{
	char name[32];
	int rc = tally_register(&tally, nf, cnames, C_MAX);

	if (rc < 0)
		return rc;
	snprintf(name, sizeof(name), "dpi_%u", zn_nf_instance_id(nf));
	dpi = dpi_create(&(struct dpi_opts){
		.proto_dir = proto_dir, .capacity = fr.capacity,
		.idle_ms = fr.idle_ms, .decode_tunnels = fr.tunnels,
		.name = name });
	if (dpi == NULL)
		return -ENOMEM;
	for (unsigned int i = 0; i < n_rule_text; i++) {
		char *eq = strchr(rule_text[i], '=');

		*eq = '\0';
		rules[i].proto = dpi_proto_by_name(dpi, rule_text[i]);
		if (rules[i].proto < 0) {
			fprintf(stderr, "dpi: unknown protocol '%s'\n",
				rule_text[i]);
			return -EINVAL;
		}
		rc = zn_steps_parse(eq + 1, rules[i].steps,
				    RTE_DIM(rules[i].steps));
		if (rc < 0) {
			fprintf(stderr, "dpi: bad chain '%s'\n", eq + 1);
			return -EINVAL;
		}
		rules[i].n_steps = (unsigned int)rc;
		n_rules++;
	}
	frames_start(&fr, "dpi");
	signal(SIGUSR1, on_usr1);
	return 0;
}

static void
dpi_fini(struct zn_nf *nf)
{
	if (dpi == NULL)
		return;
	dpi_finish(dpi);
	sync_counters(nf);
	write_report();
	/* Not while the manager stops: its memory goes with it. */
	if (!zn_nf_manager_stopping(nf))
		dpi_free(dpi);
}

static void
dpi_usage(FILE *out)
{
	fprintf(out,
		"  -r, --report FILE     flow report (ndpiReader -w format), "
		"written at exit\n"
		"                        and on SIGUSR1\n"
		"  -d, --proto-dir DIR   nDPI files: protos.txt, "
		"categories.txt,\n"
		"                        risky_domains.txt, ja3_fingerprints."
		"csv, sha1_fingerprints.csv\n"
		"  -s, --steer P=CHAIN   once a flow is classified as P, "
		"steer it (both\n"
		"                        directions) along CHAIN "
		"(svc:S,port:P,drop); repeatable\n");
	frames_usage(out, &fr);
}

static int
dpi_parse_args(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option lo[] = {
		{ "report", required_argument, NULL, 'r' },
		{ "proto-dir", required_argument, NULL, 'd' },
		{ "steer", required_argument, NULL, 's' },
		FRAMES_LONGOPTS,
		{ NULL, 0, NULL, 0 },
	};
	int c, rc;

	(void)nf;
	while ((c = getopt_long(argc, argv, "r:d:s:" FRAMES_SHORTOPTS, lo,
				NULL)) != -1) {
		switch (c) {
		case 'r': report_path = optarg; break;
		case 'd': {
			struct stat st;

			errno = 0;
			if (stat(optarg, &st) < 0 || !S_ISDIR(st.st_mode)) {
				fprintf(stderr, "dpi: --proto-dir %s: %s\n",
					optarg, errno ? strerror(errno) :
					"not a directory");
				return -EINVAL;
			}
			proto_dir = optarg;
			break;
		}
		case 's':
			if (n_rule_text == MAX_RULES ||
			    strchr(optarg, '=') == NULL)
				return -EINVAL;
			rule_text[n_rule_text++] = optarg;
			break;
		default:
			rc = frames_option(&fr, c, optarg);
			if (rc != 0)
				return -EINVAL;
			break;
		}
	}
	return optind == argc ? 0 : -EINVAL;
}

static const struct zn_nf_ops dpi_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "dpi",
	.parse_args = dpi_parse_args,
	.usage = dpi_usage,
	.init = dpi_init,
	.burst = dpi_burst,
	.tick = dpi_tick,
	.fini = dpi_fini,
};

ZN_NF_REGISTER(dpi_ops)
