// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of libsds/balance.c: each policy against its definition
 * (docs/BALANCE.md), exactly where it is
 * deterministic, within a stated bound where it draws.  The random state
 * is seeded, so every run draws the same numbers: a bound's false-failure
 * rate is what another seed would risk.  The consistent hash and its
 * ring: test_balance_hash.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "balance_fixture.h"

/* ---- weighted random --------------------------------------------------- */

static void random_136(const struct sds_lb_load *load)
{
	static const int w[] = { 1, 3, 6 };
	static const double p[] = { 0.1, 0.3, 0.6 };
	struct sds_lb *lb = lb_new(NULL, w, 3);
	long c[3] = { 0 };
	double x;
	int i, k;

	sds_lb_seed(SEED);
	for (i = 0; i < 100000; i++) {
		k = sds_lb_pick(lb, load, NOW, NULL, 0);
		assert_in_range(k, 0, 2);
		c[k]++;
	}
	x = chi2(c, p, 3, 100000);
	print_message("  1:3:6 over 100000: %ld %ld %ld, chi2 %.3f (bound %.3f)\n",
		      c[0], c[1], c[2], x, CHI2_2DOF_1E6);
	assert_true(x < CHI2_2DOF_1E6);
	sds_lb_free(lb);
}

static void test_random_chi2(void **state)
{
	struct sds_lb_load load[3] = { { 0 } };

	random_136(NULL);	/* no load: the weights as set up */
	random_136(load);	/* idle, warm, none downgraded */
}

/* ---- smooth weighted round robin -------------------------------------- */

static void test_rr_5_1_1(void **state)
{
	static const int w[] = { 5, 1, 1 };
	static const char seq[] = "aabacaa";
	struct sds_lb_load load[3] = { { 0 } };
	struct sds_lb *lb = lb_new("round_robin", w, 3);
	int i;

	for (i = 0; i < 7 * 3; i++)
		assert_int_equal(sds_lb_pick(lb, (i & 1) ? load : NULL, NOW, NULL, 0),
				 seq[i % 7] - 'a');
	sds_lb_free(lb);
}

static void test_rr_10_20_50(void **state)
{
	static const int w[] = { 10, 20, 50 };
	/* The essay's steps: current weights after the additions, the pick, after it. */
	static const struct { int64_t add[3]; int pick; int64_t sub[3]; } step[] = {
		{ { 10, 20, 50 }, 2, { 10, 20, -30 } },
		{ { 20, 40, 20 }, 1, { 20, -40, 20 } },
		{ { 30, -20, 70 }, 2, { 30, -20, -10 } },
		{ { 40, 0, 40 }, 0, { -40, 0, 40 } },
		{ { -30, 20, 90 }, 2, { -30, 20, 10 } },
		{ { -20, 40, 60 }, 2, { -20, 40, -20 } },
		{ { -10, 60, 30 }, 1, { -10, -20, 30 } },
		{ { 0, 0, 80 }, 2, { 0, 0, 0 } },
	};
	struct sds_lb *lb = lb_new("round_robin", w, 3);
	int64_t cur[3], before[3] = { 0, 0, 0 };
	int r, s, j;

	for (r = 0; r < 3; r++)
		for (s = 0; s < 8; s++) {
			for (j = 0; j < 3; j++)
				assert_int_equal(before[j] + w[j], step[s].add[j]);
			assert_int_equal(sds_lb_pick(lb, NULL, NOW, NULL, 0), step[s].pick);
			assert_int_equal(sds_lb_rr_current(lb, cur), 0);
			for (j = 0; j < 3; j++)
				assert_int_equal(cur[j], step[s].sub[j]);
			memcpy(before, cur, sizeof(cur));
		}
	sds_lb_free(lb);
}

#define RR_THREAD_PICKS	70000	/* 10000 rounds of 5, 1, 1 */

struct rr_thread {
	struct sds_lb *lb;
	long c[3];
};

static void *rr_thread_run(void *arg)
{
	struct rr_thread *t = arg;
	int i;

	for (i = 0; i < RR_THREAD_PICKS; i++)
		t->c[sds_lb_pick(t->lb, NULL, NOW, NULL, 0)]++;
	return NULL;
}

/*
 * Two threads at once: each state runs whole sequences, so the totals are
 * the weights' shares within a round per state (exact when each thread
 * kept its own state, which is what happens unless one was preempted
 * inside a pick).
 */
static void test_rr_threads(void **state)
{
	static const int w[] = { 5, 1, 1 };
	struct sds_lb *lb = lb_new("round_robin", w, 3);
	struct rr_thread t[2] = { { .lb = lb }, { .lb = lb } };
	pthread_t th[2];
	long c[3];
	int i, j;

	for (i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&th[i], NULL, rr_thread_run, &t[i]), 0);
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	for (j = 0; j < 3; j++) {
		c[j] = t[0].c[j] + t[1].c[j];
		assert_true(labs(c[j] - 2 * RR_THREAD_PICKS * w[j] / 7) <=
			    SDS_LB_RR_SLOTS * 7);
	}
	print_message("  2 threads x %d picks of 5,1,1: %ld %ld %ld\n",
		      RR_THREAD_PICKS, c[0], c[1], c[2]);
	sds_lb_free(lb);
}

/* ---- least active ------------------------------------------------------ */

static void test_least_active(void **state)
{
	static const int w[] = { 1, 3, 6 };
	struct sds_lb_load load[3] = { { .in_flight = 0 }, { .in_flight = 2 },
				       { .in_flight = 5 } };
	struct sds_lb *lb = lb_new("least_active", w, 3);
	long c[3] = { 0 };
	double sd;
	int i;

	sds_lb_seed(SEED);
	for (i = 0; i < 1000; i++)
		assert_int_equal(sds_lb_pick(lb, load, NOW, NULL, 0), 0);

	/*
	 * 0 and 1 tied at one call in flight: drawn 1:3 between them, never
	 * 2.  Provider 0's count is binomial(100000, 1/4): sd 136.9, and
	 * 6 sd is a two-in-a-billion false failure.
	 */
	load[0].in_flight = 1;
	load[1].in_flight = 1;
	for (i = 0; i < 100000; i++)
		c[sds_lb_pick(lb, load, NOW, NULL, 0)]++;
	sd = sqrt(100000 * 0.25 * 0.75);
	print_message("  tied 1:3: %ld %ld %ld (expected 25000 +- %.0f)\n",
		      c[0], c[1], c[2], 6 * sd);
	assert_int_equal(c[2], 0);
	assert_true(fabs(c[0] - 25000.0) < 6 * sd);
	sds_lb_free(lb);
}

/* ---- shortest response ------------------------------------------------- */

/*
 * A closed loop: C clients, each calling again as soon as its call ends,
 * on providers whose calls take lat[i]; the gauges are exact (the
 * kernel's).  Returns the share of the calls provider @slow got.
 */
#define SIM_CLIENTS	30
#define SIM_CALLS	100000

static double simulate(struct sds_lb *lb, const uint64_t *lat, int n, int slow)
{
	struct sds_lb_load load[8] = { { 0 } };
	uint64_t end[SIM_CLIENTS], now = NOW;
	int on[SIM_CLIENTS], i, j, k, first;
	long c[8] = { 0 };

	for (i = 0; i < n; i++)
		load[i].latency_ns = lat[i];
	for (j = 0; j < SIM_CLIENTS; j++)
		end[j] = 0;
	memset(on, -1, sizeof(on));
	for (i = 0; i < SIM_CALLS; i++) {
		first = 0;
		for (j = 1; j < SIM_CLIENTS; j++)
			if (end[j] < end[first])
				first = j;
		if (on[first] >= 0) {
			load[on[first]].in_flight--;
			now = end[first];
		}
		k = sds_lb_pick(lb, load, now, NULL, 0);
		assert_in_range(k, 0, n - 1);
		c[k]++;
		load[k].in_flight++;
		on[first] = k;
		end[first] = now + lat[k];
	}
	return (double)c[slow] / SIM_CALLS;
}

static void test_shortest_response(void **state)
{
	static const int w[] = { 1, 1, 1 };
	static const uint64_t lat[] = { 1000000, 1000000, 10000000 };
	struct sds_lb_load load[3] = { { .latency_ns = 1000000 },
				       { .latency_ns = 1000000 },
				       { .latency_ns = 10000000 } };
	struct sds_lb *sr = lb_new("shortest_response", w, 3);
	struct sds_lb *rnd = lb_new("random", w, 3);
	double share, share_rnd;
	int i;

	sds_lb_seed(SEED);
	/* Idle: the slow one's expected wait is 10x; it is never picked. */
	for (i = 0; i < 1000; i++)
		assert_in_range(sds_lb_pick(sr, load, NOW, NULL, 0), 0, 1);
	/* Busy: the fast ones queue, and still it gets under 10%. */
	share = simulate(sr, lat, 3, 2);
	share_rnd = simulate(rnd, lat, 3, 2);
	print_message("  10x slower provider, %d clients: %.2f%% of calls "
		      "(random: %.2f%%)\n", SIM_CLIENTS, 100 * share, 100 * share_rnd);
	assert_true(share < 0.10);
	assert_true(share_rnd > 0.30);
	sds_lb_free(sr);
	sds_lb_free(rnd);
}

/* ---- warm-up ----------------------------------------------------------- */

static void test_warmup(void **state)
{
	const uint64_t wu = SDS_LB_WARMUP_DEFAULT_NS;	/* 600 s */
	static const int w[] = { 100, 100, 100 };
	struct sds_lb_load load[3] = { { .start_ns = NOW - 180 * SEC } };
	struct sds_lb *lb = lb_new("random", w, 3);
	long c[3] = { 0 };
	double ratio;
	int i;

	/* The rule, exactly. */
	assert_int_equal(sds_lb_warm_weight(100, NOW - 180 * SEC, NOW, wu), 30);
	assert_int_equal(sds_lb_warm_weight(100, NOW, NOW, wu), 1);
	assert_int_equal(sds_lb_warm_weight(100, NOW + SEC, NOW, wu), 1);
	assert_int_equal(sds_lb_warm_weight(100, NOW - 600 * SEC, NOW, wu), 100);
	assert_int_equal(sds_lb_warm_weight(100, NOW - 599 * SEC, NOW, wu), 99);
	assert_int_equal(sds_lb_warm_weight(1, NOW - 300 * SEC, NOW, wu), 1);
	assert_int_equal(sds_lb_warm_weight(10000, NOW - 1, NOW, wu), 1);
	assert_int_equal(sds_lb_warm_weight(100, 0, NOW, wu), 100);
	assert_int_equal(sds_lb_warm_weight(100, NOW, NOW, SDS_LB_WARMUP_OFF), 100);

	/*
	 * At 30% of its warm-up, 30% of the picks of a warm peer of its
	 * weight: 30 / 230 of 100000 is 13043 (sd 106), 100 / 230 is 43478;
	 * their ratio's sd is about 0.003, so +-0.03 is ten of them.
	 */
	sds_lb_seed(SEED);
	for (i = 0; i < 100000; i++)
		c[sds_lb_pick(lb, load, NOW, NULL, 0)]++;
	ratio = c[0] / ((c[1] + c[2]) / 2.0);
	print_message("  at 30%% of warm-up: %ld vs %ld %ld, %.3f of a peer's share\n",
		      c[0], c[1], c[2], ratio);
	assert_true(fabs(ratio - 0.30) <= 0.03);
	sds_lb_free(lb);

	/* Round robin on the warm weights, exact: 30 and 100 of each 130. */
	lb = lb_new("round_robin", w, 2);
	c[0] = c[1] = 0;
	for (i = 0; i < 130 * 10; i++)
		c[sds_lb_pick(lb, load, NOW, NULL, 0)]++;
	assert_int_equal(c[0], 300);
	assert_int_equal(c[1], 1000);
	sds_lb_free(lb);
}

/* ---- downgraded -------------------------------------------------------- */

static void test_downgraded(void **state)
{
	static const int w[] = { 1, 1, 10000 };
	/* Provider 2 would win every policy: idle, fast, heavy -- but downgraded. */
	struct sds_lb_load load[3] = {
		{ .in_flight = 5, .latency_ns = 5000000 },
		{ .in_flight = 7, .latency_ns = 9000000 },
		{ .in_flight = 0, .latency_ns = 1, .downgraded = 1 },
	};
	struct sds_lb *lb;
	char key[32];
	int pol, i, k, len;

	sds_lb_seed(SEED);
	for (pol = 0; pol < SDS_LB_NPOLICIES; pol++) {
		lb = lb_new(sds_lb_policy_name(pol), w, 3);
		for (i = 0; i < 10000; i++) {
			len = snprintf(key, sizeof(key), "k%d", i);
			k = sds_lb_pick(lb, load, NOW, key, len);
			assert_in_range(k, 0, 1);
		}
		load[0].downgraded = load[1].downgraded = 1;
		for (i = 0; i < 100; i++) {
			len = snprintf(key, sizeof(key), "k%d", i);
			assert_int_equal(sds_lb_pick(lb, load, NOW, key, len), -ENOENT);
		}
		/* One back: it takes everything. */
		load[1].downgraded = 0;
		for (i = 0; i < 100; i++) {
			len = snprintf(key, sizeof(key), "k%d", i);
			assert_int_equal(sds_lb_pick(lb, load, NOW, key, len), 1);
		}
		load[0].downgraded = 0;
		sds_lb_free(lb);
	}
}

/* ---- bad input --------------------------------------------------------- */

static void expect_refused(const char *policy, const struct sds_lb_provider *p,
			   int n, uint64_t warmup, int err_no, const char *says)
{
	struct sds_lb *lb = (struct sds_lb *)1;
	char err[512] = "";

	assert_int_equal(sds_lb_new(&lb, policy, p, n, warmup, err, sizeof(err)), err_no);
	assert_null(lb);
	print_message("  refused: %s\n", err);
	assert_non_null(strstr(err, says));
}

static void test_bad_input(void **state)
{
	static struct sds_lb_provider p[SDS_LB_MAX + 1];
	static char names[SDS_LB_MAX + 1][16];
	char longname[SDS_LB_NAME_MAX + 1];
	struct sds_lb *lb;
	int i;

	for (i = 0; i <= SDS_LB_MAX; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		p[i] = (struct sds_lb_provider){ .name = names[i], .weight = 1 };
	}
	expect_refused("roundrobin", p, 3, 0, -EINVAL,
		       "\"roundrobin\" (known: random, round_robin, least_active, "
		       "shortest_response, consistent_hash)");
	expect_refused(NULL, p, SDS_LB_MAX + 1, 0, -E2BIG, "257 providers: at most 256");
	expect_refused(NULL, p, 0, 0, -EINVAL, "no provider");
	expect_refused(NULL, p, 3, SDS_LB_WARMUP_MAX_NS + 1, -EINVAL, "at most a day");

	p[1].weight = 0;
	expect_refused(NULL, p, 3, 0, -EINVAL, "provider 1 (p1): weight 0: weights are 1..10000");
	p[1].weight = -3;
	expect_refused("least_active", p, 3, 0, -EINVAL, "weight -3");
	p[1].weight = SDS_LB_WEIGHT_MAX + 1;
	expect_refused(NULL, p, 3, 0, -EINVAL, "weight 10001");
	p[1].weight = 1;

	p[2].name = NULL;
	expect_refused(NULL, p, 3, 0, -EINVAL, "provider 2: no name");
	p[2].name = "";
	expect_refused(NULL, p, 3, 0, -EINVAL, "provider 2: no name");
	memset(longname, 'x', SDS_LB_NAME_MAX);
	longname[SDS_LB_NAME_MAX] = 0;
	p[2].name = longname;
	expect_refused(NULL, p, 3, 0, -EINVAL, "at most 127");
	p[2].name = "p0";
	expect_refused("consistent_hash", p, 3, 0, -EINVAL, "providers 0 and 2: both named p0");
	p[2].name = names[2];

	/* The limits themselves pass: 256 providers on a ring, weights 10000. */
	p[0].weight = SDS_LB_WEIGHT_MAX;
	for (i = 0; i < SDS_LB_NPOLICIES; i++) {
		assert_int_equal(sds_lb_new(&lb, sds_lb_policy_name(i), p, SDS_LB_MAX,
					    SDS_LB_WARMUP_MAX_NS, NULL, 0), 0);
		assert_int_equal(sds_lb_count(lb), SDS_LB_MAX);
		assert_int_equal(sds_lb_policy(lb), i);
		assert_in_range(sds_lb_pick(lb, NULL, NOW, "k", 1), 0, SDS_LB_MAX - 1);
		sds_lb_free(lb);
	}
	/* No error buffer: refused all the same. */
	assert_int_equal(sds_lb_new(&lb, "nope", p, 3, 0, NULL, 0), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_chi2),
		cmocka_unit_test(test_rr_5_1_1),
		cmocka_unit_test(test_rr_10_20_50),
		cmocka_unit_test(test_rr_threads),
		cmocka_unit_test(test_least_active),
		cmocka_unit_test(test_shortest_response),
		cmocka_unit_test(test_warmup),
		cmocka_unit_test(test_downgraded),
		cmocka_unit_test(test_bad_input),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
