/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The command table (cmd.h): commands registered by the modules that
 * implement them, parameter checks, the generated protocol schema, and
 * the table's own commands (version, help, schema).
 */

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_version.h>

#include <zeronf/flow.h>

#include "cmd.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/shm/zn_shm.h"

#define ZN_CMD_MAX 96

/* Sorted by name; filled by constructors before main(), read after. */
static const struct zn_cmd *cmds[ZN_CMD_MAX];
static unsigned int n_cmds;

void
zn_cmd_register_failed(const char *name)
{
	/* A programming error (duplicate name, table too small), found by
	 * every test run; the manager still starts without the command. */
	fprintf(stderr, "zeronf: cannot register command %s\n", name);
}

int
zn_cmd_register(const struct zn_cmd *cmd)
{
	unsigned int i;

	if (zn_cmd_find(cmd->name) != NULL)
		return -EEXIST;
	if (n_cmds == ZN_CMD_MAX)
		return -ENOSPC;
	for (i = n_cmds; i > 0 && strcmp(cmds[i - 1]->name, cmd->name) > 0;
	     i--)
		cmds[i] = cmds[i - 1];
	cmds[i] = cmd;
	n_cmds++;
	return 0;
}

const struct zn_cmd *
zn_cmd_find(const char *name)
{
	for (unsigned int i = 0; i < n_cmds; i++)
		if (strcmp(cmds[i]->name, name) == 0)
			return cmds[i];
	return NULL;
}

static const char *
type_name(enum zn_cmd_type type)
{
	switch (type) {
	case ZN_CMD_INT:
		return "an integer";
	case ZN_CMD_ARRAY:
		return "an array";
	case ZN_CMD_STR:
		return "a string";
	case ZN_CMD_OBJECT:
		return "an object";
	case ZN_CMD_BOOL:
		return "true or false";
	default:
		return "a value";
	}
}

static bool
type_ok(enum zn_cmd_type type, json_t *v)
{
	switch (type) {
	case ZN_CMD_INT:
		return json_is_integer(v);
	case ZN_CMD_STR:
		return json_is_string(v);
	case ZN_CMD_BOOL:
		return json_is_boolean(v);
	case ZN_CMD_ARRAY:
		return json_is_array(v);
	case ZN_CMD_OBJECT:
		return json_is_object(v);
	default:
		return true;
	}
}

int
zn_cmd_check(const struct zn_cmd *cmd, json_t *params, char *err,
	     size_t errlen)
{
	const char *key;
	json_t *val;

	json_object_foreach(params, key, val) {
		const struct zn_cmd_param *p = NULL;

		for (int i = 0; i < ZN_CMD_MAX_PARAMS && cmd->params[i].name;
		     i++)
			if (strcmp(cmd->params[i].name, key) == 0)
				p = &cmd->params[i];
		if (p == NULL) {
			snprintf(err, errlen, "%s: unknown parameter '%s'",
				 cmd->name, key);
			return -EINVAL;
		}
		if (!type_ok(p->type, val)) {
			snprintf(err, errlen, "%s: '%s' must be %s", cmd->name,
				 key, type_name(p->type));
			return -EINVAL;
		}
		if (p->type == ZN_CMD_STR && p->choices != NULL) {
			const char *const *c = p->choices;

			while (*c != NULL && strcmp(*c, json_string_value(val)))
				c++;
			if (*c == NULL) {
				int n = snprintf(err, errlen, "%s: %s: one of",
						 cmd->name, key);

				for (c = p->choices; *c != NULL && n > 0 &&
				     (size_t)n < errlen; c++)
					n += snprintf(err + n, errlen - (size_t)n,
						      " %s", *c);
				return -EINVAL;
			}
		}
		if (p->type == ZN_CMD_INT && p->bounded &&
		    (json_integer_value(val) < p->min ||
		     json_integer_value(val) > p->max)) {
			snprintf(err, errlen, "%s: %s: %" PRId64 "..%" PRId64,
				 cmd->name, key, p->min, p->max);
			return -EINVAL;
		}
	}
	for (int i = 0; i < ZN_CMD_MAX_PARAMS && cmd->params[i].name; i++)
		if (cmd->params[i].required &&
		    json_object_get(params, cmd->params[i].name) == NULL) {
			snprintf(err, errlen, "%s: missing parameter '%s'",
				 cmd->name, cmd->params[i].name);
			return -EINVAL;
		}
	return 0;
}

int
zn_cmd_call(const struct zn_cmd *cmd, struct zn_cmd_req *req)
{
	int rc = zn_cmd_check(cmd, req->params, req->err, sizeof(req->err));

	return rc < 0 ? rc : cmd->fn(req);
}

static json_t *
check_one(json_t *item)
{
	json_t *method = json_object_get(item, "method");
	json_t *prefix = json_object_get(item, "prefix");
	struct zn_cmd_req req = { .params = json_object_get(item, "params") };
	const struct zn_cmd *cmd;
	uint8_t addr[16], len;
	int rc;

	if (json_is_string(prefix)) {
		if (zn_ip_prefix_parse(json_string_value(prefix), addr,
				       &len) >= 0)
			return json_null();
		snprintf(req.err, sizeof(req.err), "bad prefix '%s' (want "
			 "A.B.C.D/LEN, LEN 0..32, or IPV6/LEN, LEN 0..128)",
			 json_string_value(prefix));
		rc = -EINVAL;
		goto bad;
	}
	cmd = json_is_string(method) ? zn_cmd_find(json_string_value(method))
				     : NULL;
	if (cmd == NULL) {
		snprintf(req.err, sizeof(req.err), "no method '%s'",
			 json_is_string(method) ? json_string_value(method) :
			 "(none)");
		rc = -ENOENT;
		goto bad;
	}
	if (req.params != NULL && !json_is_object(req.params)) {
		snprintf(req.err, sizeof(req.err), "params: an object");
		rc = -EINVAL;
		goto bad;
	}
	rc = zn_cmd_check(cmd, req.params, req.err, sizeof(req.err));
	if (rc == 0 && cmd->check != NULL)
		rc = cmd->check(&req);
	json_decref(req.result);
	if (rc == 0)
		return json_null();
bad:
	return json_pack("{s:i,s:s}", "errno", -rc, "message",
			 req.err[0] ? req.err : strerror(-rc));
}

int
zn_cmd_check_requests(FILE *in, FILE *out)
{
	json_error_t jerr;
	json_t *a = json_loadf(in, 0, &jerr), *item, *res;
	size_t i;
	int bad = 0;

	if (!json_is_array(a)) {
		fprintf(stderr, "--check: stdin must be a JSON array of "
			"requests (%s)\n", a == NULL ? jerr.text : "not an array");
		json_decref(a);
		return 2;
	}
	res = json_array();
	json_array_foreach(a, i, item) {
		json_t *r = json_is_object(item) ? check_one(item) :
			    json_pack("{s:i,s:s}", "errno", EINVAL, "message",
				      "a request is an object");

		bad |= !json_is_null(r);
		json_array_append_new(res, r);
	}
	json_dumpf(res, out, JSON_COMPACT);
	fputc('\n', out);
	json_decref(res);
	json_decref(a);
	return bad;
}

/* ------------------------------------------------------------------ */
/* The schema                                                          */

static const char *
schema_type(enum zn_cmd_type type)
{
	switch (type) {
	case ZN_CMD_INT:
		return "integer";
	case ZN_CMD_STR:
		return "string";
	case ZN_CMD_BOOL:
		return "boolean";
	case ZN_CMD_ARRAY:
		return "array";
	case ZN_CMD_OBJECT:
		return "object";
	default:
		return NULL;
	}
}

/* Parse a .schema/.result text; a bad one is a programming error that
 * `zeronf-mgr --schema` (run by the build) reports. */
static json_t *
load_text(const char *cmd, const char *what, const char *text)
{
	json_error_t e;
	json_t *o = json_loads(text, 0, &e);

	if (!json_is_object(o)) {
		fprintf(stderr, "zeronf: command %s: bad %s JSON: %s\n", cmd,
			what, o ? "not an object" : e.text);
		json_decref(o);
		return NULL;
	}
	return o;
}

static json_t *
param_schema(const struct zn_cmd *c, const struct zn_cmd_param *p)
{
	json_t *o = json_object();
	const char *t = schema_type(p->type);

	if (t != NULL)
		json_object_set_new(o, "type", json_string(t));
	if (p->type == ZN_CMD_INT && p->bounded) {
		json_object_set_new(o, "minimum", json_integer(p->min));
		if (p->max != INT64_MAX)
			json_object_set_new(o, "maximum", json_integer(p->max));
	}
	if (p->desc != NULL)
		json_object_set_new(o, "description", json_string(p->desc));
	if (p->choices != NULL) {
		json_t *e = json_array();

		for (const char *const *c = p->choices; *c != NULL; c++)
			json_array_append_new(e, json_string(*c));
		json_object_set_new(o, "enum", e);
	}
	if (p->schema != NULL) {
		json_t *more = load_text(c->name, p->name, p->schema);

		if (more == NULL) {
			json_decref(o);
			return NULL;
		}
		json_object_update(o, more);
		json_decref(more);
	}
	json_object_set_new(o, "required", json_boolean(p->required));
	return o;
}

static json_t *
cmd_schema(const struct zn_cmd *c)
{
	json_t *m = json_pack("{s:s}", "help", c->help);
	json_t *params = json_object();

	for (int i = 0; i < ZN_CMD_MAX_PARAMS && c->params[i].name; i++) {
		json_t *p = param_schema(c, &c->params[i]);

		if (p == NULL)
			goto fail;
		json_object_set_new(params, c->params[i].name, p);
	}
	if (json_object_size(params) > 0)
		json_object_set(m, "params", params);
	if (c->result != NULL) {
		json_t *r = load_text(c->name, "result", c->result);

		if (r == NULL)
			goto fail;
		json_object_set_new(m, "result", r);
	}
	if (c->doc != NULL)
		json_object_set_new(m, "description", json_string(c->doc));
	if (c->flags & ZN_CMD_F_ANY_THREAD)
		json_object_set_new(m, "any_thread", json_true());
	if (c->flags & ZN_CMD_F_TENANT)
		json_object_set_new(m, "tenant", json_true());
	json_decref(params);
	return m;
fail:
	json_decref(params);
	json_decref(m);
	return NULL;
}

json_t *
zn_cmd_schema(const char *envelope)
{
	json_t *doc = load_text("(envelope)", "schema", envelope);
	json_t *methods = json_object();

	if (doc == NULL)
		goto fail;
	for (unsigned int i = 0; i < n_cmds; i++) {
		json_t *c = cmd_schema(cmds[i]);

		if (c == NULL)
			goto fail;
		json_object_set_new(methods, cmds[i]->name, c);
	}
	json_object_set_new(doc, "version",
			    json_sprintf("%d.%d", ZN_CTL_MAJOR, ZN_CTL_MINOR));
	json_object_set_new(doc, "methods", methods);
	return doc;
fail:
	json_decref(methods);
	json_decref(doc);
	return NULL;
}

/* ------------------------------------------------------------------ */
/* Shared JSON forms                                                   */

int
zn_cmd_parse_steps(json_t *a, const char *name, struct zn_step *steps,
		   char *err, size_t errlen)
{
	size_t i, n = json_array_size(a);
	json_t *h;

	if (!json_is_array(a) || n == 0 || n > ZN_MAX_CHAIN_STEPS) {
		snprintf(err, errlen, "%s: 1..%d hops expected", name,
			 ZN_MAX_CHAIN_STEPS);
		return -EINVAL;
	}
	json_array_foreach(a, i, h) {
		if (!json_is_string(h) ||
		    zn_step_parse(json_string_value(h), &steps[i]) < 0) {
			snprintf(err, errlen, "%s[%zu]: want \"svc:ID\" "
				 "(1..%d), \"port:P\" (0..%d) or \"drop\"; "
				 "\"@HOST\" (1..%d) after any but drop",
				 name, i, ZN_STEP_MAX_SERVICE,
				 ZN_STEP_MAX_PORT, ZN_STEP_MAX_HOST);
			return -EINVAL;
		}
	}
	return (int)n;
}

json_t *
zn_cmd_steps_json(const struct zn_step *steps, unsigned int n)
{
	json_t *a = json_array();
	char buf[32];

	for (unsigned int i = 0; i < n; i++) {
		zn_step_format(&steps[i], buf, sizeof(buf));
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

/* ------------------------------------------------------------------ */
/* The table's own commands                                            */

static int
cmd_version(struct zn_cmd_req *req)
{
	req->result = json_pack("{s:s, s:i, s:i, s:s, s:s, s:i}", "protocol",
				"zeronf-ctl", "major", ZN_CTL_MAJOR, "minor",
				ZN_CTL_MINOR, "build", zn_build_id, "dpdk",
				rte_version(), "abi", ZN_ABI_VERSION);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd version_cmd = {
	.name = "version",
	.help = "protocol, build and DPDK versions",
	.flags = ZN_CMD_F_ANY_THREAD | ZN_CMD_F_TENANT,
	.result = "{\"protocol\": \"zeronf-ctl\", \"major\": \"protocol "
		  "major version\", \"minor\": \"protocol minor version\", "
		  "\"build\": \"git describe of the build\", \"dpdk\": "
		  "\"DPDK version\", \"abi\": \"libzeronf ABI version\"}",
	.fn = cmd_version,
};
ZN_CMD_REGISTER(version_cmd)

static int
cmd_help(struct zn_cmd_req *req)
{
	json_t *list = json_array();

	for (unsigned int i = 0; i < n_cmds; i++) {
		json_t *params = json_array();

		for (int p = 0; p < ZN_CMD_MAX_PARAMS && cmds[i]->params[p].name;
		     p++)
			json_array_append_new(
				params, json_string(cmds[i]->params[p].name));
		json_array_append_new(list,
				      json_pack("{s:s, s:s, s:o}", "method",
						cmds[i]->name, "help",
						cmds[i]->help, "params",
						params));
	}
	req->result = json_pack("{s:o}", "methods", list);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd help_cmd = {
	.name = "help",
	.help = "list methods",
	.flags = ZN_CMD_F_ANY_THREAD | ZN_CMD_F_TENANT,
	.result = "{\"methods\": \"[{method, help, params}]\"}",
	.fn = cmd_help,
};
ZN_CMD_REGISTER(help_cmd)
