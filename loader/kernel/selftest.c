// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * selftest.c - the plumbing the loader's self-tests of this kernel share:
 * where a function of ours is in our executable (to probe it in a helper
 * process), deadlines, and the per-boot cache in the run directory.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "kernel/selftest.h"

int selftest__boot_id(char *out)
{
	ssize_t n;
	int fd;

	fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, out, SELFTEST_BOOT_ID_LEN);
	close(fd);
	if (n != SELFTEST_BOOT_ID_LEN)
		return -1;
	out[SELFTEST_BOOT_ID_LEN] = '\0';
	return 0;
}

int selftest__cache_slurp(const char *path, char *buf)
{
	struct stat st;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    st.st_size > SELFTEST_CACHE_MAX) {
		close(fd);
		return -1;
	}
	n = read(fd, buf, SELFTEST_CACHE_MAX);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

void selftest__cache_write(const char *path, const char *text, size_t n)
{
	char tmp[PATH_MAX + 32];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.%d.new", path, (int)getpid()) >=
	    (int)sizeof(tmp))
		return;
	/* Only root writes the run dir (ctl_dir_prepare): a leftover is ours. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	if (write(fd, text, n) != (ssize_t)n) {
		close(fd);
		unlink(tmp);
		return;
	}
	if (close(fd) || rename(tmp, path))
		unlink(tmp);
}

int selftest__file_offset(const void *addr, uint64_t *off)
{
	uintptr_t a = (uintptr_t)addr;
	unsigned long start, end, pgoff;
	char line[512];
	FILE *f;
	int ret = -1;

	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx", &start, &end, &pgoff) != 3)
			continue;
		if (a >= start && a < end) {
			*off = a - start + pgoff;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

int selftest__ms_left(const struct timespec *deadline)
{
	struct timespec now;
	long ms;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (deadline->tv_sec - now.tv_sec) * 1000 +
	     (deadline->tv_nsec - now.tv_nsec) / 1000000;
	return ms > 0 ? (int)ms : 0;
}

pid_t selftest__spawn(int *go, int *rep,
		      void (*child)(int in, int out, void *arg), void *arg)
{
	int to[2], from[2];
	pid_t pid;

	if (pipe2(to, O_CLOEXEC))
		return -1;
	if (pipe2(from, O_CLOEXEC)) {
		close(to[0]);
		close(to[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(to[1]);
		close(from[0]);
		child(to[0], from[1], arg);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	*go = to[1];
	*rep = from[0];
	if (pid < 0) {
		close(to[1]);
		close(from[0]);
	}
	return pid;
}
