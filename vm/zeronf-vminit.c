/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * zeronf-vminit: /init of a ZeroNF VM's initramfs (docs/vm-nfs.md). A
 * VM runs one NF, and lives as long as it: the init mounts what the NF
 * needs (proc, sys, dev), sets the serial port to
 * the host helper raw (lib/common/zn_vm.h), starts the NF with the argv
 * the helper wrote in ZN_VM_ARGV, passes the helper's stop and kill on to
 * it, and, once it exits, tells the helper its exit code and powers the
 * VM off. Static: the image holds nothing else it could run on.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "../lib/common/zn_vm.h"

#define MAX_ARGS 512

static void
say(const char *fmt, const char *arg)
{
	fprintf(stderr, "zeronf-vminit: ");
	fprintf(stderr, fmt, arg);
	fputc('\n', stderr);
}

static void
power_off(void)
{
	int con = open(ZN_VM_LOG, O_WRONLY | O_NOCTTY | O_CLOEXEC);

	/* What the NF wrote last is still in the console's buffer: out
	 * first (the power-off drops it). */
	if (con >= 0) {
		tcdrain(con);
		close(con);
	}
	sync();
	reboot(RB_POWER_OFF);
	for (;;)
		pause();
}

static void
mounts(void)
{
	static const struct { const char *what, *where, *type; } m[] = {
		{ "proc", "/proc", "proc" },
		{ "sysfs", "/sys", "sysfs" },
		{ "devtmpfs", "/dev", "devtmpfs" },
	};
	/* /run and /tmp are the initramfs's own (a RAM file system,
	 * writable): a tmpfs over them would hide the files the image put
	 * there for the NF (vm --file). */

	for (size_t i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		mkdir(m[i].where, 0755);
		if (mount(m[i].what, m[i].where, m[i].type, 0, NULL) < 0 &&
		    errno != EBUSY)
			say("cannot mount %s", m[i].where);
	}
	mkdir("/var", 0755);
	if (symlink("/run", "/var/run") < 0 && errno != EEXIST)
		say("cannot link %s", "/var/run");
}

/* The image's kernel modules (ZN_VM_MODULES: a virtio-net NIC's for the
 * copying baseline), in passes until one loads none: a module whose
 * dependency comes later in name order loads in the next pass (there is
 * no modprobe here). One that never loads is said; the NF says what it
 * misses. */
static void
load_modules(void)
{
	struct dirent **e;
	int n = scandir(ZN_VM_MODULES, &e, NULL, alphasort), left, err[64];
	bool done[64] = { false };

	if (n > 64)
		n = 64;
	for (left = n; left > 0;) {
		int before = left;

		for (int i = 0; i < n; i++) {
			char path[512];
			int fd;

			if (done[i] || e[i]->d_name[0] == '.') {
				left -= !done[i];
				done[i] = true;
				continue;
			}
			snprintf(path, sizeof(path), ZN_VM_MODULES "/%s",
				 e[i]->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			err[i] = fd < 0 ? errno : 0;
			if (fd >= 0 && syscall(SYS_finit_module, fd, "", 0) < 0)
				err[i] = errno == EEXIST ? 0 : errno;
			if (fd >= 0)
				close(fd);
			if (err[i] == 0) {
				done[i] = true;
				left--;
			}
		}
		if (left == before)
			break;
	}
	for (int i = 0; i < n; i++) {
		if (!done[i]) {
			char why[300];

			snprintf(why, sizeof(why), "%s: %s", e[i]->d_name,
				 strerror(err[i]));
			say("cannot load module %s", why);
		}
		free(e[i]);
	}
	if (n > 0)
		free(e);
}

/* The NF's argv: NUL-separated strings. */
static int
read_argv(char **argv, char *buf, size_t len)
{
	int fd = open(ZN_VM_ARGV, O_RDONLY | O_CLOEXEC), argc = 0;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	for (char *p = buf; p < buf + n && argc < MAX_ARGS - 1;
	     p += strlen(p) + 1)
		argv[argc++] = p;
	argv[argc] = NULL;
	return argc;
}

static int
open_port(void)
{
	struct termios t;
	int fd = open(ZN_VM_KICK_DEV, O_RDWR | O_NOCTTY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	/* Raw: no echo (it would go back to the helper as frames), no line
	 * editing, no newline translation, every byte as it comes. */
	if (tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		cfsetspeed(&t, B115200);
		t.c_cc[VMIN] = 1;
		t.c_cc[VTIME] = 0;
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

/* Booted only to show it boots (zeronf.probe on the command line). */
static bool
probing(void)
{
	char line[2048] = "";
	FILE *f = fopen("/proc/cmdline", "re");

	if (f != NULL) {
		if (fgets(line, sizeof(line), f) == NULL)
			line[0] = '\0';
		fclose(f);
	}
	return strstr(line, "zeronf.probe=1") != NULL;
}

static void
on_chld(int sig)
{
	(void)sig; /* ppoll returns */
}

int
main(void)
{
	static char buf[256 * 1024];
	char *argv[MAX_ARGS];
	uint8_t exit_frame[2] = { ZN_VM_EXIT, 1 };
	sigset_t chld, waiting;
	int port, status = 0, log;
	pid_t nf;

	mounts();
	port = open_port();
	if (probing()) { /* zeronf-vm --accel auto: the guest boots */
		(void)!write(port, (uint8_t[]){ ZN_VM_HELLO }, 1);
		tcdrain(port);
		power_off();
	}
	load_modules();
	if (port < 0) {
		say("no %s: no host helper to talk to", ZN_VM_KICK_DEV);
		power_off();
	}
	if (read_argv(argv, buf, sizeof(buf)) <= 0) {
		say("no NF to run (%s)", ZN_VM_ARGV);
		(void)!write(port, exit_frame, sizeof(exit_frame));
		power_off();
	}
	(void)!write(port, (uint8_t[]){ ZN_VM_HELLO }, 1);
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigaction(SIGCHLD, &(struct sigaction){ .sa_handler = on_chld }, NULL);
	sigprocmask(SIG_BLOCK, &chld, &waiting);
	sigdelset(&waiting, SIGCHLD);
	nf = fork();
	if (nf == 0) {
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		log = open(ZN_VM_LOG, O_WRONLY | O_NOCTTY);
		if (log >= 0) {
			dup2(log, 1);
			dup2(log, 2);
		}
		close(0);
		open("/dev/null", O_RDONLY);
		execv(argv[0], argv);
		say("cannot run %s", argv[0]);
		_exit(127);
	}
	if (nf < 0) {
		say("cannot fork: %s", strerror(errno));
		(void)!write(port, exit_frame, sizeof(exit_frame));
		power_off();
	}
	for (;;) {
		struct pollfd p = { .fd = port, .events = POLLIN };
		pid_t w;
		uint8_t c;

		while ((w = waitpid(-1, &status, WNOHANG)) > 0 && w != nf)
			; /* orphans */
		if (w == nf)
			break;
		/* Asleep until the helper writes or a child exits (SIGCHLD,
		 * blocked but here). */
		if (ppoll(&p, 1, NULL, &waiting) == 1 &&
		    read(port, &c, 1) == 1) {
			if (c == ZN_VM_STOP)
				kill(nf, SIGTERM);
			else if (c == ZN_VM_KILL)
				kill(nf, SIGKILL);
		}
	}
	exit_frame[1] = (uint8_t)(WIFEXITED(status) ? WEXITSTATUS(status) :
				  128 + WTERMSIG(status));
	(void)!write(port, exit_frame, sizeof(exit_frame));
	tcdrain(port);
	power_off();
	return 0;
}
