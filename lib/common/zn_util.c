/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "zn_util.h"
#include "zn_build_id.h"
#include "../shm/zn_shm.h"

RTE_LOG_REGISTER(zn_logtype, zeronf, INFO);

const char zn_build_id[] = ZN_BUILD_ID;

int
zn_mkdir_p(const char *dir, mode_t mode)
{
	char tmp[PATH_MAX];

	if (strlen(dir) >= sizeof(tmp))
		return -ENAMETOOLONG;
	zn_strlcpy(tmp, dir, sizeof(tmp));
	for (char *p = tmp + 1; *p != '\0'; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) < 0 && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) < 0 && errno != EEXIST)
		return -errno;
	return 0;
}

uint64_t
zn_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* Fields of /proc/<pid>/stat: state (3) and starttime (22). */
static int
proc_stat(pid_t pid, char *state, uint64_t *start)
{
	char path[64], buf[1024];
	const char *p;
	ssize_t n;
	int fd, field;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* comm (field 2) may hold spaces and parentheses: skip to the last ')' */
	p = strrchr(buf, ')');
	if (p == NULL || p[1] != ' ' || p[2] == '\0')
		return -EIO;
	*state = p[2];
	for (field = 2; field < 22 && *p != '\0'; p++)
		if (*p == ' ')
			field++;
	if (field != 22)
		return -EIO;
	*start = strtoull(p, NULL, 10);
	return 0;
}

int
zn_proc_start_time(pid_t pid, uint64_t *start)
{
	char state;

	return proc_stat(pid, &state, start);
}

bool
zn_proc_alive(pid_t pid, uint64_t start)
{
	uint64_t now_start;
	char state;

	if (pid <= 0 || proc_stat(pid, &state, &now_start) < 0)
		return false;
	/* A zombie has exited; only its parent has not reaped it yet. */
	return now_start == start && state != 'Z' && state != 'X';
}

int
zn_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : (int)fd;
#else
	(void)pid;
	return -ENOSYS;
#endif
}

bool
zn_pidfd_exited(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0;
}

void
zn_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n;

	if (size == 0)
		return;
	n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = '\0';
}

int
zn_parse_uint(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	if (s == NULL || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10); /* decimal only: "010" is ten */
	if (errno != 0 || *end != '\0' || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int
zn_unix_bind(const char *path, int type)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	zn_strlcpy(sa.sun_path, path, sizeof(sa.sun_path));
	fd = socket(AF_UNIX, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    chmod(path, 0600) < 0 ||
	    (type == SOCK_STREAM && listen(fd, SOMAXCONN) < 0)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}



