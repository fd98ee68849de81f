// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of loader/report/uplink.c's period accounting and queue:
 * seconds go in through uplink__on_second() as the counters' fold gives
 * them, and every tick's record (tick/tick.h) through uplink__tick() as
 * the engine builds it, with the read and the extras the test lays out.
 * Nothing of another module is faked: the uplink reads only the record.
 * No BPF, no sender thread: the tests pop the queue as the sender does.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tick/tick.h"
#include "kernel/probes.h"
#include "kernel/snapshot.h"
#include "report/uplink.h"

#define NPTS	2

/* ---- the tick's record, as the engine would build it ----------------------- */

static struct point_stats fake_st[NPTS];	/* the tick's snapshot, per point */
static struct cell_counts fake_cells[NPTS];	/* the guards' cells, as the loader counted them */

/* ---- the push thread (uplink_push.c): not started here ------------------- */

void uplink_push__stop(struct uplink *up)
{
	(void)up;
}

json_t *uplink_push__json(struct uplink *up)
{
	(void)up;
	return json_object();
}

/* ... nor the cluster shares' (uplink_share.c). */
void uplink_share__stop(struct uplink *up)
{
	(void)up;
}

json_t *uplink_share__json(struct uplink *up)
{
	(void)up;
	return json_object();
}

/* ---- the uplink under test ------------------------------------------------ */

/* Wall seconds = ring seconds + WALL: ring second 0 is period P0's first. */
#define WALL	1700000000LL
#define P0	WALL

static struct probes pr;
static struct uplink u;
static char dir[64];

static int setup(void **state)
{
	char token[128], err[256];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/test_uplink.XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(token, sizeof(token), "%s/token", dir);
	f = fopen(token, "w");
	fputs("t0ken-of-16-bytes-or-more\n", f);
	fclose(f);
	chmod(token, 0600);	/* a token file others may read is refused */
	memset(&pr, 0, sizeof(pr));
	memset(fake_st, 0, sizeof(fake_st));
	memset(fake_cells, 0, sizeof(fake_cells));
	pr.pts = calloc(SDS_MAX_POINTS, sizeof(*pr.pts));
	snprintf(pr.pts[0].spec.name, sizeof(pr.pts[0].spec.name), "a");
	snprintf(pr.pts[1].spec.name, sizeof(pr.pts[1].spec.name), "b");
	pr.npoints = NPTS;
	assert_int_equal(uplink__init(&u, "http://127.0.0.1:1", token, "grp",
				      "shop", WALL, err, sizeof(err)), 0);
	u.probes = &pr;
	/* The fake clock: attach at ring second 0, the start of period P0. */
	u.closed_upto = P0;
	u.mark_at = P0;
	u.first_period = P0;
	*state = &u;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];

	uplink__stop(&u);
	free(pr.pts);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	return 0;
}

/* Second @sec of point @id counted @visits (and @exc exceptions). */
static void second(int id, uint64_t sec, uint64_t visits, uint64_t exc)
{
	struct sds_counts c = { .visits = visits, .exceptions = exc };

	uplink__on_second(&u, id, sec, &c);
}

/*
 * The tick at ring second @now: the points of fake_st, read whole; the
 * drills' injections of fake_cells (guard points); no probe budget, no
 * traffic copy and no deploy followed, so the extras are 0.
 */
static const struct sds_hb_refusal *tick_refused;	/* the next ticks' refusals */
static int tick_nrefused;

static void tick(uint64_t now)
{
	static struct tick_point pts[NPTS];
	static struct snapshot snap;
	struct tick t = {
		.snap = &snap,
		.now_sec = now,
		.npoints = NPTS,
		.pt = pts,
	};
	int i;

	snap.npoints = NPTS;
	snap.cap = NPTS;
	snap.gauges = true;
	snap.pts = fake_st;
	memset(pts, 0, sizeof(pts));
	for (i = 0; i < NPTS; i++) {
		fake_st[i].ok = fake_st[i].gauges = true;
		pts[i].name = pr.pts[i].spec.name;
		pts[i].kind = POINT_GUARD;
		pts[i].drill_faults = fake_cells[i].drill_faults;
		pts[i].drill_delays = fake_cells[i].drill_delays;
	}
	t.hb_close = uplink__closing(&u, now);
	t.nrefused = t.hb_close ? tick_nrefused : 0;
	t.refused = tick_refused;
	uplink__tick(&u, &t);
}

/* The queue's @i-th period from the head, parsed into @hb. */
static void queued(int i, struct sds_heartbeat *hb)
{
	char err[256];
	const struct uplink_msg *m = &u.queue[(u.head + i) % UPLINK_BACKLOG];

	assert_true(i < u.count);
	assert_int_equal(heartbeat_parse(m->body, strlen(m->body), hb, err,
					 sizeof(err)), 0);
	assert_int_equal(hb->period_start, m->period_start);
}

static const struct sds_hb_point *point_of(const struct sds_heartbeat *hb,
					   const char *name)
{
	int i;

	for (i = 0; i < hb->n; i++)
		if (!strcmp(hb->points[i].name, name))
			return &hb->points[i];
	fail_msg("no point %s in period %lld", name, (long long)hb->period_start);
	return NULL;
}

/* A period closes once its last second is folded (now - 2), not before. */
static void test_period_close(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new();
	uint64_t s;

	for (s = 0; s < 10; s++)
		second(0, s, s + 1, s == 3);
	second(1, 9, 7, 0);
	second(0, 10, 1000, 0);		/* the next period's first second */
	tick(10);
	assert_int_equal(u.count, 0);	/* second 9 is not folded at 10 */
	tick(11);
	assert_int_equal(u.count, 1);
	assert_int_equal(u.closed_upto, P0 + 10);
	queued(0, hb);
	assert_int_equal(hb->period_start, P0);
	assert_int_equal(point_of(hb, "a")->visits, 55);
	assert_int_equal(point_of(hb, "a")->exceptions, 1);
	assert_int_equal(point_of(hb, "b")->visits, 7);
	/* Sent at this host's offset after the period ends. */
	assert_int_equal(u.queue[u.head].send_at_ms,
			 (uint64_t)(P0 + 10) * 1000 + u.offset_ms);
	/* The next period holds second 10, and a late second 5 too. */
	second(0, 5, 3, 0);
	tick(21);
	assert_int_equal(u.count, 2);
	queued(1, hb);
	assert_int_equal(hb->period_start, P0 + 10);
	assert_int_equal(point_of(hb, "a")->visits, 1003);
	heartbeat_free(hb);
}

/*
 * The admin's strategies the engine refused (issue 36) go into the
 * heartbeat of the period the tick closes, whole; a period closed without
 * any has no "refused".
 */
static void test_period_refused(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new();
	struct sds_hb_refusal r[2];
	uint64_t s;

	heartbeat_refusal_set(&r[0], 5, "a", "point 'a': concurrent_threshold needs a guard point");
	heartbeat_refusal_set(&r[1], 5, NULL, "pressure rule 0: no");
	tick_refused = r;
	tick_nrefused = 2;
	for (s = 0; s < 10; s++)
		second(0, s, 1, 0);
	tick(11);
	tick_nrefused = 0;
	for (s = 10; s < 20; s++)
		second(0, s, 1, 0);
	tick(21);
	assert_int_equal(u.count, 2);
	queued(0, hb);
	assert_int_equal(hb->nrefused, 2);
	assert_int_equal(hb->refused[0].version, 5);
	assert_string_equal(hb->refused[0].point, "a");
	assert_string_equal(hb->refused[0].reason,
			    "point 'a': concurrent_threshold needs a guard point");
	assert_string_equal(hb->refused[1].point, "");
	assert_string_equal(hb->refused[1].reason, "pressure rule 0: no");
	queued(1, hb);
	assert_int_equal(hb->nrefused, 0);
	assert_null(strstr(u.queue[(u.head + 1) % UPLINK_BACKLOG].body, "refused"));
	heartbeat_free(hb);
}

/*
 * A period's latency histogram is the difference of the marks taken at
 * its first tick and at the next period's; concurrency its maximum over
 * the ticks; drill counts the growth of the cells in its ticks.
 */
static void test_hist_conc_drills(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new();
	const struct sds_hb_point *a;

	fake_st[0].hist[3] = 5;		/* before P0's first tick: P0's base is 0 */
	fake_st[0].concurrency = 2;
	fake_cells[0].drill_faults = 4;
	tick(1);
	fake_st[0].concurrency = 6;
	fake_st[0].hist[3] = 9;
	tick(5);
	fake_st[0].concurrency = 1;
	fake_cells[0].drill_delays = 3;
	tick(9);
	/* P0 + 10's first tick: the mark; calls after it are the next period's. */
	fake_st[0].hist[3] = 12;
	fake_st[0].hist[4] = 1;
	tick(10);
	fake_st[0].hist[3] = 40;
	fake_cells[0].drill_faults = 10;
	tick(11);
	assert_int_equal(u.count, 1);
	queued(0, hb);
	a = point_of(hb, "a");
	assert_int_equal(a->latency_hist[3], 12);
	assert_int_equal(a->latency_hist[4], 1);
	assert_int_equal(a->max_concurrency, 6);
	assert_int_equal(a->faults, 4);
	assert_int_equal(a->delays, 3);
	/* The next period from P0 + 20's mark: 40 - 12 and the 6 faults. */
	tick(20);
	tick(21);
	assert_int_equal(u.count, 2);
	queued(1, hb);
	a = point_of(hb, "a");
	assert_int_equal(a->latency_hist[3], 28);
	assert_int_equal(a->latency_hist[4], 0);
	assert_int_equal(a->faults, 6);
	assert_int_equal(a->delays, 0);
	heartbeat_free(hb);
}

/* Pop the head as the sender does after a 200, and mark it acknowledged. */
static int64_t ack_head(void)
{
	int64_t start;

	pthread_mutex_lock(&u.lock);
	start = uplink__pop_head(&u);
	pthread_mutex_unlock(&u.lock);
	uplink__acked(&u, start);
	return start;
}

/*
 * With a backlog: closed periods are on disk before they are queued; an
 * acknowledged one is done there; a new loader queues the rest at once,
 * oldest first, and a period closed again is not queued twice.
 */
static void test_backlog_ack_restore(void **state)
{
	char msg[600], err[300], token[128];
	struct sds_heartbeat *hb = heartbeat_new();

	assert_int_equal(uplink__backlog(&u, dir, msg, sizeof(msg), err,
					 sizeof(err)), 0);
	assert_string_equal(msg, "");
	second(0, 2, 10, 0);
	second(0, 12, 20, 0);
	second(0, 22, 30, 0);
	tick(31);
	assert_int_equal(u.count, 3);
	assert_int_equal(u.backlog->nrecs, 3);
	assert_int_equal(ack_head(), P0);
	assert_int_equal(u.backlog->nrecs, 2);
	assert_int_equal(u.backlog->acked, P0);
	assert_int_equal(u.sent, 1);
	uplink__stop(&u);

	/* The next loader: P0 + 10 and P0 + 20 queued, to go at once. */
	snprintf(token, sizeof(token), "%s/token", dir);
	assert_int_equal(uplink__init(&u, "http://127.0.0.1:1", token, "grp",
				      "shop", WALL, err, sizeof(err)), 0);
	u.probes = &pr;
	u.closed_upto = P0 + 30;
	u.mark_at = P0 + 30;
	assert_int_equal(uplink__backlog(&u, dir, msg, sizeof(msg), err,
					 sizeof(err)), 0);
	assert_string_equal(msg, "");
	assert_int_equal(u.restored, 2);
	assert_int_equal(u.count, 2);
	queued(0, hb);
	assert_int_equal(hb->period_start, P0 + 10);
	assert_int_equal(point_of(hb, "a")->visits, 20);
	assert_int_equal(u.queue[u.head].send_at_ms, 0);
	queued(1, hb);
	assert_int_equal(point_of(hb, "a")->visits, 30);
	/* Closed again (an adopted loader's kept state lagged): not twice. */
	u.closed_upto = P0 + 20;
	second(0, 25, 99, 0);
	tick(31);
	assert_int_equal(u.count, 2);
	queued(1, hb);
	assert_int_equal(point_of(hb, "a")->visits, 30);
	/* Nor one the admin acknowledged already. */
	u.closed_upto = P0;
	tick(11);
	assert_int_equal(u.count, 2);
	assert_int_equal(ack_head(), P0 + 10);
	assert_int_equal(ack_head(), P0 + 20);
	assert_int_equal(u.backlog->nrecs, 0);
	assert_int_equal(u.backlog->acked, P0 + 20);
	heartbeat_free(hb);
}

/* Over UPLINK_BACKLOG periods: the oldest dropped, counted, done on disk. */
static void test_bound(void **state)
{
	char msg[600], err[300];
	uint64_t s;

	assert_int_equal(uplink__backlog(&u, dir, msg, sizeof(msg), err,
					 sizeof(err)), 0);
	/* One period at a time, each closed as the loop would close it. */
	for (s = 0; s < 10 * (UPLINK_BACKLOG + 2); s += 10) {
		second(0, s, 1, 0);
		tick(s + 11);
	}
	assert_int_equal(u.count, UPLINK_BACKLOG);
	assert_int_equal(u.dropped, 2);
	assert_int_equal(u.queue[u.head].period_start, P0 + 20);
	assert_int_equal(u.backlog->nrecs, UPLINK_BACKLOG);
	assert_int_equal(u.backlog->recs[0].start, P0 + 20);
	/* The sender busy with the head: the next oldest goes instead. */
	u.head_busy = true;
	second(0, 10 * (UPLINK_BACKLOG + 2), 1, 0);
	tick(10 * (UPLINK_BACKLOG + 3) + 1);
	assert_int_equal(u.dropped, 3);
	assert_int_equal(u.queue[u.head].period_start, P0 + 20);
	assert_int_equal(u.queue[(u.head + 1) % UPLINK_BACKLOG].period_start,
			 P0 + 40);
	assert_int_equal(u.backlog->recs[0].start, P0 + 20);
	assert_int_equal(u.backlog->recs[1].start, P0 + 40);
	u.head_busy = false;
}

/* Wall clock in ms, as the sender stamps a period sent. */
static uint64_t wall_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * stats --json's "admin": the first and the open period, every queued
 * period's start and send time (its end + the offset), the last one sent.
 */
static void test_json_queue(void **state)
{
	json_t *o, *q, *e;
	uint64_t t0, t1;

	second(0, 3, 1, 0);
	second(0, 13, 2, 0);
	tick(20);
	assert_int_equal(u.count, 1);	/* P0 + 10's second 19 is not folded */
	tick(21);
	o = uplink__json(&u);
	assert_int_equal(json_integer_value(json_object_get(o, "first_period")), P0);
	assert_int_equal(json_integer_value(json_object_get(o, "open_period")), P0 + 20);
	assert_int_equal(json_integer_value(json_object_get(o, "pending")), 2);
	assert_true(json_is_null(json_object_get(o, "last_sent")));
	q = json_object_get(o, "queue");
	assert_int_equal(json_array_size(q), 2);
	e = json_array_get(q, 0);
	assert_int_equal(json_integer_value(json_object_get(e, "period")), P0);
	assert_int_equal(json_integer_value(json_object_get(e, "send_at_ms")),
			 (P0 + 10) * 1000 + u.offset_ms);
	e = json_array_get(q, 1);
	assert_int_equal(json_integer_value(json_object_get(e, "period")), P0 + 10);
	assert_int_equal(json_integer_value(json_object_get(e, "send_at_ms")),
			 (P0 + 20) * 1000 + u.offset_ms);
	json_decref(o);

	t0 = wall_ms();
	assert_int_equal(ack_head(), P0);
	t1 = wall_ms();
	o = uplink__json(&u);
	e = json_object_get(o, "last_sent");
	assert_int_equal(json_integer_value(json_object_get(e, "period")), P0);
	assert_in_range(json_integer_value(json_object_get(e, "at_ms")), t0, t1);
	q = json_object_get(o, "queue");
	assert_int_equal(json_array_size(q), 1);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(q, 0),
							    "period")), P0 + 10);
	assert_int_equal(json_integer_value(json_object_get(o, "sent")), 1);
	json_decref(o);
}

/*
 * The first period is the one counting began in (uplink__begin), not the
 * one open when the options were read: begun in a period's last second,
 * that period goes at its end + the offset; begun at the next one's first
 * second, nothing of the period before is sent.
 */
static void test_begin(void **state)
{
	json_t *o;

	uplink__begin(&u, WALL, 29);
	assert_int_equal(u.first_period, P0 + 20);
	assert_int_equal(u.closed_upto, P0 + 20);
	second(0, 29, 4, 0);
	tick(30);
	assert_int_equal(u.count, 0);
	tick(31);
	assert_int_equal(u.count, 1);
	assert_int_equal(u.queue[u.head].period_start, P0 + 20);
	assert_int_equal(u.queue[u.head].send_at_ms,
			 (uint64_t)(P0 + 30) * 1000 + u.offset_ms);
	o = uplink__json(&u);
	assert_int_equal(json_integer_value(json_object_get(o, "first_period")), P0 + 20);
	json_decref(o);
	assert_int_equal(ack_head(), P0 + 20);

	uplink__begin(&u, WALL, 40);
	assert_int_equal(u.first_period, P0 + 40);
	tick(41);
	tick(49);
	assert_int_equal(u.count, 0);	/* not P0 + 30: nothing counted there */
	second(0, 40, 1, 0);
	tick(51);
	assert_int_equal(u.count, 1);
	assert_int_equal(u.queue[u.head].period_start, P0 + 40);
}

/* FNV-1a of the host's name, as docs/DESIGN.md §7 spreads a fleet. */
static uint32_t fnv1a(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/*
 * SDS_HB_OFFSET_MS (tests): the offset, 2000..9000 ms; anything else
 * refused, naming the variable and the range; unset, the host's hash.
 */
static void test_offset_env(void **state)
{
	static const char *const bad[] = {
		"1999", "9001", "0", "", "abc", "2000x", " 2000", "+2000",
		"-2000", "2000 ", "99999999999999999999",
	};
	static const struct { const char *v; uint32_t ms; } good[] = {
		{ "2000", 2000 }, { "9000", 9000 }, { "4321", 4321 }, { "02500", 2500 },
	};
	const char *was = getenv(UPLINK_OFFSET_ENV);
	char *saved = was ? strdup(was) : NULL;
	char token[128], err[256];
	size_t i;

	snprintf(token, sizeof(token), "%s/token", dir);
	uplink__stop(&u);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv(UPLINK_OFFSET_ENV, bad[i], 1);
		err[0] = '\0';
		assert_int_equal(uplink__init(&u, "http://127.0.0.1:1", token, "grp",
					      "shop", WALL, err, sizeof(err)), -1);
		assert_non_null(strstr(err, "SDS_HB_OFFSET_MS="));
		assert_non_null(strstr(err, "2000..9000"));
		uplink__stop(&u);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		setenv(UPLINK_OFFSET_ENV, good[i].v, 1);
		assert_int_equal(uplink__init(&u, "http://127.0.0.1:1", token, "grp",
					      "shop", WALL, err, sizeof(err)), 0);
		assert_int_equal(u.offset_ms, good[i].ms);
		uplink__stop(&u);
	}
	unsetenv(UPLINK_OFFSET_ENV);
	assert_int_equal(uplink__init(&u, "http://127.0.0.1:1", token, "grp",
				      "shop", WALL, err, sizeof(err)), 0);
	assert_int_equal(u.offset_ms, 2000 + fnv1a(u.host) % 7000);
	if (saved)
		setenv(UPLINK_OFFSET_ENV, saved, 1);
	free(saved);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_period_close, setup, teardown),
		cmocka_unit_test_setup_teardown(test_period_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hist_conc_drills, setup, teardown),
		cmocka_unit_test_setup_teardown(test_backlog_ack_restore, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json_queue, setup, teardown),
		cmocka_unit_test_setup_teardown(test_begin, setup, teardown),
		cmocka_unit_test_setup_teardown(test_offset_env, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
