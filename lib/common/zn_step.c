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

ZN_STEP_API int
zn_step_parse(const char *s, struct zn_step *step)
{
	uint64_t v;

	memset(step, 0, sizeof(*step)); /* the padding too: steps compare */
	if (s == NULL)
		return -EINVAL;
	if (strcmp(s, "drop") == 0) {
		step->type = ZN_STEP_DROP;
		return 0;
	}
	if (strncmp(s, "port:", 5) == 0) {
		if (zn_parse_uint(s + 5, 0, ZN_STEP_MAX_PORT, &v) < 0)
			return -EINVAL;
		step->type = ZN_STEP_PORT;
		step->id = (uint16_t)v;
		return 0;
	}
	if (strncmp(s, "svc:", 4) == 0)
		s += 4;
	if (zn_parse_uint(s, 1, ZN_STEP_MAX_SERVICE, &v) < 0)
		return -EINVAL;
	step->type = ZN_STEP_SERVICE;
	step->id = (uint16_t)v;
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
					 "1..%u, svc:ID, port:0..%u or drop)",
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
	switch (step->type) {
	case ZN_STEP_SERVICE:
		snprintf(buf, len, "svc:%u", step->id);
		break;
	case ZN_STEP_PORT:
		snprintf(buf, len, "port:%u", step->id);
		break;
	default:
		snprintf(buf, len, "drop");
		break;
	}
}
