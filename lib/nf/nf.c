/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* libzeronf control path: opening an NF (EAL, the manager's shared
 * memory, its slot), closing it, and the accessors (Long: attach and
 * detach read in their order). Options are parsed in
 * nf_args.c, messages to the manager are in nf_msg.c, the packet loop is
 * in nf_run.c. */

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
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
#include "../common/zn_pool_ops.h"
#include "../common/zn_instance.h"
#include "../common/zn_util.h"
#include "../common/zn_cpus.h"

/* zn_nf_main's NF for SIGINT/SIGTERM: set just before it tells the
 * manager it is ready (zn_nf_open), so that a stop asked as soon as the
 * manager shows it running is a clean one. Before that, the signal's
 * default action (the process ends). */
static struct zn_nf *volatile signal_nf;
static bool signal_main; /* zn_nf_main runs: zn_nf_open sets signal_nf */

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
	/* Its pidfd, or its instance lock where it is not seen here (a
	 * sandbox's PID namespace): zn_nf_mgr_alive. */
	if (zn_mgr_watch(nf->instance, &info, &nf->mgr_pidfd,
			 &nf->mgr_lock_fd) == 0)
		return 0;
	ZN_LOG(ERR, "manager '%s' (pid %d) is gone", nf->instance,
	       (int)info.pid);
	return -ENOTCONN;
}

/* Claim the first free NF slot: its lock file is held for the NF's life, so
 * the kernel releases it however the NF dies. The slot fixes the lcore id.
 * @p given: the one its launcher claimed for it, if it did (a bundle's
 * later NFs: no, that one is its first NF's). */
static int
claim_slot(struct zn_nf *nf, bool given)
{
	int fd = given ? zn_slot_given(nf->instance, &nf->slot) : -ENOENT;

	if (fd == -ENOENT) {
		fd = zn_slot_claim(nf->instance, &nf->slot);
		if (fd == -EBUSY)
			ZN_LOG(ERR, "all %u NF slots of '%s' are taken",
			       ZN_MAX_NFS, nf->instance);
	} else if (fd == -EBUSY) {
		ZN_LOG(ERR, "the slot %s names is another NF's", ZN_SLOT_ENV);
	} else if (fd == -EBADF) {
		ZN_LOG(ERR, "%s: not a slot of '%s'", ZN_SLOT_ENV,
		       nf->instance);
	}
	if (fd >= 0)
		nf->slot_lock_fd = fd;
	else if (fd != -EBUSY && fd != -EBADF)
		ZN_LOG(ERR, "cannot lock a slot of '%s': %s", nf->instance,
		       strerror(-fd));
	return fd < 0 ? fd : 0;
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
	if (nf->group_name[0] != '\0') {
		/* An NF of a trust group is no secondary of the manager: its
		 * EAL is its own, in its own memory (no hugepage file, no
		 * shared configuration, no multi-process channel); what it
		 * shares with the manager is its group's file alone, mapped
		 * in nf_group.c. A sandbox gives it nothing else. */
		eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-shconf";
		eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-huge";
		eal_argv[eal_argc++] = (char *)(uintptr_t)"-m";
		eal_argv[eal_argc++] = (char *)(uintptr_t)
				       RTE_STR(ZN_NF_OWN_MEM_MB);
	} else {
		eal_argv[eal_argc++] = (char *)(uintptr_t)
				       "--proc-type=secondary";
	}
	eal_argv[eal_argc++] = prefix;
	eal_argv[eal_argc++] = lcores;
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-pci";
	eal_argv[eal_argc++] = (char *)(uintptr_t)"--no-telemetry";
	eal_argv[eal_argc++] = loglvl;
	eal_argv[eal_argc] = NULL;

	zn_nf_short_calibration(nf->group_name[0] != '\0'); /* nf_calib.c */
	rc = rte_eal_init(eal_argc, eal_argv);
	zn_nf_short_calibration(false);
	if (rc < 0) {
		rc = rte_errno ? -rte_errno : -EIO;
		ZN_LOG(ERR, "EAL init (%s of '%s') failed: %s",
		       nf->group_name[0] != '\0' ? "NF of a trust group" :
		       "secondary", nf->instance, rte_strerror(-rc));
		return rc;
	}
	/* The EAL made its service-core tables (~152 KB, rte_calloc) in the
	 * manager's shared heap; an NF runs no DPDK service, and a secondary
	 * that dies (or exits without rte_eal_cleanup(), see zn_nf_close)
	 * would leave them there: every NF start leaked them (measured by the
	 * soak bench's heap line). Freed at once. */
	rte_service_finalize();
	/* The manager answers our device scan with nothing (its ports are
	 * its own: mgr/port/port_private.c); a port here means something opened
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
 * and the mempool ops (indexed per process). An NF of no group reads
 * zn_shm in the EAL's memory; an NF of a trust group, which maps none of
 * it, the copy in its group's file (nf_group.c set nf->hdr). */
static int
check_compat(struct zn_nf *nf)
{
	const struct rte_mbuf_dynfield meta = {
		.name = ZN_PKT_META_DYNFIELD,
		.size = sizeof(struct zn_pkt_meta),
		.align = __alignof__(struct zn_pkt_meta),
	};
	const struct zn_shm_hdr *h;
	const struct rte_mempool_ops *ops;
	const char *want_ops;
	int off, want_idx;

	if (nf->gva == NULL) {
		const struct rte_memzone *mz = rte_memzone_lookup(ZN_SHM_NAME);

		if (mz == NULL) {
			ZN_LOG(ERR, "instance '%s' has no ZeroNF shared zone: "
			       "is it a ZeroNF manager?", nf->instance);
			return -EPROTO;
		}
		nf->shm = mz->addr;
		nf->hdr = &nf->shm->hdr;
		nf->stopping = &nf->shm->mgr.stopping;
		nf->lb_epoch = &nf->shm->rt.lb_epoch;
		nf->links = nf->shm->links;
		nf->w_db0 = &nf->shm->workers[0].db;
		nf->w_db_stride = sizeof(struct zn_worker_shm) /
				  sizeof(struct zn_doorbell);
	}
	h = nf->hdr;
	if (h->magic != ZN_SHM_MAGIC || h->abi_version != ZN_ABI_VERSION ||
	    h->shm_size != sizeof(struct zn_shm) ||
	    h->slot_size != sizeof(struct zn_nf_slot)) {
		ZN_LOG(ERR, "manager '%s' is incompatible: ABI %u (shm %u B, "
		       "slot %u B, build %.64s); this NF has ABI %u (shm %zu "
		       "B, slot %zu B, build %s)", nf->instance,
		       h->abi_version, h->shm_size, h->slot_size, h->build_id,
		       ZN_ABI_VERSION, sizeof(struct zn_shm),
		       sizeof(struct zn_nf_slot), zn_build_id);
		return -EPROTO;
	}
	if (strncmp(h->dpdk_version, rte_version(),
		    sizeof(h->dpdk_version)) != 0) {
		ZN_LOG(ERR, "manager '%s' runs %.64s, this NF %s: rebuild the "
		       "NF", nf->instance, h->dpdk_version, rte_version());
		return -EPROTO;
	}
	if (strncmp(h->build_id, zn_build_id, sizeof(h->build_id)) != 0)
		ZN_LOG(NOTICE, "manager build %.64s, NF build %s (same ABI %u)",
		       h->build_id, zn_build_id, ZN_ABI_VERSION);

	if (nf->gva == NULL) {
		nf->pool = rte_mempool_lookup(h->pool_name);
		if (nf->pool == NULL) {
			ZN_LOG(ERR, "packet pool '%s' not found", h->pool_name);
			return -EPROTO;
		}
		want_ops = h->pool_ops;
		want_idx = h->pool_ops_index;
	} else {
		nf->pool = nf->gpool; /* the only one it maps */
		want_ops = ZN_POOL_OPS;
		want_idx = zn_pool_ops_index(ZN_POOL_OPS);
	}
	ops = rte_mempool_get_ops(nf->pool->ops_index);
	if (nf->pool->ops_index != want_idx || ops == NULL ||
	    strncmp(ops->name, want_ops, sizeof(ops->name)) != 0) {
		ZN_LOG(ERR, "mempool ops mismatch: the manager's pool uses "
		       "'%.32s' (index %d) but index %d is '%s' in this NF. "
		       "Manager and NFs must load DPDK drivers the same way: "
		       "link both with -Wl,--no-as-needed against the same "
		       "DPDK (see docs/nf-guide.md)", want_ops, want_idx,
		       nf->pool->ops_index, ops ? ops->name : "(none)");
		return -EPROTO;
	}
	/* The manager's offset: a secondary finds it registered; an NF of a
	 * group registers it in its own EAL where the manager has it. */
	off = nf->gva == NULL ?
	      rte_mbuf_dynfield_lookup(ZN_PKT_META_DYNFIELD, NULL) :
	      rte_mbuf_dynfield_register_offset(&meta,
						(size_t)h->meta_offset);
	if (off < 0 || off != h->meta_offset) {
		ZN_LOG(ERR, "packet metadata field not found (%d)", off);
		return -EPROTO;
	}
	zn_pkt_meta_offset = off;
	if (nf->gva != NULL)
		return 0; /* its messages go on the kick socket (nf_msg.c) */
	nf->msgq = rte_ring_lookup(ZN_MSG_RING_NAME);
	if (nf->msgq == NULL) {
		ZN_LOG(ERR, "manager message ring not found");
		return -EPROTO;
	}
	return 0;
}

/* What a bundle's later member shares with its first (nf_bundle.c): one
 * process is one manager instance, one trust domain, one EAL. */
static int
same_process(const struct zn_nf *nf, const struct zn_nf *first)
{
	if (nf->guest_conf[0] != '\0') {
		ZN_LOG(ERR, "NF '%s': a bundle does not run in a VM", nf->name);
		return -EINVAL;
	}
	if (strcmp(nf->instance, first->instance) != 0 ||
	    strcmp(nf->group_name, first->group_name) != 0) {
		ZN_LOG(ERR, "NF '%s': not of the instance and trust group of "
		       "'%s', the bundle's first NF (one process, one trust "
		       "domain)", nf->name, first->name);
		return -EINVAL;
	}
	return 0;
}

int
zn_nf_open_in(int argc, char **argv, const struct zn_nf_ops *ops,
	      struct zn_nf *first, struct zn_nf **nfp)
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
	nf->acct = first != NULL ? first->acct : &nf->acct_own;
	nf->slot_lock_fd = -1;
	nf->pid_claim_fd = -1;
	nf->mgr_pidfd = -1;
	nf->mgr_lock_fd = -1;
	nf->kick_fd = -1;
	nf->wake_fd = -1;

	rc = zn_nf_parse_lib_args(nf, argc, argv, &nf_argc, &nf_argv);
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

	if (first != NULL && (rc = same_process(nf, first)) < 0)
		goto fail;
	if (nf->guest_conf[0] != '\0') {
		/* In a VM: the helper found the manager and holds our slot
		 * (nf_guest.c) */
		rc = zn_nf_guest_open(nf);
		if (rc < 0)
			goto fail;
	} else {
		rc = find_manager(nf);
		/* a secondary where the manager's pid is not seen: a pid of
		 * its own first (nf_pid.c); before the slot, which a fork
		 * would share. A bundle's process claimed it once. */
		if (rc == 0 && nf->group_name[0] == '\0' &&
		    nf->mgr_pidfd < 0 && first == NULL)
			rc = zn_nf_pid_claim(nf);
		if (rc < 0)
			goto fail;
		rc = claim_slot(nf, first == NULL);
		if (rc < 0)
			goto fail;
		nf->kick_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	}
	/* An NF of a trust group holds its group's packets: no process of
	 * the same uid without CAP_SYS_PTRACE may trace it or open its
	 * /proc/PID/mem, fds or root (another group's NF, should it ever
	 * see this one's pid). No core dump either: it would hold them. */
	if (nf->group_name[0] != '\0' && prctl(PR_SET_DUMPABLE, 0) < 0) {
		rc = -errno;
		goto fail;
	}
	/* one EAL a process: a bundle's first NF's (its lcore is theirs) */
	if (first == NULL) {
		rc = eal_init(nf, argc > 0 ? argv[0] : nf->ops.name);
		if (rc < 0)
			goto fail;
	}
	nf->eal_ready = true;
	rc = first == NULL ? zn_nf_group_attach(nf) :
	     zn_nf_group_share(nf, first);
	if (rc == 0)
		rc = check_compat(nf);
	if (rc < 0)
		goto fail;
	if (!zn_nf_mgr_alive(nf)) {
		ZN_LOG(ERR, "manager '%s' died while this NF was starting",
		       nf->instance);
		rc = -ENOTCONN;
		goto fail;
	}
	rc = zn_nf_register(nf);
	if (rc < 0)
		goto fail;
	zn_nf_self = nf;
	/* A bundle's later member is the bundle's before its init: a send
	 * there (a generator's first window) waits for the members open
	 * before it by running their turns (nf_bundle.c assist); its own
	 * place in the order comes once it is open. */
	if (first != NULL) {
		nf->bundle = first->bundle;
		nf->assist = first->assist;
		nf->bundle_idx = UINT_MAX;
	}
	if (nf->ops.init != NULL) {
		rc = nf->ops.init(nf);
		if (rc < 0) {
			ZN_LOG(ERR, "NF '%s' init failed: %s", nf->name,
			       strerror(-rc));
			goto fail;
		}
	}
	nf->init_done = true;
	if (signal_main)
		signal_nf = nf;
	rc = zn_nf_join(nf);
	if (rc < 0)
		goto fail;
	*nfp = nf;
	return 0;
fail:
	if (signal_nf == nf)
		signal_nf = NULL;
	free(nf_argv);
	zn_nf_close(nf);
	return rc;
}

int ZN_API
zn_nf_open(int argc, char **argv, const struct zn_nf_ops *ops,
	   struct zn_nf **nfp)
{
	return zn_nf_open_in(argc, argv, ops, NULL, nfp);
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
		/* What it frees from now on counts for no one */
		if (nf->acct_owner)
			zn_pool_ops_account(NULL);
		/* Whatever state we stop in, tell the manager we are gone so it
		 * reclaims the slot now rather than when the process exits. */
		if (!nf->leave_sent && zn_nf_mgr_alive(nf))
			zn_nf_send_leave(nf);
		__atomic_store_n(&nf->s->req.exited, 1, __ATOMIC_RELEASE);
		zn_nf_kick_manager(nf);
	}
	if (nf->slot_lock_fd >= 0)
		close(nf->slot_lock_fd);
	if (nf->pid_claim_fd >= 0)
		close(nf->pid_claim_fd);
	if (nf->kick_fd >= 0)
		close(nf->kick_fd);
	if (nf->wake_fd >= 0)
		close(nf->wake_fd);
	if (nf->mgr_pidfd >= 0)
		close(nf->mgr_pidfd);
	if (nf->mgr_lock_fd >= 0)
		close(nf->mgr_lock_fd);
	zn_nf_group_detach(nf);
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
	/* In a trust group, packets it makes stay in the group's memory. */
	return nf->gpool != NULL ? nf->gpool : nf->pool;
}

uint16_t ZN_API
zn_nf_port_count(const struct zn_nf *nf)
{
	return nf->hdr->n_ports;
}

int ZN_API
zn_nf_port_mac(const struct zn_nf *nf, uint16_t port, uint8_t mac[6])
{
	if (port >= nf->hdr->n_ports)
		return -ENODEV;
	memcpy(mac, nf->hdr->port_mac[port], 6);
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
	    type < ZN_NF_OBJ_HASH || type > ZN_NF_OBJ_ACL)
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

static void
on_signal(int sig)
{
	struct zn_nf *nf = signal_nf;

	if (nf == NULL) {
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	zn_nf_stop(nf);
}

int ZN_API
zn_nf_main(int argc, char **argv, const struct zn_nf_ops *ops)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct zn_nf *nf;
	int rc;

	/* No SA_RESTART: a sleeping NF must wake up to stop. */
	sigemptyset(&sa.sa_mask);
	signal_main = true;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	rc = zn_nf_open(argc, argv, ops, &nf);
	if (rc == -ECANCELED)
		return 0;
	if (rc == -EINVAL)
		return 2;
	if (rc < 0)
		return rc == -ENOTCONN ? 3 : 1;
	signal_nf = nf;
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
