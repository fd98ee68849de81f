// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/sqlite/sqlite.c - the SQLite engine of the admin's store.
 *
 * One connection, serialized by a mutex: SQLite writes one transaction at
 * a time anyway, and a mutex gives a predictable latency where busy
 * timeouts would sleep.  WAL with synchronous=NORMAL: a commit is an
 * append to the log, no fsync per heartbeat (a power cut can lose the last
 * commits, never corrupt the file).  Every query is a prepared statement
 * with bound parameters, prepared once and cached.  The schema is versioned
 * by PRAGMA user_version and migrated forward at open.
 *
 * This file is the engine under the shared queries (store/query/sq.h):
 * SQLite's calls behind theirs, its one dialect row of their SQL, and
 * open/close; the schema and its migrations are store/sqlite/schema.c's,
 * the scans on a connection of their own store/sqlite/reader.c's.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "store/sqlite/sqlite.h"

/* ---- SQLite's dialect: its rows of the SQL (store/query/sql.c) ------------ */

static const char *const sqlite_sql[NQ] = {
	/* Take the write lock at once: a reader never has to upgrade. */
	[Q_BEGIN] = "BEGIN IMMEDIATE",
};

/* ---- the engine: SQLite's calls behind store/query/sq.h ----------------- */

static sqlite3_stmt *st_of(struct sq_stmt *q)
{
	return ((struct sqlite_stmt *)q)->st;
}

static struct sq_stmt *e_prepare(struct sq_store *s, int id)
{
	struct sqlite_stmt *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	if (sqlite3_prepare_v3(sqlite_of(&s->base)->db, sq_sql_of(sqlite_sql, id), -1,
			       SQLITE_PREPARE_PERSISTENT, &q->st, NULL) != SQLITE_OK) {
		sqlite3_finalize(q->st);
		free(q);
		return NULL;
	}
	q->base.e = &sqlite_engine;
	return &q->base;
}

static void e_reuse(struct sq_stmt *q)
{
	sqlite3_reset(st_of(q));
	sqlite3_clear_bindings(st_of(q));
}

static int e_rc(int rc)
{
	return rc == SQLITE_OK ? SQ_OK : SQ_ERROR;
}

static int e_bind_int64(struct sq_stmt *q, int i, int64_t v)
{
	return e_rc(sqlite3_bind_int64(st_of(q), i, v));
}

static int e_bind_text(struct sq_stmt *q, int i, const char *t, enum sq_life life)
{
	return e_rc(sqlite3_bind_text(st_of(q), i, t, -1,
				      life == SQ_FREE ? free :
				      life == SQ_COPY ? SQLITE_TRANSIENT : SQLITE_STATIC));
}

static int e_bind_blob(struct sq_stmt *q, int i, const void *b, int n)
{
	return e_rc(sqlite3_bind_blob(st_of(q), i, b, n, SQLITE_TRANSIENT));
}

static int e_bind_null(struct sq_stmt *q, int i)
{
	return e_rc(sqlite3_bind_null(st_of(q), i));
}

static int e_step(struct sq_stmt *q)
{
	int rc = sqlite3_step(st_of(q));

	return rc == SQLITE_ROW ? SQ_ROW : rc == SQLITE_DONE ? SQ_DONE : SQ_ERROR;
}

static void e_reset(struct sq_stmt *q)
{
	sqlite3_reset(st_of(q));
}

static void e_finalize(struct sq_stmt *q)
{
	if (!q)
		return;
	sqlite3_finalize(st_of(q));
	free(q);
}

static int64_t e_col_int64(struct sq_stmt *q, int i)
{
	return sqlite3_column_int64(st_of(q), i);
}

static const char *e_col_text(struct sq_stmt *q, int i)
{
	return (const char *)sqlite3_column_text(st_of(q), i);
}

static bool e_col_null(struct sq_stmt *q, int i)
{
	return sqlite3_column_type(st_of(q), i) == SQLITE_NULL;
}

static const void *e_col_blob(struct sq_stmt *q, int i)
{
	return sqlite3_column_blob(st_of(q), i);
}

static int e_col_bytes(struct sq_stmt *q, int i)
{
	return sqlite3_column_bytes(st_of(q), i);
}

static sqlite3 *db_of(struct sq_store *s)
{
	return sqlite_of(&s->base)->db;
}

static int64_t e_changes(struct sq_store *s)
{
	return sqlite3_changes(db_of(s));
}

static int64_t e_last_id(struct sq_store *s)
{
	return sqlite3_last_insert_rowid(db_of(s));
}

static const char *e_errmsg(struct sq_store *s)
{
	return sqlite3_errmsg(db_of(s));
}

static bool e_unique_violation(struct sq_store *s)
{
	int rc = sqlite3_extended_errcode(db_of(s));

	return rc == SQLITE_CONSTRAINT_UNIQUE || rc == SQLITE_CONSTRAINT_PRIMARYKEY;
}

static bool e_in_txn(struct sq_store *s)
{
	return !sqlite3_get_autocommit(db_of(s));
}

const struct sq_engine sqlite_engine = {
	.prepare = e_prepare,
	.reuse = e_reuse,
	.bind_int64 = e_bind_int64,
	.bind_text = e_bind_text,
	.bind_blob = e_bind_blob,
	.bind_null = e_bind_null,
	.step = e_step,
	.reset = e_reset,
	.finalize = e_finalize,
	.col_int64 = e_col_int64,
	.col_text = e_col_text,
	.col_null = e_col_null,
	.col_blob = e_col_blob,
	.col_bytes = e_col_bytes,
	.changes = e_changes,
	.last_id = e_last_id,
	.errmsg = e_errmsg,
	.unique_violation = e_unique_violation,
	.in_txn = e_in_txn,
	/* .alive: a file does not disconnect */
};

static void sqlite_close(struct store *st)
{
	struct sqlite_store *s = sqlite_of(st);
	int i;

	for (i = 0; i < NQ; i++)
		e_finalize(s->sq.q[i]);
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->sq.lock);
	free(s);
}

static const struct store_ops sqlite_ops = {
	.close = sqlite_close,
	SQ_QUERY_OPS,
	.point_keys = sq_point_keys,
	.app_deps = sq_app_deps,
	.point_list = sq_point_list,
	.events = sq_events,
	.heartbeat = sq_heartbeat,
	.app_state = sq_app_state,	/* changed, listen: one admin per file */
	.prune = sq_prune,
	.prune_meta = sq_prune_meta,
	.stats_scan_apart = sqlite_stats_scan_apart,
};

/* ---- open --------------------------------------------------------------- */

struct store *sqlite_store_open(const char *path, char *err)
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
		sq_seterr(err, "out of memory");
		return NULL;
	}
	s->sq.base.ops = &sqlite_ops;
	s->sq.e = &sqlite_engine;
	pthread_mutex_init(&s->sq.lock, NULL);
	if (sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE |
			    SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		sq_seterr(err, "%s", s->db ? sqlite3_errmsg(s->db) : "cannot open");
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 5000);
	sqlite3_extended_result_codes(s->db, 1);
	if (sqlite3_exec(s->db, pragmas, NULL, NULL, &msg) != SQLITE_OK) {
		sq_seterr(err, "%s", msg ? msg : sqlite3_errmsg(s->db));
		sqlite3_free(msg);
		goto fail;
	}
	if (sqlite_migrate(s->db, err))
		goto fail;
	return &s->sq.base;
fail:
	sqlite3_close(s->db);
	pthread_mutex_destroy(&s->sq.lock);
	free(s);
	return NULL;
}
