/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * libzeronf in a ZeroNF VM (--guest FILE; docs/vm-nfs.md, zn_vm.h). The
 * NF is an NF of its trust group like any other, but what a host process
 * reaches in the manager's runtime directory it reaches through its host
 * helper: the slot (held by the helper, named in FILE), the kick socket
 * (frames on the second serial port), and the group's file (the ivshmem
 * device's BAR 2, mapped at the address the file says the group's
 * processes map it at: buffers' addresses need no translation). Futexes
 * do not cross into or out of the guest: the NF polls with back-off
 * where a host NF sleeps, and a doorbell it rings for a sleeping host
 * process is rung again on the host by the helper.
 */

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "nf_pvt.h"
#include "../common/zn_util.h"
#include "../shm/zn_kick.h"
#include "../common/zn_vm.h"

_Static_assert(ZN_KICK_REGISTER_LEN == 7 && ZN_KICK_MSG_LEN == 9,
	       "zn_vm_frame_len knows the kick socket's lengths");

#define PCI_DEVICES "/sys/bus/pci/devices"

/* The helper's wake-up port, raw (no line discipline between its bytes
 * and us), non-blocking (drained after each sleep). */
static int
open_raw(const char *dev)
{
	struct termios t;
	int fd = open(dev, O_RDONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);

	if (fd >= 0 && tcgetattr(fd, &t) == 0) {
		cfmakeraw(&t);
		tcsetattr(fd, TCSANOW, &t);
	}
	return fd;
}

/* FILE, written by the helper: the slot it holds, its pid and start time
 * (what the manager sees as the NF's process), the serial device. */
int
zn_nf_guest_open(struct zn_nf *nf)
{
	char line[256], dev[128] = ZN_VM_KICK_DEV, wake[128] = "";
	unsigned int have = 0;
	FILE *f = fopen(nf->guest_conf, "re");

	if (f == NULL) {
		ZN_LOG(ERR, "guest: cannot read %s: %s", nf->guest_conf,
		       strerror(errno));
		return -errno;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long long v;
		char *eq = strchr(line, '=');

		line[strcspn(line, "\n")] = '\0';
		if (eq == NULL)
			continue;
		*eq++ = '\0';
		if (strcmp(line, "kick") == 0) {
			zn_strlcpy(dev, eq, sizeof(dev));
			continue;
		}
		if (strcmp(line, "wake") == 0) {
			zn_strlcpy(wake, eq, sizeof(wake));
			continue;
		}
		if (sscanf(eq, "%llu", &v) != 1)
			continue;
		if (strcmp(line, "slot") == 0 && v < ZN_MAX_NFS)
			nf->slot = (uint16_t)v, have |= 1;
		else if (strcmp(line, "owner_pid") == 0 && v > 0 &&
			 v <= UINT32_MAX)
			nf->owner_pid = (uint32_t)v, have |= 2;
		else if (strcmp(line, "owner_start") == 0)
			nf->owner_start = v, have |= 4;
		else if (strcmp(line, "poll_max_us") == 0 && v > 0 &&
			 v <= 100000)
			nf->poll_max_us = (uint32_t)v;
	}
	fclose(f);
	if (have != 7) {
		ZN_LOG(ERR, "guest: %s lacks slot, owner_pid or owner_start",
		       nf->guest_conf);
		return -EINVAL;
	}
	if (nf->poll_max_us == 0)
		nf->poll_max_us = ZN_VM_POLL_MAX_US;
	nf->kick_fd = open(dev, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (nf->kick_fd < 0) {
		ZN_LOG(ERR, "guest: cannot open %s: %s", dev, strerror(errno));
		return -errno;
	}
	if (wake[0] != '\0')
		nf->wake_fd = open_raw(wake);
	if (wake[0] != '\0' && nf->wake_fd < 0)
		ZN_LOG(WARNING, "guest: cannot open %s (%s): polling every "
		       "%u us when idle", wake, strerror(errno),
		       nf->poll_max_us);
	nf->guest = true;
	return 0;
}

/* One frame to the helper, whole (a tty takes a write whole, under its
 * write lock: frames of one process never interleave). */
int
zn_nf_guest_send(struct zn_nf *nf, const void *buf, size_t len)
{
	ssize_t n;

	do
		n = write(nf->kick_fd, buf, len);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EIO;
}

void
zn_nf_guest_ring(struct zn_nf *nf, struct zn_doorbell *db)
{
	uint8_t b[5] = { ZN_VM_WAKE };
	uint32_t off;

	/* zn_db_ring's protocol; the futex wake-up is the helper's. */
	if (!zn_db_ring_claim(db))
		return;
	off = (uint32_t)((uintptr_t)&db->seq - (uintptr_t)nf->gva);
	memcpy(b + 1, &off, sizeof(off));
	(void)zn_nf_guest_send(nf, b, sizeof(b));
}

/* Asleep in poll() on the wake-up port: zn_db_wait's protocol, the
 * helper's futex standing in for ours (it waits on db's seq on the
 * host and sends a byte for each change, zeronf-vm.c waker). */
static bool
wait_woken(struct zn_nf *nf, struct zn_doorbell *db,
	   bool (*has_work)(void *), void *arg, uint64_t timeout_us)
{
	struct pollfd p = { .fd = nf->wake_fd, .events = POLLIN };
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_us / 1000000),
		.tv_nsec = (long)(timeout_us % 1000000) * 1000,
	};
	char drain[64];
	uint32_t seq;

	if (!zn_db_sleep_begin(db, has_work, arg, &seq))
		return true;
	if (__atomic_load_n(&db->seq, __ATOMIC_ACQUIRE) == seq)
		ppoll(&p, 1, &ts, NULL);
	while (read(nf->wake_fd, drain, sizeof(drain)) > 0)
		; /* wake-ups of this sleep and earlier ones */
	return zn_db_sleep_end(db, seq);
}

/* Polled until @p end_ns, at most poll_max_us apart. `sleeping` stays
 * 0: a host ringer then makes no system call. */
static bool
wait_polled(struct zn_nf *nf, bool (*has_work)(void *), void *arg,
	    uint64_t end)
{
	uint64_t step = 10;

	for (;;) {
		struct timespec ts;
		uint64_t now, us;

		if (has_work != NULL && has_work(arg))
			return true;
		now = zn_now_ns();
		if (now >= end)
			return false;
		us = RTE_MIN(RTE_MIN(step, (end - now) / 1000 + 1),
			     (uint64_t)nf->poll_max_us);
		ts.tv_sec = 0;
		ts.tv_nsec = (long)us * 1000;
		nanosleep(&ts, NULL);
		step *= 2;
	}
}

bool
zn_nf_guest_wait(struct zn_nf *nf, struct zn_doorbell *db,
		 bool (*has_work)(void *), void *arg, uint64_t timeout_us)
{
	uint64_t now = zn_now_ns(), end = now + timeout_us * 1000, hold;

	/* Only our own doorbell has the helper's wake-ups; others polled. */
	if (nf->wake_fd < 0 || nf->s == NULL || db != &nf->s->db)
		return wait_polled(nf, has_work, arg, end);
	/* A wake-up through the helper and the guest's serial port takes
	 * far longer than a poll: for the first ZN_VM_POLL_HOLD_US of an
	 * idle spell the NF polls (a chain's packets come back within it),
	 * then sleeps until woken (idle costs nothing). */
	if (nf->idle_since == 0)
		nf->idle_since = now;
	hold = nf->idle_since + ZN_VM_POLL_HOLD_US * 1000ULL;
	if (now < hold && wait_polled(nf, has_work, arg, RTE_MIN(end, hold))) {
		nf->idle_since = 0;
		return true;
	}
	now = zn_now_ns();
	if (now >= end)
		return false;
	if (!wait_woken(nf, db, has_work, arg, (end - now) / 1000 + 1))
		return false;
	nf->idle_since = 0;
	return true;
}

static int
read_hex(const char *dev, const char *file, unsigned int *v)
{
	char path[512], buf[32];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/%s", dev, file);
	f = fopen(path, "re");
	if (f == NULL)
		return -errno;
	ok = fgets(buf, sizeof(buf), f) != NULL &&
	     sscanf(buf, "%x", v) == 1;
	fclose(f);
	return ok ? 0 : -EINVAL;
}

/* Device @p dev's BAR 2, if it is our group's file: mapped at its
 * address. 0, -ENOENT (not ours), or -errno. */
static int
map_bar(struct zn_nf *nf, const char *dev, void **vap, uint64_t *lenp,
	unsigned int *idx)
{
	char path[512];
	const struct zn_group_home *h;
	struct stat st;
	uint64_t va, len;
	void *tmp, *at;
	int fd, rc = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), PCI_DEVICES "/%s/enable", dev);
	f = fopen(path, "we");
	if (f != NULL) { /* the BAR is reachable once enabled */
		fputs("1", f);
		fclose(f);
	}
	snprintf(path, sizeof(path), PCI_DEVICES "/%s/resource2", dev);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 ||
	    (uint64_t)st.st_size < sizeof(*h)) {
		rc = fd < 0 ? -errno : -EPROTO;
		ZN_LOG(ERR, "guest: device %s: no BAR 2 of a group's size (%s)",
		       dev, strerror(-rc));
		goto out;
	}
	tmp = mmap(NULL, sizeof(*h), PROT_READ, MAP_SHARED, fd, 0);
	if (tmp == MAP_FAILED) {
		rc = -errno;
		ZN_LOG(ERR, "guest: device %s: cannot map BAR 2: %s", dev,
		       strerror(errno));
		goto out;
	}
	h = tmp;
	va = h->view.group.va;
	len = h->view.group.len;
	if (h->view.hdr.magic != ZN_SHM_MAGIC ||
	    strncmp(h->view.group.name, nf->group_name,
		    sizeof(h->view.group.name)) != 0) {
		ZN_LOG(INFO, "guest: device %s holds no trust group '%s' "
		       "(magic 0x%" PRIx64 ", group '%.32s')", dev,
		       nf->group_name, (uint64_t)h->view.hdr.magic,
		       h->view.group.name);
		munmap(tmp, sizeof(*h));
		goto out; /* not ours */
	}
	munmap(tmp, sizeof(*h));
	*idx = (unsigned int)((va - ZN_GROUP_VA_BASE) / ZN_GROUP_VA_STRIDE);
	if (va < ZN_GROUP_VA_BASE || *idx >= ZN_MAX_GROUPS ||
	    va != (uint64_t)(uintptr_t)zn_group_home_at(*idx) ||
	    len != (uint64_t)st.st_size) {
		ZN_LOG(ERR, "guest: device %s is not laid out as a group's "
		       "file (%" PRIu64 " B at 0x%" PRIx64 ", BAR %" PRIu64
		       " B)", dev, len, va, (uint64_t)st.st_size);
		rc = -EPROTO;
		goto out;
	}
	at = mmap((void *)(uintptr_t)va, len, PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (at == MAP_FAILED || at != (void *)(uintptr_t)va) {
		rc = at == MAP_FAILED ? -errno : -EADDRINUSE;
		if (at != MAP_FAILED)
			munmap(at, len);
		ZN_LOG(ERR, "guest: cannot map device %s at 0x%" PRIx64 ": %s",
		       dev, va, strerror(-rc));
		goto out;
	}
	*vap = at;
	*lenp = len;
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	return rc;
}

int
zn_nf_guest_map(struct zn_nf *nf, void **va, uint64_t *len, unsigned int *idx)
{
	DIR *d = opendir(PCI_DEVICES);
	struct dirent *e;
	int rc = -ENOENT;

	if (d == NULL)
		return -errno;
	while (rc == -ENOENT && (e = readdir(d)) != NULL) {
		unsigned int ven, devid;

		if (e->d_name[0] == '.' ||
		    read_hex(e->d_name, "vendor", &ven) < 0 ||
		    read_hex(e->d_name, "device", &devid) < 0 ||
		    ven != ZN_IVSHMEM_VENDOR || devid != ZN_IVSHMEM_DEVICE)
			continue;
		rc = map_bar(nf, e->d_name, va, len, idx);
	}
	closedir(d);
	if (rc == -ENOENT)
		ZN_LOG(ERR, "guest: no ivshmem device holds trust group '%s'",
		       nf->group_name);
	return rc;
}
