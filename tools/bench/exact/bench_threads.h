/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * bench_threads.h - the thread harness of the two-column benchmarks
 * (bench-exact-cost, bench-exact-decide): THREADS threads started
 * together on one column, the mean of their ns per call; rounds that
 * alternate the columns' order, so that neither is always measured on a
 * warmer or cooler machine; the line a column prints.
 */
#ifndef SDS_BENCH_THREADS_H
#define SDS_BENCH_THREADS_H

#include <stdint.h>

#define BENCH_MAX_ROUNDS	64
#define BENCH_MAX_THREADS	8

/* One thread's run on column @col, timed from its start: ns per call. */
typedef double (*bench_run_fn)(void *col);

/* CLOCK_MONOTONIC in ns. */
uint64_t bench_now_ns(void);
/* @nt threads (1..BENCH_MAX_THREADS) run @run(@col) at once: their mean. */
double bench_round(bench_run_fn run, void *col, int nt);
/*
 * A warm-up round of each of the two columns @cols, then @rounds rounds
 * (1..BENCH_MAX_ROUNDS), each measuring both in alternating order:
 * v[k][r] is column k's mean in round r.
 */
void bench_alternate(bench_run_fn run, void *const cols[2], int nt, int rounds,
		     double v[2][BENCH_MAX_ROUNDS]);
/*
 * "col=NAME threads=T median=M min=N max=X" of the @rounds values @v,
 * then " rounds=v1,..." (in the order measured) when @with_rounds.
 */
void bench_print_col(const char *name, int nt, const double *v, int rounds,
		     int with_rounds);

#endif
