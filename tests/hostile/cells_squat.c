// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * cells_squat - a process of another uid that runs TARGET and squats on
 * the app's shared limits (tests/hostile/t_cells.py, docs/TRUST.md
 * "Shared limits").  Two modes in one program, so that the victim and
 * the attacker run the same attached TARGET:
 *
 *   cells_squat               the victim: tests/targets/guarded.c's stdin
 *                             protocol, unchanged
 *   cells_squat squat SOCKET  registers at SOCKET as libsds does, maps
 *                             the cells fd it gets read-write and, until
 *                             killed, sets every point's permits to 2^40
 *                             and every permit row to 2^30, over and over
 *                             (faster than any tick's repair)
 *
 * It prints "squatting cells_size=N" once it writes, then "writes=N"
 * every 2^16 rounds.
 *
 *   cells_squat resize SOCKET registers, then tries to shrink and grow
 *                             the cells fd it got (a cells
 *                             map of its own is the loader's mapping too),
 *                             prints "shrink errno=E grow errno=E", and
 *                             waits to be killed
 */
#define main guarded_main
#include "../targets/guarded.c"
#include "../targets/guarded_harm.c"
#include "../targets/guarded_copy.c"
#undef main

#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "sds_flags.h"
#include "forge_register.h"

static int squat_main(const char *sock)
{
	unsigned long long rounds = 0;
	char reply[512];
	size_t size;
	__u32 *row;
	void *m;
	int fds[2], fd, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = forge_register(sock, reply, sizeof(reply), fds);
	if (fd < 0 || fds[0] < 0 || fds[1] < 0 || strstr(reply, "error")) {
		printf("register failed: %s\n", fd < 0 ? strerror(errno) : reply);
		return 2;
	}
	size = json_num(reply, "cells_size");
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
	if (m == MAP_FAILED) {
		printf("cells errno=%d\n", errno);
		return 2;
	}
	row = (__u32 *)((char *)m + SDS_PERMITS_OFF);
	printf("squatting cells_size=%zu\n", size);
	for (;;) {
		for (i = 0; i < SDS_MAX_POINTS; i++)
			__atomic_store_n(&((struct sds_cell *)((char *)m +
				(size_t)i * SDS_CELL_SIZE))->permits,
				1LL << 40, __ATOMIC_RELAXED);
		for (i = 0; i < SDS_MAX_PROCS * SDS_MAX_POINTS; i++)
			__atomic_store_n(&row[i], 1u << 30, __ATOMIC_RELAXED);
		if (!(++rounds & 0xffff))
			printf("writes=%llu\n", rounds);
	}
	return 0;
}

static int resize_main(const char *sock)
{
	char reply[512];
	size_t size;
	int fds[2], fd, e1, e2;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = forge_register(sock, reply, sizeof(reply), fds);
	if (fd < 0 || fds[0] < 0 || fds[1] < 0 || strstr(reply, "error")) {
		printf("register failed: %s\n", fd < 0 ? strerror(errno) : reply);
		return 2;
	}
	size = json_num(reply, "cells_size");
	e1 = ftruncate(fds[1], 0) ? errno : 0;
	e2 = ftruncate(fds[1], (off_t)size * 2) ? errno : 0;
	printf("shrink errno=%d grow errno=%d\n", e1, e2);
	for (;;)
		pause();
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "squat"))
		return squat_main(argv[2]);
	if (argc == 3 && !strcmp(argv[1], "resize"))
		return resize_main(argv[2]);
	return guarded_main();
}
