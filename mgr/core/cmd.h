/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_CMD_H
#define ZN_CMD_H

/*
 * Control commands (cmd.c), OVS unixctl style: each module registers its
 * commands next to the code they drive (ZN_CMD_REGISTER), with typed
 * parameters. The table checks parameters before a handler runs, and
 * the control protocol's schema (schema/control.json, `zeronf-mgr
 * --schema`, the "schema" method) is generated from it. Transports (the
 * control socket, ctl.c; DPDK telemetry, telemetry.c) find commands here
 * and know none of them.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include <zeronf/step.h>

struct zn_mgr;

#define ZN_CTL_MAJOR 1
#define ZN_CTL_MINOR 1

/* Parameter types. */
enum zn_cmd_type {
	ZN_CMD_INT = 1,
	ZN_CMD_STR,
	ZN_CMD_BOOL,
	ZN_CMD_ARRAY,
	ZN_CMD_OBJECT,
};

struct zn_cmd_param {
	const char *name;
	enum zn_cmd_type type;
	bool required;
	bool bounded;       /* ZN_CMD_INT: min..max checked */
	int64_t min, max;
	const char *desc;   /* the schema's "description" */
	/* ZN_CMD_STR: the values allowed (NULL-terminated), checked here,
	 * the schema's "enum"; NULL: any string. */
	const char *const *choices;
	/* More JSON Schema for the parameter (a JSON object's text: enum,
	 * items, pattern, properties...), merged into the generated schema.
	 * The handler checks what it says. */
	const char *schema;
};

#define ZN_CMD_MAX_PARAMS 12

/* The command's handler may run on any thread (it reads nothing the
 * control thread changes); else only on the control thread. */
#define ZN_CMD_F_ANY_THREAD 0x1
/* Open to a tenant's control socket (ctl.c): the handler keeps to
 * req->tenant's own (its NFs, its chain), else only the operator's. */
#define ZN_CMD_F_TENANT 0x2

struct zn_cmd_req;

struct zn_cmd {
	const char *name;   /* "module.verb" */
	const char *help;
	unsigned int flags; /* ZN_CMD_F_* */
	struct zn_cmd_param params[ZN_CMD_MAX_PARAMS];
	/* The result's members, described: a JSON object's text, or NULL. */
	const char *result;
	/* More about the command (Markdown), for the generated docs. */
	const char *doc;
	/* 0 (req->result set, or an empty object), or -errno with req->err
	 * set (else strerror). Every command may run while packets flow:
	 * changes reach the workers as a new snapshot, never in place. */
	int (*fn)(struct zn_cmd_req *req);
	/* Optional: the parameters' values checked as fn checks them, by
	 * the same code, with no manager (req->mgr NULL) and nothing
	 * changed: `zeronf-mgr --check` runs it so that validate, up and
	 * apply refuse a file before touching anything. 0 or -EINVAL with
	 * req->err set. What depends on the running instance (an NF's
	 * name, a port's count) stays fn's. */
	int (*check)(struct zn_cmd_req *req);
};

struct zn_cmd_req {
	struct zn_mgr *mgr;
	unsigned int tenant; /* 0: the operator; t + 1: tenant t's control
			      * socket: see and change only tenant t */
	json_t *params;   /* object or NULL; borrowed, only during fn */
	json_t *result;   /* set by the command; owned */
	char err[256];    /* message for an error reply */
	/* A command that answers later (nf.call waits for an NF) returns 0
	 * with poll set: the transport calls poll until it returns other
	 * than -EAGAIN (0: result set; -errno: err set), or the deadline
	 * passes (-ETIMEDOUT), and replies then. poll_arg is free()d after;
	 * the client's other requests are answered meanwhile. */
	int (*poll)(struct zn_cmd_req *req);
	void *poll_arg;
	uint64_t deadline_ns;
};

/** Add a command (at start-up, before any is served). The table is kept,
 *  not copied. @return 0, -EEXIST or -ENOSPC. */
int zn_cmd_register(const struct zn_cmd *cmd);

/** Register @p cmd when the program starts (a constructor, like DPDK's
 *  RTE_INIT). The object file must be linked whole (mgr/meson.build). */
#define ZN_CMD_REGISTER(cmd)                                                \
	static void __attribute__((constructor, used))                      \
	zn_cmd_register_##cmd(void)                                         \
	{                                                                   \
		if (zn_cmd_register(&(cmd)) < 0)                            \
			zn_cmd_register_failed((cmd).name);                 \
	}
void zn_cmd_register_failed(const char *name);

const struct zn_cmd *zn_cmd_find(const char *name);

/** Reject unknown, missing, mistyped or out-of-range parameters.
 *  0 or -EINVAL (message in @p err). */
int zn_cmd_check(const struct zn_cmd *cmd, json_t *params, char *err,
		 size_t errlen);

/** Check the parameters and run the command (no poll: the caller handles
 *  req->poll). 0 or -errno (req->err set). */
int zn_cmd_call(const struct zn_cmd *cmd, struct zn_cmd_req *req);

/** `zeronf-mgr --check`: read a JSON array of requests from @p in, each
 *  {"method": M, "params": P} (checked by zn_cmd_check and M's .check)
 *  or {"prefix": S} (zn_ip_prefix_parse: routes, which NFs parse), and
 *  write to @p out an array of the same length: null for a good one,
 *  else {"errno": E, "message": M}. @return 0 (all good), 1 (some bad)
 *  or 2 (the input is not such an array: said on stderr). */
int zn_cmd_check_requests(FILE *in, FILE *out);

/** The control protocol described as data (schema/control.json): the
 *  envelope (@p envelope, a JSON object's text) with every registered
 *  command under "methods". NULL: out of memory or a bad .schema text
 *  (named on stderr). */
json_t *zn_cmd_schema(const char *envelope);

/* JSON of the shared types, for commands and views. */
/** A step's text in a command's schema (zn_step_parse's syntax):
 *  "svc:S" or "S", "port:P", either with "@H" (another host), or
 *  "drop". */
#define ZN_STEP_PATTERN                                                       \
	"^((svc:)?[0-9]+|port:[0-9]+)(@[0-9]+)?$|^drop$"

/** A JSON array of steps ("svc:ID", "port:P", "drop") named @p name in
 *  messages. @return step count, or -EINVAL (err set). */
int zn_cmd_parse_steps(json_t *a, const char *name, struct zn_step *steps,
		       char *err, size_t errlen);
json_t *zn_cmd_steps_json(const struct zn_step *steps, unsigned int n);

#endif /* ZN_CMD_H */
