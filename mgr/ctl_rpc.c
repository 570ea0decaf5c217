/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* JSON-RPC 2.0 envelope of a control request: parsed and checked here,
 * with no manager state (ctl.c dispatches; the fuzz target feeds this). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "ctl.h"

int
zn_ctl_rpc_parse(const char *line, size_t len, struct zn_ctl_call *call,
		 char *err, size_t errlen)
{
	json_error_t jerr;
	json_t *msg, *id, *method, *params, *val;
	const char *key;

	memset(call, 0, sizeof(*call));
	msg = json_loadb(line, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
			 &jerr);
	if (msg == NULL) {
		snprintf(err, errlen, "parse error: %s", jerr.text);
		return -EBADMSG;
	}
	call->msg = msg;
	if (!json_is_object(msg)) {
		snprintf(err, errlen, "request is not an object");
		return -EINVAL;
	}
	id = json_object_get(msg, "id");
	if (id != NULL && !json_is_string(id) && !json_is_integer(id) &&
	    !json_is_null(id)) {
		snprintf(err, errlen, "id must be a string, an integer or null");
		return -EINVAL;
	}
	call->id = id;
	json_object_foreach(msg, key, val) {
		if (strcmp(key, "jsonrpc") == 0) {
			if (!json_is_string(val) ||
			    strcmp(json_string_value(val), "2.0") != 0) {
				snprintf(err, errlen, "jsonrpc must be \"2.0\"");
				return -EINVAL;
			}
		} else if (strcmp(key, "version") == 0) {
			/* Optional protocol version the client speaks. */
			if (!json_is_string(val) ||
			    strtol(json_string_value(val), NULL, 10) !=
				    ZN_CTL_MAJOR) {
				snprintf(err, errlen, "protocol version %.32s "
					 "not supported (server speaks %d.%d)",
					 json_is_string(val) ?
						 json_string_value(val) : "?",
					 ZN_CTL_MAJOR, ZN_CTL_MINOR);
				return -EPROTONOSUPPORT;
			}
		} else if (strcmp(key, "id") != 0 &&
			   strcmp(key, "method") != 0 &&
			   strcmp(key, "params") != 0) {
			snprintf(err, errlen, "unknown member '%.64s'", key);
			return -EINVAL;
		}
	}
	method = json_object_get(msg, "method");
	if (!json_is_string(method)) {
		snprintf(err, errlen, "method must be a string");
		return -EINVAL;
	}
	params = json_object_get(msg, "params");
	if (params != NULL && !json_is_object(params)) {
		snprintf(err, errlen, "params must be an object");
		return -EINVAL;
	}
	call->cmd = zn_ctl_find(json_string_value(method));
	if (call->cmd == NULL) {
		snprintf(err, errlen, "unknown method '%.64s'",
			 json_string_value(method));
		return -EOPNOTSUPP;
	}
	call->params = params;
	return 0;
}
