// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The retry helper of sds.h's balancing API (sds_lb_call(), libsds/
 * lb.c) against the stand-in loader (fakeloader.c) with counting probe
 * sites (fake_sites.c): it keeps to its retries (other providers only),
 * its budget and its per-attempt timeout, and signs each failure where
 * the loader counts it.  ASan + UBSan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "lb_fixture.h"

struct fn_log {
	int calls;		/* fn called */
	int per[SDS_LB_MAX_MEMBERS];	/* ... per provider */
	int fail_mask;		/* providers whose calls fail (bit i) */
	int slow_mask;		/* providers whose calls take @slow_ms */
	int slow_ms;
};

static int fn_run(int idx, void *arg)
{
	struct fn_log *l = arg;

	l->calls++;
	l->per[idx]++;
	if (l->slow_mask & (1 << idx))
		cfx_sleep_ms(l->slow_ms);
	return (l->fail_mask & (1 << idx)) ? -100 - idx : 1000 + idx;
}

/* Retries: other providers only, at most R, and the result of the one that works. */
static void test_call_retries(void **state)
{
	static const int w[3] = { 1, 1, 1 };
	const struct sds_lb_opts all = { .retry_budget_pct = 100 };
	struct sds_client *c = lb_client();
	struct sds_balancer *b = lb_open(c, "round_robin", w, 3, &all);
	struct cfx_counts before;
	struct fn_log l = { 0 };
	int r, i;

	__u64 exc2 = site_count(SITE_EXCEPTION, id_of(2));

	(void)state;
	/*
	 * Even a 100% budget allows a retry only as the window's calls
	 * allow: 3 calls that work first (p0, p1, p2 in turn), so that
	 * the next call may retry twice.
	 */
	for (i = 0; i < 3; i++)
		assert_int_equal(sds_lb_call(b, NULL, 0, fn_run, &l, 2), 1000 + i);
	memset(&l, 0, sizeof(l));
	/* Round robin of equal weights is back at p0; p0 and p1 fail. */
	l.fail_mask = 0x3;
	before = cfx_counts_now();
	r = sds_lb_call(b, NULL, 0, fn_run, &l, 2);
	assert_int_equal(r, 1002);
	assert_int_equal(l.calls, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(l.per[i], 1);
	/* Three guarded calls, two signed failed. */
	cfx_assert_delta(&before, 3, 3, 2, 0);
	assert_int_equal(site_count(SITE_EXCEPTION, id_of(2)) - exc2, 0);

	/* R = 1: two attempts, then ERANGE with the last failure. */
	memset(&l, 0, sizeof(l));
	l.fail_mask = 0x7;
	errno = 0;
	r = sds_lb_call(b, NULL, 0, fn_run, &l, 1);
	assert_true(r == -100 || r == -101 || r == -102);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(l.calls, 2);
	/* R = 5 over 3 providers: each tried once, then EAGAIN. */
	memset(&l, 0, sizeof(l));
	l.fail_mask = 0x7;
	errno = 0;
	r = sds_lb_call(b, NULL, 0, fn_run, &l, 5);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(l.calls, 3);
	for (i = 0; i < 3; i++)
		assert_int_equal(l.per[i], 1);
	/* R = 0: one attempt. */
	memset(&l, 0, sizeof(l));
	l.fail_mask = 0x7;
	r = sds_lb_call(b, NULL, 0, fn_run, &l, 0);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(l.calls, 1);
	/* Every provider downgraded: fn never runs, -EAGAIN. */
	memset(&l, 0, sizeof(l));
	for (i = 0; i < 3; i++)
		downgrade(i, true);
	before = cfx_counts_now();
	errno = 0;
	assert_int_equal(sds_lb_call(b, NULL, 0, fn_run, &l, 2), -EAGAIN);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(l.calls, 0);
	cfx_assert_delta(&before, 0, 0, 0, 0);
	/* One back: it takes the call, the others are not tried. */
	downgrade(1, false);
	assert_int_equal(sds_lb_call(b, NULL, 0, fn_run, &l, 2), 1001);
	assert_int_equal(l.calls, 1);
	close_all(b, c);
}

/*
 * The budget, exactly: a retry is taken only if the window's retries,
 * this one included, stay within 20% of its calls (this one included).
 * 100 calls that all fail, up to 1 retry each: calls 5, 10, ..., 100
 * retry, 20 in all; the others stop with EDQUOT.
 */
static void test_call_budget(void **state)
{
	static const int w[3] = { 1, 1, 1 };
	struct sds_client *c = lb_client();
	struct sds_balancer *b = lb_open(c, "random", w, 3, NULL);	/* 20%, 10 s */
	struct fn_log l = { .fail_mask = 0x7 };
	int k, before, retries = 0;

	(void)state;
	for (k = 1; k <= 100; k++) {
		before = l.calls;
		errno = 0;
		assert_true(sds_lb_call(b, NULL, 0, fn_run, &l, 1) < 0);
		if (l.calls - before == 2) {
			retries++;
			assert_int_equal(errno, ERANGE);
			if (k % 5)
				fail_msg("call %d retried", k);
		} else {
			assert_int_equal(l.calls - before, 1);
			assert_int_equal(errno, EDQUOT);
		}
	}
	assert_int_equal(retries, 20);
	assert_int_equal(l.calls, 120);
	close_all(b, c);
}

/* An attempt slower than the timeout failed: signed, and the next provider tried. */
static void test_call_timeout(void **state)
{
	static const int w[3] = { 1, 1, 1 };
	const struct sds_lb_opts o = {
		.retry_budget_pct = 100,
		.attempt_timeout_ns = 20 * MS,
	};
	struct sds_client *c = lb_client();
	struct sds_balancer *b = lb_open(c, "round_robin", w, 3, &o);
	struct fn_log l = { .slow_mask = 0x1, .slow_ms = 60 };
	struct cfx_counts before = cfx_counts_now();
	__u64 exc0 = site_count(SITE_EXCEPTION, id_of(0));
	int r;

	(void)state;
	/* p0 first (round robin), 60 ms > 20 ms: failed; p1 answers. */
	r = sds_lb_call(b, NULL, 0, fn_run, &l, 1);
	assert_int_equal(r, 1001);
	assert_int_equal(l.calls, 2);
	assert_int_equal(site_count(SITE_EXCEPTION, id_of(0)) - exc0, 1);
	cfx_assert_delta(&before, 2, 2, 1, 0);
	/* All slow, no retry left: -ETIMEDOUT. */
	memset(&l, 0, sizeof(l));
	l.slow_mask = 0x7;
	l.slow_ms = 30;
	errno = 0;
	assert_int_equal(sds_lb_call(b, NULL, 0, fn_run, &l, 0), -ETIMEDOUT);
	assert_int_equal(errno, ERANGE);
	assert_int_equal(l.calls, 1);
	close_all(b, c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_retries),
		cmocka_unit_test(test_call_budget),
		cmocka_unit_test(test_call_timeout),
	};

	return cmocka_run_group_tests(tests, cfx_setup, cfx_teardown);
}
