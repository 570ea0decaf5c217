/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* The ratelimit NF's state (rl_nf.h): its configuration read from its
 * file, and its table of per-flow, per-source or per-destination
 * buckets (an rte_hash over a private array). */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_common.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <zeronf/zeronf.h>

#include "rl_nf.h"

struct rl_nf rl;

int
rl_load(const char *path, struct rl_conf *conf, char *err, size_t errlen)
{
	FILE *f = fopen(path, "rb");
	char *text;
	long n;
	int rc;

	if (f == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		return -errno;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 ||
	    n > (1 << 20) || fseek(f, 0, SEEK_SET) != 0) {
		fclose(f);
		snprintf(err, errlen, "not a file of 1 MB at most");
		return -EFBIG;
	}
	text = malloc((size_t)n + 1);
	if (text == NULL || fread(text, 1, (size_t)n, f) != (size_t)n) {
		free(text);
		fclose(f);
		snprintf(err, errlen, "read error");
		return -EIO;
	}
	fclose(f);
	text[n] = '\0';
	rc = rl_conf_parse(text, conf, err, errlen);
	free(text);
	return rc;
}

int
rl_keys_create(const char *name, struct zn_nf *nf)
{
	rl.slot = calloc(rl.cap, sizeof(*rl.slot));
	rl.free_list = malloc(rl.cap * sizeof(*rl.free_list));
	if (rl.slot == NULL || rl.free_list == NULL)
		return -ENOMEM;
	for (uint32_t i = 0; i < rl.cap; i++)
		rl.free_list[i] = rl.cap - 1 - i;
	rl.n_free = rl.cap;
	rl.keys = rte_hash_create(&(struct rte_hash_parameters){
		.name = name, .entries = RTE_MAX(rl.cap, 64u),
		.key_len = sizeof(struct rl_key), .hash_func = rte_hash_crc,
		.socket_id = SOCKET_ID_ANY,
		.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE });
	if (rl.keys == NULL)
		return -ENOMEM;
	(void)zn_nf_obj_track(nf, ZN_NF_OBJ_HASH, name, rl.keys);
	return 0;
}

void
rl_keys_free(struct zn_nf *nf)
{
	if (rl.keys != NULL) {
		zn_nf_obj_untrack(nf, rl.keys);
		rte_hash_free(rl.keys);
	}
	rl.keys = NULL;
	free(rl.slot);
	free(rl.free_list);
	rl.slot = NULL;
	rl.free_list = NULL;
}

void
rl_keys_abandon(void)
{
	rl.keys = NULL;
	free(rl.slot);
	free(rl.free_list);
	rl.slot = NULL;
	rl.free_list = NULL;
}

void
rl_keys_forget_class(unsigned int cls)
{
	for (uint32_t i = 0; i < rl.cap; i++) {
		struct rl_key_slot *s = &rl.slot[i];

		if (!s->used || s->key.cls != cls)
			continue;
		rte_hash_del_key(rl.keys, &s->key);
		s->used = false;
		rl.free_list[rl.n_free++] = i;
		rl.in_use--;
	}
}

uint64_t
rl_refill_ns(const struct rl_spec *s)
{
	if (s->rate == 0)
		return 0;
	return (uint64_t)((unsigned __int128)s->burst * 1000000000ull /
			  s->rate);
}
