/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FLOWMON_H
#define ZN_FLOWMON_H

/*
 * flowmon's state and its parts: the NF (flowmon.c: options, the packet
 * loop, records out as JSON lines), IPFIX export (ipfix.c), counting a
 * frame into its flow (account.c), tunnel and link-layer decoders for
 * --decap (decap.c, pure functions) and IPv4 fragment tracking (frag.c).
 * One struct flowmon per NF, held through the NF's private pointer
 * (zn_nf_priv); only its packet thread touches it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <zeronf/zeronf.h>

#include "../common/frames.h"
#include "../common/tally.h"
#include "../dpi/dpi.h"

/* Why a record ended. */
enum fm_end { FM_END_ACTIVE, FM_END_IDLE, FM_END_FIN, FM_END_RST };

struct fm_rec {
	struct dpi_counts c;        /* first: see dpi_count() */
	uint8_t flags[2];           /* TCP flags seen, per direction */
};

/* NF counters (the tally's). */
enum {
	C_PACKETS, C_FLOWS, C_EXPORTED, C_ACTIVE, C_FULL, C_NOT_FLOW,
	C_IPFIX_MSGS, C_IPFIX_ERR, C_DECAP, C_FRAG_LOST, C_MAX
};

#define FM_MSG_MAX 1400 /* an IPFIX message: one UDP datagram */

struct fm_ipfix {
	int fd;                 /* -1: no export */
	uint32_t seq, odid;
	uint64_t last_tmpl;     /* packet time templates were last sent */
	uint8_t msg[FM_MSG_MAX];
	size_t msg_len;         /* 0: no message open */
	size_t set_off;         /* open data set's header, 0: none */
	uint16_t set_tmpl;
};

#define FRAG_SLOTS 64
#define FRAG_KEEP 2048 /* a first fragment up to this size waits */
#define FRAG_PIECES 48

struct fm_frag {
	uint64_t age;        /* 0: free */
	uint8_t addrs[8];    /* source, destination */
	uint16_t id;
	uint8_t proto;
	bool have_first;
	uint32_t total;      /* payload bytes; 0 until the last fragment */
	uint32_t got;        /* payload bytes of distinct fragments */
	uint16_t offs[FRAG_PIECES];
	uint16_t n_offs;
	/* the first fragment, as fm_account_ip() is to see it */
	int dlt;
	unsigned int depth;
	uint32_t plen, len;
	uint8_t data[FRAG_KEEP];
};

struct fm_frags {
	struct fm_frag slot[FRAG_SLOTS];
	uint64_t age;
	bool replaying; /* counting a kept datagram: see fm_frag_track */
};

#define DECAP_DEPTH 4  /* tunnels in tunnels, at most */
#define L2_BUF 16384   /* fm_strip_l2: frames up to this length */

struct flowmon {
	struct frames fr;
	const char *json_path, *ipfix_addr;
	FILE *json;
	bool decap;            /* --decap */
	struct zn_ft *ft;
	struct tally tally;
	struct fm_ipfix ipfix;
	struct fm_frags frags;
	uint8_t l2buf[L2_BUF]; /* fm_strip_l2's copy */
};

/* flowmon.c: a record out (JSON, IPFIX), counted as exported. */
void fm_export(struct flowmon *fm, const struct fm_rec *r, bool expired);

/* ipfix.c */
/** Connect the export socket to HOST:PORT. 0 or -errno. */
int fm_ipfix_open(struct flowmon *fm, const char *hostport);
void fm_ipfix_record(struct flowmon *fm, const struct fm_rec *r,
		     enum fm_end why);
/** Send the open message, if any. */
void fm_ipfix_flush(struct flowmon *fm);

/* account.c */
/** Count a frame (@p len bytes, link type @p dlt) into its flow; with
 *  --decap, what its tunnels carry too (@p depth: nesting). @p cut: an
 *  inner packet cut by its outer packet's fragmentation. */
void fm_account(struct flowmon *fm, const uint8_t *data, uint32_t len,
		int dlt, unsigned int depth, bool cut);
/** A frame past its link-layer extras: @p plen bytes to parse, @p len
 *  bytes to count. @p tracked: a first fragment whose datagram is whole. */
void fm_account_ip(struct flowmon *fm, const uint8_t *data, uint32_t plen,
		   uint32_t len, int dlt, unsigned int depth, bool tracked);

/* decap.c: decoders, no state */
#define DLT_IEEE802_11 105
#define DLT_IEEE802_11_RADIO 127
int fm_etype_dlt(uint16_t type);
const uint8_t *fm_tunnel_inner(const struct dpi_pkt *p, uint32_t *len,
			       int *dlt, bool *outer);
const uint8_t *fm_strip_l2(const uint8_t *data, uint32_t *len, uint8_t *buf);
const uint8_t *fm_uncut(const uint8_t *data, uint32_t *len, int dlt,
			uint8_t *buf, uint32_t size);

/* frag.c */
/** A fragment seen by fm_account_ip(): true if it was taken care of
 *  (held, or its datagram complete: then *@p done is the datagram's kept
 *  first fragment, for the caller to count and then give to
 *  fm_frag_done(); else NULL). */
bool fm_frag_track(struct flowmon *fm, const uint8_t *data, uint32_t plen,
		   uint32_t len, int dlt, unsigned int depth, enum dpi_skip rc,
		   const struct dpi_pkt *pkt, struct fm_frag **done);
/** Datagram @p f counted: its slot free again. */
void fm_frag_done(struct flowmon *fm, struct fm_frag *f);

#endif /* ZN_FLOWMON_H */
