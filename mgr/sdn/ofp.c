/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow endpoint's connections (ofp_pvt.h): the controllers it
 * dials (redialled every second while configured), the connections it
 * accepts (tools, controllers that connect to switches), framing and
 * output, the of.endpoint command, and the table's mode, which follows
 * who is connected (OpenFlow 1.3 section 6.3.6, fail modes):
 *   - configured, a controller connected, or none named, or fail-secure:
 *     the table classifies; else (fail-standalone with every controller
 *     gone) the flow director does, as OpenFlow's NORMAL;
 *   - packet-ins go while some connection takes them (its async config),
 *     else they drop as sdn_punt, counted.
 * Output is queued per connection and written as the socket takes it;
 * past OFP_TX_PAUSE queued, reading stops until it drains (a controller
 * that does not read its replies slows itself only), past
 * OFP_TX_ASYNC_MAX async messages (packet-ins) drop, counted.
 *
 * Long: a connection's life (dial, accept, read, frame, write, close) and
 * the configuration that makes and ends them are one state machine.
 */

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <openvswitch/ofp-errors.h>
#include <openvswitch/ofp-msgs.h>
#include <openvswitch/ofpbuf.h>
#include <openflow/openflow-1.2.h>

#include "oft.h"
#include "ofp_pvt.h"
#include "../core/cmd.h"
#include "../core/loop.h"
#include "../core/mgr.h"
#include "../core/subsys.h"
#include "../../lib/common/zn_util.h"

#define REDIAL_NS 1000000000ULL
#define READ_MAX (1u << 20) /* bytes read per wake-up, per connection */
#define MSG_MAX 65535

static void session_close(struct zn_ofp *ep, struct ofp_session *s);
static void session_flush(struct zn_ofp *ep, struct ofp_session *s);

/* Write every connection's queued output (async messages: a controller
 * waits for packet-ins). */
static void
flush_all(struct zn_ofp *ep)
{
	for (struct ofp_session *s = ep->sessions; s != NULL; s = s->next)
		if (s->tx_len > s->tx_off)
			session_flush(ep, s);
}

/* ---- the table's events ---- */

static bool
on_packet_in(void *arg, const struct zn_oft_packet_in *pi)
{
	struct zn_ofp *ep = arg;
	unsigned int n = ofp_fan_out(ep, ofp_encode_packet_in(pi),
				     OAM_PACKET_IN, pi->reason);

	flush_all(ep);
	return n > 0;
}

static void
on_flow_removed(void *arg, const struct zn_oft_entry_info *e, uint8_t reason)
{
	struct zn_ofp *ep = arg;

	ofp_fan_out(ep, ofp_encode_flow_removed(e, reason), OAM_FLOW_REMOVED,
		    reason);
	flush_all(ep);
}

/* ---- connections ---- */

static void
set_events(struct zn_ofp *ep, struct ofp_session *s)
{
	uint32_t ev = 0;

	if (s->handshaking) { /* what the TLS handshake waits for */
		s->reading = false;
		zn_loop_rearm(ep->m->loop, s->fd,
			      s->tls_want_write ? EPOLLOUT : EPOLLIN);
		return;
	}
	s->reading = !s->connecting && !s->closing &&
		     s->tx_len - s->tx_off < OFP_TX_PAUSE;
	if (s->reading)
		ev |= EPOLLIN;
	if (s->connecting || s->tx_len > s->tx_off ||
	    (s->tls != NULL && s->tls_want_write))
		ev |= EPOLLOUT;
	zn_loop_rearm(ep->m->loop, s->fd, ev);
}

/* Write what the socket takes. */
static void
session_flush(struct zn_ofp *ep, struct ofp_session *s)
{
	bool was_reading = s->reading, had_out = s->tx_len > s->tx_off;

	if (s->fd < 0 || s->connecting || s->handshaking || s->broken)
		return;
	while (s->tx_len > s->tx_off) {
		ssize_t n = ofp_io_send(s, s->tx + s->tx_off,
					s->tx_len - s->tx_off);

		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			ofp_session_fail(s);
			return;
		}
		s->tx_off += (size_t)n;
	}
	if (s->closing && s->tx_len == s->tx_off) {
		ofp_session_fail(s);
		return;
	}
	if (had_out || was_reading != (s->tx_len - s->tx_off < OFP_TX_PAUSE))
		set_events(ep, s);
}

/* Every whole message in the read buffer. */
static void
session_messages(struct zn_ofp *ep, struct ofp_session *s)
{
	static uint64_t aligned[(MSG_MAX + 8) / 8];
	size_t off = 0;

	/* not past OFP_TX_PAUSE of output: the rest waits (on_wake) */
	while (!s->closing && s->rx_len - off >= sizeof(struct ofp_header) &&
	       s->tx_len - s->tx_off < OFP_TX_PAUSE) {
		/* read where it is: a message follows one of any length, so
		 * its header need not be aligned (it is copied before use) */
		uint16_t len16;
		size_t len;

		memcpy(&len16, s->rx + off + offsetof(struct ofp_header, length),
		       sizeof(len16));
		len = ntohs(len16);

		if (len < sizeof(struct ofp_header)) {
			/* no frame boundary to find again: close */
			s->closing = true;
			break;
		}
		if (s->rx_len - off < len)
			break;
		memcpy(aligned, s->rx + off, len);
		s->msgs_in++;
		if (ofp_handle(ep, s, (const struct ofp_header *)aligned) < 0)
			s->closing = true;
		off += len;
	}
	memmove(s->rx, s->rx + off, s->rx_len - off);
	s->rx_len -= off;
}

static void
session_read(struct zn_ofp *ep, struct ofp_session *s)
{
	size_t total = 0;

	/* nothing read while its output is past OFP_TX_PAUSE: what it sends
	 * waits in the kernel, not here (a TLS connection reads on any
	 * event, so this is the bound, not EPOLLIN being off) */
	while (total < READ_MAX && !s->closing &&
	       s->tx_len - s->tx_off < OFP_TX_PAUSE) {
		size_t want;
		ssize_t n;

		if (s->rx_cap - s->rx_len < MSG_MAX) {
			uint8_t *p = realloc(s->rx, s->rx_len + 2 * MSG_MAX);

			if (p == NULL) {
				ofp_session_fail(s);
				return;
			}
			s->rx = p;
			s->rx_cap = s->rx_len + 2 * MSG_MAX;
		}
		want = s->rx_cap - s->rx_len;
		n = ofp_io_recv(s, s->rx + s->rx_len, want);
		if (n == -EAGAIN)
			break;
		if (n <= 0) {
			ofp_session_fail(s);
			return;
		}
		s->rx_len += (size_t)n;
		total += (size_t)n;
		session_messages(ep, s);
		if ((size_t)n < want && !ofp_io_more(s))
			break; /* read all there was: epoll says when more is */
	}
	ofp_commit(ep);
	session_flush(ep, s);
}

static void
established(struct zn_ofp *ep, struct ofp_session *s)
{
	s->since_ns = zn_now_ns();
	ofp_send(s, ofp_hello());
	session_flush(ep, s);
	if (s->fd >= 0)
		set_events(ep, s);
}

/* The TLS handshake, once more; the OpenFlow HELLO once it is done. */
static void
handshake(struct zn_ofp *ep, struct ofp_session *s)
{
	char err[sizeof(ep->target[0].last_error) - 8];
	int rc = ofp_tls_handshake(s, err, sizeof(err));

	if (rc == 1) {
		established(ep, s);
		return;
	}
	if (rc == -EAGAIN) {
		set_events(ep, s);
		return;
	}
	ZN_LOG(WARNING, "OpenFlow: %s: %s", s->peer, err);
	if (s->target >= 0)
		snprintf(ep->target[s->target].last_error,
			 sizeof(ep->target[0].last_error), "%s", err);
	ofp_session_fail(s);
}

/* The connection is up (dialled or accepted): TLS first, or HELLO. */
static void
connected(struct zn_ofp *ep, struct ofp_session *s, bool tls)
{
	int one = 1;

	s->connecting = false;
	setsockopt(s->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!tls) {
		established(ep, s);
		return;
	}
	if (ofp_tls_start(ep->tls_ctx, s, s->target < 0) < 0) {
		ofp_session_fail(s);
		return;
	}
	handshake(ep, s);
}

static void
on_session(void *arg, uint32_t events)
{
	struct ofp_session *s = arg;
	struct zn_ofp *ep = s->ep;

	if (s->handshaking) {
		handshake(ep, s);
		return;
	}

	if (s->connecting) {
		int err = 0;
		socklen_t len = sizeof(err);

		if (!(events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			return;
		getsockopt(s->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err != 0) {
			snprintf(ep->target[s->target].last_error,
				 sizeof(ep->target[0].last_error), "%s",
				 strerror(err));
			ofp_session_fail(s);
			return;
		}
		ZN_LOG(INFO, "OpenFlow: controller %s connected",
		       ep->target[s->target].spec);
		ep->target[s->target].last_error[0] = '\0';
		connected(ep, s, ep->target[s->target].tls);
		return;
	}
	/* TLS: a record may need the socket either way (renegotiation, key
	 * updates): any event reads (then writes) */
	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR) || s->tls != NULL) {
		session_read(ep, s);
		return; /* it may be gone */
	}
	if (events & EPOLLOUT)
		session_flush(ep, s);
}

static struct ofp_session *
session_new(struct zn_ofp *ep, int fd, int target, const char *peer)
{
	struct ofp_session *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->ep = ep;
	s->fd = fd;
	s->target = target;
	s->role = OFPCR12_ROLE_EQUAL;
	/* active connections OpenFlow's default async configuration,
	 * passive ones nothing until they ask (as Open vSwitch's service
	 * connections) */
	s->async = target >= 0 ? ofputil_async_cfg_default(OFP13_VERSION) :
				 OFPUTIL_ASYNC_CFG_INIT;
	s->miss_send_len = OFPCML12_NO_BUFFER;
	snprintf(s->peer, sizeof(s->peer), "%s", peer);
	if (zn_loop_watch(ep->m->loop, fd, EPOLLIN, on_session, s) < 0) {
		free(s);
		return NULL;
	}
	s->next = ep->sessions;
	ep->sessions = s;
	return s;
}

static void
session_close(struct zn_ofp *ep, struct ofp_session *s)
{
	struct ofp_session **pp;

	if (s->fd < 0)
		return;
	zn_loop_unwatch(ep->m->loop, s->fd);
	close(s->fd);
	s->fd = -1;
	for (pp = &ep->sessions; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	if (s->target >= 0 && (unsigned int)s->target < ep->n_targets &&
	    ep->target[s->target].s == s) {
		ep->target[s->target].s = NULL;
		ep->target[s->target].next_dial_ns = zn_now_ns() + REDIAL_NS;
		if (s->hello)
			ZN_LOG(INFO, "OpenFlow: controller %s gone",
			       ep->target[s->target].spec);
	}
	ofp_tls_free(s);
	free(s->rx);
	free(s->tx);
	free(s);
	ofp_update_mode(ep);
}

static void
dial(struct zn_ofp *ep, unsigned int i)
{
	struct ofp_target *t = &ep->target[i];
	int fd = socket(t->addr.ss_family,
			SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	struct ofp_session *s;

	t->next_dial_ns = zn_now_ns() + REDIAL_NS;
	if (fd < 0)
		return;
	if (connect(fd, (struct sockaddr *)&t->addr, t->addr_len) < 0 &&
	    errno != EINPROGRESS) {
		snprintf(t->last_error, sizeof(t->last_error), "%s",
			 strerror(errno));
		close(fd);
		return;
	}
	s = session_new(ep, fd, (int)i, t->spec);
	if (s == NULL) {
		close(fd);
		return;
	}
	s->connecting = true;
	t->s = s;
	zn_loop_rearm(ep->m->loop, fd, EPOLLOUT);
}

static void
on_listen(void *arg, uint32_t events)
{
	struct zn_ofp *ep = arg;
	struct sockaddr_storage sa;
	socklen_t len = sizeof(sa);
	char host[48], serv[8], peer[64];
	int fd;

	(void)events;
	while ((fd = accept4(ep->listen_fd, (struct sockaddr *)&sa, &len,
			     SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct ofp_session *s;

		if (getnameinfo((struct sockaddr *)&sa, len, host,
				sizeof(host), serv, sizeof(serv),
				NI_NUMERICHOST | NI_NUMERICSERV) != 0) {
			snprintf(host, sizeof(host), "?");
			serv[0] = '\0';
		}
		snprintf(peer, sizeof(peer), "%s:%s", host, serv);
		s = session_new(ep, fd, -1, peer);
		if (s == NULL) {
			close(fd);
			continue;
		}
		connected(ep, s, ep->listen_tls);
		len = sizeof(sa);
	}
}

/* After every wake-up: failed connections, and closing ones whose output
 * is written, closed; requests left unanswered while a connection's output
 * was full answered. */
static void
on_wake(void *arg)
{
	struct zn_mgr *m = arg;
	struct zn_ofp *ep = m->ofp;
	struct ofp_session *s, *next;

	if (ep == NULL)
		return;
	for (s = ep->sessions; s != NULL; s = next) {
		next = s->next;
		if (s->broken || (s->closing && s->tx_len == s->tx_off)) {
			session_close(ep, s);
			continue;
		}
		/* requests read while its output was past OFP_TX_PAUSE, now
		 * that it drained */
		if (!s->connecting && !s->closing &&
		    s->rx_len >= sizeof(struct ofp_header) &&
		    s->tx_len - s->tx_off < OFP_TX_PAUSE) {
			session_messages(ep, s);
			ofp_commit(ep);
			session_flush(ep, s);
		}
		/* and what TLS decrypted and holds (no event will say) */
		if (!s->broken && !s->handshaking && ofp_io_more(s) &&
		    s->tx_len - s->tx_off < OFP_TX_PAUSE)
			session_read(ep, s);
	}
}

/* Every second: controllers redialled, ports' links looked at. */
static void
on_tick(void *arg)
{
	struct zn_mgr *m = arg;
	struct zn_ofp *ep = m->ofp;
	uint64_t now = zn_now_ns();

	if (ep == NULL || !ep->configured)
		return;
	for (unsigned int i = 0; i < ep->n_targets; i++)
		if (ep->target[i].s == NULL && now >= ep->target[i].next_dial_ns)
			dial(ep, i);
	ofp_watch_ports(ep);
	flush_all(ep);
}

/* ---- configuration ---- */

/* "[tcp:|ssl:]HOST:PORT" ("[v6]:PORT" too) into @p sa, *@p tls. 0 or
 * -EINVAL (@p err). */
static int
parse_addr(const char *spec, bool passive, struct sockaddr_storage *sa,
	   socklen_t *len, bool *tls, char *err, size_t errlen)
{
	char host[OFP_TARGET_LEN], *port;
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICSERV |
					      (passive ? AI_PASSIVE : 0) };
	struct addrinfo *ai = NULL;
	int rc;

	*tls = strncmp(spec, "ssl:", 4) == 0;
	if (strncmp(spec, "tcp:", 4) == 0 || *tls)
		spec += 4;
	if (snprintf(host, sizeof(host), "%s", spec) >= (int)sizeof(host) ||
	    (port = strrchr(host, ':')) == NULL || port == host)
		goto bad;
	*port++ = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	if (*port == '\0' || strspn(port, "0123456789") != strlen(port) ||
	    atoi(port) < 1 || atoi(port) > 65535)
		goto bad;
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc != 0 || ai == NULL) {
		snprintf(err, errlen, "%s: %s", spec, gai_strerror(rc));
		return -EINVAL;
	}
	memcpy(sa, ai->ai_addr, ai->ai_addrlen);
	*len = ai->ai_addrlen;
	freeaddrinfo(ai);
	return 0;
bad:
	snprintf(err, errlen, "%s: [tcp:|ssl:]HOST:PORT", spec);
	return -EINVAL;
}

static int
listen_on(struct zn_ofp *ep, const char *spec, char *err, size_t errlen)
{
	struct sockaddr_storage sa;
	socklen_t len;
	int fd, one = 1, rc;

	rc = parse_addr(spec, true, &sa, &len, &ep->listen_tls, err, errlen);
	if (rc < 0)
		return rc;
	if (ep->listen_tls && ep->tls_ctx == NULL) {
		snprintf(err, errlen, "%s: TLS needs a private key, its "
			 "certificate and a CA certificate", spec);
		return -EINVAL;
	}
	fd = socket(sa.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, len) < 0 || listen(fd, 16) < 0) {
		rc = -errno;
		snprintf(err, errlen, "listen on %s: %s", spec, strerror(-rc));
		close(fd);
		return rc;
	}
	rc = zn_loop_watch(ep->m->loop, fd, EPOLLIN, on_listen, ep);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	ep->listen_fd = fd;
	snprintf(ep->listen_spec, sizeof(ep->listen_spec), "%s", spec);
	return 0;
}

/* Every connection closed, nothing listening, no controller. */
static void
endpoint_clear(struct zn_ofp *ep)
{
	while (ep->sessions != NULL)
		session_close(ep, ep->sessions);
	if (ep->listen_fd >= 0) {
		zn_loop_unwatch(ep->m->loop, ep->listen_fd);
		close(ep->listen_fd);
		ep->listen_fd = -1;
	}
	ep->listen_spec[0] = '\0';
	memset(ep->target, 0, sizeof(ep->target));
	ep->n_targets = 0;
	ep->configured = false;
	ofp_tls_ctx_free(ep->tls_ctx);
	ep->tls_ctx = NULL;
}

static json_t *
session_json(const struct ofp_session *s)
{
	static const char *const roles[] = { "nochange", "equal", "master",
					     "slave" };

	return json_pack("{s:s, s:b, s:s, s:b, s:s, s:I, s:I, s:I, s:I, s:I}",
			 "peer", s->peer, "active", s->target >= 0, "state",
			 s->connecting ? "connecting" :
			 s->hello ? "connected" : "hello",
			 "packet_ins", ofp_takes(s, OAM_PACKET_IN),
			 "role", s->role < 4 ? roles[s->role] : "?",
			 "msgs_in", (json_int_t)s->msgs_in, "msgs_out",
			 (json_int_t)s->msgs_out, "async_dropped",
			 (json_int_t)s->async_dropped, "queued",
			 (json_int_t)(s->tx_len - s->tx_off), "seconds",
			 (json_int_t)(s->since_ns ? (zn_now_ns() - s->since_ns) /
						    1000000000ULL : 0));
}

static json_t *
endpoint_json(const struct zn_ofp *ep)
{
	json_t *ctl = json_array(), *ss = json_array();

	for (unsigned int i = 0; i < ep->n_targets; i++) {
		const struct ofp_target *t = &ep->target[i];

		json_array_append_new(ctl, json_pack(
			"{s:s, s:s, s:s}", "target", t->spec, "state",
			t->s == NULL ? "backoff" : t->s->connecting ?
			"connecting" : "connected", "last_error",
			t->last_error));
	}
	for (const struct ofp_session *s = ep->sessions; s; s = s->next)
		json_array_append_new(ss, session_json(s));
	char dpid[24];

	snprintf(dpid, sizeof(dpid), "%016" PRIx64, ep->dpid);
	return json_pack("{s:b, s:o, s:o, s:s, s:s, s:o}", "configured",
			 ep->configured, "controllers", ctl, "listen",
			 ep->listen_spec[0] ? json_string(ep->listen_spec) :
					      json_null(),
			 "fail", ep->standalone ? "standalone" : "secure",
			 "datapath_id", dpid, "connections", ss);
}

static int
cmd_endpoint(struct zn_cmd_req *req)
{
	struct zn_ofp *ep = req->mgr->ofp;
	json_t *p = req->params, *ctl = json_object_get(p, "controllers");
	json_t *lis = json_object_get(p, "listen");
	json_t *fail = json_object_get(p, "fail"), *off = json_object_get(p,
									"off");
	json_t *tls = json_object_get(p, "ssl");
	struct ofp_target t[OFP_MAX_CONTROLLERS];
	void *ctx = NULL;
	unsigned int n = 0;
	size_t i;
	json_t *c;
	int rc;

	if (ep == NULL)
		return -ENODEV;
	if (json_is_true(off)) {
		endpoint_clear(ep);
		ofp_update_mode(ep);
	} else if (ctl != NULL || lis != NULL || fail != NULL || tls != NULL) {
		memset(t, 0, sizeof(t));
		if (json_array_size(ctl) > OFP_MAX_CONTROLLERS) {
			snprintf(req->err, sizeof(req->err), "controllers: at "
				 "most %d", OFP_MAX_CONTROLLERS);
			return -EINVAL;
		}
		json_array_foreach(ctl, i, c) {
			const char *spec = json_string_value(c);

			if (spec == NULL || strlen(spec) >= OFP_TARGET_LEN) {
				snprintf(req->err, sizeof(req->err),
					 "controllers: tcp:HOST:PORT strings");
				return -EINVAL;
			}
			rc = parse_addr(spec, false, &t[n].addr,
					&t[n].addr_len, &t[n].tls, req->err,
					sizeof(req->err));
			if (rc == 0 && t[n].tls && tls == NULL) {
				snprintf(req->err, sizeof(req->err), "%s: TLS "
					 "needs ssl {private_key, certificate, "
					 "ca_cert}", spec);
				rc = -EINVAL;
			}
			if (rc < 0)
				return rc;
			snprintf(t[n].spec, sizeof(t[n].spec), "%s", spec);
			n++;
		}
		if (tls != NULL) {
			const char *k = json_string_value(json_object_get(
				tls, "private_key"));
			const char *cert = json_string_value(json_object_get(
				tls, "certificate"));
			const char *ca = json_string_value(json_object_get(
				tls, "ca_cert"));

			if (k == NULL || cert == NULL || ca == NULL) {
				snprintf(req->err, sizeof(req->err), "ssl: "
					 "{private_key, certificate, ca_cert}, "
					 "PEM files");
				return -EINVAL;
			}
			rc = ofp_tls_ctx(k, cert, ca, &ctx, req->err,
					 sizeof(req->err));
			if (rc < 0)
				return rc;
		}
		/* the new configuration replaces the old one whole */
		endpoint_clear(ep);
		ep->tls_ctx = ctx;
		if (json_string_value(lis) != NULL) {
			rc = listen_on(ep, json_string_value(lis), req->err,
				       sizeof(req->err));
			if (rc < 0) {
				ofp_update_mode(ep);
				return rc;
			}
		}
		memcpy(ep->target, t, sizeof(t));
		ep->n_targets = n;
		ep->standalone = fail != NULL &&
				 strcmp(json_string_value(fail),
					"standalone") == 0;
		ep->configured = true;
		ofp_watch_ports(ep); /* the links as they are now */
		for (unsigned int k = 0; k < n; k++)
			dial(ep, k);
		ofp_update_mode(ep);
	}
	req->result = endpoint_json(ep);
	return 0;
}

static const char *const fail_modes[] = { "secure", "standalone", NULL };

static const struct zn_cmd endpoint_cmd = {
	.name = "of.endpoint",
	.help = "the OpenFlow endpoint: controllers to dial, where to "
		"listen, the fail mode; its connections",
	.params = {
		{ .name = "controllers", .type = ZN_CMD_ARRAY,
		  .desc = "tcp:HOST:PORT or ssl:HOST:PORT of each "
			  "controller, dialled and redialled every second",
		  .schema = "{\"items\": {\"type\": \"string\"}, "
			    "\"maxItems\": 8}" },
		{ .name = "listen", .type = ZN_CMD_STR,
		  .desc = "[tcp:|ssl:]HOST:PORT where tools and controllers "
			  "connect" },
		{ .name = "fail", .type = ZN_CMD_STR, .choices = fail_modes,
		  .desc = "with no controller connected: keep the table "
			  "(secure) or hand packets to the flow director "
			  "(standalone)" },
		{ .name = "off", .type = ZN_CMD_BOOL,
		  .desc = "close everything; the table stays, off" },
		{ .name = "ssl", .type = ZN_CMD_OBJECT,
		  .desc = "for ssl: targets: {private_key, certificate, "
			  "ca_cert}, PEM files (this switch's key and "
			  "certificate, the CA that signs its peers')",
		  .schema = "{\"properties\": {\"private_key\": {\"type\": "
			    "\"string\"}, \"certificate\": {\"type\": "
			    "\"string\"}, \"ca_cert\": {\"type\": "
			    "\"string\"}}}" },
	},
	.result = "{\"configured\": \"on\", \"controllers\": \"[{target, "
		  "state, last_error}]\", \"listen\": \"address or null\", "
		  "\"fail\": \"secure|standalone\", \"datapath_id\": \"hex\", "
		  "\"connections\": \"[{peer, active, state, role, "
		  "packet_ins, msgs_in, msgs_out, async_dropped, queued, "
		  "seconds}]\"}",
	.doc = "With any of `controllers`, `listen`, `fail`, `ssl`: the new "
	       "configuration replaces the old one (connections closed, the "
	       "table's entries kept). Without parameters: the state. The "
	       "table classifies while configured, unless fail-standalone "
	       "has controllers none of which is connected (docs/sdn.md).",
	.fn = cmd_endpoint,
};
ZN_CMD_REGISTER(endpoint_cmd)

/* ---- start-up ---- */

/* The datapath id: 48 bits of FNV-1a over the instance's name (the same
 * at every start). */
static uint64_t
datapath_id(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (const char *p = name; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
	return h & 0x0000ffffffffffffULL;
}

static int
zn_ofp_init(struct zn_mgr *m)
{
	struct zn_ofp *ep = calloc(1, sizeof(*ep));
	const struct zn_oft_listener l = { .packet_in = on_packet_in,
					   .flow_removed = on_flow_removed,
					   .arg = ep };
	int rc;

	if (ep == NULL)
		return -ENOMEM;
	ofp_codec_init();
	ep->m = m;
	ep->listen_fd = -1;
	ep->dpid = datapath_id(m->cfg.instance);
	ep->started_ns = zn_now_ns();
	m->ofp = ep;
	zn_oft_set_listener(m, &l);
	if (m->loop == NULL)
		return 0;
	rc = zn_loop_every(m->loop, 1000, on_tick, m);
	return rc == 0 ? zn_loop_on_wake(m->loop, on_wake, m) : rc;
}

static void
zn_ofp_fini(struct zn_mgr *m)
{
	struct zn_ofp *ep = m->ofp;

	if (ep == NULL)
		return;
	zn_oft_set_listener(m, NULL);
	if (m->loop != NULL)
		endpoint_clear(ep);
	free(ep);
	m->ofp = NULL;
}

static const struct zn_subsys subsys = {
	.name = "openflow_endpoint", .order = ZN_SUBSYS_OFP,
	.init = zn_ofp_init, .fini = zn_ofp_fini,
};
ZN_SUBSYS_REGISTER(subsys)
