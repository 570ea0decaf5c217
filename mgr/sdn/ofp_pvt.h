/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_OFP_PVT_H
#define ZN_OFP_PVT_H

/*
 * The OpenFlow endpoint (docs/sdn.md): the manager as an OpenFlow 1.3
 * switch to controllers and tools, over the OpenFlow table (oft.h).
 * ofp.c owns the connections (active ones it dials and redials, passive
 * ones it accepts), their framing, writing and closing, and the
 * configuration (of.endpoint); ofp_msgs.c answers each message, decoding
 * and encoding with libopenvswitch's codec (the OpenFlow wire format of
 * Open vSwitch's own ofproto: ofputil_decode_flow_mod, ...) and turning
 * matches and actions into the table's; ofp_session.c, below both, queues
 * a connection's output and derives the table's mode from who is
 * connected. Control thread only.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <openvswitch/ofp-connection.h>

#include "oft.h"

struct ofpbuf;
struct ofp_header;
struct zn_mgr;

#define OFP_MAX_CONTROLLERS 8
#define OFP_TARGET_LEN 128
#define OFP_TX_PAUSE (1u << 20)   /* queued output that stops reading */
#define OFP_TX_ASYNC_MAX (4u << 20) /* past it, async messages drop */

/* One OpenFlow connection. */
struct ofp_session {
	struct ofp_session *next;
	struct zn_ofp *ep;
	int fd;
	int target;           /* the controller it dials, or -1: accepted */
	bool connecting;      /* an active connection not yet established */
	bool hello;           /* versions agreed (1.3) */
	bool closing;         /* close once its output is written */
	bool broken;          /* close at the next reaping (ofp.c) */
	bool handshaking;     /* TLS: its handshake under way */
	bool tls_want_write;  /* TLS: the last call needs the socket
			       * writable (else readable) */
	void *tls;            /* SSL *, NULL: plain TCP */
	bool reading;         /* EPOLLIN armed (not paused by output) */
	uint32_t role;        /* OFPCR12_ROLE_* */
	struct ofputil_async_cfg async;
	uint16_t miss_send_len;
	uint16_t frag;        /* SET_CONFIG's flags, kept for GET_CONFIG */
	uint8_t *rx;          /* bytes read, not yet a whole message */
	size_t rx_len, rx_cap;
	uint8_t *tx;          /* to write: [tx_off, tx_len) */
	size_t tx_off, tx_len, tx_cap;
	uint64_t msgs_in, msgs_out, async_dropped;
	uint64_t since_ns;
	char peer[64];
};

/* A controller to dial. */
struct ofp_target {
	char spec[OFP_TARGET_LEN];   /* as configured: tcp: or ssl:HOST:PORT */
	bool tls;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	struct ofp_session *s;       /* its connection, NULL: none now */
	uint64_t next_dial_ns;
	char last_error[160];
};

struct zn_ofp {
	struct zn_mgr *m;
	bool configured;
	bool standalone;             /* fail mode */
	struct ofp_target target[OFP_MAX_CONTROLLERS];
	unsigned int n_targets;
	int listen_fd;
	bool listen_tls;
	char listen_spec[OFP_TARGET_LEN];
	void *tls_ctx;               /* SSL_CTX *: key, certificate, CA */
	struct ofp_session *sessions;
	bool have_generation;
	uint64_t generation;         /* the last master/slave request's */
	uint64_t dpid;
	uint64_t started_ns;
	bool mods_pending;           /* flow mods not yet committed */
	uint8_t link[256];           /* ports' links last seen: 1 up, 2 down */
};

/* ofp_session.c */
/** Close @p s at the next reaping (ofp.c's on_wake): after the callback
 *  that found it failed, which may be a handler running for it or a loop
 *  over the connections. */
void ofp_session_fail(struct ofp_session *s);
/** Queue @p n bytes on @p s (a failed allocation fails the session). */
void ofp_tx_put(struct ofp_session *s, const void *p, size_t n);
/** Queue @p msg (consumed) on @p s. */
void ofp_send(struct ofp_session *s, struct ofpbuf *msg);
/** Queue an error for request @p oh. */
void ofp_send_error(struct ofp_session *s, int ofperr,
		    const struct ofp_header *oh);
/** @p s takes async messages of type @p oam (enum
 *  ofputil_async_msg_type), for some reason. */
bool ofp_takes(const struct ofp_session *s, int oam);
/** Queue async message @p msg (consumed) on every connection that takes
 *  it for @p reason, but those whose output is past OFP_TX_ASYNC_MAX
 *  (counted in their async_dropped); written when ofp.c flushes.
 *  @return how many took it. */
unsigned int ofp_fan_out(struct zn_ofp *ep, struct ofpbuf *msg, int oam,
			 unsigned int reason);
/** Who is connected changed (hello, role, async config): the table's
 *  mode follows. */
void ofp_update_mode(struct zn_ofp *ep);
/** Flow mods applied since the last commit reach the workers now. */
void ofp_commit(struct zn_ofp *ep);

/* ofp_tls.c: the transport, plain or TLS. _ctx: a context of a private
 * key, its certificate and the CA that signs peers' (PEM files), 0 or
 * -errno (@p err); _start: TLS on @p s's socket, client or server;
 * _handshake: 1 done, -EAGAIN (again on the next event), -EPIPE (@p err).
 * _send, _recv: bytes, or 0 (recv: closed), -EAGAIN, -EPIPE; _more:
 * bytes TLS already decrypted wait (no event will say so). */
int ofp_tls_ctx(const char *key, const char *cert, const char *ca,
		void **out, char *err, size_t errlen);
void ofp_tls_ctx_free(void *ctx);
int ofp_tls_start(void *ctx, struct ofp_session *s, bool server);
void ofp_tls_free(struct ofp_session *s);
int ofp_tls_handshake(struct ofp_session *s, char *err, size_t errlen);
ssize_t ofp_io_send(struct ofp_session *s, const void *p, size_t n);
ssize_t ofp_io_recv(struct ofp_session *s, void *p, size_t n);
bool ofp_io_more(const struct ofp_session *s);

/* ofp_msgs.c */
/** Answer one whole message (8-byte aligned). 0, or -1: close the
 *  connection once its output is written. */
int ofp_handle(struct zn_ofp *ep, struct ofp_session *s,
	       const struct ofp_header *oh);
/** The HELLO a connection starts with. */
struct ofpbuf *ofp_hello(void);
/** PORT_STATUS for ports whose link changed since the last look (the
 *  first look records them). */
void ofp_watch_ports(struct zn_ofp *ep);
/** The table's async messages, encoded (ofp.c sends them). */
struct zn_oft_packet_in;
struct zn_oft_entry_info;
struct ofpbuf *ofp_encode_packet_in(const struct zn_oft_packet_in *pi);
struct ofpbuf *ofp_encode_flow_removed(const struct zn_oft_entry_info *e,
				       uint8_t reason);
/* The decoding half, with no manager (the fuzz target's too). */
struct match;
struct zn_oft_key;
struct zn_oft_mod;
/** @p mt as the table's value and mask (value & mask == value);
 *  OFPERR_OFPBMC_BAD_FIELD when it matches a field the table does not. */
int ofp_key_from_match(const struct match *mt, struct zn_oft_key *v,
		       struct zn_oft_key *k);
void ofp_match_from_key(const struct zn_oft_key *v,
			const struct zn_oft_key *k, struct match *mt);
/** A FLOW_MOD (type checked) as the table's mod, for an instance of @p
 *  n_ports ports. 0 or an enum ofperr. */
int ofp_flow_mod_decode(unsigned int n_ports, const struct ofp_header *oh,
			struct zn_oft_mod *mod);
/** A GROUP_MOD (type checked) as the table's. 0 or an enum ofperr. */
int ofp_group_mod_decode(unsigned int n_ports, const struct ofp_header *oh,
			 struct zn_oft_group_mod *gm);
/** A PACKET_OUT (type checked): its packet (in the message) or buffer,
 *  in_port, outputs. 0 or an enum ofperr. */
#define OFP_MAX_OUTS (ZN_MAX_CHAIN_STEPS + 1)
struct ofp_pout {
	uint32_t buffer_id, in_port;
	const void *data;
	size_t len;
	unsigned int n_out;
	struct zn_oft_output out[OFP_MAX_OUTS];
};
int ofp_packet_out_decode(unsigned int n_ports, const struct ofp_header *oh,
			  struct ofp_pout *po);
/** Quieten libopenvswitch's logging to errors (once). */
void ofp_codec_init(void);

#endif /* ZN_OFP_PVT_H */
