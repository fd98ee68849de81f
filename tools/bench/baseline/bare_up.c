// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-bare-up BINARY FUNC_A FUNC_B: two bare uprobes, one counter each,
 * the baseline of a guarded call (whose entry and exit are two uprobes on
 * two 5-byte NOP sites of libsds).  The programs of bare.bpf.c are reused:
 * bare_enter counts the hits of FUNC_A in `enters`, bare_leave (a plain
 * uprobe here, not a return probe) those of FUNC_B in `leaves`.  Prints
 * "ready" once both are attached, runs until SIGINT/SIGTERM, then prints
 * "a N b M" and detaches.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bare_counts.h"

static struct bpf_link *attach(struct bpf_program *prog, const char *bin,
			       const char *func)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = func, .retprobe = false);
	struct bpf_link *l = bpf_program__attach_uprobe_opts(prog, -1, bin, 0, &uo);

	if (!l)
		fprintf(stderr, "bench-bare-up: uprobe %s:%s: %s\n", bin, func,
			strerror(errno));
	return l;
}

int main(int argc, char **argv)
{
	struct bpf_link *la = NULL, *lb = NULL;
	struct bare_bpf *skel;
	sigset_t old;
	int err = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: %s BINARY FUNC_A FUNC_B\n", argv[0]);
		return 2;
	}
	bench_probe_init(&old);

	skel = bare_open_and_load();
	if (!skel) {
		fprintf(stderr, "bench-bare-up: load: %s\n", strerror(errno));
		return 1;
	}
	la = attach(skel->progs.bare_enter, argv[1], argv[2]);
	lb = la ? attach(skel->progs.bare_leave, argv[1], argv[3]) : NULL;
	if (!lb)
		goto out;
	bench_probe_wait(&old);
	printf("a %llu b %llu\n", bench_percpu_sum(skel->maps.counts, 0),
	       bench_percpu_sum(skel->maps.counts, 1));
	err = 0;
out:
	bpf_link__destroy(lb);
	bpf_link__destroy(la);
	bare_bpf__destroy(skel);
	return err;
}
