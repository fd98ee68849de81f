// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the guard's side of exact trips (libsds/guard_budget.h,
 * docs/PROTOCOL.md "Exact trips"), on the region of guard_fixture.h:
 * exactly visit_upto - visit_spent passes under contending threads, the
 * claim taken last (a call the semaphore refuses spends nothing), the
 * exception mark and the loader's downgrade (its dial decides), forged
 * counts and a stale loader failing open.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <pthread.h>

#include "guard_fixture.h"

/* Publish @c with the marks, stored first as the loader does. */
static void publish_marks(struct sds_flag *e, struct cfg *c, __u64 visit,
			  __u64 exc)
{
	e->visit_upto = visit;
	e->exc_upto = exc;
	e->slow_upto = UINT64_MAX;
	c->active |= SDS_ACT_BUDGET;
	publish(e, c);
}

#define THREADS	8
#define CALLS	500
#define BUDGET	1000

struct racer {
	struct sds_flag *e;	/* the entry */
	int passed;		/* calls that passed */
};

static void *racer_run(void *arg)
{
	struct racer *r = arg;
	uint64_t rng = 0;
	unsigned int how;
	int i;

	for (i = 0; i < CALLS; i++) {
		how = sds_guard_decide(r->e, C(r->e), hdr, NULL, T0, &rng);
		if (!(how & SDS_G_DOWNGRADE)) {
			r->passed++;
			sds_guard_release(C(r->e), NULL, how);
		}
	}
	return NULL;
}

static void test_visit_exact_threads(void **state)
{
	struct cfg c = { 0 };
	struct sds_flag *e = entry(3);
	struct racer r[THREADS];
	pthread_t t[THREADS];
	int i, passed = 0;

	C(e)->visit_spent = 5000;
	publish_marks(e, &c, 5000 + BUDGET, UINT64_MAX);
	for (i = 0; i < THREADS; i++) {
		r[i] = (struct racer){ .e = e };
		assert_int_equal(pthread_create(&t[i], NULL, racer_run, &r[i]), 0);
	}
	for (i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		passed += r[i].passed;
	}
	assert_int_equal(passed, BUDGET);
	assert_int_equal(C(e)->visit_spent, 5000 + BUDGET);
}

static void test_claim_last(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 2 };
	struct sds_flag *e = entry(4);
	uint64_t rng = 0;
	unsigned int a, b;

	publish_marks(e, &c, 10, UINT64_MAX);
	a = decide_at(e, T0, &rng);
	b = decide_at(e, T0, &rng);
	assert_int_equal(a, SDS_G_PERMIT);
	assert_int_equal(b, SDS_G_PERMIT);
	/* Refused by the semaphore: spends no pass. */
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->visit_spent, 2);
	sds_guard_release(C(e), NULL, a);
	sds_guard_release(C(e), NULL, b);
	/* A budget of 2 left after 8 more passes ... */
	C(e)->visit_spent = 8;
	a = decide_at(e, T0, &rng);
	b = decide_at(e, T0, &rng);
	assert_int_equal(a | b, SDS_G_PERMIT);
	sds_guard_release(C(e), NULL, a);
	sds_guard_release(C(e), NULL, b);
	/* ... then none: refused before the semaphore, which stays free. */
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->permits, 0);
	assert_int_equal(C(e)->visit_spent, 10);
	assert_int_equal(C(e)->refused_concurrent, 1);
}

static void test_exception_mark(void **state)
{
	struct cfg c = { 0 };
	struct sds_flag *e = entry(5);
	uint64_t rng = 0;

	publish_marks(e, &c, UINT64_MAX, 3);
	C(e)->exc_spent = 2;
	assert_int_equal(decide_at(e, T0, &rng), 0);
	C(e)->exc_spent = 3;	/* the 3rd exception: the next call is refused */
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	C(e)->exc_spent = 9;	/* honest guards may overshoot the mark */
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	/* The visit count is not touched when there is no visit mark. */
	assert_int_equal(C(e)->visit_spent, 0);
	/* The loader's downgrade in force: its dial decides (rate 0: pass). */
	c = (struct cfg){ .active = SDS_ACT_DOWNGRADE, .rate = 0,
			  .expires_ns = T0 + NS };
	publish_marks(e, &c, UINT64_MAX, 3);
	assert_int_equal(decide_at(e, T0, &rng), 0);
}

/*
 * While the loader's downgrade is in force, its dial decides: a call it
 * lets through passes even with no pass left, and claims one while there
 * are, so the count keeps up with the passes.
 */
static void test_dial_decides_when_tripped(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE, .rate = 0,
			 .expires_ns = T0 + NS };
	struct sds_flag *e = entry(8);
	uint64_t rng = 0;
	int i;

	publish_marks(e, &c, 3, UINT64_MAX);
	for (i = 0; i < 5; i++)
		assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(C(e)->visit_spent, 3);
	/* The downgrade expired: the mark refuses again. */
	assert_int_equal(decide_at(e, T0 + NS, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->visit_spent, 3);
}

static void test_forged_and_stale(void **state)
{
	struct cfg c = { 0 };
	struct sds_flag *e = entry(6);
	uint64_t rng = 0;

	publish_marks(e, &c, 100, 10);
	/* Above the visit mark: no claim put it there; fail open. */
	C(e)->visit_spent = 105;
	assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(C(e)->visit_spent, 105);
	/* Exceptions far past their mark: forged; fail open. */
	C(e)->visit_spent = 0;
	C(e)->exc_spent = 10 + (1ULL << 33);
	assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(C(e)->visit_spent, 1);
	/* A spent budget under a dead loader is not obeyed. */
	C(e)->exc_spent = 0;
	C(e)->visit_spent = 100;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	hdr->tick_ns = T0;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL,
					  T0 + 100 * MS + SDS_STALE_NS + 1, &rng), 0);
	/* Without SDS_ACT_BUDGET the marks are not read. */
	c = (struct cfg){ 0 };
	publish(e, &c);
	assert_int_equal(decide_at(e, T0, &rng), 0);
}

/*
 * No whole line 1 (the loader preempted in the middle of its write): the
 * budgets still hold while the loader is alive -- else one call too many.
 */
static void test_seq_odd_keeps_budget(void **state)
{
	struct cfg c = { 0 };
	struct sds_flag *e = entry(9);
	uint64_t rng = 0;

	publish_marks(e, &c, 2, 3);
	e->seq++;		/* odd: the loader is writing */
	assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(C(e)->visit_spent, 2);
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->visit_spent, 2);
	/* The exception mark too. */
	e->visit_upto = 10;
	C(e)->exc_spent = 3;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	C(e)->exc_spent = 2;
	assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(C(e)->visit_spent, 3);
	/* A dead loader's marks are not obeyed, line or no line. */
	C(e)->exc_spent = 3;
	hdr->tick_ns = T0;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL,
					  T0 + 100 * MS + SDS_STALE_NS + 1, &rng), 0);
	/* Marks without SDS_ACT_BUDGET (old or new line) are not read. */
	e->seq++;
	c = (struct cfg){ 0 };
	publish(e, &c);
	e->seq++;
	assert_int_equal(decide_at(e, T0, &rng), 0);
	e->seq++;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_visit_exact_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_claim_last, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exception_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dial_decides_when_tripped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_forged_and_stale, setup, teardown),
		cmocka_unit_test_setup_teardown(test_seq_odd_keeps_budget, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
