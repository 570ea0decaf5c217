/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reply.h"

int
reply_json(json_t *o, char *reply, size_t len)
{
	char *text = json_dumps(o, JSON_COMPACT);

	json_decref(o);
	if (text == NULL || strlen(text) >= len) {
		free(text);
		snprintf(reply, len, "more than a reply holds: ask for less");
		return -E2BIG;
	}
	memcpy(reply, text, strlen(text) + 1);
	free(text);
	return 0;
}
