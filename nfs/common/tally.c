/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

#include <errno.h>
#include <string.h>

#include "tally.h"

int
tally_register(struct tally *t, struct zn_nf *nf, const char *const *names,
	       unsigned int n)
{
	if (n > TALLY_MAX)
		return -ENOSPC;
	memset(t, 0, sizeof(*t));
	for (unsigned int c = 0; c < n; c++) {
		t->idx[c] = zn_nf_counter_register(nf, names[c]);
		if (t->idx[c] < 0)
			return t->idx[c];
	}
	t->n = n;
	return 0;
}

void
tally_publish(struct tally *t, struct zn_nf *nf)
{
	for (unsigned int c = 0; c < t->n; c++)
		if (t->v[c] != t->shown[c]) {
			zn_nf_counter_add(nf, t->idx[c], t->v[c] - t->shown[c]);
			t->shown[c] = t->v[c];
		}
}
