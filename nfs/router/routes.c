/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_hash.h>
#include <rte_hash_crc.h>
#include <rte_lpm.h>
#include <rte_lpm6.h>

#include <zeronf/nf.h>

#include "routes.h"

#define MAX_NH (1u << 24) /* rte_lpm's next hop is 24 bits */

struct route {
	uint8_t v6;
	uint8_t depth;
	uint8_t addr[16];
	uint32_t nh;
};

static int
parse_line(char *line, struct route *rt)
{
	char *pfx = strtok(line, " \t\r\n"), *nh = strtok(NULL, " \t\r\n");
	char *slash, *end;
	unsigned long d, v;

	if (pfx == NULL || nh == NULL || strtok(NULL, " \t\r\n") != NULL)
		return -EINVAL;
	slash = strchr(pfx, '/');
	if (slash == NULL)
		return -EINVAL;
	*slash = '\0';
	memset(rt, 0, sizeof(*rt));
	rt->v6 = strchr(pfx, ':') != NULL;
	if (inet_pton(rt->v6 ? AF_INET6 : AF_INET, pfx, rt->addr) != 1)
		return -EINVAL;
	errno = 0;
	d = strtoul(slash + 1, &end, 10);
	if (errno || end == slash + 1 || *end != '\0' ||
	    d > (rt->v6 ? 128u : 32u))
		return -EINVAL;
	errno = 0;
	v = strtoul(nh, &end, 10);
	if (errno || end == nh || *end != '\0' || v > UINT32_MAX)
		return -EINVAL;
	rt->depth = (uint8_t)d;
	rt->nh = (uint32_t)v;
	return 0;
}

/* The index of next-hop id @p id, added on first use. */
static int
nh_index(struct routes *r, struct rte_hash *ids, uint32_t id)
{
	void *data;
	int rc;

	if (rte_hash_lookup_data(ids, &id, &data) >= 0)
		return (int)(uintptr_t)data;
	if (r->n_nh == MAX_NH)
		return -ENOSPC;
	rc = rte_hash_add_key_data(ids, &id, (void *)(uintptr_t)r->n_nh);
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

int
routes_load(struct routes *r, const char *path, const char *name,
	    struct zn_nf *nf, char *err, size_t errlen)
{
	uint32_t n4 = 0, n6 = 0, long4 = 0, tbl8_6 = 0, lineno = 0;
	char line[512], nm[64];
	struct rte_hash *ids = NULL;
	struct route rt;
	FILE *f;
	int rc = 0;

	memset(r, 0, sizeof(*r));
	r->nf = nf;
	r->default_v4 = r->default_v6 = -1;
	f = fopen(path, "r");
	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	/* Pass 1: validate, and size the tables. */
	while (fgets(line, sizeof(line), f) != NULL) {
		lineno++;
		if (line[0] == '#' || line[0] == ';' ||
		    strspn(line, " \t\r\n") == strlen(line))
			continue;
		if (parse_line(line, &rt) < 0) {
			snprintf(err, errlen, "%s:%u: not \"PREFIX/LEN "
				 "NEXT-HOP\"", path, lineno);
			rc = -EINVAL;
			goto out;
		}
		if (rt.depth == 0) {
			continue; /* the default route: no LPM rule */
		} else if (rt.v6) {
			n6++;
			tbl8_6 += rt.depth > 24 ? (rt.depth - 24 + 7) / 8 : 0;
		} else {
			n4++;
			long4 += rt.depth > 24;
		}
	}
	snprintf(nm, sizeof(nm), "%s_nh", name);
	ids = rte_hash_create(&(struct rte_hash_parameters){
		.name = nm, .entries = RTE_MAX(n4 + n6, 8u), .key_len = 4,
		.hash_func = rte_hash_crc, .socket_id = SOCKET_ID_ANY });
	r->nh_id = calloc(RTE_MAX(n4 + n6, 1u), sizeof(uint32_t));
	if (ids == NULL || r->nh_id == NULL ||
	    track(r, ZN_NF_OBJ_HASH, nm, ids) < 0) {
		snprintf(err, errlen, "out of memory for %u routes", n4 + n6);
		rc = -ENOMEM;
		goto out;
	}
	if (n4 > 0) {
		snprintf(nm, sizeof(nm), "%s_v4", name);
		/* a tbl8 group per prefix longer than /24, at most */
		r->v4 = rte_lpm_create(nm, SOCKET_ID_ANY, &(struct rte_lpm_config){
			.max_rules = n4, .number_tbl8s = long4 + 256 });
		rc = track(r, ZN_NF_OBJ_LPM, nm, r->v4);
	}
	if (n6 > 0) {
		snprintf(nm, sizeof(nm), "%s_v6", name);
		r->v6 = rte_lpm6_create(nm, SOCKET_ID_ANY,
					&(struct rte_lpm6_config){
			.max_rules = n6, .number_tbl8s = tbl8_6 + 256 });
		if (rc == 0)
			rc = track(r, ZN_NF_OBJ_LPM6, nm, r->v6);
	}
	if ((n4 > 0 && r->v4 == NULL) || (n6 > 0 && r->v6 == NULL) ||
	    rc < 0) {
		snprintf(err, errlen, "cannot create LPM tables for %u IPv4 "
			 "and %u IPv6 routes (manager --mem?)", n4, n6);
		rc = -ENOMEM;
		goto out;
	}
	/* Pass 2: add. */
	rewind(f);
	lineno = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		int idx;

		lineno++;
		if (line[0] == '#' || line[0] == ';' ||
		    strspn(line, " \t\r\n") == strlen(line))
			continue;
		parse_line(line, &rt);
		idx = nh_index(r, ids, rt.nh);
		if (idx < 0) {
			rc = idx;
		} else if (rt.depth == 0) {
			*(rt.v6 ? &r->default_v6 : &r->default_v4) = idx;
			rc = 0;
		} else if (rt.v6) {
			rc = rte_lpm6_add(r->v6, rt.addr, rt.depth,
					  (uint32_t)idx);
			r->n_v6 += rc == 0;
		} else {
			uint32_t a;

			memcpy(&a, rt.addr, 4);
			rc = rte_lpm_add(r->v4, rte_be_to_cpu_32(a), rt.depth,
					 (uint32_t)idx);
			r->n_v4 += rc == 0;
		}
		if (rc < 0) {
			snprintf(err, errlen, "%s:%u: cannot add the route: "
				 "%s", path, lineno, strerror(-rc));
			goto out;
		}
	}
out:
	fclose(f);
	untrack(r, ids);
	rte_hash_free(ids);
	if (rc < 0)
		routes_free(r);
	return rc;
}

void
routes_free(struct routes *r)
{
	untrack(r, r->v4);
	untrack(r, r->v6);
	rte_lpm_free(r->v4);
	rte_lpm6_free(r->v6);
	free(r->nh_id);
	memset(r, 0, sizeof(*r));
	r->default_v4 = r->default_v6 = -1;
}
