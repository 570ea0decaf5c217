/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The event log (event.h): a ring of the last ZN_EVENT_KEEP events and
 * the commands that read and append to it. */

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cmd.h"
#include "event.h"
#include "../../lib/common/zn_util.h"

struct event {
	uint64_t seq;      /* 1, 2, ...; 0: empty */
	uint64_t time_ms;  /* wall clock */
	char type[32];
	char text[ZN_EVENT_TEXT];
};

static struct event ring[ZN_EVENT_KEEP];
static uint64_t last_seq;

static uint64_t
wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static uint64_t
record(const char *type, const char *text)
{
	struct event *e = &ring[last_seq % ZN_EVENT_KEEP];

	e->seq = ++last_seq;
	e->time_ms = wall_ms();
	zn_strlcpy(e->type, type, sizeof(e->type));
	zn_strlcpy(e->text, text, sizeof(e->text));
	ZN_LOG(INFO, "event %" PRIu64 " %s: %s", e->seq, e->type, e->text);
	return e->seq;
}

uint64_t
zn_event(const char *type, const char *fmt, ...)
{
	char text[ZN_EVENT_TEXT];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return record(type, text);
}

static int
cmd_event_list(struct zn_cmd_req *req)
{
	json_t *since = json_object_get(req->params, "since");
	json_t *lim = json_object_get(req->params, "limit");
	uint64_t from = since ? (uint64_t)json_integer_value(since) : 0;
	json_int_t limit = lim ? json_integer_value(lim) : ZN_EVENT_KEEP;
	uint64_t first = last_seq > ZN_EVENT_KEEP ? last_seq - ZN_EVENT_KEEP :
						    0;
	json_t *a = json_array();

	/* The newest `limit` events after `since`, oldest first. */
	if (from < first)
		from = first;
	if (last_seq - from > (uint64_t)limit)
		from = last_seq - (uint64_t)limit;
	for (uint64_t s = from + 1; s <= last_seq; s++) {
		const struct event *e = &ring[(s - 1) % ZN_EVENT_KEEP];

		json_array_append_new(a, json_pack(
			"{s:I, s:I, s:s, s:s}", "seq", (json_int_t)e->seq,
			"time_ms", (json_int_t)e->time_ms, "type", e->type,
			"message", e->text));
	}
	req->result = json_pack("{s:o, s:I, s:I}", "events", a, "last",
				(json_int_t)last_seq, "lost",
				(json_int_t)first);
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd event_list_cmd = {
	.name = "event.list",
	.help = "the instance's events after `since` (oldest first)",
	.params = {
		{ .name = "since", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = INT64_MAX,
		  .desc = "the last event already seen (default 0)" },
		{ .name = "limit", .type = ZN_CMD_INT, .bounded = true,
		  .min = 0, .max = ZN_EVENT_KEEP,
		  .desc = "the newest so many (default all kept)" },
	},
	.result = "{\"events\": \"[{seq, time_ms, type, message}]\", "
		  "\"last\": \"the newest event's seq\", \"lost\": \"events "
		  "up to this seq are no longer kept\"}",
	.fn = cmd_event_list,
};
ZN_CMD_REGISTER(event_list_cmd)

static int
cmd_event_add(struct zn_cmd_req *req)
{
	const char *type = json_string_value(json_object_get(req->params,
							     "type"));
	const char *msg = json_string_value(json_object_get(req->params,
							    "message"));
	char full[32];

	/* Outside controllers' events are told apart by their prefix. */
	if (type[0] == '\0' || strlen(type) > 24 ||
	    strspn(type, "abcdefghijklmnopqrstuvwxyz0123456789._-") !=
		    strlen(type)) {
		snprintf(req->err, sizeof(req->err), "type: 1..24 characters "
			 "of [a-z0-9._-]");
		return -EINVAL;
	}
	snprintf(full, sizeof(full), "ext.%s", type);
	req->result = json_pack("{s:I}", "seq", (json_int_t)record(full, msg));
	return req->result ? 0 : -ENOMEM;
}

static const struct zn_cmd event_add_cmd = {
	.name = "event.add",
	.help = "record an event of an outside controller (type: ext.TYPE)",
	.params = {
		{ .name = "type", .type = ZN_CMD_STR, .required = true },
		{ .name = "message", .type = ZN_CMD_STR, .required = true,
		  .desc = "cut to 239 bytes" },
	},
	.result = "{\"seq\": \"its number\"}",
	.fn = cmd_event_add,
};
ZN_CMD_REGISTER(event_add_cmd)
