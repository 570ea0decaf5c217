/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Service paths (RFC 8300's service path identifier): a chain whose hops
 * run on several hosts (mgr/fabric/fabric.h) is known to all of them by
 * one id, its path's. path.set gives a chain (interned as any other,
 * fdir_chain.c) a path id, holding a reference to it: a rule, a port or
 * the OpenFlow table that names the same hops takes the same chain, and
 * so the path. The path's hops are written on each host as that host
 * sees them (its own hops without "@", the others' with their host),
 * in the same order: the service index a packet carries between hosts
 * is 255 less the position of its next hop. The default chain (chain 0,
 * not interned) takes a path whose hops are its own when the path is
 * set; chain.set of other hops forgets it.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../core/cmd.h"
#include "fdir.h"
#include "fdir_pvt.h"
#include "../core/mgr.h"
#include "route.h"

#define SPI_MAX 0xffffff

/* The chain of path @p spi, -1: none. */
static int
chain_of(const struct zn_fdir *fd, uint32_t spi)
{
	for (unsigned int id = 0; id < ZN_MAX_CHAINS; id++)
		if (fd->chains[id].spi == spi &&
		    (id == 0 || fd->chains[id].refs != 0))
			return (int)id;
	return -1;
}

/* Let go of chain @p id's path: a reference, but the default chain's. */
static void
path_put(struct zn_fdir *fd, unsigned int id)
{
	fd->chains[id].spi = 0;
	if (id != 0)
		fdir_chain_put(fd, id);
}

static int
cmd_path_set(struct zn_cmd_req *req)
{
	struct zn_mgr *m = req->mgr;
	struct zn_fdir *fd = m->fdir;
	uint32_t spi = (uint32_t)json_integer_value(
		json_object_get(req->params, "spi"));
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	int old = chain_of(fd, spi);
	bool created;
	int n, id, rc;

	n = zn_cmd_parse_steps(json_object_get(req->params, "hops"), "hops",
			       steps, req->err, sizeof(req->err));
	if (n < 0)
		return n;
	rc = fdir_validate_steps(m, steps, (unsigned int)n, req->err,
				 sizeof(req->err));
	if (rc < 0)
		return rc;
	if (fdir_is_default_chain(fd, steps, (unsigned int)n))
		id = 0; /* the default chain's path: no reference */
	else
		id = fdir_chain_take(fd, steps, (unsigned int)n, &created,
				     req->err, sizeof(req->err));
	if (id < 0)
		return id;
	if (fd->chains[id].spi != 0 && fd->chains[id].spi != spi) {
		snprintf(req->err, sizeof(req->err), "these hops are path %u "
			 "already", fd->chains[id].spi);
		if (id != 0)
			fdir_chain_put(fd, (unsigned int)id);
		return -EEXIST;
	}
	if (old == id) {
		if (id != 0)
			fdir_chain_put(fd, (unsigned int)id); /* it holds one */
	} else if (old >= 0) {
		path_put(fd, (unsigned int)old);
	}
	fd->chains[id].spi = spi;
	zn_route_publish(m);
	req->result = json_pack("{s:i, s:i}", "spi", spi, "chain", id);
	return 0;
}

static int
cmd_path_del(struct zn_cmd_req *req)
{
	struct zn_fdir *fd = req->mgr->fdir;
	uint32_t spi = (uint32_t)json_integer_value(
		json_object_get(req->params, "spi"));
	int id = chain_of(fd, spi);

	if (id < 0) {
		snprintf(req->err, sizeof(req->err), "no path %u", spi);
		return -ENOENT;
	}
	path_put(fd, (unsigned int)id);
	zn_route_publish(req->mgr);
	return 0;
}

static int
cmd_path_list(struct zn_cmd_req *req)
{
	struct zn_fdir *fd = req->mgr->fdir;
	json_t *a = json_array();

	for (unsigned int id = 0; id < ZN_MAX_CHAINS; id++) {
		const struct fdir_chain *c = &fd->chains[id];

		if (c->spi == 0 || (id != 0 && c->refs == 0))
			continue;
		json_array_append_new(a, json_pack(
			"{s:i, s:i, s:o, s:i}", "spi", c->spi, "chain", id,
			"hops", zn_cmd_steps_json(c->steps, c->len),
			"users", id == 0 ? 0 : c->refs - 1));
	}
	req->result = json_pack("{s:o}", "paths", a);
	return 0;
}

#define SPI_PARAM                                                            \
	{ .name = "spi", .type = ZN_CMD_INT, .required = true,                \
	  .bounded = true, .min = 1, .max = SPI_MAX,                          \
	  .desc = "the service path identifier, the same on every host of " \
		  "the path" }

static const struct zn_cmd path_set_cmd = {
	.name = "path.set",
	.help = "give the chain of these hops a service path id (NSH's SPI), "
		"or move a path to new hops",
	.params = {
		SPI_PARAM,
		{ .name = "hops", .type = ZN_CMD_ARRAY, .required = true,
		  .desc = "the path as this host sees it: its own hops "
			  "\"svc:S\" / \"port:P\", another host's "
			  "\"svc:S@HOST\" / \"port:P@HOST\"",
		  .schema = "{\"minItems\": 1, \"maxItems\": 32, \"items\": "
			    "{\"type\": \"string\", \"pattern\": \""
			    ZN_STEP_PATTERN "\"}}" },
	},
	.result = "{\"spi\": \"the path\", \"chain\": \"its chain id here\"}",
	.fn = cmd_path_set,
};
ZN_CMD_REGISTER(path_set_cmd)

static const struct zn_cmd path_del_cmd = {
	.name = "path.del",
	.help = "forget a service path (its packets from other hosts drop "
		"as nsh_no_path; a rule naming its hops keeps the chain, "
		"whose hops elsewhere drop so too)",
	.params = { SPI_PARAM },
	.result = "{}",
	.fn = cmd_path_del,
};
ZN_CMD_REGISTER(path_del_cmd)

static const struct zn_cmd path_list_cmd = {
	.name = "path.list",
	.help = "the service paths this host knows",
	.result = "{\"paths\": \"[{spi, chain (0: the default chain), hops, "
		  "users: rules, ports and entries on its chain besides the "
		  "path}]\"}",
	.fn = cmd_path_list,
};
ZN_CMD_REGISTER(path_list_cmd)
