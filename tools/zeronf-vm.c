/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * zeronf-vm: one NF in a QEMU guest, as the manager sees an NF process
 * (docs/vm-nfs.md). Launched like an NF (nf.start, with the parameters
 * python/zeronf/vm.py makes; its first options are libzeronf's), it
 *   - finds the manager and claims an NF slot (the slot's lock is this
 *     process's: the manager sees the VM's NF as this process, and this
 *     process's exit as the NF's, whatever killed the VM);
 *   - boots the VM: the trust group's file as an ivshmem-plain device
 *     (the guest maps it as BAR 2), an initramfs made of the image
 *     (`zeronf vm image`: zeronf-vminit, the NF program and its
 *     libraries) and this VM's own files (the NF's argv, its slot, this
 *     process's pid), the guest's second serial port on a socket pair;
 *   - does on the host what the guest cannot (lib/common/zn_vm.h): sends
 *     the NF's kicks and messages to the group's kick socket with its own
 *     credentials, wakes host sleepers whose doorbell the guest rang;
 *   - passes SIGTERM on to the NF (the guest's init stops it), kills the
 *     VM with the manager, exits with the NF's exit code.
 *
 * Usage: zeronf-vm -i INSTANCE -s SERVICE -n NAME --trust-group G
 *            [--cpus LIST] [--log-level L] -- VM-OPTIONS [-- NF-OPTIONS]
 * VM options: --image FILE --kernel FILE [--mem MB] [--vcpus N]
 *            [--accel auto|tcg|kvm] [--qemu PROGRAM] [--poll-max-us US]
 *            [--vhost-user SOCK (an untrusted VM: no group, no slot)]
 * Exit status: the NF's; 2 bad options; 3 no manager; 1 otherwise.
 */

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "zeronf_vm.h"
#include "../lib/common/zn_cpus.h"
#include "../lib/common/zn_instance.h"
#include "../lib/shm/zn_kick.h"
#include "../lib/common/zn_nf_options.h"
#include "../lib/common/zn_vm.h"

#define STOP_GRACE_NS (10ULL * 1000 * 1000 * 1000) /* 'T', then 'K' */
#define KILL_GRACE_NS (2ULL * 1000 * 1000 * 1000)  /* 'K', then SIGKILL */

static int
usage_err(const char *fmt, const char *arg)
{
	fprintf(stderr, "zeronf-vm: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, " (usage: see docs/vm-nfs.md)\n");
	return -EINVAL;
}

static int
parse_num(const char *opt, const char *s, unsigned long lo, unsigned long hi,
	  unsigned long *v)
{
	uint64_t x;

	if (zn_parse_uint(s, lo, hi, &x) < 0)
		return usage_err("bad value for %s", opt);
	*v = (unsigned long)x;
	return 0;
}

/* libzeronf's options up to "--", the VM's up to the next "--", the
 * NF's after it. */
static int
parse(int argc, char **argv)
{
	static const struct option lib[] = {
		ZN_NF_LONG_OPTIONS, /* libzeronf's, all of them */
		{ NULL, 0, NULL, 0 },
	};
	static const struct option vmo[] = {
		{ "image", required_argument, NULL, 'I' },
		{ "kernel", required_argument, NULL, 'K' },
		{ "mem", required_argument, NULL, 'm' },
		{ "vcpus", required_argument, NULL, 'v' },
		{ "accel", required_argument, NULL, 'a' },
		{ "qemu", required_argument, NULL, 'q' },
		{ "poll-max-us", required_argument, NULL, 'p' },
		{ "vhost-user", required_argument, NULL, 'u' },
		{ "print-accel", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 },
	};
	const char *env = getenv("ZERONF_INSTANCE");
	int end1 = argc, end2, opt, idx;

	zn_strlcpy(V.instance, env != NULL ? env : ZN_INSTANCE_DEFAULT,
		   sizeof(V.instance));
	zn_strlcpy(V.name, "vm", sizeof(V.name));
	zn_strlcpy(V.log_level, "notice", sizeof(V.log_level));
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			end1 = i;
			break;
		}
	end2 = argc;
	for (int i = end1 + 1; i < argc; i++)
		if (strcmp(argv[i], "--") == 0) {
			end2 = i;
			break;
		}
	optind = 0;
	while ((idx = -1, opt = getopt_long(end1, argv, ZN_NF_SHORT_OPTIONS,
					    lib, &idx)) != -1) {
		switch (opt) {
		case 'i':
			if (!zn_instance_name_valid(optarg))
				return usage_err("bad instance '%s'", optarg);
			zn_strlcpy(V.instance, optarg, sizeof(V.instance));
			break;
		case 's':
			if (parse_num("--service", optarg, 1,
				      ZN_MAX_SERVICES - 1, &V.service) < 0)
				return -EINVAL;
			break;
		case 'n':
			if (strlen(optarg) == 0 ||
			    strlen(optarg) >= sizeof(V.name))
				return usage_err("bad name '%s'", optarg);
			zn_strlcpy(V.name, optarg, sizeof(V.name));
			break;
		case 'c':
			if (zn_parse_cpulist(optarg, &V.cpus) < 0)
				return usage_err("bad --cpus '%s'", optarg);
			V.cpus_set = true;
			break;
		case 'l':
			zn_strlcpy(V.log_level, optarg, sizeof(V.log_level));
			break;
		case 'g':
			if (!zn_instance_name_valid(optarg))
				return usage_err("bad trust group '%s'",
						 optarg);
			zn_strlcpy(V.group, optarg, sizeof(V.group));
			break;
		case '?':
			return -EINVAL; /* getopt said which */
		default: /* libzeronf's, for an NF process, not a VM's */
			return usage_err("--%s: an option of NF processes, not "
					 "of zeronf-vm", idx >= 0 ?
					 lib[idx].name : "help");
		}
	}
	if (optind < end1)
		return usage_err("unexpected argument '%s'", argv[optind]);
	/* The VM's options: getopt on argv[end1 .. end2), argv[end1] as
	 * its program name. */
	optind = 0;
	while (end1 < argc &&
	       (opt = getopt_long(end2 - end1, argv + end1, "", vmo,
				  NULL)) != -1) {
		switch (opt) {
		case 'I': V.image = optarg; break;
		case 'K': V.kernel = optarg; break;
		case 'q': V.qemu = optarg; break;
		case 'u': V.vhost = optarg; break;
		case 'P': V.print_accel = true; break;
		case 'a':
			if (strcmp(optarg, "tcg") != 0 &&
			    strcmp(optarg, "kvm") != 0 &&
			    strcmp(optarg, "auto") != 0)
				return usage_err("--accel: auto, tcg or kvm, "
						 "not '%s'", optarg);
			V.accel = optarg;
			break;
		case 'm':
			if (parse_num("--mem", optarg, 128, 1 << 20,
				      &V.mem_mb) < 0)
				return -EINVAL;
			break;
		case 'v':
			if (parse_num("--vcpus", optarg, 1, 64, &V.vcpus) < 0)
				return -EINVAL;
			break;
		case 'p':
			if (parse_num("--poll-max-us", optarg, 1, 100000,
				      &V.poll_max_us) < 0)
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	if (end1 < argc && optind < end2 - end1)
		return usage_err("unexpected VM argument '%s'",
				 argv[end1 + optind]);
	if (V.image == NULL || V.kernel == NULL)
		return usage_err("%s are required", "--image and --kernel");
	if (V.print_accel)
		return 0;
	/* A member of a trust group, or untrusted (a vhost-user NIC, no
	 * slot: the manager sees a port) */
	if (V.vhost == NULL && V.service == 0)
		return usage_err("%s is required", "--service");
	if (V.vhost == NULL && V.group[0] == '\0')
		return usage_err("%s is required: a VM's NF is a member of a "
				 "trust group (or untrusted: --vhost-user)",
				 "--trust-group");
	if (V.vhost != NULL && V.group[0] != '\0')
		return usage_err("%s: an untrusted VM maps no trust group's "
				 "memory", "--vhost-user");
	V.nf_argc = end2 < argc ? argc - end2 - 1 : 0;
	if (V.nf_argc > MAX_NF_ARGS)
		return usage_err("%s: too many NF options", "--");
	V.nf_argv = argv + end2 + 1;
	return 0;
}

/* The manager, and how we learn that it is gone (zn_mgr_watch). */
static int
find_manager(void)
{
	struct zn_mgr_lock_info info;
	int rc = zn_mgr_probe(V.instance, &info);

	if (rc != 1 || !info.ready) {
		say("no manager instance '%s' is %s", V.instance,
		    rc == 1 ? "ready" : "running");
		return -ENOTCONN;
	}
	return zn_mgr_watch(V.instance, &info, &V.mgr_fd, &V.mgr_lock_fd);
}

/* The group's file: mapped here (read only) to wake its sleepers, and
 * given to QEMU; its length is the BAR's, a power of two (mgr/trust/group.c). */
static int
group_open(void)
{
	char file[64];
	struct stat st;
	int fd, rc;

	rc = zn_group_file(V.instance, V.group, &V.gidx, V.gpath,
			   sizeof(V.gpath));
	if (rc < 0) {
		say("manager '%s' has no trust group '%s'", V.instance,
		    V.group);
		return rc;
	}
	fd = open(V.gpath, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		rc = -errno;
		say("cannot open %s: %s", V.gpath, strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	V.glen = (uint64_t)st.st_size;
	if (V.glen == 0 || (V.glen & (V.glen - 1)) != 0) {
		close(fd);
		say("%s is %" PRIu64 " bytes, not a power of two: a manager "
		    "older than its VMs?", V.gpath, V.glen);
		return -EPROTO;
	}
	V.gmap = mmap(NULL, V.glen, PROT_READ, MAP_SHARED | MAP_NORESERVE, fd,
		      0);
	close(fd);
	if (V.gmap == MAP_FAILED) {
		V.gmap = NULL;
		return -errno;
	}
	snprintf(file, sizeof(file), ZN_KICK_GROUP_SOCK_FMT, V.gidx);
	V.kick_sa.sun_family = AF_UNIX;
	if (zn_runtime_path(V.instance, file, V.kick_sa.sun_path,
			    sizeof(V.kick_sa.sun_path)) < 0)
		return -ENAMETOOLONG;
	V.kick_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	return V.kick_fd < 0 ? -errno : 0;
}

static void
cleanup(void)
{
	if (V.initrd[0] != '\0')
		unlink(V.initrd);
	if (V.dir[0] != '\0')
		rmdir(V.dir);
}

/* The guest NF's own doorbell, on the host: each change of its seq (a
 * producer woke it from a sleep) is a byte on the guest's wake-up port,
 * on which the NF sleeps (lib/nf/nf_guest.c wait_woken). A thread: a
 * futex cannot be polled. */
static void *
waker(void *arg)
{
	const struct zn_group_home *h = V.gmap;
	uint32_t *seq = (uint32_t *)(uintptr_t)&h->nfs[V.slot].db.seq;
	uint32_t last = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

	(void)arg;
	for (;;) {
		uint32_t cur = __atomic_load_n(seq, __ATOMIC_ACQUIRE);

		if (cur != last) {
			last = cur;
			(void)!write(V.wake, (char[]){ ZN_VM_WAKEUP }, 1);
			continue;
		}
		syscall(SYS_futex, seq, FUTEX_WAIT, last, NULL, NULL, 0);
	}
	return NULL;
}

/* A frame from the guest (zn_vm.h). */
static void
frame(const uint8_t *b, unsigned int len)
{
	uint32_t off;

	V.frames++;
	/* An untrusted VM speaks for no slot and maps no group: its init's
	 * hello and exit code only. */
	if (V.vhost != NULL && b[0] != ZN_VM_HELLO && b[0] != ZN_VM_EXIT)
		return;
	switch (b[0]) {
	case 'k':
	case 'R':
	case 'M':
		/* As the NF would send it: with our credentials. A full
		 * socket is waited for (the NF's send_msg does), 100 ms. */
		for (unsigned int i = 0; i < 100; i++) {
			if (sendto(V.kick_fd, b, len, MSG_DONTWAIT,
				   (struct sockaddr *)&V.kick_sa,
				   sizeof(V.kick_sa)) == (ssize_t)len ||
			    (errno != EAGAIN && errno != EINTR) || b[0] == 'k')
				break;
			usleep(1000);
		}
		break;
	case ZN_VM_WAKE:
		memcpy(&off, b + 1, sizeof(off));
		/* Any aligned word of the group's file: a spurious wake-up
		 * is one the doorbell protocol allows. */
		if (off % 4 == 0 && (uint64_t)off + 4 <= V.glen)
			syscall(SYS_futex, (char *)V.gmap + off, FUTEX_WAKE,
				1, NULL, NULL, 0);
		break;
	case ZN_VM_HELLO:
		say("guest up in %.1f s", (double)(zn_now_ns() - V.started) / 1e9);
		/* QEMU read the initramfs before the guest ran: gone now,
		 * not left behind if this process is killed later. */
		cleanup();
		break;
	case ZN_VM_EXIT:
		V.nf_code = b[1];
		break;
	}
}

/* Whatever came on the serial port; a byte that starts no frame is
 * counted and skipped. 0, or -1 at EOF. */
static int
port_read(void)
{
	static uint8_t buf[4096];
	static size_t have;
	ssize_t n = read(V.port, buf + have, sizeof(buf) - have);
	size_t at = 0;

	if (n <= 0)
		return n < 0 && (errno == EINTR || errno == EAGAIN) ? 0 : -1;
	have += (size_t)n;
	while (at < have) {
		unsigned int len = zn_vm_frame_len(buf[at]);

		if (len == 0) {
			if (V.bad_bytes++ == 0)
				say("guest sent 0x%02x, which starts no frame "
				    "(counted, skipped)", buf[at]);
			at++;
			continue;
		}
		if (have - at < len)
			break;
		frame(buf + at, len);
		at += len;
	}
	memmove(buf, buf + at, have - at);
	have -= at;
	return 0;
}

static int
run(void)
{
	uint64_t stop_at = 0, kill_at = 0;
	int status = 0;

	for (;;) {
		struct pollfd p[3] = {
			{ .fd = V.port, .events = POLLIN },
			{ .fd = V.sig_fd, .events = POLLIN },
			{ .fd = V.mgr_fd, .events = POLLIN },
		};
		uint64_t now = zn_now_ns();
		struct signalfd_siginfo si;
		int timeout = stop_at || V.mgr_fd < 0 ? 100 : -1;

		if (stop_at && now > stop_at && kill_at == 0) {
			(void)!write(V.port, (uint8_t[]){ ZN_VM_KILL }, 1);
			kill_at = now + KILL_GRACE_NS;
		}
		if (kill_at && now > kill_at)
			kill(V.qemu_pid, SIGKILL);
		if (V.mgr_fd < 0 && !zn_mgr_alive(V.mgr_fd, V.mgr_lock_fd)) {
			say("manager '%s' is gone: VM killed", V.instance);
			kill(V.qemu_pid, SIGKILL);
		}
		if (poll(p, 3, timeout) < 0 && errno != EINTR)
			return -errno;
		if ((p[0].revents & (POLLIN | POLLHUP)) && port_read() < 0)
			p[0].fd = -1, V.port = -1; /* QEMU closed it */
		if (p[2].revents & POLLIN) {
			say("manager '%s' is gone: VM killed", V.instance);
			kill(V.qemu_pid, SIGKILL);
		}
		if (p[1].revents & POLLIN &&
		    read(V.sig_fd, &si, sizeof(si)) == sizeof(si)) {
			if (si.ssi_signo == SIGCHLD &&
			    waitpid(V.qemu_pid, &status, WNOHANG) ==
			    V.qemu_pid)
				break;
			if ((si.ssi_signo == SIGTERM ||
			     si.ssi_signo == SIGINT) && stop_at == 0) {
				/* The guest's init stops the NF: it leaves
				 * its service as a host NF would. */
				if (V.port >= 0)
					(void)!write(V.port, (uint8_t[]){
						ZN_VM_STOP }, 1);
				stop_at = now + STOP_GRACE_NS;
			}
		}
		if (V.port < 0 &&
		    waitpid(V.qemu_pid, &status, 0) == V.qemu_pid)
			break;
	}
	while (V.port >= 0 && port_read() == 0) /* its last frames */
		;
	if (V.nf_code >= 0)
		return V.nf_code;
	say("VM ended without its NF's exit code (QEMU %s %d)",
	    WIFEXITED(status) ? "exit" : "signal",
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return 1;
}

int
main(int argc, char **argv)
{
	pthread_t tid;
	sigset_t set;
	int rc;

	if (parse(argc, argv) < 0)
		return 2;
	if (V.print_accel) { /* what --accel auto makes of this host */
		zn_strlcpy(V.initrd, V.image, sizeof(V.initrd));
		vm_pick_accel();
		printf("%s\n", V.accel);
		return 0;
	}
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGCHLD);
	sigprocmask(SIG_BLOCK, &set, NULL);
	V.sig_fd = signalfd(-1, &set, SFD_CLOEXEC);
	signal(SIGPIPE, SIG_IGN);
	if (V.cpus_set && sched_setaffinity(0, sizeof(V.cpus), &V.cpus) < 0)
		say("--cpus: %s (not applied)", strerror(errno));
	if (find_manager() < 0)
		return 3;
	if (V.vhost == NULL) {
		rc = zn_slot_claim(V.instance, &V.slot);
		if (rc < 0) {
			say("cannot claim an NF slot of '%s': %s", V.instance,
			    strerror(-rc));
			return 1;
		}
		V.slot_fd = rc;
		if (group_open() < 0)
			return 1;
	}
	snprintf(V.dir, sizeof(V.dir), "%s/zeronf-vm.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(V.dir) == NULL) {
		say("cannot make %s: %s", V.dir, strerror(errno));
		V.dir[0] = '\0';
		return 1;
	}
	if ((size_t)snprintf(V.initrd, sizeof(V.initrd), "%s/initrd",
			     V.dir) >= sizeof(V.initrd)) {
		cleanup();
		return 1;
	}
	rc = vm_make_initrd();
	if (rc == 0) {
		vm_pick_accel();
		rc = vm_start_qemu();
	}
	if (rc < 0) {
		say("cannot start the VM: %s", strerror(-rc));
		cleanup();
		return 1;
	}
	rc = V.vhost != NULL ? 0 : pthread_create(&tid, NULL, waker, NULL);
	if (rc != 0) {
		say("cannot start the wake-up thread: %s", strerror(rc));
		kill(V.qemu_pid, SIGKILL);
		waitpid(V.qemu_pid, NULL, 0);
		cleanup();
		return 1;
	}
	if (V.vhost != NULL)
		say("untrusted VM '%s' on vhost-user %s (%s) started: QEMU pid "
		    "%d", V.name, V.vhost, V.accel, (int)V.qemu_pid);
	else
		say("VM of NF '%s' (slot %u, group '%s', %s) started: QEMU pid "
		    "%d", V.name, V.slot, V.group, V.accel, (int)V.qemu_pid);
	rc = run();
	cleanup();
	return rc < 0 ? 1 : rc;
}
