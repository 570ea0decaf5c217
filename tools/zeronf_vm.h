/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZERONF_VM_H
#define ZERONF_VM_H

/* zeronf-vm's state (vm_state.c; zeronf-vm.c: options, manager, slot,
 * the relay; vm_boot.c: the VM's initramfs and QEMU; vm_accel.c: kvm or
 * tcg). One VM per process. */

#include <limits.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "../lib/common/zn_util.h"
#include "../lib/shm/zn_shm.h"

#define MAX_NF_ARGS 256

struct vm {
	/* libzeronf's options, as the launcher gives them */
	char instance[ZN_NAME_LEN];
	char name[ZN_NAME_LEN];
	char group[ZN_NAME_LEN];
	char log_level[64];
	unsigned long service;
	cpu_set_t cpus;
	bool cpus_set;
	/* the VM's */
	const char *image, *kernel, *qemu, *accel;
	const char *vhost; /* untrusted: its NIC's vhost-user socket */
	bool probe;        /* boot to say hello only (vm_accel.c) */
	bool print_accel;  /* --print-accel: say what auto makes, exit */
	unsigned long mem_mb, vcpus, poll_max_us;
	char **nf_argv;
	int nf_argc;
	/* state */
	uint16_t slot;
	int slot_fd, kick_fd, port, wake, sig_fd, mgr_fd, mgr_lock_fd;
	struct sockaddr_un kick_sa;
	char gpath[ZN_GROUP_PATH_LEN];
	unsigned int gidx;
	uint64_t glen;
	void *gmap;
	char dir[PATH_MAX - 16], initrd[PATH_MAX];
	pid_t qemu_pid;
	uint64_t started; /* ns */
	int nf_code; /* -1: not told */
	uint64_t bad_bytes, frames;
};

/* vm_state.c: the VM, and a line on stderr naming it */
extern struct vm V;
void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* vm_boot.c: the VM's initramfs (the image, then this VM's files) at
 * V.initrd; QEMU started (V.qemu_pid, V.port). 0 or -errno. */
int vm_make_initrd(void);
int vm_start_qemu(void);

/* vm_accel.c: --accel auto made kvm or tcg (a probe boot, once per host
 * boot, kernel and QEMU). */
void vm_pick_accel(void);

#endif /* ZERONF_VM_H */
