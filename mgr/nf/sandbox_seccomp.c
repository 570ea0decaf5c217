/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The system calls a sandboxed NF may not make (sandbox_pvt.h): a
 * classic BPF program for seccomp, handed to bwrap (--seccomp FD), which
 * loads it last, just before it runs the NF. A deny list, as Docker's
 * and systemd's sandboxes keep, of what a packet-processing process has
 * no use for and what widens the kernel's surface: tracing and reading
 * other processes, loading code into the kernel, namespaces and mounts
 * of its own (a user namespace would give it capabilities there), keys,
 * eBPF, perf events, userfaultfd, io_uring, the clock, raw I/O ports.
 * Each is refused with EPERM (an NF that tries learns it may not; DPDK
 * makes none of these calls). clone3 answers ENOSYS, so that the C
 * library falls back to clone, whose namespace flags the filter can see
 * (clone3 passes them in memory a filter cannot read). Any other
 * architecture or ABI (x32, i386 through int 0x80) is killed. Written by
 * hand, not with libseccomp: forty instructions do not need a library
 * (and a dependency).
 */

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include "sandbox_pvt.h"

#ifndef CLONE_NEWTIME
#define CLONE_NEWTIME 0x00000080
#endif
#define X32_BIT 0x40000000u

static const unsigned int denied[] = {
	SYS_ptrace, SYS_process_vm_readv, SYS_process_vm_writev,
	SYS_pidfd_getfd, SYS_kcmp,
	SYS_kexec_load, SYS_kexec_file_load, SYS_init_module,
	SYS_finit_module, SYS_delete_module, SYS_bpf, SYS_perf_event_open,
	SYS_userfaultfd, SYS_io_uring_setup, SYS_io_uring_enter,
	SYS_io_uring_register,
	SYS_unshare, SYS_setns, SYS_mount, SYS_umount2, SYS_pivot_root,
	SYS_chroot, SYS_fsopen, SYS_fsconfig, SYS_fsmount, SYS_move_mount,
	SYS_open_tree, SYS_mount_setattr, SYS_open_by_handle_at,
	SYS_name_to_handle_at,
	SYS_keyctl, SYS_add_key, SYS_request_key,
	SYS_swapon, SYS_swapoff, SYS_reboot, SYS_acct, SYS_quotactl,
	SYS_syslog, SYS_vhangup, SYS_uselib, SYS_lookup_dcookie,
	SYS_fanotify_init, SYS_personality,
	SYS_iopl, SYS_ioperm,
	SYS_settimeofday, SYS_clock_settime, SYS_adjtimex,
	SYS_clock_adjtime,
};

#define N_DENIED (sizeof(denied) / sizeof(denied[0]))
/* arch check 3, nr load + x32 check 2, clone 3, clone3 1, the list,
 * allow, kill, eperm, enosys */
#define N_INSNS (3 + 2 + 3 + 1 + N_DENIED + 4)

#define STMT(c, k) ((struct sock_filter)BPF_STMT((c), (k)))
#define JUMP(c, k, t, f) ((struct sock_filter)BPF_JUMP((c), (k), (t), (f)))

static unsigned int
build(struct sock_filter *f)
{
	const unsigned int ns = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS |
				CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID |
				CLONE_NEWNET | CLONE_NEWTIME;
	unsigned int n = 0, allow, kill, eperm, enosys;

	/* the last four: allow, kill, EPERM, ENOSYS */
	allow = N_INSNS - 4;
	kill = allow + 1;
	eperm = allow + 2;
	enosys = allow + 3;
#define TO(target) ((unsigned char)((target) - n - 1))
	f[n] = STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, arch)), n++;
	f[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0), n++;
	f[n] = JUMP(BPF_JMP | BPF_JA, 0, 0, 0), f[n].k = TO(kill), n++;
	f[n] = STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, nr)), n++;
	f[n] = JUMP(BPF_JMP | BPF_JGE | BPF_K, X32_BIT, 0, 0);
	f[n].jt = TO(kill), n++;
	/* clone: no namespace of its own (flags: the low half of its
	 * first argument) */
	f[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 2), n++;
	f[n] = STMT(BPF_LD | BPF_W | BPF_ABS,
		    offsetof(struct seccomp_data, args[0])), n++;
	f[n] = JUMP(BPF_JMP | BPF_JSET | BPF_K, ns, 0, 0);
	f[n].jt = TO(eperm), f[n].jf = TO(allow), n++;
	f[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 0);
	f[n].jt = TO(enosys), n++;
	for (unsigned int i = 0; i < N_DENIED; i++) {
		f[n] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, denied[i], 0, 0);
		f[n].jt = TO(eperm), n++;
	}
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EPERM & 0xffff));
	f[n++] = STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (ENOSYS & 0xffff));
#undef TO
	return n;
}

int
zn_sandbox_seccomp_fd(void)
{
	struct sock_filter f[N_INSNS + 8];
	unsigned int n = build(f);
	size_t len = n * sizeof(f[0]);
	int fd;

	if (n > N_INSNS + 8)
		return -E2BIG;
	fd = memfd_create("zn-seccomp", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fd < 10) { /* above the fds the child gets (launch.c) */
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 10);

		close(fd);
		if (hi < 0)
			return -errno;
		fd = hi;
	}
	if (write(fd, f, len) != (ssize_t)len || lseek(fd, 0, SEEK_SET) != 0) {
		int rc = errno != 0 ? -errno : -EIO;

		close(fd);
		return rc;
	}
	return fd;
}
