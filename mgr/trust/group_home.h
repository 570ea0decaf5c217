/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_GROUP_HOME_H
#define ZN_GROUP_HOME_H

/* Where NF slots and their rings live (group_home.c): the EAL's memory for NFs
 * of no trust group, their group's file for the others. */

#include <stdbool.h>
#include <stdint.h>

struct zn_mgr;
struct zn_nf_slot;
struct zn_link;
struct zn_group;

/** Slot @p slot's home in group @p g (NULL: none), or NULL: no such
 *  slot. */
struct zn_nf_slot *zn_group_home_slot(const struct zn_mgr *m,
				const struct zn_group *g, unsigned int slot);
/** Move FREE slot @p slot to its home in @p g (the slot, its rings and
 *  their guards, the rings as made: the caller resets them). */
void zn_group_home_move(struct zn_mgr *m, unsigned int slot,
		  const struct zn_group *g);
/** Link @p l (free: nobody uses it) now joins NFs of group @p g (NULL:
 *  none): its ring and guard are that home's (the caller resets). */
void zn_group_home_link(struct zn_mgr *m, unsigned int l, const struct zn_group *g);

/* The copy of the manager's state in each group's file that the group's
 * NFs read (struct zn_group_home view), kept as zn_shm changes: */
/** Shutdown begins: zn_shm.mgr.stopping and every group's copy. */
void zn_group_home_view_stopping(struct zn_mgr *m);
/** Link @p l is now @p lk (zn_shm.links[l]), given to a pair of group
 *  @p g (NULL: none), or taken back (lk->used 0). */
void zn_group_home_view_link(struct zn_mgr *m, unsigned int l,
		       const struct zn_group *g, const struct zn_link *lk);

#endif /* ZN_GROUP_HOME_H */
