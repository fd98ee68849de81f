// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of userspace/guard.c: the guard's decision, on a flags
 * region laid out here per bpf/sds_flags.h (anonymous shared memory, as
 * the loader's map would be) with a clock the test controls.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "guard.h"

#define NS		1000000000ULL
#define MS		1000000ULL
#define T0		(1000 * NS)	/* the fake clock's start */
#define REGION_SIZE	((size_t)SDS_FLAGS_ELEMS * SDS_FLAG_SIZE)
#define CELLS_SIZE	((size_t)SDS_CELLS_ELEMS * SDS_CELL_SIZE)
/* The cell of the point whose entry is @e. */
#define C(e)	((struct sds_cell *)((char *)cells + \
		 (((char *)(e) - (char *)region) / SDS_FLAG_SIZE - 1) * SDS_CELL_SIZE))

static void *region;			/* the flags map of a test */
static void *cells;			/* the cells map of a test */
static struct sds_flags_header *hdr;	/* its header */

static struct sds_flag *entry(int id)
{
	return (struct sds_flag *)((char *)region + (1 + id) * SDS_FLAG_SIZE);
}

static __u32 *permit_cell(int slot, int id)
{
	return (__u32 *)((char *)cells + SDS_PERMITS_OFF) + SDS_PERMIT_IDX(slot, id);
}

static int setup(void **state)
{
	region = mmap(NULL, REGION_SIZE, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return -1;
	cells = mmap(NULL, CELLS_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (cells == MAP_FAILED)
		return -1;
	hdr = region;
	hdr->magic = SDS_FLAGS_MAGIC;
	hdr->layout = SDS_FLAGS_LAYOUT;
	hdr->epoch = 42;
	hdr->tick_ns = T0;
	hdr->tick_interval_ns = 100 * MS;
	return 0;
}

static int teardown(void **state)
{
	munmap(region, REGION_SIZE);
	munmap(cells, CELLS_SIZE);
	return 0;
}

/* What the loader's settings of one entry are, written as the loader does. */
struct cfg {
	__u32 active, rate;
	__u64 expires_ns;
	__s64 limit;
	__u64 interval_ns, burst_ns, probe_ns;
};

/* A decision at @now with a loader that ticked at @now. */
static unsigned int decide_at(struct sds_flag *e, uint64_t now, uint64_t *rng)
{
	hdr->tick_ns = now;
	return sds_guard_decide(e, C(e), hdr, NULL, now, rng);
}

static void publish(struct sds_flag *e, const struct cfg *c)
{
	hdr->tick_ns = T0;	/* a loader that ticked at the fake clock's start */
	__atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELAXED);	/* odd */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	e->active = c->active;
	e->rate = c->rate;
	e->expires_ns = c->expires_ns;
	e->concurrent_limit = c->limit;
	e->token_interval_ns = c->interval_ns;
	e->token_burst_ns = c->burst_ns;
	e->probe_interval_ns = c->probe_ns;
	__atomic_store_n(&e->seq, e->seq + 1, __ATOMIC_RELEASE);	/* even */
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
	hdr->tick_ns = T0 - SDS_STALE_NS - 1;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), 0);
	/* Exactly SDS_STALE_NS old is still alive. */
	hdr->tick_ns = T0 - SDS_STALE_NS;
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
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

/* ---- concurrency ------------------------------------------------------ */

#define K	5	/* permits */
#define M	3	/* threads beyond them */

struct holder {
	struct sds_flag *e;		/* the entry */
	__u32 *cell;			/* the process's permit cell */
	pthread_barrier_t *decided;	/* every thread has decided */
	pthread_barrier_t *checked;	/* the test has looked */
	unsigned int how;		/* what the decision gave */
};

static void *holder_run(void *arg)
{
	struct holder *h = arg;
	uint64_t rng = 1;

	h->how = sds_guard_decide(h->e, C(h->e), hdr, h->cell, T0, &rng);
	pthread_barrier_wait(h->decided);
	pthread_barrier_wait(h->checked);
	if (!(h->how & SDS_G_DOWNGRADE))
		sds_guard_release(C(h->e), h->cell, h->how);
	return NULL;
}

static void test_concurrency_exact(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = K };
	struct sds_flag *e = entry(7);
	pthread_barrier_t decided, checked;
	struct holder h[K + M];
	pthread_t t[K + M];
	__u32 *cell = permit_cell(3, 7);
	int i, refused = 0, held = 0;

	publish(e, &c);
	pthread_barrier_init(&decided, NULL, K + M + 1);
	pthread_barrier_init(&checked, NULL, K + M + 1);
	for (i = 0; i < K + M; i++) {
		h[i] = (struct holder){ .e = e, .cell = cell, .decided = &decided,
					.checked = &checked };
		assert_int_equal(pthread_create(&t[i], NULL, holder_run, &h[i]), 0);
	}
	pthread_barrier_wait(&decided);
	for (i = 0; i < K + M; i++) {
		refused += h[i].how == SDS_G_DOWNGRADE;
		held += h[i].how == SDS_G_PERMIT;
	}
	assert_int_equal(refused, M);
	assert_int_equal(held, K);
	assert_int_equal(C(e)->permits, K);
	assert_int_equal(*cell, K);
	assert_int_equal(C(e)->refused_concurrent, M);
	pthread_barrier_wait(&checked);
	for (i = 0; i < K + M; i++)
		pthread_join(t[i], NULL);
	assert_int_equal(C(e)->permits, 0);
	assert_int_equal(*cell, 0);
	pthread_barrier_destroy(&decided);
	pthread_barrier_destroy(&checked);
}

/* Under churn: never more than the limit inside, never a spurious refusal
 * while the count is below it, and all permits back at the end. */
struct churner {
	struct sds_flag *e;	/* the entry */
	int *inside;		/* holders right now */
	int *max_inside;	/* the most seen */
	int passed;		/* calls this thread got through */
};

static void *churn_run(void *arg)
{
	struct churner *c = arg;
	uint64_t rng = 1;
	unsigned int how;
	int i, n, m;

	for (i = 0; i < 20000; i++) {
		how = sds_guard_decide(c->e, C(c->e), hdr, NULL, T0, &rng);
		if (how & SDS_G_DOWNGRADE)
			continue;
		c->passed++;
		n = __atomic_add_fetch(c->inside, 1, __ATOMIC_SEQ_CST);
		m = __atomic_load_n(c->max_inside, __ATOMIC_RELAXED);
		while (n > m && !__atomic_compare_exchange_n(c->max_inside, &m, n,
				false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		__atomic_sub_fetch(c->inside, 1, __ATOMIC_SEQ_CST);
		sds_guard_release(C(c->e), NULL, how);
	}
	return NULL;
}

static void test_concurrency_churn(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 2 };
	struct sds_flag *e = entry(8);
	struct churner ch[6];
	pthread_t t[6];
	int inside = 0, max_inside = 0, i, passed = 0;

	publish(e, &c);
	for (i = 0; i < 6; i++) {
		ch[i] = (struct churner){ .e = e, .inside = &inside,
					  .max_inside = &max_inside };
		pthread_create(&t[i], NULL, churn_run, &ch[i]);
	}
	for (i = 0; i < 6; i++) {
		pthread_join(t[i], NULL);
		passed += ch[i].passed;
	}
	assert_true(max_inside <= 2);
	assert_int_equal(C(e)->permits, 0);
	assert_int_equal(passed + C(e)->refused_concurrent, 6 * 20000);
}

/*
 * As many threads as permits: every call finds a permit free, so a single
 * refusal is a spurious one (a guard that refuses everything, or leaks a
 * permit, fails here; test_concurrency_churn's sum cannot tell).
 */
static void test_concurrency_no_spurious(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 4 };
	struct sds_flag *e = entry(19);
	struct churner ch[4];
	pthread_t t[4];
	int inside = 0, max_inside = 0, i, passed = 0;

	publish(e, &c);
	for (i = 0; i < 4; i++) {
		ch[i] = (struct churner){ .e = e, .inside = &inside,
					  .max_inside = &max_inside };
		pthread_create(&t[i], NULL, churn_run, &ch[i]);
	}
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		passed += ch[i].passed;
	}
	assert_int_equal(C(e)->refused_concurrent, 0);
	assert_int_equal(passed, 4 * 20000);
	assert_int_equal(C(e)->permits, 0);
	assert_true(max_inside <= 4);
}

static void test_concurrency_zero_limit(void **state)
{
	struct cfg c = { .active = SDS_ACT_CONCURRENT, .limit = 0 };
	struct sds_flag *e = entry(9);
	uint64_t rng = 1;

	publish(e, &c);
	assert_int_equal(sds_guard_decide(e, C(e), hdr, NULL, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->permits, 0);
}

/* ---- token bucket ------------------------------------------------------ */

static void test_token_bucket(void **state)
{
	/* 1000 tokens/s, a bucket of 10. */
	struct cfg c = { .active = SDS_ACT_TOKEN, .interval_ns = MS,
			 .burst_ns = 10 * MS };
	struct sds_flag *e = entry(10);
	uint64_t rng = 1, now, calls = 0;
	int passed = 0, i;

	publish(e, &c);
	/* A full bucket at first: exactly 10 of 100 at once. */
	for (i = 0; i < 100; i++, calls++)
		passed += decide_at(e, T0, &rng) == 0;
	assert_int_equal(passed, 10);
	/* Then one a millisecond: over 1 s (T0 + 1 s included), 1000 more. */
	for (now = T0 + 100000; now <= T0 + NS; now += 100000) {
		for (i = 0; i < 3; i++, calls++)
			passed += decide_at(e, now, &rng) == 0;
	}
	assert_int_equal(passed, 10 + 1000);
	assert_int_equal(C(e)->refused_token, calls - passed);

	/* Idle 10 s: the bucket refills to 10, not to 10,000. */
	passed = 0;
	for (i = 0; i < 100; i++)
		passed += decide_at(e, T0 + 11 * NS, &rng) == 0;
	assert_int_equal(passed, 10);
}

static void test_token_bucket_odd_times(void **state)
{
	/* 3 tokens/s (interval not a divisor of a second), bucket 2. */
	__u64 iv = NS / 3;
	struct cfg c = { .active = SDS_ACT_TOKEN, .interval_ns = iv,
			 .burst_ns = 2 * iv };
	struct sds_flag *e = entry(11);
	uint64_t rng = 1, now;
	int passed = 0;

	publish(e, &c);
	/* A call every 7 ms over 10 s: burst + floor(t / iv) pass. */
	for (now = T0; now <= T0 + 10 * NS; now += 7 * MS)
		passed += decide_at(e, now, &rng) == 0;
	/* The last call is at T0 + 9.996 s: floor(9.996 / 0.3333) = 29. */
	assert_int_equal(passed, 2 + 29);
}

static void test_token_bucket_config_change(void **state)
{
	struct cfg c = { .active = SDS_ACT_TOKEN, .interval_ns = MS,
			 .burst_ns = 10 * MS };
	struct sds_flag *e = entry(12);
	uint64_t rng = 1;

	publish(e, &c);
	/* A tat past a bucket ahead, but within the slack, stays: the guard
	 * cannot tell it from a clock read older than another's. */
	C(e)->tat_ns = T0 + 500 * MS;
	assert_int_equal(decide_at(e, T0, &rng), SDS_G_DOWNGRADE);
	assert_int_equal(C(e)->tat_ns, T0 + 500 * MS);
	/* One beyond it (100 s) is no guard's: forged, the bucket starts full. */
	C(e)->tat_ns = T0 + 100 * NS;
	assert_int_equal(decide_at(e, T0, &rng), 0);
	assert_int_equal(C(e)->tat_ns, T0 + MS);
	/* The loader gives a new strategy a full bucket (tat_ns = 0). */
	C(e)->tat_ns = 0;
	assert_int_equal(decide_at(e, T0 + MS, &rng), 0);
	/* A bucket smaller than one token never passes. */
	c.burst_ns = MS / 2;
	publish(e, &c);
	assert_int_equal(decide_at(e, T0 + 50 * NS, &rng),
			 SDS_G_DOWNGRADE);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_inactive_passes),
		cmocka_unit_test(test_kill_switch),
		cmocka_unit_test(test_rate_zero),
		cmocka_unit_test(test_rate_fifty),
		cmocka_unit_test(test_expiry_lapses),
		cmocka_unit_test(test_stale_header),
		cmocka_unit_test(test_seq_stuck_odd),
		cmocka_unit_test(test_concurrency_exact),
		cmocka_unit_test(test_concurrency_churn),
		cmocka_unit_test(test_concurrency_no_spurious),
		cmocka_unit_test(test_concurrency_zero_limit),
		cmocka_unit_test(test_token_bucket),
		cmocka_unit_test(test_token_bucket_odd_times),
		cmocka_unit_test(test_token_bucket_config_change),
		cmocka_unit_test(test_probe_one_per_interval),
		cmocka_unit_test(test_probe_race),
		cmocka_unit_test(test_probe_interval_shortened),
		cmocka_unit_test(test_probe_respects_limits),
		cmocka_unit_test(test_forged_permits),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_rand),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
