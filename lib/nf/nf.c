/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* libzeronf control path: options, joining the manager, registration,
 * leaving. The packet loop is in nf_run.c. */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_log.h>
#include <rte_mbuf_dyn.h>
#include <rte_memzone.h>
#include <rte_service_component.h>
#include <rte_version.h>

#include "nf_pvt.h"
#include "../common/zn_doorbell.h"
#include "../common/zn_util.h"

#define ZN_REGISTER_TIMEOUT_NS (5ULL * 1000 * 1000 * 1000)

static void
lib_usage(const struct zn_nf *nf, const char *prog, FILE *out)
{
	fprintf(out,
		"Usage: %s [options] [-- NF options]\n"
		"ZeroNF network function '%s'.\n\n"
		"Options:\n"
		"  -i, --instance NAME   manager instance (default $ZERONF_INSTANCE"
		" or '" ZN_INSTANCE_DEFAULT "')\n"
		"  -s, --service ID      service id to register, 1..%u%s\n"
		"  -n, --name NAME       instance name shown in stats\n"
		"      --cpus LIST       CPUs the NF may run on (default: all "
		"allowed)\n"
		"      --log-level LVL   EAL/ZeroNF log level (default notice)\n"
		"      --wait SECONDS    wait for the manager to come up\n"
		"  -h, --help            this help\n",
		prog, nf->ops.name, ZN_MAX_SERVICES - 1,
		nf->ops.default_service ? "" : " (required)");
	if (nf->ops.usage != NULL) {
		fprintf(out, "\nNF options (after --):\n");
		nf->ops.usage(out);
	}
}

static bool
name_valid(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 || s[i] > 0x7e)
			return false;
	return n > 0 && n < ZN_NAME_LEN;
}

/* Parse library options; on success nf_argc and nf_argv describe the NF's
 * own arguments (argv[0] kept). Returns 0, -ECANCELED after --help, or
 * -EINVAL. */
static int
parse_lib_args(struct zn_nf *nf, int argc, char **argv, int *nf_argc,
	       char ***nf_argv)
{
	static const struct option longopts[] = {
		{ "instance", required_argument, NULL, 'i' },
		{ "service", required_argument, NULL, 's' },
		{ "name", required_argument, NULL, 'n' },
		{ "cpus", required_argument, NULL, 'c' },
		{ "log-level", required_argument, NULL, 'l' },
		{ "wait", required_argument, NULL, 'w' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("ZERONF_INSTANCE");
	const char *prog = argc > 0 ? argv[0] : nf->ops.name;
	int lib_argc = argc, opt;
	uint64_t v;

	zn_strlcpy(nf->instance, env != NULL ? env : ZN_INSTANCE_DEFAULT,
		   sizeof(nf->instance));
	zn_strlcpy(nf->name, nf->ops.name, sizeof(nf->name));
	zn_strlcpy(nf->log_level, "notice", sizeof(nf->log_level));
	nf->service_id = nf->ops.default_service;

	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			lib_argc = i;
			break;
		}

	optind = 0; /* full getopt reset (GNU) */
	opterr = 1;
	while ((opt = getopt_long(lib_argc, argv, "i:s:n:h", longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
			if (!zn_instance_name_valid(optarg)) {
				fprintf(stderr, "%s: bad instance name '%s'\n",
					prog, optarg);
				return -EINVAL;
			}
			zn_strlcpy(nf->instance, optarg, sizeof(nf->instance));
			break;
		case 's':
			if (zn_parse_uint(optarg, 1, ZN_MAX_SERVICES - 1, &v)) {
				fprintf(stderr,
					"%s: service id must be 1..%u, not '%s'\n",
					prog, ZN_MAX_SERVICES - 1, optarg);
				return -EINVAL;
			}
			nf->service_id = (uint16_t)v;
			break;
		case 'n':
			if (!name_valid(optarg)) {
				fprintf(stderr, "%s: name must be 1..%d "
					"printable ASCII characters\n", prog,
					ZN_NAME_LEN - 1);
				return -EINVAL;
			}
			zn_strlcpy(nf->name, optarg, sizeof(nf->name));
			break;
		case 'c':
			if (zn_cpus_option(prog, optarg, &nf->cpus) < 0)
				return -EINVAL;
			nf->cpus_set = true;
			break;
		case 'l':
			if (zn_log_level_option(prog, optarg, nf->log_level,
						sizeof(nf->log_level)) < 0)
				return -EINVAL;
			break;
		case 'w':
			if (zn_parse_uint(optarg, 0, 3600, &v)) {
				fprintf(stderr, "%s: bad --wait '%s'\n", prog,
					optarg);
				return -EINVAL;
			}
			nf->wait_s = (unsigned int)v;
			break;
		case 'h':
			lib_usage(nf, prog, stdout);
			return -ECANCELED;
		default: /* getopt said what */
			fprintf(stderr, "%s: --help lists the options\n",
				prog);
			return -EINVAL;
		}
	}
	if (optind < lib_argc) {
		fprintf(stderr, "%s: unexpected argument '%s' (NF options go "
			"after --)\n", prog, argv[optind]);
		return -EINVAL;
	}
	if (nf->service_id == 0) {
		fprintf(stderr, "%s: --service is required\n", prog);
		return -EINVAL;
	}

	/* NF arguments: argv[0] followed by everything after "--". */
	*nf_argc = 1 + (lib_argc < argc ? argc - lib_argc - 1 : 0);
	*nf_argv = calloc((size_t)*nf_argc + 1, sizeof(char *));
	if (*nf_argv == NULL)
		return -ENOMEM;
	(*nf_argv)[0] = argv[0];
	for (int i = 1; i < *nf_argc; i++)
		(*nf_argv)[i] = argv[lib_argc + i];
	return 0;
}

/* Wait (up to --wait) for a live, ready manager. */
static int
find_manager(struct zn_nf *nf)
{
	uint64_t deadline = zn_now_ns() + nf->wait_s * 1000000000ULL;
	struct zn_mgr_lock_info info;
	int rc;

	for (;;) {
		rc = zn_mgr_probe(nf->instance, &info);
		if (rc < 0) {
			ZN_LOG(ERR, "cannot check manager '%s': %s",
			       nf->instance, strerror(-rc));
			return rc;
		}
		if (rc == 1 && info.ready && info.pid > 0)
			break;
		if (zn_now_ns() >= deadline) {
			ZN_LOG(ERR, "no manager instance '%s' is %s",
			       nf->instance, rc == 1 ? "ready" : "running");
			return -ENOTCONN;
		}
		usleep(20000);
	}
	nf->mgr_pidfd = zn_pidfd_open(info.pid);
	if (nf->mgr_pidfd < 0 || !zn_proc_alive(info.pid, info.start_time)) {
		ZN_LOG(ERR, "manager '%s' (pid %d) is gone", nf->instance,
		       (int)info.pid);
		return -ENOTCONN;
	}
	return 0;
}

/* Claim the first free NF slot: its lock file is held for the NF's life, so
 * the kernel releases it however the NF dies. The slot fixes the lcore id. */
static int
claim_slot(struct zn_nf *nf)
{
	char path[PATH_MAX], buf[32];

	for (unsigned int s = 0; s < ZN_MAX_NFS; s++) {
		char file[32];
		int fd, n;

		snprintf(file, sizeof(file), ZN_SLOT_LOCK_FMT, s);
		if (zn_runtime_path(nf->instance, file, path, sizeof(path)))
			return -ENAMETOOLONG;
		fd = zn_lock_file(path, LOCK_EX);
		if (fd == -EWOULDBLOCK)
			continue;
		if (fd < 0) {
			ZN_LOG(ERR, "cannot lock %s: %s", path, strerror(-fd));
			return fd;
		}
		n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
		if (ftruncate(fd, 0) == 0)
			(void)!pwrite(fd, buf, (size_t)n, 0);
		nf->slot = (uint16_t)s;
		nf->slot_lock_fd = fd;
		return 0;
	}
	ZN_LOG(ERR, "all %u NF slots of '%s' are taken", ZN_MAX_NFS,
	       nf->instance);
	return -EBUSY;
}

static int
eal_init(struct zn_nf *nf, const char *prog)
{
	char prefix[64], lcores[256], cpus[192], loglvl[96];
	char *eal_argv[16];
	int eal_argc = 0, rc;
	cpu_set_t set;

	if (nf->cpus_set)
		set = nf->cpus;
	else if (sched_getaffinity(0, sizeof(set), &set) < 0)
		return -errno;
	if (zn_format_cpulist(&set, cpus, sizeof(cpus)) < 0)
		return -EINVAL;
	snprintf(prefix, sizeof(prefix), "--file-prefix=%s", nf->instance);
	snprintf(lcores, sizeof(lcores), "--lcores=%u@(%s)",
		 ZN_NF_LCORE_BASE + nf->slot, cpus);
	snprintf(loglvl, sizeof(loglvl), "--log-level=%s", nf->log_level);

	eal_argv[eal_argc++] = (char *)(uintptr_t)prog;
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--proc-type=secondary";
	eal_argv[eal_argc++] = prefix;
	eal_argv[eal_argc++] = lcores;
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-pci";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-telemetry";
	eal_argv[eal_argc++] = loglvl;
	eal_argv[eal_argc] = NULL;

	rc = rte_eal_init(eal_argc, eal_argv);
	if (rc < 0) {
		rc = rte_errno ? -rte_errno : -EIO;
		ZN_LOG(ERR, "EAL init (secondary of '%s') failed: %s",
		       nf->instance, rte_strerror(-rc));
		return rc;
	}
	/* The EAL made its service-core tables (~152 KB, rte_calloc) in the
	 * manager's shared heap; an NF runs no DPDK service, and a secondary
	 * that dies (or exits without rte_eal_cleanup(), see zn_nf_close)
	 * would leave them there: every NF start leaked them (measured by the
	 * soak bench's heap line). Freed at once. */
	rte_service_finalize();
	/* The manager answers our device scan with nothing (its ports are
	 * its own: mgr/port_private.c); a port here means something opened
	 * a device it must not touch. */
	if (rte_eth_dev_count_total() != 0) {
		ZN_LOG(ERR, "EAL attached %u port(s) of manager '%s' in this "
		       "NF: manager too old?", rte_eth_dev_count_total(),
		       nf->instance);
		nf->eal_ready = true;
		return -EPROTO;
	}
	nf->eal_ready = true;
	return 0;
}

/* The NF and its manager must agree on the shared layout, the DPDK build
 * and the mempool ops (indexed per process). */
static int
check_compat(struct zn_nf *nf)
{
	const struct rte_memzone *mz = rte_memzone_lookup(ZN_SHM_NAME);
	struct zn_shm_hdr *h;
	const struct rte_mempool_ops *ops;
	int off;

	if (mz == NULL) {
		ZN_LOG(ERR, "instance '%s' has no ZeroNF shared zone: is it a "
		       "ZeroNF manager?", nf->instance);
		return -EPROTO;
	}
	nf->shm = mz->addr;
	h = &nf->shm->hdr;
	if (h->magic != ZN_SHM_MAGIC || h->abi_version != ZN_ABI_VERSION ||
	    h->shm_size != sizeof(struct zn_shm) ||
	    h->slot_size != sizeof(struct zn_nf_slot)) {
		ZN_LOG(ERR, "manager '%s' is incompatible: ABI %u (shm %u B, "
		       "slot %u B, build %s); this NF has ABI %u (shm %zu B, "
		       "slot %zu B, build %s)", nf->instance, h->abi_version,
		       h->shm_size, h->slot_size, h->build_id, ZN_ABI_VERSION,
		       sizeof(struct zn_shm), sizeof(struct zn_nf_slot),
		       zn_build_id);
		return -EPROTO;
	}
	if (strcmp(h->dpdk_version, rte_version()) != 0) {
		ZN_LOG(ERR, "manager '%s' runs %s, this NF %s: rebuild the NF",
		       nf->instance, h->dpdk_version, rte_version());
		return -EPROTO;
	}
	if (strcmp(h->build_id, zn_build_id) != 0)
		ZN_LOG(NOTICE, "manager build %s, NF build %s (same ABI %u)",
		       h->build_id, zn_build_id, ZN_ABI_VERSION);

	nf->pool = rte_mempool_lookup(h->pool_name);
	if (nf->pool == NULL) {
		ZN_LOG(ERR, "packet pool '%s' not found", h->pool_name);
		return -EPROTO;
	}
	ops = rte_mempool_get_ops(nf->pool->ops_index);
	if (nf->pool->ops_index != h->pool_ops_index || ops == NULL ||
	    strcmp(ops->name, h->pool_ops) != 0) {
		ZN_LOG(ERR, "mempool ops mismatch: the manager's pool uses '%s' "
		       "(index %d) but index %d is '%s' in this NF. Manager and "
		       "NFs must load DPDK drivers the same way: link both "
		       "with -Wl,--no-as-needed against the same DPDK (see "
		       "docs/nf-guide.md)", h->pool_ops, h->pool_ops_index,
		       nf->pool->ops_index, ops ? ops->name : "(none)");
		return -EPROTO;
	}
	off = rte_mbuf_dynfield_lookup(ZN_PKT_META_DYNFIELD, NULL);
	if (off < 0 || off != h->meta_offset) {
		ZN_LOG(ERR, "packet metadata field not found (%d)", off);
		return -EPROTO;
	}
	zn_pkt_meta_offset = off;
	nf->msgq = rte_ring_lookup(ZN_MSG_RING_NAME);
	if (nf->msgq == NULL) {
		ZN_LOG(ERR, "manager message ring not found");
		return -EPROTO;
	}
	return 0;
}

void
zn_nf_kick_manager(struct zn_nf *nf)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char c = 'k';

	if (nf->kick_fd < 0)
		return;
	if (zn_runtime_path(nf->instance, ZN_KICK_SOCK, sa.sun_path,
			    sizeof(sa.sun_path)) < 0)
		return;
	/* Best effort: the manager also scans its ring periodically. */
	(void)!sendto(nf->kick_fd, &c, 1, MSG_DONTWAIT,
		      (struct sockaddr *)&sa, sizeof(sa));
}

static int
post_msg(struct zn_nf *nf, uint16_t type)
{
	struct zn_msg msg = { .type = type, .slot = nf->slot, .gen = nf->gen };

	if (rte_ring_mp_enqueue_elem(nf->msgq, &msg, sizeof(msg)) < 0)
		return -ENOBUFS;
	zn_nf_kick_manager(nf);
	return 0;
}

bool
zn_nf_mgr_alive(struct zn_nf *nf)
{
	return !zn_pidfd_exited(nf->mgr_pidfd);
}

int
zn_nf_send_leave(struct zn_nf *nf)
{
	struct zn_nf_slot *s = nf->s;

	__atomic_store_n(&s->req.leaving, 1, __ATOMIC_RELEASE);
	nf->leave_sent = true;
	nf->leave_deadline = zn_now_ns() + ZN_NF_LEAVE_TIMEOUT_NS;
	return post_msg(nf, ZN_MSG_LEAVE);
}

static bool
not_starting(void *arg)
{
	struct zn_nf *nf = arg;

	return __atomic_load_n(&nf->s->ctl.state, __ATOMIC_ACQUIRE) !=
	       ZN_NF_STARTING;
}

/* Join our service (READY) and wait until the manager routes to us, so
 * that packets we sent (from init) and that come back find us. Once. */
int
zn_nf_join(struct zn_nf *nf)
{
	uint64_t deadline = zn_now_ns() + ZN_REGISTER_TIMEOUT_NS;
	int rc;

	if (nf->joined)
		return 0;
	nf->joined = true;
	rc = post_msg(nf, ZN_MSG_READY);
	if (rc < 0) {
		ZN_LOG(ERR, "manager message ring is full");
		return rc;
	}
	while (!not_starting(nf)) {
		zn_db_wait(&nf->s->db, not_starting, nf, 50000);
		if (!zn_nf_mgr_alive(nf))
			return -ENOTCONN;
		if (zn_now_ns() > deadline) {
			ZN_LOG(ERR, "manager did not let the NF join");
			return -ETIMEDOUT;
		}
	}
	return 0; /* RUNNING, or already asked to stop: the loop drains */
}

static bool
reply_ready(void *arg)
{
	struct zn_nf *nf = arg;

	return __atomic_load_n(&nf->s->ctl.reply_gen, __ATOMIC_ACQUIRE) ==
	       nf->gen;
}

static int
register_nf(struct zn_nf *nf)
{
	struct zn_nf_slot *s = &nf->shm->nfs[nf->slot];
	uint64_t deadline = zn_now_ns() + ZN_REGISTER_TIMEOUT_NS;
	char ring_name[RTE_RING_NAMESIZE];
	uint64_t start = 0;
	int rc, reply;

	nf->s = s;
	/* A previous NF in this slot may have died a moment ago: its lock is
	 * released at once, but the manager must recover what its ledger says
	 * before we reset it. Wait until the manager has freed the slot. */
	while (__atomic_load_n(&s->ctl.state, __ATOMIC_ACQUIRE) != ZN_NF_FREE) {
		if (!zn_nf_mgr_alive(nf))
			return -ENOTCONN;
		if (zn_now_ns() > deadline) {
			ZN_LOG(ERR, "slot %u is still being reclaimed",
			       nf->slot);
			return -EBUSY;
		}
		usleep(5000);
	}
	/* Our own lines, left as the previous NF had them. */
	memset(&s->ledger, 0, sizeof(s->ledger));
	memset(&s->stats, 0, sizeof(s->stats));
	memset(s->counters, 0, sizeof(s->counters));
	memset(s->counter_names, 0, sizeof(s->counter_names));
	memset(&s->objs, 0, sizeof(s->objs));
	zn_nf_cmd_reset(nf);
	zn_proc_start_time(getpid(), &start);
	s->req.service_id = nf->service_id;
	s->req.n_counters = 0;
	s->req.pid = (uint32_t)getpid();
	s->req.start_time = start;
	s->req.leaving = 0;
	s->req.exited = 0;
	zn_strlcpy(s->req.name, nf->name, sizeof(s->req.name));
	nf->gen = __atomic_load_n(&s->ctl.gen, __ATOMIC_ACQUIRE) + 1;
	__atomic_store_n(&s->req.gen, nf->gen, __ATOMIC_RELEASE);

	rc = post_msg(nf, ZN_MSG_REGISTER);
	if (rc < 0) {
		ZN_LOG(ERR, "manager message ring is full");
		return rc;
	}
	while (!reply_ready(nf)) {
		zn_db_wait(&s->db, reply_ready, nf, 50000);
		if (!zn_nf_mgr_alive(nf)) {
			ZN_LOG(ERR, "manager died during registration");
			return -ENOTCONN;
		}
		if (zn_now_ns() > deadline) {
			ZN_LOG(ERR, "manager did not answer the registration");
			return -ETIMEDOUT;
		}
	}
	reply = s->ctl.reply;
	if (reply < 0) {
		ZN_LOG(ERR, "manager refused registration of service %u: %s",
		       nf->service_id, strerror(-reply));
		return reply;
	}
	nf->registered = true;
	zn_nf_self = nf;
	snprintf(ring_name, sizeof(ring_name), ZN_NF_RX_RING_FMT, nf->slot);
	nf->rx = rte_ring_lookup(ring_name);
	snprintf(ring_name, sizeof(ring_name), ZN_NF_TX_RING_FMT, nf->slot);
	nf->tx = rte_ring_lookup(ring_name);
	if (nf->rx == NULL || nf->tx == NULL || s->ctl.worker >= ZN_MAX_WORKERS)
		return -EPROTO;
	nf->w = &nf->shm->workers[s->ctl.worker];
	ZN_LOG(INFO, "NF '%s' registered with '%s': service %u, instance %u",
	       nf->name, nf->instance, nf->service_id, nf->slot);
	return 0;
}

struct steer_wait {
	struct zn_nf *nf;
	uint32_t gen;
};

static bool
steer_answered(void *arg)
{
	const struct steer_wait *sw = arg;

	return __atomic_load_n(&sw->nf->s->steer_reply.gen,
			       __ATOMIC_ACQUIRE) == sw->gen;
}

/* One request at a time, answered in the slot (zn_shm.h, steer). */
static int
steer_request(struct zn_nf *nf, uint8_t op, const struct zn_flow_key *key,
	      const struct zn_step *steps, unsigned int n, unsigned int flags)
{
	struct zn_steer_req *rq;
	struct steer_wait sw = { .nf = nf };
	uint64_t deadline;
	int rc;

	if (nf == NULL || key == NULL || !nf->registered ||
	    (key->ip_version != 4 && key->ip_version != 6) ||
	    (flags & ~(unsigned int)ZN_STEER_F_BOTH) != 0)
		return -EINVAL;
	if (op == ZN_STEER_ADD && (steps == NULL || n == 0 ||
				   n > ZN_MAX_CHAIN_HOPS))
		return -EINVAL;
	rq = &nf->s->steer;
	rq->op = op;
	rq->flags = (uint8_t)flags;
	rq->n_steps = (uint8_t)n;
	rq->key = *key;
	if (n > 0)
		memcpy(rq->steps, steps, n * sizeof(*steps));
	sw.gen = rq->gen + 1;
	__atomic_store_n(&rq->gen, sw.gen, __ATOMIC_RELEASE);
	rc = post_msg(nf, ZN_MSG_STEER);
	if (rc < 0)
		return rc;
	deadline = zn_now_ns() + ZN_STEER_TIMEOUT_NS;
	while (!steer_answered(&sw)) {
		/* Short spins first: the answer usually takes microseconds. */
		zn_db_wait(&nf->s->db, steer_answered, &sw, 1000);
		if (!zn_nf_mgr_alive(nf))
			return -ENOTCONN;
		if (zn_now_ns() > deadline)
			return -ETIMEDOUT;
	}
	return nf->s->steer_reply.rc;
}

bool ZN_API
zn_nf_manager_stopping(const struct zn_nf *nf)
{
	return nf != NULL && nf->shm != NULL &&
	       __atomic_load_n(&nf->shm->mgr.stopping, __ATOMIC_ACQUIRE) != 0;
}

int ZN_API
zn_nf_flow_steer(struct zn_nf *nf, const struct zn_flow_key *key,
		 const struct zn_step *steps, unsigned int n,
		 unsigned int flags)
{
	return steer_request(nf, ZN_STEER_ADD, key, steps, n, flags);
}

int ZN_API
zn_nf_flow_unsteer(struct zn_nf *nf, const struct zn_flow_key *key,
		   unsigned int flags)
{
	return steer_request(nf, ZN_STEER_DEL, key, NULL, 0, flags);
}

int ZN_API
zn_nf_open(int argc, char **argv, const struct zn_nf_ops *ops,
	   struct zn_nf **nfp)
{
	struct zn_nf *nf;
	char **nf_argv = NULL;
	int nf_argc = 0, rc;

	*nfp = NULL;
	if (ops == NULL || ops->name == NULL || ops->burst == NULL ||
	    ops->sz < offsetof(struct zn_nf_ops, fini))
		return -EINVAL;
	nf = calloc(1, sizeof(*nf));
	if (nf == NULL)
		return -ENOMEM;
	memcpy(&nf->ops, ops, RTE_MIN(ops->sz, sizeof(nf->ops)));
	nf->slot_lock_fd = -1;
	nf->mgr_pidfd = -1;
	nf->kick_fd = -1;

	rc = parse_lib_args(nf, argc, argv, &nf_argc, &nf_argv);
	if (rc < 0)
		goto fail;
	if (nf->ops.parse_args != NULL) {
		optind = 0;
		optarg = NULL;
		rc = nf->ops.parse_args(nf, nf_argc, nf_argv);
		if (rc < 0) {
			/* One line, no usage dump: getopt names an unknown
			 * option, a value getopt took is named here. */
			const char *val = optarg, *opt = NULL;

			if (val != NULL && optind >= 2 && optind <= nf_argc)
				opt = nf_argv[optind - 1] == val ?
				      nf_argv[optind - 2] : nf_argv[optind - 1];
			if (rc == -ECANCELED)
				;
			else if (opt != NULL && opt != val)
				fprintf(stderr, "%s: bad value '%s' for %s "
					"(--help lists the options)\n",
					nf->ops.name, val, opt);
			else
				fprintf(stderr, "%s: bad NF options (--help "
					"lists them)\n", nf->ops.name);
			goto fail;
		}
	} else if (nf_argc > 1) {
		fprintf(stderr, "%s: takes no NF options\n", nf->ops.name);
		rc = -EINVAL;
		goto fail;
	}
	free(nf_argv);
	nf_argv = NULL;

	rc = find_manager(nf);
	if (rc < 0)
		goto fail;
	rc = claim_slot(nf);
	if (rc < 0)
		goto fail;
	nf->kick_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	rc = eal_init(nf, argc > 0 ? argv[0] : nf->ops.name);
	if (rc < 0)
		goto fail;
	rc = check_compat(nf);
	if (rc < 0)
		goto fail;
	if (!zn_nf_mgr_alive(nf)) {
		ZN_LOG(ERR, "manager '%s' died while this NF was starting",
		       nf->instance);
		rc = -ENOTCONN;
		goto fail;
	}
	rc = register_nf(nf);
	if (rc < 0)
		goto fail;
	if (nf->ops.init != NULL) {
		rc = nf->ops.init(nf);
		if (rc < 0) {
			ZN_LOG(ERR, "NF '%s' init failed: %s", nf->name,
			       strerror(-rc));
			goto fail;
		}
	}
	nf->init_done = true;
	rc = zn_nf_join(nf);
	if (rc < 0)
		goto fail;
	*nfp = nf;
	return 0;
fail:
	free(nf_argv);
	zn_nf_close(nf);
	return rc;
}

void ZN_API
zn_nf_stop(struct zn_nf *nf)
{
	if (nf != NULL)
		nf->stop_req = 1;
}

void ZN_API
zn_nf_close(struct zn_nf *nf)
{
	if (nf == NULL)
		return;
	if (nf->init_done && nf->ops.fini != NULL)
		nf->ops.fini(nf);
	if (zn_nf_self == nf)
		zn_nf_self = NULL;
	if (nf->registered) {
		/* Whatever state we stop in, tell the manager we are gone so it
		 * reclaims the slot now rather than when the process exits. */
		if (!nf->leave_sent && zn_nf_mgr_alive(nf))
			zn_nf_send_leave(nf);
		__atomic_store_n(&nf->s->req.exited, 1, __ATOMIC_RELEASE);
		zn_nf_kick_manager(nf);
	}
	if (nf->slot_lock_fd >= 0)
		close(nf->slot_lock_fd);
	if (nf->kick_fd >= 0)
		close(nf->kick_fd);
	if (nf->mgr_pidfd >= 0)
		close(nf->mgr_pidfd);
	/* rte_eal_cleanup() is deliberately not called. In a secondary it
	 * closes the vdevs it attached, which the primary still uses, and
	 * talks to the primary over a multi-process channel that, when
	 * several NFs exit at once, may wait 5 s for one already going. The
	 * kernel releases everything at exit, the EAL cannot be initialised
	 * twice in a process anyway, and the manager removes this process's
	 * runtime files once it is gone (zn_registry_poll). */
	free(nf);
}

void ZN_API *
zn_nf_priv(const struct zn_nf *nf)
{
	return nf->priv;
}

void ZN_API
zn_nf_set_priv(struct zn_nf *nf, void *priv)
{
	nf->priv = priv;
}

uint16_t ZN_API
zn_nf_instance_id(const struct zn_nf *nf)
{
	return nf->slot;
}

uint16_t ZN_API
zn_nf_service_id(const struct zn_nf *nf)
{
	return nf->service_id;
}

const char ZN_API *
zn_nf_name(const struct zn_nf *nf)
{
	return nf->name;
}

struct rte_mempool ZN_API *
zn_nf_pktmbuf_pool(const struct zn_nf *nf)
{
	return nf->pool;
}

uint16_t ZN_API
zn_nf_port_count(const struct zn_nf *nf)
{
	return nf->shm->hdr.n_ports;
}

int ZN_API
zn_nf_port_mac(const struct zn_nf *nf, uint16_t port, uint8_t mac[6])
{
	if (port >= nf->shm->hdr.n_ports)
		return -ENODEV;
	memcpy(mac, nf->shm->hdr.port_mac[port], 6);
	return 0;
}

struct zn_nf *zn_nf_self;

int ZN_API
zn_nf_obj_track(struct zn_nf *nf, enum zn_nf_obj_type type, const char *name,
		const void *obj)
{
	struct zn_nf_slot *s;
	struct zn_nf_obj *o = NULL;

	if (nf == NULL || !nf->registered || obj == NULL || name == NULL ||
	    name[0] == '\0' || strlen(name) >= ZN_OBJ_NAME_LEN ||
	    type < ZN_NF_OBJ_HASH || type > ZN_NF_OBJ_FIB6)
		return -EINVAL;
	s = nf->s;
	for (uint32_t i = 0; i < s->objs.n && o == NULL; i++)
		if (s->objs.obj[i].type == 0)
			o = &s->objs.obj[i];
	if (o == NULL) {
		if (s->objs.n >= ZN_NF_MAX_OBJS)
			return -ENOSPC;
		o = &s->objs.obj[s->objs.n];
	}
	zn_strlcpy(o->name, name, sizeof(o->name));
	o->addr = (uint64_t)(uintptr_t)obj;
	__atomic_store_n(&o->type, (uint32_t)type, __ATOMIC_RELEASE);
	if (o == &s->objs.obj[s->objs.n])
		__atomic_store_n(&s->objs.n, s->objs.n + 1, __ATOMIC_RELEASE);
	return 0;
}

int ZN_API
zn_nf_obj_untrack(struct zn_nf *nf, const void *obj)
{
	struct zn_nf_slot *s;

	if (nf == NULL || !nf->registered || obj == NULL)
		return -EINVAL;
	s = nf->s;
	for (uint32_t i = 0; i < s->objs.n; i++)
		if (s->objs.obj[i].type != 0 &&
		    s->objs.obj[i].addr == (uint64_t)(uintptr_t)obj) {
			__atomic_store_n(&s->objs.obj[i].type, 0,
					 __ATOMIC_RELEASE);
			return 0;
		}
	return -ENOENT;
}

int ZN_API
zn_nf_counter_register(struct zn_nf *nf, const char *name)
{
	struct zn_nf_slot *s = nf->s;
	uint16_t idx;

	if (name == NULL || name[0] == '\0' ||
	    strlen(name) >= ZN_COUNTER_NAME_LEN)
		return -EINVAL;
	idx = s->req.n_counters;
	if (idx >= ZN_NF_MAX_COUNTERS)
		return -ENOSPC;
	zn_strlcpy(s->counter_names[idx], name, ZN_COUNTER_NAME_LEN);
	s->counters[idx] = 0;
	__atomic_store_n(&s->req.n_counters, idx + 1, __ATOMIC_RELEASE);
	return idx;
}

void ZN_API
zn_nf_counter_add(struct zn_nf *nf, int idx, uint64_t v)
{
	if ((unsigned int)idx < ZN_NF_MAX_COUNTERS)
		nf->s->counters[idx] += v;
}

static struct zn_nf *signal_nf;

static void
on_signal(int sig)
{
	(void)sig;
	zn_nf_stop(signal_nf);
}

int ZN_API
zn_nf_main(int argc, char **argv, const struct zn_nf_ops *ops)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct zn_nf *nf;
	int rc;

	rc = zn_nf_open(argc, argv, ops, &nf);
	if (rc == -ECANCELED)
		return 0;
	if (rc == -EINVAL)
		return 2;
	if (rc < 0)
		return rc == -ENOTCONN ? 3 : 1;
	signal_nf = nf;
	/* No SA_RESTART: a sleeping NF must wake up to stop. */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = zn_nf_run(nf);
	if (rc == -ENOTCONN)
		ZN_LOG(ERR, "NF '%s': manager '%s' is gone, exiting",
		       zn_nf_name(nf), nf->instance);
	else if (rc < 0)
		ZN_LOG(ERR, "NF '%s' stopped: %s", zn_nf_name(nf),
		       strerror(-rc));
	signal_nf = NULL;
	zn_nf_close(nf);
	return rc == 0 ? 0 : rc == -ENOTCONN ? 3 : 1;
}
