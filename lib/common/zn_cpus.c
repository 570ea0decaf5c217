/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* CPU lists and the --cpus / --log-level options (zn_cpus.h). */

#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "zn_cpus.h"
#include "zn_util.h"

int
zn_parse_cpulist(const char *s, cpu_set_t *set)
{
	const char *p = s;

	CPU_ZERO(set);
	if (s == NULL || *s == '\0')
		return -EINVAL;
	while (*p != '\0') {
		char *end;
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		lo = strtoul(p, &end, 10);
		hi = lo;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				return -EINVAL;
			hi = strtoul(p, &end, 10);
			p = end;
		}
		if (hi < lo || hi >= CPU_SETSIZE)
			return -EINVAL;
		for (unsigned long c = lo; c <= hi; c++)
			CPU_SET(c, set);
		if (*p == ',')
			p++;
		else if (*p != '\0')
			return -EINVAL;
	}
	return 0;
}

int
zn_cpulist_allowed(const cpu_set_t *set, char *bad, size_t len)
{
	cpu_set_t allowed;

	if (sched_getaffinity(0, sizeof(allowed), &allowed) < 0)
		return -errno;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, set) && !CPU_ISSET(c, &allowed)) {
			char avail[256] = "";

			zn_format_cpulist(&allowed, avail, sizeof(avail));
			snprintf(bad, len, "CPU %d is not available (this "
				 "process may use %s)", c, avail);
			return -EINVAL;
		}
	return 0;
}

int
zn_cpus_option(const char *prog, const char *arg, cpu_set_t *set)
{
	char why[300];

	if (zn_parse_cpulist(arg, set) < 0) {
		fprintf(stderr, "%s: bad CPU list '%s' (e.g. 0-3,6)\n", prog,
			arg);
		return -EINVAL;
	}
	if (zn_cpulist_allowed(set, why, sizeof(why)) < 0) {
		fprintf(stderr, "%s: --cpus %s: %s\n", prog, arg, why);
		return -EINVAL;
	}
	return 0;
}

int
zn_log_level_option(const char *prog, const char *arg, char *out,
		    size_t len)
{
	if (!zn_log_level_valid(arg) || strlen(arg) >= len) {
		fprintf(stderr, "%s: --log-level: '%s' is not a level (emerg, "
			"alert, crit, err, warning, notice, info, debug or "
			"1..8)\n", prog, arg);
		return -EINVAL;
	}
	zn_strlcpy(out, arg, len);
	return 0;
}

bool
zn_log_level_valid(const char *s)
{
	static const char *const names[] = {
		"emerg", "alert", "crit", "critical", "err", "error",
		"warning", "notice", "info", "debug",
	};
	const char *lvl = strrchr(s, ':');
	uint64_t v;

	/* EAL's forms: LEVEL, or PATTERN:LEVEL / REGEX,LEVEL for some log
	 * types; a level is a name or 1..8. */
	if (lvl == NULL)
		lvl = strrchr(s, ',');
	lvl = lvl != NULL ? lvl + 1 : s;
	if (lvl != s && lvl - 1 == s) /* ":info": no pattern */
		return false;
	if (zn_parse_uint(lvl, 1, 8, &v) == 0)
		return true;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcasecmp(lvl, names[i]) == 0)
			return true;
	return false;
}

int
zn_format_cpulist(const cpu_set_t *set, char *buf, size_t len)
{
	size_t off = 0;
	int c = 0;

	buf[0] = '\0';
	while (c < CPU_SETSIZE) {
		int lo, n;

		if (!CPU_ISSET(c, set)) {
			c++;
			continue;
		}
		lo = c;
		while (c + 1 < CPU_SETSIZE && CPU_ISSET(c + 1, set))
			c++;
		if (lo == c)
			n = snprintf(buf + off, len - off, "%s%d",
				     off ? "," : "", lo);
		else
			n = snprintf(buf + off, len - off, "%s%d-%d",
				     off ? "," : "", lo, c);
		if (n < 0 || (size_t)n >= len - off)
			return -ENOSPC;
		off += (size_t)n;
		c++;
	}
	return off > 0 ? 0 : -EINVAL;
}
