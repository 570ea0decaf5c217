/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Flow keys: the public face of lib/common/zn_flow.c. */

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <zeronf/flow.h>

#include "../common/zn_flow.h"
#include "../common/zn_util.h"
#include "../nf/nf_pvt.h"

int ZN_API
zn_flow_key_from_pkt(const struct rte_mbuf *m, struct zn_flow_key *key)
{
	return zn_flow_parse(rte_pktmbuf_mtod(m, const uint8_t *),
			     rte_pktmbuf_data_len(m), key);
}

void ZN_API
zn_flow_key_reverse(const struct zn_flow_key *key, struct zn_flow_key *rev)
{
	struct zn_flow_key r = *key;

	memcpy(r.src, key->dst, sizeof(r.src));
	memcpy(r.dst, key->src, sizeof(r.dst));
	r.src_port = key->dst_port;
	r.dst_port = key->src_port;
	*rev = r;
}

uint32_t ZN_API
zn_flow_key_hash(const struct zn_flow_key *key)
{
	return zn_flow_hash_key(key);
}

static const char *
proto_name(uint8_t proto, char *buf, size_t len)
{
	switch (proto) {
	case 6:
		return "tcp";
	case 17:
		return "udp";
	case 1:
		return "icmp";
	case 58:
		return "icmp6";
	case 132:
		return "sctp";
	default:
		snprintf(buf, len, "proto%u", proto);
		return buf;
	}
}

int ZN_API
zn_flow_key_format(const struct zn_flow_key *key, char *buf, size_t len)
{
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN], p[16];
	int af = key->ip_version == 4 ? AF_INET : AF_INET6;
	int n;

	if (inet_ntop(af, key->src, s, sizeof(s)) == NULL ||
	    inet_ntop(af, key->dst, d, sizeof(d)) == NULL)
		return -EINVAL;
	if (af == AF_INET)
		n = snprintf(buf, len, "%s %s:%u -> %s:%u",
			     proto_name(key->proto, p, sizeof(p)), s,
			     key->src_port, d, key->dst_port);
	else
		n = snprintf(buf, len, "%s [%s]:%u -> [%s]:%u",
			     proto_name(key->proto, p, sizeof(p)), s,
			     key->src_port, d, key->dst_port);
	if (n >= 0 && key->vlan != 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " vlan %u", key->vlan);
	return (n < 0 || (size_t)n >= len) ? -ENOSPC : n;
}

int ZN_API
zn_ip_prefix_parse(const char *s, uint8_t addr[16], uint8_t *len)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash = strchr(s, '/');
	uint64_t v;
	int ver;

	if (strlen(s) >= sizeof(buf))
		return -EINVAL;
	zn_strlcpy(buf, s, sizeof(buf));
	if (slash != NULL)
		buf[slash - s] = '\0';
	memset(addr, 0, 16);
	if (inet_pton(AF_INET, buf, addr) == 1)
		ver = 4;
	else if (inet_pton(AF_INET6, buf, addr) == 1)
		ver = 6;
	else
		return -EINVAL;
	*len = ver == 4 ? 32 : 128;
	if (slash != NULL) {
		if (zn_parse_uint(slash + 1, 0, *len, &v) < 0)
			return -EINVAL;
		*len = (uint8_t)v;
	}
	return ver;
}
