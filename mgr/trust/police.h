/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_POLICE_H
#define ZN_POLICE_H

/* The trust police (police.c): what NFs rewrote written back, NFs past
 * --bad-desc-limit killed, every 50 ms with --validate. */

#include <stdbool.h>
#include <stdint.h>

struct zn_mgr;

/** Did the NF in slot @p slot hand back a bad descriptor (this
 *  registration)? Its ledger is then no word to act on (reclaim.c). */
bool zn_police_lied(struct zn_mgr *m, unsigned int slot);
/** Free rings of pools whose geometry was written back (an NF changed
 *  it), and waits for another process's ring operation given up. */
void zn_police_ring_stats(uint64_t *repairs, uint64_t *cut);

#endif /* ZN_POLICE_H */
