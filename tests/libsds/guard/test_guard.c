// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of libsds/guard.c: the guard's decision (the kill
 * switch, rates, expiry, a stale loader, hold probes, the order of the
 * checks) on the region of guard_fixture.h; the exact limits are in
 * test_limits.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <math.h>
#include <pthread.h>

#include "guard_fixture.h"

/*
 * flags__publish() itself: every field lands, the sequence ends even and
 * two past where it was (one write), and a drill delay beyond the guards'
 * cap is written capped.
 */
static void test_publish_fields(void **state)
{
	struct flag_state fs = {
		.active = SDS_ACT_DOWNGRADE | SDS_ACT_DRILL, .reason = 3, .rate = 40,
		.expires_ns = T0 + 7, .concurrent_limit = 5,
		.token_interval_ns = 11, .token_burst_ns = 110,
		.probe_interval_ns = 13, .drill_kind = SDS_DRILL_DELAY,
		.drill_ratio = 60, .drill_delay_ns = SDS_DRILL_DELAY_MAX_NS + 1,
		.drill_expires_ns = T0 + 17,
	};
	struct sds_flag *e = entry(20);
	uint32_t seq = e->seq;

	assert_int_equal(seq % 2, 0);
	flags__publish(&fr, 20, &fs);
	assert_int_equal(e->seq, seq + 2);
	assert_int_equal(e->active, SDS_ACT_DOWNGRADE | SDS_ACT_DRILL);
	assert_int_equal(e->reason, 3);
	assert_int_equal(e->rate, 40);
	assert_int_equal(e->expires_ns, T0 + 7);
	assert_int_equal(e->concurrent_limit, 5);
	assert_int_equal(e->token_interval_ns, 11);
	assert_int_equal(e->token_burst_ns, 110);
	assert_int_equal(e->probe_interval_ns, 13);
	assert_int_equal(e->drill_kind, SDS_DRILL_DELAY);
	assert_int_equal(e->drill_ratio, 60);
	assert_int_equal(e->drill_delay_ns, SDS_DRILL_DELAY_MAX_NS);
	assert_int_equal(e->drill_expires_ns, T0 + 17);
	fs.drill_delay_ns = 5;
	flags__publish(&fr, 20, &fs);
	assert_int_equal(e->seq, seq + 4);
	assert_int_equal(e->drill_delay_ns, 5);
}

static void test_inactive_passes(void **state)
{
	struct sds_flag *e = entry(0);
	uint64_t rng = 1;
	int i;

	for (i = 0; i < 1000; i++)
		assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	/* Line 2 untouched. */
	assert_int_equal(C(e)->permits, 0);
	assert_int_equal(C(e)->tat_ns, 0);
	assert_int_equal(C(e)->refused_token + C(e)->refused_concurrent, 0);
}

static void test_kill_switch(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE, .rate = 100,
			 .expires_ns = T0 + 300 * MS };
	struct sds_flag *e = entry(1);
	uint64_t rng = 7;
	int i, down = 0;

	publish(e, &c);
	for (i = 0; i < 10000; i++)
		down += sds_guard_decide(e, C(e), hdr, NULL, T0 + i, &rng) == SDS_G_DOWNGRADE;
	assert_int_equal(down, 10000);
}

static void test_rate_zero(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE, .rate = 0,
			 .expires_ns = T0 + NS };
	struct sds_flag *e = entry(2);
	uint64_t rng = 7;
	int i, down = 0;

	publish(e, &c);
	for (i = 0; i < 10000; i++)
		down += sds_guard_decide(e, C(e), hdr, NULL, T0, &rng) == SDS_G_DOWNGRADE;
	assert_int_equal(down, 0);
}

static void test_rate_fifty(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE, .rate = 50,
			 .expires_ns = T0 + NS };
	struct sds_flag *e = entry(3);
	int n = 10000, i, down = 0, seed;
	double sigma = sqrt(n * 0.5 * 0.5);	/* binomial: 50 */
	uint64_t rng;

	publish(e, &c);
	/* Several seeds, and the zero (self-seeding) state too. */
	for (seed = 0; seed < 5; seed++) {
		rng = seed * 0x123456789ULL;
		down = 0;
		for (i = 0; i < n; i++)
			down += sds_guard_decide(e, C(e), hdr, NULL, T0, &rng) == SDS_G_DOWNGRADE;
		/* 4.5 sigma: a false alarm once in ~150,000 runs. */
		assert_true(fabs(down - n * 0.5) <= 4.5 * sigma);
	}
	/* rate 30 too, so the dial is not just a coin. */
	c.rate = 30;
	publish(e, &c);
	rng = 99;
	down = 0;
	for (i = 0; i < n; i++)
		down += sds_guard_decide(e, C(e), hdr, NULL, T0, &rng) == SDS_G_DOWNGRADE;
	assert_true(fabs(down - n * 0.3) <= 4.5 * sqrt(n * 0.3 * 0.7));
}

static void test_expiry_lapses(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE, .rate = 100,
			 .expires_ns = T0 - 1 };
	struct sds_flag *e = entry(4);
	uint64_t rng = 7;

	publish(e, &c);
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	/* In force strictly before the expiry. */
	c.expires_ns = T0;
	publish(e, &c);
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0 - 1, &rng), SDS_G_DOWNGRADE);
	/* An expiry of 0 (never renewed) is never in force. */
	c.expires_ns = 0;
	publish(e, &c);
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
}

static void test_stale_header(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE | SDS_ACT_CONCURRENT,
			 .rate = 100, .expires_ns = T0 + 100 * NS, .limit = 0 };
	struct sds_flag *e = entry(5);
	uint64_t rng = 7;

	publish(e, &c);
	/* The next tick (100 ms on) 2 s late: gone. */
	hdr->tick_ns = T0 - 100 * MS - SDS_STALE_NS - 1;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	/* Exactly that late is still alive. */
	hdr->tick_ns = T0 - 100 * MS - SDS_STALE_NS;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	/* A loader ticking every 3 s is alive 4 s after its tick ... */
	hdr->tick_interval_ns = 3 * NS;
	hdr->tick_ns = T0 - 4 * NS;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	/* ... and gone 5 s + 1 ns after it. */
	hdr->tick_ns = T0 - 5 * NS - 1;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	/* No interval keeps a region alive longer than the longest tick's. */
	hdr->tick_interval_ns = UINT64_MAX;
	hdr->tick_ns = T0 - SDS_TICK_MAX_NS - SDS_STALE_NS;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	hdr->tick_ns = T0 - SDS_TICK_MAX_NS - SDS_STALE_NS - 1;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	hdr->tick_interval_ns = 100 * MS;
	/* A tick written after our clock read (ahead of now) is fresh ... */
	hdr->tick_ns = T0 + 5;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	/* ... but not one from further ahead than a loader can be. */
	hdr->tick_ns = T0 + SDS_STALE_NS + 1;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	/* A loader that never ticked is stale. */
	hdr->tick_ns = 0;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	hdr->tick_ns = T0;
	assert_int_equal(C(e)->refused_concurrent, 0);	/* downgraded at step 4 */
}

static void test_seq_stuck_odd(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE, .rate = 100,
			 .expires_ns = T0 + NS };
	struct sds_flag *e = entry(6);
	uint64_t rng = 7;

	publish(e, &c);
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	/* A loader killed while writing: fail open, do not spin forever. */
	e->seq++;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	e->seq++;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
}

/* ---- hold and probes --------------------------------------------------- */

static void test_probe_one_per_interval(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE | SDS_ACT_PROBE,
			 .rate = 100, .expires_ns = T0 + 100 * NS,
			 .probe_ns = 100 * MS };
	struct sds_flag *e = entry(13);
	uint64_t rng = 1, now;
	unsigned int how;
	int probes = 0, down = 0;

	publish(e, &c);
	/* A call a millisecond for 1 s: T0, T0 + 100 ms, ..., T0 + 900 ms. */
	for (now = T0; now < T0 + NS; now += MS) {
		how = decide_at(e, now, &rng);
		if (how == SDS_G_PROBE) {
			probes++;
			/* Half of them fail. */
			sds_guard_release(C(e), NULL, how | (probes % 2 ? SDS_G_EXCEPTION : 0));
		} else {
			assert_int_equal(how, SDS_G_DOWNGRADE);
			down++;
		}
	}
	assert_int_equal(probes, 10);
	assert_int_equal(down, 1000 - 10);
	assert_int_equal(C(e)->probes_ok, 5);
	assert_int_equal(C(e)->probes_failed, 5);
}

struct prober {
	struct sds_flag *e;		/* the entry */
	pthread_barrier_t *go;		/* start together */
	unsigned int how;		/* what the decision gave */
};

static void *probe_run(void *arg)
{
	struct prober *p = arg;
	uint64_t rng = 1;

	pthread_barrier_wait(p->go);
	p->how = sds_guard_decide(p->e, C(p->e), hdr, NULL, T0 + 10 * NS, &rng);
	return NULL;
}

static void test_probe_race(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE | SDS_ACT_PROBE,
			 .rate = 100, .expires_ns = T0 + 100 * NS,
			 .probe_ns = 100 * MS };
	struct sds_flag *e = entry(14);
	struct prober p[8];
	pthread_barrier_t go;
	pthread_t t[8];
	int i, probes = 0;

	publish(e, &c);
	hdr->tick_ns = T0 + 10 * NS;
	pthread_barrier_init(&go, NULL, 8);
	for (i = 0; i < 8; i++) {
		p[i] = (struct prober){ .e = e, .go = &go };
		pthread_create(&t[i], NULL, probe_run, &p[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		probes += p[i].how == SDS_G_PROBE;
	}
	/* Eight callers at the same instant: one probe. */
	assert_int_equal(probes, 1);
	hdr->tick_ns = T0;
	pthread_barrier_destroy(&go);
}

/* ---- half-open phases of N probes (SDS_ACT_HALFOPEN) -------------------- */

#define HALFOPEN_ACT	(SDS_ACT_DOWNGRADE | SDS_ACT_PROBE | SDS_ACT_HALFOPEN)

/* The loader opening phase @tag at @start (halfopen_cells.c's order). */
static void phase_open(struct sds_flag *e, uint32_t n, uint32_t tag, uint64_t start)
{
	e->probe_calls = n;
	__atomic_store_n(&C(e)->next_probe_ns, start, __ATOMIC_RELEASE);
	__atomic_store_n(&C(e)->probe_claimed, (uint64_t)tag << 32, __ATOMIC_RELEASE);
}

static void test_halfopen_n_per_phase(void **state)
{
	struct cfg c = { .active = HALFOPEN_ACT, .rate = 100,
			 .expires_ns = T0 + 100 * NS, .probe_ns = 100 * MS };
	struct sds_flag *e = entry(40);
	uint64_t rng = 1, now;
	unsigned int how;
	int probes = 0, down = 0;

	publish(e, &c);
	phase_open(e, 5, 1, T0 + 100 * MS);
	/* Before the phase's start: nothing passes. */
	assert_int_equal(decide_at(e, T0 + 99 * MS, &rng), SDS_G_DOWNGRADE);
	/* A call a millisecond for 1 s from the start: exactly 5 probes, the
	 * first five, and the guard never moves the start. */
	for (now = T0 + 100 * MS; now < T0 + 1100 * MS; now += MS) {
		how = decide_at(e, now, &rng);
		if (how == SDS_G_PROBE) {
			assert_int_equal(now, T0 + 100 * MS + probes * MS);
			probes++;
			sds_guard_release(C(e), NULL, how | (probes <= 2 ? SDS_G_EXCEPTION : 0));
		} else {
			assert_int_equal(how, SDS_G_DOWNGRADE);
			down++;
		}
	}
	assert_int_equal(probes, 5);
	assert_int_equal(down, 1000 - 5);
	assert_int_equal(C(e)->probes_ok, 3);
	assert_int_equal(C(e)->probes_failed, 2);
	assert_int_equal(C(e)->probe_claimed, (1ULL << 32) | 5);
	assert_int_equal(C(e)->next_probe_ns, T0 + 100 * MS);
	/* The loader opens the next phase: 5 more, one interval on. */
	phase_open(e, 5, 2, T0 + 1200 * MS);
	assert_int_equal(decide_at(e, T0 + 1199 * MS, &rng), SDS_G_DOWNGRADE);
	for (probes = 0, now = T0 + 1200 * MS; now < T0 + 1300 * MS; now += MS)
		probes += decide_at(e, now, &rng) == SDS_G_PROBE;
	assert_int_equal(probes, 5);
	/* probe_calls 0 (an older loader's 0): one probe a phase. */
	phase_open(e, 0, 3, T0 + 1400 * MS);
	for (probes = 0, now = T0 + 1400 * MS; now < T0 + 1500 * MS; now += MS)
		probes += decide_at(e, now, &rng) == SDS_G_PROBE;
	assert_int_equal(probes, 1);
}

static void test_halfopen_forged(void **state)
{
	struct cfg c = { .active = HALFOPEN_ACT, .rate = 100,
			 .expires_ns = T0 + 100 * NS, .probe_ns = 100 * MS };
	struct sds_flag *e = entry(41);
	uint64_t rng = 1;

	publish(e, &c);
	/* A claim count beyond N (another client's garbage): no probe. */
	phase_open(e, 5, 1, T0);
	C(e)->probe_claimed = (1ULL << 32) | 0xffffffffu;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	/* A start an hour ahead: no probe, and the guard leaves it be. */
	phase_open(e, 5, 2, T0 + 3600 * NS);
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->next_probe_ns, T0 + 3600 * NS);
	assert_int_equal(C(e)->probe_claimed, 2ULL << 32);
	/* Without the bit the same cells give the one-probe path. */
	c.active = SDS_ACT_DOWNGRADE | SDS_ACT_PROBE;
	publish(e, &c);
	phase_open(e, 5, 3, T0);
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_PROBE);
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->probe_claimed, 3ULL << 32);
}

static void test_halfopen_race(void **state)
{
	struct cfg c = { .active = HALFOPEN_ACT, .rate = 100,
			 .expires_ns = T0 + 100 * NS, .probe_ns = 100 * MS };
	struct sds_flag *e = entry(42);
	struct prober p[8];
	pthread_barrier_t go;
	pthread_t t[8];
	int i, round, probes;

	publish(e, &c);
	hdr->tick_ns = T0 + 10 * NS;
	for (round = 0; round < 50; round++) {
		phase_open(e, 5, round + 1, T0);
		pthread_barrier_init(&go, NULL, 8);
		for (i = 0; i < 8; i++) {
			p[i] = (struct prober){ .e = e, .go = &go };
			pthread_create(&t[i], NULL, probe_run, &p[i]);
		}
		for (i = probes = 0; i < 8; i++) {
			pthread_join(t[i], NULL);
			probes += p[i].how == SDS_G_PROBE;
		}
		/* Eight callers at the same instant: exactly five probes. */
		assert_int_equal(probes, 5);
		pthread_barrier_destroy(&go);
	}
	hdr->tick_ns = T0;
}

static void test_probe_interval_shortened(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE | SDS_ACT_PROBE,
			 .rate = 100, .expires_ns = T0 + 100 * NS,
			 .probe_ns = 100 * MS };
	struct sds_flag *e = entry(15);
	uint64_t rng = 1;

	publish(e, &c);
	/* Past one interval ahead but within the slack: the guard does not
	 * pull it in (an older clock read would look the same)... */
	C(e)->next_probe_ns = T0 + 900 * MS;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->next_probe_ns, T0 + 900 * MS);
	/* ...but an hour ahead is no guard's claim: forged, probe now. */
	C(e)->next_probe_ns = T0 + 3600 * NS;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_PROBE);
	assert_int_equal(C(e)->next_probe_ns, T0 + 100 * MS);
	/* ...the loader does, when the hold starts: now + the new interval. */
	C(e)->next_probe_ns = T0 + 100 * MS;
	assert_int_equal(decide_at(e, T0 + 99 * MS, &rng),
			 SDS_G_DOWNGRADE);
	assert_int_equal(decide_at(e, T0 + 100 * MS, &rng),
			 SDS_G_PROBE);
	/* A probe taken with a clock read older than the last probe's does
	 * not pull the next one in either. */
	assert_int_equal(decide_at(e, T0 + 50 * MS, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->next_probe_ns, T0 + 200 * MS);
}

/*
 * Garbage another client wrote into the cells: a permit count beyond any
 * limit refuses (the app's own shared limit: the loader repairs it), one
 * far below 0 passes, and neither wraps or spins.
 */
static void test_forged_permits(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 2 };
	struct sds_flag *e = entry(18);
	uint64_t rng = 1;
	unsigned int how;

	publish(e, &c);
	C(e)->permits = 1LL << 62;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->permits, 1LL << 62);
	C(e)->permits = INT64_MIN;
	how = decide_at(e, T0, &rng);
	assert_int_equal(how, SDS_G_PERMIT);
	sds_guard_release(C(e), NULL, how);
	assert_int_equal(C(e)->permits, INT64_MIN);
}

static void test_probe_respects_limits(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE | SDS_ACT_PROBE |
				   SDS_ACT_CONCURRENT,
			 .rate = 100, .expires_ns = T0 + 100 * NS,
			 .probe_ns = 100 * MS, .limit = 1 };
	struct sds_flag *e = entry(16);
	uint64_t rng = 1;
	unsigned int how;

	publish(e, &c);
	how = decide_at(e, T0, &rng);
	assert_int_equal(how, SDS_G_PROBE | SDS_G_PERMIT);
	assert_int_equal(C(e)->permits, 1);
	sds_guard_release(C(e), NULL, how);
	assert_int_equal(C(e)->permits, 0);
	assert_int_equal(C(e)->probes_ok, 1);
	/* A probe that finds the semaphore full is refused like any call. */
	C(e)->permits = 1;
	assert_int_equal(decide_at(e, T0 + 200 * MS, &rng),
			 SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->refused_concurrent, 1);
	C(e)->permits = 0;
}

/* ---- order of the checks ------------------------------------------------ */

static void test_order(void **state)
{
	struct cfg c = { .active = SDS_ACT_DOWNGRADE | SDS_ACT_TOKEN |
				   SDS_ACT_CONCURRENT,
			 .rate = 100, .expires_ns = T0 + NS, .limit = 1,
			 .interval_ns = MS, .burst_ns = MS };
	struct sds_flag *e = entry(17);
	uint64_t rng = 1;
	unsigned int how;

	publish(e, &c);
	/* Downgraded at step 4: no token taken, no permit tried. */
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->tat_ns, 0);
	assert_int_equal(C(e)->refused_token + C(e)->refused_concurrent, 0);
	/* Lapsed: the exact limits still hold. */
	c.expires_ns = T0 - 1;
	publish(e, &c);
	how = sds_guard_decide(e, C(e), hdr, NULL, T0, &rng);
	assert_int_equal(how, SDS_G_PERMIT);
	assert_int_equal(C(e)->tat_ns, T0 + MS);
	/* Bucket empty: refused at step 5, before the semaphore. */
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->refused_token, 1);
	assert_int_equal(C(e)->refused_concurrent, 0);
	/* Token there, semaphore full: refused at step 6. */
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0 + MS, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->refused_concurrent, 1);
	sds_guard_release(C(e), NULL, how);
	assert_int_equal(C(e)->permits, 0);
}

static void test_rand(void **state)
{
	uint64_t a = 0, b = 0, x = 5, y = 5;
	int i, same = 0;

	/* Zero states seed themselves, and differently. */
	for (i = 0; i < 100; i++)
		same += sds_guard_rand(&a) == sds_guard_rand(&b);
	assert_true(same < 5);
	assert_true(a != 0 && b != 0);
	/* Seeded alike: the same sequence (the tests depend on it). */
	for (i = 0; i < 100; i++)
		assert_true(sds_guard_rand(&x) == sds_guard_rand(&y));
}

/* ---- hot keys: the blocked-key table (bpf/sds_flags.h) ---- */

static const struct sds_key_table *ktab(int id)
{
	return (const struct sds_key_table *)((char *)region + SDS_KEY_TABLE_OFF(id));
}

/* A lookup of @hash at @now by a guard whose loader ticked then. */
static bool kblocked(int id, uint64_t hash, uint64_t now)
{
	hdr->tick_ns = now;
	return sds_guard_key_blocked(ktab(id), hdr, hash, now);
}

/*
 * A block holds from the loader's write to its end, for its hash only;
 * a lifted one, a lapsed one, one too far ahead (forged) and one of a
 * stale region block nothing.
 */
static void test_key_block(void **state)
{
	const uint64_t h = 0x1234567890abcdefULL, other = h ^ (1ULL << 40);

	assert_false(kblocked(3, h, T0));
	assert_int_equal(flags__key_block(&fr, 3, h, T0 + 5 * NS), 0);
	assert_int_equal(flags__key_blocked(&fr, 3), 1);
	assert_int_equal(ktab(3)->nblocked, 1);
	assert_true(kblocked(3, h, T0));
	assert_true(kblocked(3, h, T0 + 5 * NS - 1));
	assert_false(kblocked(3, h, T0 + 5 * NS));	/* lapsed */
	assert_false(kblocked(3, other, T0));		/* same window, other key */
	assert_false(kblocked(4, h, T0));		/* other point */
	/* Renewed: the same slot, a later end. */
	assert_int_equal(flags__key_block(&fr, 3, h, T0 + 9 * NS), 0);
	assert_int_equal(flags__key_blocked(&fr, 3), 1);
	assert_true(kblocked(3, h, T0 + 8 * NS));
	/* A stale region (its loader stopped 3 s ago) blocks nothing. */
	hdr->tick_ns = T0 - 3 * NS;
	assert_false(sds_guard_key_blocked(ktab(3), hdr, h, T0));
	/* Lifted. */
	assert_int_equal(flags__key_clear(&fr, 3, h), 0);
	assert_int_equal(flags__key_blocked(&fr, 3), 0);
	assert_false(kblocked(3, h, T0));
	assert_int_equal(flags__key_clear(&fr, 3, h), -1);
	assert_int_equal(errno, ENOENT);
	/* An end more than SDS_KEY_BLOCK_MAX_NS ahead is no loader's. */
	assert_int_equal(flags__key_block(&fr, 3, h, T0 + SDS_KEY_BLOCK_MAX_NS + 1), 0);
	assert_false(kblocked(3, h, T0));
	assert_true(kblocked(3, h, T0 + 1));		/* exactly the bound */
	flags__key_clear_all(&fr, 3);
	assert_int_equal(flags__key_blocked(&fr, 3), 0);
	assert_false(kblocked(3, h, T0 + 1));
	/* Bad input. */
	assert_int_equal(flags__key_block(&fr, 3, 0, T0 + NS), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(flags__key_block(&fr, SDS_MAX_POINTS, h, T0 + NS), -1);
	assert_int_equal(errno, EINVAL);
}

/*
 * The window: eight slots from the home group, wrapping past the last
 * slot; a ninth key of the same home is refused (ENOSPC) until one goes.
 */
static void test_key_window(void **state)
{
	/* Home 508: slots 508..511, then 0..3. */
	const uint64_t home = SDS_KEY_BLOCK_SLOTS - SDS_KEY_BLOCK_GROUP;
	uint64_t h[SDS_KEY_BLOCK_PROBES + 1];
	int i;

	for (i = 0; i <= SDS_KEY_BLOCK_PROBES; i++)
		h[i] = home + (uint64_t)(i + 1) * SDS_KEY_BLOCK_SLOTS;
	for (i = 0; i < SDS_KEY_BLOCK_PROBES; i++)
		assert_int_equal(flags__key_block(&fr, 7, h[i], T0 + NS), 0);
	assert_int_equal(flags__key_block(&fr, 7, h[SDS_KEY_BLOCK_PROBES], T0 + NS), -1);
	assert_int_equal(errno, ENOSPC);
	assert_int_equal(flags__key_blocked(&fr, 7), SDS_KEY_BLOCK_PROBES);
	for (i = 0; i < SDS_KEY_BLOCK_PROBES; i++)
		assert_true(kblocked(7, h[i], T0));
	assert_false(kblocked(7, h[SDS_KEY_BLOCK_PROBES], T0));
	/* The wrapped ones are in slots 0..3. */
	for (i = 0; i < SDS_KEY_BLOCK_GROUP; i++)
		assert_true(ktab(7)->slot[i].hash == h[SDS_KEY_BLOCK_GROUP + i]);
	/* A key of home 0 finds four slots of its window taken, four free. */
	for (i = 0; i < SDS_KEY_BLOCK_GROUP; i++)
		assert_int_equal(flags__key_block(&fr, 7, (uint64_t)(i + 1) << 20,
						  T0 + NS), 0);
	assert_int_equal(flags__key_block(&fr, 7, 5ULL << 20, T0 + NS), -1);
	/* One lifted: the refused key fits, in the freed slot. */
	assert_int_equal(flags__key_clear(&fr, 7, h[2]), 0);
	assert_int_equal(flags__key_block(&fr, 7, h[SDS_KEY_BLOCK_PROBES], T0 + NS), 0);
	assert_true(ktab(7)->slot[home + 2].hash == h[SDS_KEY_BLOCK_PROBES]);
	assert_true(kblocked(7, h[SDS_KEY_BLOCK_PROBES], T0));
	assert_false(kblocked(7, h[2], T0));
	assert_int_equal(flags__key_blocked(&fr, 7), SDS_KEY_BLOCK_PROBES + 4);
	flags__key_clear_all(&fr, 7);
	for (i = 0; i < SDS_KEY_BLOCK_SLOTS; i++)
		assert_true(ktab(7)->slot[i].hash == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_publish_fields),
		cmocka_unit_test(test_inactive_passes),
		cmocka_unit_test(test_kill_switch),
		cmocka_unit_test(test_rate_zero),
		cmocka_unit_test(test_rate_fifty),
		cmocka_unit_test(test_expiry_lapses),
		cmocka_unit_test(test_stale_header),
		cmocka_unit_test(test_seq_stuck_odd),
		cmocka_unit_test(test_probe_one_per_interval),
		cmocka_unit_test(test_probe_race),
		cmocka_unit_test(test_halfopen_n_per_phase),
		cmocka_unit_test(test_halfopen_forged),
		cmocka_unit_test(test_halfopen_race),
		cmocka_unit_test(test_probe_interval_shortened),
		cmocka_unit_test(test_probe_respects_limits),
		cmocka_unit_test(test_forged_permits),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_rand),
		cmocka_unit_test(test_key_block),
		cmocka_unit_test(test_key_window),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
