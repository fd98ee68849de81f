// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/decide/drill_stop.c: an admin drill's stop
 * conditions judged every tick over the point's totals (docs/DRILL.md,
 * "Automatic abort"); the counts fed are the test's, the numbers
 * expected computed from them.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdlib.h>
#include <string.h>

#include "decide/drill_stop.h"
#include "kernel/snapshot.h"

#define MS	1000000ULL	/* ns */
#define TICK	(100 * MS)

static struct point_stats st;

static struct drill_stop *one(uint32_t field, double above, int64_t window_ms)
{
	struct sds_hb_stop s = { .field = field, .above = above, .window_ms = window_ms };
	char err[200];
	struct drill_stop *ds = drill_stop__new(&s, 1, TICK, err, sizeof(err));

	assert_non_null(ds);
	memset(&st, 0, sizeof(st));
	st.ok = true;
	st.gauges = true;
	return ds;
}

/* A tick at @t_ms after @v visits, @e exceptions, @d downgrades more. */
static bool tick(struct drill_stop *ds, uint64_t t_ms, uint64_t v, uint64_t e,
		 uint64_t d, char *why, size_t len)
{
	st.total.visits += v;
	st.total.exceptions += e;
	st.total.downgrades += d;
	return drill_stop__judge(ds, &st, 1000 * MS + t_ms * MS, why, len);
}

static void test_window_under_tick_refused(void **state)
{
	struct sds_hb_stop s = { .field = SDS_STOP_DOWNGRADES, .window_ms = 200 };
	char err[200];

	(void)state;
	assert_null(drill_stop__new(&s, 1, 500 * MS, err, sizeof(err)));
	assert_string_equal(err, "stop_when[0].window_s 0.2 is shorter than this loader's tick (500 ms)");
	s.window_ms = 500;
	free(drill_stop__new(&s, 1, 500 * MS, err, sizeof(err)));
}

/* 50 calls a tick, 20 failing: 0.4 over a 2-s window, judged once it is whole. */
static void test_rate_breaks_at_a_whole_window(void **state)
{
	struct drill_stop *ds = one(SDS_STOP_EXCEPTION_RATE, 0.3, 2000);
	char why[200] = "";
	uint64_t t;

	(void)state;
	assert_false(tick(ds, 0, 0, 0, 0, why, sizeof(why)));	/* the drill starts */
	for (t = 100; t < 2000; t += 100)
		assert_false(tick(ds, t, 50, 20, 0, why, sizeof(why)));
	assert_true(tick(ds, 2000, 50, 20, 0, why, sizeof(why)));
	/* 20 ticks of 50 calls, 20 failing each, since the sample 2 s back. */
	assert_string_equal(why, "exception_rate 0.400 above 0.3 over 2 s: 400 of 1000 calls");
	free(ds);
}

static void test_rate_below_never(void **state)
{
	struct drill_stop *ds = one(SDS_STOP_EXCEPTION_RATE, 0.3, 2000);
	char why[200];
	uint64_t t;

	(void)state;
	for (t = 0; t <= 10000; t += 100)	/* 0.3 exactly: not above */
		assert_false(tick(ds, t, 50, 15, 0, why, sizeof(why)));
	free(ds);
}

/* The window slides: a burst of failures 3 s ago no longer counts. */
static void test_rate_window_slides(void **state)
{
	struct drill_stop *ds = one(SDS_STOP_EXCEPTION_RATE, 0.5, 1000);
	char why[200];
	uint64_t t;

	(void)state;
	assert_false(tick(ds, 0, 0, 0, 0, why, sizeof(why)));
	for (t = 100; t <= 500; t += 100)	/* half a window of 100 % */
		assert_false(tick(ds, t, 10, 10, 0, why, sizeof(why)));
	for (t = 600; t <= 5000; t += 100) {
		bool b = tick(ds, t, 10, 0, 0, why, sizeof(why));

		/* t = 1000: 50 of 100 calls, 0.5, not above; after it less. */
		assert_false(b);
	}
	free(ds);
}

static void test_rate_needs_ten_calls(void **state)
{
	struct drill_stop *ds = one(SDS_STOP_EXCEPTION_RATE, 0.3, 1000);
	char why[200];
	uint64_t t;

	(void)state;
	assert_false(tick(ds, 0, 0, 0, 0, why, sizeof(why)));
	for (t = 100; t <= 800; t += 100)	/* 8 calls, all failing */
		assert_false(tick(ds, t, 1, 1, 0, why, sizeof(why)));
	assert_false(tick(ds, 900, 0, 0, 0, why, sizeof(why)));
	assert_false(tick(ds, 1000, 1, 1, 0, why, sizeof(why)));	/* 9 in the window */
	assert_true(tick(ds, 1100, 2, 2, 0, why, sizeof(why)));	/* (100, 1100]: 7 + 1 + 2 */
	assert_string_equal(why, "exception_rate 1.000 above 0.3 over 1 s: 10 of 10 calls");
	free(ds);
}

static void test_downgrades(void **state)
{
	struct drill_stop *ds = one(SDS_STOP_DOWNGRADES, 5, 1000);
	char why[200];
	uint64_t t;

	(void)state;
	assert_false(tick(ds, 0, 0, 0, 0, why, sizeof(why)));
	for (t = 100; t < 1000; t += 100)
		assert_false(tick(ds, t, 3, 0, 1, why, sizeof(why)));
	assert_true(tick(ds, 1000, 3, 0, 1, why, sizeof(why)));
	assert_string_equal(why, "downgrades 10 above 5 over 1 s");
	free(ds);
}

/* Every call in [2^20, 2^21) ns: a p99 between 1.05 and 2.1 ms. */
static void test_p99(void **state)
{
	struct drill_stop *lo = one(SDS_STOP_P99_MS, 0.5, 1000);
	struct drill_stop *hi = one(SDS_STOP_P99_MS, 2.2, 1000);
	char why[200];
	uint64_t t;

	(void)state;
	for (t = 0; t <= 900; t += 100) {
		st.hist[20] += 20;
		assert_false(drill_stop__judge(lo, &st, 1000 * MS + t * MS, why, sizeof(why)));
		assert_false(drill_stop__judge(hi, &st, 1000 * MS + t * MS, why, sizeof(why)));
	}
	st.hist[20] += 20;
	assert_true(drill_stop__judge(lo, &st, 2000 * MS, why, sizeof(why)));
	assert_memory_equal(why, "p99_ms ", 7);
	assert_non_null(strstr(why, " above 0.5 over 1 s: 200 calls"));
	assert_false(drill_stop__judge(hi, &st, 2000 * MS, why, sizeof(why)));
	/* The gauges unread at a tick: nothing judged on them. */
	st.gauges = false;
	st.hist[20] += 20;
	assert_false(drill_stop__judge(lo, &st, 2100 * MS, why, sizeof(why)));
	free(lo);
	free(hi);
}

/* A point not read this tick: no sample, nothing judged. */
static void test_unread(void **state)
{
	struct drill_stop *ds = one(SDS_STOP_DOWNGRADES, 0, 1000);
	char why[200];

	(void)state;
	assert_false(drill_stop__judge(ds, NULL, 1000 * MS, why, sizeof(why)));
	st.ok = false;
	assert_false(drill_stop__judge(ds, &st, 3000 * MS, why, sizeof(why)));
	assert_int_equal(ds->count, 0);
	free(ds);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_under_tick_refused),
		cmocka_unit_test(test_rate_breaks_at_a_whole_window),
		cmocka_unit_test(test_rate_below_never),
		cmocka_unit_test(test_rate_window_slides),
		cmocka_unit_test(test_rate_needs_ten_calls),
		cmocka_unit_test(test_downgrades),
		cmocka_unit_test(test_p99),
		cmocka_unit_test(test_unread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
