/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* zeronf-vm's one VM (struct vm, zeronf_vm.h) and its log line: the state
 * every part of the helper reads (zeronf-vm.c, vm_boot.c, vm_accel.c),
 * owned here so that none of them calls another back for it. */

#include <stdarg.h>
#include <stdio.h>

#include "zeronf_vm.h"

struct vm V = { .slot_fd = -1, .kick_fd = -1, .port = -1, .wake = -1,
	.sig_fd = -1,
	.mgr_fd = -1, .mgr_lock_fd = -1, .nf_code = -1, .mem_mb = 1024,
	.vcpus = 1, .qemu = "qemu-system-x86_64", .accel = "auto" };

void
say(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "zeronf-vm[%s]: ", V.name[0] ? V.name : "?");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
