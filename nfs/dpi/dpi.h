/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The DPI classifier shared by the ZeroNF NF (dpi_nf.c) and its libpcap
 * mode (dpi_pcap.c): frames in, per-flow nDPI classification out.
 *
 * Flow semantics follow ndpiReader 4.2 (example/reader_util.c), so that
 * its `-w` output is the ground truth: a flow is (VLAN, IP protocol, the
 * two (address, port) endpoints in either order); its direction
 * "client to server" is that of its first packet; bytes are whole frames
 * as captured. nDPI sees a flow's packets until it names the protocol (or
 * until 80 TCP / 24 UDP packets, when it guesses), then no more.
 */
#ifndef ZN_DPI_H
#define ZN_DPI_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <zeronf/flow.h>

/* Link types handled (pcap DLT values). */
#define DPI_DLT_NULL 0
#define DPI_DLT_EN10MB 1
#define DPI_DLT_RAW 12
#define DPI_DLT_RAW_ALT 14 /* OpenBSD's DLT_RAW value */
#define DPI_LINKTYPE_RAW 101 /* the file header's value for DLT_RAW */
#define DPI_DLT_C_HDLC 104
#define DPI_DLT_LINUX_SLL 113
#define DPI_DLT_PPP 9
#define DPI_DLT_PPP_SERIAL 50
#define DPI_DLT_IPV4 228
#define DPI_DLT_IPV6 229

/* Why a frame is not part of any flow (counted). */
enum dpi_skip {
	DPI_OK = 0,
	DPI_SKIP_SHORT,     /* shorter than L2 + 28 bytes */
	DPI_SKIP_NOT_IP,    /* ARP, LLDP, ...: not a flow */
	DPI_SKIP_FRAGMENT,  /* IPv4 fragment other than the first */
	DPI_SKIP_TRUNCATED, /* IP header or datagram cut by the capture */
	DPI_SKIP_BAD_L2,    /* link type not handled */
	DPI_SKIP_MAX
};

/* A frame parsed the way ndpiReader does it. */
struct dpi_pkt {
	struct zn_flow_key key; /* addresses/ports as sent; vlan = innermost */
	const uint8_t *l3;      /* IP header handed to nDPI; also set for
				 * DPI_SKIP_FRAGMENT of a later IPv4 fragment */
	uint32_t l3_len;        /* caplen - L3 offset */
	uint8_t tunnel;         /* 0, or DPI_TUN_* it was found inside */
};

#define DPI_TUN_GTP 1
#define DPI_TUN_CAPWAP 2
#define DPI_TUN_TZSP 3

/** A big-endian 16-bit field (unaligned). */
static inline uint16_t
dpi_rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

/** Parse one captured frame. Returns DPI_OK or the reason it is no flow. */
enum dpi_skip dpi_parse(const uint8_t *frame, uint32_t caplen, int dlt,
			bool decode_tunnels, struct dpi_pkt *out);

/* A flow's traffic as ndpiReader counts it: the client is the sender of
 * its first packet, bytes are whole frames as captured. The first member
 * of the per-flow data in a BIDIR flow table (dpi, flowmon). */
struct dpi_counts {
	struct zn_flow_key first;   /* as its first packet was sent */
	uint64_t first_ms, last_ms;
	uint64_t pkts[2], bytes[2]; /* [0] client to server */
	uint8_t first_rev;          /* the table's reverse flag of packet 1 */
};

/**
 * Count a frame of @p len bytes at @p ts_ms for @p p's flow in @p ft (a
 * BIDIR table whose entries start with struct dpi_counts; a new entry is
 * created, zeroed by the table). @return the entry's counts, with
 * hit->created, and *dir (0 client to server, 1 back); NULL when the table
 * is full.
 */
struct dpi_counts *dpi_count(struct zn_ft *ft, const struct dpi_pkt *p,
			     uint32_t len, uint64_t ts_ms,
			     struct zn_ft_hit *hit, int *dir);

struct dpi;

struct dpi_opts {
	const char *proto_dir;  /* protos.txt, categories.txt, ... (or NULL) */
	uint32_t capacity;      /* flows at most */
	uint64_t idle_ms;       /* idle flows expire (0: never) */
	bool decode_tunnels;    /* ndpiReader -t */
	const char *name;       /* flow table name (unique per process) */
};

/* What dpi_process() found out about a packet's flow. */
struct dpi_verdict {
	bool classified_now;    /* this packet completed the classification */
	uint16_t master, app;   /* nDPI protocol ids once classified */
};

/** Create a classifier (needs the EAL: flows live in a zn_ft). NULL on
 *  error, with a message on stderr. */
struct dpi *dpi_create(const struct dpi_opts *o);
void dpi_free(struct dpi *d);

/**
 * Account one frame and classify its flow. @p ts_ms: packet time in ms.
 * Returns DPI_OK, a skip reason, or -ENOSPC (table full).
 */
int dpi_process(struct dpi *d, const uint8_t *frame, uint32_t caplen,
		int dlt, uint64_t ts_ms, struct dpi_verdict *v);

/** Give up on every flow still being classified (guessing), as ndpiReader
 *  does at the end of a capture. */
void dpi_finish(struct dpi *d);

/** Expire flows idle for longer than idle_ms at @p now_ms; budget bounds
 *  the work. Returns flows expired. */
int dpi_expire(struct dpi *d, uint64_t now_ms, uint32_t budget);

/** Write the flow report in ndpiReader's `-w` format. 0 or -errno. */
int dpi_report(struct dpi *d, FILE *out);

/** nDPI protocol id of a name, or -1. */
int dpi_proto_by_name(struct dpi *d, const char *name);

struct dpi_stats {
	uint64_t packets, flows, classified, guessed, expired, table_full;
	uint64_t skip[DPI_SKIP_MAX];
};
void dpi_get_stats(const struct dpi *d, struct dpi_stats *s);

#endif /* ZN_DPI_H */
