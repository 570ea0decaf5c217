/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_PRIVATE_HEAP_H
#define ZN_PRIVATE_HEAP_H

/* The manager's private DPDK memory (private_heap.c): an external rte_malloc
 * heap no NF maps, for what the workers read. Allocate from it with
 * socket id m->priv_socket. */

#include <stdbool.h>

struct zn_mgr;

/** Make the heap (after rte_eal_init, before anything allocates). */
int zn_private_heap_init(struct zn_mgr *m);
/** Remove it (after everything in it was freed). */
void zn_private_heap_fini(struct zn_mgr *m);

#endif /* ZN_PRIVATE_HEAP_H */
