// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the adaptive concurrency limit (loader/decide/adaptive.c):
 * issue 33, "Adaptive concurrency per point".  A simulated dependency with
 * a fixed capacity (C calls at once, 5 ms each, +-5 %, a FIFO queue
 * behind) is offered Poisson calls at twice its capacity through a
 * semaphore whose limit is what adaptive__step publishes each 100-ms
 * tick; the limit must settle within 20 % of C within 10 s, follow C when
 * it halves, and never leave [min, max].  SDS_ADAPTIVE_TRACE=1 prints
 * every tick.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decide/adaptive.h"

#define TICK_NS		100000000ULL
#define STEP_NS		50000ULL		/* the simulation's clock step */
#define SERVICE_NS	5000000.0
#define QMAX		100000

/* The simulated dependency and its callers. */
struct sim {
	uint64_t now;
	uint64_t rng;
	int capacity;			/* calls served at once */
	double service_ns;		/* each call's time */
	double rate;			/* offered calls per second */
	int64_t limit;			/* the semaphore's */
	int64_t inflight;		/* admitted, not completed */
	/* Admitted calls: their arrival and (once served) end. */
	uint64_t arr[QMAX], end[QMAX];
	int head, tail;			/* ring of admitted calls, FIFO */
	int serving;
	/* This tick's counts. */
	uint64_t calls, time_ns, refused, good;
};

static double rnd(struct sim *s)
{
	s->rng ^= s->rng << 13;
	s->rng ^= s->rng >> 7;
	s->rng ^= s->rng << 17;
	return (double)(s->rng >> 11) / 9007199254740992.0;
}

/* One STEP_NS: arrivals, completions, service starts. */
static void sim_step(struct sim *s)
{
	double p = s->rate * STEP_NS / 1e9;
	int i;

	s->now += STEP_NS;
	/* Poisson arrivals: p per step is small, at most a few. */
	while (rnd(s) < p) {
		p -= 1.0;
		if (s->inflight >= s->limit) {
			s->refused++;
			continue;
		}
		s->arr[s->tail % QMAX] = s->now;
		s->end[s->tail % QMAX] = 0;
		s->tail++;
		s->inflight++;
	}
	/* Completions and starts, in FIFO order of the admitted calls. */
	s->serving = 0;
	for (i = s->head; i < s->tail; i++) {
		uint64_t *e = &s->end[i % QMAX];

		if (*e && *e <= s->now) {
			uint64_t lat = *e - s->arr[i % QMAX];

			s->calls++;
			s->time_ns += lat;
			s->good += lat <= 100000000ULL;
			*e = UINT64_MAX;	/* done */
			s->inflight--;
			continue;
		}
		if (*e == UINT64_MAX)
			continue;
		if (*e) {
			s->serving++;
			continue;
		}
		if (s->serving < s->capacity) {
			*e = s->now + (uint64_t)(s->service_ns * (0.95 + 0.1 * rnd(s)));
			s->serving++;
		}
	}
	while (s->head < s->tail && s->end[s->head % QMAX] == UINT64_MAX)
		s->head++;
}

struct trace {
	int64_t pub[1000];		/* the published limit per tick */
	int n;
	uint64_t good;			/* calls answered within 100 ms */
};

/* Run @ticks ticks of @r against @s, the limit published each tick. */
static void run(struct sim *s, struct adaptive_state *r,
		const struct adaptive_cfg *cfg, int ticks, struct trace *t)
{
	int k;

	for (k = 0; k < ticks; k++) {
		struct adaptive_sample sm;
		uint64_t end = s->now + TICK_NS;

		while (s->now < end)
			sim_step(s);
		sm = (struct adaptive_sample){
			.now_ns = s->now, .calls = s->calls, .time_ns = s->time_ns,
			.refused = s->refused, .inflight = s->inflight,
		};
		t->good += s->good;
		s->calls = s->time_ns = s->refused = s->good = 0;
		s->limit = adaptive__step(r, cfg, &sm);
		assert_true(s->limit >= cfg->min && s->limit <= cfg->max);
		if (getenv("SDS_ADAPTIVE_TRACE"))
			printf("t=%5.1f cap=%d limit=%lld (%.2f) rtt=%.2f base=%.2f ms\n",
			       s->now / 1e9, s->capacity, (long long)s->limit,
			       r->limit, r->rtt_ns / 1e6, r->base_ns / 1e6);
		if (t->n < 1000)
			t->pub[t->n++] = s->limit;
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* The mean published limit of ticks [from, to) of @t. */
static double mean_of(const struct trace *t, int from, int to)
{
	double sum = 0;
	int i;

	for (i = from; i < to; i++)
		sum += (double)t->pub[i];
	return sum / (to - from);
}

/* @s: 8 at once, 5 ms, offered twice that; @r reset for @cfg. */
static void sim_start(struct sim *s, struct adaptive_state *r,
		      const struct adaptive_cfg *cfg, uint64_t rng, uint64_t seed)
{
	memset(s, 0, sizeof(*s));
	s->rng = rng;
	s->capacity = 8;
	s->service_ns = SERVICE_NS;
	s->rate = 2.0 * 8 / (SERVICE_NS / 1e9);
	adaptive__reset(r, cfg, 0, seed);
	s->limit = r->published;
}

static void settle(uint32_t algo)
{
	static struct sim s;
	const struct adaptive_cfg cfg = {
		.algo = algo, .min = 1, .max = 64, .initial = 0,
	};
	struct adaptive_state r;
	struct trace t = { 0 };
	int64_t last[30];
	double m;

	sim_start(&s, &r, &cfg, 0x1234567 + algo, 42);
	/* 10 s: the last 3 s within 20 % of 8. */
	run(&s, &r, &cfg, 100, &t);
	m = mean_of(&t, 70, 100);
	printf("%s: capacity 8, mean limit %.2f\n", strategy_adaptive_name(algo), m);
	assert_true(m >= 6.4 && m <= 9.6);
	memcpy(last, &t.pub[70], sizeof(last));
	qsort(last, 30, sizeof(last[0]), cmp64);
	assert_true(last[15] >= 7 && last[15] <= 9);
	/* The capacity halves: 10 s more, the last 3 within 20 % of 4. */
	s.capacity = 4;
	run(&s, &r, &cfg, 100, &t);
	m = mean_of(&t, 170, 200);
	printf("%s: capacity 4, mean limit %.2f\n", strategy_adaptive_name(algo), m);
	assert_true(m >= 3.2 && m <= 4.8);
}

/*
 * The dependency slows 2x (10 ms a call, still 8 at once): its no-load
 * latency rose, which only a re-measure can see; within 10 s the limit is
 * back within 20 % of 8.
 */
static void slows(uint32_t algo)
{
	static struct sim s;
	const struct adaptive_cfg cfg = {
		.algo = algo, .min = 1, .max = 64, .initial = 16,
	};
	struct adaptive_state r;
	struct trace t = { 0 };
	double m;

	sim_start(&s, &r, &cfg, 0x7654321 + algo, 7);
	run(&s, &r, &cfg, 100, &t);
	s.service_ns = 2 * SERVICE_NS;
	run(&s, &r, &cfg, 100, &t);
	m = mean_of(&t, 170, 200);
	printf("%s: 2x slower, mean limit %.2f\n", strategy_adaptive_name(algo), m);
	assert_true(m >= 6.4 && m <= 9.6);
}

static void test_gradient2_follows_a_slower_dependency(void **state) { slows(SDS_ADAPTIVE_GRADIENT2); }
static void test_vegas_follows_a_slower_dependency(void **state) { slows(SDS_ADAPTIVE_VEGAS); }
static void test_aimd_follows_a_slower_dependency(void **state) { slows(SDS_ADAPTIVE_AIMD); }

static void test_gradient2_settles(void **state) { settle(SDS_ADAPTIVE_GRADIENT2); }
static void test_vegas_settles(void **state) { settle(SDS_ADAPTIVE_VEGAS); }
static void test_aimd_settles(void **state) { settle(SDS_ADAPTIVE_AIMD); }

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gradient2_settles),
		cmocka_unit_test(test_vegas_settles),
		cmocka_unit_test(test_aimd_settles),
		cmocka_unit_test(test_gradient2_follows_a_slower_dependency),
		cmocka_unit_test(test_vegas_follows_a_slower_dependency),
		cmocka_unit_test(test_aimd_follows_a_slower_dependency),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
