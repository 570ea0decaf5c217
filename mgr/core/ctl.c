/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The control socket: a transport for the command table (cmd.h),
 * served from the manager's event loop (loop.h): the listening socket and
 * each client are watched fds; deferred replies are polled after every
 * wake-up.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <jansson.h>

#include "cmd.h"
#include "ctl.h"
#include "loop.h"
#include "mgr.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "subsys.h"

#define MAX_CLIENTS 64
#define MAX_DEFERRED 64
#define MAX_REQUEST (64 * 1024)
#define MAX_PENDING_OUT (16 * 1024 * 1024)

struct client {
	int fd;
	struct zn_mgr *mgr;
	char *in;
	size_t in_len;
	char *out;
	size_t out_len;
	size_t out_off;
	bool closing;  /* stop reading requests; close once flushed */
	bool draining; /* reply sent and write side shut: discard input */
	unsigned int tenant; /* 0: the operator's socket; t + 1: tenant t's */
	size_t drained;
	uint64_t serial; /* which connection: a deferred reply finds it */
};

static struct client clients[MAX_CLIENTS];
static uint64_t client_serial;

/* [0]: the operator's socket; [t + 1]: tenant t's, whose clients see and
 * change only tenant t (commands marked ZN_CMD_F_TENANT, req->tenant). */
static struct listener {
	struct zn_mgr *mgr;       /* NULL: fd is not open */
	int fd;
	unsigned int tenant;
	char path[PATH_MAX + 64]; /* a tenant's: removed at exit */
} listeners[1 + ZN_MAX_TENANTS];

/* Requests answered later (zn_cmd_req.poll). */
static struct deferred {
	bool used;
	int client;
	uint64_t serial;
	json_t *id;
	struct zn_cmd_req req;
} deferred[MAX_DEFERRED];

static void accept_clients(void *arg, uint32_t events);
static void poll_deferred(struct zn_mgr *m, bool all);

static void
on_wake(void *arg)
{
	poll_deferred(arg, false);
}

static int
listen_on(struct zn_mgr *m, unsigned int i, const char *path)
{
	struct listener *l = &listeners[i];
	int fd = zn_unix_bind(path, SOCK_STREAM);

	if (fd < 0) {
		ZN_LOG(ERR, "control socket %s: %s", path, strerror(-fd));
		return fd;
	}
	*l = (struct listener){ .mgr = m, .fd = fd, .tenant = i };
	return zn_loop_watch(m->loop, l->fd, EPOLLIN, accept_clients, l);
}

/* Tenant t's socket: <zn_tenant_dir>/tenant-NAME.sock, mode 0600, its
 * uid's when --tenant gave one (the directory: 0755, so it can reach it).
 * Not in the runtime directory: that one is DPDK's, 0700. */
static int
tenant_socket(struct zn_mgr *m, unsigned int t)
{
	const struct zn_tenant_cfg *c = &m->cfg.tenants[t];
	struct listener *l = &listeners[t + 1];
	char dir[PATH_MAX], path[PATH_MAX + 64];
	int rc = zn_tenant_dir(m->cfg.instance, dir, sizeof(dir));

	if (rc == 0)
		rc = zn_mkdir_p(dir, 0755);
	if (rc < 0) {
		ZN_LOG(ERR, "tenant sockets' directory %s: %s", dir,
		       strerror(-rc));
		return rc;
	}
	snprintf(path, sizeof(path), "%s/tenant-%s.sock", dir, c->name);
	rc = listen_on(m, t + 1, path);
	if (rc == 0)
		zn_strlcpy(l->path, path, sizeof(l->path));
	if (rc == 0 && c->uid >= 0 && chown(path, (uid_t)c->uid, -1) < 0) {
		rc = -errno;
		ZN_LOG(ERR, "tenant %s: chown %s to uid %d: %s", c->name,
		       path, c->uid, strerror(errno));
	}
	return rc;
}

static bool begun; /* zn_ctl_init ran: the tables below are set up */

/* Open <rundir>/zeronf.sock and serve it from the manager's loop.
 *  0 or -errno. */
static int
zn_ctl_init(struct zn_mgr *m)
{
	char path[PATH_MAX + 32];
	int rc;

	begun = true;
	for (int i = 0; i < MAX_CLIENTS; i++)
		clients[i].fd = -1;
	snprintf(path, sizeof(path), "%s/%s", m->inst.rundir, ZN_CTL_SOCK);
	rc = listen_on(m, 0, path);
	for (unsigned int t = 0; rc == 0 && t < m->cfg.n_tenants; t++)
		rc = tenant_socket(m, t);
	if (rc == 0)
		rc = zn_loop_on_wake(m->loop, on_wake, m);
	return rc;
}

static void
client_close(struct zn_mgr *m, struct client *c)
{
	zn_loop_unwatch(m->loop, c->fd);
	close(c->fd);
	free(c->in);
	free(c->out);
	*c = (struct client){ .fd = -1 };
}

static void
client_flush(struct zn_mgr *m, struct client *c)
{
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
	zn_loop_rearm(m->loop, c->fd, EPOLLIN | (c->out_len ? EPOLLOUT : 0));
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

/* One request line -> one reply object. */
static bool defer_request(struct client *c, json_t *id,
			  const struct zn_cmd_req *req);

static json_t *
handle_request(struct zn_mgr *m, struct client *c, const char *line,
	       size_t len)
{
	struct zn_cmd_req req = { .mgr = m, .tenant = c->tenant };
	struct zn_ctl_call call;
	json_t *reply;
	int rc;

	m->ctl_requests++;
	rc = zn_ctl_rpc_parse(line, len, &call, req.err, sizeof(req.err));
	if (rc < 0)
		goto error;
	if (c->tenant != 0 && !(call.cmd->flags & ZN_CMD_F_TENANT)) {
		rc = -EPERM;
		snprintf(req.err, sizeof(req.err), "%s: not open to a tenant "
			 "(tenant %s's control socket)", call.cmd->name,
			 m->cfg.tenants[c->tenant - 1].name);
		goto error;
	}
	req.params = call.params;
	rc = zn_cmd_call(call.cmd, &req);
	if (rc < 0)
		goto error;
	req.params = NULL;
	if (req.poll != NULL) {
		if (defer_request(c, call.id, &req)) {
			json_decref(call.msg);
			return NULL; /* answered by poll_deferred */
		}
		free(req.poll_arg);
		rc = -EBUSY;
		snprintf(req.err, sizeof(req.err), "too many requests waiting "
			 "for an answer");
		goto error;
	}
	reply = zn_ctl_result_reply(call.id, req.result);
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

			if (len > MAX_REQUEST)
				break; /* refused below, as documented */
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
client_event(void *arg, uint32_t events)
{
	struct client *c = arg;
	struct zn_mgr *m = c->mgr;

	if (events & (EPOLLIN | EPOLLHUP | EPOLLERR))
		client_read(m, c);
	if (c->fd >= 0 && (events & EPOLLOUT))
		client_flush(m, c);
}

static void
accept_clients(void *arg, uint32_t events)
{
	struct listener *l = arg;
	struct zn_mgr *m = l->mgr;

	(void)events;
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL,
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
		clients[i] = (struct client){ .fd = fd, .mgr = m,
					      .tenant = l->tenant,
					      .serial = ++client_serial };
		if (zn_loop_watch(m->loop, fd, EPOLLIN, client_event,
				  &clients[i]) < 0) {
			close(fd);
			clients[i].fd = -1;
		}
	}
}

static bool
defer_request(struct client *c, json_t *id, const struct zn_cmd_req *req)
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
			reply = zn_ctl_result_reply(d->id, d->req.result);
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
zn_ctl_flush_all(struct zn_mgr *m)
{
	poll_deferred(m, true);
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0 && clients[i].out_len > 0)
			client_flush(m, &clients[i]);
}

static void
zn_ctl_fini(struct zn_mgr *m)
{
	if (!begun)
		return; /* the client table is not set up */
	begun = false;
	for (int i = 0; i < MAX_CLIENTS; i++)
		if (clients[i].fd >= 0)
			client_close(m, &clients[i]);
	for (unsigned int i = 0; i <= ZN_MAX_TENANTS; i++) {
		struct listener *l = &listeners[i];

		if (l->mgr != NULL) {
			zn_loop_unwatch(m->loop, l->fd);
			close(l->fd);
		}
		if (l->path[0] != '\0')
			unlink(l->path);
		*l = (struct listener){ 0 };
	}
	if (m->cfg.n_tenants > 0) {
		char dir[PATH_MAX];

		if (zn_tenant_dir(m->cfg.instance, dir, sizeof(dir)) == 0)
			rmdir(dir);
	}
}

static const struct zn_subsys subsys = {
	.name = "control_socket", .order = ZN_SUBSYS_CTL,
	.init = zn_ctl_init, .fini = zn_ctl_fini,
};
ZN_SUBSYS_REGISTER(subsys)
