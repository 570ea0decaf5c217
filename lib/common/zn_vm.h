/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_VM_H
#define ZN_VM_H

/**
 * @file
 * A ZeroNF VM (docs/vm-nfs.md): its NF, in a QEMU guest, maps its trust
 * group's file as the BAR 2 of an ivshmem-plain device, at the address
 * the host's processes map it at (so a buffer's address means the same
 * in guest and host: no translation). What it cannot do from a guest,
 * its host helper (tools/zeronf-vm.c) does for it: hold its slot, send
 * its kicks and messages to the group's kick socket (with the helper's
 * credentials: the manager sees the helper as the NF's process, and its
 * exit as the NF's), and wake host sleepers whose doorbell the guest
 * rang (a guest's futex does not reach the host).
 *
 * The two talk over the guest's second serial port, a byte stream of
 * frames, each its first byte's fixed length:
 *   guest -> host
 *     'k', 'R' + 6, 'M' + 8  a kick or message as the kick socket takes
 *                            it (lib/shm/zn_kick.h), sent on as one datagram
 *     'W' + u32              a doorbell rung (the offset of its seq in
 *                            the group's file) whose sleeper slept
 *     'H'                    the guest's init is up
 *     'X' + u8               the NF exited with this code; power-off
 *   host -> guest
 *     'T'                    stop the NF (SIGTERM); 'K' kill it
 * and on the third serial port, host -> guest only:
 *     'w'                    the NF's doorbell was rung while it slept:
 *                            wake up (the NF sleeps in poll() on it)
 * Integers in native order (guest and host are one architecture).
 */

#include <stdint.h>

#define ZN_VM_KICK_DEV "/dev/ttyS1"
#define ZN_VM_WAKE_DEV "/dev/ttyS2"
#define ZN_VM_CONF "/zeronf/guest.conf"  /* key=value lines (helper) */
#define ZN_VM_ARGV "/zeronf/argv"        /* the NF's argv, NUL-separated */
#define ZN_VM_NF "/zeronf/nf"            /* the NF program in the image */
#define ZN_VM_LOG "/dev/ttyS0"           /* the NF's output, the console */
#define ZN_VM_MODULES "/zeronf/modules"  /* kernel modules, loaded in order */

/* Where the guest has no wake-up port: the most time between two polls
 * of an idle guest NF's rings, us (zeronf-vm --poll-max-us). */
#define ZN_VM_POLL_MAX_US 1000
/* A guest NF with a wake-up port polls for this long of an idle spell
 * before it sleeps until woken, us (lib/nf/nf_guest.c). */
#define ZN_VM_POLL_HOLD_US 20000

#define ZN_IVSHMEM_VENDOR 0x1af4 /* Red Hat (Qumranet) */
#define ZN_IVSHMEM_DEVICE 0x1110

#define ZN_VM_WAKE 'W'
#define ZN_VM_HELLO 'H'
#define ZN_VM_EXIT 'X'
#define ZN_VM_STOP 'T'
#define ZN_VM_KILL 'K'
#define ZN_VM_WAKEUP 'w'

/** A guest frame's length from its first byte; 0: no such frame. */
static inline unsigned int
zn_vm_frame_len(uint8_t first)
{
	switch (first) {
	case 'k': return 1;
	case 'R': return 7;  /* ZN_KICK_REGISTER_LEN */
	case 'M': return 9;  /* ZN_KICK_MSG_LEN */
	case ZN_VM_WAKE: return 5;
	case ZN_VM_HELLO: return 1;
	case ZN_VM_EXIT: return 2;
	default: return 0;
	}
}

#endif /* ZN_VM_H */
