/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FW_ACL_H
#define ZN_FW_ACL_H

/*
 * A rule set compiled for lookups (fw_acl.c): one rte_acl context per IP
 * version, each rule with its priority (earlier wins) and its index + 1
 * as the result; a rule listing several connection states is one ACL
 * rule per state. Built on the control path (start, rules.load), read
 * on the packet path; an NF swaps a new one in between two bursts.
 */

#include <stddef.h>
#include <stdint.h>

#include "fw_pkt.h"
#include "fw_rules.h"

struct fw_acl;
struct zn_nf;

/**
 * Compile @p rs. Contexts are named @p name + "4"/"6" + a generation
 * (unique in the manager's memory) and, with @p nf, tracked for it
 * (freed by the manager if the NF dies). @return 0 or -errno, why in
 * @p err.
 */
int fw_acl_build(const struct fw_ruleset *rs, const char *name,
		 struct zn_nf *nf, struct fw_acl **out, char *err,
		 size_t errlen);

void fw_acl_free(struct fw_acl *a);
/** What fw_acl_free() frees but the rte_acl contexts, left to the
 *  manager, which is stopping. */
void fw_acl_abandon(struct fw_acl *a);

/**
 * The rule each of @p n packets matches: its index + 1 in the rule set,
 * or 0 (the policy). @p ct: each packet's connection state (one FW_CT_*
 * bit). Non-IP packets must not be passed.
 */
void fw_acl_match(const struct fw_acl *a, const struct fw_pkt *const *k,
		  const uint8_t *ct, uint32_t n, uint32_t *rule);

/** Rules compiled (after expansion by state), per IP version. */
void fw_acl_counts(const struct fw_acl *a, uint32_t *v4, uint32_t *v6);

#endif /* ZN_FW_ACL_H */
