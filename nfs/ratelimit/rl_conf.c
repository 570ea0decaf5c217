/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The ratelimit NF's configuration (JSON, docs/nfs/ratelimit.md): its
 * classes, their matches, rates and bursts. Every refusal names where
 * in the file ("classes[2].rate: ..."). */

#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "rl.h"

#define MAX_RATE 1000000000000ull /* a terabit, a tera-packet */
#define MAX_BURST 10000000000ull  /* units */

static int
fail(char *err, size_t errlen, const char *where, const char *why)
{
	snprintf(err, errlen, "%s: %s", where, why);
	return -EINVAL;
}

int
rl_parse_amount(const char *s, bool burst, uint8_t *unit, uint64_t *units)
{
	static const struct {
		const char *sfx;
		uint8_t unit;
		double mul;
		bool burst;
	} sfx[] = {
		{ "pps", RL_PACKETS, 1, false },
		{ "kpps", RL_PACKETS, 1e3, false },
		{ "mpps", RL_PACKETS, 1e6, false },
		{ "bit", RL_BITS, 1, false }, { "kbit", RL_BITS, 1e3, false },
		{ "mbit", RL_BITS, 1e6, false },
		{ "gbit", RL_BITS, 1e9, false },
		{ "p", RL_PACKETS, 1, true }, { "pkt", RL_PACKETS, 1, true },
		{ "b", RL_BITS, 8, true }, { "kb", RL_BITS, 8e3, true },
		{ "mb", RL_BITS, 8e6, true },
	};
	char *end;
	double v;

	if (s == NULL || *s < '0' || *s > '9')
		return -EINVAL;
	v = strtod(s, &end);
	if (!isfinite(v) || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		double u;

		if (sfx[i].burst != burst || strcasecmp(end, sfx[i].sfx) != 0)
			continue;
		u = v * sfx[i].mul;
		if (u > (double)(burst ? MAX_BURST : MAX_RATE) ||
		    u != floor(u) || (u == 0 && burst))
			return -EINVAL;
		*unit = sfx[i].unit;
		*units = (uint64_t)u;
		return 0;
	}
	return -EINVAL;
}

uint64_t
rl_default_burst(const struct rl_spec *s)
{
	uint64_t b = s->rate / 100, least = s->unit == RL_BITS ? 1514 * 8 : 1;

	return b < least ? least : b;
}

static int
prefix(const char *s, uint8_t *a, uint8_t *len, uint8_t *family)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long l;
	char *end;
	uint8_t f;

	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	memset(a, 0, 16);
	if (inet_pton(AF_INET, buf, a) == 1)
		f = 4;
	else if (inet_pton(AF_INET6, buf, a) == 1)
		f = 6;
	else
		return -EINVAL;
	l = f == 4 ? 32 : 128;
	if (slash != NULL) {
		if (slash[1] < '0' || slash[1] > '9')
			return -EINVAL;
		l = strtoul(slash + 1, &end, 10);
		if (*end != '\0' || l > (f == 4 ? 32u : 128u))
			return -EINVAL;
	}
	if (*family != 0 && *family != f)
		return -EINVAL;
	*family = f;
	*len = (uint8_t)l;
	for (unsigned int i = 0; i < 16; i++) {
		unsigned int lo = i * 8;

		if (lo >= l)
			a[i] = 0;
		else if (lo + 8 > l)
			a[i] &= (uint8_t)(0xff << (8 - (l - lo)));
	}
	return 0;
}

static int
parse_match(json_t *m, struct rl_match *r, const char *where, char *err,
	    size_t errlen)
{
	char w[96];
	const char *key;
	json_t *v;

	r->vlan = -1;
	r->dport_hi = 65535;
	if (m == NULL)
		return 0;
	if (!json_is_object(m))
		return fail(err, errlen, where, "match must be an object");
	json_object_foreach(m, key, v) {
		snprintf(w, sizeof(w), "%s.match.%s", where, key);
		if (strcmp(key, "src") == 0 || strcmp(key, "dst") == 0) {
			bool src = key[0] == 's';

			if (!json_is_string(v) ||
			    prefix(json_string_value(v), src ? r->src : r->dst,
				   src ? &r->src_len : &r->dst_len,
				   &r->family) < 0)
				return fail(err, errlen, w, "want an IPv4 or "
					    "IPv6 ADDRESS[/LEN] (of one "
					    "version with the other)");
		} else if (strcmp(key, "proto") == 0) {
			const char *p = json_string_value(v);

			r->has_proto = true;
			if (p && strcmp(p, "tcp") == 0)
				r->proto = 6;
			else if (p && strcmp(p, "udp") == 0)
				r->proto = 17;
			else if (p && strcmp(p, "icmp") == 0)
				r->proto = 1;
			else if (p && strcmp(p, "icmpv6") == 0)
				r->proto = 58;
			else if (json_is_integer(v) &&
				 json_integer_value(v) >= 0 &&
				 json_integer_value(v) <= 255)
				r->proto = (uint8_t)json_integer_value(v);
			else
				return fail(err, errlen, w, "want tcp, udp, "
					    "icmp, icmpv6 or 0..255");
		} else if (strcmp(key, "dport") == 0) {
			json_int_t lo, hi;
			char *end;

			if (json_is_integer(v)) {
				lo = hi = json_integer_value(v);
			} else if (json_is_string(v)) {
				const char *s = json_string_value(v);

				lo = strtol(s, &end, 10);
				hi = *end == '-' ? strtol(end + 1, &end, 10) :
						   lo;
				if (*end != '\0' || end == s)
					lo = -1;
			} else {
				lo = -1;
				hi = 0;
			}
			if (lo < 0 || hi > 65535 || lo > hi)
				return fail(err, errlen, w, "want a port or "
					    "\"FIRST-LAST\" (0..65535)");
			r->dport_lo = (uint16_t)lo;
			r->dport_hi = (uint16_t)hi;
		} else if (strcmp(key, "vlan") == 0) {
			if (!json_is_integer(v) || json_integer_value(v) < 0 ||
			    json_integer_value(v) > 4095)
				return fail(err, errlen, w, "want 0..4095");
			r->vlan = (int32_t)json_integer_value(v);
		} else if (strcmp(key, "tcp_flags") == 0) {
			const char *f = json_string_value(v);

			if (f && strcmp(f, "syn") == 0) {
				r->flags_mask = 0x12;
				r->flags_cmp = 0x02;
			} else if (f && strcmp(f, "syn-ack") == 0) {
				r->flags_mask = r->flags_cmp = 0x12;
			} else if (f && strcmp(f, "rst") == 0) {
				r->flags_mask = r->flags_cmp = 0x04;
			} else if (f && strcmp(f, "fin") == 0) {
				r->flags_mask = r->flags_cmp = 0x01;
			} else {
				return fail(err, errlen, w, "want syn, syn-ack,"
					    " rst or fin");
			}
			if (!r->has_proto)
				r->proto = 6;
			r->has_proto = true;
		} else {
			return fail(err, errlen, w, "unknown (src, dst, proto, "
				    "dport, vlan, tcp_flags)");
		}
	}
	if (r->flags_mask && r->proto != 6)
		return fail(err, errlen, where, "tcp_flags with a proto other "
			    "than tcp");
	return 0;
}

static int
parse_spec(json_t *o, const char *rate_key, const char *burst_key,
	   struct rl_spec *s, const char *where, char *err, size_t errlen)
{
	json_t *r = json_object_get(o, rate_key);
	json_t *b = json_object_get(o, burst_key);
	char w[96];
	uint8_t bu;

	snprintf(w, sizeof(w), "%s.%s", where, rate_key);
	if (!json_is_string(r) ||
	    rl_parse_amount(json_string_value(r), false, &s->unit,
			    &s->rate) < 0 || s->rate == 0)
		return fail(err, errlen, w, "want a rate: N pps/kpps/mpps, or "
			    "N bit/kbit/mbit/gbit (a second; N > 0)");
	if (b == NULL) {
		s->burst = rl_default_burst(s);
		return 0;
	}
	snprintf(w, sizeof(w), "%s.%s", where, burst_key);
	if (!json_is_string(b) ||
	    rl_parse_amount(json_string_value(b), true, &bu, &s->burst) < 0)
		return fail(err, errlen, w, "want a size: N p (packets), or N "
			    "b/kb/mb (bytes)");
	if (bu != s->unit)
		return fail(err, errlen, w, "packets for a rate in pps, bytes "
			    "for a rate in bits");
	return 0;
}

static int
parse_class(json_t *o, struct rl_class *c, const char *where, bool dflt,
	    char *err, size_t errlen)
{
	static const char *const known[] = { "name", "match", "rate", "burst",
					     "per", "per_rate", "per_burst" };
	json_t *per = json_object_get(o, "per"), *name;
	const char *key;
	json_t *v;
	int rc;

	if (!json_is_object(o))
		return fail(err, errlen, where, "want an object");
	json_object_foreach(o, key, v) {
		bool ok = false;

		for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			ok |= strcmp(key, known[i]) == 0;
		if (!ok || (dflt && (strcmp(key, "match") == 0 ||
				     strcmp(key, "name") == 0))) {
			char w[96];

			snprintf(w, sizeof(w), "%s.%s", where, key);
			return fail(err, errlen, w, "unknown");
		}
	}
	name = json_object_get(o, "name");
	if (dflt) {
		snprintf(c->name, sizeof(c->name), "default");
	} else if (!json_is_string(name) ||
		   strlen(json_string_value(name)) == 0 ||
		   strlen(json_string_value(name)) >= RL_NAME_LEN) {
		return fail(err, errlen, where, "name: want a string of 1..31 "
			    "characters");
	} else {
		snprintf(c->name, sizeof(c->name), "%s",
			 json_string_value(name));
	}
	rc = parse_match(json_object_get(o, "match"), &c->match, where, err,
			 errlen);
	if (rc < 0)
		return rc;
	if (json_object_get(o, "rate") != NULL) {
		rc = parse_spec(o, "rate", "burst", &c->agg, where, err,
				errlen);
		if (rc < 0)
			return rc;
	} else if (json_object_get(o, "burst") != NULL) {
		return fail(err, errlen, where, "a burst with no rate");
	}
	if (per == NULL) {
		if (json_object_get(o, "per_rate") ||
		    json_object_get(o, "per_burst"))
			return fail(err, errlen, where, "per_rate without per");
	} else {
		const char *p = json_string_value(per);

		c->per = p == NULL ? RL_PER_NONE :
			 strcmp(p, "flow") == 0 ? RL_PER_FLOW :
			 strcmp(p, "src") == 0 ? RL_PER_SRC :
			 strcmp(p, "dst") == 0 ? RL_PER_DST : RL_PER_NONE;
		if (c->per == RL_PER_NONE)
			return fail(err, errlen, where, "per: want flow, src "
				    "or dst");
		rc = parse_spec(o, "per_rate", "per_burst", &c->each, where,
				err, errlen);
		if (rc < 0)
			return rc;
	}
	if (c->agg.rate == 0 && c->per == RL_PER_NONE)
		return fail(err, errlen, where, "no rate: want rate, or per "
			    "with per_rate");
	return 0;
}

int
rl_conf_parse(const char *text, struct rl_conf *conf, char *err,
	      size_t errlen)
{
	json_error_t je;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &je), *cl, *o;
	const char *key;
	json_t *v;
	size_t i;
	int rc = 0;

	memset(conf, 0, sizeof(*conf));
	if (root == NULL) {
		snprintf(err, errlen, "line %d: %s", je.line, je.text);
		return -EINVAL;
	}
	if (!json_is_object(root)) {
		rc = fail(err, errlen, "(top)", "want an object with classes "
			  "and default");
		goto out;
	}
	json_object_foreach(root, key, v)
		if (strcmp(key, "classes") != 0 &&
		    strcmp(key, "default") != 0) {
			rc = fail(err, errlen, key, "unknown (classes, "
				  "default)");
			goto out;
		}
	cl = json_object_get(root, "classes");
	if (cl != NULL && !json_is_array(cl)) {
		rc = fail(err, errlen, "classes", "want an array");
		goto out;
	}
	if (json_array_size(cl) > RL_MAX_CLASSES) {
		rc = fail(err, errlen, "classes", "more than 64");
		goto out;
	}
	json_array_foreach(cl, i, o) {
		char w[32];

		snprintf(w, sizeof(w), "classes[%zu]", i);
		rc = parse_class(o, &conf->c[i], w, false, err, errlen);
		if (rc < 0)
			goto out;
		for (size_t j = 0; j < i; j++)
			if (strcmp(conf->c[j].name, conf->c[i].name) == 0) {
				rc = fail(err, errlen, w, "name: used twice");
				goto out;
			}
		conf->n = (unsigned int)i + 1;
	}
	o = json_object_get(root, "default");
	if (o != NULL) {
		rc = parse_class(o, &conf->c[conf->n], "default", true, err,
				 errlen);
		if (rc < 0)
			goto out;
		conf->has_default = true;
	}
	if (conf->n == 0 && !conf->has_default)
		rc = fail(err, errlen, "(top)", "no class and no default: "
			  "nothing to limit");
out:
	json_decref(root);
	return rc;
}
