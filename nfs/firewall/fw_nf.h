/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FW_NF_H
#define ZN_FW_NF_H

/* The firewall NF's state, shared by its packet path (firewall.c) and
 * its commands (fw_cmds.c); both run on the NF's one thread. */

#include <stddef.h>
#include <stdint.h>

#include "fw_acl.h"
#include "fw_ct.h"
#include "fw_rules.h"

struct zn_nf;

struct fw_nf {
	struct fw_ruleset rules; /* in force */
	struct fw_acl *acl;      /* ... compiled */
	uint64_t *hits;          /* packets each rule decided */
	uint64_t policy_hits;    /* ... the policy */
	struct fw_ct *ct;
	char name_base[16];      /* of the ACL contexts */
};

extern struct fw_nf fw;

/** @p path's contents (malloc'd, 256 MB at most). @return 0 or -errno,
 *  why in @p err. */
int fw_read_file(const char *path, char **text, size_t *len, char *err,
		 size_t errlen);

/** Rules from @p text made the ones in force: parsed and compiled first;
 *  on any error those in force stay. @return 0 or -errno, why in @p err. */
int fw_install(struct zn_nf *nf, const char *text, size_t len, char *err,
	       size_t errlen);

/** Serve rules.load, rules.list, ct.list, ct.stats, ct.flush. */
int fw_cmds_register(struct zn_nf *nf);

#endif /* ZN_FW_NF_H */
