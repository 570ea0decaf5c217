/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_NF_OPTIONS_H
#define ZN_NF_OPTIONS_H

/*
 * libzeronf's own options (before "--"): the one table, for libzeronf
 * (lib/nf/nf_args.c) and for zeronf-vm, which takes them first too. A
 * program that parses with it sees every option libzeronf has (a new one
 * cannot shift the split of its arguments) and refuses, by name, those
 * it has no use for.
 */

#include <getopt.h>

#define ZN_NF_SHORT_OPTIONS "i:s:n:h"
#define ZN_NF_LONG_OPTIONS                                                  \
	{ "instance", required_argument, NULL, 'i' },                       \
	{ "service", required_argument, NULL, 's' },                        \
	{ "name", required_argument, NULL, 'n' },                           \
	{ "cpus", required_argument, NULL, 'c' },                           \
	{ "log-level", required_argument, NULL, 'l' },                      \
	{ "wait", required_argument, NULL, 'w' },                           \
	{ "trust-group", required_argument, NULL, 'g' },                    \
	{ "guest", required_argument, NULL, 'G' },                          \
	{ "help", no_argument, NULL, 'h' }

#endif /* ZN_NF_OPTIONS_H */
