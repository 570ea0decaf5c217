/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The OpenFlow endpoint's transport (ofp_pvt.h): plain TCP, or TLS with
 * OpenSSL (libopenvswitch's own TLS comes with its stream layer and poll
 * loop, not with the codec the manager links: the connections here are
 * the manager's event loop's). As Open vSwitch does: TLS 1.2 or later,
 * each side proves itself with a certificate the other's CA signed
 * (SSL_VERIFY_PEER | FAIL_IF_NO_PEER_CERT), no host name checked (a
 * switch knows its controllers by their CA, as ovs-vswitchd does).
 * Non-blocking: a handshake or a record that needs the socket readable or
 * writable says so (-EAGAIN, tls_want_write) and is driven again on the
 * next event. Below ofp.c; calls nothing of the endpoint's.
 */

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "ofp_pvt.h"

static void
ssl_err(char *err, size_t errlen, const char *what)
{
	unsigned long e = ERR_get_error();
	char buf[160];

	ERR_error_string_n(e, buf, sizeof(buf));
	snprintf(err, errlen, "%s: %s", what, e != 0 ? buf : "failed");
	ERR_clear_error();
}

int
ofp_tls_ctx(const char *key, const char *cert, const char *ca,
	    void **out, char *err, size_t errlen)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_method());

	if (ctx == NULL) {
		ssl_err(err, errlen, "TLS");
		return -ENOMEM;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
			      SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER |
				SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
	if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
		ssl_err(err, errlen, cert);
		goto fail;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_check_private_key(ctx) != 1) {
		ssl_err(err, errlen, key);
		goto fail;
	}
	if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
		ssl_err(err, errlen, ca);
		goto fail;
	}
	*out = ctx;
	return 0;
fail:
	SSL_CTX_free(ctx);
	return -EINVAL;
}

void
ofp_tls_ctx_free(void *ctx)
{
	SSL_CTX_free(ctx);
}

int
ofp_tls_start(void *ctx, struct ofp_session *s, bool server)
{
	SSL *ssl = SSL_new(ctx);

	if (ssl == NULL || SSL_set_fd(ssl, s->fd) != 1) {
		SSL_free(ssl);
		return -ENOMEM;
	}
	if (server)
		SSL_set_accept_state(ssl);
	else
		SSL_set_connect_state(ssl);
	s->tls = ssl;
	s->handshaking = true;
	return 0;
}

void
ofp_tls_free(struct ofp_session *s)
{
	SSL_free(s->tls);
	s->tls = NULL;
}

/* An SSL call's result @p rc as ours: -EAGAIN (tls_want_write says for
 * what), 0 (the peer closed), -EPIPE (an error: its reason in @p err). */
static int
tls_result(struct ofp_session *s, int rc, char *err, size_t errlen)
{
	switch (SSL_get_error(s->tls, rc)) {
	case SSL_ERROR_WANT_READ:
		s->tls_want_write = false;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		s->tls_want_write = true;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		return 0;
	default:
		if (err != NULL)
			ssl_err(err, errlen, "TLS");
		else
			ERR_clear_error();
		return -EPIPE;
	}
}

int
ofp_tls_handshake(struct ofp_session *s, char *err, size_t errlen)
{
	int rc = SSL_do_handshake(s->tls);

	if (rc == 1) {
		s->handshaking = false;
		s->tls_want_write = false;
		return 1;
	}
	rc = tls_result(s, rc, err, errlen);
	return rc == 0 ? -EPIPE : rc;
}

ssize_t
ofp_io_send(struct ofp_session *s, const void *p, size_t n)
{
	ssize_t w;

	if (s->tls == NULL) {
		do {
			w = send(s->fd, p, n, MSG_NOSIGNAL);
		} while (w < 0 && errno == EINTR);
		if (w < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ?
			       -EAGAIN : -EPIPE;
		return w;
	}
	w = SSL_write(s->tls, p, (int)(n > INT32_MAX ? INT32_MAX : n));
	if (w > 0) {
		s->tls_want_write = false;
		return w;
	}
	w = tls_result(s, (int)w, NULL, 0);
	return w == 0 ? -EPIPE : w;
}

ssize_t
ofp_io_recv(struct ofp_session *s, void *p, size_t n)
{
	ssize_t r;

	if (s->tls == NULL) {
		do {
			r = recv(s->fd, p, n, 0);
		} while (r < 0 && errno == EINTR);
		if (r < 0)
			return errno == EAGAIN || errno == EWOULDBLOCK ?
			       -EAGAIN : -EPIPE;
		return r;
	}
	r = SSL_read(s->tls, p, (int)(n > INT32_MAX ? INT32_MAX : n));
	if (r > 0)
		return r;
	return tls_result(s, (int)r, NULL, 0);
}

bool
ofp_io_more(const struct ofp_session *s)
{
	return s->tls != NULL && SSL_pending(s->tls) > 0;
}
