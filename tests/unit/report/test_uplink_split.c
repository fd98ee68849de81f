// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/report/uplink_split.c: each heartbeat period's
 * split is the difference of the kernel's sums marked at its first tick
 * and at the next period's; the first period since load takes the sums
 * whole; a period with an end unread sends none, and never a split of
 * zeros that would look like counts.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdlib.h>
#include <string.h>
#include "heartbeat/heartbeat.h"
#include "kernel/snapshot.h"
#include "report/uplink.h"

static struct uplink *u;

static int setup(void **state)
{
	u = calloc(1, sizeof(*u));
	return u ? 0 : -1;
}

static int teardown(void **state)
{
	free(u);
	return 0;
}

static void mark(uint64_t calls, uint64_t cpu, uint64_t rq, uint64_t bl, bool on)
{
	struct point_stats st;

	memset(&st, 0, sizeof(st));
	st.split = on;
	st.split_calls = calls;
	st.split_on_cpu_ns = cpu;
	st.split_runq_ns = rq;
	st.split_blocked_ns = bl;
	uplink_split__mark(u, 3, &st);
}

static struct sds_hb_point close_one(void)
{
	struct sds_hb_point hp;

	memset(&hp, 0, sizeof(hp));
	uplink_split__close(u, 3, &hp);
	return hp;
}

static void test_periods(void **state)
{
	struct sds_hb_point hp;

	/* The first period since load: the sums whole. */
	mark(20, 1000, 300, 200000, true);
	hp = close_one();
	assert_int_equal(hp.split_calls, 20);
	assert_int_equal(hp.split_on_cpu_ns, 1000);
	assert_int_equal(hp.split_runqueue_ns, 300);
	assert_int_equal(hp.split_blocked_ns, 200000);
	/* The next: the difference. */
	mark(25, 1500, 310, 260000, true);
	hp = close_one();
	assert_int_equal(hp.split_calls, 5);
	assert_int_equal(hp.split_on_cpu_ns, 500);
	assert_int_equal(hp.split_runqueue_ns, 10);
	assert_int_equal(hp.split_blocked_ns, 60000);
	/* No call in the period: nothing (the codec sends no fields). */
	mark(25, 1500, 310, 260000, true);
	hp = close_one();
	assert_int_equal(hp.split_calls, 0);
}

/* An unread end: no split that period, nor the next (its base unknown). */
static void test_unread(void **state)
{
	struct sds_hb_point hp;

	mark(20, 1000, 300, 200000, true);
	close_one();
	mark(0, 0, 0, 0, false);
	hp = close_one();
	assert_int_equal(hp.split_calls, 0);
	mark(30, 2000, 400, 300000, true);
	hp = close_one();
	assert_int_equal(hp.split_calls, 0);
	mark(31, 2100, 400, 310000, true);
	hp = close_one();
	assert_int_equal(hp.split_calls, 1);
	assert_int_equal(hp.split_blocked_ns, 10000);
}

/* Sums that went down are a new load's: no period of them. */
static void test_smaller(void **state)
{
	struct sds_hb_point hp;

	mark(20, 1000, 300, 200000, true);
	close_one();
	mark(4, 100, 30, 20000, true);
	hp = close_one();
	assert_int_equal(hp.split_calls, 0);
	mark(6, 150, 30, 30000, true);
	hp = close_one();
	assert_int_equal(hp.split_calls, 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_periods, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unread, setup, teardown),
		cmocka_unit_test_setup_teardown(test_smaller, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
