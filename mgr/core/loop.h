/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_LOOP_H
#define ZN_LOOP_H

/*
 * The control thread's event loop (loop.c): one epoll set, periodic
 * timers and hooks run after every wake-up. Modules register what they
 * own (registry: NF pidfds and the kick socket; ctl: the control socket
 * and its clients; telemetry: its eventfd; fdir, lb, stats: ticks) and
 * the loop knows none of them. Control thread only, except
 * zn_loop_wake().
 */

#include <stdint.h>

struct zn_loop;

/** An fd is ready: @p events as epoll reported them. */
typedef void (*zn_loop_fd_cb)(void *arg, uint32_t events);
/** A timer fired, or the loop woke up (zn_loop_on_wake). */
typedef void (*zn_loop_cb)(void *arg);

/** @return a loop, or NULL (errno set). */
struct zn_loop *zn_loop_create(void);
/** Close the epoll set (not the watched fds: their owners close them). */
void zn_loop_destroy(struct zn_loop *l);

/** Call @p cb when @p fd is ready for @p events (EPOLLIN...). One watch
 *  per fd. @return 0, -EEXIST, -ENOSPC or -errno of epoll_ctl. */
int zn_loop_watch(struct zn_loop *l, int fd, uint32_t events,
		  zn_loop_fd_cb cb, void *arg);
/** Change the events of a watched fd. @return 0, -ENOENT or -errno. */
int zn_loop_rearm(struct zn_loop *l, int fd, uint32_t events);
/** Forget @p fd (before closing it). Safe from inside a callback: an event
 *  of this fd already fetched is not delivered. */
void zn_loop_unwatch(struct zn_loop *l, int fd);

/** Call @p cb every @p period_ms (first after one period).
 *  @return 0 or -ENOSPC. */
int zn_loop_every(struct zn_loop *l, unsigned int period_ms, zn_loop_cb cb,
		  void *arg);
/** Call @p cb after every wake-up (events, timers or time-out), in the
 *  order registered. @return 0 or -ENOSPC. */
int zn_loop_on_wake(struct zn_loop *l, zn_loop_cb cb, void *arg);
/** The next wait lasts at most @p ms (once): a module with work in
 *  progress polls sooner. */
void zn_loop_wake_within(struct zn_loop *l, unsigned int ms);

/** Wait up to @p max_ms for events and timers, dispatch them, run the
 *  wake hooks. @return events dispatched, or -errno of epoll_wait. */
int zn_loop_run_once(struct zn_loop *l, unsigned int max_ms);

/** Any thread: wake the loop's epoll_wait now. */
void zn_loop_wake(struct zn_loop *l);

#endif /* ZN_LOOP_H */
