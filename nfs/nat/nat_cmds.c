/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The NAT NF's commands (nf.call, docs/nfs/nat.md), on its packet thread
 * between two bursts; and where its state lives. */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <zeronf/zeronf.h>

#include "nat_nf.h"
#include "../common/opts.h"
#include "../common/reply.h"

struct nat_nf nat;

static const char *const to_names[NAT_TO_MAX] = {
	"SYN", "ESTABLISHED", "FIN", "RST", "UNREPLIED", "REPLIED", "", "",
};

static json_t *
tuple_json(const struct nat_tuple *t)
{
	char s[16], d[16];

	snprintf(s, sizeof(s), "%u.%u.%u.%u", t->src >> 24,
		 t->src >> 16 & 255, t->src >> 8 & 255, t->src & 255);
	snprintf(d, sizeof(d), "%u.%u.%u.%u", t->dst >> 24,
		 t->dst >> 16 & 255, t->dst >> 8 & 255, t->dst & 255);
	return json_pack("{s:s, s:s, s:i, s:i}", "src", s, "dst", d,
			 "sport", t->sport, "dport", t->dport);
}

/* nat.list {"max": N}: sessions, each its tuple in (orig) and out
 * (xlat), protocol, state, seconds to expiry. */
static int
cmd_list(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a = json_loads(args, 0, NULL);
	json_int_t max = json_object_get(a, "max") ?
			 json_integer_value(json_object_get(a, "max")) : 40;
	json_t *o = json_object(), *arr = json_array();
	uint64_t now = coarse_ns();

	(void)nf;
	json_decref(a);
	for (uint32_t i = 0; i < nat.t.cap && json_array_size(arr) <
	     (size_t)max; i++) {
		const struct nat_sess *s = &nat.t.s[i];

		if (s->expires <= now)
			continue;
		json_array_append_new(arr, json_pack(
			"{s:i, s:o, s:o, s:s, s:b, s:I}", "proto",
			s->orig.proto, "orig", tuple_json(&s->orig), "xlat",
			tuple_json(&s->xlat), "state", to_names[s->timeout],
			"dnat", s->dnat, "expires_s",
			(json_int_t)((s->expires - now) / 1000000000ull)));
	}
	json_object_set_new(o, "in_use", json_integer(nat.t.in_use));
	json_object_set_new(o, "sessions", arr);
	return reply_json(o, reply, len); /* too many: ask for fewer (max) */
}

static int
cmd_stats(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	(void)nf;
	(void)args;
	snprintf(reply, len, "{\"in_use\": %u, \"capacity\": %u, "
		 "\"made\": %" PRIu64 ", "
		 "\"translated_out\": %" PRIu64 ", \"translated_in\": %"
		 PRIu64 ", \"errors_translated\": %" PRIu64 "}", nat.t.in_use,
		 nat.t.cap, nat.t.made, nat.translated_out, nat.translated_in,
		 nat.errors_translated);
	return 0;
}

static int
cmd_flush(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	uint32_t n = nat.t.in_use;

	(void)nf;
	(void)args;
	nat_flush(&nat.t);
	snprintf(reply, len, "{\"flushed\": %u}", n);
	return 0;
}

int
nat_cmds_register(struct zn_nf *nf)
{
	int rc = zn_nf_cmd_register(nf, "nat.list", cmd_list);

	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "nat.stats", cmd_stats);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "nat.flush", cmd_flush);
	return rc;
}
