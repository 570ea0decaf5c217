/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_byteorder.h>
#include <rte_common.h>
#include <rte_fib.h>
#include <rte_fib6.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_rib.h>
#include <rte_rib6.h>

#include <zeronf/flow.h>
#include <zeronf/nf.h>

#include "routes.h"

/* Indexes stay below the tables' "no route" value. */
#define MAX_NH (1u << 24)
/* tbl8 groups (1 KB each with 4-byte next hops): one per IPv4 prefix
 * longer than /24 at most, and up to 13 per IPv6 prefix longer than /24
 * (fewer where they share their first bits); beyond the loaded routes,
 * this many, plus one per 2 (IPv4) or 4 (IPv6) routes of room for live
 * adds: a live add that finds none left fails with -ENOSPC. */
#define TBL8_SPARE 256u

struct route {
	uint8_t v6;
	uint8_t depth;
	uint8_t addr[16];
	uint32_t nh;
};

/* A decimal number in [0, max]: digits only (no sign, no hex, no space);
 * leading zeros are decimal. */
int
routes_parse_dec(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (*s == '\0')
		return -EINVAL;
	for (; *s != '\0'; s++) {
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		v = v * 10 + (uint64_t)(*s - '0');
		if (v > max)
			return -EINVAL;
	}
	*out = v;
	return 0;
}

/* "PREFIX/LEN" into @p rt (a route names its length), by libzeronf's
 * parser, the one the flow director and `zeronf validate` use. */
static int
parse_prefix(const char *pfx, struct route *rt)
{
	int ver;

	if (strchr(pfx, '/') == NULL)
		return -EINVAL;
	ver = zn_ip_prefix_parse(pfx, rt->addr, &rt->depth);
	if (ver < 0)
		return ver;
	rt->v6 = ver == 6;
	return 0;
}

static int
parse_line(char *line, struct route *rt)
{
	char *save = NULL;
	char *pfx = strtok_r(line, " \t\r\n", &save);
	char *nh = strtok_r(NULL, " \t\r\n", &save);
	uint64_t v;

	if (pfx == NULL || nh == NULL ||
	    strtok_r(NULL, " \t\r\n", &save) != NULL ||
	    parse_prefix(pfx, rt) < 0 || routes_parse_dec(nh, UINT32_MAX, &v) < 0)
		return -EINVAL;
	rt->nh = (uint32_t)v;
	return 0;
}

static bool
skip_line(const char *line)
{
	return line[0] == '#' || line[0] == ';' ||
	       strspn(line, " \t\r\n") == strlen(line);
}

/* The index of next-hop id @p id, added on first use. */
static int
nh_index(struct routes *r, uint32_t id)
{
	void *data;
	int rc;

	if (rte_hash_lookup_data(r->ids, &id, &data) >= 0)
		return (int)(uintptr_t)data;
	if (r->n_nh == r->cap_nh)
		return -ENOSPC;
	rc = rte_hash_add_key_data(r->ids, &id, (void *)(uintptr_t)r->n_nh);
	if (rc < 0)
		return rc;
	r->nh_id[r->n_nh] = id;
	return (int)r->n_nh++;
}

/* With an NF: left to the manager should the NF die (see routes_load). */
static int
track(const struct routes *r, enum zn_nf_obj_type type, const char *name,
      const void *obj)
{
	return r->nf == NULL || obj == NULL ? 0 :
	       zn_nf_obj_track(r->nf, type, name, obj);
}

static void
untrack(const struct routes *r, const void *obj)
{
	if (r->nf != NULL && obj != NULL)
		zn_nf_obj_untrack(r->nf, obj);
}

static uint32_t
v4_host(const struct route *rt)
{
	uint32_t a;

	memcpy(&a, rt->addr, 4);
	return rte_be_to_cpu_32(a);
}

/*
 * IPv4 routes of /1 to /8. DPDK 22.11's rte_fib (DIR-24-8) installs routes
 * shorter than /4 wrongly: lookups far outside them return their next hop
 * (found by the differential unit test router_fib_vs_reference; /4 and
 * longer agree with the reference). So the table only ever sees /8 and
 * longer: each /8 holds the best of a real /8 route and the shorter routes
 * covering it, kept here (at most 255 + 256 of them). /0 routes are kept
 * apart (default_v4, default_v6): a table that would hold nothing but a
 * default is never made (128 MB saved), and its lookups fall back to it.
 */
static int
install8(struct routes *r, uint32_t slot)
{
	uint32_t want = r->slash8[slot];
	int rc = 0;

	for (int d = 7; d >= 1 && want == 0; d--)
		want = r->short4[(1u << d) - 1 + (slot >> (8 - d))];
	if (want == r->installed8[slot])
		return 0;
	if (want != 0)
		rc = rte_fib_add(r->v4, slot << 24, 8, want - 1);
	else
		rc = rte_fib_delete(r->v4, slot << 24, 8);
	if (rc == 0)
		r->installed8[slot] = want;
	return rc;
}

/* Set (idx + 1) or clear (0) a route of /1 to /8. @return 1 added, 0
 * replaced or removed, -ENOENT removing none, or -errno. */
static int
set_short4(struct routes *r, uint32_t ip, uint8_t depth, uint32_t val)
{
	uint32_t *cell = depth == 8 ? &r->slash8[ip >> 24] :
			 &r->short4[(1u << depth) - 1 + (ip >> (32 - depth))];
	uint32_t old = *cell, first = ip >> 24 & ~((1u << (8 - depth)) - 1);
	uint32_t n = 1u << (8 - depth);
	int rc = 0;

	if (val == 0 && old == 0)
		return -ENOENT;
	if (val != 0 && old == 0 && r->t4 >= r->cap_v4)
		return -ENOSPC;
	*cell = val;
	for (uint32_t s = first; s < first + n && rc == 0; s++)
		rc = install8(r, s);
	if (rc < 0) { /* put back what was */
		*cell = old;
		for (uint32_t s = first; s < first + n; s++)
			install8(r, s);
		return rc;
	}
	if (val != 0 && old == 0)
		r->t4++;
	else if (val == 0)
		r->t4--;
	return val != 0 && old == 0;
}

/* A table for one IP version, with room for @p n routes (and @p tbl8
 * groups) beyond r->room: at load, or at the first route of that version
 * added live (from the packet thread: it takes a moment to make). */
static int
create_v4(struct routes *r, uint32_t n, uint32_t tbl8)
{
	char nm[64];

	snprintf(nm, sizeof(nm), "%s_v4", r->name);
	r->cap_v4 = n + r->room;
	r->v4 = rte_fib_create(nm, SOCKET_ID_ANY, &(struct rte_fib_conf){
		.type = RTE_FIB_DIR24_8, .default_nh = ROUTES_NONE,
		.max_routes = (int)r->cap_v4 + 256,
		.dir24_8 = { .nh_sz = RTE_FIB_DIR24_8_4B,
			     .num_tbl8 = tbl8 + TBL8_SPARE + r->room / 2 } });
	if (r->v4 == NULL) {
		r->cap_v4 = 0;
		return -ENOMEM;
	}
	return track(r, ZN_NF_OBJ_FIB, nm, r->v4);
}

static int
create_v6(struct routes *r, uint32_t n, uint32_t tbl8)
{
	char nm[64];

	snprintf(nm, sizeof(nm), "%s_v6", r->name);
	r->cap_v6 = n + r->room;
	r->v6 = rte_fib6_create(nm, SOCKET_ID_ANY, &(struct rte_fib6_conf){
		.type = RTE_FIB6_TRIE, .default_nh = ROUTES_NONE,
		.max_routes = (int)r->cap_v6,
		.trie = { .nh_sz = RTE_FIB6_TRIE_4B,
			  .num_tbl8 = tbl8 + TBL8_SPARE + r->room / 4 } });
	if (r->v6 == NULL) {
		r->cap_v6 = 0;
		return -ENOMEM;
	}
	return track(r, ZN_NF_OBJ_FIB6, nm, r->v6);
}

static void
count(struct routes *r)
{
	r->n_v4 = r->t4 + (r->default_v4 != 0);
	r->n_v6 = r->t6 + (r->default_v6 != 0);
}

/* Add one parsed route. @return 1 added, 0 replaced, or -errno. */
static int
add_route(struct routes *r, const struct route *rt)
{
	int idx = nh_index(r, rt->nh), rc;
	bool exists;

	if (idx < 0)
		return idx;
	if (rt->depth == 0) {
		uint32_t *d = rt->v6 ? &r->default_v6 : &r->default_v4;

		exists = *d != 0;
		*d = (uint32_t)idx + 1;
		count(r);
		return !exists;
	}
	if (rt->v6) {
		if (r->v6 == NULL && (rc = create_v6(r, 0, 0)) < 0)
			return rc;
		exists = rte_rib6_lookup_exact(rte_fib6_get_rib(r->v6),
					       rt->addr, rt->depth) != NULL;
		if (!exists && r->t6 >= r->cap_v6)
			return -ENOSPC;
		rc = rte_fib6_add(r->v6, rt->addr, rt->depth, (uint64_t)idx);
		r->t6 += rc == 0 && !exists;
	} else {
		uint32_t ip = v4_host(rt);

		if (r->v4 == NULL && (rc = create_v4(r, 0, 0)) < 0)
			return rc;
		if (rt->depth <= 8) {
			rc = set_short4(r, ip, rt->depth, (uint32_t)idx + 1);
			count(r);
			return rc;
		}
		exists = rte_rib_lookup_exact(rte_fib_get_rib(r->v4), ip,
					      rt->depth) != NULL;
		if (!exists && r->t4 >= r->cap_v4)
			return -ENOSPC;
		rc = rte_fib_add(r->v4, ip, rt->depth, (uint64_t)idx);
		r->t4 += rc == 0 && !exists;
	}
	count(r);
	return rc < 0 ? rc : !exists;
}

int
routes_load(struct routes *r, const char *path, const char *name,
	    uint32_t extra, struct zn_nf *nf, char *err, size_t errlen)
{
	uint32_t n4 = 0, n6 = 0, long4 = 0, tbl8_6 = 0, lineno = 0;
	char line[512], nm[64];
	struct route rt;
	FILE *f = NULL;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->nf = nf;
	if (strlen(name) > 14) { /* "MP_" name "_v6": a mempool name */
		snprintf(err, errlen, "table name '%s' too long", name);
		return -EINVAL;
	}
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->room = extra;
	if (path != NULL) {
		f = fopen(path, "r");
		if (f == NULL) {
			rc = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return rc;
		}
	}
	/* Pass 1: validate, and size the tables. */
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (strchr(line, '\n') == NULL && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path,
				 lineno);
			rc = -EINVAL;
			goto out;
		}
		if (skip_line(line))
			continue;
		if (parse_line(line, &rt) < 0) {
			snprintf(err, errlen, "%s:%u: not \"PREFIX/LEN "
				 "NEXT-HOP\" (decimal numbers)", path, lineno);
			rc = -EINVAL;
			goto out;
		}
		if (rt.depth == 0)
			continue; /* kept apart: no table */
		if (rt.v6) {
			n6++;
			tbl8_6 += rt.depth > 24 ? (rt.depth - 24 + 7) / 8 : 0;
		} else {
			n4++;
			long4 += rt.depth > 24;
		}
	}
	if ((uint64_t)n4 + n6 + 2ull * extra + 2 > INT32_MAX) {
		snprintf(err, errlen, "too many routes");
		rc = -E2BIG;
		goto out;
	}
	/* Next hops: one per route at most, live ones included. */
	r->cap_nh = (uint32_t)RTE_MIN((uint64_t)n4 + n6 + 2ull * extra + 2,
				      (uint64_t)MAX_NH);
	snprintf(nm, sizeof(nm), "%s_nh", name);
	r->ids = rte_hash_create(&(struct rte_hash_parameters){
		.name = nm, .entries = RTE_MAX(r->cap_nh, 8u), .key_len = 4,
		.hash_func = rte_hash_crc, .socket_id = SOCKET_ID_ANY });
	r->nh_id = calloc(r->cap_nh, sizeof(uint32_t));
	rc = r->ids == NULL || r->nh_id == NULL ? -ENOMEM :
	     track(r, ZN_NF_OBJ_HASH, nm, r->ids);
	if (rc == 0 && n4 > 0)
		rc = create_v4(r, n4, long4);
	if (rc == 0 && n6 > 0)
		rc = create_v6(r, n6, tbl8_6);
	if (rc < 0) {
		snprintf(err, errlen, "cannot create route tables for %u IPv4 "
			 "and %u IPv6 routes: %s (manager --mem?)", n4, n6,
			 strerror(-rc));
		goto out;
	}
	if (f == NULL)
		return 0;
	/* Pass 2: add. */
	rewind(f);
	lineno = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (skip_line(line))
			continue;
		if (parse_line(line, &rt) < 0) {
			snprintf(err, errlen, "%s:%u: changed while loading",
				 path, lineno);
			rc = -EINVAL;
			goto out;
		}
		rc = add_route(r, &rt);
		if (rc < 0) {
			snprintf(err, errlen, "%s:%u: cannot add the route: "
				 "%s", path, lineno, strerror(-rc));
			goto out;
		}
	}
	rc = 0;
out:
	if (f != NULL)
		fclose(f);
	if (rc < 0)
		routes_free(r);
	return rc;
}

int
routes_add(struct routes *r, const char *prefix, uint32_t nh, char *err,
	   size_t errlen)
{
	struct route rt;
	int rc;

	if (parse_prefix(prefix, &rt) < 0) {
		snprintf(err, errlen, "bad prefix '%s' (want A.B.C.D/LEN or "
			 "IPV6/LEN)", prefix);
		return -EINVAL;
	}
	rt.nh = nh;
	rc = add_route(r, &rt);
	if (rc == -ENOSPC)
		snprintf(err, errlen, "no room for the route (%u IPv4, %u IPv6, "
			 "%u next hops in tables of %u, %u, %u; --route-room)",
			 r->t4, r->t6, r->n_nh, r->cap_v4, r->cap_v6, r->cap_nh);
	else if (rc < 0)
		snprintf(err, errlen, "cannot add the route: %s",
			 strerror(-rc));
	return rc;
}

int
routes_del(struct routes *r, const char *prefix, char *err, size_t errlen)
{
	struct route rt;
	int rc = -ENOENT;

	if (parse_prefix(prefix, &rt) < 0) {
		snprintf(err, errlen, "bad prefix '%s'", prefix);
		return -EINVAL;
	}
	if (rt.depth == 0) {
		uint32_t *d = rt.v6 ? &r->default_v6 : &r->default_v4;

		rc = *d != 0 ? 0 : -ENOENT;
		*d = 0;
	} else if (rt.v6 && r->v6 != NULL &&
		   rte_rib6_lookup_exact(rte_fib6_get_rib(r->v6), rt.addr,
					 rt.depth) != NULL) {
		rc = rte_fib6_delete(r->v6, rt.addr, rt.depth);
		r->t6 -= rc == 0;
	} else if (!rt.v6 && r->v4 != NULL && rt.depth <= 8) {
		rc = set_short4(r, v4_host(&rt), rt.depth, 0);
	} else if (!rt.v6 && r->v4 != NULL &&
		   rte_rib_lookup_exact(rte_fib_get_rib(r->v4), v4_host(&rt),
					rt.depth) != NULL) {
		rc = rte_fib_delete(r->v4, v4_host(&rt), rt.depth);
		r->t4 -= rc == 0;
	}
	count(r);
	if (rc < 0)
		snprintf(err, errlen, rc == -ENOENT ? "no route %s" :
			 "cannot remove %s", prefix);
	return rc;
}

uint32_t
routes_lookup4(const struct routes *r, uint32_t ip)
{
	uint64_t nh = ROUTES_NONE;

	if (r->v4 != NULL)
		rte_fib_lookup_bulk(r->v4, &ip, &nh, 1);
	return routes_or_default4(r, nh);
}

uint32_t
routes_lookup6(const struct routes *r, const uint8_t ip[16])
{
	uint8_t ips[1][RTE_FIB6_IPV6_ADDR_SIZE];
	uint64_t nh = ROUTES_NONE;

	memcpy(ips[0], ip, 16);
	if (r->v6 != NULL)
		rte_fib6_lookup_bulk(r->v6, ips, &nh, 1);
	return routes_or_default6(r, nh);
}

void
routes_free(struct routes *r)
{
	untrack(r, r->v4);
	untrack(r, r->v6);
	untrack(r, r->ids);
	rte_fib_free(r->v4);
	rte_fib6_free(r->v6);
	rte_hash_free(r->ids);
	free(r->nh_id);
	memset(r, 0, sizeof(*r));
}
