// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of libsds/guard.c's exact limits: the concurrency
 * semaphore (exact under threads, no spurious refusal) and the token
 * bucket (GCRA), on the region of guard_fixture.h.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <math.h>
#include <pthread.h>

#include "guard_fixture.h"

/* ---- concurrency ------------------------------------------------------ */

#define K	5	/* permits */
#define M	3	/* threads beyond them */

struct holder {
	struct sds_flag *e;		/* the entry */
	__u32 *cell;			/* the process's permit cell */
	pthread_barrier_t *decided;	/* every thread has decided */
	pthread_barrier_t *checked;	/* the test has looked */
	unsigned int how;		/* what the decision gave */
};

static void *holder_run(void *arg)
{
	struct holder *h = arg;
	uint64_t rng = 1;

	h->how = sds_guard_decide(h->e, C(h->e), hdr, h->cell, T0, &rng);
	pthread_barrier_wait(h->decided);
	pthread_barrier_wait(h->checked);
	if (!(h->how & SDS_G_DOWNGRADE))
		sds_guard_release(C(h->e), h->cell, h->how);
	return NULL;
}

static void test_concurrency_exact(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = K };
	struct sds_flag *e = entry(7);
	pthread_barrier_t decided, checked;
	struct holder h[K + M];
	pthread_t t[K + M];
	__u32 *cell = permit_cell(3, 7);
	int i, refused = 0, held = 0;

	publish(e, &c);
	pthread_barrier_init(&decided, NULL, K + M + 1);
	pthread_barrier_init(&checked, NULL, K + M + 1);
	for (i = 0; i < K + M; i++) {
		h[i] = (struct holder){ .e = e, .cell = cell, .decided = &decided,
					.checked = &checked };
		assert_int_equal(pthread_create(&t[i], NULL, holder_run, &h[i]), 0);
	}
	pthread_barrier_wait(&decided);
	for (i = 0; i < K + M; i++) {
		refused += h[i].how == SDS_G_DOWNGRADE;
		held += h[i].how == SDS_G_PERMIT;
	}
	assert_int_equal(refused, M);
	assert_int_equal(held, K);
	assert_int_equal(C(e)->permits, K);
	assert_int_equal(*cell, K);
	assert_int_equal(C(e)->refused_concurrent, M);
	pthread_barrier_wait(&checked);
	for (i = 0; i < K + M; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(C(e)->permits, 0);
	assert_int_equal(*cell, 0);
	pthread_barrier_destroy(&decided);
	pthread_barrier_destroy(&checked);
}

/* Under churn: never more than the limit inside, never a spurious refusal
 * while the count is below it, and all permits back at the end. */
struct churner {
	struct sds_flag *e;	/* the entry */
	int *inside;		/* holders right now */
	int *max_inside;	/* the most seen */
	int passed;		/* calls this thread got through */
};

static void *churn_run(void *arg)
{
	struct churner *c = arg;
	uint64_t rng = 1;
	unsigned int how;
	int i, n, m;

	for (i = 0; i < 20000; i++) {
		how = sds_guard_decide(c->e, C(c->e), hdr, NULL, T0, &rng);
		if (how & SDS_G_DOWNGRADE)
			continue;
		c->passed++;
		n = __atomic_add_fetch(c->inside, 1, __ATOMIC_SEQ_CST);
		m = __atomic_load_n(c->max_inside, __ATOMIC_RELAXED);
		while (n > m && !__atomic_compare_exchange_n(c->max_inside, &m, n,
				false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		__atomic_sub_fetch(c->inside, 1, __ATOMIC_SEQ_CST);
		sds_guard_release(C(c->e), NULL, how);
	}
	return NULL;
}

static void test_concurrency_churn(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 2 };
	struct sds_flag *e = entry(8);
	struct churner ch[6];
	pthread_t t[6];
	int inside = 0, max_inside = 0, i, passed = 0;

	publish(e, &c);
	for (i = 0; i < 6; i++) {
		ch[i] = (struct churner){ .e = e, .inside = &inside,
					  .max_inside = &max_inside };
		pthread_create(&t[i], NULL, churn_run, &ch[i]);
	}
	for (i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		passed += ch[i].passed;
	}
	assert_true(max_inside <= 2);
	assert_int_equal(C(e)->permits, 0);
	assert_int_equal(passed + C(e)->refused_concurrent, 6 * 20000);
}

/*
 * As many threads as permits: every call finds a permit free, so a single
 * refusal is a spurious one (a guard that refuses everything, or leaks a
 * permit, fails here; test_concurrency_churn's sum cannot tell).
 */
static void test_concurrency_no_spurious(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 4 };
	struct sds_flag *e = entry(19);
	struct churner ch[4];
	pthread_t t[4];
	int inside = 0, max_inside = 0, i, passed = 0;

	publish(e, &c);
	for (i = 0; i < 4; i++) {
		ch[i] = (struct churner){ .e = e, .inside = &inside,
					  .max_inside = &max_inside };
		pthread_create(&t[i], NULL, churn_run, &ch[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		passed += ch[i].passed;
	}
	assert_int_equal(C(e)->refused_concurrent, 0);
	assert_int_equal(passed, 4 * 20000);
	assert_int_equal(C(e)->permits, 0);
	assert_true(max_inside <= 4);
}

static void test_concurrency_zero_limit(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 0 };
	struct sds_flag *e = entry(9);
	uint64_t rng = 1;

	publish(e, &c);
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->permits, 0);
}

/* ---- token bucket ------------------------------------------------------ */

static void test_token_bucket(void **state)
{
	/* 1000 tokens/s, a bucket of 10. */
	struct cfg c = { .active = SDS_ACT_TOKEN, .interval_ns = MS,
			 .burst_ns = 10 * MS };
	struct sds_flag *e = entry(10);
	uint64_t rng = 1, now, calls = 0;
	int passed = 0, i;

	publish(e, &c);
	/* A full bucket at first: exactly 10 of 100 at once. */
	for (i = 0; i < 100; i++, calls++)
		passed += decide_at(e, T0, &rng) == 0;
	assert_int_equal(passed, 10);
	/* Then one a millisecond: over 1 s (T0 + 1 s included), 1000 more. */
	for (now = T0 + 100000; now <= T0 + NS; now += 100000) {
		for (i = 0; i < 3; i++, calls++)
			passed += decide_at(e, now, &rng) == 0;
	}
	assert_int_equal(passed, 10 + 1000);
	assert_int_equal(C(e)->refused_token, calls - passed);

	/* Idle 10 s: the bucket refills to 10, not to 10,000. */
	passed = 0;
	for (i = 0; i < 100; i++)
		passed += decide_at(e, T0 + 11 * NS, &rng) == 0;
	assert_int_equal(passed, 10);
}

static void test_token_bucket_odd_times(void **state)
{
	/* 3 tokens/s (interval not a divisor of a second), bucket 2. */
	__u64 iv = NS / 3;
	struct cfg c = { .active = SDS_ACT_TOKEN, .interval_ns = iv,
			 .burst_ns = 2 * iv };
	struct sds_flag *e = entry(11);
	uint64_t rng = 1, now;
	int passed = 0;

	publish(e, &c);
	/* A call every 7 ms over 10 s: burst + floor(t / iv) pass. */
	for (now = T0; now <= T0 + 10 * NS; now += 7 * MS)
		passed += decide_at(e, now, &rng) == 0;
	/* The last call is at T0 + 9.996 s: floor(9.996 / 0.3333) = 29. */
	assert_int_equal(passed, 2 + 29);
}

static void test_token_bucket_config_change(void **state)
{
	struct cfg c = { .active = SDS_ACT_TOKEN, .interval_ns = MS,
			 .burst_ns = 10 * MS };
	struct sds_flag *e = entry(12);
	uint64_t rng = 1;

	publish(e, &c);
	/* A tat past a bucket ahead, but within the slack, stays: the guard
	 * cannot tell it from a clock read older than another's. */
	C(e)->tat_ns = T0 + 500 * MS;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->tat_ns, T0 + 500 * MS);
	/* One beyond it (100 s) is no guard's: forged, the bucket starts full. */
	C(e)->tat_ns = T0 + 100 * NS;
	assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(C(e)->tat_ns, T0 + MS);
	/* The loader gives a new strategy a full bucket (tat_ns = 0). */
	C(e)->tat_ns = 0;
	assert_int_equal(decide_at(e, T0 + MS, &rng), 0);
	/* A bucket smaller than one token never passes. */
	c.burst_ns = MS / 2;
	publish(e, &c);
	assert_int_equal(decide_at(e, T0 + 50 * NS, &rng),
			 SDS_G_DOWNGRADE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrency_exact),
		cmocka_unit_test(test_concurrency_churn),
		cmocka_unit_test(test_concurrency_no_spurious),
		cmocka_unit_test(test_concurrency_zero_limit),
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_token_bucket_odd_times),
		cmocka_unit_test(test_token_bucket_config_change),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
