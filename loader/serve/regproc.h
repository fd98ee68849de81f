/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * regproc.h - a registering process as /proc shows it, pinned by a pidfd
 * (register.c; docs/TRUST.md).
 */
#ifndef SDS_REGPROC_H
#define SDS_REGPROC_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* A process being registered. */
struct regproc {
	pid_t pid;		/* its pid, in our pid namespace */
	int pidfd;		/* pins it (not owned) */
	int dir;		/* /proc/PID, O_PATH; -1: closed */
};

/* One mapping: the fields of a maps line that the kernel writes. */
struct regmap {
	uint64_t lo, hi;	/* the range */
	dev_t dev;		/* device of the mapped file; 0: none */
	ino_t ino;		/* inode of the mapped file; 0: anonymous */
};

/* pidfd_open(2) of @pid, or -1. */
int regproc__pidfd_open(pid_t pid);

/*
 * Open /proc/@pid for the process @pidfd refers to.  0, or -1 when it
 * has exited or its pid now names another process.
 */
int regproc__open(struct regproc *rp, pid_t pid, int pidfd);
void regproc__close(struct regproc *rp);

/* 0 while @rp's process lives (the one its pidfd names), else -1. */
int regproc__alive(const struct regproc *rp);

/* 1 when @gid is among the process's supplementary groups. */
int regproc__in_group(const struct regproc *rp, gid_t gid);

/* 1 when the process's executable is inode @dev/@ino. */
int regproc__runs(const struct regproc *rp, dev_t dev, ino_t ino);

/*
 * Read the maps once: the mapping containing @addr into @at (@at->hi 0:
 * none), and whether some mapping is the file @tdev/@tino.  0, or -1 when
 * the maps cannot be read.
 */
int regproc__maps(const struct regproc *rp, dev_t tdev, ino_t tino,
		  uint64_t addr, struct regmap *at, bool *maps_target);

/*
 * Open the file of mapping @m by inode, read-only and non-blocking: a
 * regular file, the inode of its maps line, at most @size_max bytes, not
 * on FUSE.  Returns the fd (its stat in @st), or -1 with why in @why (for
 * the loader's log only: the client gets one answer for every reason).
 */
int regproc__open_map(const struct regproc *rp, const struct regmap *m,
		      off_t size_max, struct stat *st, const char **why);

#endif /* SDS_REGPROC_H */
