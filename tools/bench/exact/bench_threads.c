// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench_threads.c - the thread harness of the two-column benchmarks
 * (bench_threads.h).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "bench_threads.h"

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct bench_worker {
	bench_run_fn run;	/* what each thread runs */
	void *col;		/* ... on this column */
	pthread_barrier_t *go;	/* all threads start together */
	double ns;		/* ns per call */
};

static void *bench_work(void *arg)
{
	struct bench_worker *w = arg;

	pthread_barrier_wait(w->go);
	w->ns = w->run(w->col);
	return NULL;
}

double bench_round(bench_run_fn run, void *col, int nt)
{
	struct bench_worker w[BENCH_MAX_THREADS];
	pthread_t t[BENCH_MAX_THREADS];
	pthread_barrier_t go;
	double sum = 0;
	int i;

	pthread_barrier_init(&go, NULL, nt);
	for (i = 0; i < nt; i++) {
		w[i] = (struct bench_worker){ .run = run, .col = col, .go = &go };
		pthread_create(&t[i], NULL, bench_work, &w[i]);
	}
	for (i = 0; i < nt; i++) {
		pthread_join(t[i], NULL);
		sum += w[i].ns;
	}
	pthread_barrier_destroy(&go);
	return sum / nt;
}

void bench_alternate(bench_run_fn run, void *const cols[2], int nt, int rounds,
		     double v[2][BENCH_MAX_ROUNDS])
{
	int r, i, k;

	/* Warm up: bindings, frames, caches. */
	bench_round(run, cols[0], nt);
	bench_round(run, cols[1], nt);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < 2; i++) {
			k = (r + i) % 2;
			v[k][r] = bench_round(run, cols[k], nt);
		}
}

static int bench_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void bench_print_col(const char *name, int nt, const double *v, int rounds,
		     int with_rounds)
{
	double s[BENCH_MAX_ROUNDS];
	int r;

	memcpy(s, v, sizeof(double) * rounds);
	qsort(s, rounds, sizeof(double), bench_cmp);
	printf("col=%s threads=%d median=%.1f min=%.1f max=%.1f", name, nt,
	       s[rounds / 2], s[0], s[rounds - 1]);
	if (with_rounds) {
		printf(" rounds=");
		for (r = 0; r < rounds; r++)
			printf("%s%.1f", r ? "," : "", v[r]);
	}
	printf("\n");
}
