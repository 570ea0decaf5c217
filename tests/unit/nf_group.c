/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* Test NF for tests/system/test_trust_groups.py: an NF that tries to
 * reach packets it should not. Commands:
 *   put  {"text": S}  a buffer of its group's pool (else the shared one)
 *                     with S written in it: {"addr": A, "pool": NAME}
 *   peek {"addr": A, "len": N}  read N bytes at A: {"text": S}, or
 *                     {"fault": true} when the address is not mapped here
 *   open {"path": P}  open P for reading: {"ok": true} or {"errno": E}
 *   tsc  {}           the TSC frequency its EAL found: {"hz": N}
 * Buffers it put are freed when it stops. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <zeronf/zeronf.h>

#define MAX_PUT 16

static struct rte_mbuf *put[MAX_PUT];
static unsigned int n_put;
static sigjmp_buf fault_jb;

/* The value of "key": in a flat JSON object of numbers and strings
 * without escapes (what the test sends). */
static const char *
arg(const char *args, const char *key, char *out, size_t len)
{
	char pat[64];
	const char *p;
	size_t n = 0;

	snprintf(pat, sizeof(pat), "\"%s\"", key);
	p = strstr(args, pat);
	if (p == NULL)
		return NULL;
	p = strchr(p + strlen(pat), ':');
	if (p == NULL)
		return NULL;
	p++;
	while (*p == ' ')
		p++;
	if (*p == '"')
		p++;
	while (p[n] != '\0' && p[n] != '"' && p[n] != ',' && p[n] != '}' &&
	       n + 1 < len) {
		out[n] = p[n];
		n++;
	}
	out[n] = '\0';
	return out;
}

static int
cmd_put(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	struct rte_mempool *mp = zn_nf_group_pool(nf);
	struct rte_mbuf *m;
	char text[128];

	if (mp == NULL)
		mp = zn_nf_pktmbuf_pool(nf);
	if (arg(args, "text", text, sizeof(text)) == NULL || n_put == MAX_PUT)
		return snprintf(reply, len, "text missing, or too many"), -EINVAL;
	m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return snprintf(reply, len, "pool empty"), -ENOMEM;
	strcpy(rte_pktmbuf_mtod(m, char *), text);
	put[n_put++] = m;
	snprintf(reply, len, "{\"addr\": %" PRIu64 ", \"pool\": \"%s\"}",
		 (uint64_t)(uintptr_t)rte_pktmbuf_mtod(m, char *), mp->name);
	return 0;
}

static void
on_fault(int sig)
{
	(void)sig;
	siglongjmp(fault_jb, 1);
}

static int
cmd_peek(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	struct sigaction sa = { .sa_handler = on_fault }, old_segv, old_bus;
	char v[32], text[129];
	volatile const char *p;
	unsigned long n;

	(void)nf;
	if (arg(args, "addr", v, sizeof(v)) == NULL)
		return snprintf(reply, len, "addr missing"), -EINVAL;
	p = (const char *)(uintptr_t)strtoull(v, NULL, 0);
	n = arg(args, "len", v, sizeof(v)) ? strtoul(v, NULL, 0) : 32;
	if (n > 128)
		n = 128;
	sigaction(SIGSEGV, &sa, &old_segv);
	sigaction(SIGBUS, &sa, &old_bus);
	if (sigsetjmp(fault_jb, 1) == 0) {
		for (unsigned long i = 0; i < n; i++)
			text[i] = p[i] >= 0x20 && p[i] < 0x7f ? p[i] : '.';
		text[n] = '\0';
		snprintf(reply, len, "{\"text\": \"%s\"}", text);
	} else {
		snprintf(reply, len, "{\"fault\": true}");
	}
	sigaction(SIGSEGV, &old_segv, NULL);
	sigaction(SIGBUS, &old_bus, NULL);
	return 0;
}

static int
cmd_open(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	char path[256];
	int fd;

	(void)nf;
	if (arg(args, "path", path, sizeof(path)) == NULL)
		return snprintf(reply, len, "path missing"), -EINVAL;
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return snprintf(reply, len, "{\"errno\": %d}", errno), 0;
	close(fd);
	snprintf(reply, len, "{\"ok\": true}");
	return 0;
}

static int
cmd_tsc(struct zn_nf *nf, const char *args, char *reply, size_t len)
{
	(void)nf, (void)args;
	snprintf(reply, len, "{\"hz\": %" PRIu64 "}", rte_get_tsc_hz());
	return 0;
}

static int
group_init(struct zn_nf *nf)
{
	int rc = zn_nf_cmd_register(nf, "put", cmd_put);

	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "tsc", cmd_tsc);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "peek", cmd_peek);
	if (rc == 0)
		rc = zn_nf_cmd_register(nf, "open", cmd_open);
	return rc;
}

static void
group_fini(struct zn_nf *nf)
{
	(void)nf;
	for (unsigned int i = 0; i < n_put; i++)
		rte_pktmbuf_free(put[i]);
	n_put = 0;
}

static void
group_burst(struct zn_nf *nf, struct rte_mbuf **pkts, uint16_t n)
{
	(void)nf;
	(void)pkts;
	(void)n; /* every packet goes on: ZN_ACT_NEXT, as handed to us */
}

static const struct zn_nf_ops group_ops = {
	.sz = sizeof(struct zn_nf_ops),
	.name = "test-group",
	.init = group_init,
	.fini = group_fini,
	.burst = group_burst,
};

ZN_NF_REGISTER(group_ops)
