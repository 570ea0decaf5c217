/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* What the NFs that look at frames the way capture tools do (dpi,
 * flowmon) share: their common options and each frame in one piece with
 * its time. */
#ifndef ZN_FRAMES_H
#define ZN_FRAMES_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <zeronf/zeronf.h>

struct frames {
	uint32_t capacity;  /* flows at most */
	uint64_t idle_ms;   /* 0: flows never expire */
	bool tunnels;       /* look inside GTP-U, TZSP, CAPWAP */
	bool capture_time;  /* time from RX timestamps (net_pcap) */
	int dlt;            /* link type of the frames */
	int ts_off;         /* timestamp dynfield, or -1 */
	uint64_t ts_flag;
	uint64_t last_ms;   /* latest packet time seen */
};

#define FRAMES_SHORTOPTS "c:i:Ttl:"
#define FRAMES_LONGOPTS                                                     \
	{ "capacity", required_argument, NULL, 'c' },                       \
	{ "idle-s", required_argument, NULL, 'i' },                         \
	{ "no-tunnels", no_argument, NULL, 'T' },                           \
	{ "capture-time", no_argument, NULL, 't' },                         \
	{ "dlt", required_argument, NULL, 'l' }

/* Defaults: Ethernet frames (link type 1, DLT_EN10MB), tunnels looked into, wall-clock time. */
#define FRAMES_INIT(cap, idle)                                              \
	{ .capacity = (cap), .idle_ms = (idle), .tunnels = true, .dlt = 1,  \
	  .ts_off = -1 }

/** An option of FRAMES_SHORTOPTS: 0, 1 (not one of them) or -EINVAL. */
int frames_option(struct frames *f, int c, const char *arg);
void frames_usage(FILE *o, const struct frames *defaults);
/** Look up the RX timestamp field (once the EAL is up). */
void frames_start(struct frames *f, const char *who);
/** Milliseconds of the wall clock. */
uint64_t frames_now_ms(void);
/** The now that idle expiry uses: packet time when replaying. */
uint64_t frames_expiry_ms(const struct frames *f);

/**
 * Frame @p m in one piece (copied if it has several segments, up to 64 KB)
 * and its time: the RX timestamp with capture_time, else @p now_ms.
 */
const uint8_t *frames_get(struct frames *f, struct rte_mbuf *m,
			  uint64_t now_ms, uint32_t *len, uint64_t *ts_ms);

#endif /* ZN_FRAMES_H */
