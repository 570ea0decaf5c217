/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_FW_PKT_H
#define ZN_FW_PKT_H

/*
 * The firewall's view of a frame (fw_pkt.c): what its rules match and its
 * connection tracking keys on, read the way the Linux kernel reads it
 * before netfilter's filter hooks (ip_rcv / ipv6_rcv checks, the L4
 * protocol past IPv6 extension headers, conntrack's header checks), so
 * that the same rules give the same verdicts (docs/nfs/firewall.md).
 * No DPDK state: the fuzz target and the unit tests call it on bytes.
 */

#include <stdbool.h>
#include <stdint.h>

/* What fw_pkt_parse() found. */
enum fw_class {
	FW_IP = 0,      /* an IPv4 or IPv6 packet: filtered */
	FW_NOT_IP,      /* no IP (ARP, LLDP, ...): --non-ip decides */
	FW_BAD_IP,      /* dropped by the kernel before any hook: a runt,
			 * a bad IPv4 header (version, IHL, checksum,
			 * lengths), an IPv6 header it refuses */
};

/* Why conntrack finds the L4 header unusable (the packet is INVALID). */
enum fw_l4_err {
	FW_L4_OK = 0,
	FW_L4_SHORT,    /* header cut or its length field wrong */
	FW_L4_CSUM,     /* bad checksum (--checksum verify) */
	FW_L4_FLAGS,    /* a TCP flag combination conntrack refuses */
};

/* The TCP flags as in the header's 13th byte. */
#define FW_TCP_FIN 0x01
#define FW_TCP_SYN 0x02
#define FW_TCP_RST 0x04
#define FW_TCP_PSH 0x08
#define FW_TCP_ACK 0x10
#define FW_TCP_URG 0x20
#define FW_TCP_ECE 0x40
#define FW_TCP_CWR 0x80

/* A connection's address in one direction; IPv4 in the first 4 bytes.
 * A hash key: aligned for rte_hash_crc's 8-byte loads. */
struct fw_tuple {
	_Alignas(8) uint8_t src[16];
	uint8_t dst[16];
	uint16_t sport, dport; /* host order; ICMP: id, type << 8 | code */
	uint8_t proto;
	uint8_t family;        /* 4 or 6 */
	uint8_t pad[2];
};

struct fw_pkt {
	struct fw_tuple t;     /* as the packet goes */
	uint8_t family;        /* 4, 6 */
	uint8_t proto;         /* L4 protocol (past IPv6 extension headers) */
	uint8_t l4_err;        /* enum fw_l4_err */
	bool l4;               /* L4 fields read (ports, type, flags) */
	bool frag;             /* a fragment (not an atomic one) */
	bool frag_first;       /* ... its first */
	uint8_t tcp_flags;
	uint8_t icmp_type, icmp_code;
	bool icmp_error;       /* an ICMP(v6) error message */
	bool inner_ok;         /* its quoted packet read into @inner */
	uint32_t seq, ack;     /* TCP, host order */
	uint32_t l4_len;       /* bytes from the L4 header to the IP end */
	uint32_t payload;      /* TCP payload bytes */
	uint32_t l3_off, l4_off;
	struct fw_tuple inner; /* the quoted packet of an ICMP error */
};

/**
 * Read frame @p p of @p len bytes (Ethernet, with up to 2 VLAN tags
 * when @p vlan). @p verify_csum: check L4 checksums as conntrack does
 * (nf_conntrack_checksum=1); the IPv4 header checksum is always checked
 * (the kernel drops a bad one in ip_rcv).
 * @return enum fw_class; @p k filled for FW_IP.
 */
int fw_pkt_parse(const uint8_t *p, uint32_t len, bool vlan, bool verify_csum,
		 struct fw_pkt *k);

/** The tuple of the reply to @p t (addresses and ports swapped; an ICMP
 *  query's reply type). @return false: an ICMP type with no reply. */
bool fw_tuple_reply(const struct fw_tuple *t, struct fw_tuple *r);

/** An ICMP(v6) type that opens a query conntrack tracks (echo, ...). */
bool fw_icmp_is_query(uint8_t family, uint8_t type);

#endif /* ZN_FW_PKT_H */
