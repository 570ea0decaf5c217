/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_DESC_H
#define ZN_DESC_H

/*
 * Descriptors that cannot lie (desc.c): what an NF hands back on its TX
 * ring is checked before a worker touches it. The maps live in the
 * manager's own memory: no NF can change what they say.
 */

#include <stdbool.h>
#include <stdint.h>

#include <rte_mbuf.h>

struct zn_mgr;
struct zn_worker;

/* One pool: where its buffers start (a bit per cache line of its memory)
 * and what a buffer of it looks like. */
struct zn_desc_pool {
	const struct rte_mempool *mp;
	uintptr_t lo, hi;   /* the pool's memory (all its chunks) */
	uint64_t *bits;     /* bit (p - lo) / 64: a buffer starts at p */
	uint16_t priv;      /* mbuf private area: buf_addr = mb + 128 + priv */
	uint16_t buf_len;
	uint64_t pg;        /* page size of the pool's memory */
	uint8_t pg_shift;
	uintptr_t pg_lo;    /* lo, down to a page */
	rte_iova_t *page_iova; /* IOVA of each page from pg_lo: buf_iova */
};

/** Build the maps of the shared pool and of every trust group's. */
int zn_desc_init(struct zn_mgr *m);
void zn_desc_fini(struct zn_mgr *m);

/**
 * Keep of @p pkts[0, n) (dequeued from slot @p slot's TX ring) only real
 * packets of the NF's own pool, in order; count the others as
 * bad_descriptor drops of the NF, never touching them. Returns how many
 * are kept.
 */
unsigned int zn_desc_filter(struct zn_worker *w, unsigned int slot,
			    struct rte_mbuf **pkts, unsigned int n);

/** Stop NFs past --bad-desc-limit (control thread). */
void zn_desc_police(struct zn_mgr *m);
/** Police every 50 ms on the control loop. */
int zn_desc_start(struct zn_mgr *m);

#endif /* ZN_DESC_H */
