/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow table's JSON (oft.h): matches by OpenFlow's OXM field names
 * (in_port, eth_dst, ipv4_src, tcp_dst, ...), a masked field as
 * "value/mask" (addresses: "10.0.0.0/8" too), checked field by field with
 * OpenFlow 1.3's prerequisites; actions; 64-bit cookies. What the of.*
 * commands (oft_cmds.c) and the events (oft.c, oft_io.c) read and write.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_ether.h>

#include "oft.h"

/* ---- matches ---- */

enum fkind { F_NUM, F_MAC, F_IP4, F_IP6 };

/* A field: where it is in the key, its width, and its prerequisite
 * (eth_type, then ip_proto; 0: none). */
static const struct ofield {
	const char *name;
	enum fkind kind;
	size_t off;
	unsigned int bytes;   /* F_NUM: 1, 2 or 4 */
	uint32_t max;         /* F_NUM: the largest value */
	bool maskable;
	uint16_t eth_type, eth_type2; /* either */
	uint8_t ip_proto;
} fields[] = {
#define K(f) offsetof(struct zn_oft_key, f)
	{ "in_port", F_NUM, K(in_port), 4, ZN_OFPP_MAX, false, 0, 0, 0 },
	{ "eth_dst", F_MAC, K(eth_dst), 6, 0, true, 0, 0, 0 },
	{ "eth_src", F_MAC, K(eth_src), 6, 0, true, 0, 0, 0 },
	{ "eth_type", F_NUM, K(eth_type), 2, 0xffff, false, 0, 0, 0 },
	{ "vlan_vid", F_NUM, K(vlan_vid), 2, 0x1fff, true, 0, 0, 0 },
	{ "ip_proto", F_NUM, K(ip_proto), 1, 0xff, false, 0x0800, 0x86dd, 0 },
	{ "ipv4_src", F_IP4, K(ip_src), 4, 0, true, 0x0800, 0, 0 },
	{ "ipv4_dst", F_IP4, K(ip_dst), 4, 0, true, 0x0800, 0, 0 },
	{ "ipv6_src", F_IP6, K(ip_src), 16, 0, true, 0x86dd, 0, 0 },
	{ "ipv6_dst", F_IP6, K(ip_dst), 16, 0, true, 0x86dd, 0, 0 },
	{ "tcp_src", F_NUM, K(l4_src), 2, 0xffff, false, 0x0800, 0x86dd, 6 },
	{ "tcp_dst", F_NUM, K(l4_dst), 2, 0xffff, false, 0x0800, 0x86dd, 6 },
	{ "udp_src", F_NUM, K(l4_src), 2, 0xffff, false, 0x0800, 0x86dd, 17 },
	{ "udp_dst", F_NUM, K(l4_dst), 2, 0xffff, false, 0x0800, 0x86dd, 17 },
	{ "sctp_src", F_NUM, K(l4_src), 2, 0xffff, false, 0x0800, 0x86dd,
	  132 },
	{ "sctp_dst", F_NUM, K(l4_dst), 2, 0xffff, false, 0x0800, 0x86dd,
	  132 },
	{ "icmpv4_type", F_NUM, K(l4_src), 2, 0xff, false, 0x0800, 0, 1 },
	{ "icmpv4_code", F_NUM, K(l4_dst), 2, 0xff, false, 0x0800, 0, 1 },
	{ "icmpv6_type", F_NUM, K(l4_src), 2, 0xff, false, 0x86dd, 0, 58 },
	{ "icmpv6_code", F_NUM, K(l4_dst), 2, 0xff, false, 0x86dd, 0, 58 },
	{ "tcp_flags", F_NUM, K(tcp_flags), 2, 0xfff, true, 0x0800, 0x86dd,
	  6 },
	{ "arp_op", F_NUM, K(ip_proto), 1, 0xff, false, 0x0806, 0, 0 },
	{ "arp_spa", F_IP4, K(ip_src), 4, 0, true, 0x0806, 0, 0 },
	{ "arp_tpa", F_IP4, K(ip_dst), 4, 0, true, 0x0806, 0, 0 },
#undef K
};

static const struct ofield *
field_find(const char *name)
{
	for (unsigned int i = 0; i < RTE_DIM(fields); i++)
		if (strcmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}

static void
put_num(uint8_t *at, unsigned int bytes, uint32_t v)
{
	if (bytes == 1) {
		*at = (uint8_t)v;
	} else if (bytes == 2) {
		uint16_t x = (uint16_t)v;

		memcpy(at, &x, 2);
	} else {
		memcpy(at, &v, 4);
	}
}

static uint32_t
get_num(const uint8_t *at, unsigned int bytes)
{
	uint16_t x;
	uint32_t y;

	if (bytes == 1)
		return *at;
	if (bytes == 2) {
		memcpy(&x, at, 2);
		return x;
	}
	memcpy(&y, at, 4);
	return y;
}

/* A whole string as a number, decimal or "0x..." (masks read best in
 * hex), no sign. 0 or -EINVAL. */
static int
text_u64(const char *s, uint64_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno != 0 || end == s || *end != '\0' || s[0] == '-')
		return -EINVAL;
	*v = x;
	return 0;
}

static int
parse_u32(const char *s, uint32_t *v)
{
	uint64_t x;

	if (text_u64(s, &x) < 0 || x > UINT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

/* An address (v4: 4 bytes, v6: 16) with an optional "/len" or "/mask". */
static int
parse_addr(const char *s, int af, uint8_t *v, uint8_t *mk)
{
	char buf[INET6_ADDRSTRLEN + 48];
	unsigned int bytes = af == AF_INET ? 4 : 16;
	char *slash;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", s);
	slash = strchr(buf, '/');
	memset(mk, 0xff, bytes);
	if (slash != NULL) {
		uint32_t len;

		*slash++ = '\0';
		if (strchr(slash, af == AF_INET ? '.' : ':') != NULL) {
			if (inet_pton(af, slash, mk) != 1)
				return -EINVAL;
		} else {
			if (parse_u32(slash, &len) < 0 || len > bytes * 8)
				return -EINVAL;
			for (unsigned int i = 0; i < bytes; i++) {
				int bits = (int)len - 8 * (int)i;

				mk[i] = bits >= 8 ? 0xff : bits <= 0 ? 0 :
					(uint8_t)(0xff << (8 - bits));
			}
		}
	}
	if (inet_pton(af, buf, v) != 1)
		return -EINVAL;
	for (unsigned int i = 0; i < bytes; i++)
		v[i] &= mk[i];
	return 0;
}

static int
field_parse(const struct ofield *f, json_t *j, struct zn_oft_key *value,
	    struct zn_oft_key *mask, char *err, size_t errlen)
{
	uint8_t *v = (uint8_t *)value + f->off, *mk = (uint8_t *)mask + f->off;
	const char *s = json_string_value(j);

	if (f->kind == F_NUM) {
		uint32_t ones = f->bytes == 4 ? UINT32_MAX :
				(uint32_t)((1u << (8 * f->bytes)) - 1);
		uint32_t x, m = ones;

		if (json_is_integer(j)) {
			json_int_t i = json_integer_value(j);

			if (i < 0 || (uint64_t)i > f->max)
				goto bad;
			x = (uint32_t)i;
		} else if (s != NULL) {
			char buf[64], *slash;

			if (strlen(s) >= sizeof(buf))
				goto bad;
			snprintf(buf, sizeof(buf), "%s", s);
			slash = strchr(buf, '/');
			if (slash != NULL) {
				*slash++ = '\0';
				if (!f->maskable || parse_u32(slash, &m) < 0 ||
				    m > ones)
					goto bad;
			}
			if (parse_u32(buf, &x) < 0 || x > f->max)
				goto bad;
		} else {
			goto bad;
		}
		/* OpenFlow's exact mask of a narrower field (vlan_vid's
		 * 13 bits, tcp_flags' 12): the whole width here */
		if (m == f->max && f->max < ones)
			m = ones;
		put_num(v, f->bytes, x & m);
		put_num(mk, f->bytes, m);
		return 0;
	}
	if (s == NULL)
		goto bad;
	if (f->kind == F_MAC) {
		char buf[64], *slash;
		struct rte_ether_addr a, b;

		if (strlen(s) >= sizeof(buf))
			goto bad;
		snprintf(buf, sizeof(buf), "%s", s);
		slash = strchr(buf, '/');
		memset(&b, 0xff, sizeof(b));
		if (slash != NULL) {
			*slash++ = '\0';
			if (rte_ether_unformat_addr(slash, &b) < 0)
				goto bad;
		}
		if (rte_ether_unformat_addr(buf, &a) < 0)
			goto bad;
		for (int i = 0; i < 6; i++) {
			v[i] = a.addr_bytes[i] & b.addr_bytes[i];
			mk[i] = b.addr_bytes[i];
		}
		return 0;
	}
	if (parse_addr(s, f->kind == F_IP4 ? AF_INET : AF_INET6, v, mk) == 0)
		return 0;
bad:
	snprintf(err, errlen, "match.%s: a bad value%s", f->name,
		 f->maskable ? "" : " (not maskable)");
	return -EINVAL;
}

int
zn_oft_match_parse(json_t *o, struct zn_oft_key *value,
		   struct zn_oft_key *mask, char *err, size_t errlen)
{
	const char *name;
	json_t *j;
	const struct ofield *eth_needs = NULL, *proto_needs = NULL;

	memset(value, 0, sizeof(*value));
	memset(mask, 0, sizeof(*mask));
	if (o == NULL)
		return 0;
	if (!json_is_object(o)) {
		snprintf(err, errlen, "match: an object");
		return -EINVAL;
	}
	json_object_foreach(o, name, j) {
		const struct ofield *f = field_find(name);
		int rc;

		if (f == NULL) {
			snprintf(err, errlen, "match.%s: not a field this "
				 "table matches (docs/sdn.md)", name);
			return -ENOENT;
		}
		rc = field_parse(f, j, value, mask, err, errlen);
		if (rc < 0)
			return rc;
		if (f->eth_type != 0)
			eth_needs = f;
		if (f->ip_proto != 0)
			proto_needs = f;
	}
	/* Prerequisites (OpenFlow 1.3 section 7.2.3.6), exact matches */
	if (eth_needs != NULL &&
	    (mask->eth_type != 0xffff ||
	     (value->eth_type != eth_needs->eth_type &&
	      value->eth_type != eth_needs->eth_type2))) {
		snprintf(err, errlen, "match.%s needs eth_type 0x%04x%s",
			 eth_needs->name, eth_needs->eth_type,
			 eth_needs->eth_type2 ? " or 0x86dd" : "");
		return -EPROTO;
	}
	if (proto_needs != NULL &&
	    (mask->ip_proto != 0xff ||
	     value->ip_proto != proto_needs->ip_proto)) {
		snprintf(err, errlen, "match.%s needs ip_proto %u",
			 proto_needs->name, proto_needs->ip_proto);
		return -EPROTO;
	}
	return 0;
}

static bool
field_applies(const struct ofield *f, const struct zn_oft_key *v,
	      const struct zn_oft_key *m)
{
	if (f->eth_type != 0 &&
	    (m->eth_type != 0xffff || (v->eth_type != f->eth_type &&
				       v->eth_type != f->eth_type2)))
		return false;
	if (f->ip_proto != 0 &&
	    (m->ip_proto != 0xff || v->ip_proto != f->ip_proto))
		return false;
	/* ip_proto of an ARP match is its opcode */
	if (strcmp(f->name, "ip_proto") == 0 && v->eth_type == 0x0806)
		return false;
	return true;
}

static int
prefix_len(const uint8_t *mk, unsigned int bytes)
{
	int len = 0;

	for (unsigned int i = 0; i < bytes; i++) {
		uint8_t b = mk[i];

		while (b & 0x80) {
			len++;
			b = (uint8_t)(b << 1);
		}
		if (b != 0)
			return -1;
		if (mk[i] != 0xff) {
			for (unsigned int j = i + 1; j < bytes; j++)
				if (mk[j] != 0)
					return -1;
			break;
		}
	}
	return len;
}

json_t *
zn_oft_match_json(const struct zn_oft_key *value, const struct zn_oft_key *mask)
{
	json_t *o = json_object();

	for (unsigned int i = 0; i < RTE_DIM(fields); i++) {
		const struct ofield *f = &fields[i];
		const uint8_t *v = (const uint8_t *)value + f->off;
		const uint8_t *mk = (const uint8_t *)mask + f->off;
		char buf[128], a[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN];
		bool zero = true, full = true;

		for (unsigned int k = 0; k < f->bytes; k++) {
			zero &= mk[k] == 0;
			full &= mk[k] == 0xff;
		}
		if (zero || !field_applies(f, value, mask))
			continue;
		if (f->kind == F_NUM) {
			uint32_t x = get_num(v, f->bytes),
				 m = get_num(mk, f->bytes);

			if (full)
				json_object_set_new(o, f->name,
						    json_integer(x));
			else {
				snprintf(buf, sizeof(buf), "0x%x/0x%x", x, m);
				json_object_set_new(o, f->name,
						    json_string(buf));
			}
			continue;
		}
		if (f->kind == F_MAC) {
			snprintf(a, sizeof(a), RTE_ETHER_ADDR_PRT_FMT,
				 v[0], v[1], v[2], v[3], v[4], v[5]);
			if (full) {
				json_object_set_new(o, f->name, json_string(a));
				continue;
			}
			snprintf(buf, sizeof(buf), "%s/" RTE_ETHER_ADDR_PRT_FMT,
				 a, mk[0], mk[1], mk[2], mk[3], mk[4], mk[5]);
			json_object_set_new(o, f->name, json_string(buf));
			continue;
		}
		{
			int af = f->kind == F_IP4 ? AF_INET : AF_INET6;
			int len = prefix_len(mk, f->bytes);

			inet_ntop(af, v, a, sizeof(a));
			if (full)
				snprintf(buf, sizeof(buf), "%s", a);
			else if (len >= 0)
				snprintf(buf, sizeof(buf), "%s/%d", a, len);
			else
				snprintf(buf, sizeof(buf), "%s/%s", a,
					 inet_ntop(af, mk, b, sizeof(b)));
			json_object_set_new(o, f->name, json_string(buf));
		}
	}
	return o;
}

/* ---- actions ---- */

int
zn_oft_action_parse(json_t *o, struct zn_oft_action *a, uint32_t *port,
		    char *err, size_t errlen)
{
	const char *type = json_string_value(json_object_get(o, "type"));

	memset(a, 0, sizeof(*a));
	*port = 0;
	if (type == NULL) {
		snprintf(err, errlen, "actions.type: chain, group, "
			 "controller, normal or drop");
		return -EINVAL;
	}
	if (strcmp(type, "drop") == 0) {
		a->verdict = ZN_OFT_DROP;
	} else if (strcmp(type, "normal") == 0) {
		a->verdict = ZN_OFT_NORMAL;
		*port = ZN_OFPP_NORMAL;
	} else if (strcmp(type, "controller") == 0) {
		json_t *ml = json_object_get(o, "max_len");

		a->verdict = ZN_OFT_CONTROLLER;
		a->max_len = ZN_OFPCML_NO_BUFFER;
		if (ml != NULL) {
			if (!json_is_integer(ml) || json_integer_value(ml) < 0 ||
			    json_integer_value(ml) > 0xffff) {
				snprintf(err, errlen, "actions.max_len: "
					 "0..65535");
				return -EINVAL;
			}
			a->max_len = (uint16_t)json_integer_value(ml);
		}
	} else if (strcmp(type, "group") == 0) {
		json_t *g = json_object_get(o, "group_id");

		a->verdict = ZN_OFT_GROUP;
		if (!json_is_integer(g) || json_integer_value(g) < 0 ||
		    json_integer_value(g) > ZN_OFPG_MAX) {
			snprintf(err, errlen, "actions.group_id: 0..%u",
				 ZN_OFPG_MAX);
			return -EINVAL;
		}
		a->group_id = (uint32_t)json_integer_value(g);
	} else if (strcmp(type, "chain") == 0) {
		json_t *steps = json_object_get(o, "steps"), *s;
		size_t i;

		a->verdict = ZN_OFT_CHAIN;
		if (!json_is_array(steps) || json_array_size(steps) == 0 ||
		    json_array_size(steps) > ZN_MAX_CHAIN_STEPS) {
			snprintf(err, errlen, "actions.steps: 1..%d steps",
				 ZN_MAX_CHAIN_STEPS);
			return -EINVAL;
		}
		json_array_foreach(steps, i, s) {
			if (!json_is_string(s) ||
			    zn_step_parse(json_string_value(s),
					  &a->steps[i]) < 0) {
				snprintf(err, errlen, "actions.steps[%zu]: a "
					 "step (svc:S, port:P)", i);
				return -EINVAL;
			}
		}
		a->n_steps = (uint16_t)json_array_size(steps);
	} else {
		static const struct { const char *n; uint32_t p; } res[] = {
			{ "flood", ZN_OFPP_FLOOD }, { "all", ZN_OFPP_ALL },
			{ "in_port", ZN_OFPP_IN_PORT },
			{ "table", ZN_OFPP_TABLE },
		};

		for (unsigned int i = 0; i < RTE_DIM(res); i++)
			if (strcmp(type, res[i].n) == 0) {
				*port = res[i].p;
				return 0;
			}
		snprintf(err, errlen, "actions.type: '%s' unknown", type);
		return -EINVAL;
	}
	return 0;
}

json_t *
zn_oft_action_json(const struct zn_oft_action *a)
{
	static const char *const v[] = { "chain", "drop", "controller",
					 "normal", "group" };
	json_t *o = json_pack("{s:s}", "type", a->verdict < RTE_DIM(v) ?
					       v[a->verdict] : "?");

	if (a->verdict == ZN_OFT_GROUP)
		json_object_set_new(o, "group_id", json_integer(a->group_id));
	if (a->verdict == ZN_OFT_CONTROLLER)
		json_object_set_new(o, "max_len", json_integer(a->max_len));
	if (a->verdict == ZN_OFT_CHAIN) {
		json_t *s = json_array();

		for (unsigned int i = 0; i < a->n_steps; i++) {
			char b[32];

			zn_step_format(&a->steps[i], b, sizeof(b));
			json_array_append_new(s, json_string(b));
		}
		json_object_set_new(o, "steps", s);
	}
	return o;
}

int
zn_oft_json_u64(json_t *j, uint64_t dflt, uint64_t *out)
{
	if (j == NULL) {
		*out = dflt;
		return 0;
	}
	if (json_is_integer(j) && json_integer_value(j) >= 0) {
		*out = (uint64_t)json_integer_value(j);
		return 0;
	}
	if (json_is_string(j))
		return text_u64(json_string_value(j), out);
	return -EINVAL;
}

json_t *
zn_oft_cookie_json(uint64_t c)
{
	char b[24];

	snprintf(b, sizeof(b), "0x%" PRIx64, c);
	return json_string(b);
}

json_t *
zn_oft_entry_json(const struct zn_oft_entry_info *in)
{
	return json_pack(
		"{s:o, s:i, s:o, s:i, s:i, s:i, s:I, s:I, s:I, s:o}",
		"match", zn_oft_match_json(&in->value, &in->mask),
		"priority", in->priority, "cookie",
		zn_oft_cookie_json(in->cookie), "idle_timeout",
		in->idle_timeout, "hard_timeout", in->hard_timeout, "flags",
		in->flags, "packets", (json_int_t)in->packets, "bytes",
		(json_int_t)in->bytes, "duration_ns",
		(json_int_t)in->duration_ns, "actions",
		zn_oft_action_json(&in->act));
}
