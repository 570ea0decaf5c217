/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZERONF_STEP_H
#define ZERONF_STEP_H

/**
 * @file
 * One step of a service chain: the type the manager's chains and flow
 * rules, the control protocol and NFs (zn_nf_flow_steer) all use, with
 * its one text form: "svc:S" (or a bare S), "port:P" or "drop", any but
 * "drop" followed by "@H" when the step is on another host: host H of the
 * fabric (docs/multihost.md; host ids are the deployment's, 1..254, the
 * same on every host).
 */

#include <stddef.h>
#include <stdint.h>

#include <rte_config.h>

enum zn_step_type {
	ZN_STEP_SERVICE = 1, /**< to an instance of service `id` */
	ZN_STEP_PORT = 2,    /**< out of port `id` (ends the chain) */
	ZN_STEP_DROP = 3,    /**< drop, counted as "chain" (ends the chain) */
};

/** A step is its type, host and id: compare those (zn_step_equal), not
 *  bytes. */
struct zn_step {
	uint8_t type; /**< enum zn_step_type */
	uint8_t host; /**< 0: this host; else the fabric host it runs on */
	uint16_t id;
};

/** Most hosts of a fabric: ids 1..ZN_STEP_MAX_HOST. */
#define ZN_STEP_MAX_HOST 254

static inline int
zn_step_equal(const struct zn_step *a, const struct zn_step *b)
{
	return a->type == b->type && a->host == b->host && a->id == b->id;
}

/** Most steps in a chain (the default chain, a rule's, a steered flow's). */
#define ZN_MAX_CHAIN_STEPS 32
/** Its earlier name, kept for NFs built against it. */
#define ZN_MAX_CHAIN_HOPS ZN_MAX_CHAIN_STEPS
/** Service ids are 1..ZN_STEP_MAX_SERVICE. */
#define ZN_STEP_MAX_SERVICE 255
/** Port ids are 0..ZN_STEP_MAX_PORT (the manager also checks the port
 *  exists when the chain is used). */
#define ZN_STEP_MAX_PORT (RTE_MAX_ETHPORTS - 1)

/**
 * Parse one step (NUL-terminated, no spaces). Numbers are decimal ("010"
 * is 10). @return 0, or -EINVAL (@p step zeroed).
 */
int zn_step_parse(const char *s, struct zn_step *step);

/**
 * Parse comma-separated steps, e.g. "1,svc:2,port:0,drop": no empty step,
 * 1..@p max of them.
 * @return the number of steps, or -EINVAL.
 */
int zn_steps_parse(const char *text, struct zn_step *steps, unsigned int max);

/** zn_steps_parse with the reason for -EINVAL in @p err (may be NULL). */
int zn_steps_parse_err(const char *text, struct zn_step *steps,
		       unsigned int max, char *err, size_t errlen);

/** Format as "svc:1", "port:0", "svc:2@3" or "drop". */
void zn_step_format(const struct zn_step *step, char *buf, size_t len);

#endif /* ZERONF_STEP_H */
