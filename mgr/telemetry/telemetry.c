/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * DPDK telemetry (/zeronf/... commands on the instance's
 * dpdk_telemetry.v2 socket): the views of stats.c, flattened: nested
 * objects become "a/b" keys (telemetry names allow only [A-Za-z0-9_/])
 * and arrays JSON strings (rte_tel_data nests one level).
 *
 * Each view is a control command (cmd.h). A command that may only run
 * on the control thread (the views read its state) is not run here: the
 * telemetry thread hands it to the control thread (waking its loop) and
 * waits for the answer, at most TEL_WAIT_MS; the control thread runs it
 * after the wake-up (a loop hook). One request at a time.
 */

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <rte_telemetry.h>

#include "../core/cmd.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "telemetry.h"
#include "../../lib/common/zn_util.h"
#include "../core/subsys.h"

#define TEL_WAIT_MS 1000

static struct {
	/* one telemetry request at a time; held, mgr may change */
	pthread_mutex_t caller;
	pthread_mutex_t mu;      /* guards the fields below */
	pthread_cond_t cv;
	const struct zn_cmd *cmd; /* asked, not yet served */
	uint64_t asked, served;
	json_t *result;
	/* the manager (under caller and mu): set at init, NULL from fini on
	 * (a request then answers nothing; the EAL's telemetry thread lives
	 * until rte_eal_cleanup, after the manager's teardown) */
	struct zn_mgr *mgr;
} tel = {
	.caller = PTHREAD_MUTEX_INITIALIZER,
	.mu = PTHREAD_MUTEX_INITIALIZER,
};

/* Run @p cmd (no parameters): its result, or NULL. */
static json_t *
run(const struct zn_cmd *cmd)
{
	struct zn_cmd_req req = { .mgr = tel.mgr };

	if (zn_cmd_call(cmd, &req) < 0 || req.poll != NULL) {
		free(req.poll_arg);
		json_decref(req.result);
		return NULL;
	}
	return req.result;
}

/* Telemetry thread: the result of command @p name, run where it may run,
 * or NULL (unknown, failed, or the control thread busy too long). */
static json_t *
ask(const char *name)
{
	const struct zn_cmd *cmd = zn_cmd_find(name);
	struct timespec deadline;
	json_t *res = NULL;
	uint64_t my;

	if (cmd == NULL)
		return NULL;
	pthread_mutex_lock(&tel.caller);
	if (tel.mgr == NULL || (cmd->flags & ZN_CMD_F_ANY_THREAD)) {
		res = tel.mgr != NULL ? run(cmd) : NULL;
		pthread_mutex_unlock(&tel.caller);
		return res;
	}
	clock_gettime(CLOCK_MONOTONIC, &deadline);
	deadline.tv_sec += TEL_WAIT_MS / 1000;
	pthread_mutex_lock(&tel.mu);
	tel.cmd = cmd;
	my = ++tel.asked;
	pthread_mutex_unlock(&tel.mu);
	zn_loop_wake(tel.mgr->loop);
	pthread_mutex_lock(&tel.mu);
	while (tel.served < my &&
	       pthread_cond_timedwait(&tel.cv, &tel.mu, &deadline) == 0)
		;
	if (tel.served >= my) {
		res = tel.result;
		tel.result = NULL;
	} else {
		tel.cmd = NULL; /* withdrawn: the control thread is busy */
	}
	pthread_mutex_unlock(&tel.mu);
	pthread_mutex_unlock(&tel.caller);
	return res;
}

/* Control thread, after every wake-up: run the command asked, if any. */
static void
serve(void *arg)
{
	const struct zn_cmd *cmd;
	json_t *res;
	uint64_t taking;

	(void)arg;
	pthread_mutex_lock(&tel.mu);
	cmd = tel.cmd;
	taking = tel.asked;
	tel.cmd = NULL;
	pthread_mutex_unlock(&tel.mu);
	if (cmd == NULL)
		return;
	res = run(cmd);
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
	return tel_reply(ask("status"), d);
}

static int
tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	json_t *all = ask("stats"), *drops;

	(void)cmd;
	(void)params;
	if (all == NULL)
		return -1;
	drops = json_incref(json_object_get(all, "drops"));
	json_decref(all);
	return tel_reply(json_pack("{s:o}", "drops", drops), d);
}

/* The array @p member of command @p name's result, or NULL. */
static json_t *
ask_list(const char *name, const char *member)
{
	json_t *r = ask(name);
	json_t *a = json_incref(json_object_get(r, member));

	json_decref(r);
	return a;
}

static int
tel_list(struct rte_tel_data *d, json_t *arr, const char *idkey)
{
	json_t *x;
	size_t i;

	if (arr == NULL)
		return -1;
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
	return tel_list(d, ask_list("nf.list", "nfs"), "instance");
}

static int
tel_ports(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	return tel_list(d, ask_list("port.list", "ports"), "port");
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
	return tel_one(ask_list("nf.list", "nfs"), "instance", params, d);
}

static int
tel_port(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	return tel_one(ask_list("port.list", "ports"), "port", params, d);
}

/* Register the telemetry commands and the loop's wake-up fd. */
static int
zn_telemetry_init(struct zn_mgr *m)
{
	pthread_condattr_t ca;

	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&tel.cv, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_lock(&tel.caller);
	tel.mgr = m;
	pthread_mutex_unlock(&tel.caller);
	if (zn_loop_on_wake(m->loop, serve, NULL) < 0)
		return -ENOSPC;
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

static void
zn_telemetry_fini(struct zn_mgr *m)
{
	(void)m;
	pthread_mutex_lock(&tel.caller); /* no request in flight */
	pthread_mutex_lock(&tel.mu);
	tel.mgr = NULL;
	json_decref(tel.result);
	tel.result = NULL;
	pthread_mutex_unlock(&tel.mu);
	pthread_mutex_unlock(&tel.caller);
}

static const struct zn_subsys subsys = {
	.name = "telemetry", .order = ZN_SUBSYS_TELEMETRY,
	.init = zn_telemetry_init, .fini = zn_telemetry_fini,
};
ZN_SUBSYS_REGISTER(subsys)
