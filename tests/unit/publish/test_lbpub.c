// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * loader/publish/lbpub.c's mean latency of a provider, tick by tick, on
 * snapshots the test lays out: exact on a steady load, a step seen at
 * the first tick that has enough calls, a quiet provider averaged over
 * its last seconds, forgotten after 10 s without a call.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "kernel/snapshot.h"
#include "publish/lbpub.h"

#define MS	1000000ULL
#define TICK	(100 * MS)

/* lbpub.c's writer is not under test here. */
void flags__set_lb(struct flags_region *f, uint32_t point, uint32_t inflight,
		   uint32_t latency_ns)
{
	(void)f;
	(void)point;
	(void)inflight;
	(void)latency_ns;
}

/* The point's cumulative counts as a snapshot holds them. */
struct prov {
	struct lbpub_point p;	/* lbpub's state */
	struct point_stats st;	/* the cumulative counts */
	uint64_t now;		/* the tick's clock */
};

/* One tick in which @calls calls of @lat_ns each completed. */
static uint64_t tick(struct prov *v, uint64_t calls, uint64_t lat_ns)
{
	v->now += TICK;
	v->st.completed += calls;
	v->st.total.latency_sum += calls * lat_ns;
	return lbpub_mean(&v->p, &v->st, v->now);
}

static void test_is_provider(void **state)
{
	(void)state;
	assert_true(lbpub_is_provider("pay@p0"));
	assert_false(lbpub_is_provider("pay"));
}

static void test_steady_and_step(void **state)
{
	struct prov v;
	int i;

	(void)state;
	memset(&v, 0, sizeof(v));
	v.now = 1000 * TICK;
	assert_int_equal(tick(&v, 0, 0), 0);		/* nothing measured yet */
	for (i = 0; i < 30; i++)
		assert_int_equal(tick(&v, 100, MS), MS);
	/* 10x slower: the first tick with 16 calls or more shows it whole. */
	assert_int_equal(tick(&v, 100, 10 * MS), 10 * MS);
	/* 8 slow calls only: the mean reaches back to 16 (8 at 10, 100 at 10). */
	assert_int_equal(tick(&v, 8, 10 * MS), 10 * MS);
	/* Fast again. */
	assert_int_equal(tick(&v, 100, MS), MS);
	/* 4 slow, then the mean is over the last 104 calls (2 ticks). */
	assert_int_equal(tick(&v, 4, 27 * MS), (100 * MS + 4 * 27 * MS) / 104);
}

static void test_quiet(void **state)
{
	struct prov v;
	int i;

	(void)state;
	memset(&v, 0, sizeof(v));
	v.now = 1000 * TICK;
	/* One call a tick: the mean reaches back 16 calls (1.6 s < 2 s). */
	for (i = 0; i < 20; i++)
		tick(&v, 1, 2 * MS);
	for (i = 0; i < 8; i++)
		tick(&v, 1, 4 * MS);
	assert_int_equal(tick(&v, 1, 4 * MS), (9 * 4 * MS + 7 * 2 * MS) / 16);
	/*
	 * No call any more: the mean is over the calls of the last 2 s, so
	 * it narrows to the newest call as the older ones leave the span,
	 * and stands once none is left ...
	 */
	assert_int_equal(tick(&v, 0, 0), (9 * 4 * MS + 7 * 2 * MS) / 16);
	for (i = 2; i < 100; i++) {
		uint64_t m = tick(&v, 0, 0);

		assert_in_range(m, (9 * 4 * MS + 7 * 2 * MS) / 16, 4 * MS);
		if (i >= 20)
			assert_int_equal(m, 4 * MS);
	}
	assert_int_equal(tick(&v, 0, 0), 4 * MS);	/* 10 s after the last call */
	/* ... and then is forgotten (0: unmeasured, tried again). */
	assert_int_equal(tick(&v, 0, 0), 0);
	assert_int_equal(tick(&v, 20, 3 * MS), 3 * MS);
}

static void test_counts_back(void **state)
{
	struct prov v;

	(void)state;
	memset(&v, 0, sizeof(v));
	v.now = 1000 * TICK;
	tick(&v, 100, MS);
	assert_int_equal(tick(&v, 100, MS), MS);
	/* A loader that adopted other counts: start over, no garbage. */
	v.st.completed = 5;
	v.st.total.latency_sum = 5;
	assert_int_equal(tick(&v, 0, 0), MS);
	assert_int_equal(tick(&v, 50, 2 * MS), 2 * MS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_is_provider),
		cmocka_unit_test(test_steady_and_step),
		cmocka_unit_test(test_quiet),
		cmocka_unit_test(test_counts_back),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
