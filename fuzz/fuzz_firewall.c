/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The firewall NF's parts (nfs/firewall/) on any input: a rule file
 * (fw_rules.c; if it parses, compiled with rte_acl) and frames read as
 * the NF reads them (fw_pkt.c), tracked (fw_ct.c, a small table: full is
 * a path too) and matched against the rules. An input: a 16-bit
 * big-endian length and that many bytes of rules, then frames, each a
 * byte of options (bit 0: look through VLAN tags, bit 1: verify
 * checksums), a 16-bit big-endian length, the frame. The connection
 * table starts empty with each input, so an input replays alone. */
#include <string.h>

#include "../nfs/firewall/fw_acl.h"
#include "../nfs/firewall/fw_ct.h"
#include "../nfs/firewall/fw_pkt.h"
#include "../nfs/firewall/fw_rules.h"
#include "fuzz_eal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct fw_ct *ct;
static struct fw_acl *base;
static struct fw_ruleset base_rules;

static const char base_text[] =
	"-P DROP\n"
	"--ctstate INVALID -j DROP\n"
	"--ctstate ESTABLISHED,RELATED -j ACCEPT\n"
	"-p tcp --syn --dport 1:1023 -j ACCEPT\n"
	"-p udp -s 10.0.0.0/8 --sport 53 -j ACCEPT\n"
	"-p icmp --icmp-type 8/0 -j ACCEPT\n"
	"-p icmpv6 -d 2001:db8::/32 -j ACCEPT\n"
	"-6 --ctstate UNTRACKED -j ACCEPT\n";

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	fuzz_eal_init((*argv)[0]);
	if (fw_ct_create("fz_fwct", 256, NULL, &ct) < 0 ||
	    fw_rules_parse(base_text, sizeof(base_text) - 1, &base_rules, err,
			   sizeof(err)) < 0 ||
	    fw_acl_build(&base_rules, "fzb", NULL, &base, err,
			 sizeof(err)) < 0)
		return -1;
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fw_ruleset rs;
	struct fw_acl *acl = NULL;
	char err[256];
	uint32_t rl;
	uint64_t now = 1000000000ull;

	if (size < 2)
		return 0;
	rl = (uint32_t)data[0] << 8 | data[1];
	if (rl > size - 2)
		rl = (uint32_t)(size - 2);
	if (fw_rules_parse((const char *)data + 2, rl, &rs, err,
			   sizeof(err)) == 0) {
		if (rs.n <= 64) /* compiling is slow: small sets only */
			(void)fw_acl_build(&rs, "fz", NULL, &acl, err,
					   sizeof(err));
		fw_rules_free(&rs);
	} else if (strncmp(err, "line ", 5) != 0 &&
		   strcmp(err, "out of memory") != 0) {
		abort(); /* every refusal names its line */
	}
	data += 2 + rl;
	size -= 2 + rl;
	fw_ct_flush(ct);
	while (size >= 3) {
		uint32_t n = (uint32_t)data[1] << 8 | data[2];
		struct fw_pkt k;
		const struct fw_pkt *kp = &k;
		struct fw_ct_res res;
		uint32_t rule;

		if (n > size - 3)
			n = (uint32_t)(size - 3);
		if (fw_pkt_parse(data + 3, n, data[0] & 1, data[0] & 2, &k) ==
			    FW_IP && !k.frag) {
			fw_ct_in(ct, &k, now, &res);
			fw_acl_match(acl ? acl : base, &kp, &res.state, 1,
				     &rule);
			if (rule % 2 == 0)
				(void)fw_ct_confirm(ct, &res, now);
		}
		now += 1000000ull * data[0];
		data += 3 + n;
		size -= 3 + n;
	}
	fw_acl_free(acl);
	return 0;
}
