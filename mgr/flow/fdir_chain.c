/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Flow director, control side: chains (fdir.c has the rules). Chains
 * have ids 0..255 (the packet metadata's `chain`); 0 is the default
 * chain. Rules name chains by their steps; equal step lists share one id
 * (interned, reference counted). A chain id's steps never change while a
 * rule uses it, and a freed id is reused last-freed-last, so a packet in
 * flight keeps following the chain it was classified into. Ports and
 * tenants have chains of their own (their packets no rule matches).
 */

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fdir.h"
#include "fdir_pvt.h"
#include "../fabric/fabric.h"
#include "../core/mgr.h"
#include "route.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_util.h"


int
fdir_validate_steps(struct zn_mgr *m, const struct zn_step *steps,
		   unsigned int n, char *err, size_t errlen)
{
	if (n == 0 || n > ZN_MAX_CHAIN_STEPS) {
		snprintf(err, errlen, "a chain has 1..%d hops",
			 ZN_MAX_CHAIN_STEPS);
		return -EINVAL;
	}
	for (unsigned int i = 0; i < n; i++) {
		int rc = zn_fabric_step_check(m, &steps[i], i + 1 == n, err,
					      errlen);

		if (rc < 0)
			return rc;
		if (steps[i].host != 0)
			continue; /* the far host checks its own */
		switch (steps[i].type) {
		case ZN_STEP_PORT:
			if (steps[i].id < m->n_ports)
				break;
			snprintf(err, errlen, "hop %u: no port %u (%u ports)",
				 i, steps[i].id, m->n_ports);
			return -EINVAL;
		case ZN_STEP_SERVICE:
			if (steps[i].id != 0 && steps[i].id < ZN_MAX_SERVICES)
				break;
			snprintf(err, errlen, "hop %u: bad service %u", i,
				 steps[i].id);
			return -EINVAL;
		case ZN_STEP_DROP:
			break;
		default:
			snprintf(err, errlen, "hop %u: bad type %u", i,
				 steps[i].type);
			return -EINVAL;
		}
	}
	/* An operator's chain too keeps each tenant inside its own. */
	return zn_tenant_steps_check(m, -1, steps, n, err, errlen);
}

/*
 * Find or create the chain of @p steps and take a reference.
 * @return chain id (1..255), or -ENOSPC. *created tells whether the
 * snapshot must be republished for workers to see it.
 */
/* Field by field (zn_step_equal), not memcmp: a step built by hand may
 * leave bytes a parsed one has zeroed. */
static bool
steps_equal(const struct zn_step *a, const struct zn_step *b, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		if (!zn_step_equal(&a[i], &b[i]))
			return false;
	return true;
}

static int
chain_get(struct zn_fdir *fd, const struct zn_step *steps, unsigned int n,
	  bool *created)
{
	int free_id = -1;

	*created = false;
	for (int id = 1; id < ZN_MAX_CHAINS; id++) {
		struct fdir_chain *c = &fd->chains[id];

		if (c->len == n && steps_equal(c->steps, steps, n)) {
			if (c->refs++ == 0)
				c->freed_seq = 0;
			return id;
		}
		if (c->refs == 0 &&
		    (free_id < 0 || c->len == 0 ||
		     (fd->chains[free_id].len != 0 &&
		      c->freed_seq < fd->chains[free_id].freed_seq)))
			free_id = id;
	}
	if (free_id < 0)
		return -ENOSPC;
	fd->chains[free_id].len = (uint16_t)n;
	memset(fd->chains[free_id].steps, 0, sizeof(fd->chains[free_id].steps));
	memcpy(fd->chains[free_id].steps, steps, n * sizeof(*steps));
	fd->chains[free_id].refs = 1;
	*created = true;
	return free_id;
}

/* chain_get, its failure said in @p err. */
int
fdir_chain_take(struct zn_fdir *fd, const struct zn_step *steps,
		unsigned int n, bool *created, char *err, size_t errlen)
{
	int id = chain_get(fd, steps, n, created);

	if (id < 0)
		snprintf(err, errlen, "no free chain id (%d chains)",
			 ZN_MAX_CHAINS - 1);
	return id;
}

void
fdir_chain_put(struct zn_fdir *fd, unsigned int id)
{
	if (id == 0 || id >= ZN_MAX_CHAINS || fd->chains[id].refs == 0)
		return;
	if (--fd->chains[id].refs == 0)
		fd->chains[id].freed_seq = ++fd->seq;
}

int
zn_fdir_chain_take(struct zn_mgr *m, const struct zn_step *steps,
		   unsigned int n, char *err, size_t errlen)
{
	bool created;
	int rc = fdir_validate_steps(m, steps, n, err, errlen);

	if (rc < 0)
		return rc;
	rc = fdir_chain_take(m->fdir, steps, n, &created, err, errlen);
	if (rc > 0 && created)
		zn_route_publish(m);
	return rc;
}

void
zn_fdir_chain_put(struct zn_mgr *m, unsigned int id)
{
	fdir_chain_put(m->fdir, id);
}

int
zn_chain_set(struct zn_mgr *m, const struct zn_step *steps, unsigned int n,
	     char *err, size_t errlen)
{
	struct fdir_chain *c = &m->fdir->chains[0];
	int rc = fdir_validate_steps(m, steps, n, err, errlen);

	if (rc < 0)
		return rc;
	if (!fdir_is_default_chain(m->fdir, steps, n))
		c->spi = 0; /* other hops: no longer its path (fdir_path.c) */
	memset(c->steps, 0, sizeof(c->steps));
	memcpy(c->steps, steps, n * sizeof(*steps));
	c->len = (uint16_t)n;
	zn_route_publish(m);
	return 0;
}

bool
fdir_is_default_chain(const struct zn_fdir *fd, const struct zn_step *steps,
		      unsigned int n)
{
	return fd->chains[0].len == n && steps_equal(fd->chains[0].steps,
						     steps, n);
}

unsigned int
zn_chain_get(struct zn_mgr *m, struct zn_step *steps)
{
	unsigned int n;

	n = m->fdir->chains[0].len;
	memcpy(steps, m->fdir->chains[0].steps, n * sizeof(*steps));
	return n;
}

/* Point *@p at (a port's or a tenant's chain id) at @p steps, interned;
 * @p n 0: none. Checked by the caller; published. */
static int
chain_assign(struct zn_mgr *m, uint8_t *at, const struct zn_step *steps,
	     unsigned int n, char *err, size_t errlen)
{
	struct zn_fdir *fd = m->fdir;
	bool created;
	int id = 0;

	if (n > 0) {
		int rc = fdir_validate_steps(m, steps, n, err, errlen);

		if (rc < 0)
			return rc;
		id = fdir_chain_take(fd, steps, n, &created, err, errlen);
		if (id < 0)
			return id;
	}
	fdir_chain_put(fd, *at);
	*at = (uint8_t)id;
	zn_route_publish(m);
	return 0;
}

int
zn_fdir_port_chain_set(struct zn_mgr *m, unsigned int port,
		       const struct zn_step *steps, unsigned int n, char *err,
		       size_t errlen)
{
	if (port >= m->n_ports) {
		snprintf(err, errlen, "port %u: the manager has %u ports", port,
			 m->n_ports);
		return -EINVAL;
	}
	if (zn_tenant_port_sliced(m, port)) {
		snprintf(err, errlen, "port %u is sliced among tenants: set "
			 "their chains (chain.set with tenant)", port);
		return -EPERM;
	}
	return chain_assign(m, &m->fdir->port_chain[port], steps, n, err,
			    errlen);
}

int
zn_fdir_tenant_chain_set(struct zn_mgr *m, unsigned int t,
			 const struct zn_step *steps, unsigned int n, char *err,
			 size_t errlen)
{
	int rc = zn_tenant_steps_check(m, (int)t, steps, n, err, errlen);

	return rc < 0 ? rc : chain_assign(m, &m->fdir->tenant_chain[t], steps,
					  n, err, errlen);
}

unsigned int
zn_fdir_tenant_chain(struct zn_mgr *m, unsigned int t, struct zn_step *steps)
{
	if (t >= ZN_MAX_TENANTS || m->fdir->tenant_chain[t] == 0)
		return 0;
	return zn_fdir_chain_steps(m, m->fdir->tenant_chain[t], steps);
}

unsigned int
zn_fdir_port_chain(struct zn_mgr *m, unsigned int port, struct zn_step *steps)
{
	if (port >= ZN_MAX_PORTS || m->fdir->port_chain[port] == 0)
		return 0;
	return zn_fdir_chain_steps(m, m->fdir->port_chain[port], steps);
}

unsigned int
zn_fdir_chain_steps(struct zn_mgr *m, unsigned int id, struct zn_step *steps)
{
	if (id == 0)
		return zn_chain_get(m, steps);
	if (id >= ZN_MAX_CHAINS)
		return 0;
	memcpy(steps, m->fdir->chains[id].steps,
	       m->fdir->chains[id].len * sizeof(*steps));
	return m->fdir->chains[id].len;
}

/* May chain @p c travel on path @p p: p's hops in order, with hops of
 * this host put in between (a reaction's filter)? Then each of c's hops'
 * position on p in @p pos (0xff: one put in). */
static bool
on_path(const struct fdir_chain *c, const struct fdir_chain *p, uint8_t *pos)
{
	unsigned int j = 0;

	for (unsigned int i = 0; i < c->len; i++) {
		if (j < p->len && zn_step_equal(&c->steps[i], &p->steps[j])) {
			pos[i] = (uint8_t)j++;
		} else if (c->steps[i].host == 0) {
			pos[i] = 0xff;
		} else {
			return false;
		}
	}
	return j == p->len;
}

/* The paths (fdir_path.c) into the snapshot: a path's own chain is its
 * hops one for one; a chain that is a path with hops of this host put in
 * carries the path too (the first such path by chain id), its hops on the
 * path numbered as the path's, so the far hosts' indexes are unchanged. */
static void
path_fill(const struct zn_fdir *fd, struct zn_route *rt)
{
	memset(rt->chain_spi, 0, sizeof(rt->chain_spi));
	memset(rt->spi_map, 0, sizeof(rt->spi_map));
	for (unsigned int id = 0; id < ZN_MAX_CHAINS; id++) {
		const struct fdir_chain *c = &fd->chains[id];
		uint32_t spi = c->spi;
		unsigned int i;

		if (spi == 0)
			continue;
		rt->chain_spi[id] = spi;
		for (i = 0; i < ZN_MAX_CHAIN_STEPS; i++)
			rt->path_pos[id][i] = (uint8_t)i;
		for (i = zn_spi_slot(spi); rt->spi_map[i].spi != 0;
		     i = (i + 1) & (ZN_SPI_MAP_SLOTS - 1))
			;
		rt->spi_map[i].spi = spi;
		rt->spi_map[i].chain = id;
	}
	for (unsigned int id = 0; id < ZN_MAX_CHAINS; id++) {
		const struct fdir_chain *c = &fd->chains[id];
		bool far = false;

		if (c->spi != 0 || c->len == 0 || (id != 0 && c->refs == 0))
			continue;
		for (unsigned int i = 0; i < c->len; i++)
			far |= c->steps[i].host != 0;
		for (unsigned int p = 0; far && p < ZN_MAX_CHAINS; p++) {
			const struct fdir_chain *path = &fd->chains[p];

			if (path->spi != 0 && (p == 0 || path->refs != 0) &&
			    on_path(c, path, rt->path_pos[id])) {
				rt->chain_spi[id] = path->spi;
				break;
			}
		}
	}
}

void
fdir_fill(struct zn_mgr *m, struct zn_route *rt)
{
	struct zn_fdir *fd = m->fdir;

	for (unsigned int id = 0; id < ZN_MAX_CHAINS; id++) {
		rt->chains[id].len = fd->chains[id].len;
		memcpy(rt->chains[id].steps, fd->chains[id].steps,
		       sizeof(rt->chains[id].steps));
	}
	rt->n_port_chains = 0;
	for (unsigned int p = 0; p < ZN_MAX_PORTS; p++) {
		rt->port_chain[p] = fd->port_chain[p];
		rt->n_port_chains += fd->port_chain[p] != 0;
	}
	memcpy(rt->tenant_chain, fd->tenant_chain, sizeof(rt->tenant_chain));
	path_fill(fd, rt);
	rt->acl[0] = fd->acl[0];
	rt->acl[1] = fd->acl[1];
	rt->exact = fd->exact;
	rt->rehash_every_hop = m->cfg.fdir_rehash;
}
