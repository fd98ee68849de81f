// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the drill part of libsds/guard.c: which passed calls an
 * error or delay drill hits, what it counts, and that an expired drill or
 * a dead loader's drill is ignored.  The region and clock of
 * guard_fixture.h, as test_guard.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <math.h>

#include "guard_fixture.h"

/* Publish a drill (and @extra SDS_ACT_* bits) as the loader does. */
static void drill(struct sds_flag *e, __u32 extra, __u32 kind, __u32 ratio,
		  uint64_t delay_ns, uint64_t expires_ns)
{
	struct flag_state fs = {
		.active = SDS_ACT_DRILL | extra,
		.concurrent_limit = -1,
		.drill_kind = kind,
		.drill_ratio = ratio,
		.drill_delay_ns = delay_ns,
		.drill_expires_ns = expires_ns,
	};

	flags__publish(&fr, point_of(e), &fs);
}

static unsigned int at(struct sds_flag *e, uint64_t now, uint64_t *rng,
		       uint64_t *delay)
{
	hdr->tick_ns = now;
	return sds_guard_decide_drill(e, C(e), hdr, NULL, now, rng, delay);
}

/* |hits - n p| within 5 standard deviations: fails once in ~3.5 million. */
static void assert_binomial(int hits, int n, int pct)
{
	double p = pct / 100.0, sd = sqrt(n * p * (1 - p));

	assert_true(fabs(hits - n * p) <= 5 * sd);
}

static void test_error_all(void **state)
{
	struct sds_flag *e = entry(0);
	uint64_t rng = 3, d;
	int i;

	drill(e, 0, SDS_DRILL_ERROR, 100, 0, T0 + NS);
	for (i = 0; i < 1000; i++)
		assert_int_equal(at(e, T0 + i, &rng, &d), SDS_G_FAULT);
	assert_int_equal(C(e)->drill_faults, 1000);
	assert_int_equal(C(e)->drill_delays, 0);
}

static void test_error_ratio(void **state)
{
	struct sds_flag *e = entry(1);
	uint64_t rng = 11, d;
	int i, hits = 0;

	drill(e, 0, SDS_DRILL_ERROR, 30, 0, T0 + NS);
	for (i = 0; i < 10000; i++)
		hits += at(e, T0, &rng, &d) == SDS_G_FAULT;
	assert_binomial(hits, 10000, 30);
	assert_int_equal(C(e)->drill_faults, hits);
}

static void test_ratio_zero(void **state)
{
	struct sds_flag *e = entry(2);
	uint64_t rng = 5, d;
	int i;

	drill(e, 0, SDS_DRILL_ERROR, 0, 0, T0 + NS);
	for (i = 0; i < 1000; i++)
		assert_int_equal(at(e, T0, &rng, &d), 0);
	assert_int_equal(C(e)->drill_faults, 0);
}

static void test_delay(void **state)
{
	struct sds_flag *e = entry(3);
	uint64_t rng = 9, d = 1;
	int i, hits = 0;

	drill(e, 0, SDS_DRILL_DELAY, 50, 50 * MS, T0 + NS);
	for (i = 0; i < 10000; i++) {
		unsigned int how = at(e, T0, &rng, &d);

		if (how == SDS_G_DELAY) {
			assert_int_equal(d, 50 * MS);
			hits++;
		} else {
			assert_int_equal(how, 0);
			assert_int_equal(d, 0);
		}
	}
	assert_binomial(hits, 10000, 50);
	assert_int_equal(C(e)->drill_delays, hits);
	assert_int_equal(C(e)->drill_faults, 0);
}

/* Whatever the entry says, a guard never sleeps beyond the loader's limit. */
static void test_delay_clamped(void **state)
{
	struct sds_flag *e = entry(9);
	uint64_t rng = 9, d = 0;

	drill(e, 0, SDS_DRILL_DELAY, 100, 1ULL << 63, T0 + NS);
	assert_int_equal(at(e, T0, &rng, &d), SDS_G_DELAY);
	assert_int_equal(d, SDS_DRILL_DELAY_MAX_NS);
	drill(e, 0, SDS_DRILL_DELAY, 100, SDS_DRILL_DELAY_MAX_NS, T0 + NS);
	assert_int_equal(at(e, T0, &rng, &d), SDS_G_DELAY);
	assert_int_equal(d, SDS_DRILL_DELAY_MAX_NS);
	assert_int_equal(C(e)->drill_delays, 2);
}

/* Nobody stopped it: the guard ignores it from its expiry on. */
static void test_expiry(void **state)
{
	struct sds_flag *e = entry(4);
	uint64_t rng = 1, d;

	drill(e, 0, SDS_DRILL_ERROR, 100, 0, T0 + 100 * MS);
	assert_int_equal(at(e, T0 + 100 * MS - 1, &rng, &d), SDS_G_FAULT);
	assert_int_equal(at(e, T0 + 100 * MS, &rng, &d), 0);
	assert_int_equal(at(e, T0 + 10 * NS, &rng, &d), 0);
	assert_int_equal(C(e)->drill_faults, 1);
}

/* A dead loader's drill is not obeyed either (fail-open). */
static void test_stale_loader(void **state)
{
	struct sds_flag *e = entry(5);
	uint64_t rng = 1, d;

	drill(e, 0, SDS_DRILL_ERROR, 100, 0, T0 + 100 * NS);
	hdr->tick_ns = T0;
	assert_int_equal(sds_guard_decide_drill(e, C(e), hdr, NULL, T0 + 3 * NS, &rng, &d), 0);
	assert_int_equal(C(e)->drill_faults, 0);
}

/* A downgraded call never reaches the dependency: no fault, no count. */
static void test_downgrade_first(void **state)
{
	struct sds_flag *e = entry(6);
	uint64_t rng = 1, d;

	drill(e, SDS_ACT_DOWNGRADE, SDS_DRILL_ERROR, 100, 0, T0 + NS);
	e->rate = 100;
	e->expires_ns = T0 + NS;
	assert_int_equal(at(e, T0, &rng, &d), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->drill_faults, 0);
}

/* A faulted call holds its permit like any passed call, till its end. */
static void test_fault_holds_permit(void **state)
{
	struct sds_flag *e = entry(7);
	uint64_t rng = 1, d;
	unsigned int how;

	drill(e, SDS_ACT_CONCURRENT, SDS_DRILL_ERROR, 100, 0, T0 + NS);
	e->concurrent_limit = 1;
	how = at(e, T0, &rng, &d);
	assert_int_equal(how, SDS_G_FAULT | SDS_G_PERMIT);
	assert_int_equal(at(e, T0, &rng, &d), SDS_G_DOWNGRADE);
	sds_guard_release(C(e), NULL, how | SDS_G_EXCEPTION);
	assert_int_equal(C(e)->permits, 0);
}

/* Without the drill bit the drill line is not even read. */
static void test_bit_off(void **state)
{
	struct sds_flag *e = entry(8);
	uint64_t rng = 1, d;

	drill(e, 0, SDS_DRILL_ERROR, 100, 0, T0 + NS);
	e->active = SDS_ACT_DOWNGRADE;	/* drill bit gone, downgrade lapsed */
	assert_int_equal(at(e, T0, &rng, &d), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_error_all),
		cmocka_unit_test(test_error_ratio),
		cmocka_unit_test(test_ratio_zero),
		cmocka_unit_test(test_delay),
		cmocka_unit_test(test_delay_clamped),
		cmocka_unit_test(test_expiry),
		cmocka_unit_test(test_stale_loader),
		cmocka_unit_test(test_downgrade_first),
		cmocka_unit_test(test_fault_holds_permit),
		cmocka_unit_test(test_bit_off),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
