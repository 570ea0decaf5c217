/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_TEST_H
#define ZN_TEST_H

/* Minimal self-registering unit tests: ZN_TEST(name) { ... } in any file,
 * one runner (main.c) that runs all or those named on its command line. */

#include <stdio.h>
#include <stdlib.h>

struct zn_test {
	const char *name;
	void (*fn)(void);
	struct zn_test *next;
};

void zn_test_register(struct zn_test *t);
extern int zn_test_failures;

#define ZN_TEST(tname)                                                        \
	static void test_##tname(void);                                       \
	static struct zn_test reg_##tname = { #tname, test_##tname, NULL };   \
	__attribute__((constructor)) static void register_##tname(void)       \
	{                                                                     \
		zn_test_register(&reg_##tname);                               \
	}                                                                     \
	static void test_##tname(void)

#define ZT_CHECK(cond)                                                        \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__,       \
				__LINE__, #cond);                             \
			zn_test_failures++;                                   \
		}                                                             \
	} while (0)

#define ZT_EQ(a, b)                                                           \
	do {                                                                  \
		long long va_ = (long long)(a), vb_ = (long long)(b);         \
		if (va_ != vb_) {                                             \
			fprintf(stderr, "  FAIL %s:%d: %s == %lld, want %s "  \
				"== %lld\n", __FILE__, __LINE__, #a, va_, #b, \
				vb_);                                         \
			zn_test_failures++;                                   \
		}                                                             \
	} while (0)

#endif /* ZN_TEST_H */
