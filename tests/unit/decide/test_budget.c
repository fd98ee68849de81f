// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of loader/decide/budget.c: the probe-cost budget's arithmetic. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "decide/budget.h"

#define MS	1000000ULL
#define SEC	1000000000ULL

static void test_parse_pct(void **state)
{
	uint64_t v = 1;

	assert_int_equal(budget_parse_pct("5", &v), 0);
	assert_int_equal(v, 50000000);
	assert_int_equal(budget_parse_pct("0", &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(budget_parse_pct("100", &v), 0);
	assert_int_equal(v, 1000000000);
	assert_int_equal(budget_parse_pct("2.5", &v), 0);
	assert_int_equal(v, 25000000);
	assert_int_equal(budget_parse_pct("0.125", &v), 0);
	assert_int_equal(v, 1250000);
	assert_int_equal(budget_parse_pct("100.000", &v), 0);
	assert_int_equal(v, 1000000000);
	assert_int_equal(budget_parse_pct("007", &v), 0);
	assert_int_equal(v, 70000000);
}

static void test_parse_pct_bad(void **state)
{
	static const char *const bad[] = {
		"", "-1", "+5", "100.001", "101", "1000", "5%", "five", ".5",
		"5.", "0.0001", "1e1", "inf", "nan", "0x5", " 5", "5 ", "5,5",
		"99999999999999999999999",
	};
	uint64_t v = 7;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(budget_parse_pct(bad[i], &v), -1);
		assert_int_equal(v, 7);
	}
}

static void test_cpu_ns(void **state)
{
	/* The program: 75,918 calls/s at a stepped 20,500 ns. */
	assert_int_equal(budget_cpu_ns(20500, 75918, SEC), 1556319000);
	assert_int_equal(budget_pct_milli(1556319000), 155632);
	/* 1,000 calls in 0.5 s at 700 ns: 1.4 ms/s, 0.14%. */
	assert_int_equal(budget_cpu_ns(700, 1000, 500 * MS), 1400000);
	assert_int_equal(budget_pct_milli(1400000), 140);
	assert_int_equal(budget_rate(1000, 500 * MS), 2000);
	assert_int_equal(budget_rate(7, 3 * SEC), 2);
	assert_int_equal(budget_cpu_ns(700, 5, 0), 0);
	assert_int_equal(budget_rate(5, 0), 0);
	/* Large counts do not overflow: 10^10 calls of 20.5 us in 1 s. */
	assert_int_equal(budget_cpu_ns(20500, 10000000000ULL, SEC),
			 205000000000000ULL);
	/* Rounding to the nearest 1/1000 %. */
	assert_int_equal(budget_pct_milli(4999), 0);
	assert_int_equal(budget_pct_milli(5000), 1);
	assert_int_equal(budget_pct_milli(50000000), 5000);
}

static void test_sample_window(void **state)
{
	struct budget_point bp;
	uint64_t t = 1000 * SEC;
	int i;

	budget_point_start(&bp, 1000, t, 0);
	/* 200 ms in: too short to judge. */
	budget_sample(&bp, t + 100 * MS, 100);
	budget_sample(&bp, t + 200 * MS, 200);
	assert_false(bp.known);
	/* 300 ms: 300 calls in 300 ms, 1000/s, 1 ms/s of CPU. */
	budget_sample(&bp, t + 300 * MS, 300);
	assert_true(bp.known);
	assert_int_equal(bp.rate, 1000);
	assert_int_equal(bp.cpu_ns, 1000000);
	/* Up to 1.2 s at 1000/s, then 100 ms of 5000 calls. */
	for (i = 4; i <= 12; i++)
		budget_sample(&bp, t + i * 100 * MS, i * 100);
	budget_sample(&bp, t + 1300 * MS, 1200 + 5000);
	/* The last second only: (6200 - 300) calls since t + 300 ms. */
	assert_int_equal(bp.rate, 5900);
	assert_int_equal(bp.cpu_ns, 5900000);
}

static void test_sample_gap(void **state)
{
	struct budget_point bp;
	uint64_t t = 5 * SEC;
	int i;

	/* A 1-ms tick: the ring keeps a sample per 50 ms, the rate stays exact. */
	budget_point_start(&bp, 2000, t, 0);
	for (i = 1; i <= 2000; i++)
		budget_sample(&bp, t + i * MS, i * 3);
	assert_true(bp.known);
	assert_int_equal(bp.rate, 3000);
	assert_int_equal(bp.cpu_ns, 6000000);
	assert_int_equal(bp.n, BUDGET_SAMPLES);
}

/* A zeroed budget (static: a failed assert must not leak it). */
static struct budget *budget_new(void)
{
	static struct budget b;

	memset(&b, 0, sizeof(b));
	return &b;
}

/* Point @id started at @t and measured at @rate calls/s for 1 s. */
static void run_point(struct budget *b, int id, unsigned int cost,
		      uint64_t rate, uint64_t t)
{
	budget_point_start(&b->pts[id], cost, t, 0);
	budget_sample(&b->pts[id], t + SEC, rate);
}

static void test_decide_app_total(void **state)
{
	struct budget *b = budget_new();
	enum budget_action acts[4];
	uint64_t t = 100 * SEC;

	b->max_ns = BUDGET_DEFAULT_NS;	/* 50 ms/s */
	/* 3% + 2% + 1%: 6% together, over 5%; the 3% one goes. */
	run_point(b, 0, 1000, 20000, t);	/* 20 ms/s */
	run_point(b, 1, 1000, 30000, t);	/* 30 ms/s */
	run_point(b, 2, 1000, 10000, t);	/* 10 ms/s */
	budget_decide(b, 4, t + SEC, acts);
	assert_int_equal(acts[0], BUDGET_NONE);
	assert_int_equal(acts[1], BUDGET_SUSPEND);
	assert_int_equal(acts[2], BUDGET_NONE);
	assert_int_equal(acts[3], BUDGET_NONE);
	assert_true(budget_suspended(&b->pts[1]));
	assert_int_equal(b->pts[1].try_at_ns, t + 3 * SEC);
	assert_int_equal(b->pts[1].suspensions, 1);
	/* Exactly at the budget is within it. */
	budget_decide(b, 4, t + SEC + 100 * MS, acts);
	assert_int_equal(acts[1], BUDGET_NONE);
}

static void test_decide_backoff(void **state)
{
	struct budget *b = budget_new();
	struct budget_point *bp = &b->pts[0];
	enum budget_action acts[1];
	uint64_t t = 100 * SEC, wait = 2 * SEC;
	int k;

	b->max_ns = BUDGET_DEFAULT_NS;
	run_point(b, 0, 20500, 75918, t);
	t += SEC;
	budget_decide(b, 1, t, acts);
	assert_int_equal(acts[0], BUDGET_SUSPEND);
	/* Each try over budget waits twice as long: 2, 4, ..., 60 s. */
	for (k = 0; k < 7; k++) {
		budget_decide(b, 1, t + wait - 1, acts);
		assert_int_equal(acts[0], BUDGET_NONE);
		t += wait;
		budget_decide(b, 1, t, acts);
		assert_int_equal(acts[0], BUDGET_TRY);
		assert_true(budget_suspended(bp));
		assert_false(bp->known);
		/* The last estimate stays shown until a new one is in. */
		assert_int_equal(bp->cpu_ns, k ? 2050000000 : 1556319000);
		budget_sample(bp, t, 5000000);
		budget_decide(b, 1, t + 100 * MS, acts);
		assert_int_equal(acts[0], BUDGET_NONE);
		budget_sample(bp, t + 300 * MS, 5000000 + 30000);
		t += 300 * MS;
		budget_decide(b, 1, t, acts);
		assert_int_equal(acts[0], BUDGET_RESUSPEND);
		wait = wait * 2 > 60 * SEC ? 60 * SEC : wait * 2;
		assert_int_equal(bp->try_at_ns, t + wait);
	}
	assert_int_equal(bp->backoff_ns, 60 * SEC);
	assert_int_equal(bp->suspensions, 1);
	/* The loop slowed down to 1000 calls/s: 2.05%, it resumes. */
	t += wait;
	budget_decide(b, 1, t, acts);
	assert_int_equal(acts[0], BUDGET_TRY);
	budget_sample(bp, t, 9000000);
	budget_sample(bp, t + 300 * MS, 9000300);
	budget_decide(b, 1, t + 300 * MS, acts);
	assert_int_equal(acts[0], BUDGET_RESUME);
	assert_false(budget_suspended(bp));
	assert_int_equal(bp->rate, 1000);
	assert_int_equal(bp->cpu_ns, 20500000);
	/* Over again later: the wait starts over at 2 s, a new suspension. */
	budget_sample(bp, t + 1300 * MS, 9000300 + 100000);
	budget_decide(b, 1, t + 1300 * MS, acts);
	assert_int_equal(acts[0], BUDGET_SUSPEND);
	assert_int_equal(bp->try_at_ns, t + 3300 * MS);
	assert_int_equal(bp->suspensions, 2);
}

static void test_decide_off_and_failed(void **state)
{
	struct budget *b = budget_new();
	enum budget_action acts[2];
	uint64_t t = 10 * SEC;

	/* --max-overhead 0: estimates, never a suspension. */
	run_point(b, 0, 20500, 75918, t);
	budget_decide(b, 2, t + SEC, acts);
	assert_int_equal(acts[0], BUDGET_NONE);
	assert_false(budget_suspended(&b->pts[0]));
	assert_int_equal(b->pts[0].cpu_ns, 1556319000);
	/* Unmeasured points (unused or < 300 ms) count nothing. */
	b->max_ns = 1;
	budget_point_start(&b->pts[0], 20500, t, 0);
	budget_sample(&b->pts[0], t + 200 * MS, 100000);
	budget_decide(b, 2, t + 200 * MS, acts);
	assert_int_equal(acts[0], BUDGET_NONE);
	/* A re-attach that failed waits longer, like a failed try. */
	b->pts[0].backoff_ns = 4 * SEC;
	budget_try_failed(&b->pts[0], t);
	assert_int_equal(b->pts[0].state, BUDGET_SUSPENDED);
	assert_int_equal(b->pts[0].try_at_ns, t + 8 * SEC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_pct),
		cmocka_unit_test(test_parse_pct_bad),
		cmocka_unit_test(test_cpu_ns),
		cmocka_unit_test(test_sample_window),
		cmocka_unit_test(test_sample_gap),
		cmocka_unit_test(test_decide_app_total),
		cmocka_unit_test(test_decide_backoff),
		cmocka_unit_test(test_decide_off_and_failed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
