/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_CTL_H
#define ZN_CTL_H

/*
 * The control socket (ctl.c: clients, buffering, deferred replies) and
 * its JSON-RPC envelope (ctl_rpc.c). A transport: the commands are in the
 * registry (cmd.h), registered by the modules that implement them. The
 * protocol is in docs/control-protocol.md; schema/control.json is
 * generated from the registry and this envelope.
 */

#include <stddef.h>

#include <jansson.h>

struct zn_mgr;
struct zn_cmd;

/** Answer what is pending (-ECANCELED for deferred requests) and send
 *  the buffered replies: the manager stops. */
void zn_ctl_flush_all(struct zn_mgr *m);

/* ctl_rpc.c: one request line's JSON-RPC envelope. */
struct zn_ctl_call {
	json_t *msg;                 /* the request (owned: json_decref) */
	json_t *id;                  /* borrowed from msg; NULL: none */
	const struct zn_cmd *cmd;
	json_t *params;              /* borrowed from msg; NULL: none */
};
/** Parse and check a request: 0 with call->cmd set, or -errno with a
 *  message in @p err (call->id set once it was read; msg always to be
 *  released). No manager state is touched. */
int zn_ctl_rpc_parse(const char *line, size_t len, struct zn_ctl_call *call,
		     char *err, size_t errlen);
json_t *zn_ctl_error_reply(json_t *id, int code, const char *msg);
json_t *zn_ctl_result_reply(json_t *id, json_t *result);

/** The protocol's schema: the envelope and every registered command. */
json_t *zn_ctl_schema(void);
/** The same, printed (manager --schema). @return 0, -EIO. */
int zn_ctl_print_schema(FILE *f);

#endif /* ZN_CTL_H */
