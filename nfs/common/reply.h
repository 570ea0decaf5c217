/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NF_REPLY_H
#define ZN_NF_REPLY_H

/* An NF command's JSON result (zn_nf_cmd_fn) from a jansson object. */

#include <stddef.h>

#include <jansson.h>

/** @p o (taken: freed here) as the reply's text. @return 0, or -E2BIG
 *  with a message when it does not fit in @p len bytes (ask for less). */
int reply_json(json_t *o, char *reply, size_t len);

#endif /* ZN_NF_REPLY_H */
