/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The manager's start-up and teardown, walked in order (subsys.h). */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "subsys.h"
#include "../../lib/common/zn_util.h"

static const struct zn_subsys *table[ZN_SUBSYS_COUNT];
static unsigned int n_begun; /* table[0, n_begun): inits run (or failed) */

void
zn_subsys_register(const struct zn_subsys *s)
{
	/* Two in one place, or one out of range: a programming error,
	 * caught by every start (zn_subsys_start) */
	if (s->order < ZN_SUBSYS_COUNT && table[s->order] == NULL)
		table[s->order] = s;
}

int
zn_subsys_start(struct zn_mgr *m, const char *fail_at, const char **failed)
{
	bool named = fail_at == NULL;

	for (unsigned int i = 0; i < ZN_SUBSYS_COUNT; i++) {
		if (table[i] == NULL) {
			ZN_LOG(ERR, "start-up step %u has no subsystem (a "
			       "build without it?)", i);
			*failed = "?";
			return -ENOENT;
		}
		named |= fail_at != NULL && strcmp(table[i]->name, fail_at) == 0;
	}
	if (!named) {
		ZN_LOG(ERR, "ZN_MGR_FAIL_AT=%s: no such subsystem "
		       "(zeronf-mgr --subsystems)", fail_at);
		*failed = fail_at;
		return -EINVAL;
	}
	for (n_begun = 0; n_begun < ZN_SUBSYS_COUNT; n_begun++) {
		const struct zn_subsys *s = table[n_begun];
		int rc = fail_at != NULL && strcmp(s->name, fail_at) == 0 ?
			 -ECANCELED : s->init(m);

		if (rc < 0) {
			*failed = s->name;
			n_begun++; /* its teardown too: it may be half done */
			zn_subsys_stop(m);
			return rc;
		}
	}
	return 0;
}

void
zn_subsys_stop(struct zn_mgr *m)
{
	while (n_begun > 0) {
		const struct zn_subsys *s = table[--n_begun];

		if (s->fini != NULL)
			s->fini(m);
	}
}

void
zn_subsys_print(void)
{
	for (unsigned int i = 0; i < ZN_SUBSYS_COUNT; i++)
		printf("%s\n", table[i] != NULL ? table[i]->name : "?");
}
