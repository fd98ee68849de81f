// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/decide/chain.c's chain_eval(): what is published, and the
 * delay_ms hold with its probe calls (docs/DESIGN.md §4).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "chain_fixture.h"


/* ---- chain_eval ----------------------------------------------------------- */

/* One tick, no half-open phase. */
static bool tick(struct chain_state *cs, const struct sds_strategy *st,
		 struct sds_counts w, uint64_t now, uint64_t ok, uint64_t failed,
		 struct flag_state *out)
{
	return tick_ho(cs, NULL, st, w, now, ok, failed, 0, out);
}

/* What is published for a point that is not downgraded, without limits. */
static void assert_idle(const struct flag_state *out)
{
	assert_int_equal(out->active, 0);
	assert_int_equal(out->reason, SDS_REASON_NONE);
	assert_int_equal(out->rate, 0);
	assert_int_equal(out->expires_ns, 0);
	assert_int_equal(out->concurrent_limit, -1);
	assert_int_equal(out->token_interval_ns, 0);
	assert_int_equal(out->token_burst_ns, 0);
	assert_int_equal(out->probe_interval_ns, 0);
}

/* A downgrade for @reason at @rate published at @now, no other limits. */
static void assert_down(const struct flag_state *out, uint32_t active,
			uint32_t reason, uint32_t rate, uint64_t now,
			uint64_t probe_ns)
{
	assert_int_equal(out->active, active);
	assert_int_equal(out->reason, reason);
	assert_int_equal(out->rate, rate);
	assert_int_equal(out->expires_ns, now + TICK + CHAIN_EXPIRY_NS);
	assert_int_equal(out->concurrent_limit, -1);
	assert_int_equal(out->token_interval_ns, 0);
	assert_int_equal(out->token_burst_ns, 0);
	assert_int_equal(out->probe_interval_ns, probe_ns);
}

static const struct sds_counts empty;

static void test_eval_no_strategy(void **state)
{
	struct chain_state cs;
	struct flag_state out;

	memset(&cs, 0, sizeof(cs));
	assert_false(tick(&cs, NULL, counts(1000, 1000, 1000, 0), 5 * SEC, 3, 4, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_NONE);
	assert_int_equal(cs.hold_until_ns, 0);

	/* A point that was tripped when its strategy went away recovers. */
	cs.tripped = true;
	cs.reason = SDS_REASON_VISIT;
	cs.hold_until_ns = 100 * SEC;
	assert_false(tick(&cs, NULL, empty, 6 * SEC, 3, 4, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_NONE);
	assert_int_equal(cs.hold_until_ns, 0);
}

static void test_eval_trip_and_recover(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.visit_threshold = 10;
	st.downgrade_rate = 30;
	memset(&cs, 0, sizeof(cs));

	/* Under the limit: nothing. */
	assert_false(tick(&cs, &st, counts(10, 0, 0, 0), 5 * SEC, 0, 0, &out));
	assert_idle(&out);
	assert_false(cs.tripped);

	/* Over it: downgraded at the strategy's rate, for one expiry. */
	assert_false(tick(&cs, &st, counts(11, 0, 0, 0), 6 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_VISIT, 30, 6 * SEC, 0);
	assert_int_equal(out.expires_ns, 7 * SEC + TICK);
	assert_true(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_VISIT);
	assert_int_equal(cs.hold_until_ns, 0);

	/* Still over it: renewed. */
	assert_false(tick(&cs, &st, counts(30, 0, 0, 15), 7 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_VISIT, 30, 7 * SEC, 0);

	/* The window clears: no hold, so it recovers at once. */
	assert_false(tick(&cs, &st, counts(20, 0, 0, 10), 8 * SEC, 0, 0, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_NONE);

	/* Another reason next time: the reason follows the window. */
	st.exception_threshold = 2;
	assert_false(tick(&cs, &st, counts(5, 2, 0, 0), 9 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION, 30, 9 * SEC, 0);
	assert_false(tick(&cs, &st, counts(11, 2, 0, 0), 10 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_VISIT, 30, 10 * SEC, 0);
	assert_false(tick(&cs, &st, counts(11, 2, 0, 1), 11 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION, 30, 11 * SEC, 0);
	assert_false(tick(&cs, &st, counts(11, 1, 0, 1), 12 * SEC, 0, 0, &out));
	assert_idle(&out);
}

static void test_eval_rates(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	/* Default downgrade_rate: 100. */
	st.timeout_ms = 50;
	st.timeout_count_threshold = 1;
	memset(&cs, 0, sizeof(cs));
	assert_false(tick(&cs, &st, counts(1, 0, 1, 0), 2 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_TIMEOUT, 100, 2 * SEC, 0);

	/* 0: tripped (and shown as such) but no call is downgraded. */
	st.downgrade_rate = 0;
	assert_false(tick(&cs, &st, counts(1, 0, 1, 0), 3 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_TIMEOUT, 0, 3 * SEC, 0);

	/* Exception rate. */
	st = strat();
	st.exception_rate_threshold = 50;
	st.downgrade_rate = 75;
	memset(&cs, 0, sizeof(cs));
	assert_false(tick(&cs, &st, counts(4, 2, 0, 0), 1, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION_RATE, 75, 1, 0);
	assert_int_equal(out.expires_ns, 1 + SEC + TICK);
}

/*
 * A downgrade outlives the tick that published it by a second, however
 * long the tick: with --tick-ms 10000 a fixed 1-s expiry would let calls
 * through for 9 s of every 10.
 */
static void test_eval_expiry_follows_tick(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;
	struct chain_input in = {
		.st = &st,
		.window = counts(11, 0, 0, 0),
		.now_ns = 50 * SEC,
		.tick_ns = 10 * SEC,
	};

	(void)state;
	st.visit_threshold = 10;
	memset(&cs, 0, sizeof(cs));
	assert_false(chain_eval(&cs, &in, &out));
	assert_int_equal(out.active, SDS_ACT_DOWNGRADE);
	assert_int_equal(out.expires_ns, 61 * SEC);
	in.tick_ns = 1000 * MS;
	in.now_ns = 52 * SEC;
	assert_false(chain_eval(&cs, &in, &out));
	assert_int_equal(out.expires_ns, 54 * SEC);
}

static void test_eval_kill_switch(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.visit_threshold = 0;
	memset(&cs, 0, sizeof(cs));
	/* Before any call. */
	assert_false(tick(&cs, &st, empty, 1 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_VISIT, 100, 1 * SEC, 0);
	assert_false(tick(&cs, &st, counts(100, 0, 0, 100), 2 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_VISIT, 100, 2 * SEC, 0);
	/* Taking it away lifts it. */
	st.visit_threshold = SDS_OFF;
	assert_false(tick(&cs, &st, counts(100, 0, 0, 100), 3 * SEC, 0, 0, &out));
	assert_idle(&out);
}

static void test_eval_limits(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.concurrent_threshold = 8;
	st.token_rate = 3;
	st.token_bucket = 5;
	memset(&cs, 0, sizeof(cs));

	/* Published whether or not a window strategy trips. */
	assert_false(tick(&cs, &st, counts(1000, 1000, 1000, 0), 4 * SEC, 0, 0, &out));
	assert_int_equal(out.active, SDS_ACT_CONCURRENT | SDS_ACT_TOKEN);
	assert_int_equal(out.reason, SDS_REASON_NONE);
	assert_int_equal(out.rate, 0);
	assert_int_equal(out.expires_ns, 0);
	assert_int_equal(out.concurrent_limit, 8);
	assert_int_equal(out.token_interval_ns, 333333333);	/* 1e9 / 3 */
	assert_int_equal(out.token_burst_ns, 5 * 333333333ULL);
	assert_int_equal(out.probe_interval_ns, 0);
	assert_false(cs.tripped);

	/* With a trip as well. */
	st.visit_threshold = 100;
	st.downgrade_rate = 60;
	assert_false(tick(&cs, &st, counts(101, 0, 0, 0), 5 * SEC, 0, 0, &out));
	assert_int_equal(out.active,
			 SDS_ACT_DOWNGRADE | SDS_ACT_CONCURRENT | SDS_ACT_TOKEN);
	assert_int_equal(out.reason, SDS_REASON_VISIT);
	assert_int_equal(out.rate, 60);
	assert_int_equal(out.expires_ns, 6 * SEC + TICK);
	assert_int_equal(out.concurrent_limit, 8);
	assert_int_equal(out.token_interval_ns, 333333333);
	assert_int_equal(out.token_burst_ns, 1666666665);
	assert_int_equal(out.probe_interval_ns, 0);

	/* concurrent_threshold 0 refuses every call: still published. */
	st = strat();
	st.concurrent_threshold = 0;
	assert_false(tick(&cs, &st, empty, 6 * SEC, 0, 0, &out));
	assert_int_equal(out.active, SDS_ACT_CONCURRENT);
	assert_int_equal(out.concurrent_limit, 0);
	assert_int_equal(out.token_interval_ns, 0);
	assert_int_equal(out.token_burst_ns, 0);

	/* Only a bucket: 1000/s, 1 held. */
	st = strat();
	st.token_rate = 1000;
	st.token_bucket = 1;
	assert_false(tick(&cs, &st, empty, 7 * SEC, 0, 0, &out));
	assert_int_equal(out.active, SDS_ACT_TOKEN);
	assert_int_equal(out.concurrent_limit, -1);
	assert_int_equal(out.token_interval_ns, 1000000);
	assert_int_equal(out.token_burst_ns, 1000000);
	assert_int_equal(out.expires_ns, 0);

	/* 1 token/s, 60 held. */
	st.token_rate = 1;
	st.token_bucket = 60;
	assert_false(tick(&cs, &st, empty, 8 * SEC, 0, 0, &out));
	assert_int_equal(out.token_interval_ns, SEC);
	assert_int_equal(out.token_burst_ns, 60 * SEC);
}

static void test_eval_hold(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;
	const uint64_t t0 = 10 * SEC;

	st.exception_threshold = 5;
	st.delay_ms = 3000;
	st.downgrade_rate = 80;
	memset(&cs, 0, sizeof(cs));

	assert_false(tick(&cs, &st, counts(10, 5, 0, 0), t0, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION, 80, t0, 0);
	assert_true(cs.tripped);
	assert_int_equal(cs.hold_until_ns, t0 + 3 * SEC);

	/* The window clears at once, but the hold keeps it down for 3 s. */
	assert_false(tick(&cs, &st, empty, t0 + 1 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION, 80, t0 + SEC, 0);
	assert_false(tick(&cs, &st, empty, t0 + 2 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION, 80, t0 + 2 * SEC, 0);
	assert_false(tick(&cs, &st, empty, t0 + 3 * SEC - 1, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION, 80,
		    t0 + 3 * SEC - 1, 0);
	assert_int_equal(cs.hold_until_ns, t0 + 3 * SEC);

	/* At D it ends. */
	assert_false(tick(&cs, &st, empty, t0 + 3 * SEC, 0, 0, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_NONE);
	assert_int_equal(cs.hold_until_ns, 0);
	assert_false(tick(&cs, &st, empty, t0 + 4 * SEC, 0, 0, &out));
	assert_idle(&out);
}

static void test_eval_hold_retrips(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.exception_threshold = 5;
	st.timeout_ms = 100;
	st.timeout_count_threshold = 2;
	st.delay_ms = 2000;
	memset(&cs, 0, sizeof(cs));

	assert_false(tick(&cs, &st, counts(10, 5, 0, 0), 1 * SEC, 0, 0, &out));
	assert_int_equal(cs.hold_until_ns, 3 * SEC);
	/* During the hold the reason is the one that tripped it. */
	assert_false(tick(&cs, &st, counts(10, 0, 2, 0), 2 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_EXCEPTION, 100, 2 * SEC, 0);
	/* The hold ends while the window still trips: a new hold, new reason. */
	assert_false(tick(&cs, &st, counts(10, 0, 2, 0), 3 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_TIMEOUT, 100, 3 * SEC, 0);
	assert_true(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_TIMEOUT);
	assert_int_equal(cs.hold_until_ns, 5 * SEC);
	assert_false(tick(&cs, &st, empty, 5 * SEC - 1, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_TIMEOUT, 100, 5 * SEC - 1, 0);
	assert_false(tick(&cs, &st, empty, 5 * SEC, 0, 0, &out));
	assert_idle(&out);
	assert_int_equal(cs.hold_until_ns, 0);
}

static void test_eval_hold_dropped(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.exception_threshold = 1;
	st.delay_ms = 60000;
	memset(&cs, 0, sizeof(cs));
	assert_false(tick(&cs, &st, counts(1, 1, 0, 0), 1 * SEC, 0, 0, &out));
	assert_int_equal(cs.hold_until_ns, 61 * SEC);
	/* A new strategy without delay_ms: the hold goes with the old one. */
	st.delay_ms = SDS_OFF;
	assert_false(tick(&cs, &st, empty, 2 * SEC, 0, 0, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
	assert_int_equal(cs.hold_until_ns, 0);
	/* delay_ms 0 is no hold. */
	st.delay_ms = 0;
	assert_false(tick(&cs, &st, counts(1, 1, 0, 0), 3 * SEC, 0, 0, &out));
	assert_true(cs.tripped);
	assert_int_equal(cs.hold_until_ns, 0);
	assert_false(tick(&cs, &st, empty, 4 * SEC, 0, 0, &out));
	assert_idle(&out);
}

static void test_eval_probe_published(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.visit_threshold = 10;
	st.delay_ms = 5000;
	st.retry_interval_ms = 500;
	st.downgrade_rate = 90;
	memset(&cs, 0, sizeof(cs));

	assert_false(tick(&cs, &st, counts(11, 0, 0, 0), 1 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_VISIT, 90,
		    1 * SEC, 500 * MS);
	assert_false(tick(&cs, &st, empty, 5 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_VISIT, 90,
		    5 * SEC, 500 * MS);
	/* No hold, no probes. */
	assert_false(tick(&cs, &st, empty, 6 * SEC, 0, 0, &out));
	assert_idle(&out);

	/* retry_interval_ms without delay_ms: no hold, so no probes either. */
	st.delay_ms = SDS_OFF;
	assert_false(tick(&cs, &st, counts(11, 0, 0, 0), 7 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_VISIT, 90, 7 * SEC, 0);
}

static void test_eval_probe_ok(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.exception_threshold = 3;
	st.delay_ms = 10000;
	st.retry_interval_ms = 1000;
	memset(&cs, 0, sizeof(cs));

	/* Tripped with the guard's counters already at 7 ok, 2 failed. */
	assert_false(tick(&cs, &st, counts(5, 3, 0, 0), 1 * SEC, 7, 2, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_EXCEPTION,
		    100, 1 * SEC, SEC);
	assert_int_equal(cs.probes_ok_seen, 7);
	assert_int_equal(cs.probes_failed_seen, 2);
	/* No new probe results: held. */
	assert_false(tick(&cs, &st, counts(5, 3, 0, 0), 2 * SEC, 7, 2, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_EXCEPTION,
		    100, 2 * SEC, SEC);

	/*
	 * A probe succeeded: the hold ends early and the window must start
	 * afresh, even though this tick's (old) window still trips.
	 */
	assert_true(tick(&cs, &st, counts(6, 3, 0, 0), 3 * SEC, 8, 2, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_NONE);
	assert_int_equal(cs.hold_until_ns, 0);

	/* The fresh window: nothing. */
	assert_false(tick(&cs, &st, empty, 4 * SEC, 8, 2, &out));
	assert_idle(&out);
	assert_false(tick(&cs, &st, counts(2, 2, 0, 0), 5 * SEC, 8, 2, &out));
	assert_idle(&out);

	/* It trips again later: a full new hold, probe counters taken afresh. */
	assert_false(tick(&cs, &st, counts(3, 3, 0, 0), 6 * SEC, 9, 2, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_EXCEPTION,
		    100, 6 * SEC, SEC);
	assert_int_equal(cs.hold_until_ns, 16 * SEC);
	assert_int_equal(cs.probes_ok_seen, 9);
	assert_false(tick(&cs, &st, empty, 7 * SEC, 9, 2, &out));
	assert_true(cs.tripped);
	assert_true(tick(&cs, &st, empty, 8 * SEC, 10, 2, &out));
	assert_idle(&out);
}

static void test_eval_probe_ok_wins_over_failed(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.exception_threshold = 3;
	st.delay_ms = 10000;
	st.retry_interval_ms = 1000;
	memset(&cs, 0, sizeof(cs));
	assert_false(tick(&cs, &st, counts(5, 3, 0, 0), 1 * SEC, 0, 0, &out));
	/* One probe failed and a later one succeeded within the same tick. */
	assert_true(tick(&cs, &st, empty, 2 * SEC, 1, 1, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
}

static void test_eval_probe_failed(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.timeout_ms = 100;
	st.timeout_count_threshold = 1;
	st.delay_ms = 5000;
	st.retry_interval_ms = 250;
	memset(&cs, 0, sizeof(cs));

	assert_false(tick(&cs, &st, counts(1, 0, 1, 0), 10 * SEC, 4, 4, &out));
	assert_int_equal(cs.hold_until_ns, 15 * SEC);

	/* A probe failed at 12 s: the hold starts over from that tick. */
	assert_false(tick(&cs, &st, empty, 12 * SEC, 4, 5, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_TIMEOUT,
		    100, 12 * SEC, 250 * MS);
	assert_true(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_TIMEOUT);
	assert_int_equal(cs.hold_until_ns, 17 * SEC);
	assert_int_equal(cs.probes_failed_seen, 5);
	assert_int_equal(cs.probes_ok_seen, 4);

	/* The same failure is not counted twice. */
	assert_false(tick(&cs, &st, empty, 13 * SEC, 4, 5, &out));
	assert_int_equal(cs.hold_until_ns, 17 * SEC);
	/* Past the first hold's end: still held. */
	assert_false(tick(&cs, &st, empty, 15 * SEC, 4, 5, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_TIMEOUT,
		    100, 15 * SEC, 250 * MS);
	assert_false(tick(&cs, &st, empty, 17 * SEC - 1, 4, 5, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_TIMEOUT,
		    100, 17 * SEC - 1, 250 * MS);

	/* Another failure, two probes at once, right at the hold's end. */
	assert_false(tick(&cs, &st, empty, 17 * SEC, 4, 7, &out));
	assert_int_equal(cs.hold_until_ns, 22 * SEC);
	assert_true(cs.tripped);

	/* Then one succeeds: over, window reset. */
	assert_true(tick(&cs, &st, empty, 18 * SEC, 5, 7, &out));
	assert_idle(&out);
	assert_false(cs.tripped);
	assert_int_equal(cs.hold_until_ns, 0);
}

static void test_eval_kill_switch_survives_probe(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	st.visit_threshold = 0;
	st.delay_ms = 2000;
	st.retry_interval_ms = 100;
	st.downgrade_rate = 100;
	memset(&cs, 0, sizeof(cs));

	assert_false(tick(&cs, &st, empty, 1 * SEC, 0, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_VISIT, 100,
		    1 * SEC, 100 * MS);
	assert_int_equal(cs.hold_until_ns, 3 * SEC);

	/* A probe succeeds: the window resets, but the kill switch stays. */
	assert_true(tick(&cs, &st, counts(1, 0, 0, 0), 1 * SEC + 500 * MS, 1, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_VISIT, 100,
		    1 * SEC + 500 * MS, 100 * MS);
	assert_true(cs.tripped);
	assert_int_equal(cs.reason, SDS_REASON_VISIT);
	assert_int_equal(cs.hold_until_ns, 3 * SEC + 500 * MS);
	assert_int_equal(cs.probes_ok_seen, 1);

	/* And survives the end of the hold too. */
	assert_false(tick(&cs, &st, empty, 3 * SEC + 500 * MS, 1, 0, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE | SDS_ACT_PROBE, SDS_REASON_VISIT, 100,
		    3 * SEC + 500 * MS, 100 * MS);
	assert_int_equal(cs.hold_until_ns, 5 * SEC + 500 * MS);
}

static void test_eval_probe_results_without_hold(void **state)
{
	struct sds_strategy st = strat();
	struct chain_state cs;
	struct flag_state out;

	/* No delay_ms: probe counters are ignored, nothing is reset. */
	st.visit_threshold = 5;
	memset(&cs, 0, sizeof(cs));
	assert_false(tick(&cs, &st, counts(6, 0, 0, 0), 1 * SEC, 0, 0, &out));
	assert_true(cs.tripped);
	assert_false(tick(&cs, &st, counts(6, 0, 0, 0), 2 * SEC, 3, 3, &out));
	assert_down(&out, SDS_ACT_DOWNGRADE, SDS_REASON_VISIT, 100, 2 * SEC, 0);
	assert_false(tick(&cs, &st, empty, 3 * SEC, 9, 9, &out));
	assert_idle(&out);
}

/* ---- names ---------------------------------------------------------------- */

static void test_reason_names(void **state)
{
	assert_string_equal(chain_reason_name(SDS_REASON_NONE), "");
	assert_string_equal(chain_reason_name(SDS_REASON_VISIT), "visit");
	assert_string_equal(chain_reason_name(SDS_REASON_TOKEN), "token");
	assert_string_equal(chain_reason_name(SDS_REASON_CONCURRENT), "concurrent");
	assert_string_equal(chain_reason_name(SDS_REASON_TIMEOUT), "timeout");
	assert_string_equal(chain_reason_name(SDS_REASON_EXCEPTION), "exception");
	assert_string_equal(chain_reason_name(SDS_REASON_EXCEPTION_RATE),
			    "exception_rate");
	assert_string_equal(chain_reason_name(SDS_REASON_HOLD), "hold");
	assert_string_equal(chain_reason_name(SDS_REASON_MAX), "");
	assert_string_equal(chain_reason_name(1000), "");
	assert_string_equal(chain_reason_name(UINT32_MAX), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_eval_no_strategy),
		cmocka_unit_test(test_eval_trip_and_recover),
		cmocka_unit_test(test_eval_rates),
		cmocka_unit_test(test_eval_expiry_follows_tick),
		cmocka_unit_test(test_eval_kill_switch),
		cmocka_unit_test(test_eval_limits),
		cmocka_unit_test(test_eval_hold),
		cmocka_unit_test(test_eval_hold_retrips),
		cmocka_unit_test(test_eval_hold_dropped),
		cmocka_unit_test(test_eval_probe_published),
		cmocka_unit_test(test_eval_probe_ok),
		cmocka_unit_test(test_eval_probe_ok_wins_over_failed),
		cmocka_unit_test(test_eval_probe_failed),
		cmocka_unit_test(test_eval_kill_switch_survives_probe),
		cmocka_unit_test(test_eval_probe_results_without_hold),
		cmocka_unit_test(test_reason_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
