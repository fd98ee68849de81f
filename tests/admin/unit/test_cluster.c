// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the admin's allocator of cluster-wide limits
 * (admin/cluster.c, docs/CLUSTER.md): water-filling exactly; two hosts
 * splitting a limit with the sum of what each may pass never above it
 * over a sequence of reports; a host gone quiet whose share goes to the
 * other after the lease; a host claiming what it was never granted; a
 * decrease at once and the other's increase only after the ack; tokens
 * likewise; the bounds (the 4097th host, the 4097th entry refused, whole).
 * The clock is the tests': every time is an argument.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

#define L	6000

static struct cluster *c;

static int setup_each(void **state)
{
	c = cluster_open();
	return c ? 0 : -1;
}

static int teardown_each(void **state)
{
	cluster_close(c);
	c = NULL;
	return 0;
}

/* App g/@app's active strategies: point @point with these cluster fields. */
static void limits_n(const char *app, int npoints, int64_t visits, int64_t rate,
		     int64_t bucket, int64_t now)
{
	struct sds_strategies *ss = calloc(1, sizeof(*ss));

	assert_non_null(ss);
	for (int i = 0; i < npoints; i++) {
		char p[16];

		snprintf(p, sizeof(p), npoints == 1 ? "order" : "p%03d", i);
		strategy_init(&ss->s[i], p);
		ss->s[i].cluster_visit_threshold = visits;
		ss->s[i].cluster_token_rate = rate;
		ss->s[i].cluster_token_bucket = bucket;
	}
	/* A point with only local limits: no cluster state, null shares. */
	strategy_init(&ss->s[npoints], "zlocal");
	ss->s[npoints].visit_threshold = 10;
	ss->n = npoints + 1;
	assert_int_equal(cluster__limits_set(c, "g", app, ss, now), 0);
	free(ss);
}

static void limits(int64_t visits, int64_t rate, int64_t bucket)
{
	limits_n("shop", 1, visits, rate, bucket, 0);
}

/* Host @h reports point "order" at @now; the grants, *hosts. */
static struct cluster_point report(const char *h, int64_t now, int64_t used,
				   int64_t wants, int64_t ack, int64_t rate_wants,
				   int64_t rate_ack, int *hosts)
{
	struct cluster_point p = {
		.point = "order", .used = used, .wants = wants, .ack = ack,
		.rate_wants = rate_wants, .rate_ack = rate_ack,
	};
	int n;

	assert_int_equal(cluster__report(c, "g", "shop", h, now, &p, 1,
					 hosts ? hosts : &n), 0);
	return p;
}

/* ---- the arithmetic --------------------------------------------------- */

static void test_fill(void **state)
{
	int64_t t[4];
	int s[4];

	/* Over the limit: the small demand whole, the rest split. */
	cluster_fill((int64_t[]){ 100, 5000, 5000 }, 3, L, t, s);
	assert_int_equal(t[0], 100);
	assert_int_equal(t[1], 2950);
	assert_int_equal(t[2], 2950);
	/* Water-filling in steps: 1000 < 6000/4, then 1500 < 5000/3 = 1666. */
	cluster_fill((int64_t[]){ 9000, 1000, 1500, 9000 }, 4, L, t, s);
	assert_int_equal(t[1], 1000);
	assert_int_equal(t[2], 1500);
	assert_int_equal(t[0], 1750);
	assert_int_equal(t[3], 1750);
	/* Under it: what nobody demands split equally, the remainder by index. */
	cluster_fill((int64_t[]){ 10, 20 }, 2, 100, t, s);
	assert_int_equal(t[0], 45);
	assert_int_equal(t[1], 55);
	cluster_fill((int64_t[]){ 0, 0, 0 }, 3, 10, t, s);
	assert_int_equal(t[0], 4);
	assert_int_equal(t[1], 3);
	assert_int_equal(t[2], 3);
	cluster_fill((int64_t[]){ 50, 7, 50 }, 3, 21, t, s);
	assert_int_equal(t[1], 7);
	assert_int_equal(t[0], 7);
	assert_int_equal(t[2], 7);
	cluster_fill((int64_t[]){ 50, 50, 50 }, 3, 8, t, s);
	assert_int_equal(t[0], 3);
	assert_int_equal(t[1], 3);
	assert_int_equal(t[2], 2);
	/* A kill switch: nothing for anyone. */
	cluster_fill((int64_t[]){ 50, 50 }, 2, 0, t, s);
	assert_int_equal(t[0] + t[1], 0);

	assert_int_equal(cluster_demand(5000), 5641);
	assert_int_equal(cluster_demand(0), 16);
	/* min(target, room), never below used, never above the limit. */
	assert_int_equal(cluster_grant(L, 3000, 1000, 0), 3000);
	assert_int_equal(cluster_grant(L, 3000, 4000, 0), 2000);
	assert_int_equal(cluster_grant(L, 3000, 6500, 0), 0);
	assert_int_equal(cluster_grant(L, 3000, 6000, 700), 700);
	assert_int_equal(cluster_grant(L, 3000, 0, 7000), L);
	assert_int_equal(cluster_bucket(2000, 1000, 500), 1000);
	assert_int_equal(cluster_bucket(1, 1000, 50), 1);
	assert_int_equal(cluster_bucket(2000, 1000, 0), 0);
	assert_int_equal(cluster_bucket(1000000000, 1000000000, 999999999), 999999999);
}

/* ---- two hosts ---------------------------------------------------------- */

/* A loader as the allocator sees it: the share in force is the last grant. */
struct model {
	const char *name;
	int64_t wants;			/* calls tried in the window */
	int64_t pass;			/* of which it would pass, given the share */
	int64_t share;			/* in force, -1: none yet */
	int64_t granted;		/* the last grant (the admin's record) */
	int64_t rate_wants, rate_share, rate_granted;
};

static int64_t used_of(const struct model *m)
{
	int64_t s = m->share < 0 ? 0 : m->share;

	return m->pass < s ? m->pass : s;
}

static int64_t taken_of(const struct model *m)
{
	int64_t t = m->share, u = used_of(m);

	if (m->granted > t)
		t = m->granted;
	return u > t ? u : t;
}

/* @m reports at @now and takes the reply's grants into force. */
static struct cluster_point step(struct model *m, int64_t now, int *hosts)
{
	struct cluster_point p = report(m->name, now, used_of(m), m->wants, m->share,
					m->rate_wants, m->rate_share, hosts);

	m->share = m->granted = p.visits;
	m->rate_share = m->rate_granted = p.token_rate;
	return p;
}

/* A and B alternate, 250 ms apart (each every 500 ms), @rounds times each. */
static int64_t alternate(struct model *m, int64_t now, int rounds)
{
	for (int i = 0; i < 2 * rounds; i++, now += 250) {
		int hosts;

		step(&m[i % 2], now, &hosts);
		if (m[0].share >= 0 && m[1].share >= 0)
			assert_int_equal(hosts, 2);
		/* What each may pass in its window, summed, never above L. */
		assert_true(taken_of(&m[0]) + taken_of(&m[1]) <= L);
		if (m[0].rate_share >= 0 || m[1].rate_share >= 0)
			assert_true((m[0].rate_share > 0 ? m[0].rate_share : 0) +
				    (m[1].rate_share > 0 ? m[1].rate_share : 0) <= 1000);
	}
	return now;
}

static void test_two_hosts_split(void **state)
{
	struct model m[2] = {
		{ "web-1", 5000, 1000, -1, -1, 0, -1, -1 },
		{ "web-2", 5000, 1000, -1, -1, 0, -1, -1 },
	};
	struct cluster_point p;
	int hosts;

	limits(L, SDS_OFF, SDS_OFF);
	/* The first alone gets everything; the second nothing until it is given back. */
	p = step(&m[0], 0, &hosts);
	assert_int_equal(p.visits, L);
	assert_int_equal(p.token_rate, SDS_OFF);
	assert_int_equal(p.token_bucket, SDS_OFF);
	assert_int_equal(hosts, 1);
	p = step(&m[1], 250, &hosts);
	assert_int_equal(p.visits, 0);
	assert_int_equal(hosts, 2);
	/* web-1 is cut to its half at once; web-2 gets it once web-1 acks. */
	p = step(&m[0], 500, &hosts);
	assert_int_equal(p.visits, 3000);
	p = step(&m[1], 750, &hosts);
	assert_int_equal(p.visits, 0);
	p = step(&m[0], 1000, &hosts);
	assert_int_equal(p.visits, 3000);
	p = step(&m[1], 1250, &hosts);
	assert_int_equal(p.visits, 3000);
	alternate(m, 1500, 20);
	assert_int_equal(m[0].share, 3000);
	assert_int_equal(m[1].share, 3000);
}

static void test_host_gone(void **state)
{
	struct model m[2] = {
		{ "web-1", 5000, 1000, -1, -1, 0, -1, -1 },
		{ "web-2", 5000, 1000, -1, -1, 0, -1, -1 },
	};
	struct cluster_point p;
	int64_t now;
	int hosts;

	limits(L, SDS_OFF, SDS_OFF);
	now = alternate(m, 0, 10);
	/* web-2 reported last at now - 250; web-1 goes quiet after now - 500. */
	assert_int_equal(m[0].share, 3000);
	assert_int_equal(m[1].share, 3000);
	p = step(&m[1], now - 500 + 1499, &hosts);
	assert_int_equal(p.visits, 3000);
	assert_int_equal(hosts, 2);
	p = step(&m[1], now - 500 + 1500, &hosts);
	assert_int_equal(p.visits, L);
	assert_int_equal(hosts, 1);
	/* Back within the window: its used still counts up to its old grant. */
	p = report("web-1", now + 2000, 3000, 5000, 3000, 0, -1, &hosts);
	assert_int_equal(hosts, 2);
	/* web-2's taken is 6000: web-1 gets what it already passed, no more. */
	assert_int_equal(p.visits, 3000);
}

static void test_clamp(void **state)
{
	struct cluster_point p;
	int hosts;

	limits(L, SDS_OFF, SDS_OFF);
	p = report("web-2", 0, 0, 5000, -1, 0, -1, &hosts);
	assert_int_equal(p.visits, L);
	/* web-1 claims the whole limit used and in force: it was given none. */
	p = report("web-1", 250, L, 5000, L, 0, -1, &hosts);
	assert_int_equal(p.visits, 0);
	p = report("web-2", 500, 1000, 5000, L, 0, -1, &hosts);
	assert_int_equal(p.visits, 3000);	/* not blocked by web-1's claim */
	p = report("web-1", 750, L, 5000, L, 0, -1, &hosts);
	assert_int_equal(p.visits, 0);
	p = report("web-2", 1000, 3000, 5000, 3000, 0, -1, &hosts);
	assert_int_equal(p.visits, 3000);
	/* Honest now: web-1 gets its half once web-2's ack frees it. */
	p = report("web-1", 1250, 0, 5000, 0, 0, -1, &hosts);
	assert_int_equal(p.visits, 3000);
	/* A claim above the largest grant is cut to it: web-2 still gets 3000. */
	p = report("web-1", 1750, L, 5000, L, 0, -1, &hosts);
	assert_int_equal(p.visits, 3000);
	p = report("web-2", 2000, 3000, 5000, 3000, 0, -1, &hosts);
	assert_int_equal(p.visits, 3000);
}

static void test_decrease_then_increase(void **state)
{
	struct model m[2] = {
		{ "web-1", 5000, 1000, -1, -1, 0, -1, -1 },
		{ "web-2", 5000, 1000, -1, -1, 0, -1, -1 },
	};
	struct cluster_point p;
	int64_t now;

	limits(L, SDS_OFF, SDS_OFF);
	now = alternate(m, 0, 10);
	/*
	 * web-1 wants 8 (demand 25) and web-2 5000 (5641): 334 left over,
	 * 167 each: targets 192 and 5808.
	 */
	m[0].wants = m[0].pass = 8;
	p = step(&m[0], now, NULL);
	assert_int_equal(p.visits, 192);	/* at once */
	p = step(&m[1], now + 250, NULL);
	assert_int_equal(p.visits, 3000);	/* web-1's ack still says 3000 */
	assert_true(taken_of(&m[0]) + taken_of(&m[1]) <= L);
	p = step(&m[0], now + 500, NULL);
	assert_int_equal(p.visits, 192);
	p = step(&m[1], now + 750, NULL);
	assert_int_equal(p.visits, 5808);	/* acked: the capacity is free */
	/* web-1 grows again: its headroom first, the rest once web-2 acks less. */
	m[0].wants = 5000;
	p = step(&m[0], now + 1000, NULL);
	assert_int_equal(p.visits, 192);
	p = step(&m[1], now + 1250, NULL);
	assert_int_equal(p.visits, 3000);
	p = step(&m[0], now + 1500, NULL);
	assert_int_equal(p.visits, 192);	/* web-2's ack still says 5808 */
	p = step(&m[1], now + 1750, NULL);
	assert_int_equal(p.visits, 3000);
	p = step(&m[0], now + 2000, NULL);
	assert_int_equal(p.visits, 3000);
	assert_true(taken_of(&m[0]) + taken_of(&m[1]) <= L);
}

static void test_tokens(void **state)
{
	struct model m[2] = {
		{ "web-1", 0, 0, -1, -1, 800, -1, -1 },
		{ "web-2", 0, 0, -1, -1, 800, -1, -1 },
	};
	struct cluster_point p;
	int64_t now;

	limits(SDS_OFF, 1000, 2000);
	p = step(&m[0], 0, NULL);
	assert_int_equal(p.visits, SDS_OFF);
	assert_int_equal(p.token_rate, 1000);
	assert_int_equal(p.token_bucket, 2000);
	p = step(&m[1], 250, NULL);
	assert_int_equal(p.token_rate, 0);
	assert_int_equal(p.token_bucket, 0);
	now = alternate(m, 500, 10);
	assert_int_equal(m[0].rate_share, 500);
	assert_int_equal(m[1].rate_share, 500);
	p = step(&m[0], now, NULL);
	assert_int_equal(p.token_bucket, 1000);	/* proportional: 2000 * 500 / 1000 */
	/* demands 16 and 916: 68 left, 34 each: 50 and 950. */
	m[0].rate_wants = 0;
	p = step(&m[0], now + 500, NULL);
	assert_int_equal(p.token_rate, 50);	/* at once */
	assert_int_equal(p.token_bucket, 100);
	p = step(&m[1], now + 750, NULL);
	assert_int_equal(p.token_rate, 500);	/* web-1's ack still says 500 */
	p = step(&m[0], now + 1000, NULL);
	assert_int_equal(p.token_rate, 50);
	p = step(&m[1], now + 1250, NULL);
	assert_int_equal(p.token_rate, 950);
	assert_int_equal(p.token_bucket, 1900);
	/*
	 * A rate ack above every grant of the last 10 s is cut to the
	 * largest (web-1 had 1000 at 0: 15 s on, only 50).
	 */
	now = alternate(m, now + 1500, 30);
	p = report("web-1", now, 0, 0, -1, 0, 1000, NULL);
	assert_int_equal(p.token_rate, 50);
	p = step(&m[1], now + 250, NULL);
	assert_int_equal(p.token_rate, 950);
	/* A bucket share is at least 1 when the rate share is not 0. */
	limits_n("tiny", 1, SDS_OFF, 1000, 1, 0);
	{
		struct cluster_point q = { .point = "order", .ack = -1, .rate_ack = -1 };
		int hosts;

		assert_int_equal(cluster__report(c, "g", "tiny", "web-1", 0, &q, 1, &hosts), 0);
		assert_int_equal(q.token_rate, 1000);
		assert_int_equal(q.token_bucket, 1);
	}
}

/* Points without a cluster field, and apps without limits read: nulls. */
static void test_no_limit(void **state)
{
	struct cluster_point p[3] = {
		{ .point = "order", .ack = -1, .rate_ack = -1 },
		{ .point = "zlocal", .used = 5, .ack = 7, .rate_ack = -1 },
		{ .point = "nosuch", .ack = -1, .rate_ack = -1 },
	};
	int hosts;

	assert_false(cluster__limits_fresh(c, "g", "shop", 0));
	assert_int_equal(cluster__report(c, "g", "shop", "web-1", 0, p, 3, &hosts), 0);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(p[i].visits, SDS_OFF);
		assert_int_equal(p[i].token_rate, SDS_OFF);
		assert_int_equal(p[i].token_bucket, SDS_OFF);
	}
	assert_int_equal(hosts, 1);
	limits(100, SDS_OFF, SDS_OFF);
	assert_true(cluster__limits_fresh(c, "g", "shop", 999));
	assert_false(cluster__limits_fresh(c, "g", "shop", 1000));
	assert_int_equal(cluster__report(c, "g", "shop", "web-1", 0, p, 3, &hosts), 0);
	assert_int_equal(p[0].visits, 100);
	assert_int_equal(p[0].token_rate, SDS_OFF);
	assert_int_equal(p[1].visits, SDS_OFF);
	assert_int_equal(p[2].visits, SDS_OFF);
	cluster__limits_drop(c, "g", "shop");
	assert_false(cluster__limits_fresh(c, "g", "shop", 0));
	assert_int_equal(cluster__report(c, "g", "shop", "web-1", 0, p, 3, &hosts), 0);
	assert_int_equal(p[0].visits, SDS_OFF);
}

static void metrics(unsigned long long reports, unsigned long long hosts, int64_t now)
{
	char *buf = NULL, want[128];
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	cluster__metrics_write(c, now, f);
	fclose(f);
	snprintf(want, sizeof(want), "\nsds_admin_cluster_reports_total %llu\n", reports);
	if (!strstr(buf, want))
		fail_msg("no %s in %s", want, buf);
	snprintf(want, sizeof(want), "\nsds_admin_cluster_hosts %llu\n", hosts);
	if (!strstr(buf, want))
		fail_msg("no %s in %s", want, buf);
	free(buf);
}

/*
 * Five honest hosts in turn (each every 500 ms), wants and passes drawn
 * at random (a fixed seed): after every report the shares in force sum to
 * at most L, and every host is granted at least what it already passed.
 */
static void test_random(void **state)
{
	int64_t share[5] = { -1, -1, -1, -1, -1 }, rate[5] = { -1, -1, -1, -1, -1 };
	unsigned int seed = 32;

	limits(L, 1000, 3000);
	for (int i = 0; i < 4000; i++) {
		int h = i % 5;
		char name[8];
		int64_t s = share[h] < 0 ? 0 : share[h], sum = 0, rsum = 0;
		int64_t used = s ? rand_r(&seed) % (s + 1) : 0;
		struct cluster_point p;

		snprintf(name, sizeof(name), "web-%d", h);
		/* As the route does: the limits read again once a second. */
		if (!cluster__limits_fresh(c, "g", "shop", i * 100))
			limits_n("shop", 1, L, 1000, 3000, i * 100);
		p = report(name, i * 100, used, rand_r(&seed) % 10000, share[h],
			   rand_r(&seed) % 1000, rate[h], NULL);
		if (p.visits < used)
			fail_msg("step %d host %d: used %lld share %lld got %lld", i, h, (long long)used, (long long)share[h], (long long)p.visits);
		assert_true(p.token_bucket == 0 || p.token_bucket == p.token_rate * 3);
		share[h] = p.visits;
		rate[h] = p.token_rate;
		for (int j = 0; j < 5; j++) {
			sum += share[j] > 0 ? share[j] : 0;
			rsum += rate[j] > 0 ? rate[j] : 0;
		}
		assert_true(sum <= L);
		assert_true(rsum <= 1000);
	}
}

/* ---- threads ------------------------------------------------------------ */

#define NTHREADS	4
#define NREPORTS	2000

static atomic_llong clock_ms;

struct worker {
	pthread_t t;
	char name[16];
	int64_t share, rate_share;	/* in force: the last grants */
};

/* An honest host: used within its share, its acks the last grants. */
static void *work(void *arg)
{
	struct worker *w = arg;

	w->share = w->rate_share = -1;
	for (int i = 0; i < NREPORTS; i++) {
		struct cluster_point p = {
			.point = "order", .wants = 1000 * (1 + i % 7),
			.used = w->share > 100 ? 100 : w->share < 0 ? 0 : w->share,
			.ack = w->share, .rate_wants = 50 * (1 + i % 5),
			.rate_ack = w->rate_share,
		};
		int hosts;

		/*
		 * The clock moves 1 ms every 8 reports: 1 s in all, so that
		 * no host's lease runs out while the others report (a lease
		 * run out gives its share away: docs/CLUSTER.md, the lease).
		 */
		if (cluster__report(c, "g", "shop", w->name,
				    atomic_fetch_add(&clock_ms, 1) / 8, &p, 1, &hosts))
			return (void *)1;
		w->share = p.visits;
		w->rate_share = p.token_rate;
	}
	return NULL;
}

/* Hosts reporting at once, each from its thread: the lock keeps the sums. */
static void test_threads(void **state)
{
	struct worker w[NTHREADS];
	int64_t visits = 0, rate = 0;
	void *ret;
	int i;

	limits(L, 1000, 1000);
	atomic_store(&clock_ms, 0);
	for (i = 0; i < NTHREADS; i++) {
		snprintf(w[i].name, sizeof(w[i].name), "web-%d", i);
		assert_int_equal(pthread_create(&w[i].t, NULL, work, &w[i]), 0);
	}
	for (i = 0; i < NTHREADS; i++) {
		assert_int_equal(pthread_join(w[i].t, &ret), 0);
		assert_null(ret);
		visits += w[i].share;
		rate += w[i].rate_share;
	}
	assert_true(visits <= L);
	assert_true(rate <= 1000);
	metrics(NTHREADS * NREPORTS, NTHREADS, atomic_load(&clock_ms) / 8);
}

/* ---- bounds ------------------------------------------------------------- */

static void test_bounds_hosts(void **state)
{
	struct cluster_point p = { .point = "order", .ack = -1, .rate_ack = -1 };
	char name[32];
	int hosts, i;

	limits(1 << 20, SDS_OFF, SDS_OFF);
	for (i = 0; i < CLUSTER_MAX_HOSTS; i++) {
		snprintf(name, sizeof(name), "web-%d", i);
		assert_int_equal(cluster__report(c, "g", "shop", name, 0, &p, 1, &hosts), 0);
		assert_int_equal(hosts, i + 1);
	}
	metrics(CLUSTER_MAX_HOSTS, CLUSTER_MAX_HOSTS, 0);
	assert_int_equal(cluster__report(c, "g", "shop", "web-4096", 10, &p, 1, &hosts),
			 -ENOSPC);
	/* Refused whole: nothing recorded, nothing counted. */
	assert_int_equal(cluster__report(c, "g", "shop", "web-0", 20, &p, 1, &hosts), 0);
	assert_int_equal(hosts, CLUSTER_MAX_HOSTS);
	metrics(CLUSTER_MAX_HOSTS + 1, CLUSTER_MAX_HOSTS, 20);
	/* A host whose lease ran out makes room for a new one. */
	assert_int_equal(cluster__report(c, "g", "shop", "web-4096", 1500, &p, 1, &hosts), 0);
	assert_int_equal(hosts, 2);	/* web-0 (at 20) and web-4096 */
	metrics(CLUSTER_MAX_HOSTS + 2, 2, 1500);
	/* Long after, none is live. */
	metrics(CLUSTER_MAX_HOSTS + 2, 0, 100000);
}

static void test_bounds_entries(void **state)
{
	struct cluster_point p[256];
	char names[256][16], app[16];
	int hosts, i, a;

	for (i = 0; i < 256; i++) {
		snprintf(names[i], sizeof(names[i]), "p%03d", i);
		p[i] = (struct cluster_point){ .point = names[i], .ack = -1, .rate_ack = -1 };
	}
	for (a = 0; a < CLUSTER_MAX_ENTRIES / 256; a++) {
		snprintf(app, sizeof(app), "app%d", a);
		limits_n(app, 256, 100, SDS_OFF, SDS_OFF, 0);
		assert_int_equal(cluster__report(c, "g", app, "web-1", 0, p, 256, &hosts), 0);
		assert_int_equal(p[255].visits, 100);
	}
	/* One more (app, point): refused, and the known points of the report with it. */
	limits_n("more", 1, 100, SDS_OFF, SDS_OFF, 0);
	{
		struct cluster_point q = { .point = "order", .ack = -1, .rate_ack = -1 };

		assert_int_equal(cluster__report(c, "g", "more", "web-1", 0, &q, 1, &hosts),
				 -ENOSPC);
	}
	metrics(CLUSTER_MAX_ENTRIES / 256, CLUSTER_MAX_ENTRIES, 0);
	/* Once the hosts are gone and swept, the room is back. */
	{
		struct cluster_point q = { .point = "order", .ack = -1, .rate_ack = -1 };

		limits_n("more", 1, 100, SDS_OFF, SDS_OFF, 20000);
		assert_int_equal(cluster__report(c, "g", "more", "web-1", 20000, &q, 1,
						 &hosts), 0);
		assert_int_equal(q.visits, 100);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_fill, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_two_hosts_split, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_host_gone, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_clamp, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_decrease_then_increase, setup_each,
						teardown_each),
		cmocka_unit_test_setup_teardown(test_tokens, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_no_limit, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_random, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_threads, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_bounds_hosts, setup_each, teardown_each),
		cmocka_unit_test_setup_teardown(test_bounds_entries, setup_each, teardown_each),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
