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
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "bare_counts.h"

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
	struct sigaction sa = { .sa_handler = on_signal };
	struct bpf_link *la = NULL, *lb = NULL;
	struct bare_bpf *skel;
	sigset_t block, old;
	int err = 1;

	if (argc != 4) {
		fprintf(stderr, "usage: %s BINARY FUNC_A FUNC_B\n", argv[0]);
		return 2;
	}
	libbpf_set_print(print_warnings);
	/* Blocked until we wait for them, so none is lost. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	skel = bare_open_and_load();
	if (!skel) {
		fprintf(stderr, "bench-bare-up: load: %s\n", strerror(errno));
		return 1;
	}
	la = attach(skel->progs.bare_enter, argv[1], argv[2]);
	lb = la ? attach(skel->progs.bare_leave, argv[1], argv[3]) : NULL;
	if (!lb)
		goto out;
	printf("ready\n");
	fflush(stdout);
	while (!stop)
		sigsuspend(&old);
	printf("a %llu b %llu\n", bare_count(skel, 0),
	       bare_count(skel, 1));
	err = 0;
out:
	bpf_link__destroy(lb);
	bpf_link__destroy(la);
	bare_bpf__destroy(skel);
	return err;
}
