/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * What the loader's self-tests of this kernel share (the fork check,
 * forkcheck.c; the probe costs, calib_run.c): a helper process running
 * a function of our own executable, probed; a deadline; and the answer
 * kept for the boot in a file of the run directory.
 */
#ifndef SDS_SELFTEST_H
#define SDS_SELFTEST_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define SELFTEST_BOOT_ID_LEN	36	/* a UUID */
#define SELFTEST_CACHE_MAX	512	/* bytes: a bigger cache file is not ours */

/* This boot's /proc/sys/kernel/random/boot_id into @out (37 bytes); 0 or -1. */
int selftest__boot_id(char *out);

/*
 * Read the cache file @path into @buf (SELFTEST_CACHE_MAX + 1 bytes),
 * NUL-terminated: never through a symlink, never a FIFO, a file of
 * another owner or a big one.  0 or -1.
 */
int selftest__cache_slurp(const char *path, char *buf);

/*
 * Write @n bytes of @text as the cache file @path: under a temporary
 * name (O_EXCL) renamed into place, so a reader sees the old file or the
 * new one, never half.  Silent: a cache that cannot be written is only
 * a test run again next time.
 */
void selftest__cache_write(const char *path, const char *text, size_t n);

/* File offset in our executable of the code at @addr; 0 or -1. */
int selftest__file_offset(const void *addr, uint64_t *off);

/*
 * Fork a helper that talks over two pipes: @child(in, out, @arg) runs in
 * the child on the pipes' other ends and never returns.  Ours: @go to
 * write to it, @rep to read its report.  Its pid, or -1 (no pipe left
 * open).
 */
pid_t selftest__spawn(int *go, int *rep,
		      void (*child)(int in, int out, void *arg), void *arg);

/* Milliseconds until @deadline (CLOCK_MONOTONIC), 0 when past. */
int selftest__ms_left(const struct timespec *deadline);

#endif /* SDS_SELFTEST_H */
