// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the admin's store (admin/store/sqlite/sqlite.c) against a
 * temporary SQLite file, and of the aggregation in admin/api/aggregate.c.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/aggregate.h"
#include "store/store.h"

#include "store_fixture.h"

static json_t *get_app(const char *g, const char *a)
{
	json_t *o = NULL;

	assert_int_equal(st->ops->app_get(st, g, a, &o, err), STORE_OK);
	return o;
}

static int64_t app_version(const char *g, const char *a)
{
	json_t *o = get_app(g, a);
	int64_t v = json_integer_value(json_object_get(o, "version"));

	json_decref(o);
	return v;
}

static void test_org(void **state)
{
	const char *evil = "it's \"quoted\"; DROP TABLE apps; --";
	json_t *o;

	assert_int_equal(st->ops->group_create(st, "g1", evil, err), STORE_OK);
	assert_int_equal(st->ops->group_create(st, "g1", "", err), STORE_EXISTS);
	assert_non_null(strstr(err, "g1"));
	assert_int_equal(st->ops->app_create(st, "g1", "shop", evil, err), STORE_OK);
	assert_int_equal(st->ops->app_create(st, "g1", "shop", "", err), STORE_EXISTS);
	/* An app in a new group creates the group. */
	assert_int_equal(st->ops->app_create(st, "g2", "shop", "", err), STORE_OK);

	o = get_app("g1", "shop");
	assert_string_equal(json_string_value(json_object_get(o, "description")), evil);
	assert_string_equal(json_string_value(json_object_get(o, "active_scheme")), "default");
	assert_int_equal(json_integer_value(json_object_get(o, "version")), 1);
	json_decref(o);

	assert_int_equal(st->ops->group_get(st, "g1", &o, err), STORE_OK);
	assert_string_equal(json_string_value(json_object_get(o, "description")), evil);
	assert_int_equal(json_integer_value(json_object_get(o, "apps")), 1);
	json_decref(o);
	assert_int_equal(st->ops->app_list(st, NULL, &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 2);
	json_decref(o);

	assert_int_equal(st->ops->app_get(st, "g1", "nope", &o, err), STORE_NOTFOUND);
	assert_non_null(strstr(err, "nope"));
	assert_int_equal(st->ops->group_delete(st, "g1", err), STORE_CONFLICT);
	assert_int_equal(st->ops->app_update(st, "g1", "shop", "new", err), STORE_OK);
	assert_int_equal(st->ops->app_delete(st, "g2", "shop", err), STORE_OK);
	assert_int_equal(st->ops->group_delete(st, "g2", err), STORE_OK);
	assert_int_equal(st->ops->group_get(st, "g2", &o, err), STORE_NOTFOUND);
}

static void put_one(const char *scheme, const char *point, int64_t visit_threshold,
		    int64_t *version)
{
	struct sds_strategies *one = calloc(1, sizeof(*one));

	assert_non_null(one);
	one->n = 1;
	strategy_init(&one->s[0], point);
	one->s[0].visit_threshold = visit_threshold;
	assert_int_equal(st->ops->strategy_put(st, "g1", "shop", scheme, one, "c",
					       version, err), STORE_OK);
	free(one);
}

static void test_schemes_and_versions(void **state)
{
	struct sds_strategies *ss = calloc(1, sizeof(*ss));
	char name[SDS_NAME_MAX + 1];
	int64_t v;
	json_t *o;

	/* Editing the active scheme bumps the version. */
	put_one("default", "order", 100, &v);
	assert_int_equal(v, 2);
	put_one("default", "pay", 50, &v);
	assert_int_equal(v, 3);

	/* A clone copies the strategies; editing it leaves the version. */
	assert_int_equal(st->ops->scheme_create(st, "g1", "shop", "storm", "heavy load",
						"default", "clone", err), STORE_OK);
	assert_int_equal(st->ops->scheme_create(st, "g1", "shop", "storm", "", NULL,
						NULL, err), STORE_EXISTS);
	assert_int_equal(st->ops->scheme_create(st, "g1", "shop", "x", "", "nope",
						NULL, err), STORE_NOTFOUND);
	assert_int_equal(st->ops->strategies_get(st, "g1", "shop", "storm", ss, name, err),
			 STORE_OK);
	assert_string_equal(name, "storm");
	assert_int_equal(ss->n, 2);
	assert_int_equal(strategy_set_find(ss, "order")->visit_threshold, 100);
	put_one("storm", "order", 0, &v);
	assert_int_equal(v, 3);
	assert_int_equal(app_version("g1", "shop"), 3);
	/* The clone is a copy: the original did not change. */
	assert_int_equal(st->ops->strategies_get(st, "g1", "shop", "default", ss, NULL, err),
			 STORE_OK);
	assert_int_equal(strategy_set_find(ss, "order")->visit_threshold, 100);

	/* Switching is one call and bumps the version; again is a no-op. */
	assert_int_equal(st->ops->scheme_activate(st, "g1", "shop", "storm", "go",
						  &v, err), STORE_OK);
	assert_int_equal(v, 4);
	assert_int_equal(st->ops->scheme_activate(st, "g1", "shop", "storm", "go",
						  &v, err), STORE_OK);
	assert_int_equal(v, 4);
	assert_int_equal(st->ops->strategies_get(st, "g1", "shop", NULL, ss, name, err),
			 STORE_OK);
	assert_string_equal(name, "storm");
	assert_int_equal(ss->version, 4);
	assert_int_equal(strategy_set_find(ss, "order")->visit_threshold, 0);

	/* The active scheme cannot be deleted; another can. */
	assert_int_equal(st->ops->scheme_delete(st, "g1", "shop", "storm", NULL, err),
			 STORE_CONFLICT);
	assert_int_equal(st->ops->scheme_list(st, "g1", "shop", &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 2);
	json_decref(o);

	/* Replace all; delete one. */
	ss->n = 1;
	strategy_init(&ss->s[0], "solo");
	ss->s[0].exception_threshold = 5;
	assert_int_equal(st->ops->strategies_put(st, "g1", "shop", "storm", ss, NULL, &v, err),
			 STORE_OK);
	assert_int_equal(v, 5);
	assert_int_equal(st->ops->strategy_delete(st, "g1", "shop", "storm", "order", NULL,
						  &v, err), STORE_NOTFOUND);
	assert_int_equal(st->ops->strategy_delete(st, "g1", "shop", "storm", "solo", NULL,
						  &v, err), STORE_OK);
	assert_int_equal(v, 6);
	assert_int_equal(st->ops->strategies_get(st, "g1", "shop", NULL, ss, NULL, err),
			 STORE_OK);
	assert_int_equal(ss->n, 0);
	assert_int_equal(st->ops->scheme_activate(st, "g1", "shop", "default", NULL, &v, err),
			 STORE_OK);
	assert_int_equal(st->ops->scheme_delete(st, "g1", "shop", "storm", "bye", err),
			 STORE_OK);
	assert_int_equal(st->ops->audit(st, "g1", "shop", 100, &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 10);	/* one per write above, newest first */
	assert_string_equal(json_string_value(json_object_get(json_array_get(o, 0), "action")),
			    "scheme.delete");
	assert_string_equal(json_string_value(json_object_get(json_array_get(o, 0), "comment")),
			    "bye");
	json_decref(o);
	free(ss);
}

static void hb_fill(struct sds_heartbeat *hb, const char *host, int64_t period,
		    uint64_t base)
{
	struct sds_hb_point *p;

	heartbeat_init(hb, "g1", "shop", host, "127.0.0.1", period, 0);
	p = heartbeat_add_point(hb, "order");
	p->visits = base;
	p->exceptions = base / 10;
	p->timeouts = 1;
	p->downgrades = base / 100;
	p->max_concurrency = base / 50;
	p->latency_hist[10] = base;
	p->nhist = 11;
	p = heartbeat_add_point(hb, "pay");
	p->visits = 1;
}

static int count_rows(const struct store_stat_row *row, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

static void test_heartbeats_and_stats(void **state)
{
	struct sds_heartbeat *hb = heartbeat_new();
	struct store_hb_result res = { 0 };
	json_t *o, *order;
	int64_t from, to, step;
	int n = 0;

	res.strategies = calloc(1, sizeof(*res.strategies));
	/* Two hosts, two periods; a repeat of one (host, period). */
	hb_fill(hb, "h1", T0, 1000);
	assert_int_equal(st->ops->heartbeat(st, hb, T0 + 12, &res, err), STORE_OK);
	assert_false(res.duplicate);
	assert_int_equal(res.version, app_version("g1", "shop"));
	assert_int_equal(res.strategies->version, res.version);
	assert_int_equal(res.strategies->n, 2);	/* order, pay from test_schemes */
	hb_fill(hb, "h2", T0, 500);
	assert_int_equal(st->ops->heartbeat(st, hb, T0 + 13, &res, err), STORE_OK);
	hb_fill(hb, "h1", T0 + 10, 200);
	assert_int_equal(st->ops->heartbeat(st, hb, T0 + 22, &res, err), STORE_OK);
	hb_fill(hb, "h1", T0, 999999);
	assert_int_equal(st->ops->heartbeat(st, hb, T0 + 30, &res, err), STORE_OK);
	assert_true(res.duplicate);

	/* A heartbeat of an unknown app registers it. */
	heartbeat_init(hb, "newgroup", "newapp", "h9", "", T0, 0);
	assert_int_equal(st->ops->heartbeat(st, hb, T0 + 1, &res, err), STORE_OK);
	assert_true(res.created);
	assert_int_equal(res.version, 1);

	assert_int_equal(st->ops->stats_scan(st, "g1", "shop", NULL, T0, T0 + 20,
					     count_rows, &n, err), STORE_OK);
	assert_int_equal(n, 6);

	from = T0;
	to = T0 + 20;
	step = 0;
	assert_int_equal(aggregate_range(&from, &to, &step, err, sizeof(err)), 0);
	assert_int_equal(step, 10);
	assert_int_equal(aggregate_query(st, "g1", "shop", NULL, from, to, step, &o, err),
			 STORE_OK);
	order = json_object_get(json_object_get(o, "points"), "order");
	assert_non_null(order);
	/* Sums across hosts; max for concurrency. */
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "visits"), 0)), 1500);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "visits"), 1)), 200);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "exceptions"), 0)), 150);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "timeouts"), 0)), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "downgrades"), 0)), 15);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "max_concurrency"), 0)), 20);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(order, "total"), "visits")), 1700);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(
		json_object_get(order, "total"), "latency_hist"), 10)), 1700);
	json_decref(o);

	/* One step over both periods. */
	assert_int_equal(aggregate_query(st, "g1", "shop", "order", T0, T0 + 20, 20, &o, err),
			 STORE_OK);
	order = json_object_get(json_object_get(o, "points"), "order");
	assert_int_equal(json_array_size(json_object_get(order, "t")), 1);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "visits"), 0)), 1700);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(order, "max_concurrency"), 0)), 20);
	assert_null(json_object_get(json_object_get(o, "points"), "pay"));
	json_decref(o);

	assert_int_equal(st->ops->host_list(st, "g1", "shop", &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 2);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(o, 0), "last_period")),
			 T0 + 10);
	assert_int_equal(json_integer_value(json_object_get(json_array_get(o, 0), "last_seen")),
			 T0 + 30);
	json_decref(o);

	assert_int_equal(st->ops->events(st, "g1", "shop", T0, T0 + 20, 100, &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 3);	/* downgrades 10, 5, 2 */
	json_decref(o);

	/* One point by host (the dashboard's breakdown): each host's own rows. */
	assert_int_equal(aggregate_query_hosts(st, "g1", "shop", "order", T0, T0 + 20, 10, &o, err),
			 STORE_OK);
	assert_int_equal(json_object_size(json_object_get(o, "hosts")), 2);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(json_object_get(
		json_object_get(o, "hosts"), "h1"), "visits"), 0)), 1000);
	assert_int_equal(json_integer_value(json_array_get(json_object_get(json_object_get(
		json_object_get(o, "hosts"), "h1"), "visits"), 1)), 200);
	assert_int_equal(json_integer_value(json_object_get(json_object_get(json_object_get(
		json_object_get(o, "hosts"), "h2"), "total"), "visits")), 500);
	json_decref(o);

	/* The first period (the dashboard's charts start there); none: 0. */
	assert_int_equal(st->ops->stats_first(st, "g1", "shop", &from, err), STORE_OK);
	assert_int_equal(from, T0);
	assert_int_equal(st->ops->stats_first(st, "newgroup", "newapp", &from, err), STORE_OK);
	assert_int_equal(from, 0);
	assert_int_equal(st->ops->stats_first(st, "g1", "nope", &from, err), STORE_NOTFOUND);

	/* SQLite forgets rows, PostgreSQL whole days (their partitions) only. */
	assert_int_equal(st->ops->prune(st, T0 + 10, err), STORE_OK);
	n = 0;
	assert_int_equal(st->ops->stats_scan(st, "g1", "shop", NULL, 0, T0 + 100,
					     count_rows, &n, err), STORE_OK);
	assert_int_equal(n, fixture_pg() ? 6 : 2);
	assert_int_equal(st->ops->stats_first(st, "g1", "shop", &from, err), STORE_OK);
	assert_int_equal(from, fixture_pg() ? T0 : T0 + 10);
	free(res.strategies);
	heartbeat_free(hb);
}

/*
 * app_state (GET /api/v1/sync): what the heartbeat answers, read only;
 * an unknown app is not found, and not created.
 */
static void test_app_state(void **state)
{
	struct store_hb_result res = { 0 };
	struct sds_hb_drill drills[SDS_HB_MAX_DRILLS];
	int64_t v = app_version("g1", "shop");
	json_t *o = NULL;

	res.strategies = calloc(1, sizeof(*res.strategies));
	res.drills = drills;
	assert_int_equal(st->ops->app_state(st, "g1", "shop", 0, T0, &res, err), STORE_OK);
	assert_int_equal(res.version, v);
	assert_int_equal(res.strategies->version, v);
	assert_int_equal(res.strategies->n, 2);	/* order, pay from test_schemes */
	assert_int_equal(res.ndrills, 0);
	assert_false(res.created);
	/* The loader's own version: no strategies read. */
	res.strategies->n = 77;
	assert_int_equal(st->ops->app_state(st, "g1", "shop", v, T0, &res, err), STORE_OK);
	assert_int_equal(res.strategies->n, 77);
	assert_int_equal(st->ops->app_state(st, "g1", "nosuch", 0, T0, &res, err),
			 STORE_NOTFOUND);
	assert_int_equal(st->ops->app_get(st, "g1", "nosuch", &o, err), STORE_NOTFOUND);
	free(res.strategies);
}

static void test_reopen(void **state)
{
	json_t *o;

	/* The schema is migrated once; reopening keeps the data. */
	store_close(st);
	st = fixture_open();
	assert_non_null(st);
	o = get_app("g1", "shop");
	assert_string_equal(json_string_value(json_object_get(o, "description")), "new");
	json_decref(o);
}

static void test_ranges(void **state)
{
	int64_t from, to, step;

	from = 1000; to = 1000 + 86400; step = 0;
	assert_int_equal(aggregate_range(&from, &to, &step, err, sizeof(err)), 0);
	assert_int_equal(step, 300);
	assert_true((to - from) / step <= AGGREGATE_TARGET_STEPS + 1);
	assert_int_equal(from % step, 0);
	from = 1000; to = 1000; step = 0;
	assert_int_equal(aggregate_range(&from, &to, &step, err, sizeof(err)), -1);
	from = 0; to = 100; step = 15;
	assert_int_equal(aggregate_range(&from, &to, &step, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "step"));
	from = 0; to = 100000; step = 10;
	assert_int_equal(aggregate_range(&from, &to, &step, err, sizeof(err)), -1);
	from = 0; to = 400LL * 86400; step = 0;
	assert_int_equal(aggregate_range(&from, &to, &step, err, sizeof(err)), -1);
}

/*
 * Issue 16: the scan on its own connection sees what the locked one sees;
 * refused writes are audited; retention forgets exactly the old hosts,
 * then the old audit rows.  After test_heartbeats_and_stats: h1's period
 * T0 + 10 (order, pay) is left, h1 was last seen at T0 + 30, h2 at T0 + 13.
 */
static void test_apart_and_retention(void **state)
{
	/* As stats.c: a store without a scan apart would scan in place. */
	typeof(st->ops->stats_scan) scan_apart = st->ops->stats_scan_apart ?
						 st->ops->stats_scan_apart :
						 st->ops->stats_scan;
	json_t *o;
	int n = 0, m = 0;

	assert_int_equal(st->ops->stats_scan(st, "g1", "shop", NULL, T0, T0 + 20,
					     count_rows, &m, err), STORE_OK);
	assert_int_equal(scan_apart(st, "g1", "shop", NULL, T0, T0 + 20,
						   count_rows, &n, err), STORE_OK);
	assert_int_equal(n, m);
	assert_int_equal(n, fixture_pg() ? 6 : 2);
	n = m = 0;
	assert_int_equal(scan_apart(st, "g1", "shop", "order", T0, T0 + 20,
						   count_rows, &n, err), STORE_OK);
	assert_int_equal(st->ops->stats_scan(st, "g1", "shop", "order", T0, T0 + 20,
					     count_rows, &m, err), STORE_OK);
	assert_int_equal(n, m);
	assert_int_equal(n, fixture_pg() ? 3 : 1);
	assert_int_equal(scan_apart(st, "g1", "nope", NULL, T0, T0 + 20,
						   count_rows, &n, err), STORE_NOTFOUND);
	assert_non_null(strstr(err, "nope"));

	assert_int_equal(st->ops->audit_denied(st, "g1", "shop", "PUT /api/v1/x",
					       "heartbeat token fnv:12345678", err), STORE_OK);
	assert_int_equal(st->ops->audit_denied(st, "g1", "nope", "PUT /api/v1/x",
					       "heartbeat token fnv:12345678", err),
			 STORE_NOTFOUND);
	assert_int_equal(st->ops->audit(st, "g1", "shop", 1, &o, err), STORE_OK);
	assert_string_equal(json_string_value(json_object_get(json_array_get(o, 0), "action")),
			    "denied");
	assert_string_equal(json_string_value(json_object_get(json_array_get(o, 0), "comment")),
			    "heartbeat token fnv:12345678");
	json_decref(o);

	/* Hosts last seen before T0 + 20: h2 only; no audit row is that old. */
	assert_int_equal(st->ops->prune_meta(st, T0 + 20, err), STORE_OK);
	assert_int_equal(st->ops->host_list(st, "g1", "shop", &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 1);
	assert_string_equal(json_string_value(json_object_get(json_array_get(o, 0), "host")),
			    "h1");
	json_decref(o);
	assert_int_equal(st->ops->audit(st, "g1", "shop", 100, &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 11);	/* all of them: the 10, the refusal */
	json_decref(o);
	/* Everything before a minute from now: every audit row and host. */
	assert_int_equal(st->ops->prune_meta(st, time(NULL) + 60, err), STORE_OK);
	assert_int_equal(st->ops->audit(st, "g1", "shop", 100, &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 0);
	json_decref(o);
	assert_int_equal(st->ops->host_list(st, "g1", "shop", &o, err), STORE_OK);
	assert_int_equal(json_array_size(o), 0);
	json_decref(o);

	/* The end of T0's day: both stores forget all of its statistics. */
	assert_int_equal(st->ops->prune(st, (T0 / 86400 + 1) * 86400, err), STORE_OK);
	n = 0;
	assert_int_equal(st->ops->stats_scan(st, "g1", "shop", NULL, 0, T0 + 100,
					     count_rows, &n, err), STORE_OK);
	assert_int_equal(n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_org),
		cmocka_unit_test(test_schemes_and_versions),
		cmocka_unit_test(test_heartbeats_and_stats),
		cmocka_unit_test(test_app_state),
		cmocka_unit_test(test_reopen),
		cmocka_unit_test(test_ranges),
		cmocka_unit_test(test_apart_and_retention),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
