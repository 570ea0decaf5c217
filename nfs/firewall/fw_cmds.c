/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The firewall NF's commands (nf.call, docs/nfs/firewall.md), on its
 * packet thread between two bursts: they change what the next burst
 * reads without locks. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <zeronf/zeronf.h>

#include "fw_nf.h"
#include "../common/opts.h"

static int
reply_counts(char *reply, size_t len)
{
	uint32_t v4, v6;

	fw_acl_counts(fw.acl, &v4, &v6);
	snprintf(reply, len, "{\"rules\": %u, \"policy\": \"%s\", "
		 "\"acl_rules_ipv4\": %u, \"acl_rules_ipv6\": %u}", fw.rules.n,
		 fw_verdict_name(fw.rules.policy), v4, v6);
	return 0;
}

/* rules.load {"path": FILE} or {"rules": TEXT}: the new rules replace
 * the old ones between two bursts; connections stay. */
static int
cmd_rules_load(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a = json_loads(args, 0, NULL);
	const char *path = json_string_value(json_object_get(a, "path"));
	const char *text = json_string_value(json_object_get(a, "rules"));
	char err[512];
	char *buf = NULL;
	size_t n = 0;
	int rc;

	if ((path == NULL) == (text == NULL)) {
		snprintf(reply, len, "rules.load wants {\"path\": FILE} or "
			 "{\"rules\": TEXT}");
		json_decref(a);
		return -EINVAL;
	}
	if (path != NULL)
		rc = fw_read_file(path, &buf, &n, err, sizeof(err));
	else
		rc = 0;
	if (rc == 0)
		rc = fw_install(nf, buf ? buf : text,
				buf ? n : strlen(text), err, sizeof(err));
	free(buf);
	json_decref(a);
	if (rc < 0) {
		snprintf(reply, len, "%s (the rules in force stay)", err);
		return rc;
	}
	return reply_counts(reply, len);
}

/* rules.list {"from": I, "max": N}: each rule's line and verdict and
 * the packets it decided (hits), and the policy's. */
static int
cmd_rules_list(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a = json_loads(args, 0, NULL);
	json_int_t from = json_integer_value(json_object_get(a, "from"));
	json_int_t max = json_object_get(a, "max") ?
			 json_integer_value(json_object_get(a, "max")) : 100;
	size_t off;
	int w;

	(void)nf;
	json_decref(a);
	if (from < 0 || max < 0) {
		snprintf(reply, len, "rules.list: from and max must be >= 0");
		return -EINVAL;
	}
	w = snprintf(reply, len, "{\"total\": %u, \"policy\": \"%s\", "
		     "\"policy_hits\": %" PRIu64 ", \"rules\": [", fw.rules.n,
		     fw_verdict_name(fw.rules.policy), fw.policy_hits);
	off = (size_t)w;
	for (json_int_t i = from; i < (json_int_t)fw.rules.n && i < from + max;
	     i++) {
		const struct fw_rule *r = &fw.rules.r[i];

		w = snprintf(reply + off, len - off, "%s{\"index\": %lld, "
			     "\"line\": %u, \"verdict\": \"%s\", \"hits\": "
			     "%" PRIu64 "}", i > from ? ", " : "",
			     (long long)i, r->line,
			     fw_verdict_name(r->verdict), fw.hits[i]);
		if (w < 0 || off + (size_t)w + 3 >= len)
			break; /* the rest: another call, from here */
		off += (size_t)w;
	}
	snprintf(reply + off, len - off, "]}");
	return 0;
}

static void
addr_str(const struct fw_tuple *t, const uint8_t *a, char *out, size_t n)
{
	if (t->family == 4)
		snprintf(out, n, "%u.%u.%u.%u", a[0], a[1], a[2], a[3]);
	else
		snprintf(out, n, "%x:%x:%x:%x:%x:%x:%x:%x",
			 a[0] << 8 | a[1], a[2] << 8 | a[3], a[4] << 8 | a[5],
			 a[6] << 8 | a[7], a[8] << 8 | a[9],
			 a[10] << 8 | a[11], a[12] << 8 | a[13],
			 a[14] << 8 | a[15]);
}

/* ct.list {"max": N}: connections (original direction). */
static int
cmd_ct_list(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a = json_loads(args, 0, NULL);
	json_int_t max = json_object_get(a, "max") ?
			 json_integer_value(json_object_get(a, "max")) : 50;
	struct fw_ct_stats s;
	uint64_t now = coarse_ns();
	size_t off;
	json_int_t shown = 0;
	int w;

	(void)nf;
	json_decref(a);
	fw_ct_get_stats(fw.ct, &s);
	w = snprintf(reply, len, "{\"in_use\": %u, \"connections\": [",
		     s.in_use);
	off = (size_t)w;
	for (uint32_t i = 0; i < s.capacity && shown < max; i++) {
		struct fw_tuple t;
		const char *tcp;
		uint64_t left;
		bool replied;
		char src[48], dst[48];

		if (!fw_ct_entry(fw.ct, i, now, &t, &tcp, &left, &replied))
			continue;
		addr_str(&t, t.src, src, sizeof(src));
		addr_str(&t, t.dst, dst, sizeof(dst));
		w = snprintf(reply + off, len - off, "%s{\"proto\": %u, "
			     "\"src\": \"%s\", \"dst\": \"%s\", \"sport\": %u, "
			     "\"dport\": %u, \"tcp_state\": \"%s\", "
			     "\"replied\": %s, \"expires_s\": %" PRIu64 "}",
			     shown ? ", " : "", t.proto, src, dst, t.sport,
			     t.dport, tcp, replied ? "true" : "false", left);
		if (w < 0 || off + (size_t)w + 3 >= len)
			break;
		off += (size_t)w;
		shown++;
	}
	snprintf(reply + off, len - off, "]}");
	return 0;
}

static int
cmd_ct_flush(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	struct fw_ct_stats s;

	(void)nf;
	(void)args;
	fw_ct_get_stats(fw.ct, &s);
	fw_ct_flush(fw.ct);
	snprintf(reply, len, "{\"flushed\": %u}", s.in_use);
	return 0;
}

static int
cmd_ct_stats(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	struct fw_ct_stats s;

	(void)nf;
	(void)args;
	fw_ct_get_stats(fw.ct, &s);
	snprintf(reply, len, "{\"in_use\": %u, \"capacity\": %u, \"found\": "
		 "%" PRIu64 ", \"created\": %" PRIu64 ", \"expired\": %" PRIu64
		 ", \"full\": %" PRIu64 ", \"reopened\": %" PRIu64
		 ", \"deleted\": %" PRIu64 "}", s.in_use, s.capacity, s.found,
		 s.created, s.expired, s.full, s.reopened, s.deleted);
	return 0;
}

int
fw_cmds_register(struct zn_nf *nf)
{
	int rc = zn_nf_cmd_register(nf, "rules.load", cmd_rules_load);

	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "rules.list", cmd_rules_list);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "ct.list", cmd_ct_list);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "ct.flush", cmd_ct_flush);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "ct.stats", cmd_ct_stats);
	return rc;
}
