/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Flow tables on rte_hash. Keys are struct zn_flow_key (40 bytes), looked
 * up with the flow hash the packet already carries, so no key is hashed
 * twice. Extendable buckets: an add fails only when the table holds
 * `capacity` flows. Per-entry user data, last-use times and the hash each
 * key was added with live in arrays indexed by the key's position in
 * rte_hash's key store.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_malloc.h>
#include <rte_memzone.h>

#include <zeronf/flow.h>

#include "../common/zn_flow.h"
#include "../nf/nf_pvt.h"

struct zn_ft {
	struct rte_hash *h;
	const struct rte_memzone *mz; /* this struct and the arrays below */
	uint8_t *data;          /* data_size bytes per key position */
	uint64_t *last_seen;    /* per key position */
	uint32_t *hash;         /* per key position: the hash it was added
				 * with (a NIC's or ours), to delete it */
	uint32_t data_size;
	uint32_t slots;         /* key positions: rte_hash_max_key_id + 1 */
	uint32_t flags;
	uint64_t idle_timeout_ns;
	uint32_t expire_cursor;
	/* Keys in the table (the writer's count): rte_hash_count also counts
	 * deleted keys whose slots wait in the RCU defer queue, which 22.11
	 * reclaims only on later adds and deletes. */
	uint32_t n_keys;
};

/* BIDIR tables store the endpoint-sorted key. */
static inline const struct zn_flow_key *
canon(const struct zn_ft *ft, const struct zn_flow_key *key,
      struct zn_flow_key *tmp, bool *reverse)
{
	*reverse = false;
	if (!(ft->flags & ZN_FT_F_BIDIR) || !zn_flow_key_is_reversed(key))
		return key;
	zn_flow_key_reverse(key, tmp);
	*reverse = true;
	return tmp;
}

static int
ft_mz_name(const char *name, char *buf, size_t len)
{
	int n = snprintf(buf, len, "ZF_%s", name);

	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

struct zn_ft ZN_API *
zn_ft_create(const struct zn_ft_opts *opts)
{
	struct zn_ft_opts o = { 0 };
	struct rte_hash_parameters p = { 0 };
	const struct rte_memzone *mz;
	char mzname[RTE_MEMZONE_NAMESIZE];
	size_t slots, off_seen, off_hash, off_data;
	struct rte_hash *h;
	struct zn_ft *ft;
	int32_t max_id;

	if (opts == NULL || opts->sz == 0) {
		rte_errno = EINVAL;
		return NULL;
	}
	memcpy(&o, opts, RTE_MIN(opts->sz, sizeof(o)));
	if (o.name == NULL || o.capacity == 0 || o.capacity > (1u << 30)) {
		rte_errno = EINVAL;
		return NULL;
	}
	/* The struct and its arrays in one memzone named after the table,
	 * so that the manager can find and free the table of an NF that died
	 * (zn_nf_obj_track). Sized for rte_hash's key positions (at most
	 * entries + 1 with extendable buckets: rte_hash_max_key_id). */
	p.name = o.name;
	/* rte_hash needs at least 8 entries and keeps one bucket slot free */
	p.entries = RTE_MAX(o.capacity, 8u);
	p.key_len = sizeof(struct zn_flow_key);
	p.hash_func = NULL; /* always looked up with a precomputed hash */
	p.socket_id = o.socket;
	p.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
	if (o.flags & ZN_FT_F_CONCURRENT)
		p.extra_flag |= RTE_HASH_EXTRA_FLAGS_RW_CONCURRENCY_LF;
	h = rte_hash_create(&p);
	if (h == NULL)
		return NULL;
	max_id = rte_hash_max_key_id(h);
	if (max_id < 0 || ft_mz_name(o.name, mzname, sizeof(mzname)) < 0) {
		rte_hash_free(h);
		rte_errno = EINVAL;
		return NULL;
	}
	slots = (size_t)max_id + 1;
	off_seen = RTE_ALIGN_CEIL(sizeof(*ft), RTE_CACHE_LINE_SIZE);
	off_hash = off_seen + RTE_ALIGN_CEIL(slots * sizeof(uint64_t),
					     RTE_CACHE_LINE_SIZE);
	off_data = off_hash + RTE_ALIGN_CEIL(slots * sizeof(uint32_t),
					     RTE_CACHE_LINE_SIZE);
	mz = rte_memzone_reserve_aligned(mzname, off_data + slots * o.data_size,
					 o.socket, 0, RTE_CACHE_LINE_SIZE);
	if (mz == NULL) {
		int err = rte_errno == EEXIST ? EEXIST : ENOMEM;

		rte_hash_free(h); /* may set rte_errno */
		rte_errno = err;
		return NULL;
	}
	memset(mz->addr, 0, mz->len); /* memzones come unzeroed */
	ft = mz->addr;
	ft->h = h;
	ft->mz = mz;
	ft->last_seen = RTE_PTR_ADD(mz->addr, off_seen);
	ft->hash = RTE_PTR_ADD(mz->addr, off_hash);
	ft->data = o.data_size > 0 ? RTE_PTR_ADD(mz->addr, off_data) : NULL;
	ft->slots = (uint32_t)slots;
	ft->data_size = o.data_size;
	ft->flags = o.flags;
	ft->idle_timeout_ns = o.idle_timeout_ns;
	if (o.flags & ZN_FT_F_CONCURRENT) {
		/* Deleted slots go to a defer queue, freed once every reader
		 * reported a quiescent state. */
		struct rte_hash_rcu_config rcfg = {
			.v = o.rcu,
			.mode = RTE_HASH_QSBR_MODE_DQ,
		};

		if (o.rcu == NULL || rte_hash_rcu_qsbr_add(ft->h, &rcfg) != 0) {
			zn_ft_free(ft);
			rte_errno = EINVAL;
			return NULL;
		}
	} else if (zn_nf_self != NULL) {
		/* In an NF: left to the manager if the NF dies. Not the
		 * concurrent kind, whose defer queue holds a function of this
		 * process that the manager cannot call. */
		int rc = zn_nf_obj_track(zn_nf_self, ZN_NF_OBJ_FT, mzname, ft);

		if (rc < 0) {
			zn_ft_free(ft);
			rte_errno = -rc;
			return NULL;
		}
	}
	return ft;
}

void ZN_API
zn_ft_free(struct zn_ft *ft)
{
	if (ft == NULL)
		return;
	if (zn_nf_self != NULL)
		zn_nf_obj_untrack(zn_nf_self, ft);
	rte_hash_free(ft->h);
	rte_memzone_free(ft->mz);
}


static inline void
fill_hit(struct zn_ft *ft, int32_t pos, bool reverse, bool created,
	 uint64_t now, struct zn_ft_hit *hit)
{
	/* Refresh at 1/64 of the timeout's precision: a lookup then only
	 * reads the line, it does not dirty it for every other reader. */
	if (now != 0 && now - ft->last_seen[pos] > ft->idle_timeout_ns / 64)
		ft->last_seen[pos] = now;
	if (hit != NULL) {
		hit->index = pos;
		hit->reverse = reverse;
		hit->created = created;
		hit->data = ft->data ? ft->data + (size_t)pos * ft->data_size :
				       NULL;
	}
}

int ZN_API
zn_ft_lookup(struct zn_ft *ft, const struct zn_flow_key *key, uint32_t hash,
	     uint64_t now_ns, struct zn_ft_hit *hit)
{
	struct zn_flow_key tmp;
	bool rev;
	int32_t pos;

	key = canon(ft, key, &tmp, &rev);
	pos = rte_hash_lookup_with_hash(ft->h, key, hash);
	if (pos < 0)
		return -ENOENT;
	fill_hit(ft, pos, rev, false, now_ns, hit);
	return pos;
}

int ZN_API
zn_ft_lookup_burst(struct zn_ft *ft, const struct zn_flow_key **keys,
		   const uint32_t *hashes, unsigned int n, uint64_t now_ns,
		   struct zn_ft_hit *hits)
{
	struct zn_flow_key tmp[64];
	const void *k[64];
	int32_t pos[64];
	bool rev[64];
	int found = 0;

	if (n > 64)
		return -EINVAL;
	for (unsigned int i = 0; i < n; i++)
		k[i] = canon(ft, keys[i], &tmp[i], &rev[i]);
	rte_hash_lookup_with_hash_bulk(ft->h, k, (hash_sig_t *)(uintptr_t)hashes,
				       n, pos);
	for (unsigned int i = 0; i < n; i++) {
		if (pos[i] < 0) {
			hits[i] = (struct zn_ft_hit){ .index = -ENOENT };
			continue;
		}
		fill_hit(ft, pos[i], rev[i], false, now_ns, &hits[i]);
		found++;
	}
	return found;
}

int ZN_API
zn_ft_add(struct zn_ft *ft, const struct zn_flow_key *key, uint32_t hash,
	  uint64_t now_ns, struct zn_ft_hit *hit)
{
	struct zn_flow_key tmp;
	bool rev;
	int32_t pos;
	bool created = false;

	key = canon(ft, key, &tmp, &rev);
	pos = rte_hash_lookup_with_hash(ft->h, key, hash);
	if (pos < 0) {
		pos = rte_hash_add_key_with_hash(ft->h, key, hash);
		if (pos < 0)
			return pos == -ENOSPC ? -ENOSPC : pos;
		ft->hash[pos] = hash;
		if (ft->data != NULL)
			memset(ft->data + (size_t)pos * ft->data_size, 0,
			       ft->data_size);
		created = true;
		ft->n_keys++;
	}
	fill_hit(ft, pos, rev, created, now_ns, hit);
	return pos;
}

int ZN_API
zn_ft_del(struct zn_ft *ft, const struct zn_flow_key *key, uint32_t hash)
{
	struct zn_flow_key tmp;
	bool rev;
	int32_t pos;

	key = canon(ft, key, &tmp, &rev);
	/* With lock-free readers, rte_hash's RCU defer queue frees the slot
	 * once they are done with it. */
	pos = rte_hash_del_key_with_hash(ft->h, key, hash);
	if (pos < 0)
		return -ENOENT;
	ft->n_keys--;
	return 0;
}

int ZN_API
zn_ft_iterate(struct zn_ft *ft, uint32_t *cursor,
	      const struct zn_flow_key **key, void **data)
{
	const void *k;
	void *d;
	int32_t pos = rte_hash_iterate(ft->h, &k, &d, cursor);

	if (pos < 0)
		return -ENOENT;
	*key = k;
	if (data != NULL)
		*data = ft->data ? ft->data + (size_t)pos * ft->data_size : NULL;
	return pos;
}

int ZN_API
zn_ft_expire(struct zn_ft *ft, uint64_t now_ns, uint32_t budget,
	     void (*cb)(const struct zn_flow_key *key, void *data, void *arg),
	     void *arg)
{
	int removed = 0;

	if (ft->idle_timeout_ns == 0)
		return 0;
	while (budget-- > 0) {
		const void *k;
		void *d;
		int32_t pos = rte_hash_iterate(ft->h, &k, &d,
					       &ft->expire_cursor);
		struct zn_flow_key key;

		if (pos < 0) {
			ft->expire_cursor = 0; /* wrap: next call starts over */
			break;
		}
		if (ft->last_seen[pos] + ft->idle_timeout_ns > now_ns)
			continue;
		memcpy(&key, k, sizeof(key));
		if (cb != NULL)
			cb(&key, ft->data ? ft->data +
				       (size_t)pos * ft->data_size : NULL, arg);
		/* The stored key is canonical already. */
		if (rte_hash_del_key_with_hash(ft->h, &key, ft->hash[pos]) >= 0) {
			removed++;
			ft->n_keys--;
		}
	}
	return removed;
}

uint32_t ZN_API
zn_ft_count(const struct zn_ft *ft)
{
	return ft->n_keys;
}

uint64_t ZN_API
zn_ft_last_seen(const struct zn_ft *ft, int32_t index)
{
	if (index < 0 || (uint32_t)index >= ft->slots)
		return 0;
	return ft->last_seen[index];
}
