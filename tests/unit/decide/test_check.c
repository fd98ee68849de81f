// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/decide/chain.c's chain_check(): which window strategy
 * trips, and in what order (docs/DESIGN.md §4); the slow-call ratio (issue 14,
 * "Slow ratio") last.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "chain_fixture.h"

/* ---- chain_check ---------------------------------------------------------- */

static void test_check_nothing(void **state)
{
	struct sds_strategy st = strat();

	assert_int_equal(check(NULL, 0, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(NULL, 1000000, 1000000, 1000000, 0), SDS_REASON_NONE);
	/* Everything off: nothing trips whatever the window holds. */
	assert_int_equal(check(&st, 0, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 1000000, 1000000, 1000000, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 1000000, 1000000, 1000000, 2000000), SDS_REASON_NONE);
}

static void test_check_kill_switch(void **state)
{
	struct sds_strategy st = strat();

	st.visit_threshold = 0;
	/* In force before any call. */
	assert_int_equal(check(&st, 0, 0, 0, 0), SDS_REASON_VISIT);
	assert_int_equal(check(&st, 1, 0, 0, 0), SDS_REASON_VISIT);
	/* Every call downgraded: still tripped. */
	assert_int_equal(check(&st, 50, 0, 0, 50), SDS_REASON_VISIT);
}

static void test_check_visit(void **state)
{
	struct sds_strategy st = strat();

	st.visit_threshold = 10;
	assert_int_equal(check(&st, 0, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 9, 0, 0, 0), SDS_REASON_NONE);
	/* visits - downgrades > threshold: N does not trip, N + 1 does. */
	assert_int_equal(check(&st, 10, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 11, 0, 0, 0), SDS_REASON_VISIT);
	assert_int_equal(check(&st, 12, 0, 0, 0), SDS_REASON_VISIT);
	/* Downgraded calls do not count. */
	assert_int_equal(check(&st, 15, 0, 0, 5), SDS_REASON_NONE);
	assert_int_equal(check(&st, 16, 0, 0, 5), SDS_REASON_VISIT);
	assert_int_equal(check(&st, 1000, 0, 0, 990), SDS_REASON_NONE);
	assert_int_equal(check(&st, 1000, 0, 0, 989), SDS_REASON_VISIT);
	/* More downgrades than visits (a reset in between): nothing passed. */
	assert_int_equal(check(&st, 5, 0, 0, 9), SDS_REASON_NONE);

	st.visit_threshold = 1;
	assert_int_equal(check(&st, 1, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 2, 0, 0, 0), SDS_REASON_VISIT);
}

static void test_check_timeout(void **state)
{
	struct sds_strategy st = strat();

	st.timeout_ms = 200;
	st.timeout_count_threshold = 3;
	assert_int_equal(check(&st, 100, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 100, 0, 2, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 100, 0, 3, 0), SDS_REASON_TIMEOUT);
	assert_int_equal(check(&st, 100, 0, 4, 0), SDS_REASON_TIMEOUT);
	/* Counted over the timeouts, whatever the visits. */
	assert_int_equal(check(&st, 0, 0, 3, 0), SDS_REASON_TIMEOUT);

	st.timeout_count_threshold = 1;
	assert_int_equal(check(&st, 10, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 10, 0, 1, 0), SDS_REASON_TIMEOUT);

	/* Not without timeout_ms. */
	st.timeout_ms = SDS_OFF;
	assert_int_equal(check(&st, 100, 0, 1000, 0), SDS_REASON_NONE);
	/* Nor without a count threshold. */
	st.timeout_ms = 200;
	st.timeout_count_threshold = SDS_OFF;
	assert_int_equal(check(&st, 100, 0, 1000, 0), SDS_REASON_NONE);
}

static void test_check_exception(void **state)
{
	struct sds_strategy st = strat();

	st.exception_threshold = 5;
	assert_int_equal(check(&st, 100, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 100, 4, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 100, 5, 0, 0), SDS_REASON_EXCEPTION);
	assert_int_equal(check(&st, 100, 6, 0, 0), SDS_REASON_EXCEPTION);

	st.exception_threshold = 1;
	assert_int_equal(check(&st, 1, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 1, 1, 0, 0), SDS_REASON_EXCEPTION);
}

static void test_check_exception_rate(void **state)
{
	struct sds_strategy st = strat();

	st.exception_rate_threshold = 40;
	st.exception_rate_start = 20;
	/* visits > start, not >=. */
	assert_int_equal(check(&st, 20, 20, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 21, 21, 0, 0), SDS_REASON_EXCEPTION_RATE);
	/* 9 * 100 / 21 = 42 trips; 8 * 100 / 21 = 38 does not. */
	assert_int_equal(check(&st, 21, 9, 0, 0), SDS_REASON_EXCEPTION_RATE);
	assert_int_equal(check(&st, 21, 8, 0, 0), SDS_REASON_NONE);
	/* Exactly the threshold trips (10 * 100 / 25 = 40). */
	assert_int_equal(check(&st, 25, 10, 0, 0), SDS_REASON_EXCEPTION_RATE);
	/* Just below it, by integer division: 10 * 100 / 26 = 38. */
	assert_int_equal(check(&st, 26, 10, 0, 0), SDS_REASON_NONE);
	/* 399 * 100 / 1000 = 39 (39.9 %): no; 400 / 1000: yes. */
	assert_int_equal(check(&st, 1000, 399, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 1000, 400, 0, 0), SDS_REASON_EXCEPTION_RATE);
	/* 2 * 100 / 5 = 40 but 5 visits is not above the start. */
	assert_int_equal(check(&st, 5, 2, 0, 0), SDS_REASON_NONE);

	/*
	 * The rate is over the passed calls (visits - downgrades), while the
	 * start is over the visits: 30 visits, 5 downgraded, 10 exceptions ->
	 * 1000 / 25 = 40 trips; with nothing downgraded 1000 / 30 = 33 does not.
	 */
	assert_int_equal(check(&st, 30, 10, 0, 5), SDS_REASON_EXCEPTION_RATE);
	assert_int_equal(check(&st, 30, 10, 0, 0), SDS_REASON_NONE);
	/* 21 visits above the start, 20 of them downgraded: 1 passed, 1 failed. */
	assert_int_equal(check(&st, 21, 1, 0, 20), SDS_REASON_EXCEPTION_RATE);
	/* Nothing passed: no rate at all (and no division by zero). */
	assert_int_equal(check(&st, 30, 5, 0, 30), SDS_REASON_NONE);
	assert_int_equal(check(&st, 30, 5, 0, 31), SDS_REASON_NONE);

	/* No start: any visit counts. */
	st.exception_rate_start = SDS_OFF;
	assert_int_equal(check(&st, 0, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 1, 1, 0, 0), SDS_REASON_EXCEPTION_RATE);
	assert_int_equal(check(&st, 3, 1, 0, 0), SDS_REASON_NONE);	/* 33 */
	assert_int_equal(check(&st, 5, 2, 0, 0), SDS_REASON_EXCEPTION_RATE);	/* 40 */
	st.exception_rate_start = 0;
	assert_int_equal(check(&st, 1, 1, 0, 0), SDS_REASON_EXCEPTION_RATE);
	assert_int_equal(check(&st, 0, 0, 0, 0), SDS_REASON_NONE);

	/* 100: every passed call failed. */
	st.exception_rate_threshold = 100;
	assert_int_equal(check(&st, 50, 50, 0, 0), SDS_REASON_EXCEPTION_RATE);
	assert_int_equal(check(&st, 50, 49, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 50, 45, 0, 5), SDS_REASON_EXCEPTION_RATE);

	/* 0: trips on any passed call once above the start. */
	st.exception_rate_threshold = 0;
	st.exception_rate_start = 3;
	assert_int_equal(check(&st, 3, 0, 0, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 4, 0, 0, 0), SDS_REASON_EXCEPTION_RATE);
	assert_int_equal(check(&st, 4, 0, 0, 4), SDS_REASON_NONE);

	/* Off: never. */
	st.exception_rate_threshold = SDS_OFF;
	assert_int_equal(check(&st, 100, 100, 0, 0), SDS_REASON_NONE);
}

static void test_check_order(void **state)
{
	struct sds_strategy st = strat();

	st.visit_threshold = 10;
	st.timeout_ms = 100;
	st.timeout_count_threshold = 2;
	st.exception_threshold = 3;
	st.exception_rate_threshold = 50;
	st.exception_rate_start = 5;

	/* All four trip: the first in the order of §4 gives the reason. */
	assert_int_equal(check(&st, 20, 20, 20, 0), SDS_REASON_VISIT);
	/* Visits under the limit: timeouts next. */
	assert_int_equal(check(&st, 10, 10, 2, 0), SDS_REASON_TIMEOUT);
	/* Then exceptions. */
	assert_int_equal(check(&st, 10, 10, 1, 0), SDS_REASON_EXCEPTION);
	/* Then the rate: 2 of 6 passed is 33 %, not; 2 of 4 is 50 %. */
	assert_int_equal(check(&st, 6, 2, 1, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 6, 2, 1, 2), SDS_REASON_EXCEPTION_RATE);
	/* The kill switch comes before everything. */
	st.visit_threshold = 0;
	assert_int_equal(check(&st, 6, 2, 1, 2), SDS_REASON_VISIT);
	assert_int_equal(check(&st, 0, 10, 10, 0), SDS_REASON_VISIT);
	/* Timeouts before exceptions when the visits are off. */
	st.visit_threshold = SDS_OFF;
	assert_int_equal(check(&st, 1000, 1000, 1000, 0), SDS_REASON_TIMEOUT);
}

/* ---- the slow-call ratio -------------------------------------------------- */

static void test_slow_rate(void **state)
{
	struct sds_strategy st = strat();

	st.timeout_ms = 20;
	st.slow_rate_threshold = 40;
	st.slow_rate_start = 20;
	/* 40 % of 30 visits, above the start: trips. */
	assert_int_equal(check(&st, 30, 0, 12, 0), SDS_REASON_SLOW_RATE);
	assert_int_equal(check(&st, 30, 0, 11, 0), SDS_REASON_NONE);
	/* Not above the start: even all slow does not trip. */
	assert_int_equal(check(&st, 20, 0, 20, 0), SDS_REASON_NONE);
	assert_int_equal(check(&st, 21, 0, 9, 0), SDS_REASON_SLOW_RATE);
	/* Of the passed calls: 10 slow of 25 passed (5 downgraded). */
	assert_int_equal(check(&st, 30, 0, 10, 5), SDS_REASON_SLOW_RATE);
	/* Nothing passed: no rate. */
	assert_int_equal(check(&st, 30, 0, 0, 30), SDS_REASON_NONE);
	/* 0 or no timeout_ms: off. */
	st.slow_rate_threshold = 0;
	assert_int_equal(check(&st, 30, 0, 30, 0), SDS_REASON_NONE);
	st.slow_rate_threshold = SDS_OFF;
	assert_int_equal(check(&st, 30, 0, 30, 0), SDS_REASON_NONE);
	st.slow_rate_threshold = 40;
	st.timeout_ms = SDS_OFF;
	assert_int_equal(check(&st, 30, 0, 30, 0), SDS_REASON_NONE);
	/* No start: any visit counts. */
	st.timeout_ms = 20;
	st.slow_rate_start = SDS_OFF;
	assert_int_equal(check(&st, 1, 0, 1, 0), SDS_REASON_SLOW_RATE);
}

static void test_slow_rate_last(void **state)
{
	struct sds_strategy st = strat();

	st.timeout_ms = 20;
	st.slow_rate_threshold = 10;
	st.exception_rate_threshold = 50;
	st.timeout_count_threshold = 100;
	/* Both rates trip: the exception rate comes first. */
	assert_int_equal(check(&st, 10, 5, 5, 0), SDS_REASON_EXCEPTION_RATE);
	assert_int_equal(check(&st, 10, 4, 5, 0), SDS_REASON_SLOW_RATE);
	/* The timeout count comes before both. */
	assert_int_equal(check(&st, 200, 200, 150, 0), SDS_REASON_TIMEOUT);
	assert_string_equal(chain_reason_name(SDS_REASON_SLOW_RATE), "slow_rate");
	assert_int_equal(SDS_REASON_SLOW_RATE, 9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_nothing),
		cmocka_unit_test(test_check_kill_switch),
		cmocka_unit_test(test_check_visit),
		cmocka_unit_test(test_check_timeout),
		cmocka_unit_test(test_check_exception),
		cmocka_unit_test(test_check_exception_rate),
		cmocka_unit_test(test_check_order),
		cmocka_unit_test(test_slow_rate),
		cmocka_unit_test(test_slow_rate_last),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
