/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_CTL_H
#define ZN_CTL_H

/* Control commands: a table of methods (ctl_cmds.c) served by ctl.c.
 * The protocol is documented in docs/control-protocol.md and described
 * as data in schema/control.json; tests check the three agree. */

#include <stdbool.h>
#include <jansson.h>

#include "mgr.h"

#define ZN_CTL_MAJOR 1
#define ZN_CTL_MINOR 1

struct zn_ctl_req {
	struct zn_mgr *mgr;
	json_t *params;   /* object or NULL; borrowed, only during fn */
	json_t *result;   /* set by the command; owned */
	char err[256];    /* message for an error reply */
	/* A command that answers later (nf.call waits for an NF) returns 0
	 * with poll set: the control loop calls poll until it returns other
	 * than -EAGAIN (0: result set; -errno: err set), or the deadline
	 * passes (-ETIMEDOUT), and replies then. poll_arg is free()d after;
	 * the client's other requests are answered meanwhile. */
	int (*poll)(struct zn_ctl_req *req);
	void *poll_arg;
	uint64_t deadline_ns;
};

/* Parameter type: a jansson json_type, or ZN_CTL_BOOL (true or false). */
#define ZN_CTL_BOOL (-1)

struct zn_ctl_param {
	const char *name;
	int type;
	bool required;
};

#define ZN_CTL_MAX_PARAMS 4

struct zn_ctl_cmd {
	const char *method;
	const char *help;
	/* Every command here may run while packets flow: changes reach the
	 * workers as a new RCU-published snapshot, never in place. */
	struct zn_ctl_param params[ZN_CTL_MAX_PARAMS];
	int (*fn)(struct zn_ctl_req *req); /* 0 or -errno (req->err set) */
};

const struct zn_ctl_cmd *zn_ctl_find(const char *method);

/* ctl_rpc.c: one request line's JSON-RPC envelope. */
struct zn_ctl_call {
	json_t *msg;                 /* the request (owned: json_decref) */
	json_t *id;                  /* borrowed from msg; NULL: none */
	const struct zn_ctl_cmd *cmd;
	json_t *params;              /* borrowed from msg; NULL: none */
};
/** Parse and check a request: 0 with call->cmd set, or -errno with a
 *  message in @p err (call->id set once it was read; msg always to be
 *  released). No manager state is touched. */
int zn_ctl_rpc_parse(const char *line, size_t len, struct zn_ctl_call *call,
		     char *err, size_t errlen);

/* ctl_fdir.c: flow director and load balancing commands */
/** Parse a JSON array of hops ("svc:ID", "port:P", "drop") named @p name
 *  in messages. @return hop count, or -EINVAL (err set). */
int zn_ctl_parse_hops(json_t *a, const char *name, struct zn_hop *hops,
		      char *err, size_t errlen);
struct zn_flow_key;
struct zn_fdir_rule;
/** flow.add's "flow" object, rule.add's "match" object (fuzzed too).
 *  0 or -EINVAL with a message in @p err. */
int zn_ctl_parse_flow(json_t *o, struct zn_flow_key *key, char *err,
		      size_t errlen);
int zn_ctl_parse_match(json_t *o, struct zn_fdir_rule *r, char *err,
		       size_t errlen);
int zn_cmd_flow_add(struct zn_ctl_req *req);
int zn_cmd_flow_del(struct zn_ctl_req *req);
int zn_cmd_flow_list(struct zn_ctl_req *req);
int zn_cmd_rule_add(struct zn_ctl_req *req);
int zn_cmd_rule_del(struct zn_ctl_req *req);
int zn_cmd_rule_list(struct zn_ctl_req *req);
int zn_cmd_service_set(struct zn_ctl_req *req);

/* ctl_nf.c: commands NFs serve (nf.call) */
int zn_cmd_nf_call(struct zn_ctl_req *req);
/** Reject unknown, missing or mistyped parameters. 0 or -EINVAL. */
int zn_ctl_check_params(struct zn_ctl_req *req, const struct zn_ctl_cmd *cmd);
json_t *zn_ctl_error_reply(json_t *id, int code, const char *msg);

/* ctl.c: one iteration of the control loop (used at shutdown too). */
void zn_ctl_step(struct zn_mgr *m, int timeout_ms);
void zn_ctl_flush_all(struct zn_mgr *m);

#endif /* ZN_CTL_H */
