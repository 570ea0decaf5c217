/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_EVENT_H
#define ZN_EVENT_H

/*
 * The instance's event log (event.c): what happened to NFs and why (a
 * launch, an exit, a restart and its back-off, a scale decision), in
 * order, numbered. Kept in memory (the last ZN_EVENT_KEEP), also logged;
 * read with event.list (the CLI, the dashboard), appended to by outside
 * controllers with event.add (the autoscaler's decisions). Control thread
 * only.
 */

#include <stdint.h>

#define ZN_EVENT_KEEP 1024
#define ZN_EVENT_TEXT 240

/** Record an event of @p type ("nf.exit", "scale.out", ...): a message
 *  as printf. @return its number. */
uint64_t zn_event(const char *type, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* ZN_EVENT_H */
