/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The flow director's JSON forms (fdir_cmds.c's commands, and fuzzed):
 * an exact flow {proto, src, dst, sport, dport, vlan?}, a wildcard match
 * {ip?, proto?, src?, dst?, sport?, dport?}, and back. Every refusal says
 * which member and why. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fdir.h"
#include "../../lib/common/zn_util.h"

static const struct {
	const char *name;
	uint8_t proto;
} protos[] = {
	{ "icmp", 1 }, { "tcp", 6 }, { "udp", 17 }, { "gre", 47 },
	{ "esp", 50 }, { "icmpv6", 58 }, { "sctp", 132 },
};

static int
parse_proto(json_t *v, uint8_t *proto)
{
	if (json_is_integer(v) && json_integer_value(v) >= 0 &&
	    json_integer_value(v) <= 255) {
		*proto = (uint8_t)json_integer_value(v);
		return 0;
	}
	for (size_t i = 0; json_is_string(v) && i < RTE_DIM(protos); i++)
		if (strcmp(json_string_value(v), protos[i].name) == 0) {
			*proto = protos[i].proto;
			return 0;
		}
	return -EINVAL;
}

static json_t *
proto_json(uint8_t proto)
{
	for (size_t i = 0; i < RTE_DIM(protos); i++)
		if (protos[i].proto == proto)
			return json_string(protos[i].name);
	return json_integer(proto);
}

static int
parse_port(json_t *v, uint16_t *out)
{
	if (!json_is_integer(v) || json_integer_value(v) < 0 ||
	    json_integer_value(v) > 65535)
		return -EINVAL;
	*out = (uint16_t)json_integer_value(v);
	return 0;
}

/* 80, or "1000-2000". */
static int
parse_range(json_t *v, uint16_t *r)
{
	uint64_t lo, hi;
	char buf[16], *dash;

	if (json_is_integer(v)) {
		if (parse_port(v, &r[0]) < 0)
			return -EINVAL;
		r[1] = r[0];
		return 0;
	}
	if (!json_is_string(v) ||
	    strlen(json_string_value(v)) >= sizeof(buf))
		return -EINVAL;
	zn_strlcpy(buf, json_string_value(v), sizeof(buf));
	dash = strchr(buf, '-');
	if (dash == NULL)
		return -EINVAL;
	*dash = '\0';
	if (zn_parse_uint(buf, 0, 65535, &lo) < 0 ||
	    zn_parse_uint(dash + 1, lo, 65535, &hi) < 0)
		return -EINVAL;
	r[0] = (uint16_t)lo;
	r[1] = (uint16_t)hi;
	return 0;
}

/* Reject members not in @p allowed (a NULL-terminated list). */
int
zn_fdir_check_keys(json_t *o, const char *const *allowed, const char *what,
	   char *err, size_t errlen)
{
	const char *k;
	json_t *v;

	if (!json_is_object(o)) {
		snprintf(err, errlen, "%s must be an object", what);
		return -EINVAL;
	}
	json_object_foreach(o, k, v) {
		const char *const *a;

		for (a = allowed; *a != NULL && strcmp(*a, k) != 0; a++)
			;
		if (*a == NULL) {
			snprintf(err, errlen, "%s: unknown member '%s'", what,
				 k);
			return -EINVAL;
		}
	}
	return 0;
}

/* An exact flow: every member but vlan is required. */
int
zn_fdir_parse_flow(json_t *o, struct zn_flow_key *key, char *err,
		  size_t errlen)
{
	static const char *const keys[] = { "proto", "src", "dst", "sport",
					     "dport", "vlan", NULL };
	json_t *src = json_object_get(o, "src"), *dst = json_object_get(o,
									 "dst");
	json_t *vlan = json_object_get(o, "vlan");
	uint8_t l1, l2;
	int v1, v2;

	if (zn_fdir_check_keys(o, keys, "flow", err, errlen) < 0)
		return -EINVAL;
	memset(key, 0, sizeof(*key));
	v1 = json_is_string(src) ?
		     zn_ip_prefix_parse(json_string_value(src), key->src, &l1) : -1;
	v2 = json_is_string(dst) ?
		     zn_ip_prefix_parse(json_string_value(dst), key->dst, &l2) : -1;
	/* the first wrong thing, by name */
	if (v1 < 0 || v2 < 0) {
		json_t *bad = v1 < 0 ? src : dst;
		const char *which = v1 < 0 ? "src" : "dst";

		if (json_is_string(bad))
			snprintf(err, errlen, "flow.%s: '%s' is not an IP "
				 "address", which, json_string_value(bad));
		else
			snprintf(err, errlen, "flow.%s: an IP address (a "
				 "string) is required", which);
		return -EINVAL;
	}
	if (l1 != (v1 == 4 ? 32 : 128) || l2 != (v2 == 4 ? 32 : 128) ||
	    strchr(json_string_value(src), '/') != NULL ||
	    strchr(json_string_value(dst), '/') != NULL) {
		snprintf(err, errlen, "flow: src and dst are addresses, not "
			 "prefixes (a rule matches prefixes: rule.add)");
		return -EINVAL;
	}
	if (v1 != v2) {
		snprintf(err, errlen, "flow: src is IPv%d and dst IPv%d: one "
			 "IP version", v1, v2);
		return -EINVAL;
	}
	key->ip_version = (uint8_t)v1;
	if (parse_proto(json_object_get(o, "proto"), &key->proto) < 0 ||
	    parse_port(json_object_get(o, "sport"), &key->src_port) < 0 ||
	    parse_port(json_object_get(o, "dport"), &key->dst_port) < 0 ||
	    (vlan != NULL && (!json_is_integer(vlan) ||
			      json_integer_value(vlan) < 0 ||
			      json_integer_value(vlan) > 4095))) {
		snprintf(err, errlen, "flow: want proto (name or number), "
			 "sport and dport 0..65535, vlan 0..4095");
		return -EINVAL;
	}
	key->vlan = vlan ? (uint16_t)json_integer_value(vlan) : 0;
	return 0;
}

json_t *
zn_fdir_flow_json(const struct zn_flow_key *k)
{
	char a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
	int af = k->ip_version == 6 ? AF_INET6 : AF_INET;

	inet_ntop(af, k->src, a, sizeof(a));
	inet_ntop(af, k->dst, b, sizeof(b));
	return json_pack("{s:o, s:s, s:s, s:i, s:i, s:i}", "proto",
			 proto_json(k->proto), "src", a, "dst", b, "sport",
			 k->src_port, "dport", k->dst_port, "vlan", k->vlan);
}

int
zn_fdir_parse_match(json_t *o, struct zn_fdir_rule *r, char *err,
		   size_t errlen)
{
	static const char *const keys[] = { "proto", "src", "dst", "sport",
					     "dport", "ip", NULL };
	json_t *ip = json_object_get(o, "ip");
	const char *side[2] = { "src", "dst" };
	int ver = 0;

	if (zn_fdir_check_keys(o, keys, "match", err, errlen) < 0)
		return -EINVAL;
	memset(r, 0, sizeof(*r));
	r->proto_any = true;
	r->sport[1] = r->dport[1] = 65535;
	if (json_object_get(o, "proto") != NULL) {
		if (parse_proto(json_object_get(o, "proto"), &r->proto) < 0) {
			snprintf(err, errlen, "match.proto: a name or 0..255");
			return -EINVAL;
		}
		r->proto_any = false;
	}
	for (int s = 0; s < 2; s++) {
		json_t *v = json_object_get(o, side[s]);
		int pv;

		if (v == NULL)
			continue;
		pv = json_is_string(v) ?
			     zn_ip_prefix_parse(json_string_value(v),
					  s ? r->dst : r->src,
					  s ? &r->dst_len : &r->src_len) :
			     -EINVAL;
		if (pv < 0 || (ver != 0 && pv != ver)) {
			snprintf(err, errlen, "match.%s: an address or prefix "
				 "(one IP version for src and dst)", side[s]);
			return -EINVAL;
		}
		ver = pv;
	}
	if (ip != NULL) {
		json_int_t v = json_integer_value(ip);

		if (!json_is_integer(ip) || (v != 4 && v != 6) ||
		    (ver != 0 && ver != v)) {
			snprintf(err, errlen, "match.ip: 4 or 6, as src/dst");
			return -EINVAL;
		}
		ver = (int)v;
	}
	r->ip_version = (uint8_t)ver; /* 0: both */
	if ((json_object_get(o, "sport") != NULL &&
	     parse_range(json_object_get(o, "sport"), r->sport) < 0) ||
	    (json_object_get(o, "dport") != NULL &&
	     parse_range(json_object_get(o, "dport"), r->dport) < 0)) {
		snprintf(err, errlen, "match.sport/dport: a port or "
			 "\"lo-hi\"");
		return -EINVAL;
	}
	return 0;
}

json_t *
zn_fdir_match_json(const struct zn_fdir_rule *r)
{
	json_t *o = json_object();
	char a[INET6_ADDRSTRLEN + 8];
	int af = r->ip_version == 6 ? AF_INET6 : AF_INET;

	if (r->ip_version != 0)
		json_object_set_new(o, "ip", json_integer(r->ip_version));
	if (!r->proto_any)
		json_object_set_new(o, "proto", proto_json(r->proto));
	for (int s = 0; s < 2; s++) {
		size_t l;

		if ((s ? r->dst_len : r->src_len) == 0)
			continue;
		inet_ntop(af, s ? r->dst : r->src, a, INET6_ADDRSTRLEN);
		l = strlen(a);
		snprintf(a + l, sizeof(a) - l, "/%u",
			 s ? r->dst_len : r->src_len);
		json_object_set_new(o, s ? "dst" : "src", json_string(a));
	}
	for (int s = 0; s < 2; s++) {
		const uint16_t *p = s ? r->dport : r->sport;

		if (p[0] == 0 && p[1] == 65535)
			continue;
		snprintf(a, sizeof(a), "%u-%u", p[0], p[1]);
		json_object_set_new(o, s ? "dport" : "sport", json_string(a));
	}
	return o;
}

