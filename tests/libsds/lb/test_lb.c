// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The balancing API of sds.h (libsds/lb.c) against the stand-in loader
 * (fakeloader.c), which writes each provider's flag entry as the real
 * loader does (lb_inflight, lb_latency_ns, downgrades), with counting
 * probe sites (fake_sites.c): picks skip downgraded providers and follow
 * the published load; bad input is refused with errno and a message.
 * The retry helper: test_lb_call.c; the policies themselves:
 * test_balance.c.  ASan + UBSan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lb_fixture.h"

/* ---- bad input ----------------------------------------------------------- */

static void expect_bad(struct sds_client *c, const char *dep, const char *policy,
		       const struct sds_lb_member *m, size_t n,
		       const struct sds_lb_opts *o, int err, const char *msg)
{
	errno = 0;
	assert_null(sds_lb_open(c, dep, policy, m, n, o));
	assert_int_equal(errno, err);
	assert_string_equal(sds_lb_error(), msg);
}

static int never_fn(int idx, void *arg)
{
	(void)idx;
	(void)arg;
	fail_msg("fn called");
	return 0;
}

static void test_bad_input(void **state)
{
	static struct sds_lb_member many[SDS_LB_MAX_MEMBERS + 1];
	static char names[SDS_LB_MAX_MEMBERS + 1][16];
	struct sds_lb_member m[3] = { { "p0", 1, 0 }, { "p1", 1, 0 }, { "p2", 1, 0 } };
	struct sds_client *c = sds_client_open("g", "nobody");	/* detached */
	struct sds_lb_opts o = { 0 };
	char longname[80];
	int i;

	(void)state;
	assert_non_null(c);
	expect_bad(NULL, "pay", NULL, m, 3, NULL, EINVAL, "no client");
	expect_bad(c, NULL, NULL, m, 3, NULL, EINVAL, "no dependency name");
	expect_bad(c, "pay.x", NULL, m, 3, NULL, EINVAL,
		   "dependency \"pay.x\": bad name (1-64 of [A-Za-z0-9_-])");
	expect_bad(c, "pay", NULL, m, 0, NULL, EINVAL, "no provider to balance over");
	expect_bad(c, "pay", NULL, NULL, 3, NULL, EINVAL, "no provider to balance over");
	expect_bad(c, "pay", "roundrobin", m, 3, NULL, EINVAL,
		   "unknown balancer \"roundrobin\" (known: random, round_robin, "
		   "least_active, shortest_response, consistent_hash)");
	m[1].weight = 0;
	expect_bad(c, "pay", NULL, m, 3, NULL, EINVAL,
		   "provider 1 (p1): weight 0: weights are 1..10000");
	m[1].weight = -5;
	expect_bad(c, "pay", NULL, m, 3, NULL, EINVAL,
		   "provider 1 (p1): weight -5: weights are 1..10000");
	m[1].weight = 1;
	m[2].name = "p@2";
	expect_bad(c, "pay", NULL, m, 3, NULL, EINVAL,
		   "provider 2 (p@2): bad name (1-64 of [A-Za-z0-9_-])");
	m[2].name = NULL;
	expect_bad(c, "pay", NULL, m, 3, NULL, EINVAL, "provider 2: no name");
	memset(longname, 'x', 61);
	longname[61] = '\0';
	m[2].name = longname;
	expect_bad(c, "pay", NULL, m, 3, NULL, EINVAL,
		   "provider 2 (xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx): "
		   "the point \"pay@xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\" "
		   "is longer than 64 characters");
	m[2].name = "p0";
	expect_bad(c, "pay", NULL, m, 3, NULL, EINVAL, "providers 0 and 2: both named p0");
	m[2].name = "p2";
	o.retry_budget_pct = 101;
	expect_bad(c, "pay", NULL, m, 3, &o, EINVAL, "a retry budget of 101%: 1..100");
	o.retry_budget_pct = 0;
	o.retry_window_ns = 999999999ULL;
	expect_bad(c, "pay", NULL, m, 3, &o, EINVAL,
		   "a retry window of 999999999 ns: 1 s .. 1 h");
	o.retry_window_ns = 0;
	o.warmup_ns = 86400 * NS + 1;
	expect_bad(c, "pay", NULL, m, 3, &o, EINVAL,
		   "a warm-up of 86400000000001 ns: at most a day (86400000000000 ns)");
	for (i = 0; i <= SDS_LB_MAX_MEMBERS; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		many[i] = (struct sds_lb_member){ names[i], 1, 0 };
	}
	expect_bad(c, "pay", NULL, many, SDS_LB_MAX_MEMBERS + 1, NULL, E2BIG,
		   "257 providers: at most 256 (SDS_LB_MAX_MEMBERS)");
	/* The maximum itself is fine; a good open clears the message. */
	sds_lb_close(sds_lb_open(c, "pay", "consistent_hash", many,
				 SDS_LB_MAX_MEMBERS, NULL));
	assert_string_equal(sds_lb_error(), "");
	/* NULL balancers. */
	errno = 0;
	assert_int_equal(sds_lb_choose(NULL, NULL, 0), -1);
	assert_int_equal(errno, EINVAL);
	assert_null(sds_lb_point(NULL, 0));
	errno = 0;
	assert_int_equal(sds_lb_call(NULL, NULL, 0, never_fn, NULL, 1), -EINVAL);
	assert_int_equal(errno, EINVAL);
	{
		struct sds_balancer *b = sds_lb_open(c, "pay", NULL, m, 3, NULL);

		assert_non_null(b);
		errno = 0;
		assert_int_equal(sds_lb_call(b, NULL, 0, NULL, NULL, 1), -EINVAL);
		assert_int_equal(errno, EINVAL);
		sds_lb_close(b);
	}
	sds_lb_close(NULL);
	sds_client_close(c);
}

/* ---- picks on the published load ------------------------------------------ */

/* Each provider is its own point, registered at open. */
static void test_points(void **state)
{
	static const int w[3] = { 1, 1, 1 };
	struct sds_client *c = lb_client();
	struct sds_balancer *b = lb_open(c, NULL, w, 3, NULL);
	int i;

	(void)state;
	for (i = 0; i < 3; i++) {
		assert_int_equal(id_of(i), i);
		assert_true(cfx_bound(sds_lb_point(b, i)));
		/* The same point sds_point() gives. */
		assert_ptr_equal(sds_lb_point(b, i),
				 sds_point(c, i == 0 ? "pay@p0" : i == 1 ? "pay@p1" : "pay@p2"));
	}
	assert_null(sds_lb_point(b, 3));
	assert_null(sds_lb_point(b, -1));
	close_all(b, c);
}

static void test_skip_downgraded(void **state)
{
	static const char *const pols[] = { "random", "round_robin", "least_active",
					    "shortest_response", "consistent_hash" };
	static const int w[3] = { 1, 100, 1 };
	struct sds_client *c = lb_client();
	long got[3];
	unsigned int k;
	int i, r;

	(void)state;
	sds_lb_seed(SEED);
	for (k = 0; k < sizeof(pols) / sizeof(pols[0]); k++) {
		struct sds_balancer *b = lb_open(c, pols[k], w, 3, NULL);

		/* p1 would win everything: heaviest, idle, fastest. */
		publish(0, 9, 9000);
		publish(1, 0, 10);
		publish(2, 9, 9000);
		downgrade(1, true);
		memset(got, 0, sizeof(got));
		for (i = 0; i < 3000; i++) {
			uint64_t key = (uint64_t)i;

			r = sds_lb_choose(b, &key, sizeof(key));
			assert_in_range(r, 0, 2);
			got[r]++;
		}
		assert_int_equal(got[1], 0);
		assert_true(got[0] + got[2] == 3000);
		/* All downgraded: the caller is told, its fallback runs. */
		downgrade(0, true);
		downgrade(2, true);
		errno = 0;
		assert_int_equal(sds_lb_choose(b, NULL, 0), -1);
		assert_int_equal(errno, EAGAIN);
		/*
		 * A downgrade past its expiry holds no more (a pick's clock is
		 * CLOCK_MONOTONIC_COARSE: a jiffy behind at most).
		 */
		fake_set(entry(1), SDS_ACT_DOWNGRADE, 100, fake_now() - 20 * MS, 0, 0);
		assert_int_equal(sds_lb_choose(b, NULL, 0), 1);
		downgrade(0, false);
		downgrade(1, false);
		downgrade(2, false);
		sds_lb_close(b);
	}
	sds_client_close(c);
	fake_stop(&fl);
}

/* A dead loader's downgrades and load count for nothing (fail-open). */
static void test_stale_loader(void **state)
{
	static const int w[2] = { 1, 1 };
	struct sds_client *c = lb_client();
	struct sds_balancer *b = lb_open(c, "least_active", w, 2, NULL);
	struct sds_flags_header *h = fl.region;
	int i;

	(void)state;
	publish(0, 0, 0);
	publish(1, 50, 0);
	downgrade(0, true);
	for (i = 0; i < 100; i++)
		assert_int_equal(sds_lb_choose(b, NULL, 0), 1);
	__atomic_store_n(&fl.ticking, false, __ATOMIC_RELAXED);
	cfx_sleep_ms(100);	/* a tick in progress is written by now */
	__atomic_store_n(&h->tick_ns, fake_now() - 3 * NS, __ATOMIC_RELEASE);
	/* Both idle and passing now: the tie is drawn, so both come. */
	{
		long got[2] = { 0, 0 };

		for (i = 0; i < 1000; i++)
			got[sds_lb_choose(b, NULL, 0)]++;
		assert_true(got[0] > 0 && got[1] > 0);
	}
	__atomic_store_n(&fl.ticking, true, __ATOMIC_RELAXED);
	close_all(b, c);
}

static void test_least_active(void **state)
{
	static const int w3[3] = { 1, 1, 1 }, wt[3] = { 1, 3, 1 };
	struct sds_client *c = lb_client();
	struct sds_balancer *b = lb_open(c, "least_active", w3, 3, NULL);
	const long N = 100000;
	long got[3] = { 0, 0, 0 };
	double sd;
	int i;

	(void)state;
	sds_lb_seed(SEED);
	publish(0, 0, 0);
	publish(1, 2, 0);
	publish(2, 5, 0);
	for (i = 0; i < 1000; i++)
		assert_int_equal(sds_lb_choose(b, NULL, 0), 0);
	sds_lb_close(b);

	/* Ties split by weight: 1:3 between the two idle ones, never the busy. */
	b = lb_open(c, "least_active", wt, 3, NULL);
	publish(0, 1, 0);
	publish(1, 1, 0);
	publish(2, 5, 0);
	for (i = 0; i < N; i++)
		got[sds_lb_choose(b, NULL, 0)]++;
	assert_int_equal(got[2], 0);
	/* binomial(N, 1/4): 6 sd is a false failure of 2e-9. */
	sd = sqrt(N * 0.25 * 0.75);
	if (fabs(got[0] - N * 0.25) > 6 * sd)
		fail_msg("tied 1:3: %ld of %ld picks for weight 1", got[0], N);
	close_all(b, c);
}

static void test_shortest_response(void **state)
{
	static const int w[3] = { 1, 1, 1 };
	struct sds_client *c = lb_client();
	struct sds_balancer *b = lb_open(c, "shortest_response", w, 3, NULL);
	long got[3] = { 0, 0, 0 };
	int i;

	(void)state;
	sds_lb_seed(SEED);
	/* p2 measured 10x slower: never picked while the others are idle. */
	publish(0, 0, 1000000);
	publish(1, 0, 1000000);
	publish(2, 0, 10000000);
	for (i = 0; i < 10000; i++)
		got[sds_lb_choose(b, NULL, 0)]++;
	assert_int_equal(got[2], 0);
	assert_true(got[0] > 0 && got[1] > 0);
	/*
	 * Latencies are compared to 4 significant bits: 1.00 and 1.04 ms
	 * are the same (983,040 ns) and tie, drawn by weight.
	 */
	publish(1, 0, 1040000);
	memset(got, 0, sizeof(got));
	for (i = 0; i < 10000; i++)
		got[sds_lb_choose(b, NULL, 0)]++;
	assert_int_equal(got[2], 0);
	assert_true(got[0] > 4000 && got[1] > 4000);
	publish(1, 0, 1100000);		/* 1,048,576: slower */
	for (i = 0; i < 100; i++)
		assert_int_equal(sds_lb_choose(b, NULL, 0), 0);
	/* Expected wait latency x (in flight + 1): 1 ms x 12 > 10 ms x 1. */
	publish(0, 11, 1000000);
	publish(1, 11, 1000000);
	for (i = 0; i < 100; i++)
		assert_int_equal(sds_lb_choose(b, NULL, 0), 2);
	close_all(b, c);
}

/* No loader: every provider idle, unmeasured, passing; picks still work. */
static void test_unbound(void **state)
{
	static const int w[3] = { 1, 3, 6 };
	struct sds_client *c = sds_client_open("g", "noloader");
	struct sds_balancer *b;
	long got[3] = { 0, 0, 0 };
	int i;

	(void)state;
	assert_non_null(c);
	b = lb_open(c, "least_active", w, 3, NULL);
	assert_false(cfx_bound(sds_lb_point(b, 0)));
	sds_lb_seed(SEED);
	for (i = 0; i < 10000; i++)
		got[sds_lb_choose(b, NULL, 0)]++;
	/* All tied at 0 in flight: drawn by weight 1:3:6. */
	assert_true(got[0] > 700 && got[0] < 1300);
	assert_true(got[2] > 5500 && got[2] < 6500);
	sds_lb_close(b);
	sds_client_close(c);
}

/*
 * This process's calls through sds_lb_call() count at once, before any
 * tick: inside a call on provider i, least_active never picks i while
 * the others are idle (the tick said 0 for all).
 */
struct nested {
	struct sds_balancer *b;		/* the balancer */
	int bad;			/* inner picks of the provider in flight */
};

static int nested_fn(int idx, void *arg)
{
	struct nested *n = arg;
	int i;

	for (i = 0; i < 1000; i++)
		n->bad += sds_lb_choose(n->b, NULL, 0) == idx;
	return 0;
}

static void test_local_inflight(void **state)
{
	static const int w[3] = { 1, 1, 1 };
	struct sds_client *c = lb_client();
	struct nested n = { lb_open(c, "least_active", w, 3, NULL), 0 };
	int k;

	(void)state;
	for (k = 0; k < 3; k++)
		publish(k, 0, 0);
	for (k = 0; k < 30; k++)
		assert_int_equal(sds_lb_call(n.b, NULL, 0, nested_fn, &n, 0), 0);
	assert_int_equal(n.bad, 0);
	/* The tick's count wins when it is the larger. */
	publish(1, 3, 0);
	publish(2, 3, 0);
	for (k = 0; k < 100; k++)
		assert_int_equal(sds_lb_choose(n.b, NULL, 0), 0);
	close_all(n.b, c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_points),
		cmocka_unit_test(test_skip_downgraded),
		cmocka_unit_test(test_stale_loader),
		cmocka_unit_test(test_least_active),
		cmocka_unit_test(test_shortest_response),
		cmocka_unit_test(test_unbound),
		cmocka_unit_test(test_local_inflight),
	};

	return cmocka_run_group_tests(tests, cfx_setup, cfx_teardown);
}
