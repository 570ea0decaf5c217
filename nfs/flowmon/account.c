/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* flowmon: a frame counted into its flow (dpi_parse's flows, as
 * ndpiReader 4.2 forms them), and with --decap what its tunnels and
 * 802.11 / SNAP payloads carry, each in its own flow (as Zeek counts). */

#include "flowmon.h"

/* TCP flags of the frame's L4 header (dpi_parse found the L3 header). */
static uint8_t
tcp_flags(const struct dpi_pkt *p)
{
	const uint8_t *l3 = p->l3, *l4;
	uint32_t off;

	if (p->key.proto != 6)
		return 0;
	if (p->key.ip_version == 4) {
		off = (uint32_t)(l3[0] & 0xf) * 4;
	} else {
		off = 40; /* extension headers: not for TCP flags */
		if (l3[6] != 6)
			return 0;
	}
	if (off + 14 > p->l3_len)
		return 0;
	l4 = l3 + off;
	return l4[13];
}

/* What LLC/SNAP at @p p (@p n bytes) carries, to fm_account_ip(); false if
 * it is not SNAP or carries no IP. */
static bool
snap_account(struct flowmon *fm, const uint8_t *p, uint32_t n, uint32_t len, unsigned int depth)
{
	int d;

	if (n < 8 || p[0] != 0xaa || p[1] != 0xaa ||
	    (d = fm_etype_dlt(dpi_rd16(p + 6))) < 0)
		return false;
	fm_account_ip(fm, p + 8, n - 8, len, d, depth, false);
	return true;
}

/* --decap: 802.11 data frames (link type 105, or 127: behind a radiotap
 * header; Aruba's GRE carries them too), parsed as Zeek parses them: data
 * frames only, not the subtypes without data; the fourth address when both
 * DS bits are set; the QoS field; protected frames skipped; then LLC/SNAP,
 * or with the QoS field's A-MSDU bit each subframe's (DA, SA, length,
 * LLC/SNAP, padding to 4 bytes): one packet each, as Zeek counts them.
 * Returns false if no packet was found in the frame. */
static bool
wifi_account(struct flowmon *fm, const uint8_t *p, uint32_t n, uint32_t len, int dlt,
	     unsigned int depth)
{
	uint32_t off = 0, h = 24, i;
	const uint8_t *w;
	bool amsdu = false, any = false;

	if (dlt == DLT_IEEE802_11_RADIO) {
		if (n < 4)
			return false;
		off = (uint32_t)p[2] | (uint32_t)p[3] << 8; /* little endian */
	}
	if (n < off + h)
		return false;
	w = p + off;
	n -= off;
	if (!((w[0] >> 2) & 0x02) || ((w[0] >> 4) & 0x04))
		return false; /* management, control; null-data subtypes */
	if ((w[1] & 0x03) == 0x03)
		h += 6;
	if ((w[0] >> 4) & 0x08) { /* QoS data */
		if (n < h + 2)
			return false;
		amsdu = (w[h] & 0x80) != 0;
		h += 2;
	}
	if ((w[1] & 0x40) || n < h)
		return false; /* encrypted */
	if (!amsdu)
		return snap_account(fm, w + h, n - h, len, depth);
	for (i = h; i + 14 <= n;) {
		uint32_t m = dpi_rd16(w + i + 12);

		i += 14;
		if (m > n - i)
			break;
		any |= snap_account(fm, w + i, m, m, depth);
		i += m + (4 - (14 + m) % 4) % 4;
	}
	return any;
}

void
fm_account(struct flowmon *fm, const uint8_t *data, uint32_t len, int dlt,
	   unsigned int depth, bool cut)
{
	uint8_t buf[256];
	uint32_t plen = len; /* what is parsed; len: bytes counted */

	if (depth == 0)
		fm->tally.v[C_PACKETS]++;
	if (cut) {
		const uint8_t *u = fm_uncut(data, &plen, dlt, buf,
					    sizeof(buf));

		data = u != NULL ? u : data;
		len = plen;
	}
	if (fm->decap && depth == 0 && dlt == DPI_DLT_EN10MB) {
		const uint8_t *u = fm_strip_l2(data, &plen, fm->l2buf);

		data = u != NULL ? u : data;
	} else if (fm->decap && (dlt == DLT_IEEE802_11 ||
			     dlt == DLT_IEEE802_11_RADIO)) {
		if (!wifi_account(fm, data, plen, len, dlt, depth))
			fm->tally.v[C_NOT_FLOW]++;
		return;
	}
	fm_account_ip(fm, data, plen, len, dlt, depth, false);
}

void
fm_account_ip(struct flowmon *fm, const uint8_t *data, uint32_t plen,
	      uint32_t len, int dlt, unsigned int depth, bool tracked)
{
	/* as ndpiReader, time never goes back: the latest packet time seen,
	 * this one's included */
	uint64_t ts = fm->fr.last_ms;
	const uint8_t *inner = NULL;
	uint32_t ilen = 0;
	int idlt = 0;
	bool outer = true;
	struct dpi_pkt pkt;
	struct zn_ft_hit hit;
	struct fm_rec *r;
	struct fm_frag *done;
	enum dpi_skip rc;
	int dir;

	/* --decap: tunnels as Zeek, not ndpiReader, looks into them */
	rc = dpi_parse(data, plen, dlt, fm->fr.tunnels && !fm->decap, &pkt);
	if (fm->decap && !tracked &&
	    fm_frag_track(fm, data, plen, len, dlt, depth, rc, &pkt, &done)) {
		if (done != NULL) { /* the datagram, from its first fragment */
			fm_account_ip(fm, done->data, done->plen, done->len,
				      done->dlt, done->depth, true);
			fm_frag_done(fm, done);
		}
		return;
	}
	if (rc != DPI_OK) {
		fm->tally.v[C_NOT_FLOW]++;
		return;
	}
	if (fm->decap && depth < DECAP_DEPTH)
		inner = fm_tunnel_inner(&pkt, &ilen, &idlt, &outer);
	if (outer) {
		r = (struct fm_rec *)dpi_count(fm->ft, &pkt, len, ts, &hit,
					       &dir);
		if (r == NULL) {
			fm->tally.v[C_FULL]++;
		} else {
			fm->tally.v[C_FLOWS] += hit.created;
			r->flags[dir] |= tcp_flags(&pkt);
		}
	}
	if (inner != NULL) {
		fm->tally.v[C_DECAP]++;
		fm_account(fm, inner, ilen, idlt, depth + 1,
			pkt.key.ip_version == 4 && (pkt.l3[6] & 0x20));
	}
}

