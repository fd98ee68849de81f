// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store_sqlite.c - the SQLite engine of the admin's store.
 *
 * One connection, serialized by a mutex: SQLite writes one transaction at
 * a time anyway, and a mutex gives a predictable latency where busy
 * timeouts would sleep.  WAL with synchronous=NORMAL: a commit is an
 * append to the log, no fsync per heartbeat (a power cut can lose the last
 * commits, never corrupt the file).  Every query is a prepared statement
 * with bound parameters, prepared once and cached.  The schema is versioned
 * by PRAGMA user_version and migrated forward at open.
 */
#include <endian.h>
#include <pthread.h>
#include <stdarg.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "names.h"
#include "store.h"

/* ---- schema ------------------------------------------------------------- */

/* migrations[i] takes the schema from version i to i + 1.  Append only. */
static const char *const migrations[] = {
	/* 1: the organisation, heartbeats and statistics */
	"CREATE TABLE groups ("
	"  id INTEGER PRIMARY KEY,"
	"  name TEXT NOT NULL UNIQUE,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  created INTEGER NOT NULL);"
	"CREATE TABLE apps ("
	"  id INTEGER PRIMARY KEY,"
	"  group_id INTEGER NOT NULL REFERENCES groups(id),"
	"  name TEXT NOT NULL,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  created INTEGER NOT NULL,"
	"  version INTEGER NOT NULL DEFAULT 1,"
	"  active_scheme INTEGER,"
	"  UNIQUE (group_id, name));"
	"CREATE TABLE schemes ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  name TEXT NOT NULL,"
	"  description TEXT NOT NULL DEFAULT '',"
	"  created INTEGER NOT NULL,"
	"  UNIQUE (app_id, name));"
	"CREATE TABLE strategies ("
	"  scheme_id INTEGER NOT NULL REFERENCES schemes(id) ON DELETE CASCADE,"
	"  point TEXT NOT NULL,"
	"  body TEXT NOT NULL,"
	"  PRIMARY KEY (scheme_id, point)) WITHOUT ROWID;"
	"CREATE TABLE hosts ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  host TEXT NOT NULL,"
	"  ip TEXT NOT NULL,"
	"  first_seen INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL,"
	"  last_period INTEGER NOT NULL,"
	"  version INTEGER NOT NULL,"
	"  PRIMARY KEY (app_id, host)) WITHOUT ROWID;"
	"CREATE TABLE heartbeats ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  host TEXT NOT NULL,"
	"  received INTEGER NOT NULL,"
	"  PRIMARY KEY (app_id, period_start, host)) WITHOUT ROWID;"
	"CREATE TABLE stats ("
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  period_start INTEGER NOT NULL,"
	"  host TEXT NOT NULL,"
	"  point TEXT NOT NULL,"
	"  visits INTEGER NOT NULL,"
	"  exceptions INTEGER NOT NULL,"
	"  timeouts INTEGER NOT NULL,"
	"  downgrades INTEGER NOT NULL,"
	"  max_concurrency INTEGER NOT NULL,"
	"  hist BLOB,"
	"  PRIMARY KEY (app_id, period_start, host, point)) WITHOUT ROWID;"
	"CREATE TABLE audit ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  time INTEGER NOT NULL,"
	"  action TEXT NOT NULL,"
	"  detail TEXT NOT NULL,"
	"  comment TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX audit_app ON audit (app_id, id);",
	/* 2: fault drills (issue 5), and what they injected per period */
	"CREATE TABLE drills ("
	"  id INTEGER PRIMARY KEY,"
	"  app_id INTEGER NOT NULL REFERENCES apps(id) ON DELETE CASCADE,"
	"  point TEXT NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  ratio INTEGER NOT NULL,"
	"  delay_ms INTEGER NOT NULL,"
	"  created INTEGER NOT NULL,"
	"  expires_at INTEGER NOT NULL,"
	"  stopped_at INTEGER,"
	"  started_by TEXT NOT NULL,"
	"  stopped_by TEXT);"
	"CREATE INDEX drills_app ON drills (app_id, expires_at);"
	"ALTER TABLE stats ADD COLUMN faults INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE stats ADD COLUMN delays INTEGER NOT NULL DEFAULT 0;",
};
#define SCHEMA_VERSION ((int)(sizeof(migrations) / sizeof(migrations[0])))

/* ---- prepared statements ------------------------------------------------ */

enum {
	Q_BEGIN, Q_COMMIT, Q_ROLLBACK,
	Q_GROUP_ID, Q_GROUP_LIST, Q_GROUP_GET, Q_GROUP_INS, Q_GROUP_UPD,
	Q_GROUP_DEL, Q_GROUP_NAPPS,
	Q_APP_ID, Q_APP_LIST, Q_APP_LIST_ALL, Q_APP_GET, Q_APP_INS, Q_APP_UPD,
	Q_APP_DEL, Q_APP_SET_ACTIVE, Q_APP_BUMP,
	Q_SCHEME_ID, Q_SCHEME_LIST, Q_SCHEME_GET, Q_SCHEME_INS, Q_SCHEME_UPD,
	Q_SCHEME_DEL, Q_SCHEME_NAME,
	Q_STRAT_LIST, Q_STRAT_CLEAR, Q_STRAT_PUT, Q_STRAT_DEL, Q_STRAT_CLONE,
	Q_HB_INS, Q_STAT_INS, Q_HOST_UPSERT,
	Q_HOST_LIST, Q_STAT_SCAN, Q_STAT_SCAN_POINT, Q_POINT_LIST, Q_EVENTS,
	Q_AUDIT_INS, Q_AUDIT_LIST,
	Q_PRUNE_STATS, Q_PRUNE_HB,
	Q_COUNT_GROUPS, Q_COUNT_APPS, Q_COUNT_HOSTS,
	Q_DEL_APP_STATS, Q_DEL_APP_HB, Q_DEL_APP_HOSTS, Q_DEL_APP_AUDIT,
	Q_DEL_APP_SCHEMES, Q_DEL_APP_STRATS,
	Q_DRILL_INS, Q_DRILL_LIST, Q_DRILL_ACTIVE, Q_DRILL_GET, Q_DRILL_STOP,
	NQ
};

static const char *const sql[NQ] = {
	[Q_BEGIN] = "BEGIN IMMEDIATE",
	[Q_COMMIT] = "COMMIT",
	[Q_ROLLBACK] = "ROLLBACK",
	[Q_GROUP_ID] = "SELECT id FROM groups WHERE name = ?1",
	[Q_GROUP_LIST] = "SELECT g.name, g.description, g.created,"
		" (SELECT count(*) FROM apps a WHERE a.group_id = g.id)"
		" FROM groups g ORDER BY g.name",
	[Q_GROUP_GET] = "SELECT g.name, g.description, g.created,"
		" (SELECT count(*) FROM apps a WHERE a.group_id = g.id)"
		" FROM groups g WHERE g.name = ?1",
	[Q_GROUP_INS] = "INSERT INTO groups (name, description, created) VALUES (?1, ?2, ?3)",
	[Q_GROUP_UPD] = "UPDATE groups SET description = ?2 WHERE name = ?1",
	[Q_GROUP_DEL] = "DELETE FROM groups WHERE id = ?1",
	[Q_GROUP_NAPPS] = "SELECT count(*) FROM apps WHERE group_id = ?1",
	[Q_APP_ID] = "SELECT a.id, a.version, a.active_scheme FROM apps a"
		" JOIN groups g ON g.id = a.group_id WHERE g.name = ?1 AND a.name = ?2",
#define APP_COLS "g.name, a.name, a.description, a.created, a.version," \
		" (SELECT s.name FROM schemes s WHERE s.id = a.active_scheme)," \
		" (SELECT count(*) FROM schemes s WHERE s.app_id = a.id)," \
		" (SELECT count(*) FROM hosts h WHERE h.app_id = a.id)"
	[Q_APP_LIST] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" WHERE g.name = ?1 ORDER BY a.name",
	[Q_APP_LIST_ALL] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" ORDER BY g.name, a.name",
	[Q_APP_GET] = "SELECT " APP_COLS " FROM apps a JOIN groups g ON g.id = a.group_id"
		" WHERE g.name = ?1 AND a.name = ?2",
	[Q_APP_INS] = "INSERT INTO apps (group_id, name, description, created) VALUES (?1, ?2, ?3, ?4)",
	[Q_APP_UPD] = "UPDATE apps SET description = ?2 WHERE id = ?1",
	[Q_APP_DEL] = "DELETE FROM apps WHERE id = ?1",
	[Q_APP_SET_ACTIVE] = "UPDATE apps SET active_scheme = ?2, version = version + ?3 WHERE id = ?1",
	[Q_APP_BUMP] = "UPDATE apps SET version = version + 1 WHERE id = ?1 RETURNING version",
	[Q_SCHEME_ID] = "SELECT id FROM schemes WHERE app_id = ?1 AND name = ?2",
	[Q_SCHEME_LIST] = "SELECT s.name, s.description, s.created, s.id = a.active_scheme,"
		" (SELECT count(*) FROM strategies t WHERE t.scheme_id = s.id)"
		" FROM schemes s JOIN apps a ON a.id = s.app_id WHERE s.app_id = ?1 ORDER BY s.name",
	[Q_SCHEME_GET] = "SELECT s.name, s.description, s.created, s.id = a.active_scheme,"
		" (SELECT count(*) FROM strategies t WHERE t.scheme_id = s.id)"
		" FROM schemes s JOIN apps a ON a.id = s.app_id WHERE s.id = ?1",
	[Q_SCHEME_INS] = "INSERT INTO schemes (app_id, name, description, created) VALUES (?1, ?2, ?3, ?4)",
	[Q_SCHEME_UPD] = "UPDATE schemes SET description = ?2 WHERE id = ?1",
	[Q_SCHEME_DEL] = "DELETE FROM schemes WHERE id = ?1",
	[Q_SCHEME_NAME] = "SELECT name FROM schemes WHERE id = ?1",
	[Q_STRAT_LIST] = "SELECT point, body FROM strategies WHERE scheme_id = ?1 ORDER BY point",
	[Q_STRAT_CLEAR] = "DELETE FROM strategies WHERE scheme_id = ?1",
	[Q_STRAT_PUT] = "INSERT OR REPLACE INTO strategies (scheme_id, point, body) VALUES (?1, ?2, ?3)",
	[Q_STRAT_DEL] = "DELETE FROM strategies WHERE scheme_id = ?1 AND point = ?2",
	[Q_STRAT_CLONE] = "INSERT INTO strategies (scheme_id, point, body)"
		" SELECT ?2, point, body FROM strategies WHERE scheme_id = ?1",
	[Q_HB_INS] = "INSERT OR IGNORE INTO heartbeats (app_id, period_start, host, received)"
		" VALUES (?1, ?2, ?3, ?4)",
	[Q_STAT_INS] = "INSERT OR IGNORE INTO stats (app_id, period_start, host, point, visits,"
		" exceptions, timeouts, downgrades, max_concurrency, hist, faults, delays)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
	[Q_HOST_UPSERT] = "INSERT INTO hosts (app_id, host, ip, first_seen, last_seen, last_period, version)"
		" VALUES (?1, ?2, ?3, ?4, ?4, ?5, ?6)"
		" ON CONFLICT (app_id, host) DO UPDATE SET ip = ?3, last_seen = ?4,"
		" last_period = max(last_period, ?5), version = ?6",
	[Q_HOST_LIST] = "SELECT h.host, h.ip, h.first_seen, h.last_seen, h.last_period, h.version"
		" FROM hosts h WHERE h.app_id = ?1 ORDER BY h.host",
	[Q_STAT_SCAN] = "SELECT period_start, point, host, visits, exceptions, timeouts,"
		" downgrades, max_concurrency, hist, faults, delays FROM stats"
		" WHERE app_id = ?1 AND period_start >= ?2 AND period_start < ?3",
	[Q_STAT_SCAN_POINT] = "SELECT period_start, point, host, visits, exceptions, timeouts,"
		" downgrades, max_concurrency, hist, faults, delays FROM stats"
		" WHERE app_id = ?1 AND period_start >= ?2 AND period_start < ?3 AND point = ?4",
	[Q_POINT_LIST] = "SELECT point FROM strategies t JOIN schemes s ON s.id = t.scheme_id"
		" WHERE s.app_id = ?1 UNION SELECT point FROM stats WHERE app_id = ?1"
		" AND period_start >= ?2 ORDER BY 1",
	[Q_EVENTS] = "SELECT period_start, host, point, downgrades, visits FROM stats"
		" WHERE app_id = ?1 AND period_start >= ?2 AND period_start < ?3 AND downgrades > 0"
		" ORDER BY period_start DESC, host, point LIMIT ?4",
	[Q_AUDIT_INS] = "INSERT INTO audit (app_id, time, action, detail, comment) VALUES (?1, ?2, ?3, ?4, ?5)",
	[Q_AUDIT_LIST] = "SELECT time, action, detail, comment FROM audit WHERE app_id = ?1"
		" ORDER BY id DESC LIMIT ?2",
	[Q_PRUNE_STATS] = "DELETE FROM stats WHERE period_start < ?1",
	[Q_PRUNE_HB] = "DELETE FROM heartbeats WHERE period_start < ?1",
	[Q_COUNT_GROUPS] = "SELECT count(*) FROM groups",
	[Q_COUNT_APPS] = "SELECT count(*) FROM apps",
	[Q_COUNT_HOSTS] = "SELECT count(*) FROM hosts",
	[Q_DEL_APP_STATS] = "DELETE FROM stats WHERE app_id = ?1",
	[Q_DEL_APP_HB] = "DELETE FROM heartbeats WHERE app_id = ?1",
	[Q_DEL_APP_HOSTS] = "DELETE FROM hosts WHERE app_id = ?1",
	[Q_DEL_APP_AUDIT] = "DELETE FROM audit WHERE app_id = ?1",
	[Q_DEL_APP_STRATS] = "DELETE FROM strategies WHERE scheme_id IN"
		" (SELECT id FROM schemes WHERE app_id = ?1)",
	[Q_DEL_APP_SCHEMES] = "DELETE FROM schemes WHERE app_id = ?1",
	[Q_DRILL_INS] = "INSERT INTO drills (app_id, point, kind, ratio, delay_ms, created,"
		" expires_at, started_by) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
	[Q_DRILL_LIST] = "SELECT id, point, kind, ratio, delay_ms, created, expires_at,"
		" stopped_at, started_by, stopped_by FROM drills WHERE app_id = ?1"
		" ORDER BY id DESC LIMIT 200",
	[Q_DRILL_ACTIVE] = "SELECT id, point, kind, ratio, delay_ms, expires_at FROM drills"
		" WHERE app_id = ?1 AND stopped_at IS NULL AND expires_at > ?2 ORDER BY id",
	[Q_DRILL_GET] = "SELECT point, stopped_at, expires_at FROM drills"
		" WHERE app_id = ?1 AND id = ?2",
	[Q_DRILL_STOP] = "UPDATE drills SET stopped_at = ?3, stopped_by = ?4"
		" WHERE app_id = ?1 AND id = ?2",
};

struct sqlite_store {
	struct store base;
	pthread_mutex_t lock;
	sqlite3 *db;
	sqlite3_stmt *q[NQ];
};

#define SS(st) ((struct sqlite_store *)(st))

static void seterr(char *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void seterr(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, STORE_ERR_MAX, fmt, ap);
	va_end(ap);
}

static int64_t now_s(void)
{
	return (int64_t)time(NULL);
}

/* The cached statement @id, reset and unbound, or NULL. */
static sqlite3_stmt *Q(struct sqlite_store *s, int id)
{
	sqlite3_stmt *q = s->q[id];

	if (!q) {
		if (sqlite3_prepare_v3(s->db, sql[id], -1, SQLITE_PREPARE_PERSISTENT,
				       &s->q[id], NULL) != SQLITE_OK)
			return NULL;
		return s->q[id];
	}
	sqlite3_reset(q);
	sqlite3_clear_bindings(q);
	return q;
}

static int dberr(struct sqlite_store *s, char *err)
{
	seterr(err, "database: %s", sqlite3_errmsg(s->db));
	return STORE_ERROR;
}

/* Run a statement without rows; 0 or STORE_ERROR. */
static int run(struct sqlite_store *s, sqlite3_stmt *q, char *err)
{
	int rc;

	if (!q)
		return dberr(s, err);
	rc = sqlite3_step(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		int ret = sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_UNIQUE ||
			  sqlite3_extended_errcode(s->db) == SQLITE_CONSTRAINT_PRIMARYKEY ?
			  STORE_EXISTS : dberr(s, err);
		sqlite3_reset(q);
		return ret;
	}
	sqlite3_reset(q);
	return 0;
}

static int exec0(struct sqlite_store *s, int id, char *err)
{
	return run(s, Q(s, id), err);
}

static void lock(struct store *st)
{
	pthread_mutex_lock(&SS(st)->lock);
}

static void unlock(struct store *st)
{
	pthread_mutex_unlock(&SS(st)->lock);
}

static int begin(struct sqlite_store *s, char *err)
{
	return exec0(s, Q_BEGIN, err);
}

static int commit(struct sqlite_store *s, char *err)
{
	int ret = exec0(s, Q_COMMIT, err);

	if (ret)
		exec0(s, Q_ROLLBACK, NULL);
	return ret;
}

static void rollback(struct sqlite_store *s)
{
	if (!sqlite3_get_autocommit(s->db))
		exec0(s, Q_ROLLBACK, NULL);
}

static void bind_text(sqlite3_stmt *q, int i, const char *t)
{
	sqlite3_bind_text(q, i, t ? t : "", -1, SQLITE_STATIC);
}

static const char *col_text(sqlite3_stmt *q, int i)
{
	const unsigned char *t = sqlite3_column_text(q, i);

	return t ? (const char *)t : "";
}

/* ---- name resolution ---------------------------------------------------- */

static int group_id(struct sqlite_store *s, const char *g, int64_t *id, char *err)
{
	sqlite3_stmt *q = Q(s, Q_GROUP_ID);
	int rc;

	if (!q)
		return dberr(s, err);
	bind_text(q, 1, g);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(q, 0);
		sqlite3_reset(q);
		return 0;
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return dberr(s, err);
	seterr(err, "group '%s' not found", g);
	return STORE_NOTFOUND;
}

struct app_ref {
	int64_t id;
	int64_t version;
	int64_t active;		/* scheme id */
};

static int app_ref(struct sqlite_store *s, const char *g, const char *a,
		   struct app_ref *r, char *err)
{
	sqlite3_stmt *q = Q(s, Q_APP_ID);
	int rc;

	if (!q)
		return dberr(s, err);
	bind_text(q, 1, g);
	bind_text(q, 2, a);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		r->id = sqlite3_column_int64(q, 0);
		r->version = sqlite3_column_int64(q, 1);
		r->active = sqlite3_column_int64(q, 2);
		sqlite3_reset(q);
		return 0;
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return dberr(s, err);
	seterr(err, "app '%s' not found in group '%s'", a, g);
	return STORE_NOTFOUND;
}

static int scheme_id(struct sqlite_store *s, int64_t app, const char *name,
		     int64_t *id, char *err)
{
	sqlite3_stmt *q = Q(s, Q_SCHEME_ID);
	int rc;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	bind_text(q, 2, name);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW) {
		*id = sqlite3_column_int64(q, 0);
		sqlite3_reset(q);
		return 0;
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return dberr(s, err);
	seterr(err, "scheme '%s' not found", name);
	return STORE_NOTFOUND;
}

static int audit_add(struct sqlite_store *s, int64_t app, const char *action,
		     const char *detail, const char *comment, char *err)
{
	sqlite3_stmt *q = Q(s, Q_AUDIT_INS);

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	sqlite3_bind_int64(q, 2, now_s());
	bind_text(q, 3, action);
	bind_text(q, 4, detail);
	bind_text(q, 5, comment);
	return run(s, q, err);
}

/* Bump the app's version; *version gets the new one. */
static int bump(struct sqlite_store *s, int64_t app, int64_t *version, char *err)
{
	sqlite3_stmt *q = Q(s, Q_APP_BUMP);
	int rc;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	rc = sqlite3_step(q);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(q);
		return dberr(s, err);
	}
	if (version)
		*version = sqlite3_column_int64(q, 0);
	sqlite3_step(q);
	sqlite3_reset(q);
	return 0;
}

/* ---- groups ------------------------------------------------------------- */

static json_t *group_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:I}", "name", col_text(q, 0),
			 "description", col_text(q, 1),
			 "created", (json_int_t)sqlite3_column_int64(q, 2),
			 "apps", (json_int_t)sqlite3_column_int64(q, 3));
}

/* Collect every row of @q into a new array via @row. */
static int rows(struct sqlite_store *s, sqlite3_stmt *q, json_t *(*row)(sqlite3_stmt *),
		json_t **out, char *err)
{
	json_t *arr = json_array();
	int rc;

	while ((rc = sqlite3_step(q)) == SQLITE_ROW)
		json_array_append_new(arr, row(q));
	sqlite3_reset(q);
	if (rc != SQLITE_DONE) {
		json_decref(arr);
		return dberr(s, err);
	}
	*out = arr;
	return 0;
}

/* The one row of @q via @row, or NOTFOUND with @what. */
static int one(struct sqlite_store *s, sqlite3_stmt *q, json_t *(*row)(sqlite3_stmt *),
	       json_t **out, char *err)
{
	int rc = sqlite3_step(q);

	if (rc == SQLITE_ROW) {
		*out = row(q);
		sqlite3_reset(q);
		return 0;
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return dberr(s, err);
	return STORE_NOTFOUND;
}

static int sq_group_list(struct store *st, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_GROUP_LIST);
	ret = q ? rows(s, q, group_row, out, err) : dberr(s, err);
	unlock(st);
	return ret;
}

static int sq_group_get(struct store *st, const char *g, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_GROUP_GET);
	if (!q) {
		ret = dberr(s, err);
	} else {
		bind_text(q, 1, g);
		ret = one(s, q, group_row, out, err);
		if (ret == STORE_NOTFOUND)
			seterr(err, "group '%s' not found", g);
	}
	unlock(st);
	return ret;
}

static int group_insert(struct sqlite_store *s, const char *g, const char *desc,
			char *err)
{
	sqlite3_stmt *q = Q(s, Q_GROUP_INS);
	int ret;

	if (!q)
		return dberr(s, err);
	bind_text(q, 1, g);
	bind_text(q, 2, desc);
	sqlite3_bind_int64(q, 3, now_s());
	ret = run(s, q, err);
	if (ret == STORE_EXISTS)
		seterr(err, "group '%s' exists", g);
	return ret;
}

static int sq_group_create(struct store *st, const char *g, const char *desc, char *err)
{
	int ret;

	lock(st);
	ret = group_insert(SS(st), g, desc, err);
	unlock(st);
	return ret;
}

static int sq_group_update(struct store *st, const char *g, const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_GROUP_UPD);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	bind_text(q, 1, g);
	bind_text(q, 2, desc);
	ret = run(s, q, err);
	if (!ret && sqlite3_changes(s->db) == 0) {
		seterr(err, "group '%s' not found", g);
		ret = STORE_NOTFOUND;
	}
out:
	unlock(st);
	return ret;
}

static int sq_group_delete(struct store *st, const char *g, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int64_t id;
	int ret;

	lock(st);
	ret = group_id(s, g, &id, err);
	if (ret)
		goto out;
	q = Q(s, Q_GROUP_NAPPS);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, id);
	if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_int64(q, 0) > 0) {
		sqlite3_reset(q);
		seterr(err, "group '%s' still has apps: delete them first", g);
		ret = STORE_CONFLICT;
		goto out;
	}
	sqlite3_reset(q);
	q = Q(s, Q_GROUP_DEL);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, id);
	ret = run(s, q, err);
out:
	unlock(st);
	return ret;
}

/* ---- apps --------------------------------------------------------------- */

static json_t *app_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:s, s:I, s:I, s:s, s:I, s:I}",
			 "group", col_text(q, 0), "name", col_text(q, 1),
			 "description", col_text(q, 2),
			 "created", (json_int_t)sqlite3_column_int64(q, 3),
			 "version", (json_int_t)sqlite3_column_int64(q, 4),
			 "active_scheme", col_text(q, 5),
			 "schemes", (json_int_t)sqlite3_column_int64(q, 6),
			 "hosts", (json_int_t)sqlite3_column_int64(q, 7));
}

static int sq_app_list(struct store *st, const char *g, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int64_t gid;
	int ret;

	lock(st);
	if (g) {
		ret = group_id(s, g, &gid, err);
		if (ret)
			goto out;
	}
	q = Q(s, g ? Q_APP_LIST : Q_APP_LIST_ALL);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	if (g)
		bind_text(q, 1, g);
	ret = rows(s, q, app_row, out, err);
out:
	unlock(st);
	return ret;
}

static int sq_app_get(struct store *st, const char *g, const char *a, json_t **out,
		      char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_APP_GET);
	if (!q) {
		ret = dberr(s, err);
	} else {
		bind_text(q, 1, g);
		bind_text(q, 2, a);
		ret = one(s, q, app_row, out, err);
		if (ret == STORE_NOTFOUND)
			seterr(err, "app '%s' not found in group '%s'", a, g);
	}
	unlock(st);
	return ret;
}

static int scheme_insert(struct sqlite_store *s, int64_t app, const char *name,
			 const char *desc, int64_t *id, char *err)
{
	sqlite3_stmt *q = Q(s, Q_SCHEME_INS);
	int ret;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	bind_text(q, 2, name);
	bind_text(q, 3, desc);
	sqlite3_bind_int64(q, 4, now_s());
	ret = run(s, q, err);
	if (ret == STORE_EXISTS)
		seterr(err, "scheme '%s' exists", name);
	*id = sqlite3_last_insert_rowid(s->db);
	return ret;
}

/* Inside a transaction: the group (created if missing) and a new app. */
static int app_insert(struct sqlite_store *s, const char *g, const char *a,
		      const char *desc, struct app_ref *r, char *err)
{
	sqlite3_stmt *q;
	int64_t gid, sid;
	int ret;

	ret = group_id(s, g, &gid, err);
	if (ret == STORE_NOTFOUND) {
		ret = group_insert(s, g, "", err);
		gid = sqlite3_last_insert_rowid(s->db);
	}
	if (ret)
		return ret;
	q = Q(s, Q_APP_INS);
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, gid);
	bind_text(q, 2, a);
	bind_text(q, 3, desc);
	sqlite3_bind_int64(q, 4, now_s());
	ret = run(s, q, err);
	if (ret == STORE_EXISTS)
		seterr(err, "app '%s' exists in group '%s'", a, g);
	if (ret)
		return ret;
	r->id = sqlite3_last_insert_rowid(s->db);
	r->version = 1;
	ret = scheme_insert(s, r->id, "default", "", &sid, err);
	if (ret)
		return ret;
	r->active = sid;
	q = Q(s, Q_APP_SET_ACTIVE);
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, r->id);
	sqlite3_bind_int64(q, 2, sid);
	sqlite3_bind_int64(q, 3, 0);
	return run(s, q, err);
}

static int sq_app_create(struct store *st, const char *g, const char *a,
			 const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_insert(s, g, a, desc, &r, err);
	if (!ret)
		ret = audit_add(s, r.id, "app.create", a, "", err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

static int sq_app_update(struct store *st, const char *g, const char *a,
			 const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_APP_UPD);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	bind_text(q, 2, desc);
	ret = run(s, q, err);
out:
	unlock(st);
	return ret;
}

static int sq_app_delete(struct store *st, const char *g, const char *a, char *err)
{
	static const int dels[] = {
		Q_DEL_APP_STATS, Q_DEL_APP_HB, Q_DEL_APP_HOSTS, Q_DEL_APP_AUDIT,
		Q_DEL_APP_STRATS, Q_DEL_APP_SCHEMES, Q_APP_DEL,
	};
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	size_t i;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	ret = begin(s, err);
	if (ret)
		goto out;
	/* Explicit deletes: no reliance on foreign_keys being on. */
	for (i = 0; i < sizeof(dels) / sizeof(dels[0]) && !ret; i++) {
		sqlite3_stmt *q = Q(s, dels[i]);

		if (!q) {
			ret = dberr(s, err);
			break;
		}
		sqlite3_bind_int64(q, 1, r.id);
		ret = run(s, q, err);
	}
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

/* ---- schemes ------------------------------------------------------------ */

static json_t *scheme_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:b, s:I}", "name", col_text(q, 0),
			 "description", col_text(q, 1),
			 "created", (json_int_t)sqlite3_column_int64(q, 2),
			 "active", sqlite3_column_int(q, 3),
			 "points", (json_int_t)sqlite3_column_int64(q, 4));
}

static int sq_scheme_list(struct store *st, const char *g, const char *a,
			  json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_SCHEME_LIST);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	ret = rows(s, q, scheme_row, out, err);
out:
	unlock(st);
	return ret;
}

static int sq_scheme_get(struct store *st, const char *g, const char *a,
			 const char *name, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	q = Q(s, Q_SCHEME_GET);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, sid);
	ret = one(s, q, scheme_row, out, err);
out:
	unlock(st);
	return ret;
}

static int sq_scheme_create(struct store *st, const char *g, const char *a,
			    const char *name, const char *desc, const char *clone_from,
			    const char *comment, char *err)
{
	struct sqlite_store *s = SS(st);
	int64_t from = 0, sid;
	struct app_ref r;
	char detail[160];
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret && clone_from)
		ret = scheme_id(s, r.id, clone_from, &from, err);
	if (ret)
		goto out;
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = scheme_insert(s, r.id, name, desc, &sid, err);
	if (!ret && clone_from) {
		sqlite3_stmt *q = Q(s, Q_STRAT_CLONE);

		if (!q) {
			ret = dberr(s, err);
		} else {
			sqlite3_bind_int64(q, 1, from);
			sqlite3_bind_int64(q, 2, sid);
			ret = run(s, q, err);
		}
	}
	if (clone_from)
		snprintf(detail, sizeof(detail), "%s from %s", name, clone_from);
	else
		snprintf(detail, sizeof(detail), "%s", name);
	if (!ret)
		ret = audit_add(s, r.id, "scheme.create", detail, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

static int sq_scheme_update(struct store *st, const char *g, const char *a,
			    const char *name, const char *desc, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	q = Q(s, Q_SCHEME_UPD);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, sid);
	bind_text(q, 2, desc);
	ret = run(s, q, err);
out:
	unlock(st);
	return ret;
}

static int sq_scheme_delete(struct store *st, const char *g, const char *a,
			    const char *name, const char *comment, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	if (sid == r.active) {
		seterr(err, "scheme '%s' is active: activate another first", name);
		ret = STORE_CONFLICT;
		goto out;
	}
	ret = begin(s, err);
	if (ret)
		goto out;
	q = Q(s, Q_STRAT_CLEAR);
	if (!q) {
		ret = dberr(s, err);
	} else {
		sqlite3_bind_int64(q, 1, sid);
		ret = run(s, q, err);
	}
	if (!ret) {
		q = Q(s, Q_SCHEME_DEL);
		if (!q) {
			ret = dberr(s, err);
		} else {
			sqlite3_bind_int64(q, 1, sid);
			ret = run(s, q, err);
		}
	}
	if (!ret)
		ret = audit_add(s, r.id, "scheme.delete", name, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
out:
	unlock(st);
	return ret;
}

static int sq_scheme_activate(struct store *st, const char *g, const char *a,
			      const char *name, const char *comment,
			      int64_t *version, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	if (sid == r.active) {
		/* Already in force: nothing for the hosts to fetch. */
		if (version)
			*version = r.version;
		goto out;
	}
	ret = begin(s, err);
	if (ret)
		goto out;
	q = Q(s, Q_APP_SET_ACTIVE);
	if (!q) {
		ret = dberr(s, err);
	} else {
		sqlite3_bind_int64(q, 1, r.id);
		sqlite3_bind_int64(q, 2, sid);
		sqlite3_bind_int64(q, 3, 1);
		ret = run(s, q, err);
	}
	if (!ret)
		ret = audit_add(s, r.id, "scheme.activate", name, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
	if (!ret && version)
		*version = r.version + 1;
out:
	unlock(st);
	return ret;
}

/* ---- strategies --------------------------------------------------------- */

/* Read scheme @sid's strategies into @out (version left alone). */
static int strategies_read(struct sqlite_store *s, int64_t sid,
			   struct sds_strategies *out, char *err)
{
	sqlite3_stmt *q = Q(s, Q_STRAT_LIST);
	int rc;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, sid);
	out->n = 0;
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		const char *point = col_text(q, 0);
		const char *body = col_text(q, 1);
		char doc[4096], perr[256];
		struct sds_strategies *one_pt;
		int n;

		if (out->n >= SDS_MAX_STRATEGIES)
			break;
		/* Stored bodies were validated on the way in; parse them back
		 * with the same codec so both sides agree on the meaning. */
		n = snprintf(doc, sizeof(doc), "{\"version\":0,\"points\":{\"%s\":%s}}",
			     point, body);
		one_pt = malloc(sizeof(*one_pt));
		if (!one_pt || n >= (int)sizeof(doc) ||
		    strategies_parse(doc, n, one_pt, perr, sizeof(perr)) || one_pt->n != 1) {
			free(one_pt);
			sqlite3_reset(q);
			seterr(err, "database: stored strategy of point '%s' unreadable", point);
			return STORE_ERROR;
		}
		out->s[out->n++] = one_pt->s[0];
		free(one_pt);
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE)
		return dberr(s, err);
	return 0;
}

static int sq_strategies_get(struct store *st, const char *g, const char *a,
			     const char *name, struct sds_strategies *out,
			     char scheme[SDS_NAME_MAX + 1], char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int64_t sid;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	if (name) {
		ret = scheme_id(s, r.id, name, &sid, err);
		if (ret)
			goto out;
	} else {
		sid = r.active;
	}
	ret = strategies_read(s, sid, out, err);
	out->version = r.version;
	if (!ret && scheme) {
		sqlite3_stmt *q = Q(s, Q_SCHEME_NAME);

		scheme[0] = '\0';
		if (q) {
			sqlite3_bind_int64(q, 1, sid);
			if (sqlite3_step(q) == SQLITE_ROW)
				snprintf(scheme, SDS_NAME_MAX + 1, "%s", col_text(q, 0));
			sqlite3_reset(q);
		}
	}
out:
	unlock(st);
	return ret;
}

static int strategy_write(struct sqlite_store *s, int64_t sid,
			  const struct sds_strategy *in, char *err)
{
	sqlite3_stmt *q = Q(s, Q_STRAT_PUT);
	json_t *o;
	char *body;
	int ret;

	if (!q)
		return dberr(s, err);
	o = strategy_to_json(in);
	body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(o);
	if (!body) {
		seterr(err, "out of memory");
		return STORE_ERROR;
	}
	sqlite3_bind_int64(q, 1, sid);
	bind_text(q, 2, in->point);
	sqlite3_bind_text(q, 3, body, -1, free);
	ret = run(s, q, err);
	return ret;
}

/*
 * Common frame of the strategy writes: resolve, begin, @fn, bump if the
 * scheme is active, audit, commit.
 */
struct strat_op {
	const struct sds_strategies *all;
	const struct sds_strategy *one;
	const char *del;
};

static int strat_apply(struct sqlite_store *s, int64_t sid, const struct strat_op *op,
		       char *err)
{
	sqlite3_stmt *q;
	int i, ret = 0;

	if (op->all) {
		q = Q(s, Q_STRAT_CLEAR);
		if (!q)
			return dberr(s, err);
		sqlite3_bind_int64(q, 1, sid);
		ret = run(s, q, err);
		for (i = 0; i < op->all->n && !ret; i++)
			ret = strategy_write(s, sid, &op->all->s[i], err);
		return ret;
	}
	if (op->one)
		return strategy_write(s, sid, op->one, err);
	q = Q(s, Q_STRAT_DEL);
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, sid);
	bind_text(q, 2, op->del);
	ret = run(s, q, err);
	if (!ret && sqlite3_changes(s->db) == 0) {
		seterr(err, "point '%s' has no strategy in this scheme", op->del);
		return STORE_NOTFOUND;
	}
	return ret;
}

static int strat_frame(struct store *st, const char *g, const char *a,
		       const char *name, const struct strat_op *op,
		       const char *action, const char *detail,
		       const char *comment, int64_t *version, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int64_t sid, v;
	char full[256];
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret)
		ret = scheme_id(s, r.id, name, &sid, err);
	if (ret)
		goto out;
	v = r.version;
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = strat_apply(s, sid, op, err);
	if (!ret && sid == r.active)
		ret = bump(s, r.id, &v, err);
	snprintf(full, sizeof(full), "%s: %s", name, detail);
	if (!ret)
		ret = audit_add(s, r.id, action, full, comment, err);
	if (!ret)
		ret = commit(s, err);
	else
		rollback(s);
	if (!ret && version)
		*version = v;
out:
	unlock(st);
	return ret;
}

static int sq_strategies_put(struct store *st, const char *g, const char *a,
			     const char *name, const struct sds_strategies *in,
			     const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .all = in };
	char detail[64];

	snprintf(detail, sizeof(detail), "%d points", in->n);
	return strat_frame(st, g, a, name, &op, "strategies.replace", detail,
			   comment, version, err);
}

static int sq_strategy_put(struct store *st, const char *g, const char *a,
			   const char *name, const struct sds_strategy *in,
			   const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .one = in };
	char detail[200];
	json_t *o = strategy_to_json(in);
	char *body = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	int ret;

	snprintf(detail, sizeof(detail), "%s %s", in->point, body ? body : "");
	free(body);
	json_decref(o);
	ret = strat_frame(st, g, a, name, &op, "strategy.put", detail, comment,
			  version, err);
	return ret;
}

static int sq_strategy_delete(struct store *st, const char *g, const char *a,
			      const char *name, const char *point,
			      const char *comment, int64_t *version, char *err)
{
	struct strat_op op = { .del = point };

	return strat_frame(st, g, a, name, &op, "strategy.delete", point, comment,
			   version, err);
}

/* ---- heartbeats and statistics ------------------------------------------ */

/* ---- drills ------------------------------------------------------------- */

/* The app's drills in force at @now, for a heartbeat reply (lock held). */
static int drills_active(struct sqlite_store *s, int64_t app, int64_t now,
			 struct sds_hb_drill *out, int *n, char *err)
{
	sqlite3_stmt *q = Q(s, Q_DRILL_ACTIVE);
	int rc;

	*n = 0;
	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	sqlite3_bind_int64(q, 2, now);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && *n < SDS_HB_MAX_DRILLS) {
		struct sds_hb_drill *d = &out[(*n)++];

		d->id = sqlite3_column_int64(q, 0);
		snprintf(d->point, sizeof(d->point), "%s", col_text(q, 1));
		d->kind = strcmp(col_text(q, 2), "delay") ? SDS_DRILL_ERROR :
							    SDS_DRILL_DELAY;
		d->ratio = sqlite3_column_int(q, 3);
		d->delay_ms = sqlite3_column_int64(q, 4);
		d->expires_at = sqlite3_column_int64(q, 5);
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		return dberr(s, err);
	return 0;
}

static int sq_drill_create(struct store *st, const char *g, const char *a,
			   const struct store_drill *d, int64_t now, int64_t *id,
			   char *err)
{
	struct sqlite_store *s = SS(st);
	char detail[256], who[ADMIN_WHO_MAX];
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto fail;
	q = Q(s, Q_DRILL_INS);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	bind_text(q, 2, d->point);
	bind_text(q, 3, d->kind == SDS_DRILL_DELAY ? "delay" : "error");
	sqlite3_bind_int64(q, 4, d->ratio);
	sqlite3_bind_int64(q, 5, d->delay_ms);
	sqlite3_bind_int64(q, 6, now);
	sqlite3_bind_int64(q, 7, now + d->duration_s);
	snprintf(who, sizeof(who), "%s (token %s)", d->by, d->token_id);
	bind_text(q, 8, who);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	*id = sqlite3_last_insert_rowid(s->db);
	if (d->kind == SDS_DRILL_DELAY)
		snprintf(detail, sizeof(detail), "drill %lld on %s: delay %lld ms, ratio %u, for %lld s",
			 (long long)*id, d->point, (long long)d->delay_ms, d->ratio,
			 (long long)d->duration_s);
	else
		snprintf(detail, sizeof(detail), "drill %lld on %s: error, ratio %u, for %lld s",
			 (long long)*id, d->point, d->ratio, (long long)d->duration_s);
	ret = audit_add(s, r.id, "drill.start", detail, who, err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	return ret;
}

static json_t *drill_row(sqlite3_stmt *q)
{
	json_t *o = json_pack("{s:I, s:s, s:s, s:i, s:I, s:I, s:I, s:s}",
		"id", (json_int_t)sqlite3_column_int64(q, 0),
		"point", col_text(q, 1), "kind", col_text(q, 2),
		"ratio", sqlite3_column_int(q, 3),
		"delay_ms", (json_int_t)sqlite3_column_int64(q, 4),
		"created", (json_int_t)sqlite3_column_int64(q, 5),
		"expires_at", (json_int_t)sqlite3_column_int64(q, 6),
		"started_by", col_text(q, 8));

	json_object_set_new(o, "stopped_at", sqlite3_column_type(q, 7) == SQLITE_NULL ?
			    json_null() : json_integer(sqlite3_column_int64(q, 7)));
	json_object_set_new(o, "stopped_by", sqlite3_column_type(q, 9) == SQLITE_NULL ?
			    json_null() : json_string(col_text(q, 9)));
	return o;
}

static int sq_drill_list(struct store *st, const char *g, const char *a,
			 json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (!ret) {
		sqlite3_stmt *q = Q(s, Q_DRILL_LIST);

		if (!q)
			ret = dberr(s, err);
		else {
			sqlite3_bind_int64(q, 1, r.id);
			ret = rows(s, q, drill_row, out, err);
		}
	}
	unlock(st);
	return ret;
}

static int sq_drill_stop(struct store *st, const char *g, const char *a,
			 int64_t id, const char *by, const char *token_id,
			 int64_t now, char *err)
{
	struct sqlite_store *s = SS(st);
	char detail[160], who[ADMIN_WHO_MAX];
	struct app_ref r;
	sqlite3_stmt *q;
	int rc, ret;

	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto fail;
	q = Q(s, Q_DRILL_GET);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, id);
	rc = sqlite3_step(q);
	if (rc != SQLITE_ROW) {
		sqlite3_reset(q);
		if (rc != SQLITE_DONE)
			goto dbfail;
		seterr(err, "drill %lld not found", (long long)id);
		ret = STORE_NOTFOUND;
		goto fail;
	}
	snprintf(detail, sizeof(detail), "drill %lld on %s", (long long)id,
		 col_text(q, 0));
	if (sqlite3_column_type(q, 1) != SQLITE_NULL ||
	    sqlite3_column_int64(q, 2) <= now) {
		sqlite3_reset(q);
		seterr(err, "drill %lld has ended already", (long long)id);
		ret = STORE_CONFLICT;
		goto fail;
	}
	sqlite3_reset(q);
	snprintf(who, sizeof(who), "%s (token %s)", by, token_id);
	q = Q(s, Q_DRILL_STOP);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, id);
	sqlite3_bind_int64(q, 3, now);
	bind_text(q, 4, who);
	ret = run(s, q, err);
	if (!ret)
		ret = audit_add(s, r.id, "drill.stop", detail, who, err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	return ret;
}

static int sq_heartbeat(struct store *st, const struct sds_heartbeat *hb,
			int64_t now, struct store_hb_result *res, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int i, ret;

	res->duplicate = false;
	res->created = false;
	lock(st);
	ret = begin(s, err);
	if (ret)
		goto out;
	ret = app_ref(s, hb->group, hb->app, &r, err);
	if (ret == STORE_NOTFOUND) {
		/* A loader the admin has not heard of registers its app. */
		ret = app_insert(s, hb->group, hb->app, "", &r, err);
		if (!ret)
			ret = audit_add(s, r.id, "app.register", hb->host,
					"registered by a heartbeat", err);
		res->created = true;
	}
	if (ret)
		goto fail;

	q = Q(s, Q_HB_INS);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, hb->period_start);
	bind_text(q, 3, hb->host);
	sqlite3_bind_int64(q, 4, now);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	res->duplicate = sqlite3_changes(s->db) == 0;

	for (i = 0; i < hb->n && !res->duplicate; i++) {
		const struct sds_hb_point *p = &hb->points[i];
		uint64_t blob[SDS_HIST_BUCKETS];
		int j;

		q = Q(s, Q_STAT_INS);
		if (!q)
			goto dbfail;
		sqlite3_bind_int64(q, 1, r.id);
		sqlite3_bind_int64(q, 2, hb->period_start);
		bind_text(q, 3, hb->host);
		bind_text(q, 4, p->name);
		sqlite3_bind_int64(q, 5, (sqlite3_int64)p->visits);
		sqlite3_bind_int64(q, 6, (sqlite3_int64)p->exceptions);
		sqlite3_bind_int64(q, 7, (sqlite3_int64)p->timeouts);
		sqlite3_bind_int64(q, 8, (sqlite3_int64)p->downgrades);
		sqlite3_bind_int64(q, 9, (sqlite3_int64)p->max_concurrency);
		/* Little-endian u64s up to the last non-zero bucket. */
		for (j = 0; j < p->nhist && j < SDS_HIST_BUCKETS; j++)
			blob[j] = htole64(p->latency_hist[j]);
		if (j)
			sqlite3_bind_blob(q, 10, blob, j * 8, SQLITE_TRANSIENT);
		else
			sqlite3_bind_null(q, 10);
		sqlite3_bind_int64(q, 11, (sqlite3_int64)p->faults);
		sqlite3_bind_int64(q, 12, (sqlite3_int64)p->delays);
		ret = run(s, q, err);
		if (ret)
			goto fail;
	}

	q = Q(s, Q_HOST_UPSERT);
	if (!q)
		goto dbfail;
	sqlite3_bind_int64(q, 1, r.id);
	bind_text(q, 2, hb->host);
	bind_text(q, 3, hb->ip);
	sqlite3_bind_int64(q, 4, now);
	sqlite3_bind_int64(q, 5, hb->period_start);
	sqlite3_bind_int64(q, 6, hb->version);
	ret = run(s, q, err);
	if (ret)
		goto fail;
	ret = commit(s, err);
	if (ret)
		goto out;
	res->version = r.version;
	res->ndrills = 0;
	if (res->drills) {
		ret = drills_active(s, r.id, now, res->drills, &res->ndrills, err);
		if (ret)
			goto out;
	}
	if (res->strategies && hb->version != r.version) {
		ret = strategies_read(s, r.active, res->strategies, err);
		res->strategies->version = r.version;
	}
	goto out;
dbfail:
	ret = dberr(s, err);
fail:
	rollback(s);
out:
	unlock(st);
	return ret;
}

static json_t *host_row(sqlite3_stmt *q)
{
	return json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}", "host", col_text(q, 0),
			 "ip", col_text(q, 1),
			 "first_seen", (json_int_t)sqlite3_column_int64(q, 2),
			 "last_seen", (json_int_t)sqlite3_column_int64(q, 3),
			 "last_period", (json_int_t)sqlite3_column_int64(q, 4),
			 "version", (json_int_t)sqlite3_column_int64(q, 5));
}

static int sq_host_list(struct store *st, const char *g, const char *a,
			json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	size_t i;
	json_t *h;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_HOST_LIST);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	ret = rows(s, q, host_row, out, err);
	if (!ret) {
		json_array_foreach(*out, i, h) {
			json_int_t v = json_integer_value(json_object_get(h, "version"));

			json_object_set_new(h, "in_sync", json_boolean(v == r.version));
		}
	}
out:
	unlock(st);
	return ret;
}

static int sq_stats_scan(struct store *st, const char *g, const char *a,
			 const char *point, int64_t from, int64_t to,
			 store_stat_cb cb, void *ctx, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int rc, ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, point ? Q_STAT_SCAN_POINT : Q_STAT_SCAN);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, from);
	sqlite3_bind_int64(q, 3, to);
	if (point)
		bind_text(q, 4, point);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
		uint64_t hist[SDS_HIST_BUCKETS];
		struct store_stat_row row = {
			.period_start = sqlite3_column_int64(q, 0),
			.point = col_text(q, 1),
			.host = col_text(q, 2),
			.visits = sqlite3_column_int64(q, 3),
			.exceptions = sqlite3_column_int64(q, 4),
			.timeouts = sqlite3_column_int64(q, 5),
			.downgrades = sqlite3_column_int64(q, 6),
			.max_concurrency = sqlite3_column_int64(q, 7),
			.faults = sqlite3_column_int64(q, 9),
			.delays = sqlite3_column_int64(q, 10),
			.hist = hist,
		};
		const unsigned char *b = sqlite3_column_blob(q, 8);
		int n = sqlite3_column_bytes(q, 8) / 8, j;

		if (n > SDS_HIST_BUCKETS)
			n = SDS_HIST_BUCKETS;
		for (j = 0; j < n; j++) {
			uint64_t x;

			memcpy(&x, b + j * 8, 8);
			hist[j] = le64toh(x);
		}
		row.nhist = n;
		if (cb(&row, ctx))
			break;
	}
	sqlite3_reset(q);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW)
		ret = dberr(s, err);
out:
	unlock(st);
	return ret;
}

static json_t *name_row(sqlite3_stmt *q)
{
	return json_string(col_text(q, 0));
}

static int sq_point_list(struct store *st, const char *g, const char *a,
			 json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_POINT_LIST);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	/* Points seen in the last day: enough for the dashboard's list. */
	sqlite3_bind_int64(q, 2, now_s() - 86400);
	ret = rows(s, q, name_row, out, err);
out:
	unlock(st);
	return ret;
}

static json_t *event_row(sqlite3_stmt *q)
{
	return json_pack("{s:I, s:s, s:s, s:I, s:I}",
			 "period_start", (json_int_t)sqlite3_column_int64(q, 0),
			 "host", col_text(q, 1), "point", col_text(q, 2),
			 "downgrades", (json_int_t)sqlite3_column_int64(q, 3),
			 "visits", (json_int_t)sqlite3_column_int64(q, 4));
}

static int sq_events(struct store *st, const char *g, const char *a, int64_t from,
		     int64_t to, int limit, json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_EVENTS);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int64(q, 2, from);
	sqlite3_bind_int64(q, 3, to);
	sqlite3_bind_int(q, 4, limit);
	ret = rows(s, q, event_row, out, err);
out:
	unlock(st);
	return ret;
}

static json_t *audit_row(sqlite3_stmt *q)
{
	return json_pack("{s:I, s:s, s:s, s:s}",
			 "time", (json_int_t)sqlite3_column_int64(q, 0),
			 "action", col_text(q, 1), "detail", col_text(q, 2),
			 "comment", col_text(q, 3));
}

static int sq_audit(struct store *st, const char *g, const char *a, int limit,
		    json_t **out, char *err)
{
	struct sqlite_store *s = SS(st);
	struct app_ref r;
	sqlite3_stmt *q;
	int ret;

	lock(st);
	ret = app_ref(s, g, a, &r, err);
	if (ret)
		goto out;
	q = Q(s, Q_AUDIT_LIST);
	if (!q) {
		ret = dberr(s, err);
		goto out;
	}
	sqlite3_bind_int64(q, 1, r.id);
	sqlite3_bind_int(q, 2, limit);
	ret = rows(s, q, audit_row, out, err);
out:
	unlock(st);
	return ret;
}

static int sq_prune(struct store *st, int64_t before, char *err)
{
	struct sqlite_store *s = SS(st);
	sqlite3_stmt *q;
	int ret;

	lock(st);
	q = Q(s, Q_PRUNE_STATS);
	if (q)
		sqlite3_bind_int64(q, 1, before);
	ret = run(s, q, err);
	if (!ret) {
		q = Q(s, Q_PRUNE_HB);
		if (q)
			sqlite3_bind_int64(q, 1, before);
		ret = run(s, q, err);
	}
	unlock(st);
	return ret;
}

static int count1(struct sqlite_store *s, int id, int64_t *out)
{
	sqlite3_stmt *q = Q(s, id);

	if (!q || sqlite3_step(q) != SQLITE_ROW) {
		if (q)
			sqlite3_reset(q);
		return -1;
	}
	*out = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	return 0;
}

static int sq_counts(struct store *st, struct store_counts *out, char *err)
{
	struct sqlite_store *s = SS(st);
	int ret = 0;

	memset(out, 0, sizeof(*out));
	lock(st);
	if (count1(s, Q_COUNT_GROUPS, &out->groups) ||
	    count1(s, Q_COUNT_APPS, &out->apps) ||
	    count1(s, Q_COUNT_HOSTS, &out->hosts))
		ret = dberr(s, err);
	unlock(st);
	return ret;
}

static void sq_close(struct store *st)
{
	struct sqlite_store *s = SS(st);
	int i;

	for (i = 0; i < NQ; i++)
		sqlite3_finalize(s->q[i]);
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static const struct store_ops sqlite_ops = {
	.close = sq_close,
	.group_list = sq_group_list,
	.group_get = sq_group_get,
	.group_create = sq_group_create,
	.group_update = sq_group_update,
	.group_delete = sq_group_delete,
	.app_list = sq_app_list,
	.app_get = sq_app_get,
	.app_create = sq_app_create,
	.app_update = sq_app_update,
	.app_delete = sq_app_delete,
	.scheme_list = sq_scheme_list,
	.scheme_get = sq_scheme_get,
	.scheme_create = sq_scheme_create,
	.scheme_update = sq_scheme_update,
	.scheme_delete = sq_scheme_delete,
	.scheme_activate = sq_scheme_activate,
	.strategies_get = sq_strategies_get,
	.strategies_put = sq_strategies_put,
	.strategy_put = sq_strategy_put,
	.strategy_delete = sq_strategy_delete,
	.heartbeat = sq_heartbeat,
	.host_list = sq_host_list,
	.stats_scan = sq_stats_scan,
	.point_list = sq_point_list,
	.events = sq_events,
	.audit = sq_audit,
	.drill_create = sq_drill_create,
	.drill_list = sq_drill_list,
	.drill_stop = sq_drill_stop,
	.prune = sq_prune,
	.counts = sq_counts,
};

/* ---- open and migrate --------------------------------------------------- */

static int migrate(sqlite3 *db, char *err)
{
	sqlite3_stmt *q;
	char *msg = NULL;
	int v, i;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL) != SQLITE_OK)
		goto dberr;
	v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
	sqlite3_finalize(q);
	if (v < 0)
		goto dberr;
	if (v > SCHEMA_VERSION) {
		seterr(err, "schema version %d is newer than this sds-admin knows (%d)",
		       v, SCHEMA_VERSION);
		return -1;
	}
	for (i = v; i < SCHEMA_VERSION; i++) {
		char pragma[64];

		/* One transaction per step: a failed step leaves the last good one. */
		snprintf(pragma, sizeof(pragma), "PRAGMA user_version = %d", i + 1);
		if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg) ||
		    sqlite3_exec(db, migrations[i], NULL, NULL, &msg) ||
		    sqlite3_exec(db, pragma, NULL, NULL, &msg) ||
		    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg)) {
			seterr(err, "migrating the schema to version %d: %s", i + 1,
			       msg ? msg : sqlite3_errmsg(db));
			sqlite3_free(msg);
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
	}
	return 0;
dberr:
	seterr(err, "%s", sqlite3_errmsg(db));
	return -1;
}

struct store *store_sqlite_open(const char *path, char *err)
{
	static const char *const pragmas =
		"PRAGMA journal_mode = WAL;"
		"PRAGMA synchronous = NORMAL;"
		"PRAGMA foreign_keys = ON;"
		"PRAGMA temp_store = MEMORY;"
		"PRAGMA cache_size = -16000;";
	struct sqlite_store *s;
	char *msg = NULL;

	s = calloc(1, sizeof(*s));
	if (!s) {
		seterr(err, "out of memory");
		return NULL;
	}
	s->base.ops = &sqlite_ops;
	pthread_mutex_init(&s->lock, NULL);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		seterr(err, "%s", s->db ? sqlite3_errmsg(s->db) : "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_extended_result_codes(s->db, 1);
	if (sqlite3_exec(s->db, pragmas, NULL, NULL, &msg) != SQLITE_OK) {
		seterr(err, "%s", msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		goto fail;
	}
	if (migrate(s->db, err))
		goto fail;
	return &s->base;
fail:
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->lock);
	free(s);
	return NULL;
}
