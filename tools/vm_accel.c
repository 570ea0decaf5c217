/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* zeronf-vm --accel auto (the default): KVM where the host's KVM boots
 * the guest kernel, else TCG. /dev/kvm is not enough to know: a host
 * whose KVM is a paravirtual hypervisor (PVM) opens it, and a stock
 * kernel then dies in emulation failures and hangs. So the first VM
 * boots once with KVM and `zeronf.probe=1`, whose init says hello and
 * powers off; no hello within VM_PROBE_NS means TCG. The answer is kept
 * for the host's boot, per kernel and QEMU (a file in /run). */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zeronf_vm.h"
#include "../lib/common/zn_vm.h"

#define VM_PROBE_NS (10ULL * 1000 * 1000 * 1000)

/* FNV-1a of what the answer depends on. */
static uint64_t
key(void)
{
	struct stat st = { 0 };
	char buf[PATH_MAX + 128];
	uint64_t h = 0xcbf29ce484222325ULL;
	int n;

	stat(V.kernel, &st);
	n = snprintf(buf, sizeof(buf), "%s:%lld:%lld:%s", V.kernel,
		     (long long)st.st_size, (long long)st.st_mtime, V.qemu);
	for (int i = 0; i < n && i < (int)sizeof(buf); i++)
		h = (h ^ (uint8_t)buf[i]) * 0x100000001b3ULL;
	return h;
}

/* Boot with KVM once: true if the guest's init said hello in time. */
static bool
probe(void)
{
	uint64_t end;
	bool hello = false;

	V.accel = "kvm";
	V.probe = true;
	if (vm_start_qemu() < 0) {
		V.probe = false;
		return false;
	}
	end = zn_now_ns() + VM_PROBE_NS;
	while (!hello && zn_now_ns() < end) {
		struct pollfd p = { .fd = V.port, .events = POLLIN };
		uint8_t buf[64];
		ssize_t n;

		if (poll(&p, 1, 100) != 1)
			continue;
		n = read(V.port, buf, sizeof(buf));
		if (n <= 0)
			break; /* QEMU gone: KVM refused */
		hello = memchr(buf, ZN_VM_HELLO, (size_t)n) != NULL;
	}
	kill(V.qemu_pid, SIGKILL);
	waitpid(V.qemu_pid, NULL, 0);
	close(V.port);
	close(V.wake);
	V.port = V.wake = -1;
	V.probe = false;
	return hello;
}

void
vm_pick_accel(void)
{
	char cache[64], tmp[80], got[8] = "";
	bool kvm;
	FILE *f;
	int fd;

	if (strcmp(V.accel, "auto") != 0)
		return;
	fd = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		V.accel = "tcg";
		return;
	}
	close(fd);
	snprintf(cache, sizeof(cache), "/run/zeronf-vm-accel-%016" PRIx64,
		 key());
	f = fopen(cache, "re");
	if (f != NULL) {
		if (fgets(got, sizeof(got), f) == NULL)
			got[0] = '\0';
		fclose(f);
		got[strcspn(got, "\n")] = '\0';
		if (strcmp(got, "kvm") == 0 || strcmp(got, "tcg") == 0) {
			V.accel = strcmp(got, "kvm") == 0 ? "kvm" : "tcg";
			return;
		}
	}
	kvm = probe();
	V.accel = kvm ? "kvm" : "tcg";
	say("--accel auto: %s (this host's KVM %s %s)", V.accel,
	    kvm ? "boots" : "does not boot", V.kernel);
	snprintf(tmp, sizeof(tmp), "%s.%d", cache, (int)getpid());
	f = fopen(tmp, "we");
	if (f != NULL) {
		fprintf(f, "%s\n", V.accel);
		if (fclose(f) != 0 || rename(tmp, cache) != 0)
			unlink(tmp);
	}
}
