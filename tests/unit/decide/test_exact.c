// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/decide/exact.c, the mark arithmetic of exact trips: the
 * rule by hand on a few ticks, then a simulation of calls claiming
 * against the marks (as the guard does) with the kernel's per-second
 * counts and a loader ticking every 100 ms or 1,000 ms: the first N
 * calls pass and the N+1st is refused, no 10-s window ever holds more
 * than N passes, passes come back at the first tick after the second
 * holding the first ones left the window, and forged counts re-base.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "decide/chain.h"
#include "decide/exact.h"

static struct exact_in in_at(int64_t n, uint64_t spent, uint64_t sec,
			     uint64_t closed, uint64_t cur)
{
	struct exact_in in = {
		.threshold = n, .spent = spent, .sec = sec, .closed = closed,
		.cur = cur, .capped = true,
	};

	return in;
}

static void test_rule_by_hand(void **state)
{
	struct exact_mark m = {};
	struct exact_in in;

	(void)state;
	/* A re-base with 3 passes already counted this second, none before. */
	in = in_at(10, 100, 50, 0, 3);
	assert_int_equal(exact_mark_tick(&m, &in), 107);
	/* Same second, 5 claimed: the mark stays. */
	in = in_at(10, 105, 50, 0, 0);
	assert_int_equal(exact_mark_tick(&m, &in), 107);
	/* Next second: base is 105 (the last tick of 50), closed 8 (3 + 5). */
	in = in_at(10, 106, 51, 8, 0);
	assert_int_equal(exact_mark_tick(&m, &in), 107);
	/*
	 * Second 60: second 50 left the window.  Base is 106 (the tick of
	 * 51), closed 1 (a pass in 51): 106 + 10 - 1.
	 */
	in = in_at(10, 107, 60, 1, 0);
	assert_int_equal(exact_mark_tick(&m, &in), 115);
	/* A lower computed mark never lowers it. */
	in = in_at(10, 107, 60, 9, 0);
	assert_int_equal(exact_mark_tick(&m, &in), 115);
	/* Kill switch: no pass at all. */
	memset(&m, 0, sizeof(m));
	in = in_at(0, 40, 50, 0, 0);
	assert_int_equal(exact_mark_tick(&m, &in), 40);
	/* No threshold: no mark, and the state is dropped. */
	in = in_at(-1, 40, 50, 0, 0);
	assert_true(exact_mark_tick(&m, &in) == UINT64_MAX);
	assert_false(m.based);
}

static void test_rebase(void **state)
{
	struct exact_mark m = {};
	struct exact_in in;

	(void)state;
	in = in_at(10, 0, 50, 0, 0);
	assert_int_equal(exact_mark_tick(&m, &in), 10);
	/* A visit count above its mark: forged; re-based with the kernel's count. */
	in = in_at(10, 1000, 50, 0, 4);
	assert_int_equal(exact_mark_tick(&m, &in), 1006);
	/* Went back: forged, re-based (here the window is full: no pass). */
	in = in_at(10, 5, 51, 10, 0);
	assert_int_equal(exact_mark_tick(&m, &in), 5);
	/* A leap past EXACT_DELTA_MAX: forged. */
	in = in_at(10, 5 + EXACT_DELTA_MAX + 1, 51, 2, 0);
	assert_true(exact_mark_tick(&m, &in) == 5 + EXACT_DELTA_MAX + 1 + 8);
	/* A new threshold re-bases too. */
	in = in_at(20, 5 + EXACT_DELTA_MAX + 1, 52, 2, 0);
	assert_true(exact_mark_tick(&m, &in) == 5 + EXACT_DELTA_MAX + 1 + 18);
	/* Exceptions may pass their mark honestly (not capped). */
	memset(&m, 0, sizeof(m));
	in = in_at(3, 0, 50, 0, 0);
	in.capped = false;
	assert_int_equal(exact_mark_tick(&m, &in), 3);
	in.spent = 5;
	assert_int_equal(exact_mark_tick(&m, &in), 5);
	assert_int_equal(m.base, 0);
}

/*
 * The simulation: @rate calls a second (one each 1e6/@rate us), each
 * claiming as budget_claim does; the kernel counts passes per second; the
 * loader ticks every @tick_ms.  Over @secs seconds, checks every 10-s
 * window and returns the call index of the first refusal and the time
 * (ms) of the first pass after it.
 */
#define SIM_SECS	40
#define N		1000

struct sim {
	uint64_t per_sec[SIM_SECS + 1];	/* passes per second */
	uint64_t first_refused;		/* call index; 0: none */
	int64_t back_ms;		/* first pass after a refusal; -1: none */
	uint64_t passed;		/* in all */
};

static void simulate(unsigned int rate, unsigned int tick_ms, unsigned int phase_ms,
		     struct sim *s)
{
	const uint64_t sec0 = 1000;	/* ring second of t = 0 */
	struct exact_mark m = {};
	uint64_t spent = 0, upto = 0, idx = 0, us, step = 1000000 / rate;
	bool refused_seen = false;
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->back_ms = -1;
	for (us = 0; us < (uint64_t)SIM_SECS * 1000000; us += 10) {
		uint64_t sec = us / 1000000;

		/* The tick (and the strategy applied at t = phase). */
		if (us >= phase_ms * 1000ULL &&
		    (us - phase_ms * 1000ULL) % (tick_ms * 1000ULL) == 0) {
			uint64_t closed = 0;
			struct exact_in in;

			for (i = 1; i < 10; i++)
				if (sec >= i)
					closed += s->per_sec[sec - i];
			in = in_at(N, spent, sec0 + sec, closed, s->per_sec[sec]);
			upto = exact_mark_tick(&m, &in);
		}
		if (us % step || us < phase_ms * 1000ULL)
			continue;
		idx++;
		if (spent < upto) {
			spent++;
			s->per_sec[sec]++;
			s->passed++;
			if (refused_seen && s->back_ms < 0)
				s->back_ms = us / 1000;
		} else if (!refused_seen) {
			refused_seen = true;
			s->first_refused = idx;
		}
	}
	/* No 10-s window holds more than N. */
	for (i = 0; i + 10 <= SIM_SECS; i++) {
		uint64_t w = 0;
		unsigned int k;

		for (k = i; k < i + 10; k++)
			w += s->per_sec[k];
		assert_true(w <= N);
	}
}

static void test_sim_rates(void **state)
{
	static const unsigned int rates[] = { 1000, 10000, 100000 };
	static const unsigned int ticks[] = { 100, 1000 };
	struct sim s;
	unsigned int r, t;

	(void)state;
	for (r = 0; r < 3; r++)
		for (t = 0; t < 2; t++) {
			/* The strategy arrives 300 ms into second 0. */
			simulate(rates[r], ticks[t], 300, &s);
			/* Exactly N pass, then the N+1st is refused. */
			assert_int_equal(s.first_refused, N + 1);
			assert_int_equal(s.per_sec[0] + s.per_sec[1], N);
			/*
			 * Back once second 0 (or 1, at 1,000/s) has left the
			 * window: at the first tick of second 10 (11).
			 */
			if (rates[r] == 1000) {
				/* 1,000 calls take 1 s: passes span seconds 0 and 1. */
				assert_true(s.back_ms >= 10000);
				assert_true(s.back_ms < 10000 + (int64_t)ticks[t] + 1);
			} else {
				assert_true(s.back_ms >= 10000);
				assert_true(s.back_ms <= 10000 + (int64_t)ticks[t] + 1);
				assert_int_equal(s.per_sec[0], N);
			}
			/*
			 * Every 10 s a budget: 4 windows' worth over 40 s.  At
			 * 1,000/s the passes straddle seconds, and a pass after
			 * a second's last tick is counted twice until the next
			 * second's ticks (safe): with a 1-s tick that delays
			 * some of them by a second.
			 */
			if (rates[r] > 1000 || ticks[t] == 100)
				assert_int_equal(s.passed, 4 * N);
			else
				assert_true(s.passed > 3 * N && s.passed <= 4 * N);
		}
}

/* A spent visit budget is a visit trip, ahead of the later checks. */
static void test_chain_visit_full(void **state)
{
	struct sds_strategy st;
	struct chain_state cs = {};
	struct chain_input in = { .st = &st, .now_ns = 1000000000ULL };
	struct flag_state fs;

	(void)state;
	strategy_init(&st, "p");
	st.visit_threshold = 1000;
	st.exception_threshold = 1;
	in.window.visits = 1000;
	in.window.exceptions = 5;
	chain_eval(&cs, &in, &fs);
	assert_int_equal(fs.reason, SDS_REASON_EXCEPTION);
	in.visit_full = true;
	chain_eval(&cs, &in, &fs);
	assert_int_equal(fs.reason, SDS_REASON_VISIT);
	assert_true(fs.active & SDS_ACT_DOWNGRADE);
	/* Without a visit threshold the flag means nothing. */
	st.visit_threshold = -1;
	chain_eval(&cs, &in, &fs);
	assert_int_equal(fs.reason, SDS_REASON_EXCEPTION);
}

/*
 * Function points (capped false: every call counts, past the mark too):
 * a count past the mark is honest, no re-base, and the mark follows it;
 * `rebased` says which ticks re-based (their crossing stamps are cleared,
 * loader/tick/exact_fn.c): the first, a new threshold, a count gone back, a
 * dropped mark; never an ordinary tick.
 */
static void test_uncapped_and_rebased(void **state)
{
	struct exact_mark m = {};
	struct exact_in in;

	(void)state;
	in = in_at(1000, 0, 50, 0, 0);
	in.capped = false;
	assert_int_equal(exact_mark_tick(&m, &in), 1000);
	assert_true(m.rebased);
	/* 1,100 calls in the second: 100 past the mark, believed. */
	in.spent = 1100;
	assert_int_equal(exact_mark_tick(&m, &in), 1100);
	assert_false(m.rebased);
	assert_int_equal(m.base, 0);
	/* A new threshold re-bases at the count. */
	in.threshold = 2000;
	assert_int_equal(exact_mark_tick(&m, &in), 3100);
	assert_true(m.rebased);
	/* A count gone back is forged: re-based. */
	in.spent = 5;
	assert_int_equal(exact_mark_tick(&m, &in), 2005);
	assert_true(m.rebased);
	/* No threshold: no mark, and whatever was stamped goes. */
	in.threshold = -1;
	assert_int_equal(exact_mark_tick(&m, &in), UINT64_MAX);
	assert_true(m.rebased);
	/* Capped (guards): the same count past the mark is forged. */
	memset(&m, 0, sizeof(m));
	in = in_at(1000, 0, 50, 0, 0);
	exact_mark_tick(&m, &in);
	in.spent = 1100;
	assert_int_equal(exact_mark_tick(&m, &in), 2100);
	assert_true(m.rebased);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_rule_by_hand),
		cmocka_unit_test(test_rebase),
		cmocka_unit_test(test_sim_rates),
		cmocka_unit_test(test_chain_visit_full),
		cmocka_unit_test(test_uncapped_and_rebased),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
