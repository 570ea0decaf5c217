/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_REGISTRY_H
#define ZN_REGISTRY_H

/*
 * The NF registry (registry.c, reclaim.c, registry_cmds.c): NF slots from
 * REGISTER to the reclaim of what a stopped or dead NF left, NF messages
 * (the msgq, woken by the kick socket), NF pidfds, and the commands about
 * NFs (nf.stop, nf.call). Control thread only. Its record of each slot,
 * which workers read, is nf_rec.h.
 */

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct zn_mgr;
struct zn_nf_slot;
struct rte_mbuf;

/** Handle messages and liveness now (also run after every wake-up). */
void zn_registry_poll(struct zn_mgr *m);
/** Ask NF @p slot to stop: it drains its packets and exits.
 *  0 or -ENOENT (no running NF there). */
int zn_registry_stop_nf(struct zn_mgr *m, unsigned int slot);
void zn_registry_stop_all(struct zn_mgr *m);
/** The slot of the starting or running NF named @p name, or -ENOENT. */
int zn_registry_find(const struct zn_mgr *m, const char *name);
/** NFs not yet reclaimed. */
unsigned int zn_registry_active(const struct zn_mgr *m);
/** Messages refused (no such slot or type), times the message ring's
 *  header was found written and reset, steer requests refused over
 *  --nf-steer-rate (registry_kick.c). */
void zn_registry_msg_stats(const struct zn_mgr *m, uint64_t *bad,
			   uint64_t *resets, uint64_t *steer_refused);
/** True while a process of an NF that left still runs. */
bool zn_registry_exiting(const struct zn_mgr *m);
const char *zn_nf_state_name(uint32_t state);

/** The process of the NF in @p slot, as the kernel told it at
 *  registration (registry_nf.c); 0: none. */
pid_t zn_registry_pid(const struct zn_mgr *m, unsigned int slot);
/** Are the NFs in slots @p a and @p b one process's (a bundle's)? The
 *  same process id and start time, as registration told them (a pid alone
 *  may be another process's by now). */
bool zn_registry_same_process(const struct zn_mgr *m, unsigned int a,
			      unsigned int b);
/** Send @p sig to the NF in @p slot through its pidfd. 0 or -errno. */
int zn_registry_kill(struct zn_mgr *m, unsigned int slot, int sig);

/* reclaim.c: what an NF that left holds, returned. */
/** Free the packets and DPDK objects NF @p slot left; its links too
 *  unless @p later_links (then zn_reclaim_nf_links, once every NF of a
 *  process gone with several is reclaimed: one's ledger may name the
 *  link into another, which must still be there to say how much of its
 *  burst went on it). @return packets freed. */
uint64_t zn_reclaim_nf(struct zn_mgr *m, unsigned int slot,
		       bool later_links);
uint64_t zn_reclaim_nf_links(struct zn_mgr *m, unsigned int slot);

#endif /* ZN_REGISTRY_H */
