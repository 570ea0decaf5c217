/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
/* flowmon's decoders with --decap (tunnels, 802.11, radiotap, A-MSDU,
 * FabricPath, PBB, VN-Tag, fragment tracking) on any frames, in its real
 * flow table: the NF's own parts (nfs/flowmon/account.c and what it
 * calls) on a struct flowmon of the fuzzer's. An input is a sequence of
 * frames, each: a byte picking the link type, a byte saying whether the
 * capture cut it, a 16-bit big-endian length, the frame. The fragment
 * table starts empty with each input, so an input replays alone
 * (fuzz/regress/flowmon/ keeps the ones that found bugs). */
#include <string.h>

#include "../nfs/flowmon/flowmon.h"
#include "fuzz_eal.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
static struct flowmon fm;
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const int fz_dlts[] = {
	DPI_DLT_EN10MB, DPI_DLT_RAW, DPI_DLT_LINUX_SLL, DPI_DLT_NULL,
	DPI_DLT_IPV4, DPI_DLT_IPV6, 105 /* 802.11 */, 127 /* radiotap */,
};

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	fuzz_eal_init((*argv)[0]);
	fm.fr = (struct frames)FRAMES_INIT(1u << 16, 60000);
	fm.ipfix.fd = -1;
	fm.decap = true;
	/* a small table: filling it up is a path to reach too */
	fm.ft = zn_ft_create(&ZN_FT_OPTS(.name = "fz_flowmon",
					 .capacity = 1024,
					 .data_size = sizeof(struct fm_rec),
					 .idle_timeout_ns = 60000000000ull,
					 .flags = ZN_FT_F_BIDIR));
	return fm.ft == NULL ? -1 : 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	memset(&fm.frags, 0, sizeof(fm.frags));
	while (size >= 4) {
		uint32_t n = (uint32_t)data[2] << 8 | data[3];

		if (n > size - 4)
			n = (uint32_t)(size - 4);
		fm_account(&fm, data + 4, n,
			fz_dlts[data[0] % (sizeof(fz_dlts) / sizeof(fz_dlts[0]))],
			0, data[1] & 1);
		data += 4 + n;
		size -= 4 + n;
	}
	return 0;
}
