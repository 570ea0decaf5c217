/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/* zeronf-vm: booting the VM (docs/vm-nfs.md). Its initramfs is the image
 * with this VM's own files appended (the kernel reads concatenated
 * archives); QEMU gets the trust group's file as an ivshmem-plain
 * device, the image, and the guest's second serial port on a socket
 * pair, and dies with this process. */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "zeronf_vm.h"
#include "../lib/common/zn_vm.h"

/* newc cpio (the kernel's initramfs format): one entry. */
static int
cpio_add(FILE *f, const char *name, unsigned int mode, const void *data,
	 size_t len)
{
	static const char zero[4];
	size_t nlen = strlen(name) + 1;

	if (fprintf(f, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X"
		    "%08zX%08X", 0u, mode, 0u, 0u, 1u, 0u, len, 0u, 0u, 0u, 0u,
		    nlen, 0u) < 0 ||
	    fwrite(name, 1, nlen, f) != nlen ||
	    fwrite(zero, 1, (4 - (110 + nlen) % 4) % 4, f) !=
	    (4 - (110 + nlen) % 4) % 4 ||
	    (len > 0 && fwrite(data, 1, len, f) != len) ||
	    fwrite(zero, 1, (4 - len % 4) % 4, f) != (4 - len % 4) % 4)
		return -EIO;
	return 0;
}

/* The VM's initramfs: the image, then this VM's files (the kernel reads
 * concatenated archives, the later entry winning). */
int
vm_make_initrd(void)
{
	char conf[512], *args = NULL, *p;
	size_t alen = 0;
	uint64_t start = 0;
	FILE *in = NULL, *out = NULL;
	char buf[65536];
	size_t n;
	int rc = -EIO, len;
	const char *lib[] = { ZN_VM_NF, "-i", V.instance, "-s", NULL, "-n",
			      V.name, "--trust-group", V.group, "--guest",
			      ZN_VM_CONF, "--log-level", V.log_level, "--" };
	char svc[16];

	snprintf(svc, sizeof(svc), "%lu", V.service);
	lib[4] = svc;
	zn_proc_start_time(getpid(), &start);
	len = snprintf(conf, sizeof(conf), "slot=%u\nowner_pid=%d\n"
		       "owner_start=%" PRIu64 "\nkick=%s\nwake=%s\n"
		       "poll_max_us=%lu\n",
		       V.slot, (int)getpid(), start, ZN_VM_KICK_DEV,
		       ZN_VM_WAKE_DEV,
		       V.poll_max_us ? V.poll_max_us :
				       (unsigned long)ZN_VM_POLL_MAX_US);
	/* An untrusted VM's program is no libzeronf NF: its own options
	 * only. */
	size_t n_lib = V.vhost != NULL ? 1 : sizeof(lib) / sizeof(lib[0]);

	for (size_t i = 0; i < n_lib; i++)
		alen += strlen(lib[i]) + 1;
	for (int i = 0; i < V.nf_argc; i++)
		alen += strlen(V.nf_argv[i]) + 1;
	args = malloc(alen);
	if (args == NULL)
		return -ENOMEM;
	p = args;
	for (size_t i = 0; i < n_lib; i++)
		p = stpcpy(p, lib[i]) + 1;
	for (int i = 0; i < V.nf_argc; i++)
		p = stpcpy(p, V.nf_argv[i]) + 1;

	in = fopen(V.image, "re");
	if (in == NULL) {
		rc = -errno;
		say("image %s: %s", V.image, strerror(errno));
		goto out;
	}
	out = fopen(V.initrd, "wxe");
	if (out == NULL) {
		rc = -errno;
		say("%s: %s", V.initrd, strerror(errno));
		goto out;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			goto out;
	/* Each archive starts 4-aligned; the image ends on its trailer. */
	while (ftell(out) % 4 != 0)
		fputc(0, out);
	if (cpio_add(out, "zeronf/guest.conf", 0100644, conf, (size_t)len) ||
	    cpio_add(out, "zeronf/argv", 0100644, args, alen) ||
	    cpio_add(out, "TRAILER!!!", 0, NULL, 0))
		goto out;
	rc = fflush(out) == 0 ? 0 : -EIO;
out:
	if (in != NULL)
		fclose(in);
	if (out != NULL && fclose(out) != 0)
		rc = -EIO;
	free(args);
	return rc;
}

int
vm_start_qemu(void)
{
	char mem[32], smp[32], chr[64], wchr[64], gmem[96], vchr[PATH_MAX], obj[ZN_GROUP_PATH_LEN + 128];
	char append[256];
	const char *argv[64];
	int sp[2], wp[2], argc = 0;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	/* The wake-up port's: ours non-blocking (a byte already waiting
	 * wakes the guest as well as two). */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
		       wp) < 0) {
		close(sp[0]);
		close(sp[1]);
		return -errno;
	}
	snprintf(mem, sizeof(mem), "%lu", V.mem_mb);
	snprintf(smp, sizeof(smp), "%lu", V.vcpus);
	snprintf(chr, sizeof(chr), "socket,id=zk,fd=%d", sp[1]);
	snprintf(gmem, sizeof(gmem), "memory-backend-memfd,id=gm,size=%luM,"
		 "share=on", V.mem_mb);
	snprintf(vchr, sizeof(vchr), "socket,id=vu,path=%s",
		 V.vhost != NULL ? V.vhost : "");
	snprintf(wchr, sizeof(wchr), "socket,id=zw,fd=%d", wp[1]);
	snprintf(obj, sizeof(obj), "memory-backend-file,id=zg,mem-path=%s,"
		 "size=%" PRIu64 ",share=on", V.gpath, V.glen);
	/* An untrusted VM's NIC carries what its program forwards, nothing
	 * of the guest kernel's own (no IPv6 autoconfiguration). */
	snprintf(append, sizeof(append), "console=ttyS0 quiet panic=-1 "
		 "mitigations=off%s%s", V.vhost != NULL ? " ipv6.disable=1" : "",
		 V.probe ? " zeronf.probe=1" : "");
	argv[argc++] = V.qemu;
	argv[argc++] = "-nodefaults";
	argv[argc++] = "-no-user-config";
	argv[argc++] = "-display";
	argv[argc++] = "none";
	argv[argc++] = "-no-reboot";
	argv[argc++] = "-accel";
	argv[argc++] = V.accel;
	/* The guest runs the host's binaries, built for the host's CPU
	 * (DPDK's -march): the host's, or all that TCG emulates. */
	argv[argc++] = "-cpu";
	argv[argc++] = strcmp(V.accel, "kvm") == 0 ? "host" : "max";
	argv[argc++] = "-m";
	argv[argc++] = mem;
	argv[argc++] = "-smp";
	argv[argc++] = smp;
	if (access("/usr/share/qemu/qboot.rom", R_OK) == 0) {
		argv[argc++] = "-bios"; /* boots a kernel faster than SeaBIOS */
		argv[argc++] = "qboot.rom";
	}
	argv[argc++] = "-kernel";
	argv[argc++] = V.kernel;
	argv[argc++] = "-initrd";
	argv[argc++] = V.initrd;
	argv[argc++] = "-append";
	argv[argc++] = append;
	argv[argc++] = "-chardev";
	argv[argc++] = "stdio,id=con,signal=off";
	argv[argc++] = "-serial";
	argv[argc++] = "chardev:con";
	argv[argc++] = "-chardev";
	argv[argc++] = chr;
	argv[argc++] = "-serial";
	argv[argc++] = "chardev:zk";
	argv[argc++] = "-chardev";
	argv[argc++] = wchr;
	argv[argc++] = "-serial";
	argv[argc++] = "chardev:zw";
	if (V.probe) {
		/* only the boot is in question */
	} else if (V.vhost == NULL) {
		argv[argc++] = "-object";
		argv[argc++] = obj;
		argv[argc++] = "-device";
		argv[argc++] = "ivshmem-plain,memdev=zg";
	} else {
		/* vhost-user: the backend (the manager's net_vhost port)
		 * maps the guest's memory, which must be shared. */
		argv[argc++] = "-object";
		argv[argc++] = gmem;
		argv[argc++] = "-machine";
		argv[argc++] = "memory-backend=gm";
		argv[argc++] = "-chardev";
		argv[argc++] = vchr;
		argv[argc++] = "-netdev";
		argv[argc++] = "vhost-user,id=n0,chardev=vu";
		/* Under TCG, QEMU 7.2 dies (SIGSEGV in vhost_net_start ->
		 * msix_set_vector_notifiers) when the guest's driver starts
		 * a vhost-user NIC with MSI-X: INTx there. */
		argv[argc++] = "-device";
		argv[argc++] = strcmp(V.accel, "kvm") == 0 ?
			       "virtio-net-pci,netdev=n0" :
			       "virtio-net-pci,netdev=n0,vectors=0";
	}
	argv[argc] = NULL;

	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		sigset_t none;

		/* The VM dies with us: the manager sees our exit as the
		 * NF's and reclaims its slot; nothing of it may go on. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(1);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (fcntl(sp[1], F_SETFD, 0) < 0 ||
		    fcntl(wp[1], F_SETFD, 0) < 0 ||
		    fcntl(wp[1], F_SETFL, 0) < 0)
			_exit(127);
		execvp(argv[0], (char *const *)(uintptr_t)argv);
		fprintf(stderr, "zeronf-vm: cannot run %s: %s\n", argv[0],
			strerror(errno));
		_exit(127);
	}
	close(sp[1]);
	close(wp[1]);
	V.port = sp[0];
	V.wake = wp[0];
	V.qemu_pid = pid;
	V.started = zn_now_ns();
	return 0;
}

