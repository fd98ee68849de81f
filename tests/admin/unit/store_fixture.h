/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The store tests' fixture (test_store.c, test_point_state.c, ...): a fresh
 * SQLite store in a temp dir per group (setup), removed with its WAL
 * files (teardown); `st` is the store under test.
 *
 * With SDS_TEST_PG_URL set (postgresql://...; `make admin-unit-pg` starts
 * a server and sets it), the store is PostgreSQL's instead, on an emptied
 * database: the same tests, the same exact results, on both engines.
 */
#ifndef SDS_STORE_FIXTURE_H
#define SDS_STORE_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <libpq-fe.h>

#include <string.h>
#include "heartbeat/heartbeat.h"
#include "store/store.h"

static char dir[64];
static char path[128];
static struct store *st;
static char err[STORE_ERR_MAX];

#define T0 1700000000LL

/*
 * SQL that takes out the columns the store gained since it kept adaptive
 * limits (SQLite schema 8, PostgreSQL 5: the split, max_stuck, overload,
 * a host's pressure and refusals; 9 and 6: the hot keys' table; 10
 * and 7: a drill's hosts, stop conditions and stop reason; 11 and 8:
 * the game days' tables; 12 and 9: the dependencies' table; 13 and 10:
 * a copy plan's options and result, its diff statistics) and the
 * adaptive columns themselves:
 * the first step of making a file or database what an older sds-admin
 * wrote, for the migration tests.  The same SQL runs on both engines.
 */
#define FIXTURE_DROP_TO_PRE_ADAPTIVE					\
	"DROP TABLE copy_diff_stats;"					\
	"ALTER TABLE copy_plans DROP COLUMN opts;"			\
	"ALTER TABLE copy_plans DROP COLUMN result;"			\
	"ALTER TABLE copy_server_stats DROP COLUMN unpaired;"		\
	"DROP TABLE deps;"						\
	"DROP TABLE gameday_runs;"					\
	"DROP TABLE gamedays;"						\
	"ALTER TABLE apps DROP COLUMN drills_seq;"			\
	"DROP TABLE hot_keys;"						\
	"ALTER TABLE drills DROP COLUMN hosts;"				\
	"ALTER TABLE drills DROP COLUMN stop_when;"			\
	"ALTER TABLE drills DROP COLUMN stop_reason;"			\
	"ALTER TABLE stats DROP COLUMN split_calls;"			\
	"ALTER TABLE stats DROP COLUMN split_on_cpu_ns;"		\
	"ALTER TABLE stats DROP COLUMN split_runqueue_ns;"		\
	"ALTER TABLE stats DROP COLUMN split_blocked_ns;"		\
	"ALTER TABLE stats DROP COLUMN max_stuck;"			\
	"ALTER TABLE stats DROP COLUMN overload;"			\
	"ALTER TABLE hosts DROP COLUMN pressure;"			\
	"ALTER TABLE hosts DROP COLUMN refused;"			\
	"ALTER TABLE stats DROP COLUMN adaptive_limit;"			\
	"ALTER TABLE stats DROP COLUMN adaptive_latency_ns;"

/* The PostgreSQL database under test, or NULL: the SQLite file. */
static const char *fixture_pg(void)
{
	const char *url = getenv("SDS_TEST_PG_URL");

	return url && *url ? url : NULL;
}

/* Empty the PostgreSQL database: every table, partition and version row. */
static int fixture_pg_wipe(const char *url)
{
	PGconn *c = PQconnectdb(url);
	PGresult *r = PQexec(c, "SET client_min_messages = warning;"
			      " DROP SCHEMA public CASCADE; CREATE SCHEMA public");
	int ok = PQresultStatus(r) == PGRES_COMMAND_OK;

	if (!ok)
		fprintf(stderr, "fixture: %s", PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

/* (Re)open the store under test; its data stays. */
static struct store *fixture_open(void)
{
	return fixture_pg() ? pg_store_open(fixture_pg(), err) : sqlite_store_open(path, err);
}

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/sds-admin-test.XXXXXX");
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/sds.db", dir);
	if (fixture_pg() && fixture_pg_wipe(fixture_pg()))
		return -1;
	st = fixture_open();
	if (!st)
		fprintf(stderr, "fixture: %s\n", err);
	return st ? 0 : -1;
}

static int teardown(void **state)
{
	char p[160];

	store_close(st);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
	unlink(path);
	rmdir(dir);
	return 0;
}

/*
 * Parse @json as a loader would send it and store it at @now; the store
 * must say @want_duplicate (the units of point state that post JSON).
 */
static __attribute__((unused)) void fixture_post_json(const char *json,
						      int64_t now,
						      bool want_duplicate)
{
	struct sds_heartbeat *hb = heartbeat_new();
	struct store_hb_result res = { 0 };
	char perr[256];

	assert_non_null(hb);
	if (heartbeat_parse(json, strlen(json), hb, perr, sizeof(perr)))
		fail_msg("heartbeat_parse: %s", perr);
	assert_int_equal(st->ops->heartbeat(st, hb, now, &res, err), STORE_OK);
	assert_int_equal(res.duplicate, want_duplicate);
	heartbeat_free(hb);
}

/* A heartbeat of app g/shop from @host for @period with @points ("NAME": {...}, ...). */
static __attribute__((unused)) char *fixture_hb_json(const char *host,
						     int64_t period,
						     const char *points)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"group\": \"g\", \"app\": \"shop\", \"host\": \"%s\", \"ip\": \"\","
		 " \"period_start\": %lld, \"period_s\": 10, \"version\": 0,"
		 " \"points\": {%s}}", host, (long long)period, points);
	return buf;
}

#endif /* SDS_STORE_FIXTURE_H */
