/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The load balancer's commands (nf.call, docs/nfs/lb.md), on its packet
 * thread between two bursts; and where its state lives. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include <zeronf/zeronf.h>

#include "lb_nf.h"
#include "../common/reply.h"

struct lb_nf lb;

void
lb_populate(struct lb_vip *v)
{
	struct maglev_backend b[LB_MAX_BACKENDS];

	for (unsigned int i = 0; i < v->n_be; i++)
		b[i] = (struct maglev_backend){ v->be[i].key, v->be[i].weight,
						v->be[i].up };
	maglev_populate(&v->mg, b, v->n_be);
}

static struct lb_vip *
vip_named(const char *name)
{
	for (unsigned int i = 0; name != NULL && i < lb.n_vip; i++)
		if (strcmp(lb.vip[i].name, name) == 0)
			return &lb.vip[i];
	return lb.n_vip == 1 && name == NULL ? &lb.vip[0] : NULL;
}

static int
list_vip(const struct lb_vip *v, char *reply, size_t len)
{
	json_t *o, *arr = json_array();

	for (unsigned int i = 0; i < v->n_be; i++) {
		const struct lb_backend *b = &v->be[i];
		struct in_addr in = { htonl(b->addr) };

		json_array_append_new(arr, json_pack(
			"{s:s, s:s, s:i, s:i, s:b, s:I, s:I}", "name", b->name,
			"addr", inet_ntoa(in), "port", b->port, "weight",
			b->weight, "up", b->up, "conns", (json_int_t)b->conns,
			"packets", (json_int_t)b->packets));
	}
	o = json_pack("{s:s, s:o, s:i}", "vip", v->name, "backends", arr,
		      "conns", lb.t.in_use);
	return reply_json(o, reply, len);
}

/* A command's args, parsed into *@p a (the caller's to json_decref;
 * NULL when not JSON), and the VIP its "vip" names, or NULL. */
static struct lb_vip *
args_vip(const char *args, json_t **a)
{
	*a = json_loads(args, 0, NULL);
	return vip_named(json_string_value(json_object_get(*a, "vip")));
}

/* backend.list {"vip": NAME}: its backends, up or not, with the
 * connections they were given and the packets sent to them. */
static int
cmd_list(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a;
	struct lb_vip *v = args_vip(args, &a);

	(void)nf;
	json_decref(a);
	if (v == NULL) {
		snprintf(reply, len, "backend.list wants {\"vip\": NAME}");
		return -EINVAL;
	}
	return list_vip(v, reply, len);
}

/* backend.set {"vip": NAME, "backend": NAME, "up": BOOL, "weight": W}:
 * health and weight; the table is filled again (new connections follow
 * it, those made stay with their backend). */
static int
cmd_set(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a;
	struct lb_vip *v = args_vip(args, &a);
	const char *name = json_string_value(json_object_get(a, "backend"));
	json_t *up = json_object_get(a, "up"), *w = json_object_get(a,
								  "weight");
	struct lb_backend *b = NULL;

	(void)nf;
	for (unsigned int i = 0; v != NULL && name != NULL && i < v->n_be;
	     i++)
		if (strcmp(v->be[i].name, name) == 0)
			b = &v->be[i];
	if (b == NULL || (up != NULL && !json_is_boolean(up)) ||
	    (w != NULL && (!json_is_integer(w) || json_integer_value(w) < 1 ||
			   json_integer_value(w) > 100))) {
		json_decref(a);
		snprintf(reply, len, "backend.set wants {\"vip\": NAME, "
			 "\"backend\": NAME, \"up\": true|false, \"weight\": "
			 "1..100} of a backend there is");
		return -EINVAL;
	}
	if (up != NULL)
		b->up = json_is_true(up);
	if (w != NULL)
		b->weight = (uint32_t)json_integer_value(w);
	json_decref(a);
	lb_populate(v);
	return list_vip(v, reply, len);
}

/* lb.lookup {"vip": NAME, "src": ADDR, "sport": P}: the backend a new
 * connection from there would get now. */
static int
cmd_lookup(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	json_t *a;
	struct lb_vip *v = args_vip(args, &a);
	const char *src = json_string_value(json_object_get(a, "src"));
	json_int_t sport = json_integer_value(json_object_get(a, "sport"));
	struct in_addr in;
	uint16_t i;

	(void)nf;
	if (v == NULL || src == NULL || inet_pton(AF_INET, src, &in) != 1 ||
	    sport < 0 || sport > 65535) {
		json_decref(a);
		snprintf(reply, len, "lb.lookup wants {\"vip\": NAME, \"src\": "
			 "ADDR, \"sport\": PORT}");
		return -EINVAL;
	}
	json_decref(a);
	i = maglev_lookup(&v->mg, maglev_flow_hash(ntohl(in.s_addr), v->addr,
						   (uint16_t)sport, v->port,
						   v->proto));
	snprintf(reply, len, "{\"backend\": %s%s%s}", i == MAGLEV_NONE ? "" :
		 "\"", i == MAGLEV_NONE ? "null" : v->be[i].name,
		 i == MAGLEV_NONE ? "" : "\"");
	return 0;
}

int
lb_cmds_register(struct zn_nf *nf)
{
	int rc = zn_nf_cmd_register(nf, "backend.list", cmd_list);

	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "backend.set", cmd_set);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "lb.lookup", cmd_lookup);
	return rc;
}
