/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZERONF_H
#define ZERONF_H

/** @file Umbrella header: everything an NF needs. */

#include <zeronf/pkt.h>
#include <zeronf/nf.h>
#include <zeronf/flow.h>

#endif /* ZERONF_H */
