/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The firewall NF's state (fw_nf.h) and what changes its rules: read a
 * rule file, compile it, put it in force. */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fw_nf.h"

struct fw_nf fw;

int
fw_read_file(const char *path, char **text, size_t *len, char *err,
	  size_t errlen)
{
	FILE *f = fopen(path, "rb");
	size_t cap = 1 << 16, n = 0;
	char *b;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -errno;
	}
	b = malloc(cap);
	while (b != NULL) {
		size_t got = fread(b + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			char *nb = cap >= (1u << 28) ? NULL :
				   realloc(b, cap * 2);

			if (nb == NULL) {
				free(b);
				b = NULL;
				break;
			}
			b = nb;
			cap *= 2;
		}
	}
	if (b == NULL || ferror(f)) {
		snprintf(err, errlen, "%s: %s", path, b == NULL ?
			 "too large (256 MB at most) or out of memory" :
			 "read error");
		free(b);
		fclose(f);
		return b == NULL ? -EFBIG : -EIO;
	}
	fclose(f);
	*text = b;
	*len = n;
	return 0;
}

/* Rules from @p text made the NF's: compiled first; on any error the
 * rules in force stay. */
int
fw_install(struct zn_nf *nf, const char *text, size_t len, char *err,
	size_t errlen)
{
	struct fw_ruleset rs;
	struct fw_acl *a;
	uint64_t *h;
	int rc = fw_rules_parse(text, len, &rs, err, errlen);

	if (rc < 0)
		return rc;
	h = calloc(rs.n ? rs.n : 1, sizeof(*h));
	if (h == NULL) {
		fw_rules_free(&rs);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = fw_acl_build(&rs, fw.name_base, nf, &a, err, errlen);
	if (rc < 0) {
		free(h);
		fw_rules_free(&rs);
		return rc;
	}
	fw_acl_free(fw.acl);
	fw_rules_free(&fw.rules);
	free(fw.hits);
	fw.acl = a;
	fw.rules = rs;
	fw.hits = h;
	fw.policy_hits = 0;
	return 0;
}
