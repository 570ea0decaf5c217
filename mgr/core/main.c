/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* zeronf-mgr: start-up and shutdown of the manager (a DPDK primary).
 * Long: the EAL's set-up, the shared memory and every subsystem's init
 * and teardown, in their order, read in one place. */

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_mbuf_pool_ops.h>
#include <rte_mbuf_dyn.h>
#include <rte_memzone.h>
#include <rte_version.h>

#include <jansson.h>

#include <sys/epoll.h>
#include <sys/signalfd.h>

#include "args.h"
#include "cmd.h"
#include "ctl.h"
#include "../trust/owner_map.h"
#include "../trust/private_heap.h"
#include "../trust/group.h"
#include "../trust/group_home.h"
#include "../tenant/tenant.h"
#include "instance.h"
#include "../nf/link.h"
#include "../nf/launch.h"
#include "loop.h"
#include "mgr.h"
#include "subsys.h"
#include "../nf/policy.h"
#include "../nf/pool_acct.h"
#include "../port/port.h"
#include "../nf/registry.h"
#include "../trust/ring_guard.h"
#include "../flow/fdir.h"
#include "../flow/lb.h"
#include "../flow/route.h"
#include "../trust/port_headers.h"
#include "../telemetry/stats.h"
#include "../telemetry/telemetry.h"
#include "../datapath/worker.h"
#include "../../lib/common/zn_doorbell.h"
#include "../../lib/common/zn_pool_ops.h"
#include "../../lib/common/zn_instance.h"
#include "../../lib/common/zn_util.h"
#include "../../lib/common/zn_cpus.h"
#include "../nf/nf_rec.h"
#include "../trust/police.h"

#define MBUF_CACHE 256
#define MSG_RING_SIZE 1024
#define NF_STOP_TIMEOUT_NS (3ULL * 1000 * 1000 * 1000)

static struct zn_mgr mgr;

static bool
is_pci_addr(const char *s)
{
	unsigned int a, b, c, d;
	char rest;

	/* DDDD:BB:DD.F or BB:DD.F, optionally followed by ",args" */
	return sscanf(s, "%x:%x:%x.%x%c", &a, &b, &c, &d, &rest) >= 4 ||
	       sscanf(s, "%x:%x.%x%c", &a, &b, &c, &rest) >= 3;
}

/* 32 TiB: above the heap and below ASan's allocator (0x6000...). */
#define ZN_BASE_VIRTADDR "0x200000000000"

static bool
eal_arg_given(const struct zn_mgr *m, const char *opt)
{
	size_t n = strlen(opt);

	for (int i = 0; i < m->cfg.eal_argc; i++)
		if (strncmp(m->cfg.eal_argv[i], opt, n) == 0)
			return true;
	return false;
}

/* EAL arguments: instance = file prefix, one floating lcore per thread
 * (the kernel schedules them over --cpus), ports as --vdev / -a. */
static int
eal_init(struct zn_mgr *m, const char *prog)
{
	static char *argv[ZN_MAX_PORT_ARGS * 2 + 64];
	static char lcores[4096], cpus[512], prefix[64], hugedir[PATH_MAX + 16];
	static char mem[64], memres[64], loglvl[96];
	bool any_pci = false;
	int argc = 0, rc, off;
	cpu_set_t set;

	if (m->cfg.cpus_set)
		set = m->cfg.cpus;
	else if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	if (zn_format_cpulist(&set, cpus, sizeof(cpus)) < 0)
		return -EINVAL;
	off = snprintf(lcores, sizeof(lcores), "--lcores=");
	for (unsigned int l = 0; l <= m->dp.n_workers; l++)
		off += snprintf(lcores + off, sizeof(lcores) - (size_t)off,
				"%s%u@(%s)", l ? "," : "", l, cpus);
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", m->cfg.instance);
	snprintf(hugedir, sizeof(hugedir), "--huge-dir=%s", m->inst.huge_dir);
	/* --socket-limit caps; --socket-mem reserves, and the EAL never
	 * returns reserved pages to the system. Reserving all of it means no
	 * free (an NF's table, the manager freeing what a dead NF left)
	 * unmaps pages, which would make every process sync its memory map
	 * over the multi-process channel: measured 5-10 s stalls when NFs
	 * exit together, one whose channel is closing never answering. */
	snprintf(mem, sizeof(mem), "--socket-limit=%u", m->cfg.mem_mb);
	snprintf(memres, sizeof(memres), "--socket-mem=%u", m->cfg.mem_mb);
	snprintf(loglvl, sizeof(loglvl), "--log-level=%s", m->cfg.log_level);

	argv[argc++] = (char *)(uintptr_t)prog;
	argv[argc++] = (char *)(uintptr_t)"--proc-type=primary";
	argv[argc++] = prefix;
	argv[argc++] = lcores;
	argv[argc++] = hugedir;
	argv[argc++] = mem;
	argv[argc++] = memres;
	argv[argc++] = loglvl;
	for (unsigned int i = 0; i < m->cfg.n_devargs; i++) {
		if (zn_port_ring_spec(m->cfg.devargs[i]))
			continue; /* made after, on rings of ours (port_ring.c) */
		if (is_pci_addr(m->cfg.devargs[i])) {
			argv[argc++] = (char *)(uintptr_t)"-a";
			any_pci = true;
		} else {
			argv[argc++] = (char *)(uintptr_t)"--vdev";
		}
		argv[argc++] = m->cfg.devargs[i];
	}
	if (!any_pci)
		argv[argc++] = (char *)(uintptr_t)"--no-pci";
	/* Secondaries map the primary's memory at the primary's addresses.
	 * Left to the kernel, those lie among every process's own mappings
	 * (0x7f...), where an NF may already have something: seen with
	 * AddressSanitizer builds, whose NFs failed to start one time in
	 * three. A base far from where mmap, the heap, the stacks and ASan's
	 * allocator place things keeps the range free in every process.
	 * Given after "--", the operator's --base-virtaddr wins. */
	if (!eal_arg_given(m, "--base-virtaddr"))
		argv[argc++] = (char *)(uintptr_t)
			"--base-virtaddr=" ZN_BASE_VIRTADDR;
	/* One hugepage file per memory segment list instead of one per page
	 * (128 at --mem 256): a sandbox binds the instance's files one by
	 * one, 0.4 ms each (measured: 47 of a sandboxed NF's start). The
	 * legacy memory model has no such files; the operator may ask for it
	 * after "--". */
	if (!eal_arg_given(m, "--legacy-mem") &&
	    !eal_arg_given(m, "--single-file-segments"))
		argv[argc++] = (char *)(uintptr_t)"--single-file-segments";
	for (int i = 0; i < m->cfg.eal_argc && argc < (int)RTE_DIM(argv) - 1;
	     i++)
		argv[argc++] = m->cfg.eal_argv[i];
	argv[argc] = NULL;

	rc = rte_eal_init(argc, argv);
	if (rc < 0) {
		ZN_LOG(ERR, "EAL init failed: %s%s", rte_strerror(rte_errno),
		       rte_errno == ENOMEM ? " (--mem is reserved at start: "
		       "that much hugepage memory must be free)" : "");
		return -rte_errno;
	}
	return 0;
}

static int
shared_init(struct zn_mgr *m)
{
	static const struct rte_mbuf_dynfield meta_desc = {
		.name = ZN_PKT_META_DYNFIELD,
		.size = sizeof(struct zn_pkt_meta),
		.align = __alignof__(struct zn_pkt_meta),
	};
	const struct rte_memzone *mz;
	struct zn_shm_hdr *h;
	const struct rte_mempool_ops *ops;
	uint64_t start = 0;

	zn_pkt_meta_offset = rte_mbuf_dynfield_register(&meta_desc);
	if (zn_pkt_meta_offset < 0) {
		ZN_LOG(ERR, "cannot register the metadata field: %s",
		       rte_strerror(rte_errno));
		return -rte_errno;
	}
	/* The ring driver with the manager's check of what it takes out
	 * (lib/common/zn_pool_ops.h): every NF writes this pool's ring.
	 * Unless the operator names a driver (EAL --mbuf-pool-ops-name):
	 * then that one, for the trust groups' pools too, unchecked. */
	m->pool_ops = ZN_POOL_OPS;
	if (eal_arg_given(m, "--mbuf-pool-ops-name")) {
		m->pool_ops = rte_mbuf_best_mempool_ops();
		ZN_LOG(NOTICE, "pools use the mempool driver '%s' (EAL "
		       "--mbuf-pool-ops-name): what NFs free into them is not "
		       "checked as the manager takes it out", m->pool_ops);
	}
	m->pool = rte_pktmbuf_pool_create_by_ops(ZN_POOL_NAME,
						 m->cfg.pool_size, MBUF_CACHE,
						 0, RTE_MBUF_DEFAULT_BUF_SIZE,
						 (int)rte_socket_id(),
						 m->pool_ops);
	if (m->pool == NULL) {
		ZN_LOG(ERR, "cannot create a pool of %u buffers: %s (raise "
		       "--mem or lower --pool-size)", m->cfg.pool_size,
		       rte_strerror(rte_errno));
		return -ENOMEM;
	}
	m->msgq = rte_ring_create_elem(ZN_MSG_RING_NAME, sizeof(struct zn_msg),
				       MSG_RING_SIZE, (int)rte_socket_id(),
				       RING_F_SC_DEQ);
	mz = rte_memzone_reserve_aligned(ZN_SHM_NAME, sizeof(struct zn_shm),
					 (int)rte_socket_id(), 0,
					 RTE_CACHE_LINE_SIZE);
	if (m->msgq == NULL || mz == NULL)
		return -ENOMEM;
	m->shm = mz->addr;
	for (unsigned int i = 0; i < ZN_MAX_NFS; i++)
		m->nf[i].where.slot = &m->shm->nfs[i]; /* group_home.c moves them */
	memset(m->shm, 0, sizeof(*m->shm));

	ops = rte_mempool_get_ops(m->pool->ops_index);
	zn_proc_start_time(getpid(), &start);
	h = &m->shm->hdr;
	h->magic = ZN_SHM_MAGIC;
	h->abi_version = ZN_ABI_VERSION;
	h->shm_size = sizeof(struct zn_shm);
	h->slot_size = sizeof(struct zn_nf_slot);
	h->max_nfs = ZN_MAX_NFS;
	zn_strlcpy(h->build_id, zn_build_id, sizeof(h->build_id));
	zn_strlcpy(h->dpdk_version, rte_version(), sizeof(h->dpdk_version));
	zn_strlcpy(h->instance, m->cfg.instance, sizeof(h->instance));
	zn_strlcpy(h->pool_name, ZN_POOL_NAME, sizeof(h->pool_name));
	zn_strlcpy(h->pool_ops, ops->name, sizeof(h->pool_ops));
	h->pool_ops_index = m->pool->ops_index;
	h->meta_offset = zn_pkt_meta_offset;
	h->ring_size = m->cfg.ring_size;
	h->n_workers = m->dp.n_workers;
	h->mgr_pid = (uint32_t)getpid();
	h->stall_ms = m->cfg.stall_ms;
	h->mgr_start_time = start;
	return 0;
}

/* Workers: RX threads first (they poll ports and, without TX threads,
 * also drain NFs), then TX-only threads. Port queues are spread over the
 * RX threads. */
static int
workers_init(struct zn_mgr *m)
{
	unsigned int lcore = 0, rr = 0;

	for (unsigned int i = 0; i < m->dp.n_workers; i++) {
		/* Private: its stages hold the packets it frees. */
		struct zn_worker *w = rte_zmalloc_socket("zn_worker",
							 sizeof(*w),
							 RTE_CACHE_LINE_SIZE,
							 m->priv.socket);

		if (w == NULL)
			return -ENOMEM;
		lcore = rte_get_next_lcore(lcore, 1, 0);
		*w = (struct zn_worker){
			.id = i,
			.lcore = lcore,
			.rx_role = i < m->cfg.rx_threads,
			.tx_role = m->cfg.tx_threads == 0 ||
				   i >= m->cfg.rx_threads,
			.mgr = m,
			.shm = &m->shm->workers[i],
			.stall_cycles = m->cfg.stall_ms * (rte_get_tsc_hz() /
							   1000),
		};
		zn_rctx_init(&w->rc, &m->shm->rt.lb_epoch, &m->nf[0].where,
			     sizeof(m->nf[0]), m->link_ring, -1, i,
			     &w->shm->stats.lb_moved);
		m->dp.workers[i] = w;
	}
	for (uint16_t p = 0; p < m->n_ports; p++) {
		for (uint16_t q = 0; q < m->ports[p].nb_rxq; q++) {
			struct zn_worker *w = m->dp.workers[rr++ %
							 m->cfg.rx_threads];

			if (w->n_rxq >= ZN_MAX_RXQ_PER_WORKER)
				return -ENOSPC;
			w->rxq[w->n_rxq++] = (struct zn_rxq){ .port = p,
				.queue = q,
				.headers = zn_port_headers_port(m, p) ?
					   m->ports[p].group->port_headers :
					   NULL,
				.owners = m->ports[p].group != NULL ?
					  m->ports[p].group->owners :
					  m->trust.owner_maps };
		}
		for (unsigned int i = 0; i < m->dp.n_workers; i++)
			m->dp.workers[i]->txq[p] =
				(uint16_t)(i % m->ports[p].nb_txq);
	}
	return 0;
}

/* What NFs wrote into their rings and links: checked first (owner_map.h). */
static void
free_left(struct zn_mgr *m, struct rte_mbuf **pkts, unsigned int n,
	  const char *who)
{
	if (m->trust.owner_maps != NULL)
		zn_owner_map_free(m, pkts, n, who);
	else
		rte_pktmbuf_free_bulk(pkts, n);
}

static void
free_staged(struct zn_mgr *m)
{
	uint64_t n = 0;

	for (unsigned int i = 0; i < m->dp.n_workers; i++) {
		struct zn_worker *w = m->dp.workers[i];
		struct zn_stage *stages[ZN_MAX_NFS + ZN_MAX_RXQ_PER_WORKER];
		unsigned int ns = 0;

		if (w == NULL)
			continue;
		for (unsigned int s = 0; s < ZN_MAX_NFS; s++)
			stages[ns++] = &w->nf_stage[s];
		for (unsigned int q = 0; q < w->n_rxq; q++)
			stages[ns++] = &w->rxq[q].stage;
		for (unsigned int s = 0; s < ns; s++) {
			struct zn_stage *st = stages[s];

			/* An NF's packets, seen only by zn_owner_map_filter */
			if (st->dp != NULL)
				zn_owner_map_free(m, &st->pkts[st->head],
					     st->tail - st->head, "an NF");
			else
				rte_pktmbuf_free_bulk(&st->pkts[st->head],
						      st->tail - st->head);
			n += st->tail - st->head;
			st->head = st->tail = 0;
		}
		for (unsigned int p = 0; p < m->n_ports; p++) {
			rte_pktmbuf_free_bulk(w->txbuf[p].pkts, w->txbuf[p].n);
			n += w->txbuf[p].n;
			w->txbuf[p].n = 0;
		}
	}
	/* Packets still in NF rings (NFs that did not stop in time). */
	for (unsigned int s = 0; s < ZN_MAX_NFS && m->nf != NULL; s++) {
		struct rte_mbuf *pkts[ZN_BURST];
		unsigned int k;

		for (int r = 0; r < 2; r++) {
			struct zn_rguard *g = r ? &m->nf[s].tx_guard :
					      &m->nf[s].rx_guard;

			while ((k = zn_rguard_drain(g, r == 1, r == 0,
						    (void **)pkts,
						    ZN_BURST)) > 0) {
				free_left(m, pkts, k, zn_slot(m, s)->ctl.name);
				n += k;
			}
		}
	}
	for (unsigned int l = 0; l < ZN_MAX_LINKS && m->rg_link != NULL; l++) {
		struct zn_rguard *g = &m->rg_link[l];
		struct rte_mbuf *pkts[ZN_BURST];
		unsigned int k;

		while ((k = zn_rguard_drain(g, false, false, (void **)pkts,
					    ZN_BURST)) > 0) {
			free_left(m, pkts, k, "an NF's link");
			n += k;
		}
	}
	m->shm->mgr.drops[ZN_DROP_SHUTDOWN] += n;
	if (n > 0)
		ZN_LOG(NOTICE, "%" PRIu64 " packets in flight at shutdown "
		       "were dropped (shutdown)", n);
}

static void
shutdown_mgr(struct zn_mgr *m)
{
	uint64_t deadline = zn_now_ns() + NF_STOP_TIMEOUT_NS;
	unsigned int avail;

	zn_group_home_view_stopping(m); /* zn_shm's and every group's view */
	zn_ports_rx_set(m, false);
	/* NFs drain what they have and leave; workers keep moving their
	 * output so in-flight packets still reach the ports. Launched NFs
	 * are not restarted any more; the loop reaps them as they exit. */
	zn_launch_stop_all(m);
	zn_registry_stop_all(m);
	while ((zn_registry_active(m) > 0 || zn_launch_running(m) > 0) &&
	       zn_now_ns() < deadline)
		zn_loop_run_once(m->loop, 10);
	if (zn_registry_active(m) > 0)
		ZN_LOG(WARNING, "%u NFs did not stop in time; they exit on "
		       "their own when they see the manager gone",
		       zn_registry_active(m));
	/* Freeing hugepage memory (ports, below) is synchronised with every
	 * secondary: let the NFs that left finish exiting first. */
	while (zn_registry_exiting(m) && zn_now_ns() < deadline)
		usleep(10000);
	zn_ctl_flush_all(m);

	m->dp.quit = 1;
	for (unsigned int i = 0; i < m->dp.n_workers; i++)
		zn_db_ring(&m->shm->workers[i].db);
	rte_eal_mp_wait_lcore();
	free_staged(m);
	if (zn_registry_active(m) == 0)
		zn_port_ring_drain(m);
	zn_ports_close(m);

	avail = rte_mempool_avail_count(m->pool);
	if (avail == m->pool->size)
		ZN_LOG(NOTICE, "all %u packet buffers returned to the pool",
		       m->pool->size);
	else
		ZN_LOG(WARNING, "%u of %u packet buffers not returned (held "
		       "by NFs that did not stop)", m->pool->size - avail,
		       m->pool->size);
}

/* SIGINT/SIGTERM, blocked in every thread (main), read from a signalfd
 * in the control loop. */
static sigset_t sigs;
static int sigfd = -1;

static void
on_signal(void *arg, uint32_t events)
{
	struct zn_mgr *m = arg;
	struct signalfd_siginfo si;

	(void)events;
	while (read(sigfd, &si, sizeof(si)) == sizeof(si)) {
		ZN_LOG(NOTICE, "signal %u: shutting down", si.ssi_signo);
		m->shutdown_requested = true;
	}
}

static int
signals_init(struct zn_mgr *m)
{
	sigfd = signalfd(-1, &sigs, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sigfd < 0)
		return -errno;
	return zn_loop_watch(m->loop, sigfd, EPOLLIN, on_signal, m);
}

static void
signals_fini(struct zn_mgr *m)
{
	if (sigfd < 0)
		return;
	zn_loop_unwatch(m->loop, sigfd);
	close(sigfd);
	sigfd = -1;
}

/* ---- The start-up steps of the core (subsys.h) ---- */

static const char *prog; /* argv[0], the EAL's too */
static bool eal_up;

static int
loop_init(struct zn_mgr *m)
{
	m->loop = zn_loop_create();
	if (m->loop == NULL) {
		ZN_LOG(ERR, "cannot create the control loop: %s",
		       strerror(errno));
		return -errno;
	}
	return 0;
}

static void
loop_fini(struct zn_mgr *m)
{
	zn_loop_destroy(m->loop);
	m->loop = NULL;
}

static int
eal_start(struct zn_mgr *m)
{
	int rc;

	zn_ports_private_early();
	rc = eal_init(m, prog);
	if (rc < 0)
		return rc;
	eal_up = true;
	rc = zn_ports_private_late();
	if (rc < 0)
		return rc;
	if (rte_lcore_count() < m->dp.n_workers + 1) {
		ZN_LOG(ERR, "EAL gave %u lcores, %u needed", rte_lcore_count(),
		       m->dp.n_workers + 1);
		return -ENODEV;
	}
	return 0;
}

/* The EAL's, and with it its telemetry thread (after the manager's own
 * telemetry stopped answering, telemetry.c) */
static void
eal_stop(struct zn_mgr *m)
{
	RTE_SET_USED(m);
	if (eal_up)
		rte_eal_cleanup();
	eal_up = false;
}

static void
workers_fini(struct zn_mgr *m)
{
	for (unsigned int i = 0; i < m->dp.n_workers; i++) {
		rte_free(m->dp.workers[i]); /* private heap: before it goes */
		m->dp.workers[i] = NULL;
	}
}

/* Running: the workers started, the instance ready. Its teardown is the
 * first at exit: NFs, then workers, stopped; the ports closed. */
static int
run_start(struct zn_mgr *m)
{
	if (m->cfg.chain_len == 0)
		ZN_LOG(NOTICE, "no default chain (--chain): packets entering "
		       "from ports are dropped as chain_end");
	zn_ports_rx_set(m, !m->cfg.rx_paused && !m->cfg.rx_when_ready);
	m->dp.rx_waiting = m->cfg.rx_when_ready && !m->cfg.rx_paused;
	for (unsigned int i = 0; i < m->dp.n_workers; i++)
		rte_eal_remote_launch(zn_worker_main, m->dp.workers[i],
				      m->dp.workers[i]->lcore);
	m->shm->mgr.ready = 1;
	zn_instance_set_ready(m);
	ZN_LOG(NOTICE, "manager '%s' ready: pid %d, %u ports, %u workers, "
	       "control socket %s/%s", m->cfg.instance, (int)m->inst.pid,
	       m->n_ports, m->dp.n_workers, m->inst.rundir, ZN_CTL_SOCK);
	return 0;
}

static const struct zn_subsys ss_loop = {
	.name = "loop", .order = ZN_SUBSYS_LOOP,
	.init = loop_init, .fini = loop_fini,
};
ZN_SUBSYS_REGISTER(ss_loop)
static const struct zn_subsys ss_eal = {
	.name = "eal", .order = ZN_SUBSYS_EAL,
	.init = eal_start, .fini = eal_stop,
};
ZN_SUBSYS_REGISTER(ss_eal)
static const struct zn_subsys ss_shared = {
	.name = "shared_memory", .order = ZN_SUBSYS_SHARED,
	.init = shared_init, /* the EAL's memory: freed with it */
};
ZN_SUBSYS_REGISTER(ss_shared)
static const struct zn_subsys ss_workers = {
	.name = "workers", .order = ZN_SUBSYS_WORKERS,
	.init = workers_init, .fini = workers_fini,
};
ZN_SUBSYS_REGISTER(ss_workers)
static const struct zn_subsys ss_signals = {
	.name = "signals", .order = ZN_SUBSYS_SIGNALS,
	.init = signals_init, .fini = signals_fini,
};
ZN_SUBSYS_REGISTER(ss_signals)
static const struct zn_subsys ss_run = {
	.name = "run", .order = ZN_SUBSYS_RUN,
	.init = run_start, .fini = shutdown_mgr,
};
ZN_SUBSYS_REGISTER(ss_run)

int
main(int argc, char **argv)
{
	struct zn_mgr *m = &mgr;
	const char *failed;
	int rc;

	setvbuf(stdout, NULL, _IOLBF, 0);
	rc = zn_mgr_parse_args(&m->cfg, argc, argv);
	if (rc == -ECANCELED)
		return 0;
	if (rc < 0)
		return 2;
	if (m->cfg.print_schema)
		return zn_ctl_print_schema(stdout) < 0;
	if (m->cfg.print_subsystems) {
		zn_subsys_print();
		return 0;
	}
	if (m->cfg.check)
		return zn_cmd_check_requests(stdin, stdout);
	m->inst.pid = getpid();
	m->inst.start_ns = zn_now_ns();
	m->inst.lock_fd = -1;
	m->dp.n_workers = m->cfg.rx_threads + m->cfg.tx_threads;

	/* Signals go to the control thread's signalfd; block them before the
	 * EAL creates threads so every thread inherits the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (m->cfg.clean) { /* what a dead manager left, and nothing more */
		rc = zn_instance_acquire(m);
		zn_instance_release(m);
		return rc < 0;
	}
	prog = argv[0];
	rc = zn_subsys_start(m, getenv("ZN_MGR_FAIL_AT"), &failed);
	if (rc < 0) {
		ZN_LOG(ERR, "start-up failed at %s: %s", failed, strerror(-rc));
		return 1;
	}

	/* The control thread: every module's fds, timers and hooks. The
	 * longest wait bounds how late a hook runs (registry liveness). */
	while (!m->shutdown_requested)
		zn_loop_run_once(m->loop, 100);
	zn_subsys_stop(m); /* run's teardown first: NFs, workers, ports */
	ZN_LOG(NOTICE, "manager '%s' stopped", m->cfg.instance);
	return 0;
}

/* ---- The workers' options ---- */

static int
opt_cpus(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (zn_cpus_option(prog, arg, &cfg->cpus) < 0)
		return -EINVAL;
	cfg->cpus_set = true;
	return 0;
}

static int
opt_handoff(const char *prog, const char *arg, struct zn_mgr_cfg *cfg)
{
	if (strcmp(arg, "direct") == 0) {
		cfg->handoff = ZN_HANDOFF_DIRECT;
	} else if (strcmp(arg, "worker") == 0) {
		cfg->handoff = ZN_HANDOFF_WORKER;
	} else {
		fprintf(stderr, "%s: --handoff is direct or worker\n", prog);
		return -EINVAL;
	}
	return 0;
}

static void
workers_defaults(struct zn_mgr_cfg *cfg)
{
	cfg->rx_threads = 1;
	cfg->stall_ms = 2000;
	cfg->idle_sleep_us = 1000;
}

static int
workers_check(const char *prog, struct zn_mgr_cfg *cfg)
{
	if (cfg->rx_threads + cfg->tx_threads > ZN_MAX_WORKERS) {
		fprintf(stderr, "%s: at most %d threads in all\n", prog,
			ZN_MAX_WORKERS);
		return -EINVAL;
	}
	return 0;
}

static const struct zn_opt workers_opt[] = {
	{ "rx-threads", 0, "N", "threads polling ports (default 1)",
	  ZN_OPT_UINT, ZN_CFG(rx_threads), 1, ZN_MAX_WORKERS, NULL },
	{ "tx-threads", 0, "N", "threads moving NF output; 0 = the RX threads "
	  "do it\n(default 0)", ZN_OPT_UINT, ZN_CFG(tx_threads), 0,
	  ZN_MAX_WORKERS - 1, NULL },
	{ "cpus", 0, "LIST", "CPUs for manager threads (default: all "
	  "allowed)", ZN_OPT_PARSE, .parse = opt_cpus },
	{ "stall-ms", 0, "N", "drop packets whose next hop made no progress "
	  "for N ms\n(0 = never; default 2000)", ZN_OPT_UINT, ZN_CFG(stall_ms),
	  0, 3600000, NULL },
	{ "handoff", 0, "MODE", "direct: NFs hand packets to the next NF "
	  "themselves\n(default); worker: every hop crosses a worker",
	  ZN_OPT_PARSE, .parse = opt_handoff },
	{ "idle-sleep-us", 0, "N", "longest sleep of an idle polling thread "
	  "(default 1000)", ZN_OPT_UINT, ZN_CFG(idle_sleep_us), 1, 1000000,
	  NULL },
};

static const struct zn_opts workers_opts = {
	.order = ZN_SUBSYS_WORKERS, .opt = workers_opt,
	.n = RTE_DIM(workers_opt), .defaults = workers_defaults,
	.check = workers_check,
};
ZN_OPTIONS_REGISTER(workers_opts)
