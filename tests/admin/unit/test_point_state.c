// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of the probe budget's per-point state in the admin's store
 * (issue 9): a heartbeat's "suspended" and "overhead_pct" stored with the
 * period's row, the newest state returned by aggregate_query(), cleared by a
 * later heartbeat without them, and a database of schema version 2 (before
 * the budget) migrated in place with its rows kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>
#include "../../unit/cmocka_timeout.h"	/* a per-test timeout */

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/aggregate.h"
#include "store/store.h"

#include "store_fixture.h"


/* One stored row, as stats_scan() hands it back. */
struct seen {
	int n;
	int64_t period[8];
	char host[8][16];
	bool suspended[8];
	uint64_t overhead_milli[8];
};

static int collect(const struct store_stat_row *row, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->period[s->n] = row->period_start;
		snprintf(s->host[s->n], sizeof(s->host[0]), "%s", row->host);
		s->suspended[s->n] = row->suspended;
		s->overhead_milli[s->n] = row->overhead_milli;
	}
	s->n++;
	return 0;
}

/* The point's state in aggregate_query() over [from, to) at step 10. */
static void want_state(const char *point, int64_t from, int64_t to,
		       bool suspended, const char *overhead, int64_t as_of)
{
	json_t *o, *p;
	char *text;

	assert_int_equal(aggregate_query(st, "g", "shop", NULL, from, to, 10, &o, err),
			 STORE_OK);
	p = json_object_get(json_object_get(o, "points"), point);
	if (!p) {
		json_decref(o);
		fail_msg("no point '%s' in aggregate_query()", point);
	}
	assert_int_equal(json_is_true(json_object_get(p, "suspended")), suspended);
	assert_true(json_is_boolean(json_object_get(p, "suspended")));
	/* Exactly as the API writes it (admin/http.c). */
	text = json_dumps(json_object_get(p, "overhead_pct"),
			  JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	assert_string_equal(text, overhead);
	free(text);
	assert_int_equal(json_integer_value(json_object_get(p, "as_of")), as_of);
	json_decref(o);
}

static void test_round_trip(void **state)
{
	struct seen s = { 0 };

	/* Suspended with its estimate; "pay" sends neither. */
	fixture_post_json(fixture_hb_json("h1", T0, "\"order\": {\"visits\": 3, \"suspended\": true,"
		     " \"overhead_pct\": 12.345}, \"pay\": {\"visits\": 1}"), T0 + 12, false);
	assert_int_equal(st->ops->stats_scan(st, "g", "shop", "order", T0, T0 + 10,
					     collect, &s, err), STORE_OK);
	assert_int_equal(s.n, 1);
	assert_true(s.suspended[0]);
	assert_int_equal(s.overhead_milli[0], 12345);
	want_state("order", T0, T0 + 10, true, "12.345", T0);
	want_state("pay", T0, T0 + 10, false, "0.0", T0);

	/* A repeat of (host, period) changes nothing, even the state. */
	fixture_post_json(fixture_hb_json("h1", T0, "\"order\": {\"visits\": 3}"), T0 + 13, true);
	want_state("order", T0, T0 + 10, true, "12.345", T0);

	/* The next heartbeat without the fields: not suspended, 0. */
	fixture_post_json(fixture_hb_json("h1", T0 + 10, "\"order\": {\"visits\": 900}"), T0 + 22, false);
	want_state("order", T0, T0 + 20, false, "0.0", T0 + 10);
	/* A range that ends before it still shows the older state. */
	want_state("order", T0, T0 + 10, true, "12.345", T0);

	/* A heartbeat that does not mention the point leaves its state. */
	fixture_post_json(fixture_hb_json("h1", T0 + 20, "\"pay\": {\"visits\": 1, \"overhead_pct\": 0.014}"),
	     T0 + 32, false);
	want_state("order", T0, T0 + 30, false, "0.0", T0 + 10);
	want_state("pay", T0, T0 + 30, false, "0.014", T0 + 20);

	/* Two hosts in one period: suspended on either, the highest estimate. */
	fixture_post_json(fixture_hb_json("h1", T0 + 30, "\"order\": {\"suspended\": true, \"overhead_pct\": 0.5}"),
	     T0 + 42, false);
	fixture_post_json(fixture_hb_json("h2", T0 + 30, "\"order\": {\"visits\": 5, \"overhead_pct\": 2}"),
	     T0 + 43, false);
	want_state("order", T0, T0 + 40, true, "2.0", T0 + 30);

	/* Every row keeps its own period's state. */
	memset(&s, 0, sizeof(s));
	assert_int_equal(st->ops->stats_scan(st, "g", "shop", "order", T0, T0 + 40,
					     collect, &s, err), STORE_OK);
	assert_int_equal(s.n, 4);
	assert_true(s.period[0] == T0 && s.suspended[0] && s.overhead_milli[0] == 12345);
	assert_true(s.period[1] == T0 + 10 && !s.suspended[1] && s.overhead_milli[1] == 0);
	assert_true(s.period[2] == T0 + 30 && !strcmp(s.host[2], "h1") && s.suspended[2] &&
		    s.overhead_milli[2] == 500);
	assert_true(s.period[3] == T0 + 30 && !strcmp(s.host[3], "h2") && !s.suspended[3] &&
		    s.overhead_milli[3] == 2000);
}

static void sql(sqlite3 *db, const char *q)
{
	char *msg = NULL;

	if (sqlite3_exec(db, q, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", q, msg);
}

static int user_version(sqlite3 *db)
{
	sqlite3_stmt *q;
	int v;

	assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(q), SQLITE_ROW);
	v = sqlite3_column_int(q, 0);
	sqlite3_finalize(q);
	return v;
}

static void test_old_database(void **state)
{
	struct seen s = { 0 };
	sqlite3 *db;

	if (fixture_pg()) {
		/* Not silent: cmocka lists it as SKIPPED, with this line. */
		printf("test_old_database: SQLite's schema 2 -> 7 migration; PostgreSQL's"
		       " schema versions are tests/admin/t_pg.py's\n");
		skip();
	}
	/*
	 * Make the file what sds-admin wrote before the budget: schema 2 is
	 * schema 8 without the split, stuck, overload and host columns, the
	 * adaptive columns, copy_servers' owner, drills'
	 * errno, the copy tables and the two columns, and its binary inserted
	 * rows without them.
	 */
	fixture_post_json(fixture_hb_json("h1", T0, "\"order\": {\"visits\": 7}"), T0 + 12, false);
	store_close(st);
	st = NULL;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(user_version(db), 13);
	sql(db, FIXTURE_DROP_TO_PRE_ADAPTIVE
		"ALTER TABLE drills DROP COLUMN errno;"
		"DROP TABLE copy_loader_stats; DROP TABLE copy_server_stats;"
		"DROP TABLE copy_servers; DROP TABLE copy_plans;"
		"ALTER TABLE stats DROP COLUMN suspended;"
		"ALTER TABLE stats DROP COLUMN overhead_milli;"
		"PRAGMA user_version = 2;"
		"INSERT INTO stats (app_id, period_start, host, point, visits, exceptions,"
		" timeouts, downgrades, max_concurrency, hist, faults, delays)"
		" SELECT app_id, period_start + 10, host, point, 8, 0, 0, 0, 0, NULL, 0, 0"
		" FROM stats;");
	sqlite3_close(db);

	/* Opening migrates it forward; the old rows read as not suspended, 0. */
	st = sqlite_store_open(path, err);
	assert_non_null(st);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(user_version(db), 13);
	sqlite3_close(db);
	assert_int_equal(st->ops->stats_scan(st, "g", "shop", "order", T0, T0 + 20,
					     collect, &s, err), STORE_OK);
	assert_int_equal(s.n, 2);
	assert_true(!s.suspended[0] && s.overhead_milli[0] == 0);
	assert_true(!s.suspended[1] && s.overhead_milli[1] == 0);
	want_state("order", T0, T0 + 20, false, "0.0", T0 + 10);

	/* And it stores the budget's fields from then on. */
	fixture_post_json(fixture_hb_json("h1", T0 + 20, "\"order\": {\"suspended\": true, \"overhead_pct\": 7.5}"),
	     T0 + 32, false);
	want_state("order", T0, T0 + 30, true, "7.5", T0 + 20);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_database, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
