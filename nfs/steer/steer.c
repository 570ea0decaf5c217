/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* steer: watch connections and, once one has sent --after packets (both
 * directions together), install a flow-director rule that sends the rest
 * of it, both directions, along --chain; every packet it sees passes on
 * (NEXT). The pattern of a DPI NF that diverts or bypasses a flow once it
 * knows what it is, or of an elephant-flow offload. Counters: flows
 * (connections seen), steered, steer_failed, table_full. */

#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zeronf/zeronf.h>

static uint32_t after = 1;
static uint32_t capacity = 1u << 16;
static struct zn_step steps[32];
static unsigned int n_steps;
static struct zn_ft *conns;
static int c_flows, c_steered, c_failed, c_full;

struct conn {
	uint32_t pkts;
	bool done; /* steered, or given up on */
};

static void
steer_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++) {
		struct zn_flow_key key;
		struct zn_ft_hit hit;
		struct conn *c;
		int rc;

		if (zn_flow_key_from_pkt(pkts[i], &key) < 0)
			continue;
		if (zn_ft_add(conns, &key, zn_pkt_flow_hash(pkts[i]), 0,
			      &hit) < 0) {
			zn_nf_counter_add(nf, c_full, 1);
			continue;
		}
		c = hit.data;
		if (hit.created)
			zn_nf_counter_add(nf, c_flows, 1);
		if (c->done || ++c->pkts < after)
			continue;
		c->done = true;
		rc = zn_nf_flow_steer(nf, &key, steps, n_steps,
				      ZN_STEER_F_BOTH);
		zn_nf_counter_add(nf, rc == 0 ? c_steered : c_failed, 1);
		if (rc < 0 && rc != -ENOSPC)
			fprintf(stderr, "steer: %s\n", strerror(-rc));
	}
}

static int
steer_parse(struct zn_nf *nf, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "after", required_argument, NULL, 'a' },
		{ "chain", required_argument, NULL, 'c' },
		{ "capacity", required_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long v;
	char *end;
	int c, rc;

	(void)nf;
	while ((c = getopt_long(argc, argv, "a:c:n:", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
			rc = zn_steps_parse(optarg, steps, RTE_DIM(steps));
			if (rc < 0)
				return rc;
			n_steps = (unsigned int)rc;
			break;
		case 'a':
		case 'n':
			v = strtoul(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' || v == 0 ||
			    v > (1ul << 26))
				return -EINVAL;
			*(c == 'a' ? &after : &capacity) = (uint32_t)v;
			break;
		default:
			return -EINVAL;
		}
	}
	return optind == argc && n_steps > 0 ? 0 : -EINVAL;
}

static int
steer_init(struct zn_nf *nf)
{
	char name[32];

	c_flows = zn_nf_counter_register(nf, "flows");
	c_steered = zn_nf_counter_register(nf, "steered");
	c_failed = zn_nf_counter_register(nf, "steer_failed");
	c_full = zn_nf_counter_register(nf, "table_full");
	snprintf(name, sizeof(name), "steer_%u", zn_nf_instance_id(nf));
	conns = zn_ft_create(&ZN_FT_OPTS(.name = name, .capacity = capacity,
					 .data_size = sizeof(struct conn),
					 .flags = ZN_FT_F_BIDIR));
	return conns != NULL ? 0 : -ENOMEM;
}

static void
steer_fini(struct zn_nf *nf)
{
	if (!zn_nf_manager_stopping(nf))
		zn_ft_free(conns);
}

static void
steer_usage(FILE *out)
{
	fprintf(out, "  -c, --chain HOPS      where steered flows go: "
		     "svc:S,port:P,drop (required)\n"
		     "  -a, --after N         steer a connection at its Nth "
		     "packet (default 1)\n"
		     "  -n, --capacity N      connections tracked (default "
		     "65536)\n");
}

static const struct zn_nf_ops steer_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "steer",
	.parse_args = steer_parse,
	.usage = steer_usage,
	.init = steer_init,
	.burst = steer_burst,
	.fini = steer_fini,
};

ZN_NF_REGISTER(steer_ops)
