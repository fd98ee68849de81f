// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * bench-guard conc and token: whether concurrent_threshold and
 * token_rate are exact with two threads contending (usage: guard.c).
 */
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sds.h>
#include "bench_guard.h"

/* ---- a spinning barrier (lock-step rounds need less than a futex) ------ */

struct spin_barrier {
	unsigned int n;
	unsigned int count;	/* arrived in this phase */
	unsigned int phase;
};

static void spin_wait(struct spin_barrier *b)
{
	unsigned int phase = __atomic_load_n(&b->phase, __ATOMIC_ACQUIRE);
	unsigned long spins = 0;

	if (__atomic_add_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == b->n) {
		__atomic_store_n(&b->count, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&b->phase, phase + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&b->phase, __ATOMIC_ACQUIRE) == phase) {
		/* the other thread may be preempted: do not burn its CPU */
		if (++spins > 10000)
			sched_yield();
		else
			__builtin_ia32_pause();
	}
}

/* ---- conc, token ----------------------------------------------------------- */

static struct {
	struct sds_point *p;
	struct spin_barrier bar;
	long rounds;
	uint64_t until;		/* hammer: stop then */
	long inflight, max_inflight;
	long calls[2], passed[2];
	uint64_t first_b[2], first_a[2];
} ex;

static void *conc_steps(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	long r;

	bg_pin(me);
	for (r = 0; r < ex.rounds; r++) {
		bool down;

		spin_wait(&ex.bar);
		down = sds_should_downgrade(ex.p);
		spin_wait(&ex.bar);	/* both have their answer: nobody left */
		sds_downgrade_finally(ex.p);
		ex.calls[me]++;
		ex.passed[me] += !down;
	}
	return NULL;
}

static void *conc_hammer(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	long i, cur, max;

	bg_pin(me);
	spin_wait(&ex.bar);
	while (now_ns() < ex.until) {
		for (i = 0; i < 64; i++) {
			bool down = sds_should_downgrade(ex.p);

			if (!down) {
				cur = __atomic_add_fetch(&ex.inflight, 1, __ATOMIC_SEQ_CST);
				max = __atomic_load_n(&ex.max_inflight, __ATOMIC_RELAXED);
				while (cur > max &&
				       !__atomic_compare_exchange_n(&ex.max_inflight, &max, cur,
								    false, __ATOMIC_RELAXED,
								    __ATOMIC_RELAXED))
					;
				__atomic_sub_fetch(&ex.inflight, 1, __ATOMIC_SEQ_CST);
			}
			sds_downgrade_finally(ex.p);
			ex.calls[me]++;
			ex.passed[me] += !down;
		}
	}
	return NULL;
}

/*
 * Each call is bracketed by two clock reads: the guard decides at some
 * time between them, so the first decision is known to lie in [first_b,
 * first_a] even if the thread was preempted next to its call.
 */
static void *token_hammer(void *arg)
{
	unsigned int me = (unsigned int)(uintptr_t)arg;
	uint64_t tb, ta;
	bool down;

	bg_pin(me);
	spin_wait(&ex.bar);
	for (;;) {
		tb = now_ns();
		down = sds_should_downgrade(ex.p);
		sds_downgrade_finally(ex.p);
		ta = now_ns();
		if (!ex.calls[me]) {
			ex.first_b[me] = tb;
			ex.first_a[me] = ta;
		}
		ex.calls[me]++;
		ex.passed[me] += !down;
		if (ta >= ex.until)
			break;
	}
	return NULL;
}

static int run2(void *(*fn)(void *))
{
	pthread_t tid[2];
	int i;

	ex.bar.n = 2;
	ex.calls[0] = ex.calls[1] = ex.passed[0] = ex.passed[1] = 0;
	for (i = 0; i < 2; i++)
		if (pthread_create(&tid[i], NULL, fn, (void *)(uintptr_t)i))
			return -1;
	for (i = 0; i < 2; i++)
		pthread_join(tid[i], NULL);
	return 0;
}

int bg_conc(const char *point, long limit, long rounds, double ms)
{
	struct sds_client *cl = sds_client_open(GROUP, bg_app);
	long calls, passed, want, total_calls, total_passed;
	int fail = 0;

	ex.p = sds_point(cl, point);
	if (!ex.p)
		return 3;
	ex.rounds = rounds;
	if (run2(conc_steps))
		return 3;
	calls = ex.calls[0] + ex.calls[1];
	passed = ex.passed[0] + ex.passed[1];
	want = rounds * (limit < 2 ? limit : 2);
	fail |= passed != want;
	printf("conc-steps point=%s limit=%ld threads=2 rounds=%ld calls=%ld passed=%ld "
	       "expected=%ld %s\n", point, limit, rounds, calls, passed, want,
	       passed == want ? "exact" : "MISMATCH");
	total_calls = calls;
	total_passed = passed;

	ex.until = now_ns() + (uint64_t)(ms * 1e6);
	ex.inflight = ex.max_inflight = 0;
	if (run2(conc_hammer))
		return 3;
	calls = ex.calls[0] + ex.calls[1];
	passed = ex.passed[0] + ex.passed[1];
	fail |= ex.max_inflight > limit;
	printf("conc-hammer point=%s limit=%ld threads=2 ms=%.0f calls=%ld passed=%ld "
	       "max_inside=%ld %s\n", point, limit, ms, calls, passed,
	       ex.max_inflight, ex.max_inflight <= limit ? "within" : "OVER");
	total_calls += calls;
	total_passed += passed;
	sds_client_close(cl);
	printf("point=%s calls=%ld passed=%ld refused=%ld\n", point, total_calls,
	       total_passed, total_calls - total_passed);
	return fail;
}

#define MIN2(a) ((a)[0] < (a)[1] ? (a)[0] : (a)[1])

/*
 * A bucket full at the first decision and empty at the last lets through
 * BUCKET + RATE x (last - first) calls, give or take the one whose token
 * was coming due at the end.  Full at the first: the strategy gave it a
 * full bucket and nobody called since.  Empty at the last: after the two
 * threads stop, this thread drains the bucket until a call is refused.
 * Each decision's time is bracketed by two clock reads (token_hammer), so
 * passed must lie in [BUCKET + RATE x shortest span - 1, BUCKET + RATE x
 * longest span + 1].
 */
int bg_token(const char *point, long rate, long bucket, double ms)
{
	struct sds_client *cl = sds_client_open(GROUP, bg_app);
	long calls, passed, drained = 0;
	uint64_t tb, ta;
	double lo, hi, mid, span;
	bool exact, down;

	ex.p = sds_point(cl, point);
	if (!ex.p)
		return 3;
	ex.until = now_ns() + 5000000 + (uint64_t)(ms * 1e6);
	if (run2(token_hammer))
		return 3;
	calls = ex.calls[0] + ex.calls[1];
	passed = ex.passed[0] + ex.passed[1];
	do {
		tb = now_ns();
		down = sds_should_downgrade(ex.p);
		sds_downgrade_finally(ex.p);
		ta = now_ns();
		calls++;
		drained += !down;
	} while (!down && drained < 10 * bucket + 10);
	passed += drained;
	/* the first decision: in [min first_b, min first_a]; the last in [tb, ta] */
	lo = bucket + rate * ((tb - MIN2(ex.first_a)) / 1e9);
	hi = bucket + rate * ((ta - MIN2(ex.first_b)) / 1e9);
	mid = (lo + hi) / 2;
	span = (ta + tb - MIN2(ex.first_a) - MIN2(ex.first_b)) / 2e9;
	exact = passed >= lo - 1 && passed <= hi + 1;
	sds_client_close(cl);
	printf("token point=%s rate=%ld bucket=%ld threads=2 seconds=%.6f calls=%ld "
	       "passed=%ld drained=%ld expected=%.1f low=%.2f high=%.2f %s\n", point,
	       rate, bucket, span, calls, passed, drained, mid, lo, hi,
	       exact ? "exact" : passed > hi + 1 ? "OVER" : "UNDER");
	printf("point=%s calls=%ld passed=%ld refused=%ld\n", point, calls, passed,
	       calls - passed);
	return !exact;
}
