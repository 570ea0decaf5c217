/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Event loop of the control thread (see loop.h). Fixed tables: the
 * control thread watches at most a few hundred fds (NF pidfds, control
 * clients) and a handful of timers, and must not fail for want of memory
 * while it runs. Each watch has a generation, carried in the epoll event:
 * an fd unwatched (and maybe reused) while a batch of events is being
 * dispatched does not get the old fd's event.
 */

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "loop.h"
#include "../../lib/common/zn_util.h"

#define LOOP_MAX_WATCH 512
#define LOOP_MAX_TIMERS 16
#define LOOP_MAX_HOOKS 16
#define LOOP_BATCH 32

struct watch {
	int fd; /* -1: free */
	uint32_t gen;
	zn_loop_fd_cb cb;
	void *arg;
};

struct timer {
	uint64_t period_ns;
	uint64_t next_ns;
	zn_loop_cb cb;
	void *arg;
};

struct hook {
	zn_loop_cb cb;
	void *arg;
};

struct zn_loop {
	int epfd;
	int wake_fd; /* eventfd: zn_loop_wake() */
	uint32_t gen;
	unsigned int within_ms; /* zn_loop_wake_within; 0: none */
	struct watch w[LOOP_MAX_WATCH];
	struct timer t[LOOP_MAX_TIMERS];
	unsigned int n_timers;
	struct hook h[LOOP_MAX_HOOKS];
	unsigned int n_hooks;
};

static inline uint64_t
ev_data(uint32_t idx, uint32_t gen)
{
	return (uint64_t)gen << 32 | idx;
}

static void
drain_wake(void *arg, uint32_t events)
{
	struct zn_loop *l = arg;
	uint64_t v;

	(void)events;
	(void)!read(l->wake_fd, &v, sizeof(v));
}

struct zn_loop *
zn_loop_create(void)
{
	struct zn_loop *l = calloc(1, sizeof(*l));

	if (l == NULL)
		return NULL;
	for (unsigned int i = 0; i < LOOP_MAX_WATCH; i++)
		l->w[i].fd = -1;
	l->epfd = epoll_create1(EPOLL_CLOEXEC);
	l->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (l->epfd < 0 || l->wake_fd < 0 ||
	    zn_loop_watch(l, l->wake_fd, EPOLLIN, drain_wake, l) < 0) {
		int err = errno;

		zn_loop_destroy(l);
		errno = err;
		return NULL;
	}
	return l;
}

void
zn_loop_destroy(struct zn_loop *l)
{
	if (l == NULL)
		return;
	if (l->wake_fd >= 0)
		close(l->wake_fd);
	if (l->epfd >= 0)
		close(l->epfd);
	free(l);
}

static struct watch *
find(struct zn_loop *l, int fd)
{
	for (unsigned int i = 0; i < LOOP_MAX_WATCH; i++)
		if (l->w[i].fd == fd)
			return &l->w[i];
	return NULL;
}

int
zn_loop_watch(struct zn_loop *l, int fd, uint32_t events, zn_loop_fd_cb cb,
	      void *arg)
{
	struct epoll_event ev = { .events = events };
	struct watch *w;

	if (fd < 0 || cb == NULL)
		return -EINVAL;
	if (find(l, fd) != NULL)
		return -EEXIST;
	w = find(l, -1);
	if (w == NULL)
		return -ENOSPC;
	ev.data.u64 = ev_data((uint32_t)(w - l->w), ++l->gen);
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0)
		return -errno;
	*w = (struct watch){ .fd = fd, .gen = l->gen, .cb = cb, .arg = arg };
	return 0;
}

int
zn_loop_rearm(struct zn_loop *l, int fd, uint32_t events)
{
	struct watch *w = find(l, fd);
	struct epoll_event ev = { .events = events };

	if (w == NULL || fd < 0)
		return -ENOENT;
	ev.data.u64 = ev_data((uint32_t)(w - l->w), w->gen);
	return epoll_ctl(l->epfd, EPOLL_CTL_MOD, fd, &ev) < 0 ? -errno : 0;
}

void
zn_loop_unwatch(struct zn_loop *l, int fd)
{
	struct watch *w = fd < 0 ? NULL : find(l, fd);

	if (w == NULL)
		return;
	epoll_ctl(l->epfd, EPOLL_CTL_DEL, fd, NULL);
	w->fd = -1;
	w->gen = 0;
}

int
zn_loop_every(struct zn_loop *l, unsigned int period_ms, zn_loop_cb cb,
	      void *arg)
{
	uint64_t period = (uint64_t)(period_ms ? period_ms : 1) * 1000000;

	if (l->n_timers == LOOP_MAX_TIMERS)
		return -ENOSPC;
	l->t[l->n_timers++] = (struct timer){ .period_ns = period,
					      .next_ns = zn_now_ns() + period,
					      .cb = cb, .arg = arg };
	return 0;
}

int
zn_loop_on_wake(struct zn_loop *l, zn_loop_cb cb, void *arg)
{
	if (l->n_hooks == LOOP_MAX_HOOKS)
		return -ENOSPC;
	l->h[l->n_hooks++] = (struct hook){ .cb = cb, .arg = arg };
	return 0;
}

void
zn_loop_wake_within(struct zn_loop *l, unsigned int ms)
{
	if (l->within_ms == 0 || ms < l->within_ms)
		l->within_ms = ms ? ms : 1;
}

void
zn_loop_wake(struct zn_loop *l)
{
	uint64_t one = 1;

	(void)!write(l->wake_fd, &one, sizeof(one));
}

int
zn_loop_run_once(struct zn_loop *l, unsigned int max_ms)
{
	struct epoll_event evs[LOOP_BATCH];
	uint64_t now = zn_now_ns(), wait_ns = (uint64_t)max_ms * 1000000;
	int n;

	if (l->within_ms != 0 && l->within_ms < max_ms)
		wait_ns = (uint64_t)l->within_ms * 1000000;
	l->within_ms = 0;
	for (unsigned int i = 0; i < l->n_timers; i++)
		if (l->t[i].next_ns <= now)
			wait_ns = 0;
		else if (l->t[i].next_ns - now < wait_ns)
			wait_ns = l->t[i].next_ns - now;
	/* Round up: waking a little early would spin until the timer. */
	n = epoll_wait(l->epfd, evs, LOOP_BATCH,
		       (int)((wait_ns + 999999) / 1000000));
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n; i++) {
		uint32_t idx = (uint32_t)evs[i].data.u64;
		uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
		struct watch *w = &l->w[idx];

		if (idx < LOOP_MAX_WATCH && w->fd >= 0 && w->gen == gen)
			w->cb(w->arg, evs[i].events);
	}
	now = zn_now_ns();
	for (unsigned int i = 0; i < l->n_timers; i++) {
		struct timer *t = &l->t[i];

		if (t->next_ns > now)
			continue;
		/* Next period from now: a slow loop skips ticks rather than
		 * running them back to back. */
		t->next_ns = now + t->period_ns;
		t->cb(t->arg);
	}
	for (unsigned int i = 0; i < l->n_hooks; i++)
		l->h[i].cb(l->h[i].arg);
	return n < 0 ? 0 : n;
}
