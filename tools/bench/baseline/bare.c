// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-bare BINARY FUNCTION [OFFSET]: attach the bare uprobe + uretprobe
 * pair of bare.bpf.c to FUNCTION in BINARY (every process, now and later),
 * print "ready" once both are attached, and run until SIGINT/SIGTERM; then
 * print the two counters and detach.
 *
 * The entry probe sits on the function's first instruction, as bcc and
 * bpftrace place it, or OFFSET bytes into the function (4: past endbr64,
 * where sds-bpf places it).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bare_counts.h"

int main(int argc, char **argv)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	struct bare_bpf *skel = NULL;
	struct bpf_link *l_enter = NULL, *l_leave = NULL;
	sigset_t old;
	size_t offset = 0;
	int err = 1;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: %s BINARY FUNCTION [OFFSET]\n", argv[0]);
		return 2;
	}
	if (argc == 4)
		offset = strtoul(argv[3], NULL, 0);
	bench_probe_init(&old);

	skel = bare_open_and_load();
	if (!skel) {
		fprintf(stderr, "bench-bare: load: %s\n", strerror(errno));
		goto out;
	}
	uo.func_name = argv[2];
	uo.retprobe = false;
	l_enter = bpf_program__attach_uprobe_opts(skel->progs.bare_enter, -1,
						  argv[1], offset, &uo);
	if (!l_enter) {
		fprintf(stderr, "bench-bare: uprobe %s:%s: %s\n", argv[1],
			argv[2], strerror(errno));
		goto out;
	}
	uo.retprobe = true;
	l_leave = bpf_program__attach_uprobe_opts(skel->progs.bare_leave, -1,
						  argv[1], offset, &uo);
	if (!l_leave) {
		fprintf(stderr, "bench-bare: uretprobe %s:%s: %s\n", argv[1],
			argv[2], strerror(errno));
		goto out;
	}
	bench_probe_wait(&old);
	printf("enters %llu leaves %llu\n",
	       bench_percpu_sum(skel->maps.counts, 0),
	       bench_percpu_sum(skel->maps.counts, 1));
	err = 0;
out:
	bpf_link__destroy(l_leave);
	bpf_link__destroy(l_enter);
	bare_bpf__destroy(skel);
	return err;
}
