// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Unit tests of an adaptive point's limit in the admin's store
 * (docs/ADAPTIVE.md, admin/store/stat_cols.h): a heartbeat's
 * "adaptive_limit" and "adaptive_latency_ns" stored with the period's
 * row, read back by the scan, and combined by aggregate_query() (each
 * host's latest limit summed, the highest latency) and
 * aggregate_query_hosts() (each host's own); a database of the schema
 * before them (SQLite 6, PostgreSQL 3) migrated in place, its rows kept
 * and read as not adaptive.  On both engines.
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


/* A point "order" adaptive at @limit steering by @lat ns. */
static char *adaptive(const char *host, int64_t period, int limit, long lat)
{
	char pts[256];

	snprintf(pts, sizeof(pts), "\"order\": {\"visits\": 5, \"adaptive_limit\": %d,"
		 " \"adaptive_latency_ns\": %ld}, \"pay\": {\"visits\": 1}", limit, lat);
	return fixture_hb_json(host, period, pts);
}

/* The stored rows of "order", as stats_scan() hands them back. */
struct seen {
	int n;
	int64_t period[8];
	uint64_t limit[8], lat[8], visits[8];
};

static int collect(const struct store_stat_row *row, void *ctx)
{
	struct seen *s = ctx;

	if (s->n < 8) {
		s->period[s->n] = row->period_start;
		s->limit[s->n] = row->adaptive_limit;
		s->lat[s->n] = row->adaptive_latency_ns;
		s->visits[s->n] = row->visits;
	}
	s->n++;
	return 0;
}

/* The rows of "order" in [from, to), ordered by period (scans are not). */
static struct seen scan(int64_t from, int64_t to)
{
	struct seen s = { 0 };
	int i, j;

	assert_int_equal(st->ops->stats_scan(st, "g", "shop", "order", from, to, collect,
					     &s, err), STORE_OK);
	for (i = 1; i < s.n && i < 8; i++)
		for (j = i; j > 0 && s.period[j - 1] > s.period[j]; j--) {
			struct seen t = s;

			s.period[j] = t.period[j - 1], s.period[j - 1] = t.period[j];
			s.limit[j] = t.limit[j - 1], s.limit[j - 1] = t.limit[j];
			s.lat[j] = t.lat[j - 1], s.lat[j - 1] = t.lat[j];
			s.visits[j] = t.visits[j - 1], s.visits[j - 1] = t.visits[j];
		}
	return s;
}

/* -1: null (no host has one). */
static int64_t num(json_t *o, const char *k)
{
	json_t *v = json_object_get(o, k);

	if (json_is_null(v))
		return -1;
	if (!json_is_integer(v))
		fail_msg("%s: not an integer or null", k);
	return json_integer_value(v);
}

/*
 * @point's limit (summed over hosts), its hosts and latency (the highest)
 * in aggregate_query() over [from, to); with @host, that host's in
 * aggregate_query_hosts().
 */
static void want(const char *point, const char *host, int64_t from, int64_t to,
		 int64_t limit, int64_t hosts, int64_t lat)
{
	json_t *o, *p;

	if (host)
		assert_int_equal(aggregate_query_hosts(st, "g", "shop", point, from, to, 10,
						       &o, err), STORE_OK);
	else
		assert_int_equal(aggregate_query(st, "g", "shop", NULL, from, to, 10, &o, err),
				 STORE_OK);
	p = json_object_get(json_object_get(o, host ? "hosts" : "points"), host ? host : point);
	if (!p) {
		json_decref(o);
		fail_msg("no '%s' in the answer", host ? host : point);
	}
	assert_int_equal(num(p, "adaptive_limit"), limit);
	assert_int_equal(num(p, "adaptive_limit_hosts"), hosts);
	assert_int_equal(num(p, "adaptive_latency_ns"), lat);
	json_decref(o);
}

static void test_round_trip(void **state)
{
	struct seen s;
	char pts[256];
	int i, n;

	/* Two hosts of one period: the limits summed, the higher latency. */
	fixture_post_json(adaptive("h1", T0, 40, 2500000), T0 + 11, false);
	fixture_post_json(adaptive("h2", T0, 25, 4000000), T0 + 12, false);
	s = scan(T0, T0 + 10);
	assert_int_equal(s.n, 2);
	assert_true((s.limit[0] == 40 && s.lat[0] == 2500000 && s.limit[1] == 25 &&
		     s.lat[1] == 4000000) ||
		    (s.limit[1] == 40 && s.lat[1] == 2500000 && s.limit[0] == 25 &&
		     s.lat[0] == 4000000));
	want("order", NULL, T0, T0 + 10, 65, 2, 4000000);
	/* A point that is not adaptive: null, no host. */
	want("pay", NULL, T0, T0 + 10, -1, 0, -1);
	want("order", "h1", T0, T0 + 10, 40, 1, 2500000);
	want("order", "h2", T0, T0 + 10, 25, 1, 4000000);

	/* A repeat of (host, period) changes nothing. */
	fixture_post_json(adaptive("h1", T0, 99, 1), T0 + 13, true);
	want("order", NULL, T0, T0 + 10, 65, 2, 4000000);

	/*
	 * h1's next period, h2's not heard yet: h1's latest (38) and h2's
	 * (25, ten seconds older), the higher latency h2's.
	 */
	fixture_post_json(adaptive("h1", T0 + 10, 38, 3000000), T0 + 21, false);
	want("order", NULL, T0, T0 + 20, 63, 2, 4000000);
	want("order", "h1", T0, T0 + 20, 38, 1, 3000000);
	/* A range that ends before it keeps the older state. */
	want("order", NULL, T0, T0 + 10, 65, 2, 4000000);

	/* h2 stops being adaptive: only h1's counts. */
	fixture_post_json(fixture_hb_json("h2", T0 + 10, "\"order\": {\"visits\": 2}"), T0 + 22, false);
	want("order", NULL, T0, T0 + 20, 38, 1, 3000000);
	want("order", "h2", T0, T0 + 20, -1, 0, -1);

	/* h2 adaptive again at T0 + 20, then silent: it counts for 30 s. */
	fixture_post_json(adaptive("h2", T0 + 20, 30, 6000000), T0 + 32, false);
	fixture_post_json(adaptive("h1", T0 + 40, 44, 1000000), T0 + 51, false);
	want("order", NULL, T0, T0 + 50, 74, 2, 6000000);
	fixture_post_json(adaptive("h1", T0 + 50, 45, 1000000), T0 + 61, false);
	want("order", NULL, T0, T0 + 60, 45, 1, 1000000);

	/* Every row keeps its own period's values. */
	s = scan(T0 + 10, T0 + 30);
	assert_int_equal(s.n, 3);
	assert_true(s.period[0] == T0 + 10 && s.period[1] == T0 + 10);
	assert_true((s.limit[0] == 38 && s.limit[1] == 0) || (s.limit[0] == 0 && s.limit[1] == 38));
	assert_true(s.period[2] == T0 + 20 && s.limit[2] == 30 && s.lat[2] == 6000000);

	/* Twenty hosts of one period (more than the first allocation): 1 + ... + 20. */
	for (i = 1; i <= 20; i++) {
		char host[16];

		snprintf(host, sizeof(host), "m%d", i);
		fixture_post_json(adaptive(host, T0 + 100, i, i * 1000L), T0 + 111, false);
	}
	want("order", NULL, T0 + 100, T0 + 110, 210, 20, 20000);
	want("order", "m7", T0 + 100, T0 + 110, 7, 1, 7000);

	/* The largest values the heartbeat takes come back whole. */
	n = snprintf(pts, sizeof(pts), "\"order\": {\"adaptive_limit\": 1099511627776,"
		     " \"adaptive_latency_ns\": 1099511627775}");
	assert_true(n < (int)sizeof(pts));
	fixture_post_json(fixture_hb_json("big", T0 + 200, pts), T0 + 211, false);
	want("order", "big", T0 + 200, T0 + 210, 1099511627776LL, 1, 1099511627775LL);
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

/* PostgreSQL: run @q (no rows), or its one value as text (free()d by the caller). */
static char *pg(const char *q)
{
	PGconn *c = PQconnectdb(fixture_pg());
	PGresult *r = PQexec(c, q);
	char *out = NULL;

	if (PQresultStatus(r) == PGRES_TUPLES_OK)
		out = strdup(PQgetvalue(r, 0, 0));
	else if (PQresultStatus(r) != PGRES_COMMAND_OK)
		fail_msg("%s: %s", q, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return out;
}

static void pg_want(const char *q, const char *want)
{
	char *got = pg(q);

	assert_non_null(got);
	assert_string_equal(got, want);
	free(got);
}

static void test_old_database(void **state)
{
	struct seen s;
	sqlite3 *db;

	/* Written before: a row of T0, and one of T0 + 10 added as the old binary would. */
	fixture_post_json(fixture_hb_json("h1", T0, "\"order\": {\"visits\": 7}"), T0 + 12, false);
	store_close(st);
	st = NULL;
	if (fixture_pg()) {
		pg_want("SELECT version FROM sds_schema", "10");
		free(pg(FIXTURE_DROP_TO_PRE_ADAPTIVE
			"UPDATE sds_schema SET version = 3;"
			"INSERT INTO stats (app_id, period_start, host, point, visits,"
			" exceptions, timeouts, downgrades, max_concurrency, hist)"
			" SELECT app_id, period_start + 10, host, point, 8, 0, 0, 0, 0, NULL"
			" FROM stats"));
	} else {
		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(user_version(db), 13);
		sql(db, FIXTURE_DROP_TO_PRE_ADAPTIVE
			"PRAGMA user_version = 6;"
			"INSERT INTO stats (app_id, period_start, host, point, visits, exceptions,"
			" timeouts, downgrades, max_concurrency, hist, faults, delays, suspended,"
			" overhead_milli)"
			" SELECT app_id, period_start + 10, host, point, 8, 0, 0, 0, 0, NULL, 0, 0,"
			" 0, 0 FROM stats;");
		sqlite3_close(db);
	}

	/* Opening migrates it forward; the old rows read as not adaptive. */
	st = fixture_open();
	if (!st)
		fail_msg("reopening: %s", err);
	if (fixture_pg()) {
		pg_want("SELECT version FROM sds_schema", "10");
		pg_want("SELECT count(*) FROM information_schema.columns WHERE table_name = 'stats'"
			" AND column_name IN ('adaptive_limit', 'adaptive_latency_ns')", "2");
	} else {
		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		assert_int_equal(user_version(db), 13);
		sqlite3_close(db);
	}
	s = scan(T0, T0 + 20);
	assert_int_equal(s.n, 2);
	assert_true(s.visits[0] == 7 && s.limit[0] == 0 && s.lat[0] == 0);
	assert_true(s.visits[1] == 8 && s.limit[1] == 0 && s.lat[1] == 0);
	want("order", NULL, T0, T0 + 20, -1, 0, -1);

	/* And it stores them from then on. */
	fixture_post_json(adaptive("h1", T0 + 20, 12, 800000), T0 + 32, false);
	want("order", NULL, T0, T0 + 30, 12, 1, 800000);
	s = scan(T0, T0 + 30);
	assert_true(s.n == 3 && s.limit[2] == 12 && s.lat[2] == 800000);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_old_database, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
