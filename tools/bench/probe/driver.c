// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Benchmark driver: call bench_fn() in a tight loop and print the cost of
 * one call in ns.  Linked with one of fn_stepped.S, fn_endbr.c, fn_nop5.c,
 * which differ only in the first instruction of bench_fn, i.e. in the
 * kind of probe site a uprobe on it gets.
 *
 *   bench-drv-KIND [-n ITERS] [-r ROUNDS] [-t MS]
 *
 * Without -n, the number of calls per round is calibrated so that one
 * round takes about MS milliseconds (default 150): a single-stepped probe
 * costs ~20 us per call, no probe ~1.5 ns, and both should be measured in
 * about the same wall time.  Prints one line:
 *
 *   ns_per_call=MEDIAN min=MIN max=MAX iters=N rounds=R calls=TOTAL
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int bench_fn(int x);

static volatile int sink;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* ns per call over @n calls */
static double run(long n)
{
	double t0, t1;
	long i;

	t0 = now_ns();
	for (i = 0; i < n; i++)
		sink = bench_fn((int)i);
	t1 = now_ns();
	return (t1 - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	long iters = 0, rounds = 9, calls = 0;
	double target_ms = 150, per_call, res[101], med;
	int opt, r;

	while ((opt = getopt(argc, argv, "n:r:t:")) != -1) {
		switch (opt) {
		case 'n':
			iters = atol(optarg);
			break;
		case 'r':
			rounds = atol(optarg);
			break;
		case 't':
			target_ms = atof(optarg);
			break;
		default:
			fprintf(stderr,
				"usage: %s [-n ITERS] [-r ROUNDS] [-t MS]\n",
				argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > 101 || iters < 0 || target_ms <= 0) {
		fprintf(stderr, "%s: bad -n, -r (1..101) or -t\n", argv[0]);
		return 2;
	}

	/*
	 * Warm up: the first hit of a uprobe on a 5-byte NOP is what makes
	 * the kernel rewrite it into a call, and caches and branch
	 * predictors should be warm too.  Then calibrate.
	 */
	run(200);
	calls += 200;
	per_call = run(2000);
	calls += 2000;
	if (!iters) {
		iters = (long)(target_ms * 1e6 / per_call);
		if (iters < 1000)
			iters = 1000;
		if (iters > 100000000)
			iters = 100000000;
	}
	for (r = 0; r < rounds; r++) {
		res[r] = run(iters);
		calls += iters;
	}
	qsort(res, rounds, sizeof(res[0]), cmp_double);
	if (rounds % 2)
		med = res[rounds / 2];
	else
		med = (res[rounds / 2 - 1] + res[rounds / 2]) / 2;
	printf("ns_per_call=%.2f min=%.2f max=%.2f iters=%ld rounds=%ld calls=%ld\n",
	       med, res[0], res[rounds - 1], iters, rounds, calls);
	return 0;
}
