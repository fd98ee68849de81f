// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Unit tests of common/window.c: ring sums and histogram percentiles. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <string.h>

#include "window.h"

#define NCPU 3

/* Slot of @cpu's ring that second @sec maps to, as the BPF side indexes. */
static struct sds_slot *slot_of(struct sds_slot *slots, int cpu, uint64_t sec)
{
	return &slots[cpu * SDS_RING_SLOTS + sec % SDS_RING_SLOTS];
}

/*
 * Three CPUs' rings for the window [991, 1000]:
 *  cpu0 wrote every second 985..1000: 1 visit, 100 ns each;
 *  cpu1 wrote the even seconds 992..1000 (10 visits, 1 exception each),
 *       its odd-second slots of the window are stale, 16 s old, with 1000
 *       visits each, and seconds 985..990 hold 7 visits each;
 *  cpu2 has rolled into second 1001 already (5000 visits, same slot as
 *       985), holds 995 with 2 visits, 3 timeouts, 4 downgrades, and the
 *       rest never written (sec 0).
 */
static void fill_rings(struct sds_slot *slots)
{
	uint64_t s;

	memset(slots, 0, sizeof(struct sds_slot) * NCPU * SDS_RING_SLOTS);
	for (s = 985; s <= 1000; s++) {
		struct sds_slot *p = slot_of(slots, 0, s);

		p->sec = s;
		p->visits = 1;
		p->latency_sum = 100;
	}
	for (s = 985; s <= 1000; s++) {
		struct sds_slot *p = slot_of(slots, 1, s);

		if (s <= 990) {
			p->sec = s;
			p->visits = 7;
		} else if (s % 2 == 0) {
			p->sec = s;
			p->visits = 10;
			p->exceptions = 1;
		} else {
			p->sec = s - 16;
			p->visits = 1000;
			p->exceptions = 1000;
			p->latency_sum = 1000;
		}
	}
	slot_of(slots, 2, 1001)->sec = 1001;
	slot_of(slots, 2, 1001)->visits = 5000;
	slot_of(slots, 2, 1001)->timeouts = 5000;
	slot_of(slots, 2, 995)->sec = 995;
	slot_of(slots, 2, 995)->visits = 2;
	slot_of(slots, 2, 995)->timeouts = 3;
	slot_of(slots, 2, 995)->downgrades = 4;
}

static void test_window_sum_three_cpus(void **state)
{
	struct sds_slot slots[NCPU * SDS_RING_SLOTS];
	struct sds_counts c;

	fill_rings(slots);
	memset(&c, 0, sizeof(c));
	window_sum(slots, NCPU * SDS_RING_SLOTS, 991, 1000, &c);
	/* cpu0 10 + cpu1 5 x 10 + cpu2 2 */
	assert_int_equal(c.visits, 62);
	assert_int_equal(c.exceptions, 5);
	assert_int_equal(c.timeouts, 3);
	assert_int_equal(c.downgrades, 4);
	assert_int_equal(c.latency_sum, 1000);
}

static void test_window_sum_adds(void **state)
{
	struct sds_slot slots[NCPU * SDS_RING_SLOTS];
	struct sds_counts c = { 1, 2, 3, 4, 5 };

	fill_rings(slots);
	window_sum(slots, NCPU * SDS_RING_SLOTS, 991, 1000, &c);
	assert_int_equal(c.visits, 63);
	assert_int_equal(c.exceptions, 7);
	assert_int_equal(c.timeouts, 6);
	assert_int_equal(c.downgrades, 8);
	assert_int_equal(c.latency_sum, 1005);
}

static void test_window_sum_ranges(void **state)
{
	struct sds_slot slots[NCPU * SDS_RING_SLOTS];
	struct sds_counts c;

	fill_rings(slots);

	/* One second: cpu0 1, cpu1 10, cpu2 2. */
	memset(&c, 0, sizeof(c));
	window_sum(slots, NCPU * SDS_RING_SLOTS, 995, 995, &c);
	assert_int_equal(c.visits, 3);
	memset(&c, 0, sizeof(c));
	window_sum(slots, NCPU * SDS_RING_SLOTS, 996, 996, &c);
	assert_int_equal(c.visits, 11);
	assert_int_equal(c.exceptions, 1);

	/* Stale seconds 975..983 of cpu1, when asked for, are real. */
	memset(&c, 0, sizeof(c));
	window_sum(slots, NCPU * SDS_RING_SLOTS, 975, 984, &c);
	assert_int_equal(c.visits, 5 * 1000);
	assert_int_equal(c.latency_sum, 5 * 1000);

	/* Everything: 16 + 6 x 7 + 50 + 5000 stale + 5000 + 2. */
	memset(&c, 0, sizeof(c));
	window_sum(slots, NCPU * SDS_RING_SLOTS, 1, UINT64_MAX, &c);
	assert_int_equal(c.visits, 16 + 42 + 50 + 5000 + 5000 + 2);
	assert_int_equal(c.timeouts, 5003);

	/* Up to the future second only: cpu2's 1001 alone. */
	memset(&c, 0, sizeof(c));
	window_sum(slots, NCPU * SDS_RING_SLOTS, 1001, 1010, &c);
	assert_int_equal(c.visits, 5000);

	/* Nothing in range, and no slots at all. */
	memset(&c, 0, sizeof(c));
	window_sum(slots, NCPU * SDS_RING_SLOTS, 2000, 2009, &c);
	assert_int_equal(c.visits, 0);
	window_sum(slots, 0, 0, UINT64_MAX, &c);
	assert_int_equal(c.visits, 0);
	assert_int_equal(c.latency_sum, 0);
}

static void test_window_sum_order_free(void **state)
{
	struct sds_slot slots[NCPU * SDS_RING_SLOTS], rev[NCPU * SDS_RING_SLOTS];
	struct sds_counts c;
	size_t i, n = NCPU * SDS_RING_SLOTS;

	fill_rings(slots);
	for (i = 0; i < n; i++)
		rev[i] = slots[n - 1 - i];
	memset(&c, 0, sizeof(c));
	window_sum(rev, n, 991, 1000, &c);
	assert_int_equal(c.visits, 62);
	assert_int_equal(c.exceptions, 5);
}

static void test_counts_add(void **state)
{
	struct sds_counts a = { 1, 2, 3, 4, 5 };
	struct sds_counts b = { 10, 20, 30, 40, 50 };

	window_counts_add(&a, &b);
	assert_int_equal(a.visits, 11);
	assert_int_equal(a.exceptions, 22);
	assert_int_equal(a.timeouts, 33);
	assert_int_equal(a.downgrades, 44);
	assert_int_equal(a.latency_sum, 55);
	assert_int_equal(b.visits, 10);
}

static void test_hist_bucket(void **state)
{
	assert_int_equal(window_hist_bucket(0), 0);
	assert_int_equal(window_hist_bucket(1), 0);
	assert_int_equal(window_hist_bucket(2), 1);
	assert_int_equal(window_hist_bucket(3), 1);
	assert_int_equal(window_hist_bucket(4), 2);
	assert_int_equal(window_hist_bucket(7), 2);
	assert_int_equal(window_hist_bucket(8), 3);
	assert_int_equal(window_hist_bucket(1023), 9);
	assert_int_equal(window_hist_bucket(1024), 10);
	assert_int_equal(window_hist_bucket(1000000), 19);
	assert_int_equal(window_hist_bucket(1ULL << 62), 62);
	assert_int_equal(window_hist_bucket(1ULL << 63), 63);
	assert_int_equal(window_hist_bucket(UINT64_MAX), 63);
}

static void test_hist_total(void **state)
{
	uint64_t h[SDS_HIST_BUCKETS] = { 0 };

	assert_int_equal(window_hist_total(h, SDS_HIST_BUCKETS), 0);
	h[0] = 1;
	h[10] = 20;
	h[63] = 300;
	assert_int_equal(window_hist_total(h, SDS_HIST_BUCKETS), 321);
	assert_int_equal(window_hist_total(h, 11), 21);
	assert_int_equal(window_hist_total(h, 0), 0);
}

static void test_hist_percentile_empty(void **state)
{
	uint64_t h[SDS_HIST_BUCKETS] = { 0 };

	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 50), 0);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 100), 0);
	assert_int_equal(window_hist_percentile(h, 0, 99), 0);
}

static void test_hist_percentile_one_bucket(void **state)
{
	uint64_t h[SDS_HIST_BUCKETS] = { 0 };

	/* 100 samples in [1024, 2048), spread evenly. */
	h[10] = 100;
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 25), 1280);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 50), 1536);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 75), 1792);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 1), 1034);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 100), 2048);
}

static void test_hist_percentile_two_buckets(void **state)
{
	uint64_t h[SDS_HIST_BUCKETS] = { 0 };

	/* 50 in [8, 16), 50 in [32, 64). */
	h[3] = 50;
	h[5] = 50;
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 10), 9);	/* 8 + 8 * 10/50 */
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 50), 16);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 75), 48);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 90), 57);	/* 32 + 32 * 40/50 */
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 99), 63);	/* 32 + 32 * 49/50 */
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 100), 64);
}

static void test_hist_percentile_skewed(void **state)
{
	uint64_t h[SDS_HIST_BUCKETS] = { 0 };

	/* 900 in [256, 512), 90 in [4096, 8192), 10 in [2^20, 2^21). */
	h[8] = 900;
	h[12] = 90;
	h[20] = 10;
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 50), 398);	/* 256 + 256 * 500/900 */
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 90), 512);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 99), 8192);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 99.5), 1572864);	/* 2^20 + 2^20 * 5/10 */
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 100), 2097152);
}

static void test_hist_percentile_edges(void **state)
{
	uint64_t h[SDS_HIST_BUCKETS] = { 0 };

	/* Bucket 0 is [1, 2) for interpolation (0 and 1 land there). */
	h[0] = 4;
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 50), 1);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 100), 2);

	/* The top bucket: its upper bound does not fit, so it saturates. */
	memset(h, 0, sizeof(h));
	h[63] = 2;
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 50),
			 (1ULL << 63) + (1ULL << 62));
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 100), UINT64_MAX);

	/* Out-of-range percentiles are clamped to (0, 100]. */
	memset(h, 0, sizeof(h));
	h[4] = 10;
	h[6] = 10;
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 150), 128);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, 0), 16);
	assert_int_equal(window_hist_percentile(h, SDS_HIST_BUCKETS, -5), 16);

	/* Only the first nbuckets count. */
	assert_int_equal(window_hist_percentile(h, 5, 100), 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_sum_three_cpus),
		cmocka_unit_test(test_window_sum_adds),
		cmocka_unit_test(test_window_sum_ranges),
		cmocka_unit_test(test_window_sum_order_free),
		cmocka_unit_test(test_counts_add),
		cmocka_unit_test(test_hist_bucket),
		cmocka_unit_test(test_hist_total),
		cmocka_unit_test(test_hist_percentile_empty),
		cmocka_unit_test(test_hist_percentile_one_bucket),
		cmocka_unit_test(test_hist_percentile_two_buckets),
		cmocka_unit_test(test_hist_percentile_skewed),
		cmocka_unit_test(test_hist_percentile_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
