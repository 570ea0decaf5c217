/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* An NF's steering requests (zn_nf_flow_steer): exact rules an NF adds
 * for its flows, read from its slot, its tenant's bounds kept. */

#include <errno.h>
#include <string.h>

#include "fdir.h"
#include "../core/mgr.h"
#include "../tenant/tenant.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/shm/zn_shm.h"
#include "../nf/nf_rec.h"

/* An NF's steering request (zn_nf_flow_steer), read from its slot. */
int
zn_fdir_steer(struct zn_mgr *m, unsigned int slot)
{
	const struct zn_steer_req *rq = &zn_slot(m, slot)->steer;
	struct zn_steer_req req;
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
	struct zn_flow_key keys[2];
	unsigned int nk;
	char err[128];
	int rc = 0;

	/* A tenant's NF steers its tenant's packets, along its chains. */
	unsigned int tenant = zn_tenant_of_nf(m, slot);

	memcpy(&req, rq, sizeof(req)); /* validate one stable copy */
	if (req.key.ip_version != 4 && req.key.ip_version != 6)
		return -EINVAL;
	keys[0] = req.key;
	zn_flow_key_reverse(&req.key, &keys[1]);
	nk = (req.flags & ZN_STEER_F_BOTH) ? 2 : 1;
	if (req.op == ZN_STEER_DEL) {
		for (unsigned int i = 0; i < nk; i++)
			if (zn_fdir_flow_del(m, &keys[i], tenant) < 0)
				rc = -ENOENT;
		return rc;
	}
	if (req.op != ZN_STEER_ADD || req.n_steps == 0 ||
	    req.n_steps > ZN_MAX_CHAIN_STEPS)
		return -EINVAL;
	for (unsigned int i = 0; i < req.n_steps; i++)
		steps[i] = (struct zn_step){ .type = req.steps[i].type,
					   .id = req.steps[i].id };
	if (tenant != 0 &&
	    (rc = zn_tenant_steps_check(m, (int)tenant - 1, steps, req.n_steps,
				       err, sizeof(err))) < 0) {
		ZN_LOG(INFO, "NF %u: steering refused: %s", slot, err);
		return rc;
	}
	for (unsigned int i = 0; i < nk; i++) {
		rc = zn_fdir_flow_add(m, &keys[i], steps, req.n_steps, tenant,
				      (req.flags & ZN_STEER_F_KEEP) ?
				      ZN_FDIR_BY_KEPT : ZN_FDIR_BY_NF(slot),
				      false, err, sizeof(err));
		if (rc < 0) {
			ZN_LOG(INFO, "NF %u: steering refused: %s", slot, err);
			return rc;
		}
	}
	return 0;
}
