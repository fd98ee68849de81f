// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-guard cost: ns per guarded call, in columns measured in
 * alternation by THREADS threads at once (usage: guard.c).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sds.h>
#include "bench_guard.h"

void bench_site_a(uint32_t id, uint64_t key);
void bench_site_b(uint32_t id, uint64_t key);
void bench_site_c(uint32_t id, uint64_t key);
void bench_site_d(uint32_t id, uint64_t key);

static double median(const double *v, int n)
{
	double s[MAX_ROUNDS * 4];

	memcpy(s, v, n * sizeof(*v));
	qsort(s, n, sizeof(*s), bg_cmp_double);
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* ---- the columns ---------------------------------------------------------- */

enum { C_NONE, C_PASS, C_DOWN, C_BARE2, C_NOP2, C_COPYOFF, C_MAX };
static const char *const col_name[C_MAX] = { "none", "pass", "down", "bare2", "nop2",
					     "copyoff" };

static struct sds_point *col_point[C_MAX];

/* The job all threads run, set by the main thread between barriers. */
static struct {
	pthread_barrier_t start, done;
	int col;
	long iters;
	bool quit;
	double ns[MAX_THREADS];	/* per thread: ns per call */
	long bad[MAX_THREADS];	/* per thread: wrong decisions */
} job;

static long run_col(int col, long n)
{
	struct sds_point *p = col_point[col];
	bool want = col == C_DOWN;
	char req[256] = "GET / HTTP/1.1\r\n\r\n";
	long i, bad = 0;

	switch (col) {
	case C_COPYOFF:
		for (i = 0; i < n; i++) {
			/* The request escapes, as a real one would. */
			__asm__ volatile("" : : "r"(req) : "memory");
			bad += sds_copy(p, req, sizeof(req)) != 0;
		}
		break;
	case C_BARE2:
		for (i = 0; i < n; i++) {
			bench_site_a(1, 2);
			bench_site_b(1, 2);
		}
		break;
	case C_NOP2:
		for (i = 0; i < n; i++) {
			bench_site_c(1, 2);
			bench_site_d(1, 2);
		}
		break;
	default:
		for (i = 0; i < n; i++) {
			bad += sds_should_downgrade(p) != want;
			sds_downgrade_finally(p);
		}
	}
	return bad;
}

static void *cost_worker(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	uint64_t t0;

	bg_pin(me);
	for (;;) {
		pthread_barrier_wait(&job.start);
		if (job.quit)
			return NULL;
		t0 = now_ns();
		job.bad[me] = run_col(job.col, job.iters);
		job.ns[me] = (double)(now_ns() - t0) / job.iters;
		pthread_barrier_wait(&job.done);
	}
}

/* All threads run @n calls of @col: mean ns per call over threads. */
static double cost_job(int col, long n, long *bad)
{
	double sum = 0;
	unsigned int i;

	job.col = col;
	job.iters = n;
	pthread_barrier_wait(&job.start);
	pthread_barrier_wait(&job.done);
	for (i = 0; i < bg_threads; i++) {
		sum += job.ns[i];
		*bad += job.bad[i];
	}
	return sum / bg_threads;
}

int bg_cost(int rounds, double target_ms)
{
	pthread_t tid[MAX_THREADS];
	struct sds_client *none, *cl;
	double res[C_MAX][MAX_ROUNDS], per_call;
	long iters[C_MAX], calls[C_MAX] = { 0 }, bad[C_MAX] = { 0 };
	int order[C_MAX], r, k, c;
	unsigned int i;

	/* No loader serves this app: the client stays detached. */
	none = sds_client_open(GROUP, "bench-guard-no-loader");
	cl = sds_client_open(GROUP, bg_app);
	col_point[C_NONE] = sds_point(none, "pass");
	col_point[C_PASS] = sds_point(cl, "pass");
	col_point[C_DOWN] = sds_point(cl, "down");
	col_point[C_COPYOFF] = col_point[C_PASS];
	if (!col_point[C_NONE] || !col_point[C_PASS] || !col_point[C_DOWN]) {
		fprintf(stderr, "bench-guard: out of memory\n");
		return 1;
	}
	pthread_barrier_init(&job.start, NULL, bg_threads + 1);
	pthread_barrier_init(&job.done, NULL, bg_threads + 1);
	for (i = 0; i < bg_threads; i++)
		if (pthread_create(&tid[i], NULL, cost_worker, (void *)(uintptr_t)i)) {
			fprintf(stderr, "bench-guard: pthread_create failed\n");
			return 1;
		}

	/*
	 * Warm up (the first hit of a uprobe on a 5-byte NOP is what makes
	 * the kernel rewrite it into a call) and calibrate each column so
	 * that a round of it takes about target_ms.
	 */
	for (c = 0; c < C_MAX; c++) {
		cost_job(c, 200, &bad[c]);
		per_call = cost_job(c, 2000, &bad[c]);
		calls[c] += 2200 * bg_threads;
		iters[c] = (long)(target_ms * 1e6 / per_call);
		if (iters[c] < 1000)
			iters[c] = 1000;
		if (iters[c] > 200000000)
			iters[c] = 200000000;
		order[c] = c;
	}
	for (r = 0; r < rounds; r++) {
		for (k = 0; k < C_MAX; k++) {
			c = order[(k + r) % C_MAX];
			res[c][r] = cost_job(c, iters[c], &bad[c]);
			calls[c] += iters[c] * bg_threads;
		}
	}
	job.quit = true;
	pthread_barrier_wait(&job.start);
	for (i = 0; i < bg_threads; i++)
		pthread_join(tid[i], NULL);

	for (c = 0; c < C_MAX; c++) {
		double lo = res[c][0], hi = res[c][0];

		for (r = 1; r < rounds; r++) {
			if (res[c][r] < lo)
				lo = res[c][r];
			if (res[c][r] > hi)
				hi = res[c][r];
		}
		printf("col=%s threads=%u ns_per_call=%.2f min=%.2f max=%.2f calls=%ld "
		       "rounds=", col_name[c], bg_threads, median(res[c], rounds),
		       lo, hi, calls[c]);
		for (r = 0; r < rounds; r++)
			printf("%s%.2f", r ? "," : "", res[c][r]);
		printf("\n");
	}
	for (c = 0; c < C_MAX; c++)
		if (bad[c]) {
			fprintf(stderr, "bench-guard: %s: %ld calls decided wrong\n",
				col_name[c], bad[c]);
			return 1;
		}
	/* Closed only now: the points' counts are what run.sh checks. */
	sds_client_close(cl);
	sds_client_close(none);
	return 0;
}
