/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Commands about NFs: nf.stop, and nf.call: a command an NF serves (zn_nf_cmd_register), e.g. the router's
 * route.add. The manager checks the NF serves it, writes the command into
 * the NF's slot (cmd), rings the NF's doorbell and answers the client
 * once the NF has (cmd_reply, polled from the control loop, which the NF
 * wakes with a kick). One command at a time per NF: a second caller gets
 * -EBUSY until the first is answered. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../core/cmd.h"
#include "../core/mgr.h"
#include "registry.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_util.h"
#include "nf_rec.h"

#define NF_CALL_TIMEOUT_NS (5ULL * 1000 * 1000 * 1000) /* < the CLI's 10 s */

struct nf_call {
	unsigned int slot;
	uint32_t reg_gen;  /* the NF's registration: another NF in the slot
			    * is not the one asked */
	uint32_t cmd_gen;
};

static int
nf_call_poll(struct zn_cmd_req *req)
{
	const struct nf_call *nc = req->poll_arg;
	struct zn_nf_slot *s = zn_slot(req->mgr, nc->slot);
	json_error_t jerr;
	char text[ZN_CMD_TEXT_LEN];
	uint32_t state = zn_nf_state(req->mgr, nc->slot);
	int32_t rc;

	if (__atomic_load_n(&s->cmd_reply.gen, __ATOMIC_ACQUIRE) !=
	    nc->cmd_gen) {
		if (req->mgr->nf[nc->slot].gen != nc->reg_gen ||
		    (state != ZN_NF_RUNNING && state != ZN_NF_STARTING &&
		     state != ZN_NF_STOPPING)) {
			snprintf(req->err, sizeof(req->err), "NF %u exited "
				 "before it answered", nc->slot);
			return -ESRCH;
		}
		return -EAGAIN;
	}
	/* The NF wrote these before the gen we read (acquire). A copy,
	 * bounded whatever the NF wrote. */
	rc = s->cmd_reply.rc;
	memcpy(text, s->cmd_reply.text, sizeof(text));
	text[sizeof(text) - 1] = '\0';
	if (rc < 0) {
		if (rc < -4095)
			rc = -EPROTO;
		snprintf(req->err, sizeof(req->err), "%s",
			 text[0] ? text : strerror(-rc));
		return rc;
	}
	if (text[0] == '\0') {
		req->result = json_object();
		return 0;
	}
	req->result = json_loads(text, JSON_DECODE_ANY, &jerr);
	if (req->result == NULL) {
		snprintf(req->err, sizeof(req->err), "NF %u answered with "
			 "bad JSON: %s", nc->slot, jerr.text);
		return -EPROTO;
	}
	return 0;
}

static int
cmd_nf_call(struct zn_cmd_req *req)
{
	struct zn_mgr *m = req->mgr;
	json_int_t id = json_integer_value(json_object_get(req->params,
							   "instance"));
	const char *name = json_string_value(json_object_get(req->params,
							     "command"));
	json_t *args = json_object_get(req->params, "args");
	struct zn_nf_slot *s;
	struct nf_call *nc;
	uint32_t state, n;
	char *text;
	size_t len;
	bool served = false;

	if (id < 0 || id >= ZN_MAX_NFS) {
		snprintf(req->err, sizeof(req->err), "instance: 0..%d",
			 ZN_MAX_NFS - 1);
		return -EINVAL;
	}
	s = zn_slot(m, id);
	state = zn_nf_state(m, (unsigned int)id);
	/* A tenant's socket: its NFs only, the others as if not there. */
	if (state != ZN_NF_RUNNING ||
	    (req->tenant != 0 &&
	     zn_tenant_of_nf(m, (unsigned int)id) != req->tenant)) {
		snprintf(req->err, sizeof(req->err), "no running NF with "
			 "instance id %lld", (long long)id);
		return -ESRCH;
	}
	n = RTE_MIN(__atomic_load_n(&s->cmds.n, __ATOMIC_ACQUIRE),
		    (uint32_t)ZN_NF_MAX_CMDS);
	for (uint32_t i = 0; i < n && !served; i++)
		served = strncmp(s->cmds.name[i], name, ZN_CMD_NAME_LEN) == 0;
	if (!served) {
		snprintf(req->err, sizeof(req->err), "NF %lld ('%s') has no "
			 "command '%.64s' (nf.list shows its commands)",
			 (long long)id, s->ctl.name, name);
		return -EOPNOTSUPP;
	}
	if (__atomic_load_n(&s->cmd_reply.gen, __ATOMIC_ACQUIRE) !=
	    s->cmd.gen) {
		snprintf(req->err, sizeof(req->err), "NF %lld is still on "
			 "the previous command", (long long)id);
		return -EBUSY;
	}
	text = args != NULL ? json_dumps(args, JSON_COMPACT) :
			      strdup("{}");
	if (text == NULL)
		return -ENOMEM;
	len = strlen(text);
	if (len >= ZN_CMD_TEXT_LEN) {
		free(text);
		snprintf(req->err, sizeof(req->err), "args: %zu bytes of "
			 "JSON, at most %d", len, ZN_CMD_TEXT_LEN - 1);
		return -E2BIG;
	}
	nc = malloc(sizeof(*nc));
	if (nc == NULL) {
		free(text);
		return -ENOMEM;
	}
	zn_strlcpy(s->cmd.name, name, sizeof(s->cmd.name));
	memcpy(s->cmd.text, text, len + 1);
	s->cmd.len = (uint32_t)len;
	free(text);
	*nc = (struct nf_call){ .slot = (unsigned int)id,
				.reg_gen = m->nf[id].gen,
				.cmd_gen = s->cmd.gen + 1 };
	__atomic_store_n(&s->cmd.gen, nc->cmd_gen, __ATOMIC_RELEASE);
	zn_db_ring(&s->db);
	req->poll = nf_call_poll;
	req->poll_arg = nc;
	req->deadline_ns = zn_now_ns() + NF_CALL_TIMEOUT_NS;
	return 0;
}

static int
cmd_nf_stop(struct zn_cmd_req *req)
{
	json_int_t id = json_integer_value(json_object_get(req->params,
							   "instance"));
	int rc = req->tenant != 0 &&
		 zn_tenant_of_nf(req->mgr, (unsigned int)id) != req->tenant ?
		 -ENOENT : zn_registry_stop_nf(req->mgr, (unsigned int)id);

	if (rc < 0) {
		snprintf(req->err, sizeof(req->err),
			 "no running NF with instance id %lld", (long long)id);
		return rc;
	}
	req->result = json_pack("{s:I, s:s}", "instance", (json_int_t)id,
				"state", "stopping");
	return 0;
}

static const struct zn_cmd nf_stop_cmd = {
	.name = "nf.stop",
	.help = "stop an NF: it drains its packets and exits",
	.flags = ZN_CMD_F_TENANT, /* its own NFs */
	.params = { { .name = "instance", .type = ZN_CMD_INT, .required = true,
		      .bounded = true, .min = 0, .max = ZN_MAX_NFS - 1 } },
	.result = "{\"instance\": \"the id\", \"state\": \"stopping\"}",
	.fn = cmd_nf_stop,
};
ZN_CMD_REGISTER(nf_stop_cmd)

static const struct zn_cmd nf_call_cmd = {
	.name = "nf.call",
	.flags = ZN_CMD_F_TENANT, /* its own NFs */
	.help = "call a command an NF serves (nf.list: commands); its answer "
		"is the result",
	.params = {
		{ .name = "instance", .type = ZN_CMD_INT, .required = true,
		  .bounded = true, .min = 0, .max = ZN_MAX_NFS - 1 },
		{ .name = "command", .type = ZN_CMD_STR, .required = true },
		{ .name = "args", .type = ZN_CMD_OBJECT,
		  .desc = "at most 8 KiB as JSON" },
	},
	.doc = "The NF runs the command on its packet thread between two "
	       "bursts (so a change applies from the next packet on), one at "
	       "a time: `-EBUSY` while it is on another, `-EOPNOTSUPP` for a "
	       "command it does not serve, `-ESRCH` if it is not running or "
	       "exits first, `-ETIMEDOUT` after 5 s. The router serves "
	       "`route.add {routes: [{prefix, next_hop}]}` -> `{added, "
	       "replaced, ipv4, ipv6}`, `route.del {prefixes: [...]}` -> "
	       "`{removed, ipv4, ipv6}`, `route.lookup {address}` -> "
	       "`{next_hop, port}` (see nfs/router/README.md). The firewall "
	       "serves `rules.load {path | rules}`, `rules.list {from, max}`, "
	       "`ct.list {max}`, `ct.stats`, `ct.flush` "
	       "(docs/nfs/firewall.md); the rate limiter `classes.list`, "
	       "`class.set {name, rate, burst, per_rate, per_burst}` "
	       "(docs/nfs/ratelimit.md); the NAT `nat.list {max}`, "
	       "`nat.stats`, `nat.flush` (docs/nfs/nat.md); the load "
	       "balancer `backend.list {vip}`, `backend.set {vip, backend, "
	       "up, weight}`, `lb.lookup {vip, src, sport}` "
	       "(docs/nfs/lb.md).",
	.fn = cmd_nf_call,
};
ZN_CMD_REGISTER(nf_call_cmd)
