/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#ifndef ZN_KICK_H
#define ZN_KICK_H

/*
 * The kick socket's wire protocol, beside the shared memory it points at
 * (zn_shm.h): an NF's datagram to the manager's Unix socket in the
 * instance's runtime directory, telling it to look at the message ring,
 * or carrying a registration or a message itself.
 */

#define ZN_KICK_SOCK "zeronf-kick.sock"
/* A kick datagram: 'k' (look at the message ring), or ZN_KICK_REGISTER
 * followed by the slot (u16) and generation (u32), native order: the
 * manager takes the registering NF's pid from the datagram's credentials
 * (the kernel's, in the manager's PID namespace), not from the NF. */
#define ZN_KICK_REGISTER 'R'
#define ZN_KICK_REGISTER_LEN 7
/* ZN_KICK_MSG followed by a struct zn_msg: the message itself, from an NF
 * of a trust group (it does not map the message ring, which is in the
 * EAL's memory; a REGISTER's credentials are taken as for the kick). */
#define ZN_KICK_MSG 'M'
#define ZN_KICK_MSG_LEN 9
/* Trust group index N's own kick socket: its NFs kick and send there
 * (the only one their sandbox has), and the manager takes what comes
 * there as of that group's NFs only (mgr/nf/registry_kick.c) */
#define ZN_KICK_GROUP_SOCK_FMT "zeronf-kick-tg%u.sock"

#endif /* ZN_KICK_H */
