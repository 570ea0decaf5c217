/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The NAT NF's rules from its options (--snat, --dnat, --netmap,
 * --portmap), into struct nat_nf. */

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "nat_nf.h"
#include "../common/opts.h"

/* "A.B.C.D[/LEN]" into host order; @p len may be NULL (no /LEN). */
static int
v4(const char *s, uint32_t *a, uint32_t *mask)
{
	char buf[32];
	const char *slash = strchr(s, '/');
	size_t n = slash ? (size_t)(slash - s) : strlen(s);
	uint64_t l = 32;
	struct in_addr in;

	if (n == 0 || n >= sizeof(buf) || (slash && mask == NULL))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, &in) != 1 ||
	    (slash && opt_dec(slash + 1, 32, &l) < 0))
		return -1;
	*a = ntohl(in.s_addr);
	if (mask != NULL) {
		*mask = l == 0 ? 0 : ~0u << (32 - l);
		*a &= *mask;
	}
	return 0;
}

/* "ADDR[:PORT]" or "ADDR[:LO-HI]". */
static int
addr_port(char *s, uint32_t *a, uint16_t *lo, uint16_t *hi, bool range)
{
	char *colon = strchr(s, ':');
	uint64_t x, y;

	*lo = *hi = 0;
	if (colon != NULL) {
		char *dash = range ? strchr(colon + 1, '-') : NULL;

		*colon = '\0';
		if (dash != NULL)
			*dash = '\0';
		if (opt_dec(colon + 1, 65535, &x) < 0 ||
		    (dash && opt_dec(dash + 1, 65535, &y) < 0) ||
		    (!dash && range) || (dash && y < x) || x == 0)
			return -1;
		*lo = (uint16_t)x;
		*hi = dash ? (uint16_t)y : (uint16_t)x;
	}
	return v4(s, a, NULL);
}

int
nat_conf_rule(int c, char *arg)
{
	char buf[96], *eq, *slash;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	eq = strchr(buf, '=');
	if (eq == NULL)
		return -1;
	*eq++ = '\0';
	switch (c) {
	case 's': {
		struct nat_snat *r = &nat.snat[nat.n_snat];

		if (nat.n_snat == NAT_MAX_RULES ||
		    v4(buf, &r->net, &r->mask) < 0 ||
		    addr_port(eq, &r->addr, &r->lo, &r->hi, true) < 0)
			return -1;
		r->range = r->lo != 0;
		nat.n_snat++;
		return 0;
	}
	case 'd': {
		struct nat_dnat *r = &nat.dnat[nat.n_dnat];
		uint16_t hi;

		slash = strchr(eq, '/');
		if (slash != NULL) {
			*slash++ = '\0';
			r->proto = strcmp(slash, "tcp") == 0 ? 6 :
				   strcmp(slash, "udp") == 0 ? 17 : 0;
			if (r->proto == 0)
				return -1;
		}
		if (nat.n_dnat == NAT_MAX_RULES ||
		    addr_port(buf, &r->addr, &r->port, &hi, false) < 0 ||
		    addr_port(eq, &r->to, &r->to_port, &hi, false) < 0 ||
		    (r->to_port && !r->port))
			return -1;
		nat.n_dnat++;
		return 0;
	}
	case 'm': {
		struct nat_netmap *r = &nat.netmap[nat.n_netmap];
		uint32_t m2;

		if (nat.n_netmap == NAT_MAX_RULES ||
		    v4(buf, &r->from, &r->mask) < 0 ||
		    v4(eq, &r->to, &m2) < 0 || m2 != r->mask)
			return -1;
		nat.n_netmap++;
		return 0;
	}
	case 'p': {
		struct nat_portmap *r = &nat.portmap[nat.n_portmap];
		char *dash = strchr(buf, '-');
		uint64_t lo, hi = 0, to;

		if (dash != NULL)
			*dash = '\0';
		if (nat.n_portmap == NAT_MAX_RULES ||
		    opt_dec(buf, 65535, &lo) < 0 ||
		    (dash && opt_dec(dash + 1, 65535, &hi) < 0) ||
		    opt_dec(eq, 65535, &to) < 0)
			return -1;
		if (!dash)
			hi = lo;
		if (hi < lo)
			return -1;
		*r = (struct nat_portmap){ (uint16_t)lo, (uint16_t)hi,
					   (uint16_t)to };
		nat.n_portmap++;
		return 0;
	}
	}
	return -1;
}
