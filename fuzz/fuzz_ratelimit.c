/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The ratelimit NF's configuration reader (nfs/ratelimit/rl_conf.c) on
 * any text; what parses is policed: each class's buckets take packets
 * of the sizes and at the times the input's tail says (the token
 * arithmetic's bounds: no overflow, tokens never above the burst). */
#include <stdlib.h>
#include <string.h>

#include "../nfs/ratelimit/rl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct rl_conf conf;
	char err[256], *text;
	size_t tl = size > 0 ? data[0] * 16u : 0;
	uint64_t now = 0;

	if (size < 1)
		return 0;
	if (tl > size - 1)
		tl = size - 1;
	text = malloc(tl + 1);
	if (text == NULL)
		return 0;
	memcpy(text, data + 1, tl);
	text[tl] = '\0';
	if (rl_conf_parse(text, &conf, err, sizeof(err)) < 0) {
		if (err[0] == '\0')
			abort(); /* every refusal says why */
		free(text);
		return 0;
	}
	free(text);
	data += 1 + tl;
	size -= 1 + tl;
	for (unsigned int i = 0; i <= conf.n; i++) {
		struct rl_class *c = &conf.c[i];

		rl_fill(&c->bucket, &c->agg, 0);
	}
	for (size_t k = 0; k + 4 <= size; k += 4) {
		struct rl_class *c = &conf.c[data[k] % (conf.n + 1)];
		uint64_t cost = c->agg.unit == RL_BITS ?
				8ull * (data[k + 1] << 3 | 1) : 1;

		now += (uint64_t)data[k + 2] << (data[k + 3] % 40);
		if (rl_has(&c->bucket, &c->agg, cost, now))
			rl_take(&c->bucket, &c->agg, cost);
		if (c->agg.rate != 0 &&
		    c->bucket.tokens > c->agg.burst * 1000000000ull)
			abort(); /* a bucket never holds more than its burst */
	}
	return 0;
}
