/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

#include <string.h>

#include "flowmon.h"

/*
 * flowmon --decap: fragmented IPv4 datagrams as Zeek counts them. Zeek reassembles
 * and counts a datagram once, when its last missing fragment arrives; one
 * that never completes it never sees. Here the first fragment (what the
 * datagram's flow and any tunnel inside are parsed from) waits in a small
 * table until the datagram's other fragments are in, then counts as the
 * datagram. Datagrams still incomplete when the table is full go, oldest
 * first, uncounted ("fragments_lost"). Without --decap, or for a first
 * fragment too big to keep, the first fragment counts at once
 * (ndpiReader's rule). IPv6 fragments are not tracked.
 */
static struct fm_frag *
frag_find(struct flowmon *fm, const uint8_t *ip)
{
	struct fm_frags *fs = &fm->frags;
	struct fm_frag *f, *free_slot = NULL, *oldest = &fs->slot[0];

	for (f = fs->slot; f < fs->slot + FRAG_SLOTS; f++) {
		if (f->age == 0) {
			free_slot = free_slot ? free_slot : f;
			continue;
		}
		if (f->id == dpi_rd16(ip + 4) && f->proto == ip[9] &&
		    memcmp(f->addrs, ip + 12, 8) == 0)
			return f;
		if (f->age < oldest->age)
			oldest = f;
	}
	if (free_slot == NULL) {
		if (oldest->have_first)
			fm->tally.v[C_FRAG_LOST]++; /* a datagram that never completed */
		free_slot = oldest;
	}
	f = free_slot;
	memset(f, 0, offsetof(struct fm_frag, data));
	f->age = ++fs->age;
	memcpy(f->addrs, ip + 12, 8);
	f->id = dpi_rd16(ip + 4);
	f->proto = ip[9];
	return f;
}

/* Note a fragment (IPv4 header @p ip); true once the datagram is whole. */
static bool
frag_piece(struct fm_frag *f, const uint8_t *ip)
{
	uint16_t fo = dpi_rd16(ip + 6);
	uint32_t off = (uint32_t)(fo & 0x1fff) * 8;
	uint32_t ihl = (uint32_t)(ip[0] & 0xf) * 4, tot = dpi_rd16(ip + 2);
	uint32_t n = tot > ihl ? tot - ihl : 0;
	bool dup = false;

	for (unsigned int i = 0; i < f->n_offs; i++)
		dup |= f->offs[i] == (fo & 0x1fff);
	if (!dup && f->n_offs < FRAG_PIECES) {
		f->offs[f->n_offs++] = (uint16_t)(fo & 0x1fff);
		f->got += n;
	}
	if (!(fo & 0x2000))
		f->total = off + n; /* the last fragment */
	return f->have_first && f->total != 0 && f->got >= f->total;
}

bool
fm_frag_track(struct flowmon *fm, const uint8_t *data, uint32_t plen,
	      uint32_t len, int dlt, unsigned int depth, enum dpi_skip rc,
	      const struct dpi_pkt *pkt, struct fm_frag **done)
{
	const uint8_t *ip = pkt->l3;
	struct fm_frag *f;

	*done = NULL;
	if (ip == NULL || pkt->l3_len < 20 || (ip[0] >> 4) != 4 ||
	    (dpi_rd16(ip + 6) & 0x3fff) == 0 || (rc == DPI_OK && plen >
						   FRAG_KEEP))
		return false; /* not a fragment we track */
	if (rc != DPI_OK && rc != DPI_SKIP_FRAGMENT)
		return false;
	if (fm->frags.replaying) {
		/* A fragment inside a datagram being counted from its kept
		 * first fragment (nested in a tunnel): only a crafted packet
		 * does that. Not tracked: kept in its own slot it overwrote
		 * what was being read (memcpy onto itself), or completed its
		 * datagram again and again (a stack overflow), and two such
		 * datagrams could do it to each other. Found by fuzzing; the
		 * input is fuzz/regress/flowmon/fragment-inside-its-own-datagram. */
		fm->tally.v[C_NOT_FLOW]++;
		return true;
	}
	f = frag_find(fm, ip);
	if (rc == DPI_OK) { /* the first fragment: keep it */
		memcpy(f->data, data, plen);
		f->plen = plen;
		f->len = len;
		f->dlt = dlt;
		f->depth = depth;
		f->have_first = true;
	} else {
		fm->tally.v[C_NOT_FLOW]++; /* as a later fragment always was */
	}
	if (frag_piece(f, ip)) {
		/* Kept (never the oldest) while it is counted and a fragment
		 * inside it may look for a slot, then free (fm_frag_done). */
		f->age = UINT64_MAX;
		fm->frags.replaying = true;
		*done = f;
	}
	return true;
}

void
fm_frag_done(struct flowmon *fm, struct fm_frag *f)
{
	fm->frags.replaying = false;
	f->age = 0;
}

