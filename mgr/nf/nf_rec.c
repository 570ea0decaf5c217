/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The manager's records of NF slots (nf_rec.h): made and freed. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>

#include "nf_rec.h"
#include "../core/subsys.h"

/* Make the records (every slot FREE, nowhere yet: shared_init puts
 *  each in zn_shm.nfs) before anything reads them (nf_rec.c). 0 or
 *  -ENOMEM. */
static int
zn_nf_recs_make(struct zn_mgr *m)
{
	void *p = NULL;

	/* Aligned: a record's ring guards are cache-aligned (their heads
	 * the workers') */
	if (posix_memalign(&p, RTE_CACHE_LINE_SIZE,
			   ZN_MAX_NFS * sizeof(*m->nf)) != 0)
		return -ENOMEM;
	m->nf = memset(p, 0, ZN_MAX_NFS * sizeof(*m->nf));
	return 0;
}

static void
zn_nf_recs_free(struct zn_mgr *m)
{
	free(m->nf);
	m->nf = NULL;
}

static const struct zn_subsys subsys = {
	.name = "nf_records", .order = ZN_SUBSYS_NF_RECS,
	.init = zn_nf_recs_make, .fini = zn_nf_recs_free,
};
ZN_SUBSYS_REGISTER(subsys)
