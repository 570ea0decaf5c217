/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZERONF_BUNDLE_H
#define ZERONF_BUNDLE_H

/**
 * @file
 * Bundles: several NFs run to completion in one thread of one process.
 *
 * Each NF of a bundle is an NF as any other for the manager: its own slot,
 * service, counters, drop reasons, commands and telemetry. The bundle's
 * thread gives each its turn in order (take a burst, call ops->burst, hand
 * it on), so a burst handed from one to the next (on the link between
 * them, a ring in this thread's cache) is handled by the next in the same
 * pass, without a thread hand-off; while a hand-off waits for room, the
 * other NFs take their turns (the one it waits for may be among them).
 * The thread sleeps only when none has work, woken by any of them.
 *
 * What a bundle gives up (docs/security.md "Bundles"): its NFs share an
 * address space, so one can read and write what the others hold; they
 * are of one trust domain (the same trust group, or none). They share a
 * fate: a crash of one ends the process, the manager reclaims every
 * slot (nothing leaked) and its launcher restarts the bundle; and they
 * stop together (a stop of one stops all).
 *
 * The shared objects: an NF built with ZN_NF_REGISTER() as a shared
 * module exports zn_nf_module_ops(); zeronf-bundle (nfs/bundle/) loads
 * them and calls zn_bundle_main().
 */

#include <zeronf/nf.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Most NFs in one bundle. */
#define ZN_BUNDLE_MAX 8

/** One NF of a bundle: what it is, and its command line as it would be
 *  its own program's (library options, then "--" and its NF options; the
 *  instance, CPUs and trust group must be the same for all). */
struct zn_bundle_nf {
	const struct zn_nf_ops *ops;
	int argc;
	char **argv;
};

/**
 * Open the @p n NFs in order (one EAL, on the first one's lcore), run
 * them in this thread until stopped (SIGINT/SIGTERM, or the manager
 * stopping any of them, stops all), then close them. Returns a process
 * exit status as zn_nf_main(): 0 after a clean stop, 1 on an error, 2 on
 * a usage error, 3 when the manager is gone.
 */
int zn_bundle_main(const struct zn_bundle_nf *nfs, unsigned int n);

#ifdef __cplusplus
}
#endif

#endif /* ZERONF_BUNDLE_H */
