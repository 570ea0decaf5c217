/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FW_RULES_H
#define ZN_FW_RULES_H

/*
 * The firewall's rule files (fw_rules.c): ordered rules in iptables'
 * option syntax, one per line, the first that matches decides:
 *
 *     -P DROP
 *     --ctstate ESTABLISHED,RELATED -j ACCEPT
 *     -p tcp -s 10.0.0.0/8 --dport 80:443 --syn -j ACCEPT
 *     -p icmp --icmp-type echo-request -j ACCEPT
 *
 * docs/nfs/firewall.md has the whole grammar. Parsing only: no DPDK.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Connection states (--ctstate), one bit each. */
#define FW_CT_NEW 0x01
#define FW_CT_ESTABLISHED 0x02
#define FW_CT_RELATED 0x04
#define FW_CT_INVALID 0x08
#define FW_CT_UNTRACKED 0x10 /* IPv6 neighbour discovery, MLD */
#define FW_CT_ALL 0x1f

enum fw_verdict { FW_ACCEPT = 1, FW_DROP = 2 };

struct fw_rule {
	uint8_t family;          /* 0: IPv4 and IPv6; 4; 6 */
	bool has_proto;
	uint8_t proto;
	uint8_t src_len, dst_len; /* prefix lengths (0: any) */
	uint8_t src[16], dst[16];
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
	bool ports;              /* --sport or --dport given */
	int16_t icmp_type;       /* -1: any */
	int16_t icmp_code;       /* -1: any */
	uint8_t flags_mask, flags_cmp; /* --tcp-flags */
	uint8_t ct;              /* FW_CT_* bits; 0: any state */
	uint8_t verdict;         /* enum fw_verdict */
	uint32_t line;           /* in the file */
};

struct fw_ruleset {
	struct fw_rule *r;
	uint32_t n, cap;
	uint8_t policy;          /* enum fw_verdict; ACCEPT if no -P */
};

#define FW_RULES_MAX 1000000

/**
 * Parse rule text @p text of @p len bytes (need not end in NUL) into
 * @p rs (initialised here). Stops at the first bad line.
 * @return 0, or -EINVAL / -ENOMEM / -E2BIG with "line N: why" in @p err.
 */
int fw_rules_parse(const char *text, size_t len, struct fw_ruleset *rs,
		   char *err, size_t errlen);

void fw_rules_free(struct fw_ruleset *rs);

/** The name of a verdict ("ACCEPT"/"DROP"). */
const char *fw_verdict_name(uint8_t v);

#endif /* ZN_FW_RULES_H */
