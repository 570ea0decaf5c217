/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_RL_H
#define ZN_RL_H

/*
 * The ratelimit NF (docs/nfs/ratelimit.md): token-bucket policers in two
 * levels. A packet belongs to the first class whose match it meets; the
 * class has one bucket (its aggregate rate) and, with "per", a bucket per
 * flow, source or destination inside it; a packet passes when every
 * bucket it is counted in has the tokens for it, and takes them from all.
 *
 * Buckets count in packets or in bits (of the whole frame), integers in
 * units of 1e-9 of a packet or bit, so that nanoseconds times a rate per
 * second is the number of them earned: exact, and the same in the test's
 * reference (tests/pkt/test_ratelimit.py).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RL_MAX_CLASSES 64
#define RL_NAME_LEN 32

enum rl_unit { RL_PACKETS = 0, RL_BITS = 1 };
enum rl_per { RL_PER_NONE = 0, RL_PER_FLOW, RL_PER_SRC, RL_PER_DST };

/* A rate and its bucket: @rate units a second, @burst units at most. */
struct rl_spec {
	uint8_t unit;      /* enum rl_unit */
	uint64_t rate;     /* 0: no limit */
	uint64_t burst;
};

struct rl_bucket {
	uint64_t tokens;   /* in 1e-9 units */
	uint64_t last_ns;
};

struct rl_match {
	uint8_t family;    /* 0: any; 4; 6 */
	bool has_proto;
	uint8_t proto;
	uint8_t src_len, dst_len;
	uint8_t src[16], dst[16];
	uint16_t dport_lo, dport_hi;
	int32_t vlan;      /* -1: any; else the outer VLAN id */
	uint8_t flags_mask, flags_cmp; /* TCP flags */
};

struct rl_class {
	char name[RL_NAME_LEN];
	struct rl_match match;
	struct rl_spec agg;    /* the class's own bucket */
	uint8_t per;           /* enum rl_per */
	struct rl_spec each;   /* each flow/source/destination's */
	struct rl_bucket bucket;
	uint64_t passed, dropped_class, dropped_per, dropped_full;
	uint64_t passed_bytes;
};

struct rl_conf {
	struct rl_class c[RL_MAX_CLASSES + 1]; /* the last: the default */
	unsigned int n;        /* classes before the default */
	bool has_default;      /* else what no class matches passes */
};

/** Parse JSON config @p text (docs/nfs/ratelimit.md) into @p conf.
 *  @return 0, or -EINVAL with why (a JSON path) in @p err. */
int rl_conf_parse(const char *text, struct rl_conf *conf, char *err,
		  size_t errlen);

/** "100pps", "10mbit", "1.5gbit", "64kb" ... into @p units of @p unit
 *  (a rate per second, or a size for a burst). @return 0 or -EINVAL. */
int rl_parse_amount(const char *s, bool burst, uint8_t *unit,
		    uint64_t *units);

/** The default burst of a rate: 10 ms of it, at least one packet
 *  (or one 1514-byte frame). */
uint64_t rl_default_burst(const struct rl_spec *s);

/** Whether bucket @p b of @p s has @p cost units at @p now_ns (refilled
 *  to then first); a bucket of no rate always has. */
static inline bool
rl_has(struct rl_bucket *b, const struct rl_spec *s, uint64_t cost,
       uint64_t now_ns)
{
	unsigned __int128 earned;
	uint64_t cap = s->burst * 1000000000ull;

	if (s->rate == 0)
		return true;
	if (now_ns > b->last_ns) {
		earned = (unsigned __int128)(now_ns - b->last_ns) * s->rate;
		b->tokens = earned >= cap - b->tokens ? cap :
			    b->tokens + (uint64_t)earned;
		b->last_ns = now_ns;
	}
	return b->tokens >= cost * 1000000000ull;
}

static inline void
rl_take(struct rl_bucket *b, const struct rl_spec *s, uint64_t cost)
{
	if (s->rate != 0)
		b->tokens -= cost * 1000000000ull;
}

/** A full bucket of @p s at @p now_ns. */
static inline void
rl_fill(struct rl_bucket *b, const struct rl_spec *s, uint64_t now_ns)
{
	b->tokens = s->burst * 1000000000ull;
	b->last_ns = now_ns;
}

#endif /* ZN_RL_H */
