// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The balancing API of sds.h (userspace/lb.c) against the stand-in loader
 * (fakeloader.c), which writes each provider's flag entry as the real
 * loader does (lb_inflight, lb_latency_ns, downgrades), with counting
 * probe sites (fake_sites.c): picks skip downgraded providers and follow
 * the published load; the retry helper keeps to its retries, its budget
 * and its per-attempt timeout; bad input is refused with errno and a
 * message.  The policies themselves: test_balance.c.  ASan + UBSan.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "balance.h"
#include "client_fixture.h"
#include "fakeloader.h"

#define SEED	0x5d5b1a5eULL

static struct fake_loader fl;

/* A client of app "lb" served by the stand-in, and the balancer over p0..p(n-1). */
static struct sds_client *lb_client(void)
{
	struct sds_client *c;

	assert_int_equal(fake_start(&fl, cfx_run_dir, "g", "lb", 1), 0);
	c = sds_client_open("g", "lb");
	assert_non_null(c);
	return c;
}

static struct sds_balancer *lb_open(struct sds_client *c, const char *policy,
				    const int *w, int n,
				    const struct sds_lb_opts *o)
{
	static char names[SDS_LB_MAX_MEMBERS][16];
	struct sds_lb_member m[SDS_LB_MAX_MEMBERS];
	struct sds_balancer *b;
	int i;

	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "p%d", i);
		m[i] = (struct sds_lb_member){ .name = names[i], .weight = w[i] };
	}
	b = sds_lb_open(c, "pay", policy, m, n, o);
	if (!b)
		fail_msg("sds_lb_open: %s", sds_lb_error());
	return b;
}

static struct sds_flag *entry(int i)
{
	char name[32];
	struct sds_flag *e;

	snprintf(name, sizeof(name), "pay@p%d", i);
	e = fake_entry(&fl, name);
	assert_non_null(e);
	return e;
}

static int id_of(int i)
{
	char name[32];

	snprintf(name, sizeof(name), "pay@p%d", i);
	return fake_id(&fl, name);
}

/* The loader's tick, for provider @i: what lbpub.c stores. */
static void publish(int i, __u32 inflight, __u32 latency_ns)
{
	__atomic_store_n(&entry(i)->lb_inflight, inflight, __ATOMIC_RELAXED);
	__atomic_store_n(&entry(i)->lb_latency_ns, latency_ns, __ATOMIC_RELAXED);
}

static void downgrade(int i, bool on)
{
	fake_set(entry(i), on ? SDS_ACT_DOWNGRADE : 0, 100,
		 on ? fake_now() + 60 * NS : 0, 0, 0);
}

static void close_all(struct sds_balancer *b, struct sds_client *c)
{
	sds_lb_close(b);
	sds_client_close(c);
	fake_stop(&fl);
}

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

/* ---- the retry helper ------------------------------------------------------ */

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
		cmocka_unit_test(test_bad_input),
		cmocka_unit_test(test_points),
		cmocka_unit_test(test_skip_downgraded),
		cmocka_unit_test(test_stale_loader),
		cmocka_unit_test(test_least_active),
		cmocka_unit_test(test_shortest_response),
		cmocka_unit_test(test_unbound),
		cmocka_unit_test(test_local_inflight),
		cmocka_unit_test(test_call_retries),
		cmocka_unit_test(test_call_budget),
		cmocka_unit_test(test_call_timeout),
	};

	return cmocka_run_group_tests(tests, cfx_setup, cfx_teardown);
}
