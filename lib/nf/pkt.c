/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include <zeronf/pkt.h>

#include "nf_pvt.h"

/* Set once per process: by zn_nf_open() in an NF, at start in the manager;
 * -1 (invalid) before that. */
int ZN_API zn_pkt_meta_offset = -1;
