// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/keys/keys_period.c: a hot key's p99 over one
 * heartbeat period, from the kernel's cumulative per-key histogram less
 * the one marked as the last period closed (docs/KEYS.md).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "keys/keys.h"
#include "keys/keys_period.h"

static void key_int(struct keys_entry *e, uint64_t v)
{
	memset(e, 0, sizeof(*e));
	e->key.kind = SDS_KEY_INT;
	e->key.len = 8;
	memcpy(e->key.bytes, &v, sizeof(v));
}

/* Bucket i holds [2^i, 2^(i+1)) ns: its upper end is 2^(i+1) - 1. */
static void test_hist_percentile(void **state)
{
	uint32_t h[SDS_KEY_HIST] = { 0 };

	assert_int_equal(keys__hist_percentile(h, 99), 0);
	h[10] = 99;
	h[20] = 1;
	assert_int_equal(keys__hist_percentile(h, 99), (1 << 11) - 1);
	h[20] = 2;	/* 2 of 101 above: the 99th is in bucket 20 */
	assert_int_equal(keys__hist_percentile(h, 99), (1 << 21) - 1);
	assert_int_equal(keys__hist_percentile(h, 50), (1 << 11) - 1);
}

/*
 * Period 1: 1,000 calls of key 7 in bucket 20 (~1 ms).  Period 2: 1,000
 * more in bucket 10 (~1 us): its p99 is bucket 10's, not the cumulative
 * histogram's (which has half its calls in bucket 20).
 */
static void test_period_less_mark(void **state)
{
	struct keys_period kp = { 0 };
	struct keys_read r = { 0 };
	struct keys_entry e[2];

	key_int(&e[0], 7);
	key_int(&e[1], 8);
	e[0].hist[20] = 1000;
	e[1].hist[5] = 10;
	/* No mark yet: the whole histogram. */
	assert_int_equal(keys_period__percentile(&kp, &e[0], 99), (1 << 21) - 1);
	r.n = 2;
	r.e = e;
	keys_period__mark(&kp, &r, 5);
	assert_int_equal(kp.n, 2);
	assert_int_equal(kp.table, 5);
	e[0].hist[10] = 1000;
	assert_int_equal(keys_period__percentile(&kp, &e[0], 99), (1 << 11) - 1);
	/* Key 8: nothing completed in the period. */
	assert_int_equal(keys_period__percentile(&kp, &e[1], 99), 0);
	/* A key the mark lacks: all of its histogram. */
	{
		struct keys_entry n;

		key_int(&n, 9);
		n.hist[15] = 3;
		assert_int_equal(keys_period__percentile(&kp, &n, 99), (1 << 16) - 1);
	}
	/* A bucket that went back (evicted and back, a new table): all of it. */
	e[0].hist[20] = 1;
	e[0].hist[10] = 0;
	assert_int_equal(keys_period__percentile(&kp, &e[0], 99), (1 << 21) - 1);
	keys_period__free(&kp);
	assert_int_equal(kp.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hist_percentile),
		cmocka_unit_test(test_period_less_mark),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
