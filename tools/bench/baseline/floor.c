// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-floor BINARY OFFSET: attach the session floor of floor.bpf.c
 * (a counter, two clock reads and a log2 histogram on one uprobe session,
 * nothing else) at file offset OFFSET of BINARY, every process, now and
 * later; print "ready" once attached and run until SIGINT/SIGTERM; then
 * print "enters N leaves M" as bench-bare does, and detach.  The offset
 * is the caller's (tools/bench/probe/run.sh asks tools/bench/bench.py):
 * a session link takes a file offset, and libbpf 1.1 resolves symbols
 * only inside its own attach.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "bench_probe.h"
#include "floor.skel.h"
#include "preempt.h"
#include "upsession.h"

int main(int argc, char **argv)
{
	struct floor_bpf *skel;
	sigset_t old;
	unsigned long off;
	uint64_t cookie = 0;
	int fd = -1, err = 1;

	if (argc != 3) {
		fprintf(stderr, "usage: %s BINARY OFFSET\n", argv[0]);
		return 2;
	}
	off = strtoul(argv[2], NULL, 0);
	bench_probe_init(&old);

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "bench-floor: open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->atomics = preempt_kernel_preemptible();
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
	bench_probe_wait(&old);
	printf("enters %llu leaves %llu\n",
	       bench_percpu_sum(skel->maps.counts, 0),
	       bench_percpu_sum(skel->maps.counts, 1));
	err = 0;
out:
	if (fd >= 0)
		close(fd);
	floor_bpf__destroy(skel);
	return err;
}
