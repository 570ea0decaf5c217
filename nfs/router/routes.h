/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Route tables of the router NF: IPv4 on rte_lpm, IPv6 on rte_lpm6.
 * Routes map a prefix to a next-hop id (any 32-bit number: a port, an AS
 * number); the LPM tables hold an index into the table of distinct ids. */
#ifndef ZN_ROUTES_H
#define ZN_ROUTES_H

#include <stdint.h>

struct rte_lpm;
struct rte_lpm6;
struct zn_nf;

struct routes {
	struct zn_nf *nf;  /* tables tracked for it (zn_nf_obj_track), or NULL */
	struct rte_lpm *v4;
	struct rte_lpm6 *v6;
	uint32_t *nh_id;   /* index -> next-hop id */
	uint32_t n_nh;
	uint32_t n_v4, n_v6;
	/* rte_lpm/rte_lpm6 take depths from 1: a /0 route is kept here */
	int32_t default_v4, default_v6; /* next-hop index, or -1 */
};

/**
 * Load a route file: one route per line, "PREFIX/LEN NEXT-HOP" (IPv4 or
 * IPv6, whitespace-separated); lines starting with '#' or ';' and blank
 * lines are skipped (pyasn's ipasn .dat files load as they are). A later
 * route for the same prefix replaces the earlier one.
 * Tables are named after @p name; with @p nf, they are tracked for it so
 * that the manager frees them if the NF dies (even while loading).
 * @return 0, or -errno with a message naming the line in @p err.
 */
int routes_load(struct routes *r, const char *path, const char *name,
		struct zn_nf *nf, char *err, size_t errlen);
void routes_free(struct routes *r);

#endif /* ZN_ROUTES_H */
