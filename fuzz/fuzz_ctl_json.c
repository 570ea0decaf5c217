/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The control protocol on any request line: the JSON-RPC envelope
 * (mgr/core/ctl_rpc.c), each method's parameter checks (the command table,
 * mgr/core/cmd.c, filled by the commands' constructors), and the parsers of
 * flow.add's flows, rule.add's match and chains' hops. Handlers that
 * change a manager are run by the system tests against a real one
 * (tests/system/test_control_fuzz.py); this reaches what comes before. */
#include <stdlib.h>
#include <string.h>

#include "../mgr/core/cmd.h"
#include "../mgr/core/ctl.h"
#include "../mgr/flow/fdir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct zn_cmd_req req;
	struct zn_ctl_call call;
	struct zn_step hops[ZN_MAX_CHAIN_STEPS];
	char err[256];
	json_t *p, *x;
	size_t i;

	memset(&req, 0, sizeof(req));
	if (zn_ctl_rpc_parse((const char *)data, size, &call, err,
			     sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort(); /* every refusal says why */
		json_decref(call.msg);
		return 0;
	}
	req.params = call.params;
	if (zn_cmd_check(call.cmd, call.params, err, sizeof(err)) == 0 && call.params) {
		p = call.params;
		json_array_foreach(json_object_get(p, "flows"), i, x) {
			struct zn_flow_key key;

			(void)zn_fdir_parse_flow(json_object_get(x, "flow"),
						&key, err, sizeof(err));
			(void)zn_cmd_parse_steps(json_object_get(x, "chain"),
						"chain", hops, err, sizeof(err));
		}
		if (json_object_get(p, "match") != NULL) {
			struct zn_fdir_rule r;

			memset(&r, 0, sizeof(r));
			(void)zn_fdir_parse_match(json_object_get(p, "match"),
						 &r, err, sizeof(err));
		}
		x = json_object_get(p, "hops");
		if (x == NULL)
			x = json_object_get(p, "chain");
		if (x != NULL)
			(void)zn_cmd_parse_steps(x, "hops", hops, err,
						sizeof(err));
	}
	json_decref(req.result);
	json_decref(call.msg);
	return 0;
}
