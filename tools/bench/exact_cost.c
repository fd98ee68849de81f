// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-exact-cost: what the exact trips' budget adds to a guarded call
 * (tools/bench/exact_bench.py attaches a loader to this program).
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
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sds.h>

#define MAX_ROUNDS	64
#define MAX_THREADS	8

static struct sds_point *cols[2];
static const char *const names[2] = { "pass", "budget" };
static uint64_t run_ns;
static int bad;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct worker {
	struct sds_point *p;	/* the column's point */
	pthread_barrier_t *go;	/* all threads start together */
	double ns;		/* ns per call */
};

static void *work(void *arg)
{
	struct worker *w = arg;
	uint64_t t0, t, n = 0;
	int i;

	pthread_barrier_wait(w->go);
	t0 = now_ns();
	do {
		for (i = 0; i < 256; i++) {
			if (sds_should_downgrade(w->p))
				__atomic_store_n(&bad, 1, __ATOMIC_RELAXED);
			sds_downgrade_finally(w->p);
		}
		n += 256;
		t = now_ns();
	} while (t - t0 < run_ns);
	w->ns = (double)(t - t0) / n;
	return NULL;
}

static double round_of(struct sds_point *p, int nt)
{
	struct worker w[MAX_THREADS];
	pthread_t t[MAX_THREADS];
	pthread_barrier_t go;
	double sum = 0;
	int i;

	pthread_barrier_init(&go, NULL, nt);
	for (i = 0; i < nt; i++) {
		w[i] = (struct worker){ .p = p, .go = &go };
		pthread_create(&t[i], NULL, work, &w[i]);
	}
	for (i = 0; i < nt; i++) {
		pthread_join(t[i], NULL);
		sum += w[i].ns;
	}
	pthread_barrier_destroy(&go);
	return sum / nt;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	static double v[2][MAX_ROUNDS], s[MAX_ROUNDS];
	struct sds_client *c;
	int nt, rounds, r, k, i;

	if (argc != 5) {
		fprintf(stderr, "usage: bench-exact-cost APP THREADS ROUNDS MS\n");
		return 2;
	}
	nt = atoi(argv[2]);
	rounds = atoi(argv[3]);
	run_ns = strtoull(argv[4], NULL, 10) * 1000000ULL;
	if (nt < 1 || nt > MAX_THREADS || rounds < 1 || rounds > MAX_ROUNDS)
		return 2;
	c = sds_client_open("default", argv[1]);
	for (k = 0; k < 2; k++)
		cols[k] = sds_point(c, names[k]);
	if (!c || !cols[0] || !cols[1])
		return 2;
	/* Warm up: bindings, frames, caches. */
	round_of(cols[0], nt);
	round_of(cols[1], nt);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < 2; i++) {
			k = (r + i) % 2;
			v[k][r] = round_of(cols[k], nt);
		}
	for (k = 0; k < 2; k++) {
		memcpy(s, v[k], sizeof(double) * rounds);
		qsort(s, rounds, sizeof(double), cmp);
		printf("col=%s threads=%d median=%.1f min=%.1f max=%.1f rounds=",
		       names[k], nt, s[rounds / 2], s[0], s[rounds - 1]);
		for (r = 0; r < rounds; r++)
			printf("%s%.1f", r ? "," : "", v[k][r]);
		printf("\n");
	}
	sds_client_close(c);
	return bad;
}
