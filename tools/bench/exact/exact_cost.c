// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-exact-cost: what the exact trips' budget adds to a guarded call
 * (tools/bench/exact/exact_bench.py attaches a loader to this program).
 *
 *   bench-exact-cost APP THREADS ROUNDS MS
 *
 * Two points of APP (group "default"): "pass" has no strategy (today's
 * passing call: line 1 read, the entry site, the exit site) and "budget"
 * has a visit_threshold no run reaches (the same, plus line 2's marks and
 * one CAS on the shared cell per call).  Each round measures both columns
 * once, the order alternating, THREADS threads at once for MS ms each;
 * a round's value is the mean over threads of ns per call
 * (sds_should_downgrade + sds_downgrade_finally).  Prints per column
 * "col=C threads=T median=M min=N max=X rounds=v1,...".  Exits 1 if a
 * call was downgraded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sds.h>
#include "bench_threads.h"

static struct sds_point *cols[2];
static const char *const names[2] = { "pass", "budget" };
static uint64_t run_ns;
static int bad;

/* One thread on the column's point for run_ns: ns per guarded call. */
static double run_point(void *col)
{
	struct sds_point *p = col;
	uint64_t t0, t, n = 0;
	int i;

	t0 = bench_now_ns();
	do {
		for (i = 0; i < 256; i++) {
			if (sds_should_downgrade(p))
				__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
			sds_downgrade_finally(p);
		}
		n += 256;
		t = bench_now_ns();
	} while (t - t0 < run_ns);
	return (double)(t - t0) / n;
}

int main(int argc, char **argv)
{
	static double v[2][BENCH_MAX_ROUNDS];
	struct sds_client *c;
	int nt, rounds, k;

	if (argc != 5) {
		fprintf(stderr, "usage: bench-exact-cost APP THREADS ROUNDS MS\n");
		return 2;
	}
	nt = atoi(argv[2]);
	rounds = atoi(argv[3]);
	run_ns = strtoull(argv[4], NULL, 10) * 1000000ULL;
	if (nt < 1 || nt > BENCH_MAX_THREADS || rounds < 1 ||
	    rounds > BENCH_MAX_ROUNDS)
		return 2;
	c = sds_client_open("default", argv[1]);
	for (k = 0; k < 2; k++)
		cols[k] = sds_point(c, names[k]);
	if (!c || !cols[0] || !cols[1])
		return 2;
	bench_alternate(run_point, (void *const *)cols, nt, rounds, v);
	for (k = 0; k < 2; k++)
		bench_print_col(names[k], nt, v[k], rounds, 1);
	sds_client_close(c);
	return bad;
}
