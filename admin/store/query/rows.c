// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/rows.c - what every query file of the store leans on:
 * error text, keyed statements, transactions, version bumps, text binds
 * and columns, names resolved to ids (group, app, scheme), audit rows, and
 * a statement's rows as JSON.  What differs per engine (the statement
 * cache Q(), run()'s error mapping, lock() and rollback()) is in
 * store/sqlite/sqlite.c and store/pg/pg.c.
 *
 * Engine-neutral through the sqlite3_* calls it makes: compiled as is for
 * SQLite, and a second time over libpq for PostgreSQL (store/pg/shared.c,
 * store/pg/compat.h), so the two engines resolve names and report "not
 * found" in the same words.
 */
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "store/sqlite/sqlite.h"

void seterr(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, STORE_ERR_MAX, fmt, ap);
	va_end(ap);
}

/*
 * The cached statement @id with ?1 bound to @key, or NULL.  Most queries
 * are keyed by one row id; run(), rows() and one() take the NULL and report
 * the database error, so a caller with one key needs no check of its own.
 */
sqlite3_stmt *Qk(struct sqlite_store *s, int id, int64_t key)
{
	sqlite3_stmt *q = Q(s, id);

	if (q)
		sqlite3_bind_int64(q, 1, key);
	return q;
}

int exec0(struct sqlite_store *s, int id, char *err)
{
	return run(s, Q(s, id), err);
}

void unlock(struct store *st)
{
	pthread_mutex_unlock(&SS(st)->lock);
}

int begin(struct sqlite_store *s, char *err)
{
	return exec0(s, Q_BEGIN, err);
}

int commit(struct sqlite_store *s, char *err)
{
	int ret = exec0(s, Q_COMMIT, err);

	if (ret)
		exec0(s, Q_ROLLBACK, NULL);
	return ret;
}

/*
 * Bump the app's version (UPDATE ... RETURNING: atomic on both engines,
 * whose changes are all made by the first step); *version gets the new one.
 */
int bump(struct sqlite_store *s, int64_t app, int64_t *version, char *err)
{
	sqlite3_stmt *q = Qk(s, Q_APP_BUMP, app);
	int rc;

	if (!q)
		return dberr(s, err);
	rc = sqlite3_step(q);
	if (rc == SQLITE_ROW && version)
		*version = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	return rc == SQLITE_ROW ? 0 : dberr(s, err);
}

void bind_text(sqlite3_stmt *q, int i, const char *t)
{
	sqlite3_bind_text(q, i, t ? t : "", -1, SQLITE_STATIC);
}

const char *col_text(sqlite3_stmt *q, int i)
{
	const unsigned char *t = sqlite3_column_text(q, i);

	return t ? (const char *)t : "";
}

/* The id in column 0 of @q's one row: 0, STORE_NOTFOUND (no row, no message) or STORE_ERROR. */
static int id_row(struct sqlite_store *s, sqlite3_stmt *q, int64_t *id, char *err)
{
	int rc = sqlite3_step(q);

	if (rc == SQLITE_ROW)
		*id = sqlite3_column_int64(q, 0);
	sqlite3_reset(q);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? STORE_NOTFOUND : dberr(s, err);
}

int group_id(struct sqlite_store *s, const char *g, int64_t *id, char *err)
{
	sqlite3_stmt *q = Q(s, Q_GROUP_ID);
	int rc;

	if (!q)
		return dberr(s, err);
	bind_text(q, 1, g);
	rc = id_row(s, q, id, err);
	if (rc == STORE_NOTFOUND)
		seterr(err, "group '%s' not found", g);
	return rc;
}

int app_ref(struct sqlite_store *s, const char *g, const char *a,
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

int scheme_id(struct sqlite_store *s, int64_t app, const char *name,
	      int64_t *id, char *err)
{
	sqlite3_stmt *q = Q(s, Q_SCHEME_ID);
	int rc;

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	bind_text(q, 2, name);
	rc = id_row(s, q, id, err);
	if (rc == STORE_NOTFOUND)
		seterr(err, "scheme '%s' not found", name);
	return rc;
}

int audit_add(struct sqlite_store *s, int64_t app, const char *action,
	      const char *detail, const char *comment, char *err)
{
	sqlite3_stmt *q = Q(s, Q_AUDIT_INS);

	if (!q)
		return dberr(s, err);
	sqlite3_bind_int64(q, 1, app);
	sqlite3_bind_int64(q, 2, store_now_s());
	bind_text(q, 3, action);
	bind_text(q, 4, detail);
	bind_text(q, 5, comment);
	return run(s, q, err);
}

/* Collect every row of @q into a new array via @row. */
int rows(struct sqlite_store *s, sqlite3_stmt *q, json_t *(*row)(sqlite3_stmt *),
	 json_t **out, char *err)
{
	json_t *arr;
	int rc;

	if (!q)
		return dberr(s, err);
	arr = json_array();
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
int one(struct sqlite_store *s, sqlite3_stmt *q, json_t *(*row)(sqlite3_stmt *),
	json_t **out, char *err)
{
	int rc;

	if (!q)
		return dberr(s, err);
	rc = sqlite3_step(q);
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

/*
 * Hand the current row of a statistics scan (the columns of stats_scan's
 * SELECT, in its order) to @cb; its result: nonzero stops the scan.
 */
int stat_row_emit(sqlite3_stmt *q, store_stat_cb cb, void *ctx)
{
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
		.suspended = sqlite3_column_int(q, 11) != 0,
		.overhead_milli = sqlite3_column_int64(q, 12),
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
	return cb(&row, ctx);
}
