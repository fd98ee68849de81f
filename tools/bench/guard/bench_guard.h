/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * bench_guard.h - what the modes of bench-guard share (guard.c: the options,
 * main and the usage of every mode; guard_cost.c, guard_react.c,
 * guard_exact.c: one mode each, exact for conc and token).
 */
#ifndef SDS_BENCH_GUARD_H
#define SDS_BENCH_GUARD_H

#include <stdint.h>
#include <time.h>

#define GROUP		"bench"
#define MAX_THREADS	8
#define MAX_ROUNDS	101

/* -a APP: the app whose loader serves the points. */
extern const char *bg_app;
/* -T THREADS: cost's threads, 1..MAX_THREADS. */
extern unsigned int bg_threads;

/* CLOCK_MONOTONIC in ns; inline, as it brackets each call it times. */
static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Pins the calling thread, the @i-th, to the (i mod n)-th CPU of -c. */
void bg_pin(unsigned int i);
/* qsort's comparison of two doubles, ascending. */
int bg_cmp_double(const void *a, const void *b);

/* The modes (usage: guard.c); each returns the exit status. */
int bg_cost(int rounds, double target_ms);
int bg_react(const char *path, int trials, long threshold, long pace_us,
	     long version0, long jitter_us);
int bg_conc(const char *point, long limit, long rounds, double ms);
int bg_token(const char *point, long rate, long bucket, double ms);

#endif
