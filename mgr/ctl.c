/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The control thread's event loop and the control socket.
 *
 * One epoll set holds: the signalfd (SIGINT/SIGTERM), the control socket
 * and its clients, the "kick" datagram socket NFs poke after posting a
 * message, and one pidfd per NF (readable the instant the NF dies). The
 * thread sleeps in epoll_wait; the registry is polled after each wake-up
 * and at least every 100 ms.
 *
 * Control protocol: JSON-RPC 2.0 objects, one per line, over a Unix stream
 * socket at <runtime dir>/zeronf.sock; see docs/control-protocol.md. Error
 * codes are negative errno values. A request that is not valid JSON, not
 * an object, names an unknown method or has a bad parameter gets an error
 * reply and changes nothing. Output is buffered: a client that does not
 * read never blocks the manager.
 */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "mgr.h"
#include "ctl.h"
#include "../lib/common/zn_util.h"

#define MAX_CLIENTS 64
#define MAX_DEFERRED 64
#define MAX_REQUEST (64 * 1024)
#define MAX_PENDING_OUT (16 * 1024 * 1024)

enum ev_kind { EV_SIGNAL = 1, EV_LISTEN, EV_KICK, EV_CLIENT, EV_PIDFD };

struct client {
	int fd;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len;
	size_t out_off;
	bool closing;  /* stop reading requests; close once flushed */
	bool draining; /* reply sent and write side shut: discard input */
	size_t drained;
	uint64_t serial; /* which connection: a deferred reply finds it */
};

static struct client clients[MAX_CLIENTS];
static uint64_t client_serial;

/* Requests answered later (zn_ctl_req.poll). */
static struct deferred {
	bool used;
	int client;
	uint64_t serial;
	json_t *id;
	struct zn_ctl_req req;
} deferred[MAX_DEFERRED];

static inline uint64_t
ev_data(enum ev_kind kind, uint32_t idx)
{
	return ((uint64_t)kind << 32) | idx;
}

static int
ep_add(struct zn_mgr *m, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event ev = { .events = events, .data.u64 = data };

	return epoll_ctl(m->epfd, EPOLL_CTL_ADD, fd, &ev) < 0 ? -errno : 0;
}

int
zn_ctl_watch_pidfd(struct zn_mgr *m, int fd, unsigned int slot)
{
	return ep_add(m, fd, EPOLLIN, ev_data(EV_PIDFD, slot));
}

static int
bind_unix(const char *path, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	zn_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 ||
	    (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int
zn_ctl_init(struct zn_mgr *m)
{
	char path[PATH_MAX + 32];
	sigset_t set;
	int rc;

	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;
	m->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (m->epfd < 0)
		return -errno;

	/* SIGINT/SIGTERM were blocked in main() before the EAL made threads. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	m->sigfd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (m->sigfd < 0)
		return -errno;
	rc = ep_add(m, m->sigfd, EPOLLIN, ev_data(EV_SIGNAL, 0));
	if (rc < 0)
		return rc;

	snprintf(path, sizeof(path), "%s/%s", m->rundir, ZN_CTL_SOCK);
	m->ctl_fd = bind_unix(path, SOCK_STREAM);
	if (m->ctl_fd < 0) {
		ZN_LOG(ERR, "control socket %s: %s", path,
		       strerror(-m->ctl_fd));
		return m->ctl_fd;
	}
	rc = ep_add(m, m->ctl_fd, EPOLLIN, ev_data(EV_LISTEN, 0));
	if (rc < 0)
		return rc;

	snprintf(path, sizeof(path), "%s/%s", m->rundir, ZN_KICK_SOCK);
	m->kick_fd = bind_unix(path, SOCK_DGRAM);
	if (m->kick_fd < 0)
		return m->kick_fd;
	return ep_add(m, m->kick_fd, EPOLLIN, ev_data(EV_KICK, 0));
}

static void
client_close(struct zn_mgr *m, struct client *c)
{
	epoll_ctl(m->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->in);
	free(c->out);
	*c = (struct client){ .fd = -1 };
}

static void
client_flush(struct zn_mgr *m, struct client *c)
{
	struct epoll_event ev;

	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off,
				 c->out_len - c->out_off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				break;
			client_close(m, c);
			return;
		}
		c->out_off += (size_t)n;
	}
	if (c->out_off == c->out_len) {
		c->out_off = c->out_len = 0;
		if (c->closing && !c->draining) {
			/* Closing with unread input would reset the connection
			 * and lose the error reply: shut our side, drain
			 * theirs, close at their EOF. */
			shutdown(c->fd, SHUT_WR);
			c->draining = true;
		}
	}
	ev.events = EPOLLIN | (c->out_len ? EPOLLOUT : 0);
	ev.data.u64 = ev_data(EV_CLIENT, (uint32_t)(c - clients));
	epoll_ctl(m->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void
client_send(struct zn_mgr *m, struct client *c, json_t *reply)
{
	char *s = json_dumps(reply, JSON_COMPACT);
	size_t n;
	char *buf;

	if (s == NULL)
		return;
	n = strlen(s);
	if (c->out_len + n + 1 > MAX_PENDING_OUT) {
		free(s);
		client_close(m, c); /* not reading its replies */
		return;
	}
	buf = realloc(c->out, c->out_len + n + 1);
	if (buf == NULL) {
		free(s);
		return;
	}
	memcpy(buf + c->out_len, s, n);
	buf[c->out_len + n] = '\n';
	c->out = buf;
	c->out_len += n + 1;
	free(s);
	client_flush(m, c);
}

json_t *
zn_ctl_error_reply(json_t *id, int code, const char *msg)
{
	return json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id",
			 id ? id : json_null(), "error", "code", code,
			 "message", msg);
}

/* One request line -> one reply object. */
static bool defer_request(struct client *c, json_t *id,
			  const struct zn_ctl_req *req);

static json_t *
handle_request(struct zn_mgr *m, struct client *c, const char *line,
	       size_t len)
{
	struct zn_ctl_req req = { .mgr = m };
	struct zn_ctl_call call;
	json_t *reply;
	int rc;

	m->ctl_requests++;
	rc = zn_ctl_rpc_parse(line, len, &call, req.err, sizeof(req.err));
	if (rc < 0)
		goto error;
	req.params = call.params;
	rc = zn_ctl_check_params(&req, call.cmd);
	if (rc == 0)
		rc = call.cmd->fn(&req);
	if (rc < 0)
		goto error;
	req.params = NULL;
	if (req.poll != NULL) {
		if (defer_request(c, call.id, &req)) {
			json_decref(call.msg);
			return NULL; /* answered from zn_ctl_step */
		}
		free(req.poll_arg);
		rc = -EBUSY;
		snprintf(req.err, sizeof(req.err), "too many requests waiting "
			 "for an answer");
		goto error;
	}
	reply = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id",
			  call.id ? call.id : json_null(), "result",
			  req.result ? req.result : json_object());
	json_decref(call.msg);
	return reply;
error:
	m->ctl_errors++;
	json_decref(req.result);
	if (req.err[0] == '\0')
		snprintf(req.err, sizeof(req.err), "%s", strerror(-rc));
	reply = zn_ctl_error_reply(call.id, rc, req.err);
	json_decref(call.msg);
	return reply;
}

static void
client_read(struct zn_mgr *m, struct client *c)
{
	char buf[16384];

	for (;;) {
		ssize_t n = recv(c->fd, buf, sizeof(buf), 0);
		char *nl, *grown;

		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			client_close(m, c);
			return;
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return;
		}
		if (c->closing) {
			c->drained += (size_t)n;
			if (c->drained > MAX_PENDING_OUT) {
				client_close(m, c);
				return;
			}
			continue;
		}
		grown = realloc(c->in, c->in_len + (size_t)n);
		if (grown == NULL) {
			client_close(m, c);
			return;
		}
		c->in = grown;
		memcpy(c->in + c->in_len, buf, (size_t)n);
		c->in_len += (size_t)n;
		while (c->fd >= 0 &&
		       (nl = memchr(c->in, '\n', c->in_len)) != NULL) {
			size_t len = (size_t)(nl - c->in);
			json_t *reply = NULL;

			if (len > 0 && !(len == 1 && c->in[0] == '\r'))
				reply = handle_request(m, c, c->in, len);
			memmove(c->in, nl + 1, c->in_len - len - 1);
			c->in_len -= len + 1;
			if (reply != NULL) {
				client_send(m, c, reply);
				json_decref(reply);
			}
		}
		if (c->fd >= 0 && c->in_len > MAX_REQUEST) {
			json_t *reply = zn_ctl_error_reply(
				NULL, -EMSGSIZE, "request longer than 64 KiB");

			m->ctl_errors++;
			c->closing = true;
			c->in_len = 0;
			client_send(m, c, reply);
			json_decref(reply);
			return;
		}
		if (c->fd < 0)
			return;
	}
}

static void
accept_clients(struct zn_mgr *m)
{
	for (;;) {
		int fd = accept4(m->ctl_fd, NULL, NULL,
				 SOCK_NONBLOCK | SOCK_CLOEXEC);
		int i;

		if (fd < 0)
			return;
		for (i = 0; i < MAX_CLIENTS && clients[i].fd >= 0; i++)
			;
		if (i == MAX_CLIENTS) {
			static const char busy[] =
				"{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":"
				"{\"code\":-16,\"message\":\"too many "
				"clients\"}}\n";

			(void)!send(fd, busy, sizeof(busy) - 1, MSG_NOSIGNAL);
			close(fd);
			continue;
		}
		clients[i] = (struct client){ .fd = fd,
					      .serial = ++client_serial };
		if (ep_add(m, fd, EPOLLIN, ev_data(EV_CLIENT, (uint32_t)i)) <
		    0) {
			close(fd);
			clients[i].fd = -1;
		}
	}
}

static void
handle_event(struct zn_mgr *m, const struct epoll_event *ev)
{
	enum ev_kind kind = (enum ev_kind)(ev->data.u64 >> 32);
	uint32_t idx = (uint32_t)ev->data.u64;
	struct signalfd_siginfo si;
	char buf[64];

	switch (kind) {
	case EV_SIGNAL:
		while (read(m->sigfd, &si, sizeof(si)) == sizeof(si)) {
			ZN_LOG(NOTICE, "signal %u: shutting down", si.ssi_signo);
			m->shutdown_requested = true;
		}
		break;
	case EV_LISTEN:
		accept_clients(m);
		break;
	case EV_KICK:
		while (recv(m->kick_fd, buf, sizeof(buf), 0) > 0)
			;
		break;
	case EV_CLIENT:
		if (idx >= MAX_CLIENTS || clients[idx].fd < 0)
			break;
		if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			client_read(m, &clients[idx]);
		if (clients[idx].fd >= 0 && (ev->events & EPOLLOUT))
			client_flush(m, &clients[idx]);
		break;
	case EV_PIDFD:
		zn_registry_on_pidfd(m, idx);
		break;
	}
}

static bool
defer_request(struct client *c, json_t *id, const struct zn_ctl_req *req)
{
	for (int i = 0; i < MAX_DEFERRED; i++) {
		struct deferred *d = &deferred[i];

		if (d->used)
			continue;
		*d = (struct deferred){ .used = true,
					.client = (int)(c - clients),
					.serial = c->serial,
					.id = id ? json_incref(id) : NULL,
					.req = *req };
		return true;
	}
	return false;
}

/* Answer the deferred requests that are done, failed or overdue; with
 * @p all, every one (-ECANCELED: the manager stops). */
static void
poll_deferred(struct zn_mgr *m, bool all)
{
	uint64_t now = zn_now_ns();

	for (int i = 0; i < MAX_DEFERRED; i++) {
		struct deferred *d = &deferred[i];
		struct client *c;
		json_t *reply;
		int rc;

		if (!d->used)
			continue;
		rc = all ? -ECANCELED : d->req.poll(&d->req);
		if (rc == -EAGAIN && now >= d->req.deadline_ns) {
			rc = -ETIMEDOUT;
			snprintf(d->req.err, sizeof(d->req.err), "no answer in "
				 "time");
		}
		if (rc == -EAGAIN)
			continue;
		if (rc < 0) {
			m->ctl_errors++;
			json_decref(d->req.result);
			if (d->req.err[0] == '\0')
				snprintf(d->req.err, sizeof(d->req.err), "%s",
					 strerror(-rc));
			reply = zn_ctl_error_reply(d->id, rc, d->req.err);
		} else {
			reply = json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0",
					  "id", d->id ? d->id : json_null(),
					  "result", d->req.result ?
					  d->req.result : json_object());
		}
		c = &clients[d->client];
		if (reply != NULL && c->fd >= 0 && c->serial == d->serial)
			client_send(m, c, reply);
		json_decref(reply);
		json_decref(d->id);
		free(d->req.poll_arg);
		*d = (struct deferred){ 0 };
	}
}

void
zn_ctl_step(struct zn_mgr *m, int timeout_ms)
{
	struct epoll_event evs[32];
	int n = epoll_wait(m->epfd, evs, 32, timeout_ms);

	for (int i = 0; i < n; i++)
		handle_event(m, &evs[i]);
	zn_registry_poll(m);
	poll_deferred(m, false);
	zn_telemetry_serve(m);
}

static void
log_stats(struct zn_mgr *m)
{
	json_t *st = zn_stats_all(m);
	char *s = st ? json_dumps(st, JSON_COMPACT) : NULL;

	if (s != NULL)
		ZN_LOG(NOTICE, "stats %s", s);
	free(s);
	json_decref(st);
}

int
zn_ctl_run(struct zn_mgr *m)
{
	uint64_t next_stats = zn_now_ns(), next_epoch = next_stats;

	while (!m->shutdown_requested) {
		uint64_t now;
		bool busy = false;

		for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
			busy |= m->shm->nfs[s].ctl.state == ZN_NF_RECLAIMING ||
				m->reg[s].pending;
		zn_ctl_step(m, busy ? 10 : 100);
		zn_registry_rx_when_ready(m);
		now = zn_now_ns();
		zn_fdir_tick(m, now);
		if (now >= next_epoch) {
			zn_lb_tick(m);
			next_epoch = now + 1000000000ULL;
		}
		if (m->cfg.stats_interval_s != 0 && now >= next_stats) {
			next_stats = zn_now_ns() +
				     m->cfg.stats_interval_s * 1000000000ULL;
			log_stats(m);
		}
	}
	return 0;
}

void
zn_ctl_flush_all(struct zn_mgr *m)
{
	poll_deferred(m, true);
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0 && clients[i].out_len > 0)
			client_flush(m, &clients[i]);
}

void
zn_ctl_fini(struct zn_mgr *m)
{
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(m, &clients[i]);
	if (m->ctl_fd >= 0)
		close(m->ctl_fd);
	if (m->kick_fd >= 0)
		close(m->kick_fd);
	if (m->sigfd >= 0)
		close(m->sigfd);
	if (m->epfd >= 0)
		close(m->epfd);
	m->ctl_fd = m->kick_fd = m->sigfd = m->epfd = -1;
}
