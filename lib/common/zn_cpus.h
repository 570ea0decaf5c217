/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_CPUS_H
#define ZN_CPUS_H

/* CPU lists ("0-3,6") and the options that take them and EAL's log level,
 * as the manager, libzeronf and zeronf-vm parse them (zn_cpus.c). */

#include <stdbool.h>
#include <stddef.h>
#include <sched.h>

/** Parse a CPU list such as "0-3,6". @return 0 or -EINVAL. */
int zn_parse_cpulist(const char *s, cpu_set_t *set);

/** Every CPU of @p set is one this process may run on; else -EINVAL with
 *  a message naming the first that is not in @p bad. */
int zn_cpulist_allowed(const cpu_set_t *set, char *bad, size_t len);

/** A log level EAL's --log-level takes: a name (err, info, ...) or 1..8,
 *  optionally after "PATTERN:" or "REGEX,". */
bool zn_log_level_valid(const char *s);

/** The --cpus and --log-level options of the manager and of NFs: parsed
 *  and checked, or one line on stderr saying why not. 0 or -EINVAL. */
int zn_cpus_option(const char *prog, const char *arg, cpu_set_t *set);
int zn_log_level_option(const char *prog, const char *arg, char *out,
			size_t len);

/** Format @p set as "0-3,6" for EAL --lcores. @return 0 or -ENOSPC. */
int zn_format_cpulist(const cpu_set_t *set, char *buf, size_t len);

#endif /* ZN_CPUS_H */
