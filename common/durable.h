/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * durable.h - files that survive a crash whole: a new temp file, written,
 * fsynced, renamed over the old one, the directory fsynced.  A reader sees
 * the old file or the new one, never half of either.  The heartbeat
 * backlog (loader/report/backlog.c) and the admin's strategies cache
 * (loader/tick/engine.c) are written this way.  Plain file I/O.
 */
#ifndef SDS_DURABLE_H
#define SDS_DURABLE_H

#include <stddef.h>

/* fsync the directory holding @path, so that a rename in it is durable: 0 or -1 (errno). */
int durable_dir_sync(const char *path);

/*
 * A new temp file @tmp (O_RDWR, mode 0600 whatever the umask): never an
 * existing file (O_EXCL) or through a symlink (O_NOFOLLOW).  One already
 * there was left by a loader killed mid-write, in a state dir that passed
 * ctl_dir_prepare() (only root made it): it is unlinked (the entry itself,
 * never what a symlink names) and the open tried once more.  The fd, or
 * -1 (errno).
 */
int durable_temp_open(const char *tmp);

/*
 * @len bytes of @data to @path, atomically: durable_temp_open() of
 * "@path.tmp", written, fsynced, closed, renamed over @path, then
 * durable_dir_sync().  0, or -1 with errno (the temp file removed).
 */
int durable_write(const char *path, const void *data, size_t len);

#endif
