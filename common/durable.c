// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * durable.c - write a file so that a crash leaves the old one or the new
 * one whole (durable.h): the temp file, the fsync, the rename, the
 * directory's fsync.  Used by the backlog and the strategies cache.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "durable.h"

int durable_dir_sync(const char *path)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int fd, ret;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash == path ? 1 : slash - path), path);
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ret = fsync(fd);
	close(fd);
	return ret;
}

int durable_temp_open(const char *tmp)
{
	int fd, tries = 0, err;

	while ((fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0600)) < 0)
		if (errno != EEXIST || tries++ || unlink(tmp))
			return -1;
	/* 0600 whatever the umask: only the loader reads it. */
	if (fchmod(fd, 0600)) {
		err = errno;
		close(fd);
		unlink(tmp);
		errno = err;
		return -1;
	}
	return fd;
}

int durable_write(const char *path, const void *data, size_t len)
{
	char tmp[PATH_MAX + 8];
	const char *p = data;
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = durable_temp_open(tmp);
	if (fd < 0)
		return -1;
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			goto err;
		p += n;
		len -= n;
	}
	if (fsync(fd))
		goto err;
	if (close(fd)) {
		fd = -1;
		goto err;
	}
	fd = -1;
	if (rename(tmp, path))
		goto err;
	return durable_dir_sync(path);
err:
	err = errno;
	if (fd >= 0)
		close(fd);
	unlink(tmp);
	errno = err;
	return -1;
}
