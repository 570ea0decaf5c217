/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_POLICY_H
#define ZN_POLICY_H

/*
 * Autoscaling and reactions (policy.c), NetVM's orchestration in the
 * manager: once a second, per policy, a condition is sampled and acted on
 * once it held long enough.
 *
 * - autoscale: a launched NF's service scales out (one replica, up to
 *   max) while its RX rings stay fuller than a threshold, or ingress
 *   drops come faster than a rate, for for_s seconds; in (down to min)
 *   once they stayed below a low threshold for in_for_s.
 * - reaction: while an NF counter of a watched launched NF (the monitor's
 *   tcp_syn...) grows faster than a rate for for_s seconds, a launched NF
 *   is put in front of the default chain (a filter); once the rate stayed
 *   below for remove_after_s, it is taken out.
 *
 * Every decision is an event (event.h). Commands policy.set, policy.list.
 * Control thread only.
 */

struct zn_mgr;


#endif /* ZN_POLICY_H */
