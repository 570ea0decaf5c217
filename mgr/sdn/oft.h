/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_OFT_H
#define ZN_OFT_H

/*
 * The OpenFlow table (mgr/sdn/): the one flow table an SDN controller
 * programs through the agent (python/zeronf/sdn, docs/sdn.md), with
 * OpenFlow 1.3's semantics: entries of a match (value and mask over the
 * fields below), a priority and a cookie; add, modify and delete, strict
 * or not; idle and hard timeouts; per-entry counters; what matches nothing
 * drops. While the table is on (of.mode), it classifies what enters from
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
 * and packet-out: buffers, the event queue, injection), oft_cmds.c (the
 * of.* commands, JSON).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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

/** An entry's actions: a verdict, and its chain or packet-in length. */
struct zn_oft_action {
	uint8_t verdict;  /* enum zn_oft_verdict */
	uint16_t max_len; /* CONTROLLER: bytes sent (ZN_OFPCML_NO_BUFFER:
			   * the whole packet, not buffered) */
	uint16_t n_steps; /* CHAIN */
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
	uint32_t buffer_id; /* the packet to apply it to (oft_io.c) */
	struct zn_oft_action act;
};

/** An OpenFlow error (type and code: os-ken's ofproto_v1_3 names, e.g.
 *  "OFPET_FLOW_MOD_FAILED", "OFPFMFC_OVERLAP") and why. */
struct zn_oft_err {
	const char *type, *code;
	char msg[160];
};

/** Apply @p mod. 0, or -errno with @p e set. Entries a delete removed
 *  with SEND_FLOW_REM queue a flow-removed event. Changes reach the
 *  workers at zn_oft_commit(). */
int zn_oft_flow_mod(struct zn_mgr *m, const struct zn_oft_mod *mod,
		    struct zn_oft_err *e);
/** Publish what flow mods since the last commit changed and free what
 *  they removed once no worker can see it (a batch's end). */
void zn_oft_commit(struct zn_mgr *m);

/** Entries matching a request's filter (OFPMP_FLOW / AGGREGATE): a
 *  non-strict match (@p strict: identical match and @p priority),
 *  out_port, cookie. @p fn gets each; @return how many. */
struct zn_oft_entry;
struct zn_oft_filter {
	struct zn_oft_key value, mask;
	bool strict;
	uint16_t priority;
	uint32_t out_port;
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
};
void zn_oft_table_stats(struct zn_mgr *m, struct zn_oft_table_stats *s);

/** The table's mode: @p on: it classifies port ingress (else the flow
 *  director does, entries kept); @p controller: a controller is connected
 *  (else packet-ins are dropped, counted). */
void zn_oft_set_mode(struct zn_mgr *m, bool on, bool controller);
void zn_oft_get_mode(struct zn_mgr *m, bool *on, bool *controller);

/* oft.c: the event queue (packet-in, flow-removed) the agent reads with
 * of.events. */
/** Queue @p ev (owned). Past the queue's bound it is dropped, counted. */
void zn_oft_event_push(struct zn_mgr *m, json_t *ev);
/** Up to @p max queued events, oldest first (a new array, maybe empty). */
json_t *zn_oft_events_take(struct zn_mgr *m, unsigned int max);
bool zn_oft_events_pending(struct zn_mgr *m);
uint64_t zn_oft_events_lost(struct zn_mgr *m);

/* oft_io.c: packet-out. */
/** One output of a packet-out: a chain (or NORMAL, TABLE, a port list). */
struct zn_oft_output {
	uint32_t port; /* ZN_OFPP_* reserved port, or 0: `act` */
	struct zn_oft_action act;
};
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
