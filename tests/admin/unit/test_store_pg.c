// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * What only the PostgreSQL store has: statistics in day partitions with
 * exact names, retention that drops them whole, and the refusal of a
 * schema newer than the binary.  Needs SDS_TEST_PG_URL (make
 * admin-unit-pg); under SQLite every test says so and is SKIPPED.
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

#include "store/store.h"
#include "store_fixture.h"

#define DAY 86400LL

static void need_pg(void)
{
	if (!fixture_pg()) {
		printf("test_store_pg: PostgreSQL only (run by make admin-unit-pg)\n");
		skip();
	}
}

/* @sql's rows, one column, joined by ' '. */
static char *query(const char *sql)
{
	PGconn *c = PQconnectdb(fixture_pg());
	PGresult *r = PQexec(c, sql);
	size_t len = 0;
	char *out = NULL;
	FILE *f = open_memstream(&out, &len);
	int i;

	assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
	for (i = 0; i < PQntuples(r); i++)
		fprintf(f, "%s%s", i ? " " : "", PQgetvalue(r, i, 0));
	fclose(f);
	PQclear(r);
	PQfinish(c);
	return out;
}

static void exec(const char *sql)
{
	PGconn *c = PQconnectdb(fixture_pg());
	PGresult *r = PQexec(c, sql);

	assert_int_equal(PQresultStatus(r), PGRES_COMMAND_OK);
	PQclear(r);
	PQfinish(c);
}

static void post(const char *host, int64_t period)
{
	struct sds_heartbeat *hb = heartbeat_new();
	struct store_hb_result res = { 0 };

	heartbeat_init(hb, "g", "shop", host, "", period, 0);
	heartbeat_add_point(hb, "order")->visits = 3;
	heartbeat_add_point(hb, "pay")->visits = 4;
	assert_int_equal(st->ops->heartbeat(st, hb, period + 12, &res, err), STORE_OK);
	assert_false(res.duplicate);
	heartbeat_free(hb);
}

static int count_rows(const struct store_stat_row *row, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

#define PARTS "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid" \
	" WHERE i.inhparent = 'stats'::regclass ORDER BY 1"

static void test_partitions_and_retention(void **state)
{
	int64_t day = T0 / DAY * DAY, today = time(NULL) / DAY * DAY;
	char want[256], d0[16], d1[16];
	time_t t;
	char *got;
	int n = 0;

	need_pg();
	/* T0 is 2023-11-14 22:13:20 UTC: two heartbeats that day, one the next. */
	post("h1", T0);
	post("h1", T0 + 10);
	post("h1", day + DAY + 60);
	t = today;
	strftime(d0, sizeof(d0), "%Y%m%d", gmtime(&t));
	t = today + DAY;
	strftime(d1, sizeof(d1), "%Y%m%d", gmtime(&t));
	/* Each heartbeat's day and the next; today and tomorrow since open. */
	snprintf(want, sizeof(want), "stats_p20231114 stats_p20231115 stats_p20231116"
		 " stats_p%s stats_p%s", d0, d1);
	got = query(PARTS);
	assert_string_equal(got, want);
	free(got);

	/* Up to the end of 2023-11-14: only that day goes, with its heartbeats. */
	assert_int_equal(st->ops->prune(st, day + DAY, err), STORE_OK);
	snprintf(want, sizeof(want), "stats_p20231115 stats_p20231116 stats_p%s stats_p%s",
		 d0, d1);
	got = query(PARTS);
	assert_string_equal(got, want);
	free(got);
	got = query("SELECT count(*) FROM pg_class WHERE relname = 'heartbeats_p20231114'");
	assert_string_equal(got, "0");
	free(got);
	assert_int_equal(st->ops->stats_scan(st, "g", "shop", NULL, 0, day + 2 * DAY,
					     count_rows, &n, err), STORE_OK);
	assert_int_equal(n, 2);

	/* A heartbeat of a dropped day gets its partition back. */
	post("h2", T0 + 20);
	got = query("SELECT count(*) FROM stats_p20231114");
	assert_string_equal(got, "2");
	free(got);
}

static void test_newer_schema(void **state)
{
	char *got;

	need_pg();
	store_close(st);
	st = NULL;
	exec("UPDATE sds_schema SET version = 11");
	assert_null(fixture_open());
	assert_non_null(strstr(err, ": schema version 11 is newer than this sds-admin knows (10)"));
	assert_non_null(strstr(err, "database '"));
	got = query("SELECT version FROM sds_schema");
	assert_string_equal(got, "11");
	free(got);
	/* A schema 1 database (before drills' errno, copy servers' owners
	 * and the adaptive columns) upgrades at open. */
	exec("ALTER TABLE drills DROP COLUMN errno");
	exec("ALTER TABLE copy_servers DROP COLUMN owner");
	exec("ALTER TABLE stats DROP COLUMN adaptive_limit");
	exec("ALTER TABLE stats DROP COLUMN adaptive_latency_ns");
	exec("ALTER TABLE stats DROP COLUMN split_calls");
	exec("ALTER TABLE stats DROP COLUMN split_on_cpu_ns");
	exec("ALTER TABLE stats DROP COLUMN split_runqueue_ns");
	exec("ALTER TABLE stats DROP COLUMN split_blocked_ns");
	exec("ALTER TABLE stats DROP COLUMN max_stuck");
	exec("ALTER TABLE stats DROP COLUMN overload");
	exec("ALTER TABLE hosts DROP COLUMN pressure");
	exec("ALTER TABLE hosts DROP COLUMN refused");
	exec("DROP TABLE gameday_runs");
	exec("DROP TABLE gamedays");
	exec("ALTER TABLE apps DROP COLUMN drills_seq");
	exec("DROP TABLE hot_keys");
	exec("ALTER TABLE drills DROP COLUMN hosts");
	exec("ALTER TABLE drills DROP COLUMN stop_when");
	exec("ALTER TABLE drills DROP COLUMN stop_reason");
	exec("DROP TABLE copy_diff_stats");
	exec("ALTER TABLE copy_plans DROP COLUMN opts");
	exec("ALTER TABLE copy_plans DROP COLUMN result");
	exec("ALTER TABLE copy_server_stats DROP COLUMN unpaired");
	exec("DROP TABLE deps");
	exec("UPDATE sds_schema SET version = 1");
	st = fixture_open();
	assert_non_null(st);
	got = query("SELECT version FROM sds_schema");
	assert_string_equal(got, "10");
	free(got);
	got = query("SELECT count(*) FROM information_schema.columns"
		    " WHERE table_name = 'drills' AND column_name = 'errno'");
	assert_string_equal(got, "1");
	free(got);
	got = query("SELECT count(*) FROM information_schema.columns"
		    " WHERE table_name = 'copy_servers' AND column_name = 'owner'");
	assert_string_equal(got, "1");
	free(got);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_partitions_and_retention, setup, teardown),
		cmocka_unit_test_setup_teardown(test_newer_schema, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
