/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The kernel's drops at a net_af_packet port (docs/operations.md "Ports"):
 * a packet socket whose receive ring is full drops what arrives and counts
 * it (PACKET_STATISTICS, tp_drops), and DPDK 22.11's af_packet PMD does not
 * report that count: the packets were lost with nothing saying so. The
 * manager finds the PMD's sockets among its own descriptors (the
 * AF_PACKET ones bound to the port's interface) when the port starts, and
 * adds what they dropped to the port's imissed. Control thread only: a
 * read of PACKET_STATISTICS resets the kernel's count, so one reader sums
 * it.
 */

#include <dirent.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "port.h"

/* the interface of "net_af_packet...,iface=NAME,..." */
static unsigned int
afpacket_ifindex(const char *devargs)
{
	const char *s = strstr(devargs, "iface=");
	char name[IF_NAMESIZE];
	size_t n;

	if (s == NULL)
		return 0;
	s += strlen("iface=");
	n = strcspn(s, ",");
	if (n == 0 || n >= sizeof(name))
		return 0;
	memcpy(name, s, n);
	name[n] = '\0';
	return if_nametoindex(name);
}

void
zn_port_kdrops_find(struct zn_port *p)
{
	unsigned int ifindex;
	struct dirent *e;
	DIR *d;

	p->kdrops.n_fds = 0;
	if (strcmp(p->driver, "net_af_packet") != 0)
		return;
	ifindex = afpacket_ifindex(p->devargs);
	if (ifindex == 0 || (d = opendir("/proc/self/fd")) == NULL)
		return;
	while ((e = readdir(d)) != NULL &&
	       p->kdrops.n_fds < RTE_DIM(p->kdrops.fds)) {
		struct sockaddr_ll sll;
		socklen_t len = sizeof(sll);
		char *end;
		long fd = strtol(e->d_name, &end, 10);

		if (*end != '\0' || end == e->d_name || fd == dirfd(d))
			continue;
		memset(&sll, 0, sizeof(sll));
		if (getsockname((int)fd, (struct sockaddr *)&sll, &len) != 0 ||
		    sll.sll_family != AF_PACKET ||
		    (unsigned int)sll.sll_ifindex != ifindex)
			continue;
		p->kdrops.fds[p->kdrops.n_fds++] = (int)fd;
	}
	closedir(d);
}

uint64_t
zn_port_kdrops(struct zn_port *p)
{
	for (unsigned int i = 0; i < p->kdrops.n_fds && !p->closed; i++) {
		struct tpacket_stats st;
		socklen_t len = sizeof(st);

		if (getsockopt(p->kdrops.fds[i], SOL_PACKET,
			       PACKET_STATISTICS, &st, &len) == 0)
			p->kdrops.total += st.tp_drops;
	}
	return p->kdrops.total;
}
