/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * The sender of the peer suite's kernel path (bench/peers.py): sends one
 * Ethernet/IPv4/UDP frame of SIZE bytes, over and over, on interface IFACE
 * for SECONDS, as fast as one thread can: an AF_PACKET socket that
 * bypasses the qdisc, frames in batches of 64 through sendmmsg(). There
 * is no pktgen module here; this is the raw-socket sender the issue
 * names. Prints {"sent":N,"seconds":S} at the end.
 *
 * usage: zn-kernel-send IFACE SIZE SECONDS
 */

#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BATCH 64

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Ethernet 02:00:00:00:00:01 -> 02:00:00:00:00:02, IPv4 10.0.0.1 -> 10.1.0.1, UDP
 * 1024 -> 80, zero payload. */
static void
frame(uint8_t *f, unsigned int size)
{
	static const uint8_t eth[14] = { 2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1,
					 0x08, 0x00 };
	uint16_t ip_len = (uint16_t)(size - 14), udp_len = (uint16_t)(size - 34);

	memset(f, 0, size);
	memcpy(f, eth, sizeof(eth));
	f[14] = 0x45;
	f[16] = (uint8_t)(ip_len >> 8);
	f[17] = (uint8_t)ip_len;
	f[22] = 64;
	f[23] = 17;
	f[26] = 10; f[27] = 0; f[28] = 0; f[29] = 1;
	f[30] = 10; f[31] = 1; f[32] = 0; f[33] = 1;
	f[34] = 1024 >> 8; f[35] = 1024 & 255;
	f[36] = 0; f[37] = 80;
	f[38] = (uint8_t)(udp_len >> 8);
	f[39] = (uint8_t)udp_len;
	/* A valid IPv4 header checksum: a bridge with br_netfilter drops
	 * frames whose header does not check. UDP's stays 0 (none). */
	uint32_t sum = 0;

	for (int i = 14; i < 34; i += 2)
		sum += (uint32_t)(f[i] << 8 | f[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	f[24] = (uint8_t)(~sum >> 8);
	f[25] = (uint8_t)~sum;
}

int
main(int argc, char **argv)
{
	static uint8_t buf[2048];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { .iov_base = buf };
	struct sockaddr_ll sll = { .sll_family = AF_PACKET };
	unsigned long long sent = 0;
	unsigned int size;
	double secs, t0, t1;
	int fd, one = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: %s IFACE SIZE SECONDS\n", argv[0]);
		return 2;
	}
	size = (unsigned int)strtoul(argv[2], NULL, 10);
	secs = strtod(argv[3], NULL);
	if (size < 60 || size > 1514 || secs <= 0) {
		fprintf(stderr, "%s: SIZE 60..1514, SECONDS > 0\n", argv[0]);
		return 2;
	}
	sll.sll_ifindex = (int)if_nametoindex(argv[1]);
	if (sll.sll_ifindex == 0) {
		fprintf(stderr, "%s: no interface %s\n", argv[0], argv[1]);
		return 1;
	}
	fd = socket(AF_PACKET, SOCK_RAW, 0);
	if (fd < 0) {
		perror("socket(AF_PACKET)");
		return 1;
	}
	/* Straight to the driver: what pktgen would measure. */
	(void)setsockopt(fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
			 sizeof(one));
	if (bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		perror("bind");
		return 1;
	}
	frame(buf, size);
	iov.iov_len = size;
	memset(msgs, 0, sizeof(msgs));
	for (int i = 0; i < BATCH; i++) {
		msgs[i].msg_hdr.msg_iov = &iov;
		msgs[i].msg_hdr.msg_iovlen = 1;
	}
	t0 = now();
	t1 = t0;
	while (t1 - t0 < secs) {
		int n = sendmmsg(fd, msgs, BATCH, 0);

		if (n > 0)
			sent += (unsigned long long)n;
		else if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR) {
			perror("sendmmsg");
			return 1;
		}
		t1 = now();
	}
	printf("{\"sent\":%llu,\"seconds\":%.3f}\n", sent, t1 - t0);
	close(fd);
	return 0;
}
