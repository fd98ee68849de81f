// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * region_forge - a hostile client of the flags region (tests/hostile/
 * t_region.py, docs/TRUST.md).  Two modes in one program, so that the
 * victim and the attacker run the same attached TARGET (the loader lets
 * only TARGET register):
 *
 *   region_forge                 the victim: tests/targets/guarded.c's
 *                                stdin protocol, unchanged
 *   region_forge forge SOCKET MS registers at SOCKET as libsds does, then
 *                                attacks the two maps it gets and stays
 *                                registered MS ms before it exits
 *
 * The attack prints one line per try, "NAME errno=E" (0: it worked) or
 * "NAME faulted=F of=N" for the writes into the read-only map, then
 * "forged cells=N rows=M" once it has written garbage into every cell of
 * the cells map: permits 2^62, tat_ns, next_probe_ns and every counter
 * (the exact trips' included) 2^63, every permit row of every process
 * 2^30.
 */
#define main guarded_main
#include "../targets/guarded.c"
#include "../targets/guarded_harm.c"
#include "../targets/guarded_copy.c"
#undef main

#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include "sds_flags.h"
#include "forge_register.h"

static sigjmp_buf fault_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(fault_jmp, 1);
}

/* Try to write @n bytes at each of @off[] into @mem: how many faulted. */
static int write_each(volatile unsigned char *mem, const size_t *off, int n)
{
	struct sigaction sa = { .sa_handler = on_segv };
	volatile int faulted = 0;
	volatile int i;

	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_NODEFER;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	for (i = 0; i < n; i++) {
		if (sigsetjmp(fault_jmp, 1)) {
			faulted++;
			continue;
		}
		mem[off[i]] = 0xff;
	}
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	return faulted;
}

/* Every way to write the loader's map through the fd we were given. */
static void attack_flags(int ro, size_t size, uint32_t npoints)
{
	static size_t off[1 + SDS_MAX_POINTS * 16];
	static const size_t fields[] = {
		offsetof(struct sds_flag, seq), offsetof(struct sds_flag, active),
		offsetof(struct sds_flag, reason), offsetof(struct sds_flag, rate),
		offsetof(struct sds_flag, expires_ns),
		offsetof(struct sds_flag, concurrent_limit),
		offsetof(struct sds_flag, token_interval_ns),
		offsetof(struct sds_flag, token_burst_ns),
		offsetof(struct sds_flag, probe_interval_ns),
		offsetof(struct sds_flag, point_kind), offsetof(struct sds_flag, gen),
		offsetof(struct sds_flag, drill_kind),
		offsetof(struct sds_flag, drill_ratio),
		offsetof(struct sds_flag, drill_delay_ns),
		offsetof(struct sds_flag, drill_expires_ns),
	};
	char path[64];
	void *m;
	int fd, n = 0, f;
	uint32_t p;
	size_t i;

	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, ro, 0);
	printf("mmap_write errno=%d\n", m == MAP_FAILED ? errno : 0);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", ro);
	fd = open(path, O_RDWR);
	printf("reopen_rdwr errno=%d\n", fd < 0 ? errno : 0);
	printf("write errno=%d\n", write(ro, "x", 1) < 0 ? errno : 0);
	printf("ftruncate errno=%d\n", ftruncate(ro, 0) ? errno : 0);
	m = mmap(NULL, size, PROT_READ, MAP_SHARED, ro, 0);
	if (m == MAP_FAILED) {
		printf("mmap_read errno=%d\n", errno);
		return;
	}
	printf("mmap_read errno=0\n");
	printf("mprotect errno=%d\n",
	       mprotect(m, size, PROT_READ | PROT_WRITE) ? errno : 0);
	/* The header's fields, then every loader-owned field of every entry. */
	for (i = 0; i < offsetof(struct sds_flags_header, pad); i += 4)
		off[n++] = i;
	for (p = 0; p < npoints && p < SDS_MAX_POINTS; p++)
		for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			off[n++] = (size_t)(1 + p) * SDS_FLAG_SIZE + fields[i];
	f = write_each(m, off, n);
	printf("writes faulted=%d of=%d\n", f, n);
}

/* Garbage in every cell a guard may write. */
static void attack_cells(int cfd, size_t size)
{
	struct sds_cell *c;
	__u32 *row;
	void *m;
	int i;

	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, cfd, 0);
	if (m == MAP_FAILED) {
		printf("cells errno=%d\n", errno);
		return;
	}
	for (i = 0; i < SDS_MAX_POINTS; i++) {
		c = (struct sds_cell *)((char *)m + (size_t)i * SDS_CELL_SIZE);
		c->permits = 1LL << 62;
		c->tat_ns = c->next_probe_ns = 1ULL << 63;
		c->probes_ok = c->probes_failed = 1ULL << 63;
		c->refused_concurrent = c->refused_token = 1ULL << 63;
		c->drill_faults = c->drill_delays = 1ULL << 63;
		c->visit_spent = c->exc_spent = c->slow_spent = 1ULL << 63;
	}
	row = (__u32 *)((char *)m + SDS_PERMITS_OFF);
	for (i = 0; i < SDS_MAX_PROCS * SDS_MAX_POINTS; i++)
		row[i] = 1u << 30;
	printf("forged cells=%d rows=%d\n", SDS_MAX_POINTS,
	       SDS_MAX_PROCS * SDS_MAX_POINTS);
}

static int forge_main(const char *sock, long ms)
{
	char reply[512];
	int fds[2], fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = forge_register(sock, reply, sizeof(reply), fds);
	if (fd < 0 || fds[0] < 0 || fds[1] < 0 || strstr(reply, "error")) {
		printf("register failed: %s\n", fd < 0 ? strerror(errno) : reply);
		return 2;
	}
	printf("registered %s\n", reply[0] ? "yes" : "no");
	attack_flags(fds[0], json_num(reply, "size"),
		     SDS_MAX_POINTS);
	attack_cells(fds[1], json_num(reply, "cells_size"));
	printf("done\n");
	sleep_ms(ms);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "forge"))
		return forge_main(argv[2], strtol(argv[3], NULL, 10));
	return guarded_main();
}
