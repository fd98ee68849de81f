// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/decide/enforce.c: the fields a function point
 * cannot enforce are refused with one line naming what can; a guard
 * point takes them all.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "decide/enforce.h"

static void expect_refused(struct sds_strategy *st, const char *field,
			   bool failfast_keeps)
{
	char err[256], want[256];

	if (failfast_keeps)
		snprintf(want, sizeof(want),
			 "point 'fn': %s needs a guard point (sds_enter/sds_should_downgrade) or :failfast= on this function point (docs/FAILFAST.md): a function point cannot hold its calls back",
			 field);
	else
		snprintf(want, sizeof(want),
			 "point 'fn': %s needs a guard point (sds_enter/sds_should_downgrade): a function point cannot hold its calls back",
			 field);
	strcpy(err, "untouched");
	assert_int_equal(enforce__strategy(st, true, false, err, sizeof(err)), -1);
	assert_string_equal(err, want);
	/* With :failfast= the semaphore and the bucket are kept at entry. */
	strcpy(err, "untouched");
	assert_int_equal(enforce__strategy(st, true, true, err, sizeof(err)),
			 failfast_keeps ? 0 : -1);
	if (failfast_keeps)
		assert_string_equal(err, "untouched");
	else
		assert_string_equal(err, want);
	/* A guard point enforces it. */
	strcpy(err, "untouched");
	assert_int_equal(enforce__strategy(st, false, false, err, sizeof(err)), 0);
	assert_string_equal(err, "untouched");
}

static void test_function_point_refuses_what_holds_calls(void **state)
{
	struct sds_strategy st;

	strategy_init(&st, "fn");
	st.concurrent_threshold = 4;
	expect_refused(&st, "concurrent_threshold", true);
	strategy_init(&st, "fn");
	st.token_rate = 10;
	st.token_bucket = 10;
	expect_refused(&st, "token_rate", true);
	strategy_init(&st, "fn");
	st.cluster_token_rate = 10;
	st.cluster_token_bucket = 10;
	expect_refused(&st, "cluster_token_rate", false);
	strategy_init(&st, "fn");
	st.adaptive_limit = SDS_ADAPTIVE_AIMD;
	st.adaptive_min = 1;
	st.adaptive_max = 8;
	expect_refused(&st, "adaptive_limit", false);
	/* Beside a limit :failfast= keeps, the cluster's bucket is still refused. */
	strategy_init(&st, "fn");
	st.token_rate = 10;
	st.token_bucket = 10;
	st.cluster_token_rate = 10;
	st.cluster_token_bucket = 10;
	{
		char err[256];

		assert_int_equal(enforce__strategy(&st, true, true, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "cluster_token_rate needs a guard point"));
	}
}

static void test_function_point_takes_what_it_counts(void **state)
{
	struct sds_strategy st;
	char err[64] = "untouched";

	strategy_init(&st, "fn");
	st.visit_threshold = 10;
	st.timeout_ms = 5;
	st.timeout_count_threshold = 3;
	st.exception_threshold = 2;
	st.exception_rate_threshold = 50;
	st.cluster_visit_threshold = 100;
	st.delay_ms = 1000;
	assert_int_equal(enforce__strategy(&st, true, false, err, sizeof(err)), 0);
	assert_int_equal(enforce__strategy(NULL, true, false, err, sizeof(err)), 0);
	assert_string_equal(err, "untouched");
}

/*
 * Key limits block a key's calls: a guard point refuses them, a function
 * point only with :key= and :failfast= (fails them fast).
 */
static void test_key_limits_need_key_and_failfast(void **state)
{
	static const char *const fields[] = {
		"key_visit_threshold", "key_token_rate", "key_overrides",
	};
	struct sds_strategy st;
	char err[256], want[256];
	int i;

	for (i = 0; i < 3; i++) {
		strategy_init(&st, "fn");
		if (i == 0)
			st.key_visit_threshold = 10;
		else if (i == 1)
			st.key_token_rate = st.key_token_bucket = 10;
		else
			st.key_ov_n = 1;
		snprintf(want, sizeof(want),
			 "point 'fn': %s needs a keyed point (:key=argN, strN or bufN,lenM; docs/KEYS.md): this one has no key",
			 fields[i]);
		assert_int_equal(enforce__key_limits(&st, true, false, true, err,
						     sizeof(err)), -1);
		assert_string_equal(err, want);
		snprintf(want, sizeof(want),
			 "point 'fn': %s needs :failfast= on this point, or a guard point with sds_should_downgrade_key (docs/KEYS.md)",
			 fields[i]);
		assert_int_equal(enforce__key_limits(&st, true, true, false, err,
						     sizeof(err)), -1);
		assert_string_equal(err, want);
		strcpy(err, "untouched");
		assert_int_equal(enforce__key_limits(&st, true, true, true, err,
						     sizeof(err)), 0);
		/* A guard point enforces them, keyed by what it passes. */
		assert_int_equal(enforce__key_limits(&st, false, false, false, err,
						     sizeof(err)), 0);
		assert_string_equal(err, "untouched");
	}
	/* No key limits: nothing to refuse. */
	strategy_init(&st, "fn");
	assert_int_equal(enforce__key_limits(&st, true, false, false, err,
					     sizeof(err)), 0);
	assert_int_equal(enforce__key_limits(NULL, true, false, false, err,
					     sizeof(err)), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_function_point_refuses_what_holds_calls),
		cmocka_unit_test(test_function_point_takes_what_it_counts),
		cmocka_unit_test(test_key_limits_need_key_and_failfast),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
