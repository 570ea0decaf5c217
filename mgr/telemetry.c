/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * DPDK telemetry (/zeronf/... commands on the instance's
 * dpdk_telemetry.v2 socket): the views of stats.c, flattened: nested
 * objects become "a/b" keys (telemetry names allow only [A-Za-z0-9_/])
 * and arrays JSON strings (rte_tel_data nests one level).
 *
 * The views read state that only the control thread may read (stats.c),
 * so the telemetry thread does not build them: it hands its request to
 * the control thread (kicking its loop awake) and waits for the answer,
 * at most TEL_WAIT_MS; the control thread serves it between two events
 * (zn_telemetry_serve). One request at a time.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_telemetry.h>

#include "mgr.h"
#include "../lib/common/zn_util.h"

#define TEL_WAIT_MS 1000

enum tel_view { TEL_NONE, TEL_STATUS, TEL_STATS, TEL_NFS, TEL_PORTS };

static struct {
	pthread_mutex_t caller;  /* one telemetry request at a time */
	pthread_mutex_t mu;      /* guards the fields below */
	pthread_cond_t cv;
	enum tel_view view;      /* asked, not yet served */
	uint64_t asked, served;
	json_t *result;
	int kick_fd;
	struct sockaddr_un kick;
} tel = {
	.caller = PTHREAD_MUTEX_INITIALIZER,
	.mu = PTHREAD_MUTEX_INITIALIZER,
	.kick_fd = -1,
};

/* Telemetry thread: the view, built by the control thread, or NULL. */
static json_t *
ask(enum tel_view view)
{
	struct timespec deadline;
	json_t *res = NULL;
	uint64_t my;

	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += TEL_WAIT_MS / 1000;
	pthread_mutex_lock(&tel.caller);
	pthread_mutex_lock(&tel.mu);
	tel.view = view;
	my = ++tel.asked;
	pthread_mutex_unlock(&tel.mu);
	(void)!sendto(tel.kick_fd, "t", 1, MSG_DONTWAIT,
		      (struct sockaddr *)&tel.kick, sizeof(tel.kick));
	pthread_mutex_lock(&tel.mu);
	while (tel.served < my &&
	       pthread_cond_timedwait(&tel.cv, &tel.mu, &deadline) == 0)
		;
	if (tel.served >= my) {
		res = tel.result;
		tel.result = NULL;
	} else {
		tel.view = TEL_NONE; /* withdrawn: the control thread is busy */
	}
	pthread_mutex_unlock(&tel.mu);
	pthread_mutex_unlock(&tel.caller);
	return res;
}

void
zn_telemetry_serve(struct zn_mgr *m)
{
	enum tel_view view;
	json_t *res = NULL;
	uint64_t taking;

	pthread_mutex_lock(&tel.mu);
	view = tel.view;
	taking = tel.asked;
	tel.view = TEL_NONE;
	pthread_mutex_unlock(&tel.mu);
	switch (view) {
	case TEL_NONE:
		return;
	case TEL_STATUS:
		res = zn_stats_status(m);
		break;
	case TEL_STATS:
		res = zn_stats_all(m);
		break;
	case TEL_NFS:
		res = zn_stats_nfs(m);
		break;
	case TEL_PORTS:
		res = zn_stats_ports(m);
		break;
	}
	pthread_mutex_lock(&tel.mu);
	if (tel.asked != taking) {
		/* Its asker gave up and another asked since: not theirs. */
		json_decref(res);
	} else {
		json_decref(tel.result); /* one its asker gave up on */
		tel.result = res;
		tel.served = taking;
		pthread_cond_broadcast(&tel.cv);
	}
	pthread_mutex_unlock(&tel.mu);
}


static void
tel_add(struct rte_tel_data *d, const char *prefix, json_t *v)
{
	char key[RTE_TEL_MAX_STRING_LEN];
	const char *k;
	json_t *x;

	if (json_is_object(v)) {
		json_object_foreach(v, k, x) {
			snprintf(key, sizeof(key), "%s%s%s", prefix,
				 prefix[0] ? "/" : "", k);
			tel_add(d, key, x);
		}
	} else if (json_is_integer(v)) {
		rte_tel_data_add_dict_u64(d, prefix,
					  (uint64_t)json_integer_value(v));
	} else if (json_is_string(v)) {
		rte_tel_data_add_dict_string(d, prefix, json_string_value(v));
	} else if (json_is_boolean(v)) {
		rte_tel_data_add_dict_int(d, prefix, json_is_true(v));
	} else if (json_is_array(v)) {
		char *s = json_dumps(v, JSON_COMPACT);

		if (s != NULL)
			rte_tel_data_add_dict_string(d, prefix, s);
		free(s);
	}
}

static int
tel_reply(json_t *v, struct rte_tel_data *d)
{
	if (v == NULL)
		return -1;
	rte_tel_data_start_dict(d);
	tel_add(d, "", v);
	json_decref(v);
	return 0;
}

static int
tel_status(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	return tel_reply(ask(TEL_STATUS), d);
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	json_t *all = ask(TEL_STATS), *drops;

	(void)cmd;
	(void)params;
	if (all == NULL)
		return -1;
	drops = json_incref(json_object_get(all, "drops"));
	json_decref(all);
	return tel_reply(json_pack("{s:o}", "drops", drops), d);
}

static int
tel_list(struct rte_tel_data *d, json_t *arr, const char *idkey)
{
	json_t *x;
	size_t i;

	rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
	json_array_foreach(arr, i, x)
		rte_tel_data_add_array_int(
			d, (int)json_integer_value(json_object_get(x, idkey)));
	json_decref(arr);
	return 0;
}

static int
tel_nfs(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	return tel_list(d, ask(TEL_NFS), "instance");
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	return tel_list(d, ask(TEL_PORTS), "port");
}

static int
tel_one(json_t *arr, const char *idkey, const char *params,
	struct rte_tel_data *d)
{
	uint64_t id;
	json_t *x;
	size_t i;

	if (params == NULL || zn_parse_uint(params, 0, 65535, &id) < 0) {
		json_decref(arr);
		return -1;
	}
	json_array_foreach(arr, i, x)
		if ((uint64_t)json_integer_value(json_object_get(x, idkey)) ==
		    id) {
			json_incref(x);
			json_decref(arr);
			return tel_reply(x, d);
		}
	json_decref(arr);
	return -1;
}

static int
tel_nf(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_one(ask(TEL_NFS), "instance", params, d);
}

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_one(ask(TEL_PORTS), "port", params, d);
}

int
zn_telemetry_init(struct zn_mgr *m)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&tel.cv, &ca);
	pthread_condattr_destroy(&ca);
	tel.kick.sun_family = AF_UNIX;
	if (zn_runtime_path(m->cfg.instance, ZN_KICK_SOCK, tel.kick.sun_path,
			    sizeof(tel.kick.sun_path)) < 0)
		return -ENAMETOOLONG;
	tel.kick_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (tel.kick_fd < 0)
		return -errno;
	if (rte_telemetry_register_cmd("/zeronf/status", tel_status,
				       "Instance summary") < 0 ||
	    rte_telemetry_register_cmd("/zeronf/stats", tel_stats,
				       "Drops by reason, all sources") < 0 ||
	    rte_telemetry_register_cmd("/zeronf/nfs", tel_nfs,
				       "NF instance ids") < 0 ||
	    rte_telemetry_register_cmd("/zeronf/nf", tel_nf,
				       "One NF. Parameters: int instance") <
		    0 ||
	    rte_telemetry_register_cmd("/zeronf/ports", tel_ports,
				       "Port ids") < 0 ||
	    rte_telemetry_register_cmd("/zeronf/port", tel_port,
				       "One port. Parameters: int port") < 0)
		return -EINVAL;
	return 0;
}
