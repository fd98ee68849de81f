// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-keys: the hot keys benchmark's target (keys_bench.py).
 *
 *   bench-keys fn ITERS          call kb_fn(i, 32-byte string) ITERS times
 *                                after a warm-up, 1,024 keys of each kind
 *                                in turn; print "ns=NS batch_median=NS"
 *                                (the mean, the median of its 1,024-call
 *                                batches)
 *   bench-keys guard ROUNDS ITERS
 *                                a libsds guarded call of point "g",
 *                                unkeyed and keyed (8-byte key) in
 *                                alternation, ITERS each a round; print
 *                                "round R unkeyed=NS keyed=NS"
 *   bench-keys zipf CALLS SEED   CALLS calls of kb_fn(key) whose keys are
 *                                drawn Zipf(1.1) over 1,000,000 keys from
 *                                a fixed seed; print the truth's 20
 *                                heaviest as "truth RANK KEY COUNT"
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include <sds.h>

long kb_fn(long id, const char *name);

#define KB_KEYS		1000000
#define KB_TOP		20

static volatile long kb_sink;

static double kb_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Calls timed together: every one of the 1,024 keys once. */
#define KB_BATCH	1024

static int kb_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static int kb_fn_mode(long n)
{
	/*
	 * 31 characters and a NUL: the 32-byte string key=str2 reads; two
	 * of them turn, so that the string keys are 1,024 as the integer
	 * ones (i & 1023): the same table traffic for both.
	 */
	static char name[32] = "user-0123456789abcdef-012345678";
	long nb = n / KB_BATCH, b, i, j;
	double t0, tb, *bt = calloc(nb > 0 ? nb : 1, sizeof(*bt));

	if (!bt)
		return 1;
	for (i = 0; i < 5000; i++)
		kb_sink = kb_fn(i, name);
	t0 = kb_now();
	for (i = 0, b = 0; i < n; b++) {
		tb = kb_now();
		for (j = 0; j < KB_BATCH && i < n; j++, i++) {
			name[5] = (char)('A' + (i & 31));
			name[6] = (char)('A' + ((i >> 5) & 31));
			kb_sink = kb_fn(i & 1023, name);
		}
		if (j == KB_BATCH && b < nb)
			bt[b] = (kb_now() - tb) / KB_BATCH;
	}
	t0 = (kb_now() - t0) / n;
	/*
	 * The mean, and the median of the 1,024-call batches' means: on a
	 * loaded host the mean carries every preemption of the driver, the
	 * median the calls' own cost (each batch is every key once).
	 */
	qsort(bt, nb > 0 ? nb : 1, sizeof(*bt), kb_cmp_double);
	printf("ns=%.3f batch_median=%.3f\n", t0, nb > 0 ? bt[nb / 2] : t0);
	free(bt);
	return 0;
}

static double kb_guard_run(struct sds_point *p, long n, int keyed)
{
	uint64_t key;
	double t0 = kb_now();
	long i, bad = 0;

	for (i = 0; i < n; i++) {
		key = (uint64_t)(i & 15);
		__asm__ volatile("" : : "r"(&key) : "memory");
		if (keyed)
			bad += sds_should_downgrade_key(p, &key, sizeof(key));
		else
			bad += sds_should_downgrade(p);
		sds_downgrade_finally(p);
	}
	if (bad) {
		fprintf(stderr, "bench-keys: %ld calls downgraded\n", bad);
		return -1;
	}
	return (kb_now() - t0) / n;
}

static int kb_guard_mode(long rounds, long n)
{
	struct sds_client *c = sds_client_open("bench", "bench-keys");
	struct sds_point *p = sds_point(c, "g");
	double u, k;
	long r;

	if (!p)
		return 1;
	kb_guard_run(p, 2000, 0);
	kb_guard_run(p, 2000, 1);
	for (r = 0; r < rounds; r++) {
		/* A B in one round, B A in the next: neither always first. */
		if (r & 1) {
			k = kb_guard_run(p, n, 1);
			u = kb_guard_run(p, n, 0);
		} else {
			u = kb_guard_run(p, n, 0);
			k = kb_guard_run(p, n, 1);
		}
		if (u < 0 || k < 0)
			return 1;
		printf("round %ld unkeyed=%.3f keyed=%.3f\n", r, u, k);
		fflush(stdout);
	}
	return 0;
}

static uint64_t kb_rng;

static uint64_t kb_next(void)
{
	/* xorshift64*: a fixed seed gives the same stream every run. */
	kb_rng ^= kb_rng >> 12;
	kb_rng ^= kb_rng << 25;
	kb_rng ^= kb_rng >> 27;
	return kb_rng * 2685821657736338717ULL;
}

static int kb_cmp_rank(const void *a, const void *b, void *cnt)
{
	const uint32_t *c = cnt;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (c[x] != c[y])
		return c[x] < c[y] ? 1 : -1;
	return (x > y) - (x < y);
}

static int kb_zipf_mode(long calls, uint64_t seed)
{
	double *cdf = malloc(KB_KEYS * sizeof(*cdf)), sum = 0, u;
	uint32_t *cnt = calloc(KB_KEYS, sizeof(*cnt));
	uint32_t *idx = malloc(KB_KEYS * sizeof(*idx));
	long i, lo, hi, mid;

	if (!cdf || !cnt || !idx)
		return 1;
	for (i = 0; i < KB_KEYS; i++) {
		sum += pow((double)(i + 1), -1.1);
		cdf[i] = sum;
	}
	kb_rng = seed ? seed : 1;
	for (i = 0; i < calls; i++) {
		u = (double)(kb_next() >> 11) / 9007199254740992.0 * sum;
		lo = 0;
		hi = KB_KEYS - 1;
		while (lo < hi) {
			mid = (lo + hi) / 2;
			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		cnt[lo]++;
		/* The key is the rank's id: 1000 + rank, never 0. */
		kb_sink = kb_fn(1000 + lo, NULL);
	}
	for (i = 0; i < KB_KEYS; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, KB_KEYS, sizeof(*idx), kb_cmp_rank, cnt);
	for (i = 0; i < KB_TOP; i++)
		printf("truth %ld %u %u\n", i + 1, 1000 + idx[i], cnt[idx[i]]);
	free(cdf);
	free(cnt);
	free(idx);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "fn"))
		return kb_fn_mode(atol(argv[2]));
	if (argc == 4 && !strcmp(argv[1], "guard"))
		return kb_guard_mode(atol(argv[2]), atol(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "zipf"))
		return kb_zipf_mode(atol(argv[2]), strtoull(argv[3], NULL, 0));
	fprintf(stderr, "usage: bench-keys fn ITERS | guard ROUNDS ITERS | "
		"zipf CALLS SEED\n");
	return 2;
}
