/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * bench_probe.h - what the benchmark's probe tools (bench-bare,
 * bench-bare-up, bench-floor) share: libbpf's warnings only, SIGINT and
 * SIGTERM blocked until the tool waits for them (so none is lost between
 * attaching and waiting), "ready" once attached, and a per-CPU counter
 * summed over the CPUs.
 */
#ifndef SDS_BENCH_PROBE_H
#define SDS_BENCH_PROBE_H

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static volatile sig_atomic_t bench_stop;

static void bench_on_signal(int sig)
{
	bench_stop = 1;
}

static int bench_print_warnings(enum libbpf_print_level level,
				const char *fmt, va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* Before loading: libbpf's warnings only, the signals blocked (@old: the mask before). */
static inline void bench_probe_init(sigset_t *old)
{
	struct sigaction sa = { .sa_handler = bench_on_signal };
	sigset_t block;

	libbpf_set_print(bench_print_warnings);
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigprocmask(SIG_BLOCK, &block, old);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
}

/* Once attached: say "ready" and wait for SIGINT or SIGTERM. */
static inline void bench_probe_wait(const sigset_t *old)
{
	printf("ready\n");
	fflush(stdout);
	while (!bench_stop)
		sigsuspend(old);
}

/* Counter @key of per-CPU array @map summed over the CPUs (0 on error). */
static inline unsigned long long bench_percpu_sum(const struct bpf_map *map,
						  __u32 key)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	unsigned long long sum = 0;
	__u64 *v;

	if (ncpu <= 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && !bpf_map_lookup_elem(bpf_map__fd(map), &key, v))
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

#endif /* SDS_BENCH_PROBE_H */
