// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/kernel/counters.c and loader/kernel/snapshot.c driven by a fake
 * counters source (no BPF): per-CPU ring slots and gauges summed into a
 * snapshot, seconds folded exactly once and in order (the heartbeat's
 * input), stale slots ignored, a failed read losing nothing, a complete
 * second read once (three rows a tick), chunked gauge reads, and the
 * snapshot pool's references.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <string.h>

#include "kernel/counters.h"
#include "kernel/snapshot.h"

#define NCPU	3
#define NPTS	130	/* more than two chunks of COUNTERS_CHUNK */

/* The fake kernel: rings and gauges by point, key slot and CPU. */
static struct sds_slot ring[NPTS][SDS_RING_SLOTS][NCPU];
static struct sds_gauge gauge[NPTS][NCPU];
static int rows;		/* ring rows read (calls of read_row) */
static int greads;	/* calls of read_gauges */
static bool fail;	/* the next reads fail */

/* The kernel's ring is second-major: row @idx, points [first, first + n). */
static int fake_row(void *ctx, int idx, int first, int n, struct sds_slot *out)
{
	int i;

	(void)ctx;
	rows++;
	assert_true(n >= 1 && n <= COUNTERS_ROW_CHUNK && first + n <= NPTS);
	if (fail) {
		errno = EIO;
		return -1;
	}
	for (i = 0; i < n; i++)
		memcpy(out + (size_t)i * NCPU, ring[first + i][idx],
		       sizeof(ring[0][0]));
	return 0;
}

static int fake_gauges(void *ctx, int first, int n, struct sds_gauge *g)
{
	(void)ctx;
	greads++;
	assert_true(n >= 1 && n <= COUNTERS_CHUNK && first + n <= NPTS);
	memcpy(g, gauge[first], (size_t)n * sizeof(gauge[0]));
	return 0;
}

static const struct counters_source src = {
	.read_row = fake_row,
	.read_gauges = fake_gauges,
	.ncpu = NCPU,
};

/* Point @p counted @visits (and @exc exceptions) in second @sec on @cpu. */
static void count(int p, int cpu, uint64_t sec, uint64_t visits, uint64_t exc)
{
	struct sds_slot *s = &ring[p][sec % SDS_RING_SLOTS][cpu];

	if (s->sec != sec)
		memset(s, 0, sizeof(*s));
	s->sec = sec;
	s->visits += visits;
	s->exceptions += exc;
}

/* What on_second saw. */
static struct {
	int n;
	int point[4096];
	uint64_t sec[4096];
	uint64_t visits[4096];
} seen;

static void on_second(void *ctx, int point, uint64_t sec,
		      const struct sds_counts *c)
{
	(void)ctx;
	assert_true(seen.n < 4096);
	seen.point[seen.n] = point;
	seen.sec[seen.n] = sec;
	seen.visits[seen.n] = c->visits;
	seen.n++;
}

static struct counters c;
static struct snap_pool pool;

static int setup(void **state)
{
	(void)state;
	memset(ring, 0, sizeof(ring));
	memset(gauge, 0, sizeof(gauge));
	memset(&seen, 0, sizeof(seen));
	rows = 0;
	greads = 0;
	fail = false;
	assert_int_equal(counters__init(&c, &src, NPTS, 1000), 0);
	memset(&pool, 0, sizeof(pool));
	pool.cap = NPTS;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	counters__free(&c);
	snap_pool__free(&pool);
	return 0;
}

static struct snapshot *snap(uint64_t now, bool do_fold)
{
	struct snapshot *s = snap_pool__take(&pool);

	assert_non_null(s);
	counters__snap(&c, now, (do_fold ? COUNTERS_FOLD : 0) | COUNTERS_GAUGES, s);
	return s;
}

/* CPUs add up; totals, window and per-second counts are exact. */
static void test_sums_over_cpus(void **state)
{
	struct snapshot *s;
	const struct point_stats *p;
	struct sds_counts w = {};

	(void)state;
	count(7, 0, 1000, 5, 1);
	count(7, 1, 1000, 6, 0);
	count(7, 2, 1003, 7, 2);
	count(7, 0, 1004, 1, 0);
	s = snap(1004, true);
	p = snapshot__point(s, 7);
	assert_non_null(p);
	assert_int_equal(p->total.visits, 19);
	assert_int_equal(p->total.exceptions, 3);
	assert_int_equal(p->window.visits, 19);
	assert_int_equal(p->secs[0].visits, 1);
	assert_int_equal(p->secs[1].visits, 7);
	assert_int_equal(p->secs[4].visits, 11);
	snapshot__sum(s, 7, 1003, 1004, &w);
	assert_int_equal(w.visits, 8);
	/* Other points: nothing. */
	assert_int_equal(snapshot__point(s, 8)->total.visits, 0);
	/* The first read: all 16 rows; gauges in chunks of 64 points. */
	assert_int_equal(rows, SDS_RING_SLOTS);
	assert_int_equal(greads, (NPTS + COUNTERS_CHUNK - 1) / COUNTERS_CHUNK);
}

/* A second two behind is complete: read once, never again. */
static void test_complete_seconds_read_once(void **state)
{
	struct snapshot *s;

	(void)state;
	count(4, 0, 1000, 5, 0);
	s = snap(1002, true);	/* 1000 is complete now */
	snapshot__put(s);
	assert_int_equal(rows, SDS_RING_SLOTS);
	/* A late write into a complete second is not seen (the kernel never
	 * does this: the test shows the row is not read again). */
	count(4, 1, 1000, 100, 0);
	count(4, 0, 1003, 1, 0);
	s = snap(1003, true);
	assert_int_equal(rows, SDS_RING_SLOTS + 3);	/* 1001, 1002, 1003 */
	assert_int_equal(snapshot__point(s, 4)->total.visits, 6);
	snapshot__put(s);
	s = snap(1003, true);
	assert_int_equal(rows, SDS_RING_SLOTS + 5);	/* 1002, 1003 */
	snapshot__put(s);
	/* Without COUNTERS_GAUGES no gauge is read. */
	s = snap_pool__take(&pool);
	counters__snap(&c, 1004, COUNTERS_FOLD, s);
	assert_false(snapshot__point(s, 4)->gauges);
	assert_int_equal(greads, 3 * ((NPTS + COUNTERS_CHUNK - 1) / COUNTERS_CHUNK));
}

/* Each complete second is folded once, in order, into its point. */
static void test_fold_once_in_order(void **state)
{
	struct snapshot *s;
	int i;

	(void)state;
	c.on_second = on_second;
	count(3, 1, 1000, 10, 0);
	count(3, 2, 1001, 20, 0);
	count(3, 0, 1002, 30, 0);
	s = snap(1003, true);	/* folds up to 1001 */
	snapshot__put(s);
	s = snap(1003, true);	/* nothing new */
	snapshot__put(s);
	s = snap(1004, true);	/* folds 1002 */
	assert_int_equal(snapshot__point(s, 3)->total.visits, 60);
	for (i = 0; i < seen.n; i++)
		if (seen.point[i] == 3)
			break;
	assert_true(i + 2 < seen.n);
	assert_int_equal(seen.sec[i], 1000);
	assert_int_equal(seen.visits[i], 10);
	assert_int_equal(seen.sec[i + 1], 1001);
	assert_int_equal(seen.visits[i + 1], 20);
	/* Every point's seconds go by: 2 at the first read, 1 at the third. */
	assert_int_equal(seen.n, NPTS * 3);
}

/* A query's read folds nothing and still shows every call. */
static void test_query_does_not_fold(void **state)
{
	struct snapshot *s;

	(void)state;
	c.on_second = on_second;
	count(0, 0, 1000, 4, 0);
	count(0, 1, 1005, 6, 0);
	s = snap(1005, false);
	assert_int_equal(seen.n, 0);
	assert_int_equal(snapshot__point(s, 0)->total.visits, 10);
	snapshot__put(s);
	s = snap(1005, true);
	assert_int_equal(snapshot__point(s, 0)->total.visits, 10);
	assert_int_equal(seen.n, NPTS * 4);	/* 1000..1003 */
}

/* Slots left from older seconds are not this ring's: not counted. */
static void test_stale_slots(void **state)
{
	struct snapshot *s;

	(void)state;
	count(1, 0, 1000, 9, 0);
	count(1, 0, 1000 + SDS_RING_SLOTS + 1, 2, 0);
	ring[1][1000 % SDS_RING_SLOTS][1].sec = 990;	/* an old second */
	ring[1][1000 % SDS_RING_SLOTS][1].visits = 100;
	s = snap(1000 + SDS_RING_SLOTS + 1, false);
	/* 1000 is 17 s old: out of the ring; 990 too. */
	assert_int_equal(snapshot__point(s, 1)->window.visits, 2);
	assert_int_equal(snapshot__point(s, 1)->secs[0].visits, 2);
}

/* A failed read marks the points unread and loses no second. */
static void test_failed_read_loses_nothing(void **state)
{
	struct snapshot *s;

	(void)state;
	count(2, 0, 1000, 3, 0);
	count(2, 0, 1001, 4, 0);
	fail = true;
	s = snap(1003, true);
	assert_null(snapshot__point(s, 2));
	snapshot__put(s);
	fail = false;
	s = snap(1004, true);
	assert_int_equal(snapshot__point(s, 2)->total.visits, 7);
}

/* Concurrency: entered - completed - dropped, never below 0. */
static void test_gauges(void **state)
{
	struct snapshot *s;
	const struct point_stats *p;

	(void)state;
	gauge[5][0].entered = 10;
	gauge[5][1].entered = 5;
	gauge[5][0].hist[3] = 6;
	gauge[5][2].hist[10] = 2;
	gauge[5][1].dropped = 1;
	/* A CPU read before its call began: ended before begun. */
	gauge[6][0].hist[0] = 4;
	s = snap(1001, true);
	p = snapshot__point(s, 5);
	assert_int_equal(p->completed, 8);
	assert_int_equal(p->dropped, 1);
	assert_int_equal(p->concurrency, 15 - 8 - 1);
	assert_int_equal(p->hist[3], 6);
	assert_int_equal(snapshot__point(s, 6)->concurrency, 0);
}

/* A held snapshot is never handed out again; put frees it. */
static void test_pool_refs(void **state)
{
	struct snapshot *a, *b, *all[SNAP_POOL];
	int i;

	(void)state;
	a = snap_pool__take(&pool);
	b = snap_pool__take(&pool);
	assert_ptr_not_equal(a, b);
	snapshot__get(a);
	snapshot__put(a);
	for (i = 0; i < SNAP_POOL - 2; i++)
		all[i] = snap_pool__take(&pool);
	assert_null(snap_pool__take(&pool));
	snapshot__put(a);
	assert_ptr_equal(snap_pool__take(&pool), a);
	assert_true(a->gen > b->gen);
	for (i = 0; i < SNAP_POOL - 2; i++)
		snapshot__put(all[i]);
}

/* Points beyond those tracked are not read; tracking only grows. */
static void test_track(void **state)
{
	struct snapshot *s;

	(void)state;
	counters__track(&c, 10);	/* fewer: ignored */
	assert_int_equal(c.npoints, NPTS);
	counters__free(&c);
	assert_int_equal(counters__init(&c, &src, 2, 1000), 0);
	s = snap(1001, true);
	assert_int_equal(s->npoints, 2);
	assert_int_equal(greads, 1);
	assert_null(snapshot__point(s, 2));
	/* New points: their seconds were never read, all rows again. */
	counters__track(&c, 65);
	snapshot__put(s);
	s = snap(1001, true);
	assert_int_equal(s->npoints, 65);
	assert_int_equal(rows, 2 * SDS_RING_SLOTS);
	assert_int_equal(greads, 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_sums_over_cpus, setup, teardown),
		cmocka_unit_test_setup_teardown(test_complete_seconds_read_once, setup, teardown),
		cmocka_unit_test_setup_teardown(test_fold_once_in_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_does_not_fold, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_slots, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_read_loses_nothing, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gauges, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pool_refs, setup, teardown),
		cmocka_unit_test_setup_teardown(test_track, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
