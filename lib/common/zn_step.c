/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Chain steps: the one parser the manager (--chain, control commands) and
 * libzeronf (NFs' options, zn_nf_flow_steer callers) share, exported from
 * libzeronf as part of its API. */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <zeronf/step.h>

#include "zn_util.h"

#define ZN_STEP_API __attribute__((visibility("default")))

/* "X" or "X@H": the step's own text in @p buf, its host in *@p host. */
static int
split_host(const char *s, char *buf, size_t cap, uint8_t *host)
{
	const char *at = strchr(s, '@');
	uint64_t v;
	size_t len = at != NULL ? (size_t)(at - s) : strlen(s);

	*host = 0;
	if (len >= cap)
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (at == NULL)
		return 0;
	if (zn_parse_uint(at + 1, 1, ZN_STEP_MAX_HOST, &v) < 0)
		return -EINVAL;
	*host = (uint8_t)v;
	return 0;
}

ZN_STEP_API int
zn_step_parse(const char *text, struct zn_step *step)
{
	char s[32];
	uint8_t host;
	uint64_t v;

	memset(step, 0, sizeof(*step));
	if (text == NULL || split_host(text, s, sizeof(s), &host) < 0)
		return -EINVAL;
	if (strcmp(s, "drop") == 0) {
		if (host != 0) /* dropping is done where the packet is */
			return -EINVAL;
		step->type = ZN_STEP_DROP;
		return 0;
	}
	if (strncmp(s, "port:", 5) == 0) {
		if (zn_parse_uint(s + 5, 0, ZN_STEP_MAX_PORT, &v) < 0)
			return -EINVAL;
		step->type = ZN_STEP_PORT;
	} else {
		const char *id = strncmp(s, "svc:", 4) == 0 ? s + 4 : s;

		if (zn_parse_uint(id, 1, ZN_STEP_MAX_SERVICE, &v) < 0)
			return -EINVAL;
		step->type = ZN_STEP_SERVICE;
	}
	step->id = (uint16_t)v;
	step->host = host;
	return 0;
}

ZN_STEP_API int
zn_steps_parse_err(const char *text, struct zn_step *steps, unsigned int max,
		   char *err, size_t errlen)
{
	char tok[32];
	unsigned int n = 0;
	const char *p = text;

	if (err == NULL)
		errlen = 0;
	if (text == NULL || steps == NULL || max == 0) {
		if (errlen)
			snprintf(err, errlen, "no chain");
		return -EINVAL;
	}
	if (*text == '\0') {
		if (errlen)
			snprintf(err, errlen, "empty chain");
		return -EINVAL;
	}
	/* "1,,2" and "1," have an empty step: refused. */
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (n >= max) {
			if (errlen)
				snprintf(err, errlen, "more than %u hops", max);
			return -EINVAL;
		}
		if (len == 0) {
			if (errlen)
				snprintf(err, errlen, "empty hop (hop %u)",
					 n + 1);
			return -EINVAL;
		}
		if (len >= sizeof(tok)) {
			if (errlen)
				snprintf(err, errlen, "bad hop '%.*s...' (too "
					 "long)", 16, p);
			return -EINVAL;
		}
		memcpy(tok, p, len);
		tok[len] = '\0';
		if (zn_step_parse(tok, &steps[n]) < 0) {
			if (errlen)
				snprintf(err, errlen, "bad hop '%s' (want "
					 "1..%u, svc:ID, port:0..%u or drop; "
					 "@HOST after any but drop)",
					 tok, ZN_STEP_MAX_SERVICE,
					 ZN_STEP_MAX_PORT);
			return -EINVAL;
		}
		n++;
		if (end == NULL)
			return (int)n;
		p = end + 1;
	}
}

ZN_STEP_API int
zn_steps_parse(const char *text, struct zn_step *steps, unsigned int max)
{
	return zn_steps_parse_err(text, steps, max, NULL, 0);
}

ZN_STEP_API void
zn_step_format(const struct zn_step *step, char *buf, size_t len)
{
	char at[8] = "";

	if (step->host != 0)
		snprintf(at, sizeof(at), "@%u", step->host);
	switch (step->type) {
	case ZN_STEP_SERVICE:
		snprintf(buf, len, "svc:%u%s", step->id, at);
		break;
	case ZN_STEP_PORT:
		snprintf(buf, len, "port:%u%s", step->id, at);
		break;
	default:
		snprintf(buf, len, "drop");
		break;
	}
}
