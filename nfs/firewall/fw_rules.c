/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Rule files of the firewall NF: iptables' option syntax, one rule a
 * line (fw_rules.h; the grammar in docs/nfs/firewall.md). */

#include <arpa/inet.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fw_rules.h"

#define LINE_MAX_LEN 4096
#define MAX_TOKENS 64

#define P_ICMP 1
#define P_TCP 6
#define P_UDP 17
#define P_DCCP 33
#define P_ICMPV6 58
#define P_SCTP 132
#define P_UDPLITE 136

struct named {
	const char *name;
	int v;
};

static const struct named protos[] = {
	{ "tcp", P_TCP }, { "udp", P_UDP }, { "icmp", P_ICMP },
	{ "icmpv6", P_ICMPV6 }, { "ipv6-icmp", P_ICMPV6 },
	{ "sctp", P_SCTP }, { "udplite", P_UDPLITE }, { "dccp", P_DCCP },
	{ "gre", 47 }, { "esp", 50 }, { "ah", 51 }, { "igmp", 2 },
	{ NULL, 0 },
};

/* ICMP types by name: type << 8 | code, code 0: any code */
static const struct named icmp4_types[] = {
	{ "echo-reply", 0 << 8 }, { "destination-unreachable", 3 << 8 },
	{ "source-quench", 4 << 8 }, { "redirect", 5 << 8 },
	{ "echo-request", 8 << 8 }, { "router-advertisement", 9 << 8 },
	{ "router-solicitation", 10 << 8 }, { "time-exceeded", 11 << 8 },
	{ "parameter-problem", 12 << 8 }, { "timestamp-request", 13 << 8 },
	{ "timestamp-reply", 14 << 8 }, { "network-unreachable", 3 << 8 | 1 },
	{ "host-unreachable", 3 << 8 | 2 }, { "port-unreachable", 3 << 8 | 4 },
	{ "fragmentation-needed", 3 << 8 | 5 }, { NULL, 0 },
};

static const struct named icmp6_types[] = {
	{ "destination-unreachable", 1 << 8 }, { "packet-too-big", 2 << 8 },
	{ "time-exceeded", 3 << 8 }, { "parameter-problem", 4 << 8 },
	{ "echo-request", 128 << 8 }, { "echo-reply", 129 << 8 },
	{ "router-solicitation", 133 << 8 },
	{ "router-advertisement", 134 << 8 },
	{ "neighbour-solicitation", 135 << 8 },
	{ "neighbor-solicitation", 135 << 8 },
	{ "neighbour-advertisement", 136 << 8 },
	{ "neighbor-advertisement", 136 << 8 }, { NULL, 0 },
};

static const struct named tcp_flags[] = {
	{ "FIN", 0x01 }, { "SYN", 0x02 }, { "RST", 0x04 }, { "PSH", 0x08 },
	{ "ACK", 0x10 }, { "URG", 0x20 }, { "ECE", 0x40 }, { "CWR", 0x80 },
	{ "ALL", 0xff }, { "NONE", 0x00 }, { NULL, 0 },
};

static const struct named ct_states[] = {
	{ "NEW", FW_CT_NEW }, { "ESTABLISHED", FW_CT_ESTABLISHED },
	{ "RELATED", FW_CT_RELATED }, { "INVALID", FW_CT_INVALID },
	{ "UNTRACKED", FW_CT_UNTRACKED }, { NULL, 0 },
};

const char *
fw_verdict_name(uint8_t v)
{
	return v == FW_ACCEPT ? "ACCEPT" : v == FW_DROP ? "DROP" : "?";
}

struct pctx {
	char *err;
	size_t errlen;
	uint32_t line;
};

static int
fail(struct pctx *c, const char *fmt, ...)
{
	va_list ap;
	int n = snprintf(c->err, c->errlen, "line %u: ", c->line);

	va_start(ap, fmt);
	if (n >= 0 && (size_t)n < c->errlen)
		vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int
lookup(const struct named *t, const char *s, bool nocase)
{
	for (; t->name != NULL; t++)
		if (nocase ? strcasecmp(t->name, s) == 0 :
			     strcmp(t->name, s) == 0)
			return t->v;
	return -1;
}

/* Decimal 0..@p max, no sign; a leading zero is not octal. */
static int
dec(const char *s, unsigned long max, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*v = strtoul(s, &end, 10);
	return errno != 0 || *end != '\0' || *v > max ? -1 : 0;
}

static int
parse_addr(struct pctx *c, const char *opt, const char *s, uint8_t *a,
	   uint8_t *plen, uint8_t *family)
{
	char buf[64];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	unsigned long len;
	uint8_t fam, bits;

	if (n == 0 || n >= sizeof(buf))
		return fail(c, "%s wants ADDRESS[/LENGTH], not '%s'", opt, s);
	memcpy(buf, s, n);
	buf[n] = '\0';
	memset(a, 0, 16);
	if (inet_pton(AF_INET, buf, a) == 1)
		fam = 4;
	else if (inet_pton(AF_INET6, buf, a) == 1)
		fam = 6;
	else
		return fail(c, "%s: '%s' is not an IPv4 or IPv6 address", opt,
			    buf);
	bits = fam == 4 ? 32 : 128;
	if (slash != NULL && dec(slash + 1, bits, &len) < 0)
		return fail(c, "%s: prefix length '%s' is not 0..%u", opt,
			    slash + 1, bits);
	if (slash == NULL)
		len = bits;
	if (*family != 0 && *family != fam)
		return fail(c, "%s: an IPv%u address in an IPv%u rule", opt,
			    fam, *family);
	*family = fam;
	*plen = (uint8_t)len;
	/* host bits cleared, as iptables does */
	for (unsigned int i = 0; i < 16; i++) {
		unsigned int lo = i * 8;

		if (lo >= len)
			a[i] = 0;
		else if (lo + 8 > len)
			a[i] &= (uint8_t)(0xff << (8 - (len - lo)));
	}
	return 0;
}

static int
parse_ports(struct pctx *c, const char *opt, const char *s, uint16_t *lo,
	    uint16_t *hi)
{
	char buf[32];
	char *colon;
	unsigned long a = 0, b = 65535;

	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	colon = strchr(buf, ':');
	if (colon != NULL) {
		*colon = '\0';
		if ((buf[0] != '\0' && dec(buf, 65535, &a) < 0) ||
		    (colon[1] != '\0' && dec(colon + 1, 65535, &b) < 0))
			goto bad;
	} else {
		if (dec(buf, 65535, &a) < 0)
			goto bad;
		b = a;
	}
	if (a > b)
		return fail(c, "%s: range %lu:%lu is backwards", opt, a, b);
	*lo = (uint16_t)a;
	*hi = (uint16_t)b;
	return 0;
bad:
	return fail(c, "%s wants PORT or FIRST:LAST (0..65535), not '%s'", opt,
		    s);
}

static int
parse_list(struct pctx *c, const char *opt, const char *s,
	   const struct named *t, uint8_t *out)
{
	char buf[128];
	char *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return fail(c, "%s: '%s' is too long", opt, s);
	strcpy(buf, s);
	*out = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		int v = lookup(t, tok, true);

		if (v < 0)
			return fail(c, "%s: unknown '%s'", opt, tok);
		*out |= (uint8_t)v;
	}
	if (buf[0] == '\0' || s[strlen(s) - 1] == ',')
		return fail(c, "%s: an empty list", opt);
	return 0;
}

static int
parse_icmp(struct pctx *c, const char *opt, const char *s, bool v6,
	   struct fw_rule *r)
{
	int v = lookup(v6 ? icmp6_types : icmp4_types, s, true);
	unsigned long t, k;
	char buf[16];
	char *slash;

	if (v >= 0) {
		r->icmp_type = (int16_t)(v >> 8);
		r->icmp_code = (v & 0xff) != 0 ? (int16_t)(v & 0xff) : -1;
		return 0;
	}
	if (strlen(s) >= sizeof(buf))
		goto bad;
	strcpy(buf, s);
	slash = strchr(buf, '/');
	if (slash != NULL)
		*slash = '\0';
	if (dec(buf, 255, &t) < 0 ||
	    (slash != NULL && dec(slash + 1, 255, &k) < 0))
		goto bad;
	r->icmp_type = (int16_t)t;
	r->icmp_code = slash != NULL ? (int16_t)k : -1;
	return 0;
bad:
	return fail(c, "%s wants TYPE[/CODE] (0..255) or a type's name, not "
		    "'%s'", opt, s);
}

static bool
has_ports(uint8_t proto)
{
	return proto == P_TCP || proto == P_UDP || proto == P_SCTP ||
	       proto == P_UDPLITE || proto == P_DCCP;
}

/* One rule line, split into @p argc tokens. */
static int
parse_rule(struct pctx *c, int argc, char **argv, struct fw_rule *r,
	   uint8_t *policy)
{
	bool have_sport = false, have_dport = false, have_icmp = false,
	     have_flags = false, icmp6_opt = false, have_j = false;

	memset(r, 0, sizeof(*r));
	r->dport_hi = r->sport_hi = 65535;
	r->icmp_type = r->icmp_code = -1;
	r->line = c->line;
	if (strcmp(argv[0], "-P") == 0 || strcmp(argv[0], "--policy") == 0) {
		int v;

		if (argc != 2)
			return fail(c, "-P wants one verdict, ACCEPT or DROP");
		v = strcmp(argv[1], "ACCEPT") == 0 ? FW_ACCEPT :
		    strcmp(argv[1], "DROP") == 0 ? FW_DROP : 0;
		if (v == 0)
			return fail(c, "-P: '%s' is not ACCEPT or DROP",
				    argv[1]);
		*policy = (uint8_t)v;
		return 1; /* no rule */
	}
	for (int i = 0; i < argc; i++) {
		const char *o = argv[i];
		const char *a = i + 1 < argc ? argv[i + 1] : NULL;
		int rc = 0;

		if (strcmp(o, "-4") == 0 || strcmp(o, "-6") == 0) {
			uint8_t f = o[1] == '4' ? 4 : 6;

			if (r->family != 0 && r->family != f)
				return fail(c, "%s in an IPv%u rule", o,
					    r->family);
			r->family = f;
			continue;
		}
		if (strcmp(o, "--syn") == 0) {
			r->flags_mask = 0x17; /* SYN,RST,ACK,FIN */
			r->flags_cmp = 0x02;
			have_flags = true;
			continue;
		}
		if (a == NULL)
			return fail(c, "%s wants an argument", o);
		if (strcmp(o, "-p") == 0 || strcmp(o, "--protocol") == 0) {
			unsigned long v;
			int p = lookup(protos, a, true);

			if (strcasecmp(a, "all") == 0) {
				r->has_proto = false;
			} else if (p >= 0) {
				r->has_proto = true;
				r->proto = (uint8_t)p;
			} else if (dec(a, 255, &v) == 0) {
				r->has_proto = v != 0;
				r->proto = (uint8_t)v;
			} else {
				return fail(c, "-p: unknown protocol '%s'", a);
			}
		} else if (strcmp(o, "-s") == 0 || strcmp(o, "--source") == 0) {
			rc = parse_addr(c, o, a, r->src, &r->src_len,
					&r->family);
		} else if (strcmp(o, "-d") == 0 ||
			   strcmp(o, "--destination") == 0) {
			rc = parse_addr(c, o, a, r->dst, &r->dst_len,
					&r->family);
		} else if (strcmp(o, "--sport") == 0 ||
			   strcmp(o, "--source-port") == 0) {
			rc = parse_ports(c, o, a, &r->sport_lo, &r->sport_hi);
			have_sport = true;
		} else if (strcmp(o, "--dport") == 0 ||
			   strcmp(o, "--destination-port") == 0) {
			rc = parse_ports(c, o, a, &r->dport_lo, &r->dport_hi);
			have_dport = true;
		} else if (strcmp(o, "--icmp-type") == 0 ||
			   strcmp(o, "--icmpv6-type") == 0) {
			icmp6_opt = o[6] == 'v';
			rc = parse_icmp(c, o, a, icmp6_opt, r);
			have_icmp = true;
		} else if (strcmp(o, "--tcp-flags") == 0) {
			if (i + 2 >= argc)
				return fail(c, "--tcp-flags wants MASK COMP "
					    "(lists of SYN,ACK,FIN,RST,URG,"
					    "PSH,ECE,CWR,ALL,NONE)");
			rc = parse_list(c, o, a, tcp_flags, &r->flags_mask);
			if (rc == 0)
				rc = parse_list(c, o, argv[i + 2], tcp_flags,
						&r->flags_cmp);
			if (rc == 0 && (r->flags_cmp & ~r->flags_mask) != 0)
				return fail(c, "--tcp-flags: COMP has flags "
					    "MASK has not");
			have_flags = true;
			i++;
		} else if (strcmp(o, "--ctstate") == 0 ||
			   strcmp(o, "--state") == 0) {
			rc = parse_list(c, o, a, ct_states, &r->ct);
		} else if (strcmp(o, "-m") == 0 || strcmp(o, "--match") == 0) {
			/* iptables' match modules: what they offer is here */
			if (strcmp(a, "tcp") != 0 && strcmp(a, "udp") != 0 &&
			    strcmp(a, "icmp") != 0 && strcmp(a, "icmp6") != 0 &&
			    strcmp(a, "conntrack") != 0 &&
			    strcmp(a, "state") != 0)
				return fail(c, "-m %s: not supported (tcp, "
					    "udp, icmp, icmp6, conntrack, "
					    "state)", a);
		} else if (strcmp(o, "-j") == 0 || strcmp(o, "--jump") == 0) {
			r->verdict = strcmp(a, "ACCEPT") == 0 ? FW_ACCEPT :
				     strcmp(a, "DROP") == 0 ? FW_DROP : 0;
			if (r->verdict == 0)
				return fail(c, "-j: '%s' is not ACCEPT or "
					    "DROP", a);
			have_j = true;
		} else {
			return fail(c, "unknown option '%s'", o);
		}
		if (rc < 0)
			return rc;
		i++; /* its argument */
	}
	if (!have_j)
		return fail(c, "no verdict (-j ACCEPT or -j DROP)");
	if ((have_sport || have_dport) &&
	    !(r->has_proto && has_ports(r->proto)))
		return fail(c, "--sport/--dport need -p tcp, udp, sctp, "
			    "udplite or dccp");
	r->ports = have_sport || have_dport;
	if (have_flags && !(r->has_proto && r->proto == P_TCP))
		return fail(c, "--tcp-flags/--syn need -p tcp");
	if (have_icmp && !(r->has_proto &&
			   r->proto == (icmp6_opt ? P_ICMPV6 : P_ICMP)))
		return fail(c, "%s needs -p %s", icmp6_opt ? "--icmpv6-type" :
			    "--icmp-type", icmp6_opt ? "icmpv6" : "icmp");
	if (r->has_proto && r->proto == P_ICMP) {
		if (r->family == 6)
			return fail(c, "-p icmp in an IPv6 rule (icmpv6)");
		r->family = 4;
	}
	if (r->has_proto && r->proto == P_ICMPV6) {
		if (r->family == 4)
			return fail(c, "-p icmpv6 in an IPv4 rule (icmp)");
		r->family = 6;
	}
	return 0;
}

static int
split(char *s, char **argv)
{
	int n = 0;

	for (char *p = s; *p != '\0';) {
		while (*p == ' ' || *p == '\t' || *p == '\r')
			p++;
		if (*p == '\0' || *p == '#')
			break;
		if (n == MAX_TOKENS)
			return -1;
		argv[n++] = p;
		while (*p != '\0' && *p != ' ' && *p != '\t' && *p != '\r')
			p++;
		if (*p != '\0')
			*p++ = '\0';
	}
	return n;
}

int
fw_rules_parse(const char *text, size_t len, struct fw_ruleset *rs,
	       char *err, size_t errlen)
{
	struct pctx c = { .err = err, .errlen = errlen };
	char line[LINE_MAX_LEN + 1];
	char *argv[MAX_TOKENS];
	size_t pos = 0;
	int rc = 0;

	memset(rs, 0, sizeof(*rs));
	rs->policy = FW_ACCEPT;
	if (errlen > 0)
		err[0] = '\0';
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t n = nl ? (size_t)(nl - (text + pos)) : len - pos;
		struct fw_rule r;
		int argc;

		c.line++;
		if (n > LINE_MAX_LEN) {
			rc = fail(&c, "longer than %d bytes", LINE_MAX_LEN);
			break;
		}
		memcpy(line, text + pos, n);
		line[n] = '\0';
		pos += n + (nl != NULL);
		if (memchr(line, '\0', n) != NULL) {
			rc = fail(&c, "a NUL byte");
			break;
		}
		argc = split(line, argv);
		if (argc < 0) {
			rc = fail(&c, "more than %d words", MAX_TOKENS);
			break;
		}
		if (argc == 0)
			continue;
		rc = parse_rule(&c, argc, argv, &r, &rs->policy);
		if (rc < 0)
			break;
		if (rc == 1) {
			rc = 0;
			continue;
		}
		if (rs->n == FW_RULES_MAX) {
			snprintf(err, errlen, "line %u: more than %u rules",
				 c.line, FW_RULES_MAX);
			rc = -E2BIG;
			break;
		}
		if (rs->n == rs->cap) {
			uint32_t cap = rs->cap ? rs->cap * 2 : 64;
			struct fw_rule *nr = realloc(rs->r, cap * sizeof(*nr));

			if (nr == NULL) {
				snprintf(err, errlen, "out of memory");
				rc = -ENOMEM;
				break;
			}
			rs->r = nr;
			rs->cap = cap;
		}
		rs->r[rs->n++] = r;
	}
	if (rc < 0)
		fw_rules_free(rs);
	return rc;
}

void
fw_rules_free(struct fw_ruleset *rs)
{
	free(rs->r);
	rs->r = NULL;
	rs->n = rs->cap = 0;
}
