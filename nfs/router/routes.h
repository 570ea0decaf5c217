/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Route tables of the router NF: IPv4 on rte_fib (DIR-24-8 over rte_rib),
 * IPv6 on rte_fib6 (a trie over rte_rib6). Routes map a prefix to a
 * next-hop id (any 32-bit number: a port, an AS number); the tables hold
 * an index into the table of distinct ids. rte_fib over rte_lpm: a full
 * BGP table loads in a fraction of the time (rte_lpm_add rescans its rule
 * table on every add: 27.7 s for 512K prefixes, see docs/benchmarks.md)
 * and routes can be added and removed live. */
#ifndef ZN_ROUTES_H
#define ZN_ROUTES_H

#include <stddef.h>
#include <stdint.h>

struct rte_fib;
struct rte_fib6;
struct rte_hash;
struct zn_nf;

/* What a lookup returns where no route matches (the tables' default). */
#define ROUTES_NONE 0x7fffffffu

struct routes {
	struct zn_nf *nf;  /* tables tracked for it (zn_nf_obj_track), or NULL */
	char name[16];
	uint32_t room;        /* routes of each version beyond those loaded */
	struct rte_fib *v4;   /* NULL until a route other than /0 needs it */
	struct rte_fib6 *v6;
	struct rte_hash *ids; /* next-hop id -> index */
	uint32_t *nh_id;      /* index -> next-hop id */
	uint32_t n_nh, cap_nh;
	uint32_t n_v4, n_v6;  /* routes, /0 included */
	uint32_t t4, t6;      /* routes in the tables (not /0) */
	uint32_t cap_v4, cap_v6; /* what the tables hold (0: none yet) */
	uint32_t default_v4, default_v6; /* /0: index + 1; 0: none */
	/* IPv4 routes of /8 and shorter, kept here and installed in v4 as
	 * the /8s they cover (see routes.c): next-hop index + 1, 0 = none;
	 * short4 by position (1 << depth) - 1 + prefix, depth 0..7. */
	uint32_t short4[255];
	uint32_t slash8[256];
	uint32_t installed8[256]; /* what v4 holds at each /8, the same way */
};

/**
 * Load a route file: one route per line, "PREFIX/LEN NEXT-HOP" (IPv4 or
 * IPv6, whitespace-separated, decimal numbers); lines starting with '#'
 * or ';' and blank lines are skipped (pyasn's ipasn .dat files load as
 * they are). A later route for the same prefix replaces the earlier one.
 * The tables have room for @p extra more routes of each IP version (live
 * routes_add); a version with no route but /0 gets its table (64 MB) only
 * when a route is added live. Tables are named after @p name (at most 14
 * characters);
 * with @p nf, they are tracked for it so that the manager frees them if
 * the NF dies (even while loading). @p path NULL: empty tables.
 * @return 0, or -errno with a message naming the line in @p err.
 */
int routes_load(struct routes *r, const char *path, const char *name,
		uint32_t extra, struct zn_nf *nf, char *err, size_t errlen);

/**
 * Add (or replace) a route, "PREFIX/LEN" to next-hop @p nh. From the
 * thread that looks up (the tables are not safe for concurrent writes).
 * @return 1 added, 0 replaced, -EINVAL bad prefix, -ENOSPC table or
 *   next-hop table full (@p err says which).
 */
int routes_add(struct routes *r, const char *prefix, uint32_t nh,
	       char *err, size_t errlen);

/** Remove a route. @return 0, -EINVAL bad prefix, -ENOENT no such route. */
int routes_del(struct routes *r, const char *prefix, char *err,
	       size_t errlen);

/** A table lookup's result (ROUTES_NONE: no route) with the /0 route as
 *  the fallback: a next-hop index, or ROUTES_NONE. */
static inline uint32_t
routes_or_default4(const struct routes *r, uint64_t nh)
{
	return nh != ROUTES_NONE ? (uint32_t)nh :
	       r->default_v4 ? r->default_v4 - 1 : ROUTES_NONE;
}

static inline uint32_t
routes_or_default6(const struct routes *r, uint64_t nh)
{
	return nh != ROUTES_NONE ? (uint32_t)nh :
	       r->default_v6 ? r->default_v6 - 1 : ROUTES_NONE;
}

/** The next-hop index for an IPv4 destination (host order) or an IPv6
 * one, or ROUTES_NONE: one lookup, for tests and the control path. */
uint32_t routes_lookup4(const struct routes *r, uint32_t ip);
uint32_t routes_lookup6(const struct routes *r, const uint8_t ip[16]);

void routes_free(struct routes *r);

/** A decimal number in [0, max]: digits only (no sign, no hex, no
 * spaces; leading zeros are decimal). @return 0 or -EINVAL. */
int routes_parse_dec(const char *s, uint64_t max, uint64_t *out);

#endif /* ZN_ROUTES_H */
