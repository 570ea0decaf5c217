/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <rte_mbuf_dyn.h>

#include "frames.h"

int
frames_option(struct frames *f, int c, const char *arg)
{
	unsigned long v;
	char *end;

	switch (c) {
	case 'T':
		f->tunnels = false;
		return 0;
	case 't':
		f->capture_time = true;
		return 0;
	case 'c':
	case 'i':
	case 'l':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *arg == '\0' || *end != '\0' || v > 86400ul * 365 ||
		    (c == 'c' && (v == 0 || v > (1ul << 26))) ||
		    (c == 'l' && v > 65535))
			return -EINVAL;
		if (c == 'c')
			f->capacity = (uint32_t)v;
		else if (c == 'i')
			f->idle_ms = v * 1000;
		else
			f->dlt = (int)v;
		return 0;
	default:
		return 1;
	}
}

void
frames_usage(FILE *o, const struct frames *d)
{
	fprintf(o,
		"  -c, --capacity N      flows tracked at most (default %u)\n"
		"  -i, --idle-s N        a flow idle N s ends (default %u; "
		"0 = never)\n"
		"  -T, --no-tunnels      do not look inside GTP-U, TZSP, "
		"CAPWAP\n"
		"  -t, --capture-time    packet time from RX timestamps (the "
		"manager's\n"
		"                        --rx-timestamp; net_pcap: capture "
		"time)\n"
		"  -l, --dlt N           link type of the frames (pcap DLT; "
		"default 1,\n"
		"                        Ethernet): a net_pcap port replaying "
		"another one\n",
		d->capacity, (unsigned int)(d->idle_ms / 1000));
}

void
frames_start(struct frames *f, const char *who)
{
	int bit = rte_mbuf_dynflag_lookup(RTE_MBUF_DYNFLAG_RX_TIMESTAMP_NAME,
					  NULL);

	f->ts_off = rte_mbuf_dynfield_lookup(RTE_MBUF_DYNFIELD_TIMESTAMP_NAME,
					     NULL);
	f->ts_flag = bit >= 0 ? 1ULL << bit : 0;
	if (f->capture_time && (f->ts_off < 0 || bit < 0))
		fprintf(stderr, "%s: no RX timestamps (start the manager "
			"with --rx-timestamp): using the clock\n", who);
}

uint64_t
frames_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t
frames_expiry_ms(const struct frames *f)
{
	return f->capture_time ? f->last_ms : frames_now_ms();
}

const uint8_t *
frames_get(struct frames *f, struct rte_mbuf *m, uint64_t now_ms,
	   uint32_t *len, uint64_t *ts_ms)
{
	/* one packet thread per NF: one buffer */
	static uint8_t linear[UINT16_MAX + 1];
	uint64_t t = now_ms;

	*len = RTE_MIN(rte_pktmbuf_pkt_len(m), (uint32_t)sizeof(linear));
	if (f->capture_time && f->ts_off >= 0 && (m->ol_flags & f->ts_flag))
		t = *RTE_MBUF_DYNFIELD(m, f->ts_off, uint64_t *) / 1000;
	if (t > f->last_ms)
		f->last_ms = t;
	*ts_ms = t;
	return rte_pktmbuf_read(m, 0, *len, linear);
}
