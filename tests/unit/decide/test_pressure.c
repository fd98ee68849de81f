// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/decide/pressure.c: the share of time stalled over
 * a window from PSI samples, and a rule's firing and clearing with
 * hysteresis (docs/PRESSURE.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "decide/pressure.h"

#define MS	1000000ULL	/* ns */

static struct pressure_ring ring;

static int setup(void **state)
{
	(void)state;
	memset(&ring, 0, sizeof(ring));
	return 0;
}

/* Samples every @step_ms from @from_ms to @to_ms, stalled @pct % of it. */
static uint64_t feed(uint64_t from_ms, uint64_t to_ms, uint64_t step_ms,
		     uint64_t pct, uint64_t some_us)
{
	uint64_t t;

	for (t = from_ms; t <= to_ms; t += step_ms) {
		pressure_ring__add(&ring, t * MS, some_us, 0);
		some_us += step_ms * 1000 * pct / 100;
	}
	return some_us - step_ms * 1000 * pct / 100;
}

static struct sds_pressure_rule rule(int64_t above, int64_t below,
				     int64_t for_ms, int64_t clear_ms)
{
	struct sds_pressure_rule r = {
		.resource = SDS_PSI_CPU, .kind = SDS_PSI_SOME,
		.action = SDS_PRESSURE_DOWNGRADE, .priority = SDS_PRIO_LOW,
		.above_pct = above, .below_pct = below,
		.for_ms = for_ms, .clear_ms = clear_ms,
	};
	return r;
}

static void test_pct_exact(void **state)
{
	(void)state;
	/* 100 ms samples, 30 % stalled, 3 s of them. */
	feed(1000, 4000, 100, 30, 5000);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 1000 * MS, 0), 3000);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 3000 * MS, 0), 3000);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_FULL, 1000 * MS, 0), 0);
	/* More than the ring covers: not judged. */
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 3001 * MS, 0), -1);
	/* A bad kind or window is no share. */
	assert_int_equal(pressure_ring__pct(&ring, 7, 1000 * MS, 0), -1);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 0, 0), -1);
}

static void test_pct_window_is_recent(void **state)
{
	uint64_t us;

	(void)state;
	/* 2 s idle, then 1 s at 100 %: the last second is all stalled, the last 2 s half. */
	us = feed(0, 2000, 100, 0, 0);
	feed(2100, 3000, 100, 100, us + 100000);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 1000 * MS, 0), 10000);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 2000 * MS, 0), 5000);
}

static void test_samples_throttled(void **state)
{
	(void)state;
	pressure_ring__add(&ring, 1000 * MS, 0, 0);
	/* A 1-ms tick: only every 50 ms is kept. */
	pressure_ring__add(&ring, 1001 * MS, 1000, 0);
	pressure_ring__add(&ring, 1049 * MS, 2000, 0);
	assert_int_equal(ring.n, 1);
	pressure_ring__add(&ring, 1050 * MS, 50000, 0);
	assert_int_equal(ring.n, 2);
	/* The ring wraps, and keeps covering 12.8 s. */
	feed(1100, 1100 + 300 * 50, 50, 10, 60000);
	assert_int_equal(ring.n, PRESSURE_SAMPLES);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 10000 * MS, 0), 1000);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 12800 * MS, 0), -1);
}

static void test_total_back_empties(void **state)
{
	(void)state;
	feed(0, 2000, 100, 50, 1000000);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 1000 * MS, 0), 5000);
	/* A total that goes back is no kernel's: nothing is judged from it. */
	pressure_ring__add(&ring, 2100 * MS, 10, 0);
	assert_int_equal(ring.n, 1);
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 100 * MS, 0), -1);
}

static void test_stall_above_wall_clamped(void **state)
{
	(void)state;
	pressure_ring__add(&ring, 0, 0, 0);
	pressure_ring__add(&ring, 1000 * MS, 1200000, 0);	/* 120 %: clocks differ */
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 1000 * MS, 0), 10000);
}

static void test_rule_fires_and_clears(void **state)
{
	struct sds_pressure_rule r = rule(40, 20, 2000, 1000);
	struct pressure_state s = { 0 };
	uint64_t us, t;
	int fired_at = -1, cleared_at = -1;

	(void)state;
	/* 3 s idle: the window is covered, nothing fires. */
	us = feed(0, 3000, 100, 0, 0);
	assert_false(pressure_state__step(&s, &r, &ring, 3000 * MS));
	assert_false(s.firing);
	assert_int_equal(s.pct_bp, 0);
	/* Then 100 % stalled: over 2 s the share passes 40 % after 0.8 s. */
	for (t = 3100; t <= 6000; t += 100) {
		us += 100000;
		pressure_ring__add(&ring, t * MS, us, 0);
		if (pressure_state__step(&s, &r, &ring, t * MS) && fired_at < 0)
			fired_at = (int)(t - 3000);
	}
	assert_int_equal(fired_at, 900);	/* 900 ms of 2000: 45 % > 40 % */
	assert_true(s.firing);
	assert_int_equal(s.fired, 1);
	assert_int_equal(s.since_ns, 3900 * MS);
	/* Idle again: over clear_ms 1 s it falls to 20 % after 0.8 s. */
	for (t = 6100; t <= 7000 && cleared_at < 0; t += 100) {
		pressure_ring__add(&ring, t * MS, us, 0);
		if (pressure_state__step(&s, &r, &ring, t * MS))
			cleared_at = (int)(t - 6000);
	}
	assert_int_equal(cleared_at, 800);	/* 200 ms of 1000: 20 % <= 20 % */
	assert_false(s.firing);
	assert_int_equal(s.fired, 1);
	/*
	 * The 2-s window still holds 1.2 s of the stall it cleared from:
	 * judged from samples since the clear only, nothing fires again.
	 */
	assert_int_equal(pressure_ring__pct(&ring, SDS_PSI_SOME, 2000 * MS, 0), 6000);
	for (t = 6900; t <= 8000; t += 100) {
		pressure_ring__add(&ring, t * MS, us, 0);
		assert_false(pressure_state__step(&s, &r, &ring, t * MS));
	}
	/* A stall again: judged over 2 s since the clear at 6.8 s. */
	for (t = 8100; t <= 8800; t += 100) {
		us += 100000;
		pressure_ring__add(&ring, t * MS, us, 0);
		assert_false(pressure_state__step(&s, &r, &ring, t * MS));
	}
	assert_int_equal(s.pct_bp, 4000);	/* 0.8 s of 6.8..8.8: at, not above */
	us += 100000;
	pressure_ring__add(&ring, 8900 * MS, us, 0);
	assert_true(pressure_state__step(&s, &r, &ring, 8900 * MS));
	assert_int_equal(s.pct_bp, 4500);
	assert_int_equal(s.fired, 2);
}

static void test_rule_hysteresis(void **state)
{
	struct sds_pressure_rule r = rule(40, 20, 1000, 1000);
	struct pressure_state s = { 0 };
	uint64_t us, t;

	(void)state;
	us = feed(0, 1000, 100, 50, 0);
	assert_true(pressure_state__step(&s, &r, &ring, 1000 * MS));
	assert_true(s.firing);
	/* 30 %: below the threshold, above below_pct: it stays firing. */
	for (t = 1100; t <= 4000; t += 100) {
		us += 30000;
		pressure_ring__add(&ring, t * MS, us, 0);
		assert_false(pressure_state__step(&s, &r, &ring, t * MS));
		assert_true(s.firing);
	}
	assert_int_equal(s.pct_bp, 3000);
	/* At exactly 40 % a clear rule does not fire again: above, not at. */
	s.firing = false;
	for (t = 4100; t <= 6000; t += 100) {
		us += 40000;
		pressure_ring__add(&ring, t * MS, us, 0);
	}
	assert_false(pressure_state__step(&s, &r, &ring, 6000 * MS));
	assert_false(s.firing);
}

static void test_rule_needs_a_window(void **state)
{
	struct sds_pressure_rule r = rule(10, 5, 5000, 1000);
	struct pressure_state s = { 0 };

	(void)state;
	/* 2 s at 100 % do not cover a 5-s window: nothing judged yet. */
	feed(0, 2000, 100, 100, 0);
	assert_false(pressure_state__step(&s, &r, &ring, 2000 * MS));
	assert_false(s.firing);
	assert_int_equal(s.pct_bp, -1);
	/* A firing rule whose samples went away stands: the caller drops it. */
	s.firing = true;
	memset(&ring, 0, sizeof(ring));
	assert_false(pressure_state__step(&s, &r, &ring, 3000 * MS));
	assert_true(s.firing);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_pct_exact, setup),
		cmocka_unit_test_setup(test_pct_window_is_recent, setup),
		cmocka_unit_test_setup(test_samples_throttled, setup),
		cmocka_unit_test_setup(test_total_back_empties, setup),
		cmocka_unit_test_setup(test_stall_above_wall_clamped, setup),
		cmocka_unit_test_setup(test_rule_fires_and_clears, setup),
		cmocka_unit_test_setup(test_rule_hysteresis, setup),
		cmocka_unit_test_setup(test_rule_needs_a_window, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
