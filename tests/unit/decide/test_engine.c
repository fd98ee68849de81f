// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/decide/engine_eval.c: one point's evaluation in a tick,
 * driven by hand-made snapshots and a fake clock (no BPF, no loader): the
 * sliding window from the snapshot, the window reset a successful probe
 * call asks for, a delay_ms hold and its end, the kill switch, the
 * guard's refusals shown for one second, and the calls stuck past their
 * timeout counted as timeouts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "decide/engine_eval.h"

#define SEC	1000000000ULL
#define MS	1000000ULL
#define T0	1000		/* ring second of the first tick */

static struct point_stats pts[2];
static struct snapshot snap = { .refs = 1, .npoints = 2, .cap = 2, .pts = pts };
static struct cell_counts cells;
static struct point_run run;

/* The fake counters: point 0 counted @v visits, @e exceptions at second @sec. */
static void at(uint64_t sec, uint64_t v, uint64_t e)
{
	struct point_stats *p = &pts[0];

	assert_true(sec <= snap.sec && snap.sec - sec < SDS_RING_SLOTS);
	p->secs[snap.sec - sec].visits += v;
	p->secs[snap.sec - sec].exceptions += e;
}

/* The clock moves to second @sec: the ring shifts with it. */
static void tick_to(uint64_t sec)
{
	struct point_stats *p = &pts[0];
	uint64_t d = sec - snap.sec;
	int i;

	for (i = SDS_RING_SLOTS - 1; i >= 0; i--)
		p->secs[i] = (uint64_t)i >= d ? p->secs[i - d] :
			     (struct sds_counts){};
	snap.sec = sec;
}

static struct engine_eval_out eval(const struct sds_strategy *st, uint64_t now_ns)
{
	struct engine_eval_in in = {
		.st = st,
		.snap = &snap,
		.cells = &cells,
		.now_ns = now_ns,
		.tick_ns = 100 * MS,
		.now_sec = snap.sec,
	};
	struct engine_eval_out out;

	engine_eval(&run, 0, &in, &out);
	return out;
}

static int setup(void **state)
{
	(void)state;
	memset(pts, 0, sizeof(pts));
	pts[0].ok = pts[1].ok = true;
	snap.sec = T0;
	memset(&cells, 0, sizeof(cells));
	memset(&run, 0, sizeof(run));
	return 0;
}

static struct sds_strategy strat(void)
{
	struct sds_strategy st;

	strategy_init(&st, "p");
	return st;
}

/* The window is the last 10 s of the snapshot: older seconds fall out. */
static void test_window_slides(void **state)
{
	struct sds_counts w;

	(void)state;
	at(T0, 5, 0);
	tick_to(T0 + 9);
	at(T0 + 9, 7, 0);
	engine_eval_window(&run, &snap, 0, snap.sec, &w);
	assert_int_equal(w.visits, 12);
	tick_to(T0 + 10);
	engine_eval_window(&run, &snap, 0, snap.sec, &w);
	assert_int_equal(w.visits, 7);
	/* Point 1: nothing. */
	engine_eval_window(&run, &snap, 1, snap.sec, &w);
	assert_int_equal(w.visits, 0);
}

/* exception_threshold trips, and lets go once the window has room again. */
static void test_trip_and_release(void **state)
{
	struct sds_strategy st = strat();
	struct engine_eval_out o;

	(void)state;
	st.exception_threshold = 3;
	at(T0, 10, 2);
	o = eval(&st, 10 * SEC);
	assert_int_equal(o.shown, 0);
	at(T0, 1, 1);
	o = eval(&st, 10 * SEC + 100 * MS);
	assert_int_equal(o.shown, SDS_REASON_EXCEPTION);
	assert_true(o.fs.active & SDS_ACT_DOWNGRADE);
	assert_int_equal(o.fs.expires_ns, 11 * SEC + 200 * MS);
	tick_to(T0 + 10);	/* the exceptions slid out */
	o = eval(&st, 20 * SEC);
	assert_int_equal(o.shown, 0);
	assert_false(o.fs.active & SDS_ACT_DOWNGRADE);
}

/* A delay_ms hold stays past the window and ends at its time. */
static void test_hold_until_expiry(void **state)
{
	struct sds_strategy st = strat();
	struct engine_eval_out o;

	(void)state;
	st.exception_threshold = 1;
	st.delay_ms = 2000;
	st.retry_interval_ms = 500;
	at(T0, 1, 1);
	o = eval(&st, 10 * SEC);
	assert_true(o.hold_started);
	assert_int_equal(o.fs.probe_interval_ns, 500 * MS);
	assert_int_equal(run.cs.hold_until_ns, 12 * SEC);
	/* The window empties; the hold does not. */
	tick_to(T0 + 10);
	o = eval(&st, 11 * SEC);
	assert_false(o.hold_started);
	assert_int_equal(o.shown, SDS_REASON_EXCEPTION);
	o = eval(&st, 12 * SEC);
	assert_int_equal(o.shown, 0);
	assert_int_equal(run.cs.hold_until_ns, 0);
}

/* A probe call that succeeds ends the hold and restarts the window: the
 * calls counted so far in this second no longer count. */
static void test_probe_resets_window(void **state)
{
	struct sds_strategy st = strat();
	struct engine_eval_out o;
	struct sds_counts w;

	(void)state;
	st.exception_threshold = 2;
	st.delay_ms = 60000;
	st.retry_interval_ms = 100;
	at(T0, 5, 3);
	o = eval(&st, 10 * SEC);
	assert_int_equal(o.shown, SDS_REASON_EXCEPTION);
	tick_to(T0 + 1);
	at(T0 + 1, 4, 1);
	cells.probes_ok = 1;
	o = eval(&st, 11 * SEC);
	assert_int_equal(o.shown, 0);
	assert_int_equal(run.reset_sec, T0 + 1);
	assert_int_equal(run.reset_base.visits, 4);
	engine_eval_window(&run, &snap, 0, snap.sec, &w);
	assert_int_equal(w.visits, 0);
	assert_int_equal(w.exceptions, 0);
	/* One more exception in the same second: under the threshold of 2. */
	at(T0 + 1, 1, 1);
	o = eval(&st, 11 * SEC + 100 * MS);
	assert_int_equal(o.shown, 0);
	/* A second one trips it again. */
	at(T0 + 1, 1, 1);
	o = eval(&st, 11 * SEC + 200 * MS);
	assert_int_equal(o.shown, SDS_REASON_EXCEPTION);
}

/* The kill switch trips with no call at all. */
static void test_kill_switch(void **state)
{
	struct sds_strategy st = strat();
	struct engine_eval_out o;

	(void)state;
	st.visit_threshold = 0;
	o = eval(&st, 5 * SEC);
	assert_int_equal(o.shown, SDS_REASON_VISIT);
	assert_int_equal(o.fs.reason, SDS_REASON_VISIT);
	/* No strategy: nothing. */
	o = eval(NULL, 5 * SEC + 100 * MS);
	assert_int_equal(o.shown, 0);
}

/* The guard's refusals show for a second after the last one. */
static void test_limits_shown_one_second(void **state)
{
	struct engine_eval_out o;

	(void)state;
	o = eval(NULL, 1 * SEC);
	assert_int_equal(o.shown, 0);
	cells.refused_concurrent = 3;
	o = eval(NULL, 2 * SEC);
	assert_int_equal(o.shown, SDS_REASON_CONCURRENT);
	o = eval(NULL, 2 * SEC + 900 * MS);
	assert_int_equal(o.shown, SDS_REASON_CONCURRENT);
	cells.refused_token = 1;
	o = eval(NULL, 3 * SEC);
	assert_int_equal(o.shown, SDS_REASON_TOKEN);
	o = eval(NULL, 4 * SEC);
	assert_int_equal(o.shown, 0);
}

/*
 * Calls stuck past the timeout (kernel/stuck.h) are timeouts of the
 * window while they are stuck: timeout_count_threshold trips on stuck +
 * timed-out, and a stuck call that returns moves from one to the other
 * (the trip holds, no double count); the slow-call rate counts them among
 * the passed calls; an unread stuck count counts nothing.
 */
static void test_stuck_calls_are_timeouts(void **state)
{
	struct sds_strategy st = strat();
	struct engine_eval_out o;

	(void)state;
	st.timeout_ms = 300;
	st.timeout_count_threshold = 5;
	at(T0, 5, 0);
	pts[0].stuck = 4;
	pts[0].stuck_read = true;
	o = eval(&st, 10 * SEC);
	assert_int_equal(o.shown, 0);
	pts[0].stuck = 5;
	o = eval(&st, 10 * SEC + 100 * MS);
	assert_int_equal(o.shown, SDS_REASON_TIMEOUT);
	/* Two return: the kernel counts them, they leave the stuck count. */
	pts[0].secs[0].timeouts = 2;
	pts[0].stuck = 3;
	o = eval(&st, 10 * SEC + 200 * MS);
	assert_int_equal(o.shown, SDS_REASON_TIMEOUT);
	/* Not read this time: only what the kernel counted (2 < 5). */
	pts[0].stuck_read = false;
	o = eval(&st, 10 * SEC + 300 * MS);
	assert_int_equal(o.shown, 0);

	/* slow_rate 50 %: 3 stuck of 5 passed calls is 60 %. */
	memset(&run, 0, sizeof(run));
	st = strat();
	st.timeout_ms = 300;
	st.slow_rate_threshold = 50;
	pts[0].secs[0].timeouts = 0;
	pts[0].stuck = 2;
	pts[0].stuck_read = true;
	o = eval(&st, 11 * SEC);
	assert_int_equal(o.shown, 0);
	pts[0].stuck = 3;
	o = eval(&st, 11 * SEC + 100 * MS);
	assert_int_equal(o.shown, SDS_REASON_SLOW_RATE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_window_slides, setup),
		cmocka_unit_test_setup(test_trip_and_release, setup),
		cmocka_unit_test_setup(test_hold_until_expiry, setup),
		cmocka_unit_test_setup(test_probe_resets_window, setup),
		cmocka_unit_test_setup(test_kill_switch, setup),
		cmocka_unit_test_setup(test_limits_shown_one_second, setup),
		cmocka_unit_test_setup(test_stuck_calls_are_timeouts, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
