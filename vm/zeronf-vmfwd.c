/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * zeronf-vmfwd: the forward NF of an untrusted VM (docs/vm-nfs.md, the
 * copying baseline): a plain Linux program in a guest with a virtio-net
 * NIC on a vhost-user port of the manager. It sends every frame it
 * receives back out of the same interface, as ZeroNF's forward NF sends
 * every packet to its chain's next hop (the port's chain, on the way
 * back in): the kernel copies each frame out of the NIC's ring and into
 * it again, and vhost copies it between the guest's memory and the
 * manager's pool both ways. Batched (recvmmsg, sendmmsg), blocking.
 *
 * Usage: zeronf-vmfwd [IFACE]   (default eth0)
 * SIGTERM: prints "frames N" and exits 0.
 */

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define BURST 32
#define FRAME 2048

#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

static volatile sig_atomic_t stop;

static void
on_term(int sig)
{
	(void)sig;
	stop = 1;
}

static int
up(int fd, const char *ifname)
{
	struct ifreq ifr;

	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		return -errno;
	ifr.ifr_flags |= IFF_UP | IFF_PROMISC;
	if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		return -errno;
	return 0;
}

int
main(int argc, char **argv)
{
	static char buf[BURST][FRAME];
	const char *ifname = argc > 1 ? argv[1] : "eth0";
	struct mmsghdr msg[BURST];
	struct iovec iov[BURST];
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL) };
	unsigned long long frames = 0;
	int fd, one = 1, n;

	sigaction(SIGTERM, &(struct sigaction){ .sa_handler = on_term }, NULL);
	fd = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (fd < 0 || up(fd, ifname) < 0) {
		fprintf(stderr, "zeronf-vmfwd: %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	/* What it sends itself is not read again. */
	setsockopt(fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		fprintf(stderr, "zeronf-vmfwd: bind %s: %s\n", ifname,
			strerror(errno));
		return 1;
	}
	fprintf(stderr, "zeronf-vmfwd: forwarding on %s\n", ifname);
	while (!stop) {
		for (int i = 0; i < BURST; i++) {
			iov[i] = (struct iovec){ buf[i], FRAME };
			msg[i] = (struct mmsghdr){ .msg_hdr = {
				.msg_iov = &iov[i], .msg_iovlen = 1 } };
		}
		n = recvmmsg(fd, msg, BURST, MSG_WAITFORONE, NULL);
		if (n <= 0)
			continue; /* EINTR: a stop */
		for (int i = 0; i < n; i++) {
			iov[i].iov_len = msg[i].msg_len;
			msg[i].msg_hdr.msg_name = &sll;
			msg[i].msg_hdr.msg_namelen = sizeof(sll);
		}
		for (int sent = 0; sent < n;) {
			int k = sendmmsg(fd, msg + sent, (unsigned int)(n - sent),
					 0);

			if (k <= 0)
				break; /* a full queue drops: counted by the
					* manager as not come back */
			sent += k;
		}
		frames += (unsigned long long)n;
	}
	printf("frames %llu\n", frames);
	return 0;
}
