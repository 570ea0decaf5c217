/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_PRIVATE_HEAP_H
#define ZN_PRIVATE_HEAP_H

/* The manager's private DPDK memory (private_heap.c): an external rte_malloc
 * heap no NF maps, for what the workers read. Allocate from it with
 * socket id m->priv.socket. */

#include <stddef.h>

/** The heap (m->priv; private_heap.c, at start). */
struct zn_private_heap {
	int socket;      /* its socket id, for DPDK allocations */
	void *raw, *va;  /* its mapping, and the heap's memory in it */
	size_t len;
};

#endif /* ZN_PRIVATE_HEAP_H */
