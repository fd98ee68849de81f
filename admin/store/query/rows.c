// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * store/query/rows.c - what every query file of the store leans on:
 * error text, the statement cache, transactions, the audited write tail,
 * version bumps, names resolved to ids (group, app, scheme), audit rows,
 * and a statement's rows as JSON.  Engine-neutral: the engine's calls go
 * through s->e (store/query/sq.h), so both engines resolve names and
 * report "not found" in the same words.
 */
#include <endian.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "store/query/sq.h"

void sq_seterr(char *err, const char *fmt, ...)
{
	va_list ap;

	if (!err)
		return;
	va_start(ap, fmt);
	vsnprintf(err, STORE_ERR_MAX, fmt, ap);
	va_end(ap);
}

struct sq_stmt *sq_q(struct sq_store *s, int id)
{
	struct sq_stmt *q = s->q[id];

	if (!q)
		return s->q[id] = s->e->prepare(s, id);
	s->e->reuse(q);
	return q;
}

/*
 * Most queries are keyed by one row id; sq_run(), sq_rows() and sq_one()
 * take the NULL and report the database error, so a caller with one key
 * needs no check of its own.
 */
struct sq_stmt *sq_qk(struct sq_store *s, int id, int64_t key)
{
	struct sq_stmt *q = sq_q(s, id);

	if (q)
		sq_bind_int64(q, 1, key);
	return q;
}

int sq_dberr(struct sq_store *s, char *err)
{
	sq_seterr(err, "database: %s", s->e->errmsg(s));
	return STORE_ERROR;
}

int sq_run(struct sq_store *s, struct sq_stmt *q, char *err)
{
	int rc, ret = 0;

	if (!q)
		return sq_dberr(s, err);
	rc = sq_step(q);
	if (rc != SQ_DONE && rc != SQ_ROW)
		ret = s->e->unique_violation(s) ? STORE_EXISTS : sq_dberr(s, err);
	sq_reset(q);
	return ret;
}

int sq_exec0(struct sq_store *s, int id, char *err)
{
	return sq_run(s, sq_q(s, id), err);
}

void sq_lock(struct store *st)
{
	struct sq_store *s = SQ(st);

	pthread_mutex_lock(&s->lock);
	if (s->e->alive)
		s->e->alive(s);
}

void sq_unlock(struct store *st)
{
	pthread_mutex_unlock(&SQ(st)->lock);
}

int sq_begin(struct sq_store *s, char *err)
{
	return sq_exec0(s, Q_BEGIN, err);
}

int sq_commit(struct sq_store *s, char *err)
{
	int ret = sq_exec0(s, Q_COMMIT, err);

	if (ret)
		sq_exec0(s, Q_ROLLBACK, NULL);
	return ret;
}

void sq_rollback(struct sq_store *s)
{
	if (s->e->in_txn(s))
		sq_exec0(s, Q_ROLLBACK, NULL);
}

int sq_commit_audited(struct sq_store *s, int ret, int64_t app, const char *action,
		      const char *detail, const char *comment, char *err)
{
	if (!ret)
		ret = sq_audit_add(s, app, action, detail, comment, err);
	if (ret) {
		sq_rollback(s);
		return ret;
	}
	return sq_commit(s, err);
}

/*
 * Bump the app's version (UPDATE ... RETURNING: atomic on both engines,
 * whose changes are all made by the first step); *version gets the new one.
 */
int sq_bump(struct sq_store *s, int64_t app, int64_t *version, char *err)
{
	struct sq_stmt *q = sq_qk(s, Q_APP_BUMP, app);
	int rc;

	if (!q)
		return sq_dberr(s, err);
	rc = sq_step(q);
	if (rc == SQ_ROW && version)
		*version = sq_col_int64(q, 0);
	sq_reset(q);
	return rc == SQ_ROW ? 0 : sq_dberr(s, err);
}

/* The id in column 0 of @q's one row: 0, STORE_NOTFOUND (no row, no message) or STORE_ERROR. */
static int id_row(struct sq_store *s, struct sq_stmt *q, int64_t *id, char *err)
{
	int rc = sq_step(q);

	if (rc == SQ_ROW)
		*id = sq_col_int64(q, 0);
	sq_reset(q);
	if (rc == SQ_ROW)
		return 0;
	return rc == SQ_DONE ? STORE_NOTFOUND : sq_dberr(s, err);
}

int sq_group_id(struct sq_store *s, const char *g, int64_t *id, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_GROUP_ID);
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_text(q, 1, g);
	rc = id_row(s, q, id, err);
	if (rc == STORE_NOTFOUND)
		sq_seterr(err, "group '%s' not found", g);
	return rc;
}

int sq_app_lookup(struct sq_store *s, const char *g, const char *a,
	    struct sq_app_ref *r, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_APP_ID);
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_text(q, 1, g);
	sq_bind_text(q, 2, a);
	rc = sq_step(q);
	if (rc == SQ_ROW) {
		r->id = sq_col_int64(q, 0);
		r->version = sq_col_int64(q, 1);
		r->active = sq_col_int64(q, 2);
		r->drills_seq = sq_col_int64(q, 3);
		sq_reset(q);
		return 0;
	}
	sq_reset(q);
	if (rc != SQ_DONE)
		return sq_dberr(s, err);
	sq_seterr(err, "app '%s' not found in group '%s'", a, g);
	return STORE_NOTFOUND;
}

int sq_scheme_id(struct sq_store *s, int64_t app, const char *name,
	      int64_t *id, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_SCHEME_ID);
	int rc;

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, app);
	sq_bind_text(q, 2, name);
	rc = id_row(s, q, id, err);
	if (rc == STORE_NOTFOUND)
		sq_seterr(err, "scheme '%s' not found", name);
	return rc;
}

int sq_audit_add(struct sq_store *s, int64_t app, const char *action,
	      const char *detail, const char *comment, char *err)
{
	struct sq_stmt *q = sq_q(s, Q_AUDIT_INS);

	if (!q)
		return sq_dberr(s, err);
	sq_bind_int64(q, 1, app);
	sq_bind_int64(q, 2, store_now_s());
	sq_bind_text(q, 3, action);
	sq_bind_text(q, 4, detail);
	sq_bind_text(q, 5, comment);
	return sq_run(s, q, err);
}

/* Collect every row of @q into a new array via @row. */
int sq_rows(struct sq_store *s, struct sq_stmt *q, json_t *(*row)(struct sq_stmt *),
	 json_t **out, char *err)
{
	json_t *arr;
	int rc;

	if (!q)
		return sq_dberr(s, err);
	arr = json_array();
	while ((rc = sq_step(q)) == SQ_ROW)
		json_array_append_new(arr, row(q));
	sq_reset(q);
	if (rc != SQ_DONE) {
		json_decref(arr);
		return sq_dberr(s, err);
	}
	*out = arr;
	return 0;
}

/* The one row of @q via @row, or NOTFOUND with @what. */
int sq_one(struct sq_store *s, struct sq_stmt *q, json_t *(*row)(struct sq_stmt *),
	json_t **out, char *err)
{
	int rc;

	if (!q)
		return sq_dberr(s, err);
	rc = sq_step(q);
	if (rc == SQ_ROW) {
		*out = row(q);
		sq_reset(q);
		return 0;
	}
	sq_reset(q);
	if (rc != SQ_DONE)
		return sq_dberr(s, err);
	return STORE_NOTFOUND;
}

/*
 * Hand the current row of a statistics scan (the columns of stats_scan's
 * SELECT, in its order) to @cb; its result: nonzero stops the scan.
 */
int sq_stat_row_emit(struct sq_stmt *q, store_stat_cb cb, void *ctx)
{
	uint64_t hist[SDS_HIST_BUCKETS];
	struct store_stat_row row = {
		.period_start = sq_col_int64(q, 0),
		.point = sq_col_text(q, 1),
		.host = sq_col_text(q, 2),
		.visits = sq_col_int64(q, 3),
		.exceptions = sq_col_int64(q, 4),
		.timeouts = sq_col_int64(q, 5),
		.downgrades = sq_col_int64(q, 6),
		.max_concurrency = sq_col_int64(q, 7),
		.faults = sq_col_int64(q, 9),
		.delays = sq_col_int64(q, 10),
		.suspended = sq_col_int(q, 11) != 0,
		.overhead_milli = sq_col_int64(q, 12),
		.hist = hist,
	};
	const unsigned char *b = sq_col_blob(q, 8);
	int n = sq_col_bytes(q, 8) / 8, j, k = 13;

	/* store/stat_cols.h's columns follow overhead_milli, in its order. */
#define COL_(f, kind)	row.f = (uint64_t)sq_col_int64(q, k++);
	STORE_STAT_COLS(COL_)
#undef COL_
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
