// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/sqlite/reader.c - statistics scans on a connection of their own.
 *
 * The store's one connection is serialized by a mutex that every
 * heartbeat takes; a 30-day scan under it held every heartbeat of the
 * fleet for as long as it ran.  In WAL mode a reader sees a consistent
 * snapshot beside the writer, so a scan opens its own read-only
 * connection (a few hundred microseconds, once per stats request) and
 * holds the mutex only to learn the file's name.  An in-memory or
 * temporary database (no file name) has no second connection: it scans
 * under the mutex as before.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include "store/sqlite/sqlite.h"

static const char scan_sql[] =
	"SELECT s.period_start, s.point, s.host, s.visits, s.exceptions, s.timeouts,"
	" s.downgrades, s.max_concurrency, s.hist, s.faults, s.delays, s.suspended,"
	" s.overhead_milli" STORE_STAT_SQL_S " FROM stats s"
	" JOIN apps a ON a.id = s.app_id JOIN groups g ON g.id = a.group_id"
	" WHERE g.name = ?1 AND a.name = ?2 AND s.period_start >= ?3"
	" AND s.period_start < ?4 AND (?5 IS NULL OR s.point = ?5)";

static const char app_sql[] =
	"SELECT 1 FROM apps a JOIN groups g ON g.id = a.group_id"
	" WHERE g.name = ?1 AND a.name = ?2";

/* As sq_bind_text(): these statements are SQLite's own, not the query files'. */
static void bind_name(sqlite3_stmt *q, int i, const char *t)
{
	sqlite3_bind_text(q, i, t ? t : "", -1, SQLITE_STATIC);
}

/* Does app @g/@a exist?  0, STORE_NOTFOUND or STORE_ERROR. */
static int app_exists(sqlite3 *db, const char *g, const char *a, char *err)
{
	sqlite3_stmt *q = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, app_sql, -1, &q, NULL) != SQLITE_OK) {
		sq_seterr(err, "database: %s", sqlite3_errmsg(db));
		return STORE_ERROR;
	}
	bind_name(q, 1, g);
	bind_name(q, 2, a);
	rc = sqlite3_step(q);
	sqlite3_finalize(q);
	if (rc == SQLITE_ROW)
		return 0;
	if (rc != SQLITE_DONE) {
		sq_seterr(err, "database: %s", sqlite3_errmsg(db));
		return STORE_ERROR;
	}
	sq_seterr(err, "app '%s' not found in group '%s'", a, g);
	return STORE_NOTFOUND;
}

static int scan(sqlite3 *db, const char *g, const char *a, const char *point,
		int64_t from, int64_t to, store_stat_cb cb, void *ctx, char *err)
{
	struct sqlite_stmt w = { .base.e = &sqlite_engine };
	sqlite3_stmt *q = NULL;
	int rc, ret;

	/* One snapshot for the check and the scan. */
	if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
		sq_seterr(err, "database: %s", sqlite3_errmsg(db));
		return STORE_ERROR;
	}
	ret = app_exists(db, g, a, err);
	if (ret)
		goto out;
	if (sqlite3_prepare_v2(db, scan_sql, -1, &q, NULL) != SQLITE_OK) {
		sq_seterr(err, "database: %s", sqlite3_errmsg(db));
		ret = STORE_ERROR;
		goto out;
	}
	bind_name(q, 1, g);
	bind_name(q, 2, a);
	sqlite3_bind_int64(q, 3, from);
	sqlite3_bind_int64(q, 4, to);
	if (point)
		bind_name(q, 5, point);
	else
		sqlite3_bind_null(q, 5);
	/* The rows are read through the engine, as the query files read theirs. */
	w.st = q;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		if (sq_stat_row_emit(&w.base, cb, ctx))
			break;
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		sq_seterr(err, "database: %s", sqlite3_errmsg(db));
		ret = STORE_ERROR;
	}
	sqlite3_finalize(q);
out:
	sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	return ret;
}

int sqlite_stats_scan_apart(struct store *st, const char *g, const char *a,
			    const char *point, int64_t from, int64_t to,
			    store_stat_cb cb, void *ctx, char *err)
{
	char path[PATH_MAX];
	const char *f;
	sqlite3 *db = NULL;
	int ret;

	sq_lock(st);
	f = sqlite3_db_filename(sqlite_of(st)->db, "main");
	snprintf(path, sizeof(path), "%s", f ? f : "");
	sq_unlock(st);
	if (!path[0])
		return sq_stats_scan(st, g, a, point, from, to, cb, ctx, err);
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX,
			    NULL) != SQLITE_OK) {
		sq_seterr(err, "database: %s", db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return STORE_ERROR;
	}
	sqlite3_busy_timeout(db, 5000);
	ret = scan(db, g, a, point, from, to, cb, ctx, err);
	sqlite3_close(db);
	return ret;
}
