// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-floor BINARY OFFSET: attach the session floor of floor.bpf.c
 * (a counter, two clock reads and a log2 histogram on one uprobe session,
 * nothing else) at file offset OFFSET of BINARY, every process, now and
 * later; print "ready" once attached and run until SIGINT/SIGTERM; then
 * print "enters N leaves M" as bench-bare does, and detach.  The offset
 * is the caller's (run.sh asks bench.py): a session link takes a file
 * offset, and libbpf 1.1 resolves symbols only inside its own attach.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "floor.skel.h"
#include "preempt.h"
#include "upsession.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = 1;
}

static int print_warnings(enum libbpf_print_level level, const char *fmt,
			  va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* Counter @key (0: entered, 1: returned) summed over the CPUs. */
static unsigned long long floor_count(struct floor_bpf *skel, __u32 key)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	unsigned long long sum = 0;
	__u64 *v;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(bpf_map__fd(skel->maps.counts), &key, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct floor_bpf *skel;
	sigset_t block, old;
	unsigned long off;
	uint64_t cookie = 0;
	int fd = -1, err = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s BINARY OFFSET\n", argv[0]);
		return 2;
	}
	off = strtoul(argv[2], NULL, 0);
	libbpf_set_print(print_warnings);
	/* Blocked until we wait for them, so none is lost. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench-floor: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->atomics = sds_kernel_preemptible();
	bpf_program__set_expected_attach_type(skel->progs.floor_session,
		(enum bpf_attach_type)SDS_BPF_TRACE_UPROBE_SESSION);
	if (floor_bpf__load(skel)) {
		fprintf(stderr, "bench-floor: load: %s\n", strerror(errno));
		goto out;
	}
	fd = sds_upsession_link(bpf_program__fd(skel->progs.floor_session),
				argv[1], &off, &cookie, 1, -1);
	if (fd < 0) {
		fprintf(stderr, "bench-floor: session on %s+0x%lx: %s\n", argv[1],
			off, strerror(errno));
		goto out;
	}
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	printf("enters %llu leaves %llu\n", floor_count(skel, 0),
	       floor_count(skel, 1));
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	floor_bpf__destroy(skel);
	return err;
}
