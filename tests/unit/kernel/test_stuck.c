// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/kernel/stuck.c: which calls in flight are stuck at
 * a read (docs/LIMITS.md "Stuck calls"): a call is stuck once it is older
 * than its point's timeout (the kernel's own test at a return, lat >
 * timeout), counts while it is at most SDS_WINDOW_S past it, and counts
 * no more (expired) after that or when its point has no timeout; and the
 * tally of a chunk of entries per point.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "kernel/stuck.h"

#define MS	1000000ULL
#define SEC	1000000000ULL
#define NOW	(1000 * SEC)

/* The edges: at the timeout not yet, 1 ns past it stuck; window + timeout exactly still. */
static void test_classify_edges(void **state)
{
	(void)state;
	assert_int_equal(stuck_classify(NOW, NOW, 300 * MS), STUCK_YOUNG);
	assert_int_equal(stuck_classify(NOW - 300 * MS, NOW, 300 * MS), STUCK_YOUNG);
	assert_int_equal(stuck_classify(NOW - 300 * MS - 1, NOW, 300 * MS),
			 STUCK_COUNTED);
	assert_int_equal(stuck_classify(NOW - 300 * MS - SDS_WINDOW_S * SEC, NOW,
					300 * MS), STUCK_COUNTED);
	assert_int_equal(stuck_classify(NOW - 300 * MS - SDS_WINDOW_S * SEC - 1,
					NOW, 300 * MS), STUCK_EXPIRED);
}

/* Entered after the read's clock (another CPU): young, never stuck. */
static void test_classify_future(void **state)
{
	(void)state;
	assert_int_equal(stuck_classify(NOW + 5, NOW, 1), STUCK_YOUNG);
	assert_int_equal(stuck_classify(UINT64_MAX, NOW, 300 * MS), STUCK_YOUNG);
}

/* A point without a timeout (removed since the call entered): expired. */
static void test_classify_no_timeout(void **state)
{
	(void)state;
	assert_int_equal(stuck_classify(NOW - 5 * SEC, NOW, 0), STUCK_EXPIRED);
	assert_int_equal(stuck_classify(NOW, NOW, 0), STUCK_EXPIRED);
}

/* Per point, by each point's own timeout; bad ids and expired ones out. */
static void test_tally(void **state)
{
	const uint64_t timeout[3] = { 300 * MS, 2 * SEC, 0 };
	const struct stuck_entry e[] = {
		{ 0, NOW - 100 * MS },		/* young */
		{ 0, NOW - 301 * MS },		/* stuck */
		{ 0, NOW - 5 * SEC },		/* stuck */
		{ 0, NOW - 11 * SEC },		/* expired: 10.7 s past the timeout */
		{ 1, NOW - 1 * SEC },		/* young for 2 s */
		{ 1, NOW - 3 * SEC },		/* stuck */
		{ 2, NOW - 3 * SEC },		/* no timeout: expired */
		{ 7, NOW - 3 * SEC },		/* no such point */
	};
	uint32_t counts[3] = { 0 };

	(void)state;
	assert_int_equal(stuck_tally(e, 8, NOW, timeout, 3, counts), 3);
	assert_int_equal(counts[0], 2);
	assert_int_equal(counts[1], 1);
	assert_int_equal(counts[2], 0);
	/* A second chunk adds to the counts. */
	assert_int_equal(stuck_tally(e + 1, 1, NOW, timeout, 3, counts), 1);
	assert_int_equal(counts[0], 3);
}

/*
 * A call's life at 100-ms reads: young until the first read past its
 * timeout, then stuck at every read for SDS_WINDOW_S, then expired: it
 * counts at SDS_WINDOW_S * 10 reads, once each.
 */
static void test_life(void **state)
{
	const uint64_t entered = NOW + 37 * MS;
	uint64_t t;
	int stuck = 0, first = -1, i;

	(void)state;
	for (i = 0, t = NOW; i < 200; i++, t += 100 * MS) {
		enum stuck_class k = stuck_classify(entered, t, 300 * MS);

		if (k == STUCK_COUNTED) {
			if (first < 0)
				first = i;
			stuck++;
		}
		if (first >= 0 && k != STUCK_COUNTED)
			assert_int_equal(k, STUCK_EXPIRED);
	}
	/* 337 ms after NOW is passed at the read at 400 ms. */
	assert_int_equal(first, 4);
	assert_int_equal(stuck, SDS_WINDOW_S * 10);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classify_edges),
		cmocka_unit_test(test_classify_future),
		cmocka_unit_test(test_classify_no_timeout),
		cmocka_unit_test(test_tally),
		cmocka_unit_test(test_life),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
