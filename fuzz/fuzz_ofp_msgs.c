/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* The OpenFlow endpoint's decoding (mgr/sdn/ofp_msgs.c) on any bytes, as a
 * controller may send them: libopenvswitch's ofptype_decode first, as the
 * endpoint does, then what the endpoint makes of a FLOW_MOD, a PACKET_OUT
 * or a flow statistics request. No read past the message (ASan, the
 * message copied to its exact size), and what comes out is what the table
 * takes: a match's value within its mask, surviving the way back to
 * OpenFlow (the flow statistics an entry is reported with) unchanged; a
 * chain of services then at most one port; outputs within the instance's
 * ports. The first byte picks the message's type when the input is long
 * enough to be one (the rest is its body), so that the fuzzer reaches past
 * the header without learning it. */
#include <stdlib.h>
#include <string.h>

#include <openvswitch/match.h>
#include <openvswitch/ofp-errors.h>
#include <openvswitch/ofp-flow.h>
#include <openvswitch/ofp-msgs.h>
#include <openvswitch/ofpbuf.h>
#include <openvswitch/vlog.h>

#include "../mgr/sdn/ofp_pvt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define N_PORTS 4

static const uint8_t types[] = { 14 /* FLOW_MOD */, 13 /* PACKET_OUT */,
				 18 /* MULTIPART_REQUEST */, 15 /* GROUP_MOD */ };

static void
check_mod(const struct zn_oft_mod *mod)
{
	struct zn_oft_key v, k;
	struct match mt;

	for (unsigned int i = 0; i < ZN_OFT_KEY_WORDS; i++)
		if (zn_oft_key_word(&mod->value, i) &
		    ~zn_oft_key_word(&mod->mask, i))
			abort(); /* bits outside the mask */
	ofp_match_from_key(&mod->value, &mod->mask, &mt);
	if (ofp_key_from_match(&mt, &v, &k) != 0 ||
	    memcmp(&v, &mod->value, sizeof(v)) != 0 ||
	    memcmp(&k, &mod->mask, sizeof(k)) != 0)
		abort(); /* reported otherwise than it is kept */
	if (mod->command <= 2 && mod->act.verdict == ZN_OFT_CHAIN) {
		for (unsigned int i = 0; i < mod->act.n_steps; i++) {
			const struct zn_step *st = &mod->act.steps[i];

			if (st->type == ZN_STEP_PORT &&
			    (i != mod->act.n_steps - 1u || st->id >= N_PORTS))
				abort();
			if (st->type == ZN_STEP_SERVICE &&
			    (st->id == 0 || st->id > ZN_STEP_MAX_SERVICE))
				abort();
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;
	struct ofp_header *oh;
	enum ofptype t;
	size_t len;

	if (!quiet) {
		ofp_codec_init();
		quiet = true;
	}
	if (size < 2)
		return 0;
	/* a header of version 1.3, the picked type, the length the input
	 * has (at most 65535), then the input's bytes as the body */
	len = sizeof(*oh) + size - 1 > 65535 ? 65535 : sizeof(*oh) + size - 1;
	oh = aligned_alloc(8, (len + 7) & ~(size_t)7);
	if (oh == NULL)
		return 0;
	memcpy((uint8_t *)oh + sizeof(*oh), data + 1, len - sizeof(*oh));
	oh->version = 4;
	oh->type = types[data[0] % sizeof(types)];
	oh->length = htons((uint16_t)len);
	oh->xid = 0;
	if (ofptype_decode(&t, oh) == 0) {
		if (t == OFPTYPE_FLOW_MOD) {
			struct zn_oft_mod mod;

			if (ofp_flow_mod_decode(N_PORTS, oh, &mod) == 0)
				check_mod(&mod);
		} else if (t == OFPTYPE_PACKET_OUT) {
			static struct ofp_pout po;

			if (ofp_packet_out_decode(N_PORTS, oh, &po) == 0 &&
			    (po.n_out > OFP_MAX_OUTS ||
			     (po.len > 0 &&
			      ((const uint8_t *)po.data <
			       (const uint8_t *)oh ||
			       (const uint8_t *)po.data + po.len >
			       (const uint8_t *)oh + len))))
				abort(); /* the packet outside the message */
		} else if (t == OFPTYPE_GROUP_MOD) {
			static struct zn_oft_group_mod gm;

			if (ofp_group_mod_decode(N_PORTS, oh, &gm) == 0) {
				if (gm.n_buckets > ZN_OFT_GROUP_BUCKETS)
					abort();
				for (unsigned int b = 0; b < gm.n_buckets; b++)
					if (gm.bucket[b].act.verdict !=
					    ZN_OFT_CHAIN)
						abort(); /* a bucket: a chain */
			}
		} else if (t == OFPTYPE_FLOW_STATS_REQUEST ||
			   t == OFPTYPE_AGGREGATE_STATS_REQUEST) {
			struct ofputil_flow_stats_request fsr;
			struct zn_oft_key v, k;

			if (ofputil_decode_flow_stats_request(&fsr, oh, NULL,
							      NULL) == 0)
				(void)ofp_key_from_match(&fsr.match, &v, &k);
		}
	}
	free(oh);
	return 0;
}
