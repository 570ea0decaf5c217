/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The ZeroNF authors
 */

/*
 * Opening files where another process may have put a link (zn_util.h):
 * the runtime and log directories, which NFs may write, opened by the
 * manager as root.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/openat2.h>

#include "zn_util.h"

/* An fd of a regular file with one link, or -EPERM (the fd closed). */
static int
plain_file(int fd)
{
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_nlink != 1) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

int
zn_open_beneath(int dirfd, const char *name, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW |
				    O_NONBLOCK),
		.mode = (flags & O_CREAT) ? mode : 0,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, dirfd, name, &how, sizeof(how));

	if (fd < 0 && errno == ENOSYS) {
		/* before Linux 5.6: one component, not followed if a link */
		if (strchr(name, '/') != NULL)
			return -EPERM;
		fd = openat(dirfd, name, (int)how.flags, how.mode);
	}
	if (fd < 0)
		return -errno;
	/* O_NONBLOCK was for the open (a FIFO); the file's own I/O is not */
	if (!(flags & O_NONBLOCK))
		(void)fcntl((int)fd, F_SETFL,
			    fcntl((int)fd, F_GETFL) & ~O_NONBLOCK);
	return plain_file((int)fd);
}

int
zn_lock_file(const char *path, int op)
{
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW |
		      O_NONBLOCK, 0600);

	if (fd < 0)
		return -errno;
	if ((fd = plain_file(fd)) < 0)
		return fd;
	if (flock(fd, op | LOCK_NB) < 0) {
		int err = errno;

		close(fd);
		return -err;
	}
	return fd;
}
