// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * regproc.c - what the loader learns about a registering process from
 * /proc, read through a directory fd pinned by the connection's pidfd:
 * its groups, whether it runs TARGET, and the file it maps at an address,
 * opened by inode (map_files), never by the name its maps line shows.
 * Only the kernel-written fields of a maps line are used: the range,
 * device and inode (docs/TRUST.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "serve/regproc.h"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC	0x65735546
#endif

static int sys_pidfd_open(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

static int sys_pidfd_send_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

int regproc__pidfd_open(pid_t pid)
{
	return sys_pidfd_open(pid);
}

/* The "Pid:" of pidfd @pidfd in our fdinfo; -1 when it has exited. */
static long pidfd_pid(int pidfd)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	long pid = -2;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -2;
	while (getline(&line, &cap, f) > 0)
		if (!strncmp(line, "Pid:", 4)) {
			pid = strtol(line + 4, NULL, 10);
			break;
		}
	free(line);
	fclose(f);
	return pid;
}

int regproc__alive(const struct regproc *rp)
{
	/*
	 * Signal 0 only asks whether the process exists: EPERM says it does
	 * (of another uid, to a loader without CAP_KILL, as under the
	 * systemd unit), so it is not a death; the fdinfo's pid decides.
	 */
	if (sys_pidfd_send_signal(rp->pidfd, 0) && errno != EPERM)
		return -1;
	return pidfd_pid(rp->pidfd) == rp->pid ? 0 : -1;
}

int regproc__open(struct regproc *rp, pid_t pid, int pidfd)
{
	char path[64];

	rp->pid = pid;
	rp->pidfd = pidfd;
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	rp->dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rp->dir < 0)
		return -1;
	/*
	 * The pidfd names the process that connected.  Alive after the open:
	 * the pid was not reused before it, and a /proc dir fd never moves
	 * to a later process of the same pid (it reads ESRCH instead).
	 */
	if (regproc__alive(rp)) {
		close(rp->dir);
		rp->dir = -1;
		return -1;
	}
	return 0;
}

void regproc__close(struct regproc *rp)
{
	if (rp->dir >= 0)
		close(rp->dir);
	rp->dir = -1;
}

static FILE *proc_file(const struct regproc *rp, const char *name)
{
	int fd = openat(rp->dir, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	FILE *f;

	if (fd < 0)
		return NULL;
	f = fdopen(fd, "re");
	if (!f)
		close(fd);
	return f;
}

int regproc__in_group(const struct regproc *rp, gid_t gid)
{
	char *line = NULL, *p, *end;
	size_t cap = 0;
	int ret = 0;
	FILE *f;

	f = proc_file(rp, "status");
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		if (strncmp(line, "Groups:", 7))
			continue;
		for (p = line + 7;; p = end) {
			unsigned long g = strtoul(p, &end, 10);

			if (end == p)
				break;
			if ((gid_t)g == gid) {
				ret = 1;
				break;
			}
		}
		break;
	}
	free(line);
	fclose(f);
	return ret;
}

/* One maps line: the kernel-written fields only; 0 or -1. */
static int maps_entry(const char *line, struct regmap *m)
{
	unsigned long long lo, hi, off;
	unsigned int maj, min;
	unsigned long ino;

	if (sscanf(line, "%llx-%llx %*4s %llx %x:%x %lu", &lo, &hi, &off,
		   &maj, &min, &ino) != 6)
		return -1;
	m->lo = lo;
	m->hi = hi;
	m->dev = makedev(maj, min);
	m->ino = ino;
	return 0;
}

/*
 * Open the file of mapping @m by inode: its map_files link with O_PATH
 * (no open of any driver or FIFO), fstat'ed as @st.  Returns the O_PATH
 * fd or -1.
 */
static int map_file_path(const struct regproc *rp, const struct regmap *m,
			 struct stat *st)
{
	char name[64];
	int fd;

	snprintf(name, sizeof(name), "map_files/%llx-%llx",
		 (unsigned long long)m->lo, (unsigned long long)m->hi);
	fd = openat(rp->dir, name, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, st)) {
		close(fd);
		return -1;
	}
	return fd;
}

int regproc__maps(const struct regproc *rp, dev_t tdev, ino_t tino,
		  uint64_t addr, struct regmap *at, bool *maps_target)
{
	char *line = NULL;
	size_t cap = 0;
	struct regmap m;
	struct stat st;
	FILE *f;
	int fd;

	*maps_target = false;
	at->ino = 0;
	at->hi = 0;
	f = proc_file(rp, "maps");
	if (!f)
		return -1;
	/* getline: a long path never splits into a line the client wrote. */
	while (getline(&line, &cap, f) > 0) {
		if (maps_entry(line, &m))
			continue;
		if (addr >= m.lo && addr < m.hi)
			*at = m;
		/* Candidates by the line's inode; identity by fstat. */
		if (!*maps_target && m.ino == tino) {
			fd = map_file_path(rp, &m, &st);
			if (fd >= 0) {
				*maps_target = st.st_dev == tdev && st.st_ino == tino;
				close(fd);
			}
		}
		if (at->hi && *maps_target)
			break;
	}
	free(line);
	fclose(f);
	return 0;
}

int regproc__runs(const struct regproc *rp, dev_t dev, ino_t ino)
{
	struct stat st;
	int fd;

	fd = openat(rp->dir, "exe", O_PATH | O_CLOEXEC);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st))
		st.st_ino = 0;
	close(fd);
	return st.st_ino == ino && st.st_dev == dev;
}

int regproc__open_map(const struct regproc *rp, const struct regmap *m,
		      off_t size_max, struct stat *st, const char **why)
{
	struct statfs sfs;
	struct stat st2;
	char self[64];
	int pfd, fd;

	pfd = map_file_path(rp, m, st);
	if (pfd < 0) {
		*why = "no file (anonymous, or gone)";
		return -1;
	}
	fd = -1;
	if (!S_ISREG(st->st_mode)) {
		*why = "not a regular file";
	} else if (st->st_dev != m->dev || st->st_ino != m->ino) {
		*why = "not the inode of its maps line (remapped meanwhile)";
	} else if (st->st_size > size_max) {
		*why = "larger than the size bound";
	} else if (fstatfs(pfd, &sfs) || sfs.f_type == FUSE_SUPER_MAGIC) {
		/* A FUSE server could stall our open and reads: its owner's. */
		*why = "on FUSE";
	} else {
		/* That very inode, read-only: a regular file opens no driver. */
		snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
		fd = open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
		if (fd < 0)
			*why = "not readable";
		else if (fstat(fd, &st2) || st2.st_dev != st->st_dev ||
			 st2.st_ino != st->st_ino) {
			*why = "reopened as another inode";
			close(fd);
			fd = -1;
		}
	}
	close(pfd);
	return fd;
}
