/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_OFT_H
#define ZN_OFT_H

/*
 * The OpenFlow table (mgr/sdn/): the one flow table an SDN controller
 * programs through the OpenFlow endpoint (ofp_pvt.h, docs/sdn.md), with
 * OpenFlow 1.3's semantics: entries of a match (value and mask over the
 * fields below), a priority and a cookie; add, modify and delete, strict
 * or not; idle and hard timeouts; per-entry counters; what matches nothing
 * drops. While the table is on (the endpoint's mode, ofp_session.c), it
 * classifies what enters from
 * ports in place of the flow director, whose pipeline is OpenFlow's
 * NORMAL port: an entry may hand its packets to it.
 *
 * Classification is a tuple space search, as Open vSwitch's classifier
 * (lib/classifier.c): entries with the same mask form a subtable, every
 * subtable's entries live in one lock-free rte_hash keyed by (subtable,
 * masked key), and a packet is looked up in each subtable in order of the
 * subtable's highest priority, stopping once no later subtable can beat
 * what it found. Adding an entry is one hash insert (no rebuild, unlike
 * rte_acl, whose compile time grows with the rule set: a controller
 * adding flows one by one would pay it each time).
 *
 * Files: oft.c (entries, flow_mod semantics, timeouts, counters; control
 * thread), oft_hot.c (the workers' lookup and punt), oft_io.c (packet-in
 * and packet-out: buffers, injection), oft_cmds.c and oft_json.c (the
 * of.* commands, JSON); the OpenFlow endpoint over it: ofp_pvt.h.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include <zeronf/step.h>

struct zn_mgr;
struct zn_worker;
struct zn_route;
struct rte_mbuf;

/* What a match can name of a packet, in one 64-byte key: numbers in host
 * order, addresses as bytes (IPv4 in the first 4). ARP's opcode and
 * addresses share ip_proto and ip_src/ip_dst (as Open vSwitch's nw_*),
 * ICMP's type and code l4_src/l4_dst: each field's prerequisite (an
 * eth_type, an ip_proto) tells them apart. */
struct zn_oft_key {
	uint32_t in_port;   /* OpenFlow port: ZeroNF port + 1 */
	uint16_t eth_type;  /* after one VLAN tag */
	uint16_t vlan_vid;  /* OFPVID_PRESENT (0x1000) | VID; 0: untagged */
	uint8_t eth_dst[6];
	uint8_t eth_src[6];
	uint8_t ip_proto;   /* ARP: the opcode's low byte */
	uint8_t sub;        /* the subtable (in hash keys only; 0 in masks) */
	uint16_t tcp_flags; /* 12 bits */
	uint16_t l4_src;    /* TCP/UDP/SCTP port; ICMP type */
	uint16_t l4_dst;    /* port; ICMP code */
	uint32_t pad;
	uint8_t ip_src[16];
	uint8_t ip_dst[16];
} __attribute__((aligned(8)));
_Static_assert(sizeof(struct zn_oft_key) == 64, "a key is 8 words");

#define ZN_OFT_KEY_WORDS (sizeof(struct zn_oft_key) / 8)

/** Word @p i of a key (masks are applied a word at a time; memcpy: no
 *  aliasing of the struct through another type). */
static inline uint64_t
zn_oft_key_word(const struct zn_oft_key *k, unsigned int i)
{
	uint64_t w;

	memcpy(&w, (const char *)k + 8 * i, sizeof(w));
	return w;
}

static inline void
zn_oft_key_set_word(struct zn_oft_key *k, unsigned int i, uint64_t w)
{
	memcpy((char *)k + 8 * i, &w, sizeof(w));
}

/* What an entry does with its packets. */
enum zn_oft_verdict {
	ZN_OFT_CHAIN = 0,  /* a ZeroNF chain: services, then a port or not */
	ZN_OFT_DROP,       /* no action */
	ZN_OFT_CONTROLLER, /* output:CONTROLLER: a packet-in */
	ZN_OFT_NORMAL,     /* output:NORMAL: the flow director's pipeline */
	ZN_OFT_GROUP,      /* a group (select: one bucket's chain by the
			    * packet's symmetric flow hash) */
};

/* OpenFlow 1.3's numbers the table keeps (ofp_flow_mod_command,
 * ofp_flow_mod_flags, ofp_flow_removed_reason, ports). */
enum { ZN_OFPFC_ADD, ZN_OFPFC_MODIFY, ZN_OFPFC_MODIFY_STRICT,
       ZN_OFPFC_DELETE, ZN_OFPFC_DELETE_STRICT };
#define ZN_OFPFF_SEND_FLOW_REM 0x1
#define ZN_OFPFF_CHECK_OVERLAP 0x2
#define ZN_OFPFF_RESET_COUNTS 0x4
#define ZN_OFPFF_NO_PKT_COUNTS 0x8
#define ZN_OFPFF_NO_BYT_COUNTS 0x10
enum { ZN_OFPRR_IDLE_TIMEOUT, ZN_OFPRR_HARD_TIMEOUT, ZN_OFPRR_DELETE };
#define ZN_OFPP_MAX 0xffffff00u
#define ZN_OFPP_IN_PORT 0xfffffff8u
#define ZN_OFPP_TABLE 0xfffffff9u
#define ZN_OFPP_NORMAL 0xfffffffau
#define ZN_OFPP_FLOOD 0xfffffffbu
#define ZN_OFPP_ALL 0xfffffffcu
#define ZN_OFPP_CONTROLLER 0xfffffffdu
#define ZN_OFPP_ANY 0xffffffffu
#define ZN_OFPCML_NO_BUFFER 0xffff
#define ZN_OFP_NO_BUFFER 0xffffffffu
/* ZeroNF service S as an OpenFlow output port (docs/sdn.md). */
#define ZN_OFT_SERVICE_PORT(s) (0xf000u + (s)) /* below 0xff00: ovs-ofctl takes it */

/** An entry's actions: a verdict, and its chain, group or packet-in
 *  length. */
struct zn_oft_action {
	uint8_t verdict;  /* enum zn_oft_verdict */
	uint16_t max_len; /* CONTROLLER: bytes sent (ZN_OFPCML_NO_BUFFER:
			   * the whole packet, not buffered) */
	uint16_t n_steps; /* CHAIN */
	uint32_t group_id; /* GROUP: OpenFlow's group id */
	struct zn_step steps[ZN_MAX_CHAIN_STEPS];
};

/** One FLOW_MOD (OpenFlow 1.3 section 7.3.4.1). */
struct zn_oft_mod {
	uint8_t command;  /* ZN_OFPFC_* */
	struct zn_oft_key value, mask; /* value & mask == value */
	uint16_t priority;
	uint16_t idle_timeout, hard_timeout; /* s, 0: none */
	uint16_t flags;   /* ZN_OFPFF_* */
	uint64_t cookie, cookie_mask;
	uint32_t out_port; /* delete filter; ZN_OFPP_ANY: none */
	bool by_group;     /* delete filter: entries to group out_group */
	uint32_t out_group;
	uint32_t buffer_id; /* the packet to apply it to (oft_io.c) */
	struct zn_oft_action act;
};

/** An OpenFlow error (type and code: os-ken's ofproto_v1_3 names, e.g.
 *  "OFPET_FLOW_MOD_FAILED", "OFPFMFC_OVERLAP") and why. */
struct zn_oft_err {
	const char *type, *code;
	char msg[160];
};

/** Set @p e (@p msg may be e->msg itself: kept as it is). @return @p rc. */
static inline int
zn_oft_err_set(struct zn_oft_err *e, const char *type, const char *code,
	       int rc, const char *msg)
{
	e->type = type;
	e->code = code;
	if (msg != e->msg)
		snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return rc;
}

/** Apply @p mod to the entries (its buffer_id aside). 0, or -errno with
 *  @p e set. Entries a delete removed with SEND_FLOW_REM are told to the
 *  listener. Changes reach the workers at zn_oft_commit(). */
int zn_oft_flow_mod(struct zn_mgr *m, const struct zn_oft_mod *mod,
		    struct zn_oft_err *e);
/** Publish what flow mods since the last commit changed and free what
 *  they removed once no worker can see it (a batch's end). */
void zn_oft_commit(struct zn_mgr *m);

/** Entries matching a request's filter (OFPMP_FLOW / AGGREGATE): a
 *  non-strict match (@p strict: identical match and @p priority),
 *  out_port, out_group, cookie. @p fn gets each; @return how many. */
struct zn_oft_entry;
struct zn_oft_filter {
	struct zn_oft_key value, mask;
	bool strict;
	uint16_t priority;
	uint32_t out_port;
	bool by_group;      /* only entries to group out_group */
	uint32_t out_group;
	uint64_t cookie, cookie_mask;
};
typedef void zn_oft_entry_fn(struct zn_mgr *m, const struct zn_oft_entry *e,
			     void *arg);
unsigned int zn_oft_select(struct zn_mgr *m, const struct zn_oft_filter *f,
			   zn_oft_entry_fn *fn, void *arg);

/** What an entry reports (flow stats, flow-removed). */
struct zn_oft_entry_info {
	struct zn_oft_key value, mask;
	uint16_t priority, idle_timeout, hard_timeout, flags;
	uint64_t cookie;
	uint64_t packets, bytes;
	uint64_t duration_ns;
	struct zn_oft_action act;
};
void zn_oft_entry_info(struct zn_mgr *m, const struct zn_oft_entry *e,
		       struct zn_oft_entry_info *out);

struct zn_oft_table_stats {
	uint32_t active, capacity, subtables;
	uint64_t lookups, matched;
	uint64_t punted, punt_drops, no_match_drops;
	uint64_t packet_outs; /* copies sent, one per output */
};
void zn_oft_table_stats(struct zn_mgr *m, struct zn_oft_table_stats *s);

/** The table's mode: @p on: it classifies port ingress (else the flow
 *  director does, entries kept); @p controller: a controller is connected
 *  (else packet-ins are dropped, counted). */
void zn_oft_set_mode(struct zn_mgr *m, bool on, bool controller);
void zn_oft_get_mode(struct zn_mgr *m, bool *on, bool *controller);

/* oft.c, oft_io.c: what the table tells the OpenFlow endpoint
 * (ofp_pvt.h), as it happens: a packet for the controller, an entry
 * removed with SEND_FLOW_REM. */
struct zn_oft_packet_in {
	const uint8_t *data;
	uint32_t len;       /* bytes of it sent */
	uint32_t total_len; /* the packet's */
	uint32_t buffer_id; /* ZN_OFP_NO_BUFFER: not kept */
	uint32_t in_port;   /* OpenFlow port */
	uint8_t reason;     /* OFPR_NO_MATCH (0), OFPR_ACTION (1) */
	uint64_t cookie;    /* the entry's; all ones: none */
};
struct zn_oft_listener {
	/* true: some connection took it (false: counted as a punt drop) */
	bool (*packet_in)(void *arg, const struct zn_oft_packet_in *pi);
	void (*flow_removed)(void *arg, const struct zn_oft_entry_info *e,
			     uint8_t reason);
	void *arg;
};
/** Tell @p l (NULL: no one; packet-ins then drop) from now on. */
void zn_oft_set_listener(struct zn_mgr *m, const struct zn_oft_listener *l);

/* oft_io.c: packet-out. */
/** One output of a packet-out: a chain (or NORMAL, TABLE, a port list). */
struct zn_oft_output {
	uint32_t port; /* ZN_OFPP_* reserved port, or 0: `act` */
	struct zn_oft_action act;
};
/* Groups (oft_group.c; OpenFlow 1.3 section 5.6): select groups, whose
 * buckets are chains with weights, each flow's packets (both directions)
 * to one bucket by the flow's symmetric hash over 256 slots shared out by
 * weight, as a service's replicas are (mgr/flow/lb.h); indirect groups
 * (one bucket). Flow entries name them with a GROUP action. */
#define ZN_OFT_MAX_GROUPS 255
#define ZN_OFT_GROUP_BUCKETS 32
enum { ZN_OFPGC_ADD, ZN_OFPGC_MODIFY, ZN_OFPGC_DELETE };
enum { ZN_OFPGT_ALL, ZN_OFPGT_SELECT, ZN_OFPGT_INDIRECT, ZN_OFPGT_FF };
#define ZN_OFPG_MAX 0xffffff00u
#define ZN_OFPG_ALL 0xfffffffcu
#define ZN_OFPG_ANY 0xffffffffu
enum { ZN_OFPRR_GROUP_DELETE = 3 };

struct zn_oft_bucket {
	uint16_t weight;             /* select: its share; 0: none */
	struct zn_oft_action act;    /* a CHAIN */
};
struct zn_oft_group_mod {
	uint16_t command;            /* ZN_OFPGC_* */
	uint8_t type;                /* ZN_OFPGT_* */
	uint32_t group_id;
	unsigned int n_buckets;
	struct zn_oft_bucket bucket[ZN_OFT_GROUP_BUCKETS];
};
/** Add, modify or delete a group (delete: ZN_OFPG_ALL for every one;
 *  the flow entries that use a group deleted go with it, reason
 *  GROUP_DELETE). 0 or -errno with @p e set (OFPET_GROUP_MOD_FAILED...).
 *  In force when it returns. */
int zn_oft_group_mod(struct zn_mgr *m, const struct zn_oft_group_mod *gm,
		     struct zn_oft_err *e);
/** What a group reports (group statistics and description). */
struct zn_oft_group_info {
	uint32_t group_id;
	uint8_t type;
	unsigned int n_buckets;
	struct zn_oft_bucket bucket[ZN_OFT_GROUP_BUCKETS];
	uint32_t ref_count;          /* flow entries that use it */
	uint64_t packets, bytes;
	uint64_t bucket_packets[ZN_OFT_GROUP_BUCKETS];
	uint64_t bucket_bytes[ZN_OFT_GROUP_BUCKETS];
	uint64_t duration_ns;
};
/** @p fn for group @p group_id (ZN_OFPG_ALL: each, by id). @return how
 *  many. */
unsigned int zn_oft_groups(struct zn_mgr *m, uint32_t group_id,
			   void (*fn)(const struct zn_oft_group_info *g,
				      void *arg),
			   void *arg);

/** zn_oft_flow_mod, and for an add or modify with a buffer_id, that
 *  packet sent through the table as changed (committed first), as
 *  OpenFlow says. What FLOW_MODs from anywhere go through. */
int zn_oft_mod_apply(struct zn_mgr *m, const struct zn_oft_mod *mod,
		     struct zn_oft_err *e);
/** Send a packet (@p data of @p len bytes, or buffer @p buffer_id) from
 *  OpenFlow port @p in_port (ZN_OFPP_ANY with a buffer: the port it came
 *  in from) to each of @p outs. 0 or -errno (@p e). */
int zn_oft_packet_out(struct zn_mgr *m, uint32_t buffer_id, uint32_t in_port,
		      const uint8_t *data, size_t len,
		      const struct zn_oft_output *outs, unsigned int n_outs,
		      struct zn_oft_err *e);

/* oft_json.c: matches, actions and cookies as JSON, both ways. */
/** A match object (OXM field names, "value/mask") into @p value and
 *  @p mask. 0; -ENOENT: a field not matched here; -EPROTO: a field
 *  without its prerequisite; -EINVAL: a bad value (each said in @p err). */
int zn_oft_match_parse(json_t *o, struct zn_oft_key *value,
		       struct zn_oft_key *mask, char *err, size_t errlen);
json_t *zn_oft_match_json(const struct zn_oft_key *value,
			  const struct zn_oft_key *mask);
/** An actions object ({type: chain|controller|normal|drop|flood|all|
 *  in_port|table, ...}) into @p a; *@p port: the reserved port it names
 *  (ZN_OFPP_*: normal, flood, ...), else 0. 0 or -EINVAL (@p err). */
int zn_oft_action_parse(json_t *o, struct zn_oft_action *a, uint32_t *port,
			char *err, size_t errlen);
json_t *zn_oft_action_json(const struct zn_oft_action *a);
/** A 64-bit number: an integer >= 0 or a string strtoull reads ("0x..");
 *  @p j NULL: @p dflt. 0 or -EINVAL. */
int zn_oft_json_u64(json_t *j, uint64_t dflt, uint64_t *out);
/** "0x..." (JSON's integers are signed 64-bit). */
json_t *zn_oft_cookie_json(uint64_t cookie);
/** An entry as of.flows and the flow-removed event show it: {match,
 *  priority, cookie, idle_timeout, hard_timeout, flags, packets, bytes,
 *  duration_ns, actions}. */
json_t *zn_oft_entry_json(const struct zn_oft_entry_info *in);

#endif /* ZN_OFT_H */
